"""`python -m chatparity` runs the chatparity command."""

import sys

from harness.cli import main

sys.exit(main())
