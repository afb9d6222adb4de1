"""transformers as a peer: `transformers serve` reading replies with its response templates."""
