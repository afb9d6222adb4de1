//! A worked example of the subprocess parser protocol (docs/protocols.md) in Rust, standard library only:
//! the hermes parser of examples/hermes_parser/parser.mjs, `<think>…</think>` then
//! `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>`, read the same way, judged by the same
//! expectations. Build it with `cargo build --release --offline` in its directory, then sweep it from the
//! project's root with:
//!   chatparity sweep --parser 'cmd:examples/hermes_parser_rust/target/release/hermes-parser'
//!                    --templates 'Qwen-Qwen3-0.6B.jinja' --expectations examples/hermes_parser/expectations

mod json;

use json::Json;
use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, BufWriter, Write};

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";
const CALL_OPEN: &str = "<tool_call>\n";
const CALL_CLOSE: &str = "\n</tool_call>";

/// A reader's settings, from the session the harness sends with `open`.
struct Reader {
    thinks: bool,
    forced_open: bool,
    calls: bool,
    names: HashSet<String>,
}

/// One tool call read from a reply; the format carries no id.
struct Call {
    name: String,
    arguments: String,
}

/// What the parser makes of a reply: a message, or a refusal of a finished reply off the format.
enum Reading {
    Message { content: String, reasoning: String, calls: Vec<Call> },
    Rejected(String),
}

/// Whether `c` is whitespace as JavaScript's `\s` and `trim` see it, so both examples trim alike.
fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}'
    ) || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}')
}

/// `text` without its leading whitespace.
fn trim_start(text: &str) -> &str {
    text.trim_start_matches(js_space)
}

/// `text` without its trailing whitespace.
fn trim_end(text: &str) -> &str {
    text.trim_end_matches(js_space)
}

/// Whether `text` is empty or only whitespace.
fn blank(text: &str) -> bool {
    text.chars().all(js_space)
}

/// The reader a session asks for, or why the parser declines it.
fn open(session: &Json) -> Result<Reader, String> {
    let field = |name: &str| session.get(name).ok_or_else(|| format!("the session has no {name}"));
    let source = field("template_source")?.as_str().unwrap_or("");
    if !source.contains("<tool_call>\\n{") && !source.contains("<tool_call>\n{") {
        return Err("not a hermes template".into());
    }
    // With reasoning_format "none" a thought is content like any other text, tags and all.
    let none_format = field("reasoning_format")?.as_str() == Some("none");
    let thinks =
        *field("enable_thinking")? == Json::Bool(true) && source.contains(THINK_OPEN) && !none_format;
    let forced_open = thinks && trim_end(field("prompt")?.as_str().unwrap_or("")).ends_with(THINK_OPEN);
    let tools = field("tools")?.as_array().unwrap_or(&[]);
    let calls = !tools.is_empty() && field("tool_choice")?.as_str() != Some("none");
    let names = tools.iter().filter_map(|tool| tool.get("function")?.get("name")?.as_str()).map(String::from);
    Ok(Reader { thinks, forced_open, calls, names: names.collect() })
}

/// How many bytes at the end of `text` could start `marker`: held back while a reply is still arriving.
fn held_back(text: &str, marker: &str) -> usize {
    let longest = (marker.len() - 1).min(text.len());
    (1..=longest).rev().find(|&n| text.as_bytes()[text.len() - n..] == marker.as_bytes()[..n]).unwrap_or(0)
}

/// Where the arguments value at the start of `text` ends (just after a `}`), or None while it is unfinished.
fn arguments_end(text: &str) -> Option<usize> {
    text.match_indices('}').map(|(at, _)| at + 1).find(|&end| json::parse(&text[..end]).is_ok())
}

/// A cursor over a call's text, matching `{"name": "…", "arguments": ` with any whitespace between tokens.
struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    /// Skip whitespace, then consume `word` or fail.
    fn token(&mut self, word: &str) -> Option<()> {
        self.at = self.text.len() - trim_start(&self.text[self.at..]).len();
        if !self.text[self.at..].starts_with(word) {
            return None;
        }
        self.at += word.len();
        Some(())
    }

    /// The text up to the next `"`, consumed with it.
    fn until_quote(&mut self) -> Option<&'a str> {
        let length = self.text[self.at..].find('"')?;
        let text = &self.text[self.at..self.at + length];
        self.at += length + 1;
        Some(text)
    }
}

/// The tool name a call's text starts with: `{ "name" : "NAME"`, and the cursor after it.
fn call_name(body: &str) -> Option<(&str, Scan<'_>)> {
    if !body.starts_with('{') {
        return None;
    }
    let mut scan = Scan { text: body, at: 1 };
    scan.token("\"name\"")?;
    scan.token(":")?;
    scan.token("\"")?;
    let name = scan.until_quote()?;
    Some((name, scan))
}

