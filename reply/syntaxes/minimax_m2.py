"""MiniMax-M2 calls read by the autoparser: `<minimax:tool_call>\\n<invoke name="x">\\n<parameter name="k">v
</parameter>\\n…</invoke>\\n</minimax:tool_call>`; string parameters taken raw, others parsed as JSON."""

from __future__ import annotations

from reply.autoparser import FixedFormat, ToolFormat, ToolMode
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_ARG, PROBE_ARG_TWO, PROBE_FUNCTION

FORMAT = ToolFormat(ToolMode.TAG_WITH_TAGGED, section_start="<minimax:tool_call>\n",
                    section_end="</minimax:tool_call>", name_prefix='<invoke name="', name_suffix='">\n',
                    close="</invoke>\n", arg_name_prefix='<parameter name="', arg_value_prefix='">',
                    arg_value_suffix="</parameter>\n")
PROBE_CALL = (f'<minimax:tool_call>\n<invoke name="{PROBE_FUNCTION}">\n<parameter name="{PROBE_ARG}">XXXX</parameter>\n'
              f'<parameter name="{PROBE_ARG_TWO}">YYYY</parameter>\n</invoke>\n</minimax:tool_call>')

FIXED = FixedFormat(FORMAT, PROBE_CALL)
SYNTAX = Syntax("minimax_m2", AUTOPARSER, FIXED.detect, FIXED.build, FIXED.call_starts, order=70)
