"""The Help menu: a quick guide, the keyboard shortcuts (read from the window's own actions) and About.

The menu's entries are declared in menus.py; each opens a non-modal dialog that the window keeps
(window.help_dialogs, one per kind), so reopening it brings it forward.
"""
from __future__ import annotations

import html
import platform

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

# Mouse and key gestures that are not menu commands (designer/ui/canvas/view.py,
# designer/ui/panels/timeline.py): listed beside the actions' shortcuts.
GESTURES = [
    ("Canvas", "Zoom to the cursor", "Wheel"),
    ("Canvas", "Pan", "Middle-drag, or Space + drag"),
    ("Canvas", "Draw a cable (with a link tool from Parts)", "Press on a device, release on another"),
    ("Canvas", "End the link tool", "Esc"),
    ("Timeline", "Zoom time", "Wheel or right-drag"),
    ("Timeline", "Pan", "Left-drag"),
    ("Timeline", "See whom a wait waited for", "Click the wait"),
]


def plain(text: str) -> str:
    """An action's text without its mnemonic ampersands."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def keys(action: QAction) -> str:
    return ", ".join(s.toString(QKeySequence.NativeText) for s in action.shortcuts() if not s.isEmpty())


def shortcut_rows(window) -> list[tuple[str, str, str]]:
    """(where, command, keys) for every action of the window that has a shortcut, in menu order."""
    rows: list[tuple[str, str, str]] = []
    seen: set[int] = set()

    def walk(menu, where: str) -> None:
        for act in menu.actions():
            if act.isSeparator():
                continue
            if act.menu() is not None:
                walk(act.menu(), f"{where} > {plain(act.text())}")
                continue
            seen.add(id(act))
            if keys(act):
                rows.append((where, plain(act.text()), keys(act)))

    for top in window.menuBar().actions():
        if top.menu() is not None:
            walk(top.menu(), plain(top.text()))
    for act in window.findChildren(QAction):  # shortcuts of actions in no menu (panels, toolbars)
        if id(act) not in seen and keys(act) and plain(act.text()):
            seen.add(id(act))
            rows.append(("Window", plain(act.text()), keys(act)))
    return rows


def shortcuts_html(window) -> str:
    def rows(items):
        return "".join(f"<tr><td>{html.escape(w)}</td><td>{html.escape(c)}</td><td><b>{html.escape(k)}</b></td></tr>"
                       for w, c, k in items)

    def heading(text):
        return f"<tr><td colspan='3'><br/><b>{text}</b></td></tr>"

    return ("<h3>Keyboard shortcuts</h3>"
            "<table cellspacing='0' cellpadding='3' width='100%'>"
            "<tr><th align='left' width='22%'>Where</th><th align='left'>Command</th>"
            "<th align='left' width='32%'>Keys</th></tr>"
            f"{rows(shortcut_rows(window))}"
            f"{heading('Mouse and keys on the canvas and the timeline')}{rows(GESTURES)}</table>")


def quick_guide_html(window) -> str:
    def k(name: str) -> str:
        act = getattr(window, name, None)
        return f" ({html.escape(keys(act))})" if act is not None and keys(act) else ""

    return f"""
<h2>Designer in five minutes</h2>
<p>Draw or generate a cluster, attach a training job, and read what limits one training step.
Every edit is re-evaluated in the background a moment later, and every edit can be undone{k('act_undo')}.</p>

<h3>1. Draw</h3>
<ul>
<li>Drag parts from the <b>Parts</b> panel onto the canvas: a rack first, then servers and switches
into its slots; accelerators and NICs onto a server.</li>
<li>Draw cables with a link tool (InfiniBand, Ethernet, NVLink, PCIe): press on one device, release on
another. A free port is picked; a cable of the wrong kind is refused with the reason.</li>
<li>Select anything to edit it in the <b>Inspector</b>: a cable's <i>bandwidth_gbps</i>, a server's
<i>slowdown</i>, a switch's radix. A bad value is refused beside the field.</li>
<li>Wheel zooms, middle-drag or Space-drag pans, Fit{k('act_fit')} shows everything;
Duplicate{k('act_duplicate')} copies the selection with its inner cables.</li>
</ul>

<h3>2. Generate a fabric</h3>
<p><b>Tools &gt; Generate Fat-Tree</b>{k('act_generate')} builds a whole leaf/spine(/core) fabric from a few
numbers: servers, accelerator, NICs per server, InfiniBand or Ethernet, tiers, oversubscription,
rail-optimized or not. The job is kept; the whole generation is one undo step.</p>

