"""The main window and its controllers: menus as data, files, exports, edits, tools, the result flow."""
