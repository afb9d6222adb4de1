"""The tape model: a 1-layer llama GGUF that copies the prompt token exactly `distance` positions back."""

from __future__ import annotations

import hashlib
import importlib
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from templates.pins import resolve_version
from templates.upstream import cache_lock, ensure_source, version_dir

WIDTH = 64
FFN = 32
COPY = 32
FREQ_BASE = 100.0
CONTEXT = 8192
DISTANCE = 640
GAIN = 20.0
OUTPUT_SCALE = 16.0
SKIPPED_KEYS = ("tokenizer.chat_template",)
NORMAL, CONTROL, USER_DEFINED = 1, 3, 4


@dataclass(frozen=True)
class TapeVocab:
    """A tape's tokenizer: the sdist's vocab GGUF `file`, `markers` put in its reserved slots (else appended)
    with their token types, and the end-of-generation text its eos id points at ('' keeps the file's)."""

    file: str
    markers: tuple[tuple[str, int], ...]
    eog: str

    def key(self) -> str:
        """A short hash of everything the tape depends on (this module's source included)."""
        digest = hashlib.sha256(Path(__file__).read_bytes())
        digest.update(repr((self.file, self.markers, self.eog, DISTANCE)).encode())
        return digest.hexdigest()[:16]


def gguf_module(version: str) -> ModuleType:
    """gguf-py as the pinned llama.cpp source ships it."""
    path = str(ensure_source(version) / "gguf-py")
    if path not in sys.path:
        sys.path.insert(0, path)
    return importlib.import_module("gguf")


def tape_path(vocab: TapeVocab, version: str | None = None) -> Path:
    """Where the tape of a vocab is cached (VERSION/tapes/FILE-KEY.gguf)."""
    return version_dir(resolve_version(version)) / "tapes" / f"{vocab.file}-{vocab.key()}.gguf"


def ensure_tape(vocab: TapeVocab, version: str | None = None) -> Path:
    """The tape of a vocab, written on first use."""
    version = resolve_version(version)
    path = tape_path(vocab, version)
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with cache_lock(f"tape-{path.stem}"):
        if not path.exists():
            partial = path.with_suffix(".partial")
            write_tape(vocab, version, partial)
            partial.replace(path)
    return path


def is_slot(text: str) -> bool:
    """Whether a token is a reserved slot a real checkpoint renames (Qwen2's [PADn], Llama 3's reserved)."""
    return (text.startswith("[PAD") and text.endswith("]")) or text.startswith("<|reserved_special_token_")


def tokenizer_fields(gguf: ModuleType, vocab: TapeVocab, source: Path) -> dict[str, tuple[Any, Any, Any]]:
    """The vocab file's tokenizer keys (value, type, subtype) with the markers placed and the eos id set."""
    reader = gguf.GGUFReader(str(source))
    fields: dict[str, tuple[Any, Any, Any]] = {}
    for key, field in reader.fields.items():
        if key.startswith("tokenizer.") and not key.startswith(SKIPPED_KEYS):
            sub = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
            fields[key] = (field.contents(), field.types[0], sub)
    tokens: list[str] = fields["tokenizer.ggml.tokens"][0]
    types: list[int] = fields["tokenizer.ggml.token_type"][0]
    scores = fields.get("tokenizer.ggml.scores", (None,))[0]
    index = {text: position for position, text in enumerate(tokens)}
    slots = iter([position for position, text in enumerate(tokens) if is_slot(text)])
    for marker, kind in vocab.markers:
        if marker in index:
            continue
        position = next(slots, None)
        if position is None:
            position = len(tokens)
            tokens.append(marker)
            types.append(kind)
            if scores is not None:
                scores.append(0.0)
        else:
            tokens[position], types[position] = marker, kind
        index[marker] = position
    array, string = gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.STRING
    fields["tokenizer.ggml.tokens"] = (tokens, array, string)
    fields["tokenizer.ggml.token_type"] = (types, array, gguf.GGUFValueType.INT32)
    if scores is not None:
        fields["tokenizer.ggml.scores"] = (scores, array, gguf.GGUFValueType.FLOAT32)
    if vocab.eog:
        fields["tokenizer.ggml.eos_token_id"] = (index[vocab.eog], gguf.GGUFValueType.UINT32, None)
    if fields["tokenizer.ggml.model"][0] == "llama":
        fields["tokenizer.ggml.add_space_prefix"] = (False, gguf.GGUFValueType.BOOL, None)
    return fields


