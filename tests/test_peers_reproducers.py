"""Reproducers: the few lines that replay a peer bug's example with the peer alone, and the settings SGLang's
adapter is asked for (by a stand-in interpreter here: nothing is installed)."""

from __future__ import annotations

import stat
from pathlib import Path
from types import SimpleNamespace

from peers.catalog import PEERS
from peers.reproducers import sglang_settings
from peers.sglang.adapter import Choice
from peers.sglang.reproducer import reproducer as sglang_reproducer
from peers.transformers.reproducer import reproducer as transformers_reproducer

ROW = SimpleNamespace(
    case_id="c1",
    template="Qwen-Qwen3-0.6B.jinja",
    mode="think/auto",
    chunking="whole",
    reply="<think>a</think>b",
    oracle_reading='{"content": "b"}',
    parser_reading="{}",
)
SESSION = SimpleNamespace(
    tools=[{"type": "function", "function": {"name": "f"}}], prompt="<|im_start|>assistant\n"
)


def test_sglang_s_reproducer_chains_its_parsers_with_the_adapter_s_setting() -> None:
    """Whole: the reasoning parser with the setting found, then the call parser on the rest; char3: chunks of
    three fed to both; token chunkings and unknown settings make none."""
    choice = Choice("Qwen-Qwen3-0.6B.jinja", "qwen25", "qwen3", "test")
    whole = sglang_reproducer(choice, ROW, SESSION, False, "hermes whole mismatch:content", "0.5.23")
    assert whole is not None
    compile(whole, "reproducer", "exec")
    assert "ReasoningParser('qwen3', stream_reasoning=False, force_reasoning=False)" in whole
    assert "FunctionCallParser(tools, 'qwen25').parse_non_stream(rest)" in whole
    assert "text = '<think>a</think>b'" in whole and "'name': 'f'" in whole
    streamed = sglang_reproducer(
        choice, SimpleNamespace(**{**vars(ROW), "chunking": "char3"}), SESSION, True, "sig", "0.5.23"
    )
    assert streamed is not None and "text[i:i + 3]" in streamed and "force_reasoning=True" in streamed
    compile(streamed, "reproducer", "exec")
    assert (
        sglang_reproducer(
            choice, SimpleNamespace(**{**vars(ROW), "chunking": "tokens"}), SESSION, True, "sig", "0.5.23"
        )
        is None
    )
    assert sglang_reproducer(choice, ROW, SESSION, None, "sig", "0.5.23") is None


def test_transformers_reproducer_reads_with_the_fallback_template_and_the_prompt() -> None:
    """The model type's template, the session's prompt as prefix and its tools."""
    code = transformers_reproducer("qwen3", ROW, SESSION, "sig", "5.25.0")
    assert code is not None
    compile(code, "reproducer", "exec")
    assert "SimpleNamespace(model_type='qwen3')" in code and "prefix = '<|im_start|>assistant\\n'" in code
    assert transformers_reproducer("qwen3", ROW, None, "sig", "5.25.0") is None


def test_sglang_settings_are_asked_of_the_peer_s_interpreter_one_line_per_session(tmp_path: Path) -> None:
    """Sessions go out as JSON lines; a gone session, or no interpreter, has no setting."""
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nwhile read line; do echo true; done\n")
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    session = SimpleNamespace(
        template="t",
        template_source="",
        bos="",
        eos="",
        messages=(),
        tools=[],
        tool_choice="auto",
        parallel_tool_calls=False,
        enable_thinking=True,
        chat_template_kwargs={},
        reasoning_format="deepseek",
        prompt="",
        now="",
    )
    assert sglang_settings(PEERS["sglang"], python, [session, None, session]) == [True, None, True]
    assert sglang_settings(PEERS["sglang"], tmp_path / "absent", [session]) == [None]
