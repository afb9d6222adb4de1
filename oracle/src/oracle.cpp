// chatparity-oracle: llama.cpp's own chat code (common/chat.h) behind a JSON-lines protocol.
//
// One request per line on stdin, one response per line on stdout, each carrying the request's "id".
// Ops: info, render, parse, stream, grammar, tokenize, detokenize, and the test hooks crash and sleep. See
// oracle/client.py.

#include "chat.h"
#include "common.h"
#include "gguf.h"
#include "llama.h"
#include "log.h"
#include "llama-grammar.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cxxabi.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <unistd.h>
#include <vector>

#ifndef CHATPARITY_LLAMA_CPP_COMMIT
#define CHATPARITY_LLAMA_CPP_COMMIT "unknown"
#endif
#ifndef CHATPARITY_LLAMA_CPP_PYTHON_VERSION
#define CHATPARITY_LLAMA_CPP_PYTHON_VERSION "unknown"
#endif
#ifndef CHATPARITY_SDIST_SHA256
#define CHATPARITY_SDIST_SHA256 "unknown"
#endif
#ifndef CHATPARITY_BUILD_ID
#define CHATPARITY_BUILD_ID "unknown"
#endif

using json = nlohmann::ordered_json;

// The template clock. llama.cpp ignores common_chat_templates_inputs::now: its jinja strftime_now reads
// std::time() and its extra template context (date_string, datetime) reads system_clock::now(). The oracle
// defines both here, so they read the request's `now` while it renders.
static bool        g_clock_pinned = false;
static std::time_t g_clock_now    = 0;

static struct timespec real_time() {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts;
}

extern "C" std::time_t time(std::time_t * out) noexcept {
    std::time_t now = g_clock_pinned ? g_clock_now : real_time().tv_sec;
    if (out != nullptr) {
        *out = now;
    }
    return now;
}

#if defined(__GLIBCXX__)
namespace std::chrono {
inline namespace _V2 {
system_clock::time_point system_clock::now() noexcept {
    if (g_clock_pinned) {
        return system_clock::from_time_t(g_clock_now);
    }
    struct timespec ts = real_time();
    return time_point(duration_cast<duration>(seconds(ts.tv_sec) + nanoseconds(ts.tv_nsec)));
}
}  // namespace _V2
}  // namespace std::chrono
#else
#error "chatparity-oracle pins the template clock through libstdc++'s system_clock; build it with g++"
#endif

// RAII: the process clock reads `now` until the end of the scope.
struct pinned_clock {
    explicit pinned_clock(std::chrono::system_clock::time_point now) {
        g_clock_now    = std::chrono::system_clock::to_time_t(now);
        g_clock_pinned = true;
    }
    ~pinned_clock() { g_clock_pinned = false; }
};

// what() of an exception, with its type when what() says nothing.
static std::string describe(const std::exception & e) {
    std::string message = e.what();
    if (message.empty() || message == "std::exception") {
        int status = 0;
        char * name = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
        message = std::string(status == 0 && name ? name : typeid(e).name()) + (message.empty() ? "" : ": " + message);
        std::free(name);
    }
    return message;
}

// A malformed request: reported as {"error": ...}, never as a reading.
struct request_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The grammar llama-server samples a reply under (common_sampler_init with the render's chat params).
struct grammar_spec {
    std::string                         grammar;
    bool                                lazy = false;
    std::vector<common_grammar_trigger> triggers;
    std::string                         generation_prompt;
    std::string                         think_start;
    std::vector<std::string>            think_ends;
};

// What a render leaves behind for later parse, stream and grammar requests.
struct parser_handle {
    common_chat_parser_params params;
    grammar_spec              grammar;
};

static std::vector<parser_handle> g_handles;

#if __has_include("json.h")
// chat.h takes common_json, built from text.
static common_json to_common_json(const json & value) {
    return common_json::parse(value.dump());
}
#else
// Older llama.cpp (llama-cpp-python 0.3.35 and before): chat.h takes nlohmann::ordered_json itself.
static const json & to_common_json(const json & value) {
    return value;
}
#endif

static const json & field(const json & req, const char * key) {
    if (!req.contains(key)) {
        throw request_error(std::string("missing field '") + key + "'");
    }
    return req.at(key);
}

template <typename T>
static T field_or(const json & req, const char * key, T fallback) {
    if (!req.contains(key) || req.at(key).is_null()) {
        return fallback;
    }
    try {
        return req.at(key).get<T>();
    } catch (const json::exception & e) {
        throw request_error(std::string("field '") + key + "' has the wrong type: " + e.what());
    }
}

// "YYYY-MM-DDTHH:MM:SS[.frac][Z|+HH:MM|-HH:MM]" as a UTC time point.
static std::chrono::system_clock::time_point parse_iso_time(const std::string & text) {
    int year, month, day, hour, minute, second;
    int consumed = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute, &second,
                    &consumed) != 6) {
        throw request_error("field 'now' is not an ISO time (YYYY-MM-DDTHH:MM:SSZ): '" + text + "'");
    }
    std::string rest = text.substr(consumed);
    if (!rest.empty() && rest[0] == '.') {
        size_t end = 1;
        while (end < rest.size() && std::isdigit((unsigned char) rest[end])) {
            end++;
        }
        rest = rest.substr(end);
    }
    long offset_seconds = 0;
    if (rest == "Z" || rest.empty()) {
        offset_seconds = 0;
    } else if ((rest[0] == '+' || rest[0] == '-') && rest.size() == 6 && rest[3] == ':') {
        int oh = std::stoi(rest.substr(1, 2));
        int om = std::stoi(rest.substr(4, 2));
        offset_seconds = (rest[0] == '+' ? 1 : -1) * (oh * 3600L + om * 60L);
    } else {
        throw request_error("field 'now' has an unreadable time zone: '" + text + "'");
    }
    std::tm tm = {};
    tm.tm_year = year - 1900;
    tm.tm_mon  = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min  = minute;
    tm.tm_sec  = second;
    std::time_t t = timegm(&tm) - offset_seconds;
    return std::chrono::system_clock::from_time_t(t);
}

