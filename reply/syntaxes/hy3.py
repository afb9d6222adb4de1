"""Hy3 calls read by the autoparser: GLM-like tags with an `:opensource` suffix, `<tool_calls:opensource>\\n
<tool_call:opensource>x<tool_sep:opensource>\\n<arg_key:opensource>k</arg_key:opensource>\\n
<arg_value:opensource>v</arg_value:opensource>\\n…</tool_call:opensource>\\n</tool_calls:opensource>`."""

from __future__ import annotations

from reply.autoparser import FixedFormat, ToolFormat, ToolMode
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_ARG, PROBE_ARG_TWO, PROBE_FUNCTION

FORMAT = ToolFormat(ToolMode.TAG_WITH_TAGGED, section_start="<tool_calls:opensource>\n",
                    section_end="</tool_calls:opensource>", per_call_start="<tool_call:opensource>",
                    args_separator="<tool_sep:opensource>", close="</tool_call:opensource>\n",
                    arg_name_prefix="<arg_key:opensource>", arg_name_suffix="</arg_key:opensource>\n",
                    arg_value_prefix="<arg_value:opensource>", arg_value_suffix="</arg_value:opensource>\n")
PROBE_CALL = (f"<tool_calls:opensource>\n<tool_call:opensource>{PROBE_FUNCTION}<tool_sep:opensource>\n"
              f"<arg_key:opensource>{PROBE_ARG}</arg_key:opensource>\n<arg_value:opensource>XXXX</arg_value:opensource>\n"
              f"<arg_key:opensource>{PROBE_ARG_TWO}</arg_key:opensource>\n"
              f"<arg_value:opensource>YYYY</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>")

FIXED = FixedFormat(FORMAT, PROBE_CALL)
SYNTAX = Syntax("hy3", AUTOPARSER, FIXED.detect, FIXED.build, FIXED.call_starts, order=72)
