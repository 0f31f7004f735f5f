"""``python -m autograder``: the instructor commands (see :mod:`autograder.tools.cli`)."""

import sys

from autograder.tools.cli import main

sys.exit(main())
