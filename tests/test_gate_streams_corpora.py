"""The quick corpora close the holes bugs slipped through: an escaped slash and an exponent in call arguments,
a call in gpt-oss's analysis channel, text that is not NFC, a reply cut inside a broken call in every calling
mode, and call arguments streamed for every call shape."""

from __future__ import annotations

import unicodedata

import pytest

from chatparity.model import Reply
from corpora.catalog import plan, replies
from harness.profiles import rules_of

QWEN3 = "Qwen-Qwen3-0.6B.jinja"
GPT_OSS = "openai-gpt-oss-120b.jinja"
QWEN3_CODER = "Qwen3-Coder.jinja"
GEMMA4 = "google-gemma-4-31B-it.jinja"


def quick_replies(template: str, mode: str) -> list[Reply]:
    """The quick profile's replies of one template's single-turn session in one mode."""
    (session,) = [s for s in plan("quick", template, None, mode) if s.session.conversation == "single"]
    return replies(session, "quick")


def shaped(found: list[Reply], shape: str) -> Reply:
    """The one reply of a shape."""
    (reply,) = [reply for reply in found if reply.shape == shape]
    return reply


def test_json_arguments_with_an_escaped_slash_and_an_exponent() -> None:
    reply = shaped(quick_replies(QWEN3, "think/auto"), "escaped_slash_and_exponent_in_arguments")
    assert '"Rio\\/Niter\\u00f3i"' in reply.text and "-0.45e+1" in reply.text


@pytest.mark.parametrize(("template", "number"),
                         [(QWEN3_CODER, ">\n-0.45e+1\n<"), (GEMMA4, "days:-0.45e+1}")])
def test_an_exponent_written_bare_where_arguments_are_not_json(template: str, number: str) -> None:
    reply = shaped(quick_replies(template, "nothink/auto"), "escaped_slash_and_exponent_in_arguments")
    assert number in reply.text and "\\/" not in reply.text


def test_a_call_in_gpt_oss_analysis_channel() -> None:
    reply = shaped(quick_replies(GPT_OSS, "think/auto"), "call_in_analysis_channel")
    assert "<|channel|>analysis" in reply.text and "<|channel|>commentary" not in reply.text


def test_prose_that_is_not_nfc() -> None:
    reply = shaped(quick_replies(QWEN3, "nothink/auto"), "decomposed_unicode_prose_then_call")
    assert not unicodedata.is_normalized("NFC", reply.text)


@pytest.mark.parametrize("mode", ["think/auto", "think/required", "nothink/parallel"])
def test_a_reply_cut_inside_a_broken_call_in_every_calling_mode(mode: str) -> None:
    found = quick_replies(QWEN3, mode)
    cut = shaped(found, "toolcall:malformed_arguments@past_argument_value")
    broken = shaped(found, "malformed_arguments")
    assert cut.partial and broken.text.startswith(cut.text)
    assert len(cut.text) > broken.text.index("Rio") + len("Rio")


def test_the_quick_profile_streams_call_arguments_of_every_call_shape() -> None:
    quick = rules_of("quick")
    by_mode = {mode: quick_replies(QWEN3, mode) for mode in ("think/auto", "think/parallel")}
    streamed = {
        reply.shape
        for mode, found in by_mode.items()
        for reply in found
        if not reply.partial and quick.applies("char3", reply, mode)
    }
    calls = {
        reply.shape
        for found in by_mode.values()
        for reply in found
        if reply.origin in ("toolcall", "roundtrip") and "call" in reply.shape
    }
    assert len(calls) >= 10 and calls <= streamed
    long_call = shaped(by_mode["think/auto"], "text_after_call")
    assert len(long_call.text) > 64 and quick.applies("char3", long_call, "think/auto")
    assert not quick.applies("char3", long_call, "think/none")
    assert not quick.applies("char", long_call, "think/auto")


def test_a_call_whose_schemas_vary_as_real_apis_streams_its_arguments() -> None:
    (session,) = [s for s in plan("quick", QWEN3, None, "think/parallel") if s.session.conversation == "typed_tools"]
    typed = shaped(replies(session, "quick"), "typed_call")
    schema = next(t for t in session.session.tools if t["function"]["name"] == "book_trip")["function"]["parameters"]
    kinds = {key for spec in schema["properties"].values() for key in spec} | {
        key for spec in schema["properties"].values() for item in spec.get("anyOf", []) for key in item
    }
    assert {"enum", "const", "anyOf", "allOf", "items", "properties"} <= kinds
    assert {"type": "null"} in schema["properties"]["return_date"]["anyOf"]
    assert ["string", "null"] in [spec.get("type") for spec in schema["properties"].values()]
    assert any(not spec for spec in schema["properties"].values())
    assert typed.truth is not None and '"return_date": null' in typed.truth.tool_calls[0].arguments
    assert rules_of("quick").applies("char3", typed, "think/parallel")


def test_enable_thinking_switched_through_chat_template_kwargs() -> None:
    (session,) = plan("quick", QWEN3, None, "think/none/enable_thinking=false")
    assert session.session.enable_thinking and session.session.chat_template_kwargs == {"enable_thinking": False}
    assert session.session.prompt is not None and session.session.prompt.endswith("<think>\n\n</think>\n\n")
    assert not plan("quick", "Mistral-Small-3.2-24B-Instruct-2506.jinja", None, "*enable_thinking*")
