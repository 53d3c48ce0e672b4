"""Canvas geometry shared by the generator (which places racks) and the UI (which draws them).

Positions in the file are canvas pixels at zoom 1 (`Rack.x`, `Rack.y` = top-left corner).
"""

RACK_WIDTH_PX = 48.0  # one rack, drawn
UNIT_HEIGHT_PX = 5.0  # one rack unit; a 42U rack is 210 px tall
RACK_LABEL_PX = 14.0  # room above a rack for its name


def rack_height_px(units: int) -> float:
    return units * UNIT_HEIGHT_PX


def slot_top_px(rack_y: float, rack_units: int, slot: int, height_units: int) -> float:
    """Top edge of an element in a rack: slot 0 is the lowest unit, as in a real rack."""
    return rack_y + (rack_units - slot - height_units) * UNIT_HEIGHT_PX
