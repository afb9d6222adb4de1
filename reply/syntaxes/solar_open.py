"""Solar Open calls read by the autoparser: `<|tool_calls|><|tool_call:begin|>id<|tool_call:name|>x
<|tool_call:args|>{…}<|tool_call:end|><|calls|>`. llama.cpp's analysis takes the probe's call id into the name
prefix, so only a call whose id is `call00001` reads as a call (and its id is not returned)."""

from __future__ import annotations

from reply.autoparser import FixedFormat, ToolFormat, ToolMode
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_FUNCTION

PROBE_ID = "call00001"
FORMAT = ToolFormat(ToolMode.TAG_WITH_JSON, section_start="<|tool_calls|>", section_end="<|calls|>",
                    per_call_start="<|tool_call:begin|>", per_call_end="<|tool_call:end|>",
                    name_prefix=PROBE_ID + "<|tool_call:name|>", name_suffix="<|tool_call:args|>")
PROBE_CALL = f"<|tool_calls|><|tool_call:begin|>{PROBE_ID}<|tool_call:name|>{PROBE_FUNCTION}<|tool_call:args|>{{"

FIXED = FixedFormat(FORMAT, PROBE_CALL)
SYNTAX = Syntax("solar_open", AUTOPARSER, FIXED.detect, FIXED.build, FIXED.call_starts, order=73)
