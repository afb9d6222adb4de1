"""Which tape tokenizer each template runs llama-server with, how faithful it is (native, renamed, emulated) and
why."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

from oracle.tape import CONTROL, USER_DEFINED, TapeVocab
from oracle.vocabs import Vocab, vocab_named, vocab_of_family

ALWAYS_SHOWN = re.compile(r"</?[a-z][a-z_:.]*>")
CONTROL_ANYWAY = frozenset({"<s>", "</s>", "<start_of_turn>", "<end_of_turn>"})


class Fidelity(str, Enum):
    """How close a tape's tokenizer is to the template's real one."""

    NATIVE = "native"
    RENAMED = "renamed"
    EMULATED = "emulated"


@dataclass(frozen=True)
class TemplateVocab:
    """A template's tape tokenizer, its fidelity and the reason for it."""

    tape: TapeVocab
    fidelity: Fidelity
    reason: str


def token_type(marker: str) -> int:
    """A marker's token type as the real converters set it: tag-like markers (`<think>`, `<tool_call>`) are
    user-defined (always shown); role, turn and bracket markers are control tokens."""
    if marker in CONTROL_ANYWAY or not ALWAYS_SHOWN.fullmatch(marker):
        return CONTROL
    return USER_DEFINED


def harness_vocab(entry: Any) -> Vocab:
    """The vocab the harness tokenizes this template's replies with (the token chunkings use the same)."""
    name = getattr(entry, "vocab", "")
    return vocab_named(name) if name else vocab_of_family(entry.family)


def template_vocab(entry: Any) -> TemplateVocab:
    """The tape tokenizer of a template: the harness's vocab file with its added markers, ending generation on
    the template's first end-of-turn text (else its eos, else the file's own eos)."""
    vocab = harness_vocab(entry)
    eog = next(iter(entry.end_of_turn), "") or entry.eos
    markers = tuple((marker, token_type(marker)) for marker in vocab.added)
    if eog and eog not in vocab.added:
        markers += ((eog, CONTROL),)
    tape = TapeVocab(vocab.file, markers, eog)
    if not vocab.exact:
        reason = f"no shipped tokenizer for {entry.family}: ggml-vocab-{vocab.file} plus its markers"
        return TemplateVocab(tape, Fidelity.EMULATED, reason)
    if vocab.added:
        reason = (f"ggml-vocab-{vocab.file} is the family's tokenizer; {', '.join(vocab.added)} take its reserved "
                  "slots as in the real checkpoints")
        return TemplateVocab(tape, Fidelity.RENAMED, reason)
    return TemplateVocab(tape, Fidelity.NATIVE, f"ggml-vocab-{vocab.file} holds every marker")
