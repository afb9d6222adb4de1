"""`python -m harness` runs the chatparity command."""

import sys

from harness.cli import main

sys.exit(main())
