"""Work that waits for a widget's next paint (a change shown in parts, each painted in its own turn)."""
from __future__ import annotations

from PySide6.QtWidgets import QWidget


class _Counted(QWidget):
    def __init__(self):
        super().__init__()
        self.paints = 0

    def paintEvent(self, event) -> None:
        self.paints += 1


def _shown(qtbot) -> _Counted:
    widget = _Counted()
    qtbot.addWidget(widget)
    widget.resize(200, 100)
    widget.show()
    qtbot.waitExposed(widget)
    qtbot.waitUntil(lambda: widget.paints > 0)
    return widget


def _turns() -> None:
    """A few turns of the event loop, none of which waits."""
    from PySide6.QtWidgets import QApplication

    for _ in range(3):
        QApplication.processEvents()


def test_the_callback_comes_after_the_next_paint(qtbot):
    from designer.ui.common.next_paint import NextPaint

    widget = _shown(qtbot)
    seen = []
    after = NextPaint(widget)
    painted = widget.paints
    widget.update()
    after.then(lambda: seen.append(widget.paints))
    assert after.pending and not seen
    qtbot.waitUntil(lambda: bool(seen))
    assert seen == [painted + 1] and not after.pending


def test_a_newer_callback_replaces_the_waiting_one(qtbot):
    from designer.ui.common.next_paint import NextPaint

    widget = _shown(qtbot)
    seen = []
    after = NextPaint(widget)
    widget.update()
    after.then(lambda: seen.append("first"))
    after.then(lambda: seen.append("second"))
    qtbot.waitUntil(lambda: bool(seen))
    qtbot.wait(50)
    assert seen == ["second"]


def test_a_widget_that_cannot_be_seen_calls_at_the_next_turn(qtbot):
    from designer.ui.common.next_paint import NextPaint

    hidden = _Counted()
    qtbot.addWidget(hidden)
    seen = []
    NextPaint(hidden).then(lambda: seen.append("hidden"))
    assert not seen  # not inside the caller's own work
    _turns()  # no paint is coming: no wait for one (nor for the fallback's 250 ms)
    assert seen == ["hidden"]
    widget = _shown(qtbot)
    after = NextPaint(widget)
    after.then(lambda: seen.append("hidden later"))
    widget.hide()  # before its paint
    _turns()
    assert seen == ["hidden", "hidden later"]
    assert not after.pending


def test_a_cancelled_callback_is_not_called(qtbot):
    from designer.ui.common.next_paint import NextPaint

    widget = _shown(qtbot)
    seen = []
    after = NextPaint(widget)
    widget.update()
    after.then(lambda: seen.append("called"))
    after.cancel()
    qtbot.wait(100)
    assert not seen and not after.pending
