"""The reports subcommands of `chatparity`: report, diff, gate, coverage (each a module with `main`)."""