static json message_json(const common_chat_msg & msg) {
    json calls = json::array();
    for (const auto & call : msg.tool_calls) {
        calls.push_back({{"name", call.name}, {"arguments", call.arguments}, {"id", call.id}});
    }
    return {{"content", msg.content}, {"reasoning_content", msg.reasoning_content}, {"tool_calls", calls}};
}

static json diffs_json(const std::vector<common_chat_msg_diff> & diffs) {
    json out = json::array();
    for (const auto & diff : diffs) {
        json index = diff.tool_call_index == std::string::npos ? json(nullptr) : json(diff.tool_call_index);
        out.push_back({
            {"reasoning_content_delta", diff.reasoning_content_delta},
            {"content_delta", diff.content_delta},
            {"tool_call_index", index},
            {"tool_call_delta",
             {{"name", diff.tool_call_delta.name},
              {"arguments", diff.tool_call_delta.arguments},
              {"id", diff.tool_call_delta.id}}},
        });
    }
    return out;
}

static json triggers_json(const std::vector<common_grammar_trigger> & triggers) {
    json out = json::array();
    for (const auto & trigger : triggers) {
        json item = {{"type", (int) trigger.type}, {"value", trigger.value}};
        if (trigger.type == COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN) {
            item["token"] = (int) trigger.token;
        }
        out.push_back(item);
    }
    return out;
}

static json op_info() {
    return {
        {"llama_cpp_commit", CHATPARITY_LLAMA_CPP_COMMIT},
        {"llama_cpp_python_version", CHATPARITY_LLAMA_CPP_PYTHON_VERSION},
        {"sdist_sha256", CHATPARITY_SDIST_SHA256},
        {"build_id", CHATPARITY_BUILD_ID},
    };
}

// common_chat_templates_init, whose rethrow of a template syntax error loses the message (`throw e;` slices it
// to std::exception): parse the template alone to recover it.
static common_chat_templates_ptr init_templates(const std::string & source, const std::string & bos,
                                                const std::string & eos) {
    try {
        return common_chat_templates_init(nullptr, source, bos, eos);
    } catch (const std::exception &) {
        common_chat_template probe(source, bos, eos);
        throw;
    }
}

// Initialized templates by source, bos, eos and pinned time: llama-server initializes its model's templates
// once and applies them to every request, so one template serves every render of it.
static std::map<std::string, common_chat_templates_ptr> g_templates;

static const common_chat_templates * templates_of(const std::string & source, const std::string & bos,
                                                  const std::string & eos, std::time_t now) {
    const std::string key = source + '\0' + bos + '\0' + eos + '\0' + std::to_string(now);
    auto found = g_templates.find(key);
    if (found == g_templates.end()) {
        found = g_templates.emplace(key, init_templates(source, bos, eos)).first;
    }
    return found->second.get();
}

