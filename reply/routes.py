"""llama.cpp's routing of a template (common_chat_try_specialized_template in common/chat.cpp): the first
specialized route whose markers the template source holds, else the differential autoparser."""

from __future__ import annotations

from collections.abc import Callable

AUTOPARSER = "autoparser"


def _all(*needles: str) -> Callable[[str], bool]:
    return lambda src: all(n in src for n in needles)


def _lfm2(src: str) -> bool:
    return "<|tool_list_start|>" in src and "<|tool_list_end|>" in src


ROUTES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("ministral_3", lambda s: all(n in s for n in ("[SYSTEM_PROMPT]", "[TOOL_CALLS]", "[ARGS]"))
     and "[CALL_ID]" not in s),
    ("gpt_oss", _all("<|channel|>")),
    ("muse_glimmer", _all("<atem:function_calls>", "<|eom|>")),
    ("functionary_v3_2", _all(">>>all", ">>>${recipient}")),
    ("kimi_k2", _all("<|tool_calls_section_begin|>", "<|tool_call_begin|>")),
    ("kimi_k3", _all("<|open|>", "<|close|>", "<|end_of_msg|>")),
    ("ling3", _all("<role>ASSISTANT</role>", "<arg_key>")),
    ("cohere2moe", _all("<|START_TEXT|>", "<|START_ACTION|>")),
    ("lfm2", _lfm2),
    ("lfm2", lambda s: "List of tools: [" in s and "<|tool_list_start|>" not in s),  # LFM2.5: same grammar
    ("gigachat_v3", lambda s: "<|role_sep|>" in s and "<|message_sep|>" in s and "<|function_call|>" not in s),
    ("minimax_m3", _all("]<]minimax[>[", "<tool_call>", "<invoke name=")),
    ("deepseek_v3_2", lambda s: "dsml_token" in s and "DSML" in s and ("function_calls" in s or "tool_calls" in s)),
    ("gemma4", _all("'<|tool_call>call:'")),
    ("minicpm5", _all("Tool usage guidelines:", '<function name="', '<param name="')),
    ("qwen3_coder", lambda s: all(n in s for n in ("<tool_call>", "<function=", "<parameter="))
     and "'<tool_call><function=' ~ tool_call.name ~ '>'" not in s),
)


def route(source: str) -> str:
    """The route llama.cpp takes for this template source."""
    for name, matches in ROUTES:
        if matches(source):
            return name
    return AUTOPARSER
