"""The chatparity runner: rows, outcomes, chunkings, parsers under test and the CLI."""
