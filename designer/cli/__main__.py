"""`python -m designer.cli ...`, as `designer ...`."""
import sys

from . import main

sys.exit(main())
