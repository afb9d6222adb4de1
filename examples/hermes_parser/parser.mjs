#!/usr/bin/env node
// A worked example of the subprocess parser protocol (README, "The subprocess parser protocol"): a parser of
// its own for the hermes format, `<think>…</think>` then `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>`.
// Run it with: chatparity sweep --parser 'cmd:node examples/hermes_parser/parser.mjs' --templates 'Qwen-Qwen3-*'
//              --expectations examples/hermes_parser/expectations
import { createInterface } from "node:readline";

const THINK_OPEN = "<think>", THINK_CLOSE = "</think>";
const CALL_OPEN = "<tool_call>\n", CALL_CLOSE = "\n</tool_call>";
const readers = new Map();
let nextReader = 0;

// A reader's settings, from the session the harness sends with `open`.
function open(session) {
  if (!/<tool_call>(\\n|\n)\{/.test(session.template_source)) return { unsupported: "not a hermes template" };
  // With reasoning_format "none" a thought is content like any other text, tags and all.
  const thinks = session.enable_thinking && session.template_source.includes(THINK_OPEN) && session.reasoning_format !== "none";
  const forcedOpen = thinks && (session.prompt ?? "").trimEnd().endsWith(THINK_OPEN);
  const calls = session.tools.length > 0 && session.tool_choice !== "none";
  const names = new Set(session.tools.map((tool) => tool.function.name));
  readers.set(nextReader, { thinks, forcedOpen, calls, names });
  return { reader: nextReader++ };
}

// The end of `text` that could be the start of `marker`, held back while a reply is still arriving.
function heldBack(text, marker) {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (marker.startsWith(text.slice(-n))) return n;
  }
  return 0;
}

// The arguments value at the start of `text`: its JSON text and where it ends, or null while it is unfinished.
function argumentsValue(text) {
  for (let end = text.indexOf("}") + 1; end > 0; end = text.indexOf("}", end) + 1) {
    try {
      JSON.parse(text.slice(0, end));
      return { json: text.slice(0, end), end };
    } catch {}
  }
  return null;
}

// One call's JSON object: {name, arguments}, partial while the reply is cut inside it.
function callOf(body, partial, names) {
  const head = /^\{\s*"name"\s*:\s*"([^"]*)"\s*,\s*"arguments"\s*:\s*/.exec(body);
  const named = partial && !head && /^\{\s*"name"\s*:\s*"([^"]*)"/.exec(body);
  if (named) return { name: named[1], arguments: "{", id: "" };  // as llama.cpp shows a call once it is named
  if (!head) return partial ? null : { error: "a call is not {\"name\": …, \"arguments\": …}" };
  const value = argumentsValue(body.slice(head[0].length));
  if (!value) return partial ? { name: head[1], arguments: body.slice(head[0].length).trimEnd() || "{", id: "" } : { error: "unfinished arguments" };
  if (!partial && !names.has(head[1])) return { error: `unknown tool ${head[1]}` };
  const after = body.slice(head[0].length + value.end);
  if (!partial && !/^\s*\}\s*$/.test(after)) return { error: "a call's object does not close after its arguments" };
  return { name: head[1], arguments: value.json, id: "" };
}

// The reading of a reply: reasoning, content up to the first call, then the calls; {rejected} when off format.
function read(reader, text, partial) {
  let rest = reader.thinks ? text.replace(/^\s+/, "") : text, reasoning = "";
  if (partial && reader.thinks && rest.length < THINK_OPEN.length && THINK_OPEN.startsWith(rest)) rest = "";
  if (reader.thinks && (reader.forcedOpen || rest.startsWith(THINK_OPEN))) {
    if (rest.startsWith(THINK_OPEN)) rest = rest.slice(THINK_OPEN.length).replace(/^\n/, "");
    const close = rest.indexOf(THINK_CLOSE);
    if (close < 0) {
      reasoning = partial ? rest.slice(0, rest.length - heldBack(rest, THINK_CLOSE)) : rest;
      if (partial && !reasoning.trim()) reasoning = "";
      return { content: "", reasoning_content: reasoning, tool_calls: [] };
    }
    reasoning = rest.slice(0, close).trim() ? rest.slice(0, close) : "";
    rest = rest.slice(close + THINK_CLOSE.length).replace(/^\n\n?/, "");
  }
  const start = reader.calls ? rest.indexOf(CALL_OPEN) : -1;
  let content = start < 0 ? rest : rest.slice(0, start);
  if (partial && start < 0 && reader.calls) content = content.slice(0, content.length - heldBack(content, CALL_OPEN));
  const calls = [];
  for (let at = start; at >= 0 && at < rest.length; ) {
    const body = rest.slice(at + CALL_OPEN.length), close = body.indexOf(CALL_CLOSE);
    const call = callOf(close < 0 ? body : body.slice(0, close), partial && close < 0, reader.names);
    if (call?.error) return { rejected: call.error };
    if (call) calls.push(call);
    if (close < 0) break;
    const after = body.slice(close + CALL_CLOSE.length), next = after.replace(/^\s+/, "");
    if (next && !next.startsWith(CALL_OPEN) && !(partial && CALL_OPEN.startsWith(next))) return { rejected: "text after a call" };
    at = next.startsWith(CALL_OPEN) ? rest.length - next.length : -1;
  }
  return { content, reasoning_content: reasoning, tool_calls: calls };
}

// The answer to one request line.
function answer(request) {
  const reader = readers.get(request.reader);
  switch (request.op) {
    case "info": return { name: "hermes-example", revision: "1" };
    case "open": return open(request.session);
    case "parse": return { reading: read(reader, request.text, request.partial) };
    case "stream": {
      let text = "";
      const snapshots = request.chunks.map((chunk) => read(reader, (text += chunk), true));
      return request.finish ? { snapshots, final: read(reader, text, false) } : { snapshots };
    }
    case "close": readers.delete(request.reader); return {};
    default: return { error: `unknown op ${request.op}` };
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  let response;
  try { response = answer(request); } catch (error) { response = { error: String(error) }; }
  process.stdout.write(JSON.stringify({ id: request.id, ...response }) + "\n");
}
