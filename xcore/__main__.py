"""`python -m xcore ...`: the command line (see `xcore.cli`)."""

import sys

from xcore.cli import main

sys.exit(main())
