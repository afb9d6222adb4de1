"""The problems_agree check: the problems a parser reports beside a finished reading agree with that reading and
the request (for a parser that reports problems at all)."""

from __future__ import annotations

from dataclasses import dataclass

from chatparity.model import PROBLEMS, Message, Reading, Rejection, Session
from harness.compare import compare, parsed_object

MESSAGE_PROBLEMS = ("no_action", "multiple_actions", "prose_before_action")
REJECTION_PROBLEMS = ("unknown_action",)
REFUSAL_CAUSES = ("text_after_action", "unknown_action", "bad_args")
FAULTS = (*REFUSAL_CAUSES, "cut_off", "unclosed_think")


@dataclass(frozen=True)
class Asked:
    """What the request lets a reply do: call tools at all, and call several at once."""

    calls: bool
    parallel: bool

    @classmethod
    def of(cls, session: Session) -> Asked:
        """What a session's request allows."""
        return cls(bool(session.tools) and session.tool_choice != "none", session.parallel_tool_calls)


def message_problems(
    reading: Message, asked: Asked, reported: tuple[str, ...]
) -> dict[str, tuple[bool, str]]:
    """For each problem a message decides by itself: whether it should be reported, and why."""
    calls = reading.tool_calls
    return {
        "no_action": (
            asked.calls and not calls and "cut_off" not in reported,
            "tools may be called, none is and the reply is not cut off",
        ),
        "multiple_actions": (len(calls) > 1 and not asked.parallel, f"{len(calls)} calls without parallel calls"),
        "prose_before_action": (bool(calls) and bool(reading.content.strip()), "content beside calls"),
    }


def problems_break(
    reading: Reading,
    asked: Asked,
    meant: tuple[str, ...] | None = (),
    partial: bool = False,
    truth: Message | None = None,
) -> str | None:
    """Where the problems reported beside a whole reading (llama.cpp's reading, as the parser matched it) of
    a finished or cut (`partial`) reply contradict it or the problems the reply was written to show (`meant`):
    a name outside the vocabulary; a rejection (or the empty message llama.cpp reads a cut reply it cannot
    parse as, reported with bad_syntax) without bad_syntax, with a problem only a message has, or naming
    another cause than the meant one; a message without a meant problem it shows (see written_break), with
    bad_syntax or unknown_action, with no_action, multiple_actions or prose_before_action other than its
    calls, content and the request make them, with bad_args while every call's arguments are a JSON
    object, or with a fault (a cause of refusal, cut_off, unclosed_think) while a finished reply written for
    its `truth`, with no problem meant, reads as exactly that message. Where the meant problems are not
    stated (`meant` None: a corpus file line without them), what depends on them is not judged: the meant
    cause of a rejection, what the reply shows of them, a fault on a reply read as its truth, and
    unknown_action on an accepted reading."""
    reported = reading.problems or ()
    unknown = [problem for problem in reported if problem not in PROBLEMS]
    if unknown:
        return f"problems_agree: {unknown[0]!r} is not a problem ({', '.join(PROBLEMS)})"
    if isinstance(reading, Rejection) or (partial and "bad_syntax" in reported and reading == Message()):
        if "bad_syntax" not in reported:
            return f"problems_agree: a rejection reported without bad_syntax ({', '.join(reported) or 'none'})"
        wrong = [problem for problem in MESSAGE_PROBLEMS if problem in reported]
        if wrong:
            return f"problems_agree: a rejection reported with {wrong[0]}"
        return None if meant is None else cause_break(reported, asked, meant)
    if meant is not None:
        found = written_break(reading, reported, meant, partial)
        found = found or truth_break(reading, reported, meant, partial, truth)
        if found:
            return found
    refused_only = ("bad_syntax", *REJECTION_PROBLEMS) if meant is not None else ("bad_syntax",)
    for problem in refused_only:
        if problem in reported:
            return f"problems_agree: an accepted reading reported with {problem}"
    for problem, (due, why) in message_problems(reading, asked, reported).items():
        if due != (problem in reported):
            return f"problems_agree: {problem} {'missing' if due else 'reported'} (meant when {why})"
    if "bad_args" in reported and all(isinstance(parsed_object(call.arguments), dict) for call in reading.tool_calls):
        return "problems_agree: bad_args reported, every call's arguments are a JSON object"
    return None


def cause_break(reported: tuple[str, ...], asked: Asked, meant: tuple[str, ...]) -> str | None:
    """Where a rejection of a reply written with a cause of refusal (`meant`: an unknown tool, broken
    arguments), under a request that lets it call tools, names causes without that one (naming none is not
    judged; a reply may be refused for more than its written cause, so others may be named beside it)."""
    causes = [problem for problem in REFUSAL_CAUSES if problem in reported]
    missing = [problem for problem in REFUSAL_CAUSES if problem in meant and problem not in causes]
    if not asked.calls or not causes or not missing:
        return None
    return f"problems_agree: a rejection reported with {', '.join(causes)} (meant {missing[0]})"


def truth_break(
    reading: Message, reported: tuple[str, ...], meant: tuple[str, ...], partial: bool, truth: Message | None
) -> str | None:
    """Where a finished reply written for its `truth`, with no problem meant, reads as exactly that message
    and a fault (a cause of refusal, cut_off, unclosed_think) is reported beside it."""
    faults = [problem for problem in FAULTS if problem in reported]
    if faults and truth is not None and not partial and not meant and compare(truth, reading) is None:
        return f"problems_agree: {faults[0]} reported, the reply reads as exactly the message it was written for"
    return None


def written_break(
    reading: Message, reported: tuple[str, ...], meant: tuple[str, ...], partial: bool
) -> str | None:
    """Where a message does not report a problem its reply was written to show while the reading shows it:
    an unclosed thought read as reasoning reports unclosed_think (and cut_off, when the reply was cut inside
    it); a reply cut inside a call's arguments, read with that call, reports cut_off."""
    due = []
    if "unclosed_think" in meant and reading.reasoning_content:
        due += ["unclosed_think", "cut_off"] if partial else ["unclosed_think"]
    if "cut_off" in meant and reading.tool_calls:
        due.append("cut_off")
    missing = [problem for problem in due if problem not in reported]
    if not missing:
        return None
    shown = "the reply was written or cut to show it and reads so"
    return f"problems_agree: {missing[0]} missing (meant: {shown})"
