"""Reproducers of a llama.cpp defect that run without chatparity: the llama-server request, and a case in the style
of llama.cpp's tests/test-chat.cpp (its helpers `read_file`, `assert_msg_equals`, `assert_equals`,
`build_grammar` and `match_string`), building the parser as llama-server does, with the model's bos and eos."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from reports.show import Request

TOOL_CHOICES = {"auto": "COMMON_CHAT_TOOL_CHOICE_AUTO", "required": "COMMON_CHAT_TOOL_CHOICE_REQUIRED",
                "none": "COMMON_CHAT_TOOL_CHOICE_NONE"}


def server_body(request: Request, stream: bool) -> dict[str, Any]:
    """The /v1/chat/completions body llama-server reads the reply under."""
    return {
        "messages": request.messages,
        "tools": request.tools,
        "tool_choice": request.tool_choice,
        "parallel_tool_calls": request.parallel_tool_calls,
        "chat_template_kwargs": {"enable_thinking": request.enable_thinking, **request.chat_template_kwargs},
        "reasoning_format": request.reasoning_format,
        "stream": stream,
    }


def body_json(body: dict[str, Any]) -> str:
    """A request body as JSON text, a line per setting, message and tool."""
    lines = []
    for key, value in body.items():
        if isinstance(value, list) and value:
            items = ",\n".join(f"  {json.dumps(item, ensure_ascii=False)}" for item in value)
            lines.append(f" {json.dumps(key)}: [\n{items}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(lines) + "\n}"


def server_command(template: str, bos: str, eos: str) -> str:
    """How llama-server is started for the request: the template file, and the bos and eos the model's vocab gives
    it (llama-server passes them to the template; a request cannot set them)."""
    return (
        f"llama-server --jinja --chat-template-file models/templates/{template} -m MODEL.gguf   "
        f"# MODEL's vocab: bos {json.dumps(bos, ensure_ascii=False)}, eos {json.dumps(eos, ensure_ascii=False)}"
    )


def raw(text: str) -> str:
    """A C++ raw string literal holding `text`."""
    delimiter = "_"
    while f"){delimiter}\"" in text:
        delimiter += "_"
    return f'R"{delimiter}({text}){delimiter}"'


def parser_setup(template: str, bos: str, eos: str, request: Request) -> list[str]:
    """The lines that build llama-server's parser for the request (as server-common.cpp and the oracle do)."""
    lines = [
        "    auto tmpls = common_chat_templates_ptr(common_chat_templates_init(",
        (f"        /* model= */ nullptr, read_file(\"models/templates/{template}\"), /* bos= */ {raw(bos)}, "
        f"/* eos= */ {raw(eos)}));"),
        "    common_chat_templates_inputs inputs;",
        ("    inputs.messages            = common_chat_msgs_parse_oaicompat(json::parse("
        f"{raw(json.dumps(request.messages, ensure_ascii=False))}));"),
        (f"    inputs.tools               = common_chat_tools_parse_oaicompat(json::parse("
        f"{raw(json.dumps(request.tools, ensure_ascii=False))}));"),
        f"    inputs.tool_choice         = {TOOL_CHOICES[request.tool_choice]};",
        f"    inputs.parallel_tool_calls = {json.dumps(request.parallel_tool_calls)};",
        f"    inputs.enable_thinking     = {json.dumps(request.enable_thinking)};",
        f"    inputs.reasoning_format    = COMMON_REASONING_FORMAT_{request.reasoning_format.upper().replace('-', '_')};",
    ]
    lines += [
        f"    inputs.chat_template_kwargs[{json.dumps(name)}] = {raw(json.dumps(value, ensure_ascii=False))};"
        for name, value in request.chat_template_kwargs.items()
    ]
    return lines + [
        "    const auto params = common_chat_templates_apply(tmpls.get(), inputs);",
        "    common_chat_parser_params parser_params(params);",
        "    parser_params.reasoning_format = inputs.reasoning_format;",
        "    parser_params.parse_tool_calls = true;",
        "    if (!params.parser.empty()) {",
        "        parser_params.parser.load(params.parser);",
        "    }",
    ]


def message_lines(name: str, message: Mapping[str, Any]) -> list[str]:
    """The lines that build a common_chat_msg."""
    calls = ", ".join(
        f"{{ {json.dumps(call.get('name', ''))}, {raw(call.get('arguments', ''))}, {json.dumps(call.get('id', ''))} }}"
        for call in message.get("tool_calls") or []
    )
    return [
        f"    common_chat_msg {name};",
        f"    {name}.role              = \"assistant\";",
        f"    {name}.content           = {raw(message.get('content') or '')};",
        f"    {name}.reasoning_content = {raw(message.get('reasoning_content') or '')};",
        f"    {name}.tool_calls        = {{ {calls} }};",
    ]


