"""Seed-OSS calls read by the autoparser: `<seed:tool_call>\\n<function=x>\\n<parameter=k>v</parameter>\\n…
</function>\\n</seed:tool_call>`, each call in its own tags; string parameters taken raw, others as JSON."""

from __future__ import annotations

from reply.autoparser import FixedFormat, ToolFormat, ToolMode
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_ARG, PROBE_ARG_TWO, PROBE_FUNCTION

FORMAT = ToolFormat(ToolMode.TAG_WITH_TAGGED, per_call_start="<seed:tool_call>\n", per_call_end="</seed:tool_call>",
                    name_prefix="<function=", name_suffix=">\n", close="</function>\n", arg_name_prefix="<parameter=",
                    arg_name_suffix=">", arg_value_suffix="</parameter>\n")
PROBE_CALL = (f"<seed:tool_call>\n<function={PROBE_FUNCTION}>\n<parameter={PROBE_ARG}>XXXX</parameter>\n"
              f"<parameter={PROBE_ARG_TWO}>YYYY</parameter>\n</function>\n</seed:tool_call>")

FIXED = FixedFormat(FORMAT, PROBE_CALL)
SYNTAX = Syntax("seed_oss", AUTOPARSER, FIXED.detect, FIXED.build, FIXED.call_starts, order=71)
