"""llama.cpp's own tokenizer behind the oracle: markers stream whole, pieces spell the reply, answers are cached."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from chatparity.model import Outcome
from harness import chunkings, sweep_command
from harness.oracle_cache import OracleCache
from harness.oracle_reads import OracleFailed, OracleIdentity, OracleReads
from oracle.client import Oracle, OracleCrashed, OracleError
from oracle.vocabs import Vocab, vocab_named, vocab_table
from templates.index import load_index

pytestmark = pytest.mark.oracle

TESTS = Path(__file__).resolve().parent
QWEN3_CALL = '<think>\nRio it is.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio"}}\n</tool_call>'
GPT_OSS_CALL = (
    "<|channel|>analysis<|message|>Rio it is.<|end|><|start|>assistant<|channel|>commentary "
    'to=functions.get_weather <|constrain|>json<|message|>{"city": "Rio"}<|call|>'
)
SAMPLE = 'Héllo 日本 😀🦜 𝔘 [TOOL_CALLS] <tool_call>{"a": 1}</tool_call>\n\n  tabs\tend'


def template_vocab(template: str) -> Vocab:
    """The vocab the index records for a template."""
    return vocab_named(load_index()[template].vocab)


@pytest.fixture
def reads(tmp_path: Path) -> OracleReads:
    """The sweep's oracle reads over a cache of this test alone."""
    found = OracleReads(OracleIdentity.of(), OracleCache(tmp_path / "cache"))
    yield found
    found.close()


def streams_of(reads: OracleReads, template: str, text: str, name: str) -> tuple[str, ...]:
    """The one stream a token chunking makes of a reply of a template."""
    (stream,) = chunkings.streams(name, text, reads.tokens(template_vocab(template), text))
    return stream


@pytest.mark.parametrize("name", ["tokens", "special"])
def test_qwen3_streams_its_tool_call_tag_as_one_chunk(reads: OracleReads, name: str) -> None:
    stream = streams_of(reads, "Qwen-Qwen3-0.6B.jinja", QWEN3_CALL, name)
    assert "".join(stream) == QWEN3_CALL
    for marker in ("<tool_call>", "</tool_call>", "<think>", "</think>"):
        assert marker in stream


@pytest.mark.parametrize("name", ["tokens", "special"])
def test_gpt_oss_streams_its_channel_marker_as_one_chunk(reads: OracleReads, name: str) -> None:
    stream = streams_of(reads, "openai-gpt-oss-120b.jinja", GPT_OSS_CALL, name)
    assert stream.count("<|channel|>") == 2 and "<|constrain|>" in stream and "<|call|>" in stream


def test_special_chunks_are_the_special_tokens_and_the_text_between(reads: OracleReads) -> None:
    stream = streams_of(reads, "Qwen-Qwen3-0.6B.jinja", QWEN3_CALL, "special")
    assert stream == (
        "<think>",
        "\nRio it is.\n",
        "</think>",
        "\n\n",
        "<tool_call>",
        '\n{"name": "get_weather", "arguments": {"city": "Rio"}}\n',
        "</tool_call>",
    )


def test_a_token_ending_inside_a_utf8_sequence_is_held(oracle: Oracle, reads: OracleReads) -> None:
    vocab = template_vocab("Qwen-Qwen3-0.6B.jinja")
    text = "😀🦜 𝔘"
    raw = oracle.tokenize(vocab, text)
    assert any(
        piece[-1:] and piece[-1] >= 0x80 and len(piece.decode("utf-8", "ignore").encode()) != len(piece)
        for piece in raw.pieces
    )
    held = reads.tokens(vocab, text)
    assert held.texts == ("😀", "🦜", " 𝔘") and len(raw.tokens) > len(held.texts)


@pytest.mark.parametrize("name", sorted(vocab_table()["vocabs"]))
def test_detokenize_inverts_tokenize(oracle: Oracle, reads: OracleReads, name: str) -> None:
    vocab = vocab_named(name)
    tokens = oracle.tokenize(vocab, SAMPLE)
    assert oracle.detokenize(vocab, tokens.tokens) == SAMPLE
    assert "".join(reads.tokens(vocab, SAMPLE).texts) == SAMPLE


def test_added_tokens_are_single_special_tokens(oracle: Oracle) -> None:
    qwen3 = vocab_named("qwen3")
    bare = Vocab("bare", qwen3.file, False)
    assert len(oracle.tokenize(bare, "<tool_call>").tokens) > 1
    found = oracle.tokenize(qwen3, "<tool_call>")
    assert len(found.tokens) == 1 and found.special == [True] and found.pieces == [b"<tool_call>"]