// As llama-server's oaicompat_chat_params_parse, then its completion schema for the parser params.
static json op_render(const json & req) {
    const json & template_field = field(req, "template");
    if (!template_field.is_string()) {
        throw request_error("field 'template' must be a string");
    }
    const std::string bos = field_or<std::string>(req, "bos", "");
    const std::string eos = field_or<std::string>(req, "eos", "");
    const json messages = field(req, "messages");
    if (!messages.is_array()) {
        throw request_error("field 'messages' must be an array");
    }
    const json tools = req.contains("tools") ? req.at("tools") : json();

    const auto now = req.contains("now") ? parse_iso_time(field_or<std::string>(req, "now", ""))
                                         : std::chrono::system_clock::from_time_t(0);
    pinned_clock clock(now);
    const common_chat_templates * tmpls =
        templates_of(template_field.get<std::string>(), bos, eos, std::chrono::system_clock::to_time_t(now));
    auto caps = common_chat_templates_get_caps(tmpls);

    common_chat_templates_inputs inputs;
    inputs.messages              = common_chat_msgs_parse_oaicompat(to_common_json(messages));
    inputs.tools                 = common_chat_tools_parse_oaicompat(to_common_json(tools));
    inputs.tool_choice           = common_chat_tool_choice_parse_oaicompat(
        field_or<std::string>(req, "tool_choice", "auto"));
    inputs.use_jinja             = true;
    inputs.parallel_tool_calls   = field_or<bool>(req, "parallel_tool_calls", caps["supports_parallel_tool_calls"]);
    inputs.add_generation_prompt = field_or<bool>(req, "add_generation_prompt", true);
    inputs.continue_final_message = req.contains("continue_final_message")
        ? common_chat_continuation_parse(to_common_json(req.at("continue_final_message")))
        : COMMON_CHAT_CONTINUATION_NONE;
    if (inputs.continue_final_message == COMMON_CHAT_CONTINUATION_NONE && !inputs.messages.empty() &&
        inputs.messages.back().role == "assistant") {
        // llama-server's default --prefill-assistant
        if (inputs.messages.size() >= 2 && inputs.messages[inputs.messages.size() - 2].role == "assistant") {
            throw request_error("Cannot have 2 or more assistant messages at the end of the list.");
        }
        inputs.continue_final_message = COMMON_CHAT_CONTINUATION_AUTO;
        inputs.add_generation_prompt  = false;
    }
    if (inputs.continue_final_message != COMMON_CHAT_CONTINUATION_NONE && inputs.add_generation_prompt) {
        throw request_error("Cannot set both add_generation_prompt and continue_final_message to true.");
    }
    inputs.reasoning_format = common_reasoning_format_from_name(
        field_or<std::string>(req, "reasoning_format", "deepseek"));
    inputs.enable_thinking = field_or<bool>(req, "enable_thinking", true);

    const json kwargs = req.contains("chat_template_kwargs") && !req.at("chat_template_kwargs").is_null()
        ? req.at("chat_template_kwargs") : json::object();
    if (!kwargs.is_object()) {
        throw request_error("field 'chat_template_kwargs' must be an object");
    }
    for (const auto & item : kwargs.items()) {
        inputs.chat_template_kwargs[item.key()] = item.value().dump();
    }
    auto enable_thinking_kwarg = inputs.chat_template_kwargs.find("enable_thinking");
    if (enable_thinking_kwarg != inputs.chat_template_kwargs.end()) {
        if (enable_thinking_kwarg->second == "true") {
            inputs.enable_thinking = true;
        } else if (enable_thinking_kwarg->second == "false") {
            inputs.enable_thinking = false;
        } else if (!enable_thinking_kwarg->second.empty() && enable_thinking_kwarg->second[0] == '"') {
            throw request_error("invalid type for \"enable_thinking\" (expected boolean, got string)");
        }
    }
    inputs.now = now;

    common_chat_params chat_params = common_chat_templates_apply(tmpls, inputs);

    parser_handle handle;
    handle.params                  = common_chat_parser_params(chat_params);
    handle.params.reasoning_format = inputs.reasoning_format;
    handle.params.parse_tool_calls = true;
    handle.params.is_continuation  = inputs.continue_final_message != COMMON_CHAT_CONTINUATION_NONE;
    if (!chat_params.parser.empty()) {
        handle.params.parser.load(chat_params.parser);
    }
    handle.grammar = {chat_params.grammar, chat_params.grammar_lazy, chat_params.grammar_triggers,
                      chat_params.generation_prompt, chat_params.thinking_start_tag, chat_params.thinking_end_tags};
    g_handles.push_back(std::move(handle));

    return {
        {"prompt", chat_params.prompt},
        {"format", common_chat_format_name(chat_params.format)},
        {"generation_prompt", chat_params.generation_prompt},
        {"supports_thinking", chat_params.supports_thinking},
        {"thinking_start_tag", chat_params.thinking_start_tag},
        {"thinking_end_tags", chat_params.thinking_end_tags},
        {"grammar", chat_params.grammar},
        {"grammar_lazy", chat_params.grammar_lazy},
        {"grammar_triggers", triggers_json(chat_params.grammar_triggers)},
        {"preserved_tokens", chat_params.preserved_tokens},
        {"additional_stops", chat_params.additional_stops},
        {"handle", g_handles.size()},
    };
}

static const parser_handle & handle_of(const json & req) {
    const size_t handle = field_or<size_t>(req, "handle", 0);
    if (handle == 0 || handle > g_handles.size()) {
        throw request_error("unknown handle " + std::to_string(handle));
    }
    return g_handles[handle - 1];
}

static std::string text_of(const json & req) {
    const json & text = field(req, "text");
    if (!text.is_string()) {
        throw request_error("field 'text' must be a string");
    }
    return text.get<std::string>();
}

// A reading: the message, or {"rejected": what llama.cpp threw}.
static json read_once(const std::string & text, bool is_partial, const common_chat_parser_params & params) {
    try {
        return message_json(common_chat_parse(text, is_partial, params));
    } catch (const std::exception & e) {
        return {{"rejected", describe(e)}};
    }
}

static json op_parse(const json & req) {
    const parser_handle & handle = handle_of(req);
    return {{"reading", read_once(text_of(req), field_or<bool>(req, "is_partial", false), handle.params)}};
}

// The code points of the first `bytes` bytes of a UTF-8 text.
static size_t code_points(const std::string & text, size_t bytes) {
    size_t count = 0;
    for (size_t i = 0; i < bytes; ++i) {
        count += (((unsigned char) text[i]) & 0xC0) != 0x80;
    }
    return count;
}

