"""PyInstaller's entry script for `designer-gui` (designer/ui/app.py uses package-relative
imports, so it cannot be the script itself)."""
import sys

from designer.ui.app import main

if __name__ == "__main__":
    sys.exit(main())