<h3>3. Set the job</h3>
<p>The <b>Job</b> panel holds the workload (a model preset plus any Megatron-LM key) and the plan:
TP, PP, CP, EP, the schedule, recompute, ZeRO. Values are checked as you type; an impossible plan
says why and which values would work.</p>

<h3>4. Read the results</h3>
<ul>
<li><b>Breakdown</b>: step time, tokens/s, MFU and HFU; the step of the critical device split into
compute, recompute, exposed TP/PP/DP communication, bubbles and waits; memory per GPU against the
HBM; and what your last edit changed.</li>
<li><b>Timeline</b>: a Gantt chart of the step for every representative device, one row per stream.
Waits are hatched: click one to see whom it waited for.</li>
<li>On the canvas, <b>View &gt; Link Heat</b>{k('act_heat')} colours the cables by their use and
outlines the bottlenecks (off until you turn it on; the legend in the canvas corner explains the
colours). The status bar shows the counts, the step and the
problems; click the problems to jump to them.</li>
</ul>

<h3>5. Ask what-if</h3>
<p>The <b>Advisor panel (View menu)</b> suggests changes to the plan or the fabric and what each
would do to the step.</p>

<h3>6. Export</h3>
<p>From the <b>File</b> menu: the canvas as PNG, SVG or PDF{k('act_export')}; the breakdown and
timeline plots as PNG, SVG or CSV; the step as a Perfetto trace; a design-review PDF report{k('act_report')}.
Designs are YAML files{k('act_save')}; unsaved work is autosaved every minute and offered back after a crash.
The same engine runs headless: <code>designer evaluate FILE</code>, <code>designer report FILE -o review.pdf</code>.</p>
<p>Help &gt; Keyboard Shortcuts lists every shortcut.</p>
"""


def about_html() -> str:
    import PySide6
    from PySide6.QtCore import qVersion

    import numpy
    import pyqtgraph

    from ... import __version__
    from ...core.model.catalog import CATALOG_DIR, default_catalog

    cat = default_catalog()
    parts = [("Accelerators", cat.accelerators), ("NICs", cat.nics), ("Switches", cat.switches),
             ("Model presets", cat.models)]
    sections = []
    for title, table in parts:
        entries = []
        for name, item in table.items():
            sources = "".join(f"<li><i>{html.escape(str(field))}</i>: {html.escape(str(text))}</li>"
                              for field, text in item.sources.items())
            entries.append(f"<p><b>{html.escape(name)}</b></p><ul>{sources or '<li>(no source given)</li>'}</ul>")
        sections.append(f"<h4>{title} ({len(table)})</h4>{''.join(entries)}")
    return f"""
<h2>Designer {html.escape(__version__)}</h2>
<p>Design AI training clusters and see, before you buy or rewire, what limits a training step.</p>
<p>Python {platform.python_version()} &nbsp;·&nbsp; PySide6 {PySide6.__version__} &nbsp;·&nbsp; Qt {qVersion()}
&nbsp;·&nbsp; pyqtgraph {pyqtgraph.__version__} &nbsp;·&nbsp; numpy {numpy.__version__}</p>
<h3>Catalog sources</h3>
<p>Every figure of the parts catalog says where it comes from (read from
<code>{html.escape(str(CATALOG_DIR))}</code>; <code>designer catalog --json</code> prints the same).</p>
{''.join(sections)}
"""


class TextDialog(QDialog):
    """A titled, scrollable rich-text page with a Close button."""

    def __init__(self, title: str, body: str, parent=None, size=(640, 560)) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(body)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.close)
        column = QVBoxLayout(self)
        column.addWidget(self.browser)
        column.addWidget(buttons)
        self.resize(*size)

    def text(self) -> str:
        return self.browser.toPlainText()


def open_dialog(window, kind: str) -> TextDialog:
    """Show (build or refresh) the window's dialog of this kind: 'guide', 'shortcuts' or 'about'."""
    if kind == "guide":
        title, body, size = "Quick Guide", quick_guide_html(window), (660, 640)
    elif kind == "shortcuts":
        title, body, size = "Keyboard Shortcuts", shortcuts_html(window), (620, 640)
    elif kind == "about":
        title, body, size = "About Designer", about_html(), (680, 600)
    else:
        raise ValueError(f"unknown help dialog {kind!r}")
    dialogs = window.help_dialogs
    dialog = dialogs.get(kind)
    if dialog is None:
        dialog = dialogs[kind] = TextDialog(title, body, window, size)
    else:
        dialog.browser.setHtml(body)  # the shortcuts and the guide follow the window's actions
    if dialog.isVisible():  # already open, perhaps behind the window
        dialog.raise_()
        dialog.activateWindow()
    else:
        dialog.show()
    return dialog
