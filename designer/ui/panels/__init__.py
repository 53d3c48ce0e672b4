"""Result panels of the desktop app: the step breakdown and the per-device timeline."""
from .breakdown import BreakdownPanel
from .plot_export import export_plot, write_csv
from .plot_style import CATEGORY_COLORS
from .timeline import TimelinePanel

__all__ = ["BreakdownPanel", "TimelinePanel", "CATEGORY_COLORS", "export_plot", "write_csv"]
