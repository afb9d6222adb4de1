"""Chunkings: rules turning a reply into the chunks a streaming parser is fed."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate

FIXED = ("whole", "char", "char2", "char3", "split", "tokens", "special")
RANDOM_PREFIX = "random:"
RANDOM_MAX_CHUNK = 8
TOKENS_PREFIX = "tokens:"

Stream = tuple[str, ...]


@dataclass(frozen=True)
class TokenPieces:
    """A reply as a server streams its tokens: the text each token sends (a token that ends inside a UTF-8
    sequence sends nothing; its bytes go with the token that completes the sequence), and whether it is a
    special token."""

    texts: tuple[str, ...]
    special: tuple[bool, ...]


def validate(name: str) -> str:
    """The chunking name itself, or a ValueError saying what a valid one looks like."""
    if name in FIXED:
        return name
    if name.startswith(RANDOM_PREFIX) and name[len(RANDOM_PREFIX) :].isdigit():
        return name
    if name.startswith(TOKENS_PREFIX):
        size, _, seed = name[len(TOKENS_PREFIX) :].partition(":")
        if size.isdigit() and int(size) >= 1 and seed.isdigit():
            return name
    raise ValueError(
        f"unknown chunking {name!r}: use one of {', '.join(FIXED)}, random:SEED or tokens:K:SEED "
        "(SEED an integer, K an integer from 1)"
    )


def needs_tokens(name: str) -> bool:
    """Whether the chunking cuts at the reply's tokens (so needs its tokenization)."""
    return name in ("tokens", "special") or name.startswith(TOKENS_PREFIX)


def makes_streams(name: str, text: str) -> bool:
    """Whether the chunking streams `text` at all (without tokenizing it)."""
    validate(name)
    if name == "whole" or not text:
        return False
    return len(text) > 1 if name == "split" else True


def token_pieces(text: str, pieces: Sequence[bytes], special: Sequence[bool]) -> TokenPieces:
    """The streamed pieces of `text` from its tokens' bytes; a space a tokenizer inserts before a token (the
    SentencePiece space prefix) that `text` lacks is dropped, and whitespace it strips next to a special token
    (Phi-3's `rstrip`/`lstrip` tokens) is a piece of its own. A ValueError when the pieces do not spell `text`."""
    data = text.encode("utf-8", "surrogatepass")
    position = 0
    texts: list[str] = []
    flags: list[bool] = []
    held = b""
    held_special = False
    after_special = False
    for index, (piece, is_special) in enumerate(zip(pieces, special, strict=True)):
        stripped = stripped_whitespace(data, position, piece) if after_special or is_special else b""
        if stripped:
            texts.append(stripped.decode("ascii"))
            flags.append(False)
            position += len(stripped)
        if (
            not data.startswith(piece, position)
            and piece.startswith(b" ")
            and data.startswith(piece[1:], position)
        ):
            piece = piece[1:]
        if not data.startswith(piece, position):
            raise ValueError(
                f"token {index} ({piece!r}) does not spell the text at byte {position} ({data[position : position + 16]!r})"
            )
        position += len(piece)
        held += piece
        held_special = held_special or is_special
        after_special = is_special
        if held and (position == len(data) or (data[position] & 0xC0) != 0x80):
            texts.append(held.decode("utf-8", "surrogatepass"))
            flags.append(held_special)
            held, held_special = b"", False
    if after_special and not held and data[position:].isspace():
        texts.append(data[position:].decode("ascii"))
        flags.append(False)
        position = len(data)
    if position != len(data):
        raise ValueError(f"the tokens spell {position} of the text's {len(data)} bytes")
    return TokenPieces(tuple(texts), tuple(flags))


