"""The llama-server parser's pure parts: the tape's arithmetic, the vocab per template, placing a reply, merging
SSE deltas, and mapping the stream's states onto chunk ends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chatparity.model import Message, NotWritten, ToolCall
from corpora.catalog import plan
from harness import sweep_command
from harness.parser_specs import ParserKind, parser_spec
from harness.server_client import Merged
from harness.server_reads import cause_of, constrained, stream_snapshots, token_ends
from harness.server_tape import Cause, last_run, place
from harness.server_vocabs import Fidelity, template_vocab, token_type
from harness.sweep_command import server_chunkings
from oracle import server_build
from oracle.build import BuildError
from oracle.tape import CONTROL, DISTANCE, FREQ_BASE, USER_DEFINED, WIDTH, attention_gap, weights
from templates.index import load_index


def rms(x: np.ndarray) -> np.ndarray:
    """RMSNorm without weight, per row."""
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6)


def rope(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """llama.cpp's NORM rotary embedding: adjacent channel pairs rotated by position·θ_f."""
    theta = FREQ_BASE ** (-2 * np.arange(WIDTH // 2) / WIDTH)
    angle = positions[:, None] * theta[None, :]
    even, odd = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x)
    out[:, 0::2] = even * np.cos(angle) - odd * np.sin(angle)
    out[:, 1::2] = even * np.sin(angle) + odd * np.cos(angle)
    return out


def next_tokens(tensors: dict[str, np.ndarray], ids: np.ndarray) -> np.ndarray:
    """The tape's greedy next token at every position (one layer, one head, causal attention)."""
    f = {name: value.astype(np.float64) for name, value in tensors.items()}
    x = f["token_embd.weight"][ids]
    h = rms(x) * f["blk.0.attn_norm.weight"]
    positions = np.arange(len(ids), dtype=np.float64)
    q = rope(h @ f["blk.0.attn_q.weight"].T, positions)
    k = rope(h @ f["blk.0.attn_k.weight"].T, positions)
    v = h @ f["blk.0.attn_v.weight"].T
    scores = q @ k.T / np.sqrt(WIDTH)
    scores[np.triu_indices(len(ids), 1)] = -np.inf
    weights_ = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights_ /= weights_.sum(axis=1, keepdims=True)
    x = x + (weights_ @ v) @ f["blk.0.attn_output.weight"].T
    logits = (rms(x) * f["output_norm.weight"]) @ f["output.weight"].T
    return logits.argmax(axis=1)


def test_the_tape_copies_the_token_exactly_distance_back() -> None:
    size = 5000
    ids = np.random.default_rng(7).integers(0, size, DISTANCE + 300)
    predicted = next_tokens(weights(size, DISTANCE), ids)
    assert (predicted[DISTANCE:] == ids[: len(ids) - DISTANCE]).all()


def test_the_attention_peak_stands_far_above_every_other_offset() -> None:
    assert attention_gap(DISTANCE) > 90


def test_each_template_family_gets_its_fidelity_and_reason() -> None:
    index = load_index()
    qwen3 = template_vocab(index["Qwen-Qwen3-0.6B.jinja"])
    assert qwen3.fidelity is Fidelity.RENAMED and qwen3.tape.file == "qwen2" and qwen3.tape.eog == "<|im_end|>"
    assert dict(qwen3.tape.markers)["<think>"] == USER_DEFINED
    llama = template_vocab(index["meta-llama-Llama-3.1-8B-Instruct.jinja"])
    assert llama.fidelity is Fidelity.RENAMED and dict(llama.tape.markers)["<|python_tag|>"] == CONTROL
    glm = template_vocab(index["GLM-4.6.jinja"])
    assert glm.fidelity is Fidelity.EMULATED and "GLM-4.6" in glm.reason and glm.tape.eog == ""
    assert template_vocab(index["google-gemma-4-31B-it.jinja"]).fidelity is Fidelity.NATIVE


@pytest.mark.parametrize(("marker", "kind"), [
    ("<tool_call>", USER_DEFINED), ("</think>", USER_DEFINED), ("<minimax:tool_call>", USER_DEFINED),
    ("<|im_end|>", CONTROL), ("[TOOL_CALLS]", CONTROL), ("<s>", CONTROL), ("<｜tool▁sep｜>", CONTROL),
])
def test_marker_token_types(marker: str, kind: int) -> None:
    assert token_type(marker) == kind


def test_the_last_run_of_the_reply_in_the_prompt() -> None:
    assert last_run([1, 2, 3, 1, 2, 3, 4], [1, 2, 3]) == 3
    assert last_run([1, 2], [2, 3]) == -1


def test_what_the_server_wrote_decides_the_cause() -> None:
    assert cause_of(True, [1, 2, 3], [1, 2, 3, 9], "abc", "abc") is None
    assert cause_of(True, [1, 2, 3], [1, 2, 3], "ac", "abc") is Cause.SPECIAL
    assert cause_of(True, [1, 2, 3], [1, 2, 3, 4, 5], "abc x x", "abc") is Cause.GRAMMAR
    assert cause_of(False, [1, 2, 3], [1, 2], "ab", "abc") is Cause.SPECIAL
    assert cause_of(True, [1, 2, 3], [1, 5, 6, 7], "a??", "abc") is Cause.GRAMMAR
    assert cause_of(False, [1, 2, 3], [1, 5, 6], "a??", "abc") is Cause.OTHER


@pytest.mark.parametrize(("mode", "grammar"), [("think/auto", True), ("think/required", True),
                                               ("think/choice_none", False), ("nothink/none", False)])
def test_only_a_request_that_may_call_is_constrained_by_the_tool_grammar(mode: str, grammar: bool) -> None:
    session = plan("server", templates="Qwen-Qwen3-0.6B*", mode=mode)[0].session
    assert constrained(session) is grammar


def test_token_ends_count_code_points_and_wait_for_whole_characters() -> None:
    reply = "aé€b"
    pieces = ["a", [0xC3], [0xA9, 0xE2, 0x82], [0xAC], "b"]
    assert token_ends(reply, pieces) == [1, 1, 2, 3, 4]


def event(decoded: int, finish: str | None = None, **delta: object) -> dict[str, object]:
    """One SSE chat chunk, with timings when `decoded`."""
    chunk: dict[str, object] = {"choices": [{"delta": delta, "finish_reason": finish}]}
    if decoded:
        chunk["timings"] = {"predicted_n": decoded}
    return chunk


def test_deltas_merge_as_an_openai_client_merges_them() -> None:
    merged = Merged()
    merged.add(event(1, role="assistant", content=None))
    merged.add(event(2, content="Hi"))
    merged.add(event(0, tool_calls=[{"index": 0, "id": "c1", "function": {"name": "get_", "arguments": ""}}]))
    merged.add(event(3, tool_calls=[{"index": 0, "function": {"name": "weather", "arguments": "{\"a\""}}]))
    merged.add(event(4, tool_calls=[{"index": 0, "function": {"arguments": ":1}"}}]))
    merged.add(event(5, finish="tool_calls"))
    assert merged.message() == Message("Hi", "", (ToolCall("get_weather", '{"a":1}', "c1"),))
    assert merged.final_start == 5


def test_chunk_ends_show_the_state_after_the_last_whole_token() -> None:
    merged = Merged()
    merged.add(event(1, content="He"))
    merged.add(event(0, content="l"))
    merged.add(event(2, content="lo"))
    merged.add(event(0, content="!"))
    merged.add(event(3, finish="stop"))
    ends = [2, 5, 6]
    snapshots = stream_snapshots(merged, ends, [1, 2, 4, 5, 6])
    assert [s.content for s in snapshots] == ["", "He", "He", "Hello", "Hello"]
    merged.add({"error": {"message": "boom"}})
    assert merged.error == "boom"


def test_llama_server_specs_and_their_chunkings(tmp_path: object) -> None:
    assert parser_spec("llama-server").kind is ParserKind.SERVER
    with pytest.raises(ValueError, match="not an executable"):
        parser_spec("llama-server:/no/such/binary")
    assert server_chunkings("quick") == ("whole", "tokens", "special", "tokens:4:1")


def test_a_failed_server_build_is_one_line_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_tools() -> None:
        raise BuildError("building the llama.cpp oracle needs cmake (apt install cmake, or pip install cmake)")

    monkeypatch.setattr(server_build, "build_dir", lambda version=None: tmp_path / "build")
    monkeypatch.setattr(server_build, "server_path", lambda version=None: tmp_path / "build" / "bin" / "llama-server")
    monkeypatch.setattr(server_build, "find_tools", no_tools)
    monkeypatch.setattr(sweep_command, "build_oracles", lambda config: None)
    status = sweep_command.main(["--parser", "llama-server", "--templates", "Qwen-Qwen3-0.6B*",
                                 "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == sweep_command.SERVER_BUILD_FAILED == 3
    assert len(err) == 1 and "llama-server could not be built" in err[0] and "needs cmake" in err[0]
    assert (tmp_path / "build" / "build-error.log").read_text().startswith("building the llama.cpp oracle")


class FakeServer:
    """`/apply-template` and `/tokenize` of a server whose template wraps the last message as `[U]...[A]` (its
    `change` applied to the content) and whose tokens are characters, `<E>` and the filler `" x"` one each."""

    def __init__(self, change: Callable[[str], str] = lambda text: text) -> None:
        self.change = change

    def __call__(self, path: str, body: dict[str, Any]) -> Any:
        if path == "/apply-template":
            return {"prompt": "[U]" + self.change(body["messages"][-1]["content"]) + "[A]"}
        text = body["content"]
        tokens, at = [], 0
        while at < len(text):
            size = 3 if text.startswith("<E>", at) else 2 if text.startswith(" x", at) else 1
            tokens.append(hash(text[at : at + size]) % 1000)
            at += size
        return {"tokens": ([0] if body["add_special"] else []) + tokens}


def test_a_reply_is_placed_distance_tokens_before_the_first_generated_one() -> None:
    session = plan("server", templates="Qwen-Qwen3-0.6B*", mode="nothink/none")[0].session
    post = FakeServer()
    placement = place(post, session, "Hi there", "<E>")
    prompt = post("/apply-template", placement.body)["prompt"]
    ids = post("/tokenize", {"content": prompt, "add_special": True})["tokens"]
    start = 1 + len("[U]")
    assert len(ids) - 1 - start == DISTANCE and len(placement.reply_ids) == len("Hi there")
    with pytest.raises(NotWritten, match="too long for the tape"):
        place(post, session, "y" * (DISTANCE + 5), "<E>")
    with pytest.raises(NotWritten, match="changed by the template"):
        place(FakeServer(str.strip), session, " Hi", "<E>")
