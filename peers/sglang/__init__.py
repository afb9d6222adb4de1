"""SGLang as a peer: its adapter, the environment it loads in, and its expectations."""
