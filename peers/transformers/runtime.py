"""transformers' response parsing loaded in its own environment: the engine and the serving functions that
call it (`transformers serve`'s own, so its fallback templates and event handling are the server's)."""

from __future__ import annotations

import types
from importlib import metadata


def load() -> types.SimpleNamespace:
    """What the adapter calls of transformers."""
    from transformers.cli.serving import utils
    from transformers.utils.chat_parsing import ResponseParser, parse_response

    return types.SimpleNamespace(
        parse_response=parse_response,
        ResponseParser=ResponseParser,
        get_response_template=utils.get_response_template,
        parse_assistant_message=utils.parse_assistant_message,
        response_events_to_chunks=utils.response_events_to_chunks,
        ReasoningText=utils.ReasoningText,
        ToolCall=utils.ToolCall,
        version=metadata.version("transformers"),
    )
