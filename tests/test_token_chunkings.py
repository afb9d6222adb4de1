"""Token chunkings: cut where llama.cpp's own tokenizer cuts, hold split UTF-8, replay from their seed."""

from __future__ import annotations

import pytest

from chatparity.model import Reply
from harness import chunkings
from harness.chunkings import TokenPieces, token_pieces
from harness.profiles import rules_of

EMOJI_SPLIT = [b"a", b"\xf0\x9f\xa6", b"\x9c", b"b"]


def pieces_of(*texts: str, special: tuple[int, ...] = ()) -> TokenPieces:
    """Token pieces made by hand; `special` lists the indexes of the special ones."""
    return TokenPieces(texts, tuple(index in special for index in range(len(texts))))


@pytest.mark.parametrize("name", ["tokens", "special", "tokens:1:0", "tokens:4:1", "tokens:12:99"])
def test_token_chunking_names_are_valid(name: str) -> None:
    assert chunkings.validate(name) == name
    assert chunkings.needs_tokens(name)


@pytest.mark.parametrize("name", ["tokens:0:1", "tokens:4", "tokens:x:1", "tokens:4:-1", "token", "tokens:"])
def test_a_malformed_token_chunking_is_named_in_the_error(name: str) -> None:
    with pytest.raises(ValueError, match=rf"unknown chunking '{name}'.*tokens:K:SEED"):
        chunkings.parse_list(f"whole,{name}")


def test_a_token_that_ends_inside_a_utf8_sequence_is_held_until_it_completes() -> None:
    held = token_pieces("a🦜b", EMOJI_SPLIT, [False] * 4)
    assert held.texts == ("a", "🦜", "b")
    assert chunkings.streams("tokens", "a🦜b", held) == [("a", "🦜", "b")]


def test_a_space_the_tokenizer_inserts_is_dropped_and_a_wrong_piece_is_an_error() -> None:
    inserted = token_pieces("Hi<x>there", [b" Hi", b"<x>", b" there"], [False, True, False])
    assert inserted.texts == ("Hi", "<x>", "there")
    with pytest.raises(ValueError, match="token 1 .* byte 2"):
        token_pieces("Hi there", [b"Hi", b" where"], [False, False])
    with pytest.raises(ValueError, match="spell 2 of the text's 8 bytes"):
        token_pieces("Hi there", [b"Hi"], [False])


def test_whitespace_a_tokenizer_strips_next_to_a_special_token_is_a_piece_of_its_own() -> None:
    after = token_pieces("<|user|>\n{", [b"<|user|>", b" {"], [True, False])
    assert after.texts == ("<|user|>", "\n", "{") and after.special == (True, False, False)
    before = token_pieces("Hi\n\n<|end|>", [b" Hi", b"<|end|>"], [False, True])
    assert before.texts == ("Hi", "\n\n", "<|end|>")
    trailing = token_pieces("<|end|>\n\n", [b"<|end|>"], [True])
    assert trailing.texts == ("<|end|>", "\n\n")
    with pytest.raises(ValueError, match="token 1 .* byte 2"):
        token_pieces("Hi\n{", [b"Hi", b" {"], [False, False])
    with pytest.raises(ValueError, match="spell 2 of the text's 4 bytes"):
        token_pieces("Hi\n\n", [b"Hi"], [False])


def test_special_cuts_only_around_special_tokens() -> None:
    tokens = pieces_of("<think>", "a", "b", "</think>", "c", "d", "<tool_call>", special=(0, 3, 6))
    assert chunkings.streams("special", "".join(tokens.texts), tokens) == [
        ("<think>", "ab", "</think>", "cd", "<tool_call>")
    ]


def test_token_groups_replay_from_their_seed_and_stay_within_k() -> None:
    tokens = pieces_of(*(f"t{index} " for index in range(300)))
    text = "".join(tokens.texts)
    for size in (1, 2, 4, 7):
        first = chunkings.streams(f"tokens:{size}:3", text, tokens)
        assert first == chunkings.streams(f"tokens:{size}:3", text, tokens)
        (stream,) = first
        assert "".join(stream) == text
        assert all(1 <= chunk.count(" ") <= size for chunk in stream)
    assert chunkings.streams("tokens:1:3", text, tokens) == [tokens.texts]
    assert chunkings.streams("tokens:4:3", text, tokens) != chunkings.streams("tokens:4:4", text, tokens)


def test_token_chunkings_need_the_texts_own_tokens() -> None:
    with pytest.raises(ValueError, match="needs the text's tokens"):
        chunkings.streams("tokens", "abc")
    with pytest.raises(ValueError, match="do not spell the text"):
        chunkings.streams("tokens", "abc", pieces_of("ab"))
    assert chunkings.makes_streams("tokens", "abc") and not chunkings.makes_streams("tokens", "")
    made = [*chunkings.streams("tokens", "abc", pieces_of("a", "bc")), *chunkings.streams("char2", "abc")]
    assert chunkings.all_boundaries(map(chunkings.boundaries, made)) == (1, 2, 3)


def test_both_profiles_stream_tokens_the_quick_one_on_call_replies_only() -> None:
    call = Reply('<tool_call>{"name": "f", "arguments": {}}</tool_call>', False, "toolcall", "one_call")
    fuzz = Reply("<tool_call>x", False, "fuzz", "fuzz:1")
    quick, full = rules_of("quick"), rules_of("full")
    for name in ("tokens", "special", "tokens:4:1"):
        assert name in quick.chunkings and name in full.chunkings
        assert not quick.applies(name, fuzz, "think/parallel") and full.applies(name, fuzz, "think/parallel")
    assert quick.applies("tokens", call, "think/parallel") and quick.applies(
        "tokens:4:1", call, "nothink/auto"
    )
    assert quick.applies("special", call, "think/required")
