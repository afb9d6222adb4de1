"""A few lines of Python that replay one case with transformers alone (its response-template engine and the
fallback template `transformers serve` picks), whole or in character chunks."""

from __future__ import annotations

from typing import Any

from chatparity.model import Session

CHARACTER_GROUPS = {"char": 1, "char2": 2, "char3": 3}

HEADER = """# transformers {version}: {signature}
# case {case} ({template}, {mode}, {chunking}); llama.cpp reads {expected}
from types import SimpleNamespace

from transformers.cli.serving.utils import get_response_template
from transformers.utils.chat_parsing import ResponseParser, parse_response

template = get_response_template(SimpleNamespace(), SimpleNamespace(model_type={model_type}))
prefix = {prefix}
tools = {tools}
text = {text}
"""
WHOLE = """print(parse_response(text, template, prefix=prefix, tools=tools))
"""
STREAM = """parser = ResponseParser(template, prefix=prefix, tools=tools)
for chunk in [text[i:i + {size}] for i in range(0, len(text), {size})]:
    print(repr(chunk), parser.feed(chunk))
print(parser.finalize())
"""


def reproducer(
    model_type: str, row: Any, session: Session | None, signature: str, version: str
) -> str | None:
    """The replay of a row's reply (None where the session or the chunks cannot be had again)."""
    if session is None or (row.chunking != "whole" and row.chunking not in CHARACTER_GROUPS):
        return None
    code = HEADER.format(
        version=version,
        signature=signature,
        case=row.case_id,
        template=row.template,
        mode=row.mode,
        chunking=row.chunking,
        expected=row.oracle_reading,
        model_type=repr(model_type),
        prefix=repr(session.prompt or ""),
        tools=repr(session.tools or None),
        text=repr(row.reply),
    )
    if row.chunking == "whole":
        return code + WHOLE
    return code + STREAM.format(size=CHARACTER_GROUPS[row.chunking])