def stripped_whitespace(data: bytes, position: int, piece: bytes) -> bytes:
    """The whitespace at `position` a tokenizer stripped before `piece` (b'' when the piece spells the text there,
    with or without a space prefix, or when no whitespace run explains it)."""
    if data.startswith(piece, position) or (piece.startswith(b" ") and data.startswith(piece[1:], position)):
        return b""
    end = position
    while end < len(data) and data[end : end + 1].isspace():
        end += 1
    if end == position:
        return b""
    spelled = data.startswith(piece, end) or (piece.startswith(b" ") and data.startswith(piece[1:], end))
    return data[position:end] if spelled else b""


def special_cuts(tokens: TokenPieces) -> Stream:
    """The text cut only before and after each special token."""
    chunks: list[str] = []
    run = ""
    for piece, is_special in zip(tokens.texts, tokens.special):
        if is_special:
            chunks += [run, piece] if run else [piece]
            run = ""
        else:
            run += piece
    return tuple(chunks + [run] if run else chunks)


def token_groups(tokens: TokenPieces, size: int, seed: int) -> Stream:
    """The tokens in groups of 1..`size` drawn from a generator seeded with `seed`."""
    rng = random.Random(seed)
    chunks: list[str] = []
    start = 0
    while start < len(tokens.texts):
        count = rng.randint(1, size)
        chunks.append("".join(tokens.texts[start : start + count]))
        start += count
    return tuple(chunks)


def parse_list(text: str) -> tuple[str, ...]:
    """Chunking names from a comma-separated list, validated, in the order given, without repeats."""
    names = [validate(part.strip()) for part in text.split(",") if part.strip()]
    if not names:
        raise ValueError("no chunking named: give a comma-separated list such as whole,char,split")
    return tuple(dict.fromkeys(names))


def fixed_size(text: str, size: int) -> Stream:
    """The text in chunks of `size` code points (the last one shorter)."""
    return tuple(text[start : start + size] for start in range(0, len(text), size))


def two_way(text: str, cut: int) -> Stream:
    """The text split in two at code point `cut`."""
    return (text[:cut], text[cut:])


def random_sizes(text: str, seed: int) -> Stream:
    """The text in chunks of 1..RANDOM_MAX_CHUNK code points drawn from a generator seeded with `seed`."""
    rng = random.Random(seed)
    chunks: list[str] = []
    start = 0
    while start < len(text):
        size = rng.randint(1, RANDOM_MAX_CHUNK)
        chunks.append(text[start : start + size])
        start += size
    return tuple(chunks)


def streams(name: str, text: str, tokens: TokenPieces | None = None) -> list[Stream]:
    """Every stream the chunking makes of `text`: none for `whole`, one per cut point for `split`; the token
    chunkings cut at `tokens`, the text's token pieces."""
    validate(name)
    if name == "whole" or not text:
        return []
    if needs_tokens(name):
        if tokens is None:
            raise ValueError(f"the chunking {name!r} needs the text's tokens")
        if "".join(tokens.texts) != text:
            raise ValueError(f"the tokens given for the chunking {name!r} do not spell the text")
        if name == "tokens":
            return [tokens.texts]
        if name == "special":
            return [special_cuts(tokens)]
        size, seed = name[len(TOKENS_PREFIX) :].split(":")
        return [token_groups(tokens, int(size), int(seed))]
    if name == "char":
        return [fixed_size(text, 1)]
    if name == "char2":
        return [fixed_size(text, 2)]
    if name == "char3":
        return [fixed_size(text, 3)]
    if name == "split":
        return [two_way(text, cut) for cut in range(1, len(text))]
    return [random_sizes(text, int(name[len(RANDOM_PREFIX) :]))]


def boundaries(stream: Sequence[str]) -> tuple[int, ...]:
    """The code-point offset where each chunk of a stream ends."""
    return tuple(accumulate(len(chunk) for chunk in stream))


def all_boundaries(ends: Iterable[Sequence[int]]) -> tuple[int, ...]:
    """Every prefix length any of the streams (each given by its `boundaries`) feeds, sorted: one oracle
    partial read serves them all."""
    found: set[int] = set()
    for stream in ends:
        found.update(stream)
    return tuple(sorted(found))
