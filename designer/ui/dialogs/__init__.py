"""Dialogs: generate, calibrate, compare, and the folders file dialogs start in."""
