"""Two jobs at once (reports.forked): results, a failing or dying child, an error here, the serial fallback, and
the report files a forked publish writes. Each case runs in a fresh interpreter: a test worker runs threads,
and forking is refused where another thread runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_reports_publish import FILES, a_run

ROOT = Path(__file__).resolve().parent.parent
PRELUDE = """
import json, os, sys, threading, time
from reports.forked import ForkedJobError, both
"""


def run_script(body: str) -> dict:
    """Run PRELUDE and `body` in a fresh interpreter at the repository root; the JSON it prints last."""
    done = subprocess.run([sys.executable, "-c", PRELUDE + body], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_second_job_runs_in_a_child_and_both_results_come_back() -> None:
    found = run_script("""
mine, theirs = both(lambda: ("here", os.getpid()), lambda: ("there", os.getpid()))
print(json.dumps({"mine": mine, "theirs": theirs, "pid": os.getpid()}))
""")
    assert found["mine"] == ["here", found["pid"]]
    assert found["theirs"][0] == "there" and found["theirs"][1] != found["pid"]


def test_a_failing_child_job_raises_here_with_its_traceback() -> None:
    found = run_script("""
try:
    both(lambda: 1, lambda: 1 / 0)
    print(json.dumps({"raised": None}))
except ForkedJobError as error:
    print(json.dumps({"raised": str(error)}))
""")
    assert found["raised"] is not None
    assert "job failed" in found["raised"] and "ZeroDivisionError" in found["raised"]


def test_a_child_that_dies_is_named_with_its_exit_code() -> None:
    found = run_script("""
try:
    both(lambda: 1, lambda: os._exit(3))
    print(json.dumps({"raised": None}))
except ForkedJobError as error:
    print(json.dumps({"raised": str(error)}))
""")
    assert found["raised"] == "the forked child ended (exit code 3) before its job did"


def test_an_error_here_ends_the_child_and_is_raised() -> None:
    found = run_script("""
try:
    both(lambda: int("x"), lambda: time.sleep(600))
    print(json.dumps({"raised": None}))
except ValueError as error:
    print(json.dumps({"raised": str(error), "children": len(__import__("multiprocessing").active_children())}))
""")
    assert found == {"raised": "invalid literal for int() with base 10: 'x'", "children": 0}


def test_with_another_thread_running_both_jobs_run_in_this_process() -> None:
    found = run_script("""
stop = threading.Event()
waiter = threading.Thread(target=stop.wait)
waiter.start()
mine, theirs = both(os.getpid, os.getpid)
stop.set()
waiter.join()
print(json.dumps({"mine": mine, "theirs": theirs, "pid": os.getpid()}))
""")
    assert found["mine"] == found["theirs"] == found["pid"]


def test_a_forked_publish_writes_the_files_a_serial_one_does(tmp_path: Path) -> None:
    run = a_run(tmp_path / "run")
    found = run_script(f"""
from pathlib import Path
import reports.forked
from reports.publish import publish
run = Path({str(run)!r})
names = {FILES!r}
safe = reports.forked.fork_is_safe()
forked = {{name: (run / name).read_text() for name in names}} if publish(run) else None
reports.forked.fork_is_safe = lambda: False
publish(run)
print(json.dumps({{"safe": safe, "differ": [name for name in names if (run / name).read_text() != forked[name]]}}))
""")
    assert found == {"safe": True, "differ": []}