def weights(size: int, distance: int) -> dict[str, np.ndarray]:
    """The tensors of a tape over `size` tokens (numpy shapes are (out, in))."""
    bits = max(1, math.ceil(math.log2(size)))
    ids = np.arange(size)[:, None]
    code = ((ids >> np.arange(bits)[None, :]) & 1).astype(np.float32) * 2 - 1
    embedding = np.zeros((size, WIDTH), np.float32)
    embedding[:, :bits] = code
    embedding[:, bits] = 1.0
    scale = math.sqrt(WIDTH / (bits + 1))
    gain = GAIN / scale
    theta = FREQ_BASE ** (-2 * np.arange(WIDTH // 2) / WIDTH)
    query = np.zeros((WIDTH, WIDTH), np.float32)
    key = np.zeros((WIDTH, WIDTH), np.float32)
    query[0::2, bits] = gain
    key[0::2, bits] = gain * np.cos(distance * theta)
    key[1::2, bits] = gain * np.sin(distance * theta)
    value = np.zeros((WIDTH, WIDTH), np.float32)
    value[np.arange(bits), np.arange(bits)] = 1 / scale
    out = np.zeros((WIDTH, WIDTH), np.float32)
    out[COPY + np.arange(bits), np.arange(bits)] = 1.0
    norm = np.zeros(WIDTH, np.float32)
    norm[COPY : COPY + bits] = 1.0
    head = np.zeros((size, WIDTH), np.float32)
    head[:, COPY : COPY + bits] = OUTPUT_SCALE * code
    return {
        "token_embd.weight": embedding.astype(np.float16),
        "blk.0.attn_norm.weight": np.ones(WIDTH, np.float32),
        "blk.0.attn_q.weight": query,
        "blk.0.attn_k.weight": key,
        "blk.0.attn_v.weight": value,
        "blk.0.attn_output.weight": out,
        "blk.0.ffn_norm.weight": np.ones(WIDTH, np.float32),
        "blk.0.ffn_gate.weight": np.zeros((FFN, WIDTH), np.float32),
        "blk.0.ffn_up.weight": np.zeros((FFN, WIDTH), np.float32),
        "blk.0.ffn_down.weight": np.zeros((WIDTH, FFN), np.float32),
        "output_norm.weight": norm,
        "output.weight": head.astype(np.float16),
    }


def attention_gap(distance: int, span: int = 2 * CONTEXT) -> float:
    """How far the score of the key `distance` back exceeds every other key's within `span` (in nats)."""
    theta = FREQ_BASE ** (-2 * np.arange(WIDTH // 2) / WIDTH)
    offsets = np.arange(-span, span + 1)
    offsets = offsets[offsets != 0]
    scores = (GAIN**2 / math.sqrt(WIDTH)) * np.cos(offsets[:, None] * theta[None, :]).sum(axis=1)
    return float((GAIN**2 / math.sqrt(WIDTH)) * len(theta) - scores.max())


def write_tape(vocab: TapeVocab, version: str, path: Path) -> None:
    """Write the tape GGUF of a vocab to `path`."""
    gguf = gguf_module(version)
    source = ensure_source(version) / "models" / f"ggml-vocab-{vocab.file}.gguf"
    fields = tokenizer_fields(gguf, vocab, source)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(f"chatparity tape {vocab.file} d{DISTANCE}")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(WIDTH)
    writer.add_block_count(1)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(1)
    writer.add_head_count_kv(1)
    writer.add_rope_dimension_count(WIDTH)
    writer.add_rope_freq_base(FREQ_BASE)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_vocab_size(len(fields["tokenizer.ggml.tokens"][0]))
    for key, (value, kind, sub) in fields.items():
        writer.add_key_value(key, value, kind, sub)
    for name, tensor in weights(len(fields["tokenizer.ggml.tokens"][0]), DISTANCE).items():
        writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
