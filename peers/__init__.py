"""Peer parsers (SGLang, transformers, ...) installed in environments of their own and swept as `cmd:`
parsers."""