/// The name and where the arguments start in a call's text `{"name": "NAME", "arguments": `.
fn call_head(body: &str) -> Option<(&str, usize)> {
    let (name, mut scan) = call_name(body)?;
    scan.token(",")?;
    scan.token("\"arguments\"")?;
    scan.token(":")?;
    Some((name, body.len() - trim_start(&body[scan.at..]).len()))
}

/// One call's JSON object: {name, arguments}, partial while the reply is cut inside it; Err when off format.
fn call_of(body: &str, partial: bool, names: &HashSet<String>) -> Result<Option<Call>, String> {
    let call =
        |name: &str, arguments: &str| Ok(Some(Call { name: name.into(), arguments: arguments.into() }));
    let Some((name, start)) = call_head(body) else {
        return match (partial, call_name(body)) {
            (true, Some((name, _))) => call(name, "{"), // as llama.cpp shows a call once it is named
            (true, None) => Ok(None),
            (false, _) => Err("a call is not {\"name\": …, \"arguments\": …}".into()),
        };
    };
    let arguments = &body[start..];
    let Some(end) = arguments_end(arguments) else {
        let so_far = trim_end(arguments);
        return if partial {
            call(name, if so_far.is_empty() { "{" } else { so_far })
        } else {
            Err("unfinished arguments".into())
        };
    };
    if !partial && !names.contains(name) {
        return Err(format!("unknown tool {name}"));
    }
    if !partial && trim_start(trim_end(&arguments[end..])) != "}" {
        return Err("a call's object does not close after its arguments".into());
    }
    call(name, &arguments[..end])
}

/// The thought at the start of `text` (without its tags) and the text after it (None while it is open).
fn thought<'a>(reader: &Reader, text: &'a str, partial: bool) -> (&'a str, Option<&'a str>) {
    let mut rest = if reader.thinks { trim_start(text) } else { text };
    if partial && reader.thinks && rest.len() < THINK_OPEN.len() && THINK_OPEN.starts_with(rest) {
        rest = "";
    }
    if !reader.thinks || !(reader.forced_open || rest.starts_with(THINK_OPEN)) {
        return ("", Some(rest));
    }
    if let Some(after) = rest.strip_prefix(THINK_OPEN) {
        rest = after.strip_prefix('\n').unwrap_or(after);
    }
    let Some(close) = rest.find(THINK_CLOSE) else {
        let reasoning = if partial { &rest[..rest.len() - held_back(rest, THINK_CLOSE)] } else { rest };
        return (if partial && blank(reasoning) { "" } else { reasoning }, None);
    };
    let after = &rest[close + THINK_CLOSE.len()..];
    let after = after.strip_prefix('\n').unwrap_or(after);
    (if blank(&rest[..close]) { "" } else { &rest[..close] }, Some(after.strip_prefix('\n').unwrap_or(after)))
}

/// The reading of a reply: reasoning, content up to the first call, then the calls; Rejected when off format.
fn read(reader: &Reader, text: &str, partial: bool) -> Reading {
    let (reasoning, rest) = thought(reader, text, partial);
    let Some(rest) = rest else {
        return Reading::Message { content: String::new(), reasoning: reasoning.into(), calls: Vec::new() };
    };
    let start = if reader.calls { rest.find(CALL_OPEN) } else { None };
    let mut content = &rest[..start.unwrap_or(rest.len())];
    if partial && start.is_none() && reader.calls {
        content = &content[..content.len() - held_back(content, CALL_OPEN)];
    }
    let mut calls = Vec::new();
    let mut at = start;
    while let Some(from) = at {
        let body = &rest[from + CALL_OPEN.len()..];
        let close = body.find(CALL_CLOSE);
        match call_of(&body[..close.unwrap_or(body.len())], partial && close.is_none(), &reader.names) {
            Err(why) => return Reading::Rejected(why),
            Ok(call) => calls.extend(call),
        }
        let Some(close) = close else { break };
        let next = trim_start(&body[close + CALL_CLOSE.len()..]);
        let another = next.starts_with(CALL_OPEN) || (partial && CALL_OPEN.starts_with(next));
        if !next.is_empty() && !another {
            return Reading::Rejected("text after a call".into());
        }
        at = next.starts_with(CALL_OPEN).then(|| rest.len() - next.len());
    }
    Reading::Message { content: content.into(), reasoning: reasoning.into(), calls }
}

