"""What llama.cpp's differential analysis (common/chat-diff-analyzer.cpp) learns from a template by probe
renderings: the reasoning markers, with their exact whitespace. Syntax modules use `probe` for their own
markers."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from reply.chat import ChatBuilder
from reply.peg import Arena, Context, Parser, Status
from reply.rendering import render

USER_MSG = "U_USER_MSG Hello END_U"
ASSISTANT_MSG = "A_ASST_MSG I can help END_A"
THINKING = "REASON_PART I am thinking END_R"
SPACE = " \t\n\v\f\r"
GRANITE_THINKING = ("Write your thoughts between <think></think> and write your response between "
                    "<response></response>")
NEMOTRON_V2 = ("<SPECIAL_10>", "<SPECIAL_11>", "<SPECIAL_12>", "<TOOL_RESPONSE>")
FUNCTIONARY_V31 = 'set has_code_interpreter = tools | selectattr("type", "equalto", "code_interpreter") | list | length > 0'
SCOPE_FUNCTIONS = ("FFF_FIRST_FUN_F", "SSS_SECOND_FUN_S")
SCOPE_TOOLS = [{"type": "function", "function": {
    "name": name, "description": "Test function", "parameters": {
        "type": "object", "required": [],
        "properties": {"AA_ARG_FST_AA": {"type": "string"}, "BB_ARG_SND_BB": {"type": "string"}}}}}
    for name in SCOPE_FUNCTIONS]


def trim_whitespace(text: str) -> str:
    """C-locale whitespace trimmed from both ends."""
    return text.strip(SPACE)


@dataclass(frozen=True)
class Segment:
    """A run of text or a <…>/[…] marker."""

    marker: bool
    value: str


def segmentize(text: str) -> list[Segment]:
    """Split text into markers and text runs."""
    out: list[Segment] = []
    opener = ""
    border = 0
    for pos, c in enumerate(text):
        if not opener and c in "<[":
            if border < pos:
                out.append(Segment(False, text[border:pos]))
            border, opener = pos, c
        elif opener and ((opener == "<" and c == ">") or (opener == "[" and c == "]")):
            out.append(Segment(True, text[border:pos + 1]))
            border, opener = pos + 1, ""
    if border < len(text):
        out.append(Segment(False, text[border:]))
    return out


def prune_whitespace(segments: list[Segment]) -> list[Segment]:
    """Segments that are not whitespace only."""
    return [s for s in segments if trim_whitespace(s.value)]


@dataclass(frozen=True)
class Diff:
    """Common prefix, common suffix, and what differs on each side."""

    prefix: str
    suffix: str
    left: str
    right: str


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _common_suffix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def diff_split(left: str, right: str) -> Diff:
    """calculate_diff_split: a marker-aware diff of two renders."""
    ls, rs = segmentize(left), segmentize(right)
    if not ls:
        return Diff("", "", "", right)
    if not rs:
        return Diff("", "", left, "")
    l0, l1, r0, r1 = 0, len(ls) - 1, 0, len(rs) - 1
    prefix, suffix = "", ""
    left_done = right_done = False
    while l0 != l1 and r0 != r1:
        advanced = False
        if ls[l0] == rs[r0]:
            prefix += ls[l0].value
            l0 += 1
            r0 += 1
            advanced = True
        if ls[l1] == rs[r1]:
            suffix = ls[l1].value + suffix
            if l0 != l1:
                l1 -= 1
            else:
                left_done = True
            if r0 != r1:
                r1 -= 1
            else:
                right_done = True
            advanced = True
        if not advanced:
            break
    if l0 == l1 and r0 != r1:
        if ls[l0] == rs[r1]:
            suffix = rs[r1].value + suffix
            r1 -= 1
            left_done = True
        elif ls[l0] == rs[r0]:
            prefix += rs[r0].value
            r0 += 1
            left_done = True
    elif r0 == r1 and l0 != l1:
        if ls[l1] == rs[r0]:
            suffix = ls[l1].value + suffix
            l1 -= 1
            right_done = True
        elif ls[l0] == rs[r0]:
            prefix += ls[l0].value
            l0 += 1
            right_done = True
    elif l0 == l1 and r0 == r1 and ls[l0] == rs[r0] and ls[l0].marker:
        prefix += rs[r0].value
        left_done = right_done = True
    text_suffix = not ls[l1].marker and not rs[r1].marker
    text_prefix = not rs[r0].marker and not ls[l0].marker
    rem_left = "".join(s.value for s in ls[l0:(l1 if left_done else l1 + 1)])
    rem_right = "".join(s.value for s in rs[r0:(r1 if right_done else r1 + 1)])
    slen = _common_suffix(rem_left, rem_right) if text_suffix else 0
    plen = _common_prefix(rem_left[:len(rem_left) - slen], rem_right[:len(rem_right) - slen]) if text_prefix else 0
    prefix += rem_left[:plen]
    suffix = rem_left[len(rem_left) - slen:] + suffix
    d_left = rem_left[plen:len(rem_left) - slen]
    d_right = rem_right[plen:len(rem_right) - slen]
    if not d_left and not d_right:
        prefix, suffix = left, ""
    if not d_left and d_right and len(left) <= len(right) and right.startswith(left):
        return Diff(left, "", d_left, right[len(left):])
    return Diff(prefix, suffix, d_left, d_right)


def _tagged_anywhere(text: str, wrapped: bool) -> dict[str, str] | None:
    """The reasoning probe parsers of compare_reasoning_presence, tried at every start position."""
    b = ChatBuilder()
    marker = _marker(b)
    if wrapped:
        root = b.seq(b.tag("pre", b.seq(marker, b.space())), THINKING,
                     b.tag("post", b.seq(b.space(), marker, b.space())), b.rest())
    else:
        root = b.seq(THINKING, b.space(), b.optional(b.tag("post", b.seq(marker, b.space()))), b.rest())
    return _first_match(text, root)


@dataclass(frozen=True)
class Reasoning:
    """Reasoning markers as the analysis finds them ('' when none)."""

    start: str = ""
    end: str = ""

    @property
    def found(self) -> bool:
        """Whether the template has reasoning."""
        return bool(self.end) or bool(self.start)


def _apply(source: str, bos: str, eos: str, messages: list[dict[str, Any]], gp: bool, thinking: bool,
           tools: list[dict[str, Any]] | None = None) -> str | None:
    try:
        return render(source, bos=bos, eos=eos, messages=messages, tools=tools or [], add_generation_prompt=gp,
                      enable_thinking=thinking, extra={"enable_thinking": thinking})
    except Exception:  # noqa: BLE001 - a template may raise anything; the probe then fails (None)
        return None


@lru_cache(maxsize=128)
def analyze_reasoning(source: str, bos: str, eos: str) -> Reasoning:
    """compare_reasoning_presence then compare_thinking_enabled, then the template workarounds."""
    start, end = "", ""
    user = {"role": "user", "content": USER_MSG}
    plain = {"role": "assistant", "content": ASSISTANT_MSG}
    thought = {"role": "assistant", "content": ASSISTANT_MSG, "reasoning_content": THINKING}
    out_a = _apply(source, bos, eos, [user, plain], False, True)
    out_b = _apply(source, bos, eos, [user, thought], False, True)
    if out_a is not None and out_b is not None and THINKING in diff_split(out_a, out_b).right:
        tags = _tagged_anywhere(out_b, wrapped=True)
        if tags is None:
            tags = _tagged_anywhere(out_b, wrapped=False)
        if tags is not None:
            if tags.get("pre") and tags.get("post"):
                start, end = tags["pre"], tags["post"]
            elif tags.get("post"):
                end = tags["post"]
    off = _apply(source, bos, eos, [user], True, False)
    on = _apply(source, bos, eos, [user], True, True)
    if off is not None and on is not None:
        start, end = _thinking_enabled(off, on, start, end)
    if "tool_calls" in source:
        start, end = _reasoning_scope(source, bos, eos, start, end)
    if ("content.split('</think>')" in source and "reasoning_content" not in source
            and "<SPECIAL_12>" not in source and not (start or end)):
        start, end = "<think>", "</think>"
    if "laguna_glm_thinking" in source:
        start, end = trim_whitespace(start), trim_whitespace(end)
    if all(marker in source for marker in NEMOTRON_V2):
        start, end = "<think>\n", "</think>"
    if GRANITE_THINKING in source:
        start, end = "<think>", "</think>"
    return Reasoning(start, end)


@dataclass(frozen=True)
class Content:
    """Markers the analysis finds around content; `always` when every content is wrapped in them
    (llama.cpp's content_mode ALWAYS_WRAPPED with both markers)."""

    start: str = ""
    end: str = ""
    wrapped: bool = False

    @property
    def always(self) -> bool:
        """Content is always wrapped in start … end."""
        return self.wrapped and bool(self.start) and bool(self.end)


UNWRAPPED = Content()
COHERE_WRAP = ("<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>")


@lru_cache(maxsize=128)
def analyze_content(source: str, bos: str, eos: str) -> Content:
    """analyze_content: markers the template writes around an answer but not around a call or a thought,
    then the template workarounds (Granite 3.3, Command R+, Functionary 3.1, Nemotron Nano v2)."""
    content = _content_markers(source, bos, eos, analyze_reasoning(source, bos, eos))
    if GRANITE_THINKING in source:
        content = Content("<response>", "</response>", wrapped=False)
    if all(tag in source for tag in COHERE_WRAP) and not content.start:
        content = Content(*COHERE_WRAP, wrapped=True)
    if FUNCTIONARY_V31 in source:
        content = Content(content.start, "", wrapped=False)
    if all(marker in source for marker in NEMOTRON_V2):
        content = UNWRAPPED
    return content


def _content_markers(source: str, bos: str, eos: str, reasoning: Reasoning) -> Content:
    user = {"role": "user", "content": USER_MSG}
    plain = {"role": "assistant", "content": ASSISTANT_MSG}
    call = {"id": "call00001", "type": "function", "function": {"name": "test_func", "arguments": {"arg1": "value1"}}}
    with_call = {"role": "assistant", "content": "", "tool_calls": [call]}
    with_thought = {"role": "assistant", "content": "", "reasoning_content": THINKING}
    base = _apply(source, bos, eos, [user, plain], False, True, SCOPE_TOOLS)
    called = _apply(source, bos, eos, [user, with_call], False, True, SCOPE_TOOLS)
    thought = _apply(source, bos, eos, [user, with_thought], False, True, SCOPE_TOOLS)
    if base is None or called is None or thought is None:
        return UNWRAPPED
    diff_tools, diff_reasoning = diff_split(base, called), diff_split(base, thought)
    if trim_whitespace(diff_tools.left) == ASSISTANT_MSG:
        b = ChatBuilder()
        only_text = b.seq(b.space(), diff_reasoning.left, b.space(), b.optional(_marker(b)), b.space(), b.end())
        if Arena(only_text).parse(Context(diff_reasoning.left, lenient=False)).status is Status.SUCCESS:
            return UNWRAPPED
        if reasoning.found and reasoning.end:
            b = ChatBuilder()
            after_thought = b.seq(reasoning.end, b.space(), ASSISTANT_MSG)
            if _first_match(diff_reasoning.left, after_thought) is not None:
                return UNWRAPPED
    rdiff = diff_reasoning.left
    if reasoning.end and reasoning.end in rdiff:
        rdiff = rdiff[rdiff.index(reasoning.end) + len(reasoning.end):]
    pure = rdiff if len(rdiff) > len(diff_tools.left) else diff_tools.left
    b = ChatBuilder()
    marker = _marker(b)
    wrapped = b.seq(b.tag("pre", b.seq(marker, b.space())), ASSISTANT_MSG, b.space(),
                    b.tag("post", b.seq(marker, b.space())), b.rest())
    tags = _first_match(pure, wrapped) or {}
    start, end = tags.get("pre", ""), tags.get("post", "")
    return Content(start, end, wrapped=bool(start or end))


def _marker(b: ChatBuilder) -> Parser:
    """A <…> or […] marker."""
    return b.choice(b.seq("<", b.until(">"), ">"), b.seq("[", b.until("]"), "]"))


def _scope_call() -> dict[str, Any]:
    """The assistant turn of compare_reasoning_scope: reasoning and one call, no content."""
    call = {"id": "call00001", "type": "function",
            "function": {"name": SCOPE_FUNCTIONS[0], "arguments": {"AA_ARG_FST_AA": "VVVV", "BB_ARG_SND_BB": "XXXX"}}}
    return {"role": "assistant", "content": None, "reasoning_content": THINKING, "tool_calls": [call]}


def _reasoning_scope(source: str, bos: str, eos: str, start: str, end: str) -> tuple[str, str]:
    """compare_reasoning_scope: reasoning the template writes only beside tool calls (TOOLS_ONLY)."""
    user = {"role": "user", "content": USER_MSG}
    thought = {"role": "assistant", "content": ASSISTANT_MSG, "reasoning_content": THINKING}
    out_a = _apply(source, bos, eos, [user, thought], False, True, SCOPE_TOOLS)
    out_b = _apply(source, bos, eos, [user, _scope_call()], False, True, SCOPE_TOOLS)
    if out_a is None or out_b is None or THINKING in out_a or THINKING not in out_b:
        return start, end
    b = ChatBuilder()
    marker = _marker(b)
    wrapped = b.seq(b.tag("pre", b.seq(marker, b.space())), THINKING, b.space(),
                    b.tag("post", b.seq(marker, b.space())))
    tags = _first_match(out_b, wrapped)
    if tags is not None:
        return tags.get("pre", ""), tags.get("post", "")
    b = ChatBuilder()
    marker = _marker(b)
    tags = _first_match(out_b, b.seq(THINKING, b.space(), b.optional(b.tag("post", b.seq(marker, b.space())))))
    if tags is not None:
        return start, tags.get("post", "")
    return "", ""


def _first_match(text: str, root: Parser) -> dict[str, str] | None:
    """The tags of the first position where root matches (parse_anywhere_and_extract)."""
    arena = Arena(root)
    for pos in range(len(text)):
        result = arena.at(root, Context(text, lenient=False), pos)
        if result.status is Status.SUCCESS:
            tags: dict[str, str] = {}
            stack = list(result.nodes)
            while stack:
                node = stack.pop(0)
                if node.tag:
                    tags[node.tag] = text[node.start:node.end]
                stack[0:0] = list(node.children)
            return tags
    return None


def _thinking_enabled(out_a: str, out_b: str, start: str, end: str) -> tuple[str, str]:
    diff = diff_split(out_a, out_b)
    left, right = trim_whitespace(diff.left), trim_whitespace(diff.right)
    if not left and diff.right:
        if right and out_b.endswith(right) and not start:
            start = diff.right
    elif not right and diff.left:
        if left and out_a.endswith(left) and not end:
            seg = prune_whitespace(segmentize(out_a))
            if len(seg) >= 2 and seg[-1].value == left and seg[-2].marker:
                start = seg[-2].value
            end = diff.left
    elif left and right:
        for base, extended in ((out_b, out_a), (out_a, out_b)):
            anchor = base[-64:]
            pos = extended.rfind(anchor)
            if pos < 0 or pos + len(anchor) >= len(extended):
                continue
            extra = trim_whitespace(extended[pos + len(anchor):])
            if not extra:
                continue
            seg = prune_whitespace(segmentize(extra))
            if len(seg) == 2 and seg[0].marker and seg[1].marker:
                start = start or seg[0].value
                end = end or seg[1].value
                break
    return start, end