// llama-server's reasoning-budget sampler as a lazy tool-call grammar meets it (common/reasoning-budget.cpp with
// an unlimited budget): idle until the thinking start tag, inside the thought until an end tag, done after it
// (a new start tag opens another thought). Tags are matched on text rather than on tokens.
struct thought_tracker {
    enum state_t { IDLE, THINKING, DONE };
    std::string              start;
    std::vector<std::string> ends;
    state_t                  state = IDLE;
    std::string              seen;
    std::string              ended_by;

    static bool ends_with(const std::string & text, const std::string & tail) {
        return !tail.empty() && text.size() >= tail.size() &&
               text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
    }

    // Advance by one piece; true when it ends a thought (`ended_by` then holds the end tag).
    bool advance(const std::string & piece) {
        seen += piece;
        if (state == THINKING) {
            for (const auto & end : ends) {
                if (ends_with(seen, end)) {
                    state = DONE;
                    ended_by = end;
                    seen.clear();
                    return true;
                }
            }
        } else if (ends_with(seen, start)) {
            state = THINKING;
            seen.clear();
        }
        return false;
    }
};

struct grammar_deleter {
    void operator()(llama_grammar * grammar) const { llama_grammar_free_impl(grammar); }
};

// A grammar as llama-server's sampler holds it, fed text rather than tokens (llama_grammar_accept_impl without a
// vocab: trigger words and tokens are matched as text).
struct grammar_feed {
    std::unique_ptr<llama_grammar, grammar_deleter> grammar;
    std::string                                     constrained;  // the text a lazy grammar was triggered with

    // Feed one piece; false once the grammar rejects it.
    bool feed(const std::string & piece) {
        llama_grammar & g = *grammar;
        if (g.awaiting_trigger) {
            g.trigger_buffer += piece;
            for (const auto & pattern : g.trigger_patterns) {
                const size_t start = pattern.find(g.trigger_buffer);
                if (start != std::string::npos) {
                    g.awaiting_trigger = false;
                    constrained = g.trigger_buffer.substr(start);
                    g.trigger_buffer.clear();
                    return accept(constrained);
                }
            }
            return true;
        }
        return accept(piece);
    }

    bool accept(const std::string & text) {
        try {
            llama_grammar_accept_str(*grammar, text);
        } catch (const std::exception &) {
            return false;
        }
        return !grammar->stacks.empty();
    }

    bool complete() const {
        return std::any_of(grammar->stacks.begin(), grammar->stacks.end(),
                           [](const llama_grammar_stack & stack) { return stack.empty(); });
    }
};

// The trigger patterns common_sampler_init makes of a render's grammar triggers (a token trigger as its text).
static std::vector<std::string> trigger_patterns(const std::vector<common_grammar_trigger> & triggers) {
    std::vector<std::string> patterns;
    for (const auto & trigger : triggers) {
        if (trigger.type == COMMON_GRAMMAR_TRIGGER_TYPE_WORD || trigger.type == COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN) {
            patterns.push_back(regex_escape(trigger.value));
        } else if (trigger.type == COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN) {
            patterns.push_back(trigger.value);
        } else if (trigger.value.empty()) {
            patterns.push_back("^$");
        } else {
            patterns.push_back((trigger.value.front() != '^' ? "^" : "") + trigger.value +
                               (trigger.value.back() != '$' ? "$" : ""));
        }
    }
    return patterns;
}

static json grammar_verdict(const std::string & verdict, const json & at = nullptr, const json & from = nullptr) {
    return {{"grammar", {{"verdict", verdict}, {"at", at}, {"from", from}}}};
}

// Whether a model sampling under the grammar llama-server builds for the request can write `text`, as
// common_sampler_init and common_sampler_accept drive the grammar: an eager grammar fed the generation prompt
// first; a lazy one waiting for a trigger, and (with thinking tags) not fed inside a thought, the tag that ends
// the thought replayed into it. Verdicts: "free" (no grammar), "untriggered" (a lazy grammar the text never
// triggers), "accepts", "rejects" (at: the code point it rejects), "incomplete" (a finished text the grammar
// cannot end), "prompt" (the grammar rejects the generation prompt), "invalid" (the grammar does not parse);
// "from" is the code point the grammar constrains the text from (0 for an eager grammar, fed the generation
// prompt first; a lazy grammar's trigger).
static json op_grammar(const json & req) {
    const grammar_spec & spec = handle_of(req).grammar;
    const std::string text = text_of(req);
    const bool is_partial = field_or<bool>(req, "is_partial", false);
    if (spec.grammar.empty()) {
        return grammar_verdict("free");
    }
    const std::vector<std::string> patterns = trigger_patterns(spec.triggers);
    std::vector<const char *> pattern_ptrs;
    for (const auto & pattern : patterns) {
        pattern_ptrs.push_back(pattern.c_str());
    }
    grammar_feed grammar{std::unique_ptr<llama_grammar, grammar_deleter>(llama_grammar_init_impl(
        nullptr, spec.grammar.c_str(), "root", spec.lazy, pattern_ptrs.data(), pattern_ptrs.size(), nullptr, 0))};
    if (!grammar.grammar) {
        return grammar_verdict("invalid");
    }
    const bool tracks_thought = spec.lazy && !spec.think_start.empty() &&
        std::any_of(spec.think_ends.begin(), spec.think_ends.end(), [](const std::string & end) { return !end.empty(); });
    thought_tracker thought{spec.think_start, spec.think_ends};
    if (!spec.lazy && !grammar.accept(spec.generation_prompt)) {
        return grammar_verdict("prompt");
    }
    if (tracks_thought) {
        thought.advance(spec.generation_prompt);
    }
    json from = spec.lazy ? json(nullptr) : json(0);
    size_t offset = 0;
    for (size_t i = 0; i < text.size(); ++offset) {
        size_t length = 1;
        while (i + length < text.size() && (((unsigned char) text[i + length]) & 0xC0) == 0x80) {
            ++length;
        }
        const std::string piece = text.substr(i, length);
        i += length;
        const bool applies = !tracks_thought || thought.state != thought_tracker::THINKING;
        const bool ended = tracks_thought && thought.advance(piece);
        const bool fits = applies ? grammar.feed(piece) : (!ended || grammar.feed(thought.ended_by));
        if (from.is_null() && !grammar.grammar->awaiting_trigger) {
            const size_t written = code_points(grammar.constrained, grammar.constrained.size());
            from = offset + 1 >= written ? offset + 1 - written : 0;
        }
        if (!fits) {
            return grammar_verdict("rejects", offset, from);
        }
    }
    if (grammar.grammar->awaiting_trigger) {
        return grammar_verdict("untriggered");
    }
    return grammar_verdict(is_partial || grammar.complete() ? "accepts" : "incomplete", nullptr, from);
}