/// A reading as the protocol's READING object.
fn reading_json(reading: &Reading) -> Json {
    let text = |value: &str| Json::String(value.into());
    match reading {
        Reading::Rejected(why) => Json::Object(vec![("rejected".into(), text(why))]),
        Reading::Message { content, reasoning, calls } => Json::Object(vec![
            ("content".into(), text(content)),
            ("reasoning_content".into(), text(reasoning)),
            ("tool_calls".into(), Json::Array(calls.iter().map(call_json).collect())),
        ]),
    }
}

/// A call as the protocol's object: name, arguments as JSON text, an empty id.
fn call_json(call: &Call) -> Json {
    Json::Object(vec![
        ("name".into(), Json::String(call.name.clone())),
        ("arguments".into(), Json::String(call.arguments.clone())),
        ("id".into(), Json::String(String::new())),
    ])
}

/// The readers opened so far, by the number each `open` answered.
#[derive(Default)]
struct Parser {
    readers: HashMap<u64, Reader>,
    next: u64,
}

impl Parser {
    /// The answer's fields to one request (without its id), or an error message.
    fn answer(&mut self, request: &Json) -> Result<Vec<(String, Json)>, String> {
        let field = |name: &str| request.get(name).ok_or_else(|| format!("the request has no {name}"));
        let op = field("op")?.as_str().unwrap_or("");
        match op {
            "info" => Ok(vec![
                ("name".into(), Json::String("hermes-example".into())),
                ("revision".into(), Json::String("1-rust".into())),
            ]),
            "open" => Ok(match open(field("session")?) {
                Ok(reader) => {
                    let number = self.next;
                    self.next += 1;
                    self.readers.insert(number, reader);
                    vec![("reader".into(), Json::Number(number.to_string()))]
                }
                Err(why) => vec![("unsupported".into(), Json::String(why))],
            }),
            "parse" => {
                let text = field("text")?.as_str().ok_or("text is not a string")?;
                let reading = read(self.reader(request)?, text, *field("partial")? == Json::Bool(true));
                Ok(vec![("reading".into(), reading_json(&reading))])
            }
            "stream" => self.stream(request),
            "close" => {
                if let Some(number) = reader_number(request) {
                    self.readers.remove(&number);
                }
                Ok(Vec::new())
            }
            _ => Err(format!("unknown op {op}")),
        }
    }

    /// The reader a request names.
    fn reader(&self, request: &Json) -> Result<&Reader, String> {
        reader_number(request).and_then(|n| self.readers.get(&n)).ok_or_else(|| "no such reader".into())
    }

    /// A stream's answer: the reading of the text so far after each chunk, and the final one when finished.
    fn stream(&self, request: &Json) -> Result<Vec<(String, Json)>, String> {
        let reader = self.reader(request)?;
        let chunks = request.get("chunks").and_then(Json::as_array).ok_or("chunks is not an array")?;
        let mut text = String::new();
        let mut snapshots = Vec::new();
        for chunk in chunks {
            text.push_str(chunk.as_str().ok_or("a chunk is not a string")?);
            snapshots.push(reading_json(&read(reader, &text, true)));
        }
        let mut answer = vec![("snapshots".into(), Json::Array(snapshots))];
        if request.get("finish") == Some(&Json::Bool(true)) {
            answer.push(("final".into(), reading_json(&read(reader, &text, false))));
        }
        Ok(answer)
    }
}

/// The reader number a request carries, if it is one this parser could have answered.
fn reader_number(request: &Json) -> Option<u64> {
    match request.get("reader")? {
        Json::Number(text) => text.parse().ok(),
        _ => None,
    }
}

/// The answer line to one request line: its id first, then the answer or `error`.
fn answer_line(parser: &mut Parser, line: &str) -> String {
    let (id, fields) = match json::parse(line) {
        Ok(request) => {
            let id = request.get("id").cloned().unwrap_or(Json::Null);
            (id, parser.answer(&request).unwrap_or_else(|error| vec![("error".into(), Json::String(error))]))
        }
        Err(error) => (Json::Null, vec![("error".into(), Json::String(error))]),
    };
    let mut out = String::new();
    json::write(&Json::Object([vec![("id".into(), id)], fields].concat()), &mut out);
    out
}

/// Answer each line of stdin on stdout, flushed, until stdin closes.
fn serve() -> io::Result<()> {
    let mut parser = Parser::default();
    let mut stdout = BufWriter::new(io::stdout().lock());
    for line in io::stdin().lock().lines() {
        writeln!(stdout, "{}", answer_line(&mut parser, &line?))?;
        stdout.flush()?;
    }
    Ok(())
}

/// Serve on a thread with a large stack, so deeply nested arguments read like any others.
fn main() -> io::Result<()> {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(serve)?
        .join()
        .expect("the parser thread panicked")
}
