"""The open design in Qt terms: the document and its signals, undo commands, editing, autosave."""