// A text as [kept, added]: the first `kept` code points of the same text in the read before, then the rest.
static json grown(const std::string & before, const std::string & after) {
    const size_t limit = std::min(before.size(), after.size());
    size_t same = 0;
    while (same < limit && before[same] == after[same]) {
        ++same;
    }
    while (same > 0 && same < after.size() && (((unsigned char) after[same]) & 0xC0) == 0x80) {
        --same;
    }
    return json::array({code_points(after, same), after.substr(same)});
}

// One read written against the read before it, as oracle/partial_reads.py writes and reads them: 0 when equal,
// a rejection as its JSON, else [reasoning, content, calls], each text `grown` from the same text before (from
// nothing where the read before has none) and each call as [name, arguments, id]. A stream's answer so grows
// with what its reads add, not with every read whole.
static json read_entry(const json & before, const json & reading) {
    if (before == reading) {
        return 0;
    }
    if (reading.contains("rejected")) {
        return reading;
    }
    static const json empty_call = {{"name", ""}, {"arguments", ""}, {"id", ""}};
    const bool was_message = before.is_object() && before.contains("content");
    const json no_calls = json::array();
    const json & old_calls = was_message ? before.at("tool_calls") : no_calls;
    json calls = json::array();
    for (size_t i = 0; i < reading.at("tool_calls").size(); ++i) {
        const json & call = reading.at("tool_calls").at(i);
        const json & old = i < old_calls.size() ? old_calls.at(i) : empty_call;
        json written = json::array();
        for (const char * key : {"name", "arguments", "id"}) {
            written.push_back(grown(old.at(key).get<std::string>(), call.at(key).get<std::string>()));
        }
        calls.push_back(written);
    }
    const std::string none;
    const std::string & reasoning = was_message ? before.at("reasoning_content").get_ref<const std::string &>() : none;
    const std::string & content = was_message ? before.at("content").get_ref<const std::string &>() : none;
    return json::array({grown(reasoning, reading.at("reasoning_content").get<std::string>()),
                        grown(content, reading.at("content").get<std::string>()), calls});
}

// One step of llama-server's task_result_state::update_chat_msg (tool-call ids as the parser gives them). A step
// whose parse came back empty, so that llama-server kept the message before it, says so ("kept": true).
static json stream_step(const std::string & text, bool is_partial, const common_chat_parser_params & params,
                        common_chat_msg & state) {
    common_chat_msg fresh;
    try {
        fresh = common_chat_parse(text, is_partial, params);
    } catch (const std::exception & e) {
        return {{"reading", {{"rejected", describe(e)}}}, {"diffs", json::array()}, {"diff_error", ""}};
    }
    json diffs = json::array();
    std::string diff_error;
    if (fresh.empty()) {
        return {{"reading", message_json(state)}, {"diffs", diffs}, {"diff_error", diff_error}, {"kept", true}};
    }
    common_chat_msg previous = state;
    state = fresh;
    try {
        diffs = diffs_json(common_chat_msg_diff::compute_diffs(previous, state));
    } catch (const std::exception & e) {
        diff_error = describe(e);
    }
    return {{"reading", message_json(state)}, {"diffs", diffs}, {"diff_error", diff_error}};
}

// A checked stream request: the handle's parser, the text and its cuts (byte offsets).
struct stream_job {
    common_chat_parser_params params;
    std::string text;
    std::vector<size_t> cuts;
};

