"""`python tests/protocol_recorder.py TRANSCRIPT COMMAND ARGS`: a parser program that forwards every request
line to COMMAND and its answer back, appending both to TRANSCRIPT as `{"request": …, "answer": …}` lines."""

from __future__ import annotations

import json
import subprocess
import sys


def main(transcript: str, command: list[str]) -> None:
    """Forward request lines until stdin closes, recording each exchange."""
    program = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8"
    )
    assert program.stdin is not None and program.stdout is not None
    with open(transcript, "a", encoding="utf-8") as record:
        for line in sys.stdin:
            program.stdin.write(line)
            program.stdin.flush()
            answer = program.stdout.readline()
            exchange = {"request": json.loads(line), "answer": json.loads(answer)}
            record.write(json.dumps(exchange, ensure_ascii=False) + "\n")
            record.flush()
            sys.stdout.write(answer)
            sys.stdout.flush()
    program.stdin.close()
    program.wait()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
