"""The engine's constants by role, one dataclass each; engine/constants.py combines them into
EngineConstants. Each field is declared with `constant` or `table` (field.py): its default, its
source and its physical range, which the schema, the docs and `check_calibration` read."""
