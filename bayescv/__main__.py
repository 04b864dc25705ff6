"""``python -m bayescv``: the ``bayescv`` command."""

import sys

from bayescv.cli import main

sys.exit(main())
