"""View > Heat by Busiest Phase: the link heat's second view (canvas/heat.py), remembered under this
setting. Unchecked, cables are coloured by their share of the step. The action itself is declared
with the View menu (window/menus.py) and run by the result flow (window/result_flow.py)."""

HEAT_BY_PHASE_SETTING = "view/heat_by_phase"
