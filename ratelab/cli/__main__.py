"""``python -m ratelab.cli``: the ``ratelab`` command."""

import sys

from . import main

sys.exit(main())
