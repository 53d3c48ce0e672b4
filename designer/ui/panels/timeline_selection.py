"""The Timeline's selection (the panel's `selection` part): the event clicked (for a wait, the bar it
waited on and the rows of the device it waited for) and the device outlined (the critical one, or the
one a caller picks), each marked on the plot (timeline_marks.py)."""
from __future__ import annotations

from .timeline_detail import device_name


class TimelineSelection:
    """panel.selection: what is selected on the panel's rows, kept as indices into result.events."""

    def __init__(self, panel):
        self.panel = panel
        self.event: int | None = None
        self.related: int | None = None  # the bar the selected wait waited on
        self.highlighted: list[int] = []  # the rows of the device the selected wait waited for

    def select_event(self, index: int | None) -> None:
        """Select an event (index into result.events); a wait also highlights whom it waited for."""
        panel = self.panel
        panel.marks.clear_event()
        self.highlighted = []
        self.event = self.related = None
        panel.arrows.emphasize_event(None)
        if index is None or panel.result is None:
            return
        events = panel.result.events
        if not (0 <= index < len(events)):
            raise IndexError(f"no event {index} (there are {len(events)})")
        self.event = index
        panel.arrows.emphasize_event(index)
        e = events[index]
        self.highlighted = panel.layout_rows.rows_of(e.waited_for)
        panel.marks.mark_event(panel.layout_rows, e, self.highlighted)
        if e.waited_for is None:
            return
        # on the device it waited for: the bar that ended last at or before the wait's end (flows.py)
        self.related = panel.data.waited_on.get(index)
        if self.related is not None:
            panel.marks.outline(panel.related_box, panel.layout_rows, events[self.related])

    def select_device(self, device: int | None, scroll: bool = False) -> bool:
        """Outline a device's rows (and scroll them into view); False when it has no rows."""
        panel = self.panel
        rows = panel.layout_rows.rows_of(device)
        panel.marks.mark_device(rows)
        panel.in_view.selected_device = device if rows else None
        if panel.rows:
            panel.in_view.follow()  # its label
        if rows and scroll:
            panel.in_view.bring_into_view(rows)
        return bool(rows)

    @property
    def device(self) -> int | None:
        return self.panel.in_view.selected_device

    def show_critical_device(self) -> int | None:
        """Scroll to the critical device (the one that ends the step last) and select it."""
        panel = self.panel
        if panel.result is None:
            return None
        device = int(panel.result.critical_device)
        name = device_name(panel.result, device)
        if not self.select_device(device, scroll=True):
            panel.say(f"the critical device {name} has no rows here")
            return None
        panel.say(f"critical device: {name} (ends the step last)")
        return device
