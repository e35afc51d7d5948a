"""``python -m polaroc``: the command line."""

import sys

from polaroc.cli import main

sys.exit(main())
