"""`python -m xcore.study ...`: see `xcore.study.cli`."""

import sys

from xcore.study.cli import main

sys.exit(main())