def whole_case(title: str, template: str, bos: str, eos: str, request: Request, reply: str,
               expected: Mapping[str, Any]) -> str:
    """A test-chat.cpp-style case: the finished reply read as the template meant it (whitespace at the edges of
    the text aside, as the prompt owns it)."""
    return "\n".join([
        f"    // {title}",
        "    {",
        *("    " + line for line in parser_setup(template, bos, eos, request)),
        f"        const std::string reply = {raw(reply)};",
        *("    " + line for line in message_lines("expected", expected)),
        "        assert_msg_equals(expected, common_chat_parse(reply, /* is_partial= */ false, parser_params),",
        "                          /* ignore_whitespace_differences= */ true);",
        "    }",
    ])


def structure_case(title: str, template: str, bos: str, eos: str, request: Request, reply: str,
                   marker: str) -> str:
    """A test-chat.cpp-style case for a reply whose meaning the corpus does not hold: llama.cpp's reading of the
    finished reply must keep `marker` out of its text, or (no marker) hold arguments that are JSON."""
    if marker:
        checks = [
            f"        assert_equals(std::string::npos, msg.content.find({raw(marker)}));",
            f"        assert_equals(std::string::npos, msg.reasoning_content.find({raw(marker)}));",
        ]
    else:
        checks = [
            "        for (const auto & call : msg.tool_calls) {",
            "            json::parse(call.arguments);  // throws where the arguments are not JSON",
            "        }",
        ]
    return "\n".join([
        f"    // {title}",
        "    {",
        *("    " + line for line in parser_setup(template, bos, eos, request)),
        f"        const std::string reply = {raw(reply)};",
        "        const auto msg = common_chat_parse(reply, /* is_partial= */ false, parser_params);",
        *checks,
        "    }",
    ])


def grammar_case(title: str, template: str, bos: str, eos: str, request: Request, reply: str, start: int) -> str:
    """A test-chat.cpp-style case: the grammar llama-server samples under accepts the template's own reply (an
    eager grammar after the generation prompt, a lazy one from the trigger at code point `start`)."""
    begin = len(reply[:start].encode("utf-8"))
    return "\n".join([
        f"    // {title}",
        "    {",
        *("    " + line for line in parser_setup(template, bos, eos, request)),
        f"        const std::string reply = {raw(reply)};",
        "        auto grammar = build_grammar(params.grammar);",
        ("        const std::string constrained = params.grammar_lazy ? reply.substr("
        f"{begin}) : params.generation_prompt + reply;"),
        "        assert_equals(true, match_string(constrained, grammar.get()));",
        "    }",
    ])


def stream_assertion(defect: Mapping[str, Any]) -> list[str]:
    """What llama-server needs of the later read against the earlier one, as a test-chat.cpp assertion."""
    field, kind = defect.get("field", ""), defect["kind"]
    if defect.get("error"):
        first = defect["error"].splitlines()[0]
        return [f"        common_chat_msg_diff::compute_diffs(shown, later);  // throws: {first[:120]}"]
    if kind == "empty_parse":
        return ["        assert_equals(false, later.empty());  // llama-server keeps `shown`, a stale view"]
    if field.endswith(".arguments"):
        index = field[len("tool_calls["):field.index("]")]
        return [(f"        assert_equals(true, string_starts_with(later.tool_calls[{index}].arguments, "
                f"shown.tool_calls[{index}].arguments));  // else no diff is sent")]
    if field.startswith("tool_calls["):
        index = field[len("tool_calls["):field.index("]")]
        return [(f"        assert_equals(shown.tool_calls[{index}].arguments, later.tool_calls[{index}].arguments);"
                "  // an earlier call: no diff is sent")]
    return [f"        assert_equals(true, string_starts_with(later.{field}, shown.{field}));  // else no diff is sent"]


def stream_case(title: str, template: str, bos: str, eos: str, request: Request, reply: str,
                defect: Mapping[str, Any]) -> str:
    """A test-chat.cpp-style case: llama-server's read of a longer prefix must extend what it showed of a shorter
    one (a finished read for the end of the stream)."""
    shown, at = defect["shown_at"], defect["at"]
    lines = [
        f"    // {title}",
        "    {",
        *("    " + line for line in parser_setup(template, bos, eos, request)),
        f"        const std::string reply = {raw(reply)};",
    ]
    if defect["kind"] == "error_mid_stream":
        return "\n".join([
            *lines,
            (f"        common_chat_parse(reply.substr(0, {len(reply[:at].encode('utf-8'))}), /* is_partial= */ true, "
            "parser_params);  // throws, ending llama-server's stream"),
            "    }",
        ])
    finish = "false" if defect.get("finish") else "true"
    return "\n".join([
        *lines,
        (f"        const auto shown = common_chat_parse(reply.substr(0, {len(reply[:shown].encode('utf-8'))}), "
        "/* is_partial= */ true, parser_params);"),
        (f"        const auto later = common_chat_parse(reply.substr(0, {len(reply[:at].encode('utf-8'))}), "
        f"/* is_partial= */ {finish}, parser_params);"),
        *stream_assertion(defect),
        "    }",
    ])
