"""The window's edit commands: the Edit menu (cut, copy, paste, duplicate, delete, select all,
find) and the canvas's gestures (a part dropped from the palette, a cable drawn, snap, the link tool).
Each change is one undoable command on the window's document."""
from __future__ import annotations

from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QApplication, QInputDialog

from ...core.model.geometry import RACK_WIDTH_PX
from ..document import commands, editing
from ..canvas.items import ID_ROLE
from ..canvas.scene_gestures import free_slot
from ..canvas.style import GRID_PX
from ..docks.palette import parse_part


class EditActions:
    """Edit > Cut ... Find and the canvas's gestures of `window` (its document, scene, view, palette)."""

    def __init__(self, window):
        self.window = window
        self.qdoc = window.qdoc

    # ---- canvas gestures ----
    def set_snap(self, on: bool) -> None:
        for item in self.window.scene.racks.values():
            item.snap = on

    def set_link_tool(self, kind) -> None:
        """A palette link button: a kind starts that tool (ending any other); None ends it.

        The tool itself gives back the drag mode, the cursor and its button when it ends."""
        from ..canvas.link_tool import LinkTool

        current = self.window.view.interaction
        if not kind:
            if current is not None:
                current.finish()
            return
        if isinstance(current, LinkTool) and current.kind == kind and current.active:
            return
        tool = LinkTool(self.window.view, kind, self.window.palette.tool_buttons.get(kind))
        tool.ended.connect(lambda cancelled: self.window.tell("link tool off") if cancelled else None)
        self.window.view.set_interaction(tool)
        self.window.tell(f"{kind} link tool: press on a server or switch, release on another (Esc ends)")

    def drop_part(self, description: str, pos: QPointF) -> bool:
        """A part dropped from the palette at a scene position: one undoable command."""
        kind, params = parse_part(description)
        doc = self.qdoc.doc
        try:
            if kind == "rack":
                x = round((pos.x() - RACK_WIDTH_PX / 2) / GRID_PX) * GRID_PX
                y = round(pos.y() / GRID_PX) * GRID_PX
                rack = editing.new_rack(doc, x, y)
                self.qdoc.push(commands.AddElements(self.qdoc, [rack], "Add rack"))
                self.window.scene.select_ids([rack.id])
                return True
            if kind in ("server", "ethernet-switch", "infiniband-switch"):
                if kind == "server":
                    element = editing.new_server(doc, params.get("accelerator", "H100-SXM5-80GB"),
                                                 int(params.get("count", 8)), nic_gbps=float(params.get("nic_gbps", 400)),
                                                 nic_kind=params.get("nic_kind", "infiniband"))
                else:
                    element = editing.new_switch(doc, kind.split("-")[0], port_gbps=float(params.get("port_gbps", 400)))
                    if params.get("model"):  # the palette's model and radix (the design's own by default)
                        element.model = params["model"]
                        element.radix = int(params.get("radix", element.radix))
                rack_item = self.window.scene.gestures.rack_at(pos)
                if rack_item is None:
                    self.qdoc.undo_stack.beginMacro(f"Add {element.id}")
                    self.qdoc.push(commands.AddElements(self.qdoc, [element]))
                    self.qdoc.push(commands.SetLayout(self.qdoc, {element.id: (pos.x() - RACK_WIDTH_PX / 2, pos.y())}))
                    self.qdoc.undo_stack.endMacro()
                    self.window.tell(f"{element.id} is in no rack: drag it into one")
                else:
                    rack_id = rack_item.data(ID_ROLE)
                    rack = doc.find("racks", rack_id)
                    from ...core.model.geometry import UNIT_HEIGHT_PX

                    from_bottom = (rack_item.sceneBoundingRect().bottom() - pos.y()) / UNIT_HEIGHT_PX
                    wanted = max(0, min(rack.units - element.height_units, int(from_bottom - element.height_units / 2)))
                    slot = free_slot(doc, rack_id, element.height_units, wanted)
                    if slot is None:
                        raise editing.Refused(f"rack {rack_id} has no {element.height_units}U free: use another rack")
                    element.rack, element.slot = rack_id, slot
                    self.qdoc.push(commands.AddElements(self.qdoc, [element], f"Add {element.id}"))
                self.window.scene.select_ids([element.id])
                return True
            if kind in ("accelerator", "nic"):
                item = self.window.scene.gestures.item_at(pos, ("node",))
                if item is None:
                    raise editing.Refused(f"drop the {kind} onto a server")
                node = doc.find("nodes", item.data(ID_ROLE))
                if kind == "accelerator":
                    from ...core.model import default_catalog

                    acc = default_catalog().accelerator(params.get("accelerator", node.accelerator))
                    if acc.name != default_catalog().accelerator(node.accelerator).name:
                        raise editing.Refused(f"{node.id} holds {node.accelerator}; one server takes one model "
                                              f"(change its accelerator in the inspector)")
                    if node.accelerator_count >= acc.max_per_node:
                        raise editing.Refused(f"{node.id} already holds {acc.max_per_node} x {acc.name}, the most "
                                              f"one server takes")
                    change = {"accelerator_count": node.accelerator_count + 1}
                else:
                    change = {"nic_count": node.nic_count + 1}
                self.qdoc.push(commands.SetFields(self.qdoc, {node.id: change}, f"Add {kind} to {node.id}"))
                return True
        except editing.Refused as exc:
            self.window.tell(str(exc))
            return False
        self.window.tell(f"unknown part {kind!r}")
        return False

    def request_link(self, a: str, b: str, kind: str) -> bool:
        from ...core.model.elements import LINK_KINDS

        if kind not in LINK_KINDS:  # never reaches the document (which would refuse it too)
            self.window.tell(f"no link drawn: kind {kind!r} is not one of {', '.join(LINK_KINDS)}")
            return False
        try:
            link = editing.plan_link(self.qdoc.doc, a, b, kind)
        except editing.Refused as exc:
            self.window.tell(str(exc))
            return False
        self.qdoc.push(commands.AddElements(self.qdoc, [link], f"Link {a} - {b}"))
        self.window.tell(f"{kind} link {link.a} - {link.b} at {link.bandwidth_gbps:g} Gb/s")
        return True

    # ---- edit menu ----
    def delete_selection(self) -> None:
        ids = self.window.scene.selected_ids()
        if ids:
            self.qdoc.push(commands.RemoveElements(self.qdoc, ids, f"Delete {len(ids)} item(s)"))

    def select_all(self) -> None:
        for item in list(self.window.scene.racks.values()) + list(self.window.scene.devices.values()):
            if item.parentItem() is None:
                item.setSelected(True)

    def copy(self) -> str | None:
        ids = self.window.scene.selected_ids()
        if not ids:
            return None
        text = editing.copy_text(self.qdoc.doc, ids)
        QApplication.clipboard().setText(text)
        self.window.tell(f"copied {len(ids)} item(s)")
        return text

    def cut(self) -> None:
        if self.copy():
            self.delete_selection()

    def paste(self, text: str | None = None, dx: float | None = None) -> list[str]:
        text = text if text is not None else QApplication.clipboard().text()
        try:
            elements = editing.paste_elements(self.qdoc.doc, text, dx if dx is not None else 60.0)
        except editing.Refused as exc:
            self.window.tell(str(exc))
            return []
        if not elements:
            return []
        self.qdoc.push(commands.AddElements(self.qdoc, elements, f"Paste {len(elements)} item(s)"))
        ids = [e.id for e in elements if not isinstance(e, editing.Link)]
        self.window.scene.select_ids(ids)
        return ids

    def duplicate(self, copies: int = 1) -> list[str]:
        """Copies of the selection in a row to its right, inner cables included, as one step."""
        ids = self.window.scene.selected_ids()
        if not ids:
            self.window.tell("select what to duplicate first")
            return []
        doc = self.qdoc.doc
        text = editing.copy_text(doc, ids)
        racks = [doc.find("racks", i) for i in ids if doc.find("racks", i) is not None]
        if racks:
            width = max(r.x for r in racks) - min(r.x for r in racks) + RACK_WIDTH_PX + GRID_PX
        else:
            width = RACK_WIDTH_PX + GRID_PX
        stack = self.qdoc.undo_stack
        stack.beginMacro(f"Duplicate x{copies}")
        new_ids: list[str] = []
        for k in range(1, copies + 1):
            elements = editing.paste_elements(doc, text, dx=width * k)
            self.qdoc.push(commands.AddElements(self.qdoc, elements, "Duplicate"))
            new_ids += [e.id for e in elements if not isinstance(e, editing.Link)]
        stack.endMacro()
        self.window.scene.select_ids(new_ids)
        return new_ids

    def duplicate_many(self) -> None:
        count, ok = QInputDialog.getInt(self.window, "Duplicate", "Copies:", 15, 1, 512)
        if ok:
            self.duplicate(count)

    def find(self) -> None:
        doc = self.qdoc.doc
        names = sorted(e.id for e in list(doc.racks) + list(doc.nodes) + list(doc.switches))
        names += sorted(f"{e.name} ({e.id})" for e in list(doc.racks) + list(doc.nodes) + list(doc.switches) if e.name)
        text, ok = QInputDialog.getItem(self.window, "Find", "Id or name:", names, 0, True)
        if ok and text:
            self.find_element(text)

    def find_element(self, text: str) -> str | None:
        """Select and show an element given its id, its name, or 'name (id)'."""
        doc = self.qdoc.doc
        text = text.strip()
        if text.endswith(")") and "(" in text:
            text = text[text.rindex("(") + 1:-1]
        found = doc.get(text)
        if found is None:
            found = next((e for e in list(doc.racks) + list(doc.nodes) + list(doc.switches)
                          if e.name == text or e.id.lower() == text.lower()), None)
        if found is None:
            self.window.tell(f"no element with id or name {text!r}")
            return None
        self.window.jump_to(found.id)
        return found.id
