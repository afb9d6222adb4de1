"""The oracle client survives crashes, kills and timeouts; the oracle answers malformed requests with errors."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import threading
import time

import pytest

from chatparity.model import Message
from oracle.build import ensure_binary
from oracle.client import Oracle, OracleCrashed, OracleError, OracleTimeout

QUESTION = [{"role": "user", "content": "hi"}]
REPLY = "<think>x</think>hello"


@pytest.fixture
def own_oracle():
    """An oracle client of this test alone, so killing its child disturbs no other test."""
    client = Oracle(timeout=10.0)
    yield client
    client.close()


@pytest.fixture
def qwen3(upstream_templates) -> dict:
    """A render request for Qwen3 with no tools."""
    return {"template": (upstream_templates / "Qwen-Qwen3-0.6B.jinja").read_text(), "messages": QUESTION}


def test_a_crash_is_reported_for_that_request_and_handles_survive(own_oracle, qwen3):
    rendered = own_oracle.render(qwen3)
    expected = own_oracle.parse(rendered.handle, REPLY)
    first_pid = own_oracle.pid
    with pytest.raises(OracleCrashed, match="SIGABRT"):
        own_oracle.request({"op": "crash"})
    assert own_oracle.parse(rendered.handle, REPLY) == expected == Message("hello", "x")
    assert own_oracle.pid not in (None, first_pid)


def test_a_child_holding_its_share_of_handles_is_replaced_and_old_handles_still_read(
    own_oracle, qwen3, monkeypatch
):
    monkeypatch.setattr("oracle.client.CHILD_HANDLES_KEPT", 3)
    first = own_oracle.render(qwen3)
    pids = [own_oracle.pid]
    for _ in range(5):
        own_oracle.render({**qwen3, "messages": [{"role": "user", "content": f"hi {len(pids)}"}]})
        pids.append(own_oracle.pid)
    assert pids[:3] == [pids[0]] * 3 and pids[3:6] == [pids[3]] * 3 and pids[3] != pids[0]
    assert own_oracle.parse(first.handle, REPLY) == Message("hello", "x")


def test_a_template_rendered_again_after_others_renders_and_reads_as_in_a_fresh_child(
    own_oracle, qwen3, upstream_templates
):
    gpt_oss = {"template": (upstream_templates / "openai-gpt-oss-120b.jinja").read_text(), "messages": QUESTION}
    first = own_oracle.render(qwen3)
    own_oracle.render(gpt_oss)
    own_oracle.render({**qwen3, "enable_thinking": False})
    again = own_oracle.render(qwen3)
    with Oracle(timeout=10.0) as fresh:
        alone = fresh.render(qwen3)
        read_alone = fresh.parse(alone.handle, REPLY)
    assert dataclasses.replace(first, handle=0) == dataclasses.replace(again, handle=0)
    assert dataclasses.replace(again, handle=0) == dataclasses.replace(alone, handle=0)
    assert own_oracle.parse(again.handle, REPLY) == read_alone == Message("hello", "x")


def test_a_child_killed_mid_request_is_reported_and_restarted(own_oracle, qwen3):
    rendered = own_oracle.render(qwen3)
    pid = own_oracle.pid
    killer = threading.Timer(0.3, os.kill, (pid, signal.SIGKILL))
    killer.start()
    started = time.monotonic()
    with pytest.raises(OracleCrashed, match="SIGKILL"):
        own_oracle.request({"op": "sleep", "seconds": 5})
    assert time.monotonic() - started < 4
    killer.join()
    assert own_oracle.parse(rendered.handle, REPLY) == Message("hello", "x")
    assert own_oracle.info()["llama_cpp_commit"]


def test_a_request_over_the_timeout_is_killed_and_the_next_succeeds(qwen3):
    with Oracle(timeout=0.5) as client:
        rendered = client.render(qwen3)
        pid = client.pid
        started = time.monotonic()
        with pytest.raises(OracleTimeout, match="over 0.5s"):
            client.request({"op": "sleep", "seconds": 5})
        assert time.monotonic() - started < 3
        assert client.parse(rendered.handle, REPLY) == Message("hello", "x")
        assert client.pid != pid


@pytest.mark.parametrize("request_fields, message", [
    ({"op": "render", "messages": QUESTION}, "missing field 'template'"),
    ({"op": "render", "template": "{{ 1 }}", "messages": "hi"}, "'messages' must be an array"),
    ({"op": "render", "template": "x", "messages": QUESTION, "now": "June"}, "not an ISO time"),
    ({"op": "render", "template": "x", "messages": QUESTION, "tool_choice": "any"}, "Invalid tool_choice"),
    ({"op": "render", "template": "x", "messages": QUESTION, "reasoning_format": "r1"}, "Unknown reasoning format"),
    ({"op": "parse", "handle": 99999, "text": ""}, "unknown handle 99999"),
    ({"op": "frobnicate"}, "unknown op 'frobnicate'"),
])
def test_a_malformed_request_is_an_error_and_the_oracle_keeps_serving(oracle, request_fields, message):
    pid = oracle.info() and oracle.pid
    with pytest.raises(OracleError, match=message):
        oracle.request(request_fields)
    assert oracle.pid == pid
    assert oracle.info()["build_id"]


def test_an_unknown_client_handle_is_an_error(oracle):
    with pytest.raises(OracleError, match="unknown oracle handle"):
        oracle.parse(123456, "x")


def exchange(lines: list[str]) -> list[dict]:
    """Send raw lines to a fresh oracle process and read its responses."""
    result = subprocess.run([str(ensure_binary())], input="\n".join(lines) + "\n", capture_output=True,
                            text=True, timeout=60, check=False, env={**os.environ, "TZ": "UTC"})
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_the_protocol_answers_every_line_with_its_id_even_when_malformed():
    responses = exchange(['{"id": 1, "op": "info"', "[1, 2]", '{"id": "b", "op": "info"}'])
    assert "malformed JSON request" in responses[0]["error"] and responses[0]["id"] is None
    assert responses[1] == {"error": "a request must be a JSON object", "id": None}
    assert responses[2]["id"] == "b" and responses[2]["llama_cpp_commit"]


def test_the_protocol_refuses_a_boundary_inside_a_utf8_sequence():
    render = {"id": 1, "op": "render", "template": "{{ messages[0].content }}", "messages": QUESTION}
    stream = {"id": 2, "op": "stream", "handle": 1, "text": "é!", "boundaries": [1]}
    responses = exchange([json.dumps(render), json.dumps(stream)])
    assert responses[0]["handle"] == 1
    assert responses[1] == {"error": "boundary 1 splits a UTF-8 sequence", "id": 2}


def test_llama_cpp_times_its_own_whole_read_and_server_loop(oracle, qwen3):
    handle = oracle.render(qwen3).handle
    text = "<think>" + "thinking " * 200 + "</think>" + "answer " * 200
    timing = oracle.time(handle, text, list(range(1, len(text) + 1)), repeat=2)
    assert timing.whole > 0 and timing.stream > 10 * timing.whole
    assert oracle.time(handle, text, [], repeat=1).stream == 0


def test_a_timing_request_checks_its_boundaries_as_a_stream_does(oracle, qwen3):
    handle = oracle.render(qwen3).handle
    with pytest.raises(ValueError, match="boundaries must increase"):
        oracle.time(handle, REPLY, [5, 3])
    render = {"id": 1, "op": "render", "template": "{{ messages[0].content }}", "messages": QUESTION}
    timing = {"id": 2, "op": "time", "handle": 1, "text": REPLY, "boundaries": [5, 3]}
    assert exchange([json.dumps(render), json.dumps(timing)])[1] == {
        "error": "boundaries must increase, got 3 after 5", "id": 2}