static stream_job stream_job_of(const json & req) {
    const parser_handle & handle = handle_of(req);
    stream_job job{handle.params, text_of(req), {}};
    const json & boundaries = field(req, "boundaries");
    if (!boundaries.is_array()) {
        throw request_error("field 'boundaries' must be an array of byte offsets");
    }
    for (const auto & value : boundaries) {
        if (!value.is_number_unsigned()) {
            throw request_error("boundary " + value.dump() + " is not a non-negative integer");
        }
        size_t cut = value.get<size_t>();
        if (cut > job.text.size()) {
            throw request_error("boundary " + std::to_string(cut) + " is past the end of the text (" +
                                std::to_string(job.text.size()) + " bytes)");
        }
        if (!job.cuts.empty() && cut <= job.cuts.back()) {
            throw request_error("boundaries must increase, got " + std::to_string(cut) + " after " +
                                std::to_string(job.cuts.back()));
        }
        if (cut < job.text.size() && (((unsigned char) job.text[cut]) & 0xC0) == 0x80) {
            throw request_error("boundary " + std::to_string(cut) + " splits a UTF-8 sequence");
        }
        job.cuts.push_back(cut);
    }
    job.params.reasoning_in_content = job.params.reasoning_format == COMMON_REASONING_FORMAT_DEEPSEEK_LEGACY;
    return job;
}

static void write_text(FILE * out, const std::string & text) {
    std::fwrite(text.data(), 1, text.size(), out);
}

// A stream request's answer, {"steps": [...], "final": {...}, "id": ID} on one line, written a step at a time as
// each prefix is read: the oracle holds one step, never the whole answer, however many boundaries the reply has.
// Each step's partial read is written against the one before it (`read_entry`). A failure once the answer has
// begun (out of memory, a read that is not UTF-8) ends it with {"error": ...} in place of "final".
static void write_stream(const stream_job & job, const json & id, FILE * out) {
    write_text(out, "{\"steps\":[");
    try {
        common_chat_msg state;
        if (job.params.is_continuation && !job.params.echo) {
            state = common_chat_parse("", true, job.params);
        }
        json before = nullptr;
        for (size_t index = 0; index < job.cuts.size(); ++index) {
            json step = stream_step(job.text.substr(0, job.cuts[index]), true, job.params, state);
            json reading = std::move(step.at("reading"));
            step.erase("reading");
            step["read"] = read_entry(before, reading);
            before = std::move(reading);
            write_text(out, (index ? "," : "") + step.dump());
        }
        const std::string final_step = stream_step(job.text, false, job.params, state).dump();
        write_text(out, "],\"final\":" + final_step);
    } catch (const std::exception & e) {
        write_text(out, "],\"error\":" + json(describe(e)).dump(-1, ' ', false, json::error_handler_t::replace));
    }
    write_text(out, ",\"id\":" + id.dump() + "}\n");
    std::fflush(out);
}

// CPU time of this thread, in nanoseconds.
static int64_t thread_cpu_ns() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (int64_t) now.tv_sec * 1000000000 + now.tv_nsec;
}

// llama-server's work for one streamed reply, timed: after each chunk is appended to the text, a partial parse
// and, where it read something, the diffs against the message before (update_chat_msg), then the final parse.
static void serve_stream(const stream_job & job) {
    common_chat_msg state;
    if (job.params.is_continuation && !job.params.echo) {
        state = common_chat_parse("", true, job.params);
    }
    std::string text;
    size_t start = 0;
    for (size_t cut : job.cuts) {
        text.append(job.text, start, cut - start);
        start = cut;
        try {
            common_chat_msg fresh = common_chat_parse(text, true, job.params);
            if (!fresh.empty()) {
                common_chat_msg previous = state;
                state = fresh;
                common_chat_msg_diff::compute_diffs(previous, state);
            }
        } catch (const std::exception &) {
        }
    }
    try {
        common_chat_parse(job.text, false, job.params);
    } catch (const std::exception &) {
    }
}

// The CPU nanoseconds of the fastest of `repeat` runs of `work`.
template <typename Work> static int64_t fastest_ns(int repeat, Work work) {
    int64_t best = INT64_MAX;
    for (int run = 0; run < repeat; ++run) {
        const int64_t start = thread_cpu_ns();
        work();
        best = std::min(best, thread_cpu_ns() - start);
    }
    return best;
}

// How long llama.cpp takes, in CPU time, to read a reply whole and to serve it as a stream cut at `boundaries`
// (as llama-server does), the fastest of `repeat` runs each; no reading is returned, so no JSON is timed.
static json op_time(const json & req) {
    const stream_job job = stream_job_of(req);
    const int repeat = std::max(1, field_or<int>(req, "repeat", 1));
    const int64_t whole = fastest_ns(repeat, [&] {
        try {
            common_chat_parse(job.text, false, job.params);
        } catch (const std::exception &) {
        }
    });
    const int64_t stream = job.cuts.empty() ? 0 : fastest_ns(repeat, [&] { serve_stream(job); });
    return {{"whole_ns", whole}, {"stream_ns", stream}};
}

// A vocab-only model: a tokenizer GGUF, optionally with added tokens appended as user-defined tokens.
struct model_deleter {
    void operator()(llama_model * model) const { llama_model_free(model); }
};

// The vocabs loaded last (a vocab takes tens of MB): sweeps ask for one template's vocab many times in a row.
struct loaded_vocab {
    std::unique_ptr<llama_model, model_deleter> model;
    uint64_t used;
};

