import sys

from stagebench.cli import main

sys.exit(main())
