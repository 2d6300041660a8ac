"""`python -m notegate`: the same entry point as the `notegate` script (the git hooks start it this way)."""

import sys

from notegate.cli import main

sys.exit(main())
