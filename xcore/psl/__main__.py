"""`python -m xcore.psl --config X.json --output DIR`: run a PSL project (see `xcore.psl.cli`)."""

import sys

from xcore.psl.cli import main

sys.exit(main())