static constexpr size_t VOCABS_KEPT = 4;
static std::map<std::string, loaded_vocab> g_vocabs;
static uint64_t g_vocab_uses = 0;

// Forget the vocab used longest ago.
static void drop_oldest_vocab() {
    auto oldest = g_vocabs.begin();
    for (auto it = g_vocabs.begin(); it != g_vocabs.end(); ++it) {
        if (it->second.used < oldest->second.used) {
            oldest = it;
        }
    }
    g_vocabs.erase(oldest);
}

static std::vector<std::string> added_tokens_of(const json & req) {
    std::vector<std::string> added;
    if (!req.contains("added") || req.at("added").is_null()) {
        return added;
    }
    if (!req.at("added").is_array()) {
        throw request_error("field 'added' must be an array of strings");
    }
    for (const auto & token : req.at("added")) {
        if (!token.is_string() || token.get<std::string>().empty()) {
            throw request_error("field 'added' holds " + token.dump() + ", not a non-empty string");
        }
        added.push_back(token.get<std::string>());
    }
    return added;
}

// The GGUF at `path` with `added` appended to its token list (type user-defined, score 0), written to a
// temporary file that the caller loads and removes.
static std::string write_extended_vocab(const std::string & path, const std::vector<std::string> & added) {
    gguf_init_params params = {/*no_alloc =*/ true, /*ctx =*/ nullptr};
    gguf_context * ctx = gguf_init_from_file(path.c_str(), params);
    if (ctx == nullptr) {
        throw request_error("cannot read the vocab file '" + path + "'");
    }
    std::unique_ptr<gguf_context, void (*)(gguf_context *)> guard(ctx, gguf_free);
    const int64_t tokens_key = gguf_find_key(ctx, "tokenizer.ggml.tokens");
    if (tokens_key < 0) {
        throw request_error("the vocab file '" + path + "' has no tokenizer.ggml.tokens");
    }
    const size_t n_tokens = gguf_get_arr_n(ctx, tokens_key);
    std::vector<std::string> texts;
    for (size_t i = 0; i < n_tokens; i++) {
        texts.emplace_back(gguf_get_arr_str(ctx, tokens_key, i));
    }
    texts.insert(texts.end(), added.begin(), added.end());
    std::vector<const char *> pointers;
    for (const auto & text : texts) {
        pointers.push_back(text.c_str());
    }
    gguf_set_arr_str(ctx, "tokenizer.ggml.tokens", pointers.data(), pointers.size());

    const int64_t types_key = gguf_find_key(ctx, "tokenizer.ggml.token_type");
    if (types_key >= 0) {
        const int32_t * data = (const int32_t *) gguf_get_arr_data(ctx, types_key);
        std::vector<int32_t> types(data, data + gguf_get_arr_n(ctx, types_key));
        types.resize(n_tokens, LLAMA_TOKEN_TYPE_NORMAL);
        types.insert(types.end(), added.size(), LLAMA_TOKEN_TYPE_USER_DEFINED);
        gguf_set_arr_data(ctx, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types.data(), types.size());
    }
    const int64_t scores_key = gguf_find_key(ctx, "tokenizer.ggml.scores");
    if (scores_key >= 0 && gguf_get_arr_type(ctx, scores_key) == GGUF_TYPE_FLOAT32) {
        const float * data = (const float *) gguf_get_arr_data(ctx, scores_key);
        std::vector<float> scores(data, data + gguf_get_arr_n(ctx, scores_key));
        scores.resize(n_tokens, 0.0f);
        scores.insert(scores.end(), added.size(), 0.0f);
        gguf_set_arr_data(ctx, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores.data(), scores.size());
    }
    const char * tmpdir = std::getenv("TMPDIR");
    std::string name = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/chatparity-vocab-XXXXXX";
    std::vector<char> buffer(name.begin(), name.end());
    buffer.push_back('\0');
    const int fd = mkstemp(buffer.data());
    if (fd < 0) {
        throw std::runtime_error("cannot create a temporary vocab file in " + name);
    }
    close(fd);
    if (!gguf_write_to_file(ctx, buffer.data(), /*only_meta =*/ true)) {
        unlink(buffer.data());
        throw std::runtime_error("cannot write the temporary vocab file " + std::string(buffer.data()));
    }
    return std::string(buffer.data());
}

// The vocab a request names (field 'vocab_path', plus 'added'), loaded unless among the last VOCABS_KEPT used.
static const llama_vocab * vocab_of(const json & req) {
    const std::string path = field_or<std::string>(req, "vocab_path", "");
    if (path.empty()) {
        throw request_error("missing field 'vocab_path'");
    }
    const std::vector<std::string> added = added_tokens_of(req);
    std::string key = path;
    for (const auto & token : added) {
        key += '\0' + token;
    }
    auto found = g_vocabs.find(key);
    if (found == g_vocabs.end()) {
        if (access(path.c_str(), R_OK) != 0) {
            throw request_error("no readable vocab file at '" + path + "'");
        }
        const std::string file = added.empty() ? path : write_extended_vocab(path, added);
        llama_model_params params = llama_model_default_params();
        params.vocab_only = true;
        llama_model * model = llama_model_load_from_file(file.c_str(), params);
        if (!added.empty()) {
            unlink(file.c_str());
        }
        if (model == nullptr) {
            throw request_error("llama.cpp cannot load the vocab '" + path + "'");
        }
        if (g_vocabs.size() >= VOCABS_KEPT) {
            drop_oldest_vocab();
        }
        found = g_vocabs.emplace(key, loaded_vocab{std::unique_ptr<llama_model, model_deleter>(model), 0}).first;
    }
    found->second.used = ++g_vocab_uses;
    return llama_model_get_vocab(found->second.model.get());
}

