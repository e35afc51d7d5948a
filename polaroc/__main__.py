"""``python -m polaroc``: the command line."""

import sys

from polaroc.report.cli import main

sys.exit(main())
