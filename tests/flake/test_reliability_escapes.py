"""A kernel's tests (and builds) cannot drive the user's terminal through kernel-builder's
report (issue 45 #25): escape sequences are dropped and other control characters shown
as ``\\xNN``, in everything relayed from a test run's record and from Nix's log lines;
newlines and tabs stay. A run record is faked here as the runner writes it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kernel_builder import nix
from kernel_builder.flake.kernel_tests import parse_outcome

# clear the screen, set the window title, a hyperlink, move the cursor, ring the bell, a
# carriage return that would overwrite the line, C1's CSI, and a colour
HOSTILE = ("\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]8;;http://x.invalid\x1b\\link\x1b]8;;\x1b\\"
           "\x1b[5Aup\x07bell\rover\x9b31mc1\x1b[31mred\x1b[0m\x1bc")
TERMINAL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_printable_drops_escapes_and_shows_other_controls() -> None:
    text = nix.printable(HOSTILE + "\n\tindented\r\nnext")
    assert not TERMINAL.search(text), repr(text)
    assert text == "linkup\\x07bell\\x0doverc1red\n\tindented\nnext"


def _record(out: Path, *, log: str, message: str, status: str = "crashed") -> Path:
    out.mkdir()
    (out / "exit-code").write_text("1\n")
    (out / "outcome.json").write_text(json.dumps({"status": status, "test": f"tests/test_x.py::test_{HOSTILE}", "message": message}))
    (out / "log").write_text(log)
    return out


def test_a_test_runs_record_is_relayed_without_terminal_controls(tmp_path: Path) -> None:
    log = f"=== FAILURES ===\n{HOSTILE}\n=== 1 failed in 0.10s ===\n"
    outcome = parse_outcome("v", _record(tmp_path / "run", log=log, message=f"killed {HOSTILE}"))
    shown = [outcome.summary, outcome.message, outcome.stopped_in or "", outcome.failure_output(),
             *(f"{f.test} {f.message}" for f in outcome.failures)]
    for text in shown:
        assert not TERMINAL.search(text.replace("\n", "").replace("\t", "")), repr(text)
    assert outcome.summary.startswith("crashed: killed linkup\\x07bell")
    assert "red" in outcome.failure_output() and "\n" in outcome.failure_output()


def test_a_failed_runs_summary_line_from_the_log_is_sanitised(tmp_path: Path) -> None:
    log = f"=== FAILURES ===\nboom\n=== 1 failed \x1b]0;x\x07in 0.10s ===\n"
    (tmp_path / "run").mkdir()
    out = tmp_path / "run"
    (out / "exit-code").write_text("1\n")
    (out / "outcome.json").write_text(json.dumps({"status": "failed"}))
    (out / "log").write_text(log)
    outcome = parse_outcome("v", out)
    assert outcome.summary == "1 failed in 0.10s"


def test_nix_log_lines_are_sanitised() -> None:
    """``-L`` relays build and test output line by line (``build`` and ``test``)."""
    line = "@nix " + json.dumps({"action": "result", "type": 101, "id": 7, "fields": [HOSTILE]})
    event = nix.parse_log_line(line)
    assert event is not None and event.kind == "log" and not TERMINAL.search(event.text)
    msg = nix.parse_log_line("@nix " + json.dumps({"action": "msg", "level": 0, "msg": f"error: \x1b[31;1m{HOSTILE}"}))
    assert msg is not None and msg.kind == "error" and not TERMINAL.search(msg.text)
