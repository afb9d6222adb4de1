"""`python -m chatparity` runs the chatparity command."""

from chatparity.cli import entry

entry()