static std::string hex_of(const std::string & bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

// As llama-server tokenizes a prompt: special tokens parsed as single tokens, no BOS/EOS added. Each token
// comes with its piece (the bytes token_to_piece renders, in hex) and whether it is a special token
// (control, user-defined or unknown: what parse_special matches as a whole).
static json op_tokenize(const json & req) {
    const llama_vocab * vocab = vocab_of(req);
    const std::vector<llama_token> tokens = common_tokenize(vocab, text_of(req), false, true);
    json ids = json::array();
    json pieces = json::array();
    json special = json::array();
    const int special_attrs = LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED | LLAMA_TOKEN_ATTR_UNKNOWN;
    for (llama_token token : tokens) {
        ids.push_back(token);
        pieces.push_back(hex_of(common_token_to_piece(vocab, token, true)));
        special.push_back((llama_vocab_get_attr(vocab, token) & special_attrs) != 0);
    }
    return {{"tokens", ids}, {"pieces", pieces}, {"special", special}};
}

// The text of token ids, special tokens rendered (as common_detokenize with special = true).
static json op_detokenize(const json & req) {
    const llama_vocab * vocab = vocab_of(req);
    const json & ids = field(req, "tokens");
    if (!ids.is_array()) {
        throw request_error("field 'tokens' must be an array of token ids");
    }
    const int32_t n_tokens = llama_vocab_n_tokens(vocab);
    std::vector<llama_token> tokens;
    for (const auto & id : ids) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= n_tokens) {
            throw request_error("token " + id.dump() + " is not an id of this vocab (0.." +
                                std::to_string(n_tokens - 1) + ")");
        }
        tokens.push_back(id.get<llama_token>());
    }
    return {{"text", common_detokenize(vocab, tokens, true)}};
}

static json dispatch(const json & req) {
    const std::string op = field_or<std::string>(req, "op", "");
    if (op == "info") {
        return op_info();
    }
    if (op == "render") {
        return op_render(req);
    }
    if (op == "parse") {
        return op_parse(req);
    }
    if (op == "grammar") {
        return op_grammar(req);
    }
    if (op == "time") {
        return op_time(req);
    }
    if (op == "tokenize") {
        return op_tokenize(req);
    }
    if (op == "detokenize") {
        return op_detokenize(req);
    }
    if (op == "crash") {
        std::abort();
    }
    if (op == "sleep") {
        std::this_thread::sleep_for(std::chrono::duration<double>(field_or<double>(req, "seconds", 0.0)));
        return json::object();
    }
    throw request_error("unknown op '" + op + "' (expected info, render, parse, stream, grammar, time, tokenize, detokenize, crash or sleep)");
}

// Answer one request line on `out`: a stream as it is read, any other op once it is done.
static void respond(const std::string & line, FILE * out) {
    json id = nullptr;
    json response;
    try {
        json req = json::parse(line);
        if (!req.is_object()) {
            throw request_error("a request must be a JSON object");
        }
        id = req.contains("id") ? req.at("id") : json(nullptr);
        if (field_or<std::string>(req, "op", "") == "stream") {
            write_stream(stream_job_of(req), id, out);
            return;
        }
        response = dispatch(req);
    } catch (const json::parse_error & e) {
        response = {{"error", std::string("malformed JSON request: ") + e.what()}};
    } catch (const std::exception & e) {
        response = {{"error", describe(e)}};
    } catch (...) {
        response = {{"error", "unknown exception"}};
    }
    response["id"] = id;
    std::string text;
    try {
        text = response.dump();
    } catch (const json::exception & e) {
        json failure = {{"id", id}, {"error", std::string("llama.cpp produced invalid UTF-8: ") + e.what()}};
        text = failure.dump();
    }
    write_text(out, text + "\n");
    std::fflush(out);
}

// llama.cpp's own log (model loading): errors only, to stderr.
static void quiet_log(ggml_log_level level, const char * text, void *) {
    if (level == GGML_LOG_LEVEL_ERROR) {
        std::fputs(text, stderr);
    }
}

int main() {
    // stdout is the protocol: keep a private handle on it and send everything else printed there to stderr.
    FILE * protocol = fdopen(dup(STDOUT_FILENO), "w");
    if (protocol == nullptr || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        std::perror("chatparity-oracle: cannot set up the protocol stream");
        return 1;
    }
    setenv("TZ", "UTC", 1);
    tzset();
    common_log_set_verbosity_thold(LOG_LEVEL_ERROR);
    llama_log_set(quiet_log, nullptr);

    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) {
            continue;
        }
        respond(line, protocol);
    }
    return 0;
}
