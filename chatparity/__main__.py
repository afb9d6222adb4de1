"""`python -m chatparity` runs the chatparity command."""

import sys

from chatparity.cli import main

sys.exit(main())
