"""SGLang's parsers loaded in its own environment without torch: `sglang/__init__.py` imports torch, so a bare
`sglang` package stands in for it (`sglang.srt` is a namespace package), and modules the parsers import only
for grammars, type hints or notebooks (xgrammar, transformers, IPython) get stand-ins where they are not
installed, as do the server-argument modules template detection imports for the server's start-up (they import
torch)."""

from __future__ import annotations

import importlib.util
import sys
import types
from importlib import metadata
from typing import Any

STANDIN_NAMES = ("xgrammar", "xgrammar.structural_tag", "transformers", "IPython", "IPython.display")
SERVER_ARGUMENT_MODULES = ("sglang.srt.arg_groups.muse_spark_hook", "sglang.srt.arg_groups.overrides")


def stand_in(name: str, model: type) -> None:
    """An empty module whose every attribute is `model` (a permissive pydantic model)."""
    module = types.ModuleType(name)
    module.__getattr__ = lambda attribute: model  # type: ignore[method-assign]
    sys.modules[name] = module


def request_fields(session: dict[str, Any]) -> dict[str, Any]:
    """The chat request a client sends for the session: the thinking switch in chat_template_kwargs, where the
    template's own variables (an `enable_thinking` among them) win, and reasoning_effort where the template
    reads one."""
    kwargs = {"enable_thinking": session["enable_thinking"], **session["chat_template_kwargs"]}
    return {
        "model": "peer",
        "messages": session["messages"],
        "tools": session["tools"] or None,
        "tool_choice": session["tool_choice"] or "auto",
        "chat_template_kwargs": kwargs,
        "reasoning_effort": session["chat_template_kwargs"].get("reasoning_effort"),
    }


def load() -> types.SimpleNamespace:
    """What the adapter calls of SGLang: its two parsers, its request and tool models, and its template
    detection."""
    import pydantic

    class Anything(pydantic.BaseModel):
        """Any grammar object a parser builds (never used to parse)."""

        model_config = pydantic.ConfigDict(extra="allow")

    missing = {name for name in STANDIN_NAMES if "." not in name and importlib.util.find_spec(name) is None}
    for name in STANDIN_NAMES:
        if name.partition(".")[0] in missing:
            stand_in(name, Anything)
    spec = importlib.util.find_spec("sglang")
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError("sglang is not installed in this environment")
    package = types.ModuleType("sglang")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["sglang"] = package
    for name in SERVER_ARGUMENT_MODULES:
        stand_in(name, Anything)
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest, Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    from sglang.srt.parser.template_detection import detect_reasoning_pattern

    def request(session: dict[str, Any]) -> Any:
        """The session's chat request as SGLang's model."""
        return ChatCompletionRequest.model_validate(request_fields(session))

    return types.SimpleNamespace(
        FunctionCallParser=FunctionCallParser,
        ReasoningParser=ReasoningParser,
        Tool=Tool,
        detect_reasoning_pattern=detect_reasoning_pattern,
        request=request,
        version=metadata.version("sglang"),
    )
