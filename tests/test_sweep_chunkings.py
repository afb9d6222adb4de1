"""Chunkings: every rule reassembles the reply, cuts where it says, and replays from its name."""

from __future__ import annotations

import pytest

from harness import chunkings

TEXT = "a東😀<think>é"


@pytest.mark.parametrize("name", ["char", "char2", "char3", "split", "random:7"])
def test_every_stream_reassembles_the_reply(name: str) -> None:
    for stream in chunkings.streams(name, TEXT):
        assert "".join(stream) == TEXT
        assert all(stream)


def test_char_feeds_every_code_point() -> None:
    assert chunkings.streams("char", TEXT) == [tuple(TEXT)]
    assert chunkings.boundaries(tuple(TEXT)) == tuple(range(1, len(TEXT) + 1))


def test_fixed_sizes_cut_every_n_code_points() -> None:
    assert chunkings.streams("char2", "abcde") == [("ab", "cd", "e")]
    assert chunkings.streams("char3", "abcde") == [("abc", "de")]


def test_split_makes_one_stream_per_cut_point() -> None:
    assert chunkings.streams("split", "abcd") == [("a", "bcd"), ("ab", "cd"), ("abc", "d")]
    assert chunkings.streams("split", "a") == []


def test_whole_and_empty_replies_have_no_stream() -> None:
    assert chunkings.streams("whole", TEXT) == []
    assert chunkings.streams("char", "") == []


@pytest.mark.parametrize("name", ["whole", "char", "char2", "char3", "split", "random:3"])
@pytest.mark.parametrize("text", ["", "a", "ab", "abc", "🌧é"])
def test_makes_streams_says_whether_the_chunking_makes_any(name: str, text: str) -> None:
    assert chunkings.makes_streams(name, text) == bool(chunkings.streams(name, text))


def test_random_replays_from_its_seed_and_seeds_differ() -> None:
    text = "x" * 200
    assert chunkings.streams("random:3", text) == chunkings.streams("random:3", text)
    assert chunkings.streams("random:3", text) != chunkings.streams("random:4", text)
    sizes = [len(chunk) for chunk in chunkings.streams("random:3", text)[0]]
    assert max(sizes) <= chunkings.RANDOM_MAX_CHUNK and len(set(sizes)) > 1


def union(names: list[str], text: str) -> tuple[int, ...]:
    """The boundaries of every stream the chunkings make of `text`."""
    return chunkings.all_boundaries(
        chunkings.boundaries(stream) for name in names for stream in chunkings.streams(name, text)
    )


def test_all_boundaries_is_the_union_of_every_chunking() -> None:
    assert union(["char3", "split"], "abcde") == (1, 2, 3, 4, 5)
    assert union(["char3"], "abcde") == (3, 5)
    assert union([], "abcde") == ()


@pytest.mark.parametrize("bad", ["chars", "random:", "random:x", ""])
def test_unknown_chunkings_are_refused_by_name(bad: str) -> None:
    with pytest.raises(ValueError, match="chunking"):
        chunkings.parse_list(bad) if bad == "" else chunkings.validate(bad)


def test_parse_list_keeps_order_and_drops_repeats() -> None:
    assert chunkings.parse_list("whole, split,whole,random:2") == ("whole", "split", "random:2")