def test_bad_tokenizer_requests_are_errors_naming_the_field(oracle: Oracle) -> None:
    with pytest.raises(OracleError, match="no readable vocab file"):
        oracle.request({"op": "tokenize", "vocab_path": "/nonexistent.gguf", "text": "x"})
    with pytest.raises(OracleError, match="missing field 'text'"):
        oracle.request(
            {"op": "tokenize", "vocab_path": str(oracle._vocab_fields(vocab_named("qwen3"))["vocab_path"])}
        )
    with pytest.raises(OracleError, match=r"token 999999999 is not an id of this vocab"):
        oracle.detokenize(vocab_named("qwen3"), [1, 999999999])
    with pytest.raises(FileNotFoundError, match="ships no vocab 'nope'"):
        oracle.tokenize(Vocab("nope", "nope", False), "x")


def test_tokenizations_are_cached_by_build_vocab_and_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []
    real = Oracle.tokenize
    monkeypatch.setattr(
        Oracle, "tokenize", lambda self, vocab, text: asked.append(text) or real(self, vocab, text)
    )
    identity = OracleIdentity.of()
    first = OracleReads(identity, OracleCache(tmp_path))
    pieces = first.tokens(vocab_named("qwen3"), QWEN3_CALL)
    first.close()
    again = OracleReads(identity, OracleCache(tmp_path))
    assert again.tokens(vocab_named("qwen3"), QWEN3_CALL) == pieces and again.requests == 0
    again.tokens(vocab_named("qwen2.5"), QWEN3_CALL)
    again.tokens(vocab_named("qwen3"), QWEN3_CALL + " ")
    again.close()
    other_build = OracleReads(
        OracleIdentity(identity.version, identity.sdist_sha256, identity.llama_cpp_commit, "another-build"),
        OracleCache(tmp_path),
    )
    other_build.tokens(vocab_named("qwen3"), QWEN3_CALL)
    other_build.close()
    assert asked == [QWEN3_CALL, QWEN3_CALL, QWEN3_CALL + " ", QWEN3_CALL]


@pytest.mark.parametrize("error", [OracleCrashed("killed by SIGKILL"), OracleError("bad request")])
def test_a_failed_tokenization_is_an_oracle_crash_of_its_rows(
    reads: OracleReads, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    def fail(self: Any, vocab: Vocab, text: str) -> Any:
        raise error

    monkeypatch.setattr(Oracle, "tokenize", fail)
    with pytest.raises(OracleFailed) as failed:
        reads.tokens(vocab_named("qwen3"), "x")
    assert failed.value.outcome == Outcome.ORACLE_CRASHED and str(error) in str(failed.value)


def test_a_parser_only_rerun_with_token_chunkings_asks_llama_cpp_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests: list[str] = []
    real = Oracle.request
    monkeypatch.setattr(
        Oracle, "request", lambda self, payload: requests.append(payload["op"]) or real(self, payload)
    )

    def sweep(name: str) -> Path:
        argv = [
            "--source",
            str(TESTS / "sweep_corpus.py"),
            "--out",
            str(tmp_path / name),
            "--oracle-cache",
            str(tmp_path / "cache"),
            "--chunking",
            "whole,tokens,special,tokens:3:2",
            "--parser",
            f"{TESTS / 'sweep_parsers.py'}:Echo",
            "-n",
            "0",
            "--profile",
            "full",
        ]
        assert sweep_command.main(argv, prog="chatparity sweep") in (0, 1)
        return tmp_path / name

    first = sweep("fill")
    assert {"render", "tokenize", "stream"} <= set(requests)
    requests.clear()
    again = sweep("again")
    assert requests == []
    query = "SELECT case_id, chunking, outcome, snapshot_parity FROM rows ORDER BY case_id, chunking"
    tables = [sqlite3.connect(out / "rows.sqlite").execute(query).fetchall() for out in (first, again)]
    assert tables[0] == tables[1]
    assert {row[1] for row in tables[0]} == {"whole", "tokens", "special", "tokens:3:2"}


def test_the_index_names_each_templates_vocab_and_its_split_markers() -> None:
    index = load_index()
    assert all(entry.vocab in vocab_table()["vocabs"] for entry in index.values())
    qwen3, gpt_oss = index["Qwen-Qwen3-0.6B.jinja"], index["openai-gpt-oss-120b.jinja"]
    assert (qwen3.vocab, qwen3.vocab_exact, qwen3.split_markers) == ("qwen3", True, ())
    assert (gpt_oss.vocab, gpt_oss.vocab_exact, gpt_oss.split_markers) == ("gpt-oss", False, ())
    assert {"<tool_call>", "</tool_call>"} <= set(index["Bielik-11B-v3.0-Instruct.jinja"].split_markers)


def test_vocabs_beyond_those_the_child_keeps_load_again_and_tokenize_alike() -> None:
    names = list(vocab_table()["vocabs"])[:6]
    with Oracle() as kept, Oracle() as fresh:
        first = [kept.tokenize(vocab_named(name), SAMPLE).tokens for name in names]
        again = [kept.tokenize(vocab_named(name), SAMPLE).tokens for name in names]
        alone = [fresh.tokenize(vocab_named(names[0]), SAMPLE).tokens]
    assert first == again and first[0] == alone[0]
    assert len({tuple(tokens) for tokens in first}) > 1
