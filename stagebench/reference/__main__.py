"""``python -m stagebench.reference``: store a result set, render the docs' blocks."""

import sys

from stagebench.reference.render import main

sys.exit(main())
