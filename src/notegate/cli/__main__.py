"""``python -m notegate.cli``: what tests, the lab and the restore rehearsal run."""

import sys

from notegate.cli import main

sys.exit(main())
