"""The upstream chat templates: the committed index, its generator, the pin check and the CLI."""
