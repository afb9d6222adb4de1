"""reply: read a model's reply exactly as llama.cpp (llama-server) reads it, in pure Python.

    import reply
    reader = reply.open(session)          # Unsupported when no syntax reads the template (RenderFailed
                                          # when one does but jinja2 cannot render the session)
    message = reader.parse(text)          # Rejected when llama.cpp would refuse the finished reply
    stream = reader.stream()
    for chunk in chunks:
        snapshot = stream.feed(chunk)     # what llama-server shows after this chunk (Rejected where
                                          # llama.cpp refuses the text so far; the stream goes on)
    final = stream.finish()               # equal to reader.parse(text)

`session` is anything with template_source, bos, eos, tools (OpenAI list), tool_choice,
parallel_tool_calls, enable_thinking, chat_template_kwargs (or `kwargs`), reasoning_format and messages.
A `Message` has reasoning_content, content, tool_calls (ToolCall name, arguments as JSON text, id) and
problems (`Problem`: no_action, multiple_actions, prose_before_action, text_after_action, unclosed_think,
bad_syntax, unknown_action, bad_args, cut_off).

How it works. `routes.py` replays llama.cpp's routing of a template (its specialized parsers first, else
the differential autoparser). `analysis.py` replays the autoparser's reasoning-marker analysis with
jinja2 probe renders (`rendering.py`). Each syntax builds the same PEG grammar llama.cpp builds
(`peg.py` is llama.cpp's PEG engine, `chat.py` its chat tags and AST-to-message mapper, `autoparser.py`
its generic grammar), so finished replies read exactly as llama.cpp reads them. A reader reads a streamed
reply once, one character at a time, into a record (`reader.Record`) that every stream of that reply reads
whatever its chunks; the grammar re-runs after each character, but `peg.py` memoizes every result that
never looked at the end of the input and resumes long scans and repetitions, and where a parse proves only
an open span grows the read is lengthened without parsing (`growth.py`), so the record only reads the new
text (linear work in the reply).

Streams and cut-off replies (`parse(text, partial=True)`) show what llama-server shows after streaming
the text character by character, with rules on top that keep a stream's promises (docs/reply.md, "Streams keep
their promises"): the start of a marker still arriving at the end is held back until it resolves, a call's
arguments show only up to their last closable point, raw control characters in strings escaped
(`promises.py`), and a read that would take back what was shown is not shown (where llama.cpp would fail
to diff). A read that shows nothing (a failed or empty read) keeps what the last character-by-character
read showed (`reader.Record`), so what is shown never depends on the chunking; where llama.cpp refuses the
text so far (it does not start as the format must), the cut read and that feed both raise Rejected, and the
stream goes on with the next chunk. A finished read that would drop a shown call, or carries arguments that
are not a JSON object, finishes as the stream showed it, arguments closed into an object and `bad_args`
reported.

Adding a syntax: write one module `reply/syntaxes/<name>.py` defining

    SYNTAX = Syntax(name, route, detect, build, call_starts, order)

- `route`: the llama.cpp route it implements (`routes.AUTOPARSER`, or a specialized route name from
  `routes.ROUTES`, e.g. "qwen3_coder");
- `detect(template) -> bool`: whether it reads this template, from the template's markers or a probe
  render (`template.call_turn` is what the template writes for an assistant turn with one call);
- `build(builder, template, request) -> Parser`: the grammar, ported from llama.cpp's
  common/parsers/<route>.cpp or built with `autoparser.build` from a `ToolFormat`;
- `call_starts(template, request) -> list[str]`: where a call starts (for problems);
- `order`: detection order among syntaxes of the same route (lower first);
- `mapper(text, nodes) -> Mapped` (optional): the AST-to-message mapper, where llama.cpp uses its own
  (gemma4, minimax_m3); by default common_chat_peg_mapper (`chat.Mapper`);
- `held_markers(template, request) -> list[str]` (optional): the markers whose start a partial read holds
  back at its end; by default the thinking tags and call starts. A port whose scans already stop before a
  marker's start names only those llama.cpp would otherwise show and then take back.
The registry (`syntaxes/__init__.py`) imports every module of the package. Then set the `syntax` of its
templates in templates/families.json and run `chatparity templates rebuild`: tests/test_reply_oracle.py takes
every template the index assigns to an implemented syntax and reads it through the harness's own runner (the
sweep's comparison with the oracle), whole and per-character streamed. Hand-made replies for one syntax go in
tests/test_reply_<name>.py (see docs/reply.md, "Adding a syntax").
"""

from __future__ import annotations

from typing import Any

from reply.deltas import Delta, ToolCallDelta, applied
from reply.messages import Message, Problem, Rejected, RenderFailed, ToolCall, Unsupported
from reply.reader import Reader, Stream, open_reader


def open(session: Any) -> Reader:
    """A reader for a session's replies."""
    return open_reader(session)


__all__ = [
    "Delta", "Message", "Problem", "Reader", "Rejected", "RenderFailed", "Stream", "ToolCall", "ToolCallDelta",
    "Unsupported", "applied", "open",
]
