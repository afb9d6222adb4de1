"""Modes and sessions: deterministic, counted by profile, selectable, refused when changed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chatparity.model import REASONING_FORMAT, REASONING_FORMATS, ToolMode
from corpora.conversations import CALL_IDS, Conversation
from corpora.planning import TYPED_TOOL_MODES, PlanError, checked_source, first_thinking_template, plan
from corpora.tools import STANDARD_TOOLS
from templates.index import load_index, template_source


def expected_count(profile: str) -> int:
    """Sessions per profile from the index: thinking × kwargs sets × 5 tool modes × conversations, the
    typed-tools session in calling modes without kwargs, enable_thinking switched through the kwargs of a
    template with thinking tags that reads it, and think/auto in each other reasoning format for a template that
    thinks (in quick, the first of its family)."""
    total = 0
    standard = len(Conversation) - 1
    for name, entry in load_index().items():
        switched = bool(entry.think_start and entry.think_end) and "enable_thinking" in template_source(name)
        if profile == "full":
            settings = 1 + sum(len(values) for _, values in entry.kwargs)
            total += 2 * settings * len(ToolMode) * standard + 2 * len(TYPED_TOOL_MODES) + 2 * standard * switched
        else:
            total += 2 * (1 + len(entry.kwargs)) * len(ToolMode) + (standard - 1) + 1 + switched
        formats = len(REASONING_FORMATS) - 1
        if entry.think_start and (profile == "full" or name == first_thinking_template(entry.family)):
            total += formats * (standard if profile == "full" else 1)
    return total


@pytest.mark.parametrize("profile", ["quick", "full"])
def test_session_counts_and_unique_ids(profile: str) -> None:
    planned = plan(profile)
    assert len(planned) == expected_count(profile)
    assert len({item.session.id for item in planned}) == len(planned)
    assert {item.session.template for item in planned} == set(load_index())


def test_planning_is_deterministic() -> None:
    first = plan("quick", templates="Qwen*")
    second = plan("quick", templates="Qwen*")
    assert [item.session.id for item in first] == [item.session.id for item in second]
    assert [item.session.prompt for item in first] == [item.session.prompt for item in second]


def test_modes_cover_thinking_kwargs_the_five_tool_modes_and_the_reasoning_formats() -> None:
    labels = {item.session.mode.label for item in plan("full", templates="openai-gpt-oss-120b.jinja")}
    for thinking in ("think", "nothink"):
        for tools in ToolMode:
            assert f"{thinking}/{tools.value}" in labels
            assert f'{thinking}/{tools.value}/reasoning_effort="low"' in labels
            assert f'{thinking}/{tools.value}/reasoning_effort="high"' in labels
    formats = {f"think/auto/reasoning_format={name}" for name in REASONING_FORMATS if name != REASONING_FORMAT}
    assert formats <= labels
    assert len(labels) == 2 * 3 * 5 + len(formats)


def test_selection_by_glob_family_and_mode() -> None:
    glm = plan("quick", family="GLM-4.6")
    assert {item.session.template for item in glm} == {"GLM-4.6.jinja"}
    auto = plan("quick", templates="Qwen-*", mode="think/auto")
    assert {item.session.mode.label for item in auto} == {"think/auto"}
    assert {item.session.conversation for item in auto} == {
        conversation.value for conversation in Conversation if conversation is not Conversation.TYPED_TOOLS
    }
    parallel = plan("quick", templates="Qwen-*", mode="think/parallel")
    assert {item.session.conversation for item in parallel} == {"single", "typed_tools"}
    with pytest.raises(PlanError, match="no template matches"):
        plan("quick", templates="no-such-*")
    with pytest.raises(PlanError, match="unknown profile"):
        plan("huge")


def test_tools_are_offered_as_the_mode_says() -> None:
    by_mode = {
        item.session.mode.tools: item.session
        for item in plan("quick", templates="Qwen-Qwen3-0.6B.jinja", mode="think/*")
        if item.session.conversation == "single"
    }
    assert by_mode[ToolMode.NONE].tools == []
    assert by_mode[ToolMode.CHOICE_NONE].tools == list(STANDARD_TOOLS)
    assert by_mode[ToolMode.CHOICE_NONE].tool_choice == "none"
    assert by_mode[ToolMode.PARALLEL].parallel_tool_calls
    assert (
        "get_weather" in by_mode[ToolMode.AUTO].prompt and "get_weather" not in by_mode[ToolMode.NONE].prompt
    )


def test_jinja_failures_are_kept_not_raised() -> None:
    planned = plan("quick", templates="CohereForAI-c4ai-command-r-plus-tool_use.jinja", mode="*/auto")
    assert planned and all(item.session.prompt is None for item in planned)
    assert all(item.jinja_error.startswith("UndefinedError:") for item in planned)


def test_generation_prompt_opening_a_thought_is_flagged() -> None:
    flags = {
        (item.session.mode.thinking, item.opens_thought)
        for item in plan("quick", templates="Qwen-QwQ-32B.jinja", mode="*/auto")
    }
    assert flags == {(True, True), (False, False)}


def test_call_ids_suit_mistral_templates() -> None:
    assert all(len(call_id) == 9 and call_id.isalnum() for call_id in CALL_IDS)
    nemo = plan("quick", templates="mistralai-Mistral-Nemo-Instruct-2407.jinja", mode="think/auto")
    after_tool = next(item for item in nemo if item.session.conversation == "after_tool")
    assert after_tool.jinja_error == "" and CALL_IDS[0] in after_tool.session.prompt


def test_a_changed_template_is_refused() -> None:
    entry = load_index()["GLM-4.6.jinja"]
    assert checked_source(entry, None)
    with pytest.raises(PlanError, match="GLM-4.6.jinja .* does not match templates/index.json"):
        checked_source(replace(entry, sha256="0" * 64), None)


def test_every_reasoning_format_is_planned_for_every_thinking_family_in_quick() -> None:
    planned = plan("quick")
    thinking_families = {entry.family for entry in load_index().values() if entry.think_start}
    for name in REASONING_FORMATS:
        found = [item.session for item in planned if item.session.reasoning_format == name]
        assert {session.mode.label.endswith(f"reasoning_format={name}") for session in found} == {
            name != REASONING_FORMAT}
        assert {load_index()[session.template].family for session in found} >= thinking_families
        assert all(session.render_request()["reasoning_format"] == name for session in found)
