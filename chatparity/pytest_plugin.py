"""chatparity's pytest plugin by the name a suite loads it with (`-p chatparity.pytest_plugin`); its hooks are
reports.conformance_plugin's, loaded by name as the command line loads its commands."""

pytest_plugins = ["reports.conformance_plugin"]
