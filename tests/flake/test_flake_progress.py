"""Progress that tells the truth, driven by real `nix build`s of tiny derivations (sandbox
off, /bin/sh builders that wait for the test to open their gate): a variant is `building` only once its builder runs,
`built` only once its output exists, a failed one is never `built`, its time is its own
build's, and one failure costs no second `nix build`."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.flake import flake_build
from kernel_builder.flake.flake_build import RowStatus, VariantRow

DERIVATIONS = """
let
  gate = name: ": > {gates}/started-${{name}}; echo start; n=0; while [ ! -e {gates}/go-${{name}} ]; do n=$((n+1)); [ $n -lt 2400 ] || exit 2; /bin/sleep 0.05; done";
  mk = name: script: derivation {{
    inherit name; system = "x86_64-linux"; builder = "/bin/sh"; args = [ "-c" script ]; salt = "{salt}";
  }};
in {{
  fail = mk "kb-fail" "${{gate "fail"}}; for i in 1 2 3; do echo noise $i; done; echo 'error: boom' >&2; exit 1";
  ok = mk "kb-ok" "${{gate "ok"}}; echo done > $out";
}}
"""
# Each builder (sandbox off) says it started, then waits for its gate file: the tests open
# the gates on what they observed, never on the clock, so a loaded machine only makes the
# waits longer. A builder gives up after 2 minutes if a failed test never opens its gate.
WAIT = 120.0


class Recorder:
    """The tracker's lines with the time each was said; tests wait on them."""

    def __init__(self) -> None:
        self.lines: list[tuple[float, str]] = []
        self._cond = threading.Condition()

    def changed(self, row: VariantRow, line: str) -> None:
        with self._cond:
            self.lines.append((time.monotonic(), line))
            self._cond.notify_all()

    def log(self, row: VariantRow, text: str) -> None:
        pass

    def said(self) -> list[str]:
        with self._cond:
            return [line for _, line in self.lines]

    def wait_for(self, prefix: str) -> float:
        """When a line starting with ``prefix`` was said (waits for it)."""
        def found() -> float | None:
            return next((at for at, line in self.lines if line.startswith(prefix)), None)
        with self._cond:
            assert self._cond.wait_for(lambda: found() is not None, timeout=WAIT), (prefix, self.lines)
            return found()


@pytest.fixture
def nix_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `nix` first on PATH that records each command line, then runs the real one."""
    real = nix.nix_executable()
    record = tmp_path / "nix-calls"
    shim = tmp_path / "bin" / "nix"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$*" >> {record}\nexec {real} "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    return record


def _open_gates(tmp_path: Path) -> Path:
    """A gate directory whose gates are open: the builders run straight through."""
    gates = tmp_path / "open-gates"
    gates.mkdir(exist_ok=True)
    for name in ("fail", "ok"):
        (gates / f"go-{name}").touch()
    return gates


def _start(tmp_path: Path, rows: dict[str, VariantRow], recorder: Recorder, jobs: int, **kwargs) -> tuple[Path, threading.Thread, dict]:
    """Write the derivations and run one `nix build` of both in a thread; returns the gate
    directory, the thread and where its report will be."""
    gates = tmp_path / "gates"
    gates.mkdir()
    expr = tmp_path / "drvs.nix"
    expr.write_text(DERIVATIONS.format(salt=time.time_ns(), gates=gates))
    result: dict = {}

    def run() -> None:
        result["report"] = nix.build(
            {"fail": "fail", "ok": "ok"}, nix.NixOptions(max_jobs=jobs, sandbox=False), flake_args=["-f", str(expr)],
            on_event=flake_build._Tracker(rows, recorder, jobs).on_event, **kwargs,
        )

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return gates, thread, result


def test_one_nix_build_states_follow_the_builders_and_times_are_build_times(tmp_path: Path, nix_calls: Path) -> None:
    rows = {"fail": VariantRow("fail"), "ok": VariantRow("ok")}
    recorder = Recorder()
    link = tmp_path / "gcroots" / "result"
    link.parent.mkdir()
    gates, thread, result = _start(tmp_path, rows, recorder, 1, out_link=str(link))
    try:
        # -j 1: one builder runs; the other is queued, and not said to be building
        first = recorder.wait_for("building ")
        running, queued = ("fail", "ok") if recorder.said()[0] == "building fail" else ("ok", "fail")
        assert not (gates / f"started-{queued}").exists() and f"building {queued}" not in recorder.said()
        time.sleep(1.0)  # the queued one waits at least this long: its time must not include it
        (gates / f"go-{running}").touch()
        recorder.wait_for("FAILED fail" if running == "fail" else "built ok")  # said when it ended, not at the end
        second = recorder.wait_for(f"building {queued}")  # said when its builder was started
        assert not any(line.startswith(("built ok", "FAILED fail")) and queued in line for line in recorder.said())
        (gates / f"go-{queued}").touch()
        thread.join(WAIT)
        assert not thread.is_alive()
    finally:
        for name in ("fail", "ok"):
            (gates / f"go-{name}").touch()
    report = result["report"]
    builds = [line for line in nix_calls.read_text().splitlines() if line.startswith("build ") and "--dry-run" not in line]
    assert len(builds) == 1, builds  # the failure caused no second `nix build`
    assert report.failed == ("fail",) and set(report.outputs) == {"ok"} and os.path.exists(report.outputs["ok"])
    assert os.readlink(link) == report.outputs["ok"]  # the survivor is a GC root, as after a run without failures
    said = recorder.said()
    assert said.count("building ok") == 1 and said.count("building fail") == 1
    assert "built ok in" in " ".join(said) and not any(line.startswith("built fail") for line in said)
    assert any(line.startswith("FAILED fail after") for line in said)
    assert rows["ok"].status is RowStatus.BUILT and rows["fail"].status is RowStatus.FAILED
    # each time is its own build's: the first held its gate at least 1 s; the queued one's
    # time runs from its own start, so it leaves out the first's build
    ended = recorder.wait_for("FAILED fail" if queued == "fail" else "built ok")
    assert rows[running].seconds >= 1.0
    assert rows[queued].seconds <= ended - second + 0.5 < ended - first - 1.0 + 0.5
    assert rows["fail"].log[-1] == "error: boom" and rows["fail"].log[0] == "start"


def test_two_at_once_the_failed_one_is_said_when_it_fails(tmp_path: Path) -> None:
    """-j 2: both run; the failing one (its builder's last line is the driver's `error:`) is
    FAILED when it ends, while the other is still building."""
    rows = {"fail": VariantRow("fail"), "ok": VariantRow("ok")}
    recorder = Recorder()
    gates, thread, result = _start(tmp_path, rows, recorder, 2)
    try:
        recorder.wait_for("building fail")
        recorder.wait_for("building ok")
        (gates / "go-fail").touch()
        recorder.wait_for("FAILED fail after")  # while ok's gate is still closed
        assert not any(line.startswith("built ok") for line in recorder.said())
        assert rows["ok"].status is RowStatus.BUILDING
        (gates / "go-ok").touch()
        thread.join(WAIT)
        assert not thread.is_alive()
    finally:
        for name in ("fail", "ok"):
            (gates / f"go-{name}").touch()
    assert recorder.wait_for("built ok in") > recorder.wait_for("FAILED fail after")
    assert rows["fail"].seconds is not None and rows["ok"].seconds is not None


def test_a_printed_nix_command_works_pasted_into_a_plain_shell(tmp_path: Path) -> None:
    """Kernel-builder runs nix with its settings in NIX_CONFIG; the commands its messages
    print carry them as options, so they work in a shell that has none."""
    argv = nix.nix_argv("eval", "--json", "--expr", "if builtins ? getFlake then 1 else 0")
    command = nix.shell_command(argv)
    assert "--option experimental-features 'nix-command flakes'" in command
    plain = {k: v for k, v in os.environ.items() if k != "NIX_CONFIG"}
    bare = subprocess.run(["bash", "-c", " ".join(argv[:1] + ["flake", "metadata", str(tmp_path)])], capture_output=True, text=True, env=plain)
    assert "experimental" in bare.stderr  # a plain shell lacks the settings
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=plain, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


@pytest.mark.parametrize(("machine", "said"), [("ssh://root@b1", "building v on ssh://root@b1"), ("", "building v")])
def test_a_variant_is_said_to_build_where_its_first_part_builds(machine: str, said: str) -> None:
    """Per object: a variant's plan logs before the variant's own derivation starts; the row
    is announced on the machine that part builds on (the variant's start then settles it)."""
    rows = {"v": VariantRow("v")}
    recorder = Recorder()
    tracker = flake_build._Tracker(rows, recorder, 0)
    tracker.on_event(nix.BuildEvent("log", drv="/nix/store/x-k-v-plan.drv", text="planning", machine=machine, target="v"))
    assert [line for _, line in recorder.lines] == [said]
    assert rows["v"].status is RowStatus.BUILDING


def test_the_roots_of_a_deleted_kernel_directory_are_dropped_by_the_next_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Builds in scratch directories (test runs, CI clones) once kept their outputs rooted
    forever; a full disk ended a CI run. The next build drops the roots of deleted kernels."""
    monkeypatch.setenv("KERNEL_BUILDER_STATE_DIR", str(tmp_path / "state"))
    expr = tmp_path / "drvs.nix"
    expr.write_text(DERIVATIONS.format(salt=time.time_ns(), gates=_open_gates(tmp_path)))
    gone, kept = tmp_path / "scratch" / "relu", tmp_path / "kept" / "relu"
    gone.mkdir(parents=True)
    kept.mkdir(parents=True)

    def build_in(kernel: Path) -> str:
        link = flake_build._gcroot(kernel)
        report = nix.build({"ok": "ok"}, nix.NixOptions(max_jobs=1, sandbox=False), flake_args=["-f", str(expr)], out_link=str(link))
        assert os.readlink(link) == report.outputs["ok"]
        return report.outputs["ok"]

    def dead() -> set[str]:
        listed = subprocess.run(["nix-store", "--gc", "--print-dead"], capture_output=True, text=True, check=True)
        return set(listed.stdout.split())

    output = build_in(gone)
    assert output not in dead()  # rooted while its kernel directory exists
    build_in(kept)
    assert output not in dead()
    roots = tmp_path / "state" / "gcroots"
    assert len(list(roots.glob("*/result"))) == 2

    gone.rmdir()
    expr.write_text(DERIVATIONS.format(salt=time.time_ns(), gates=_open_gates(tmp_path)))  # another output
    other = build_in(kept)
    assert [p.parent.name for p in roots.glob("*/result")] == [flake_build.gcroot_dir_name(kept)]
    assert output in dead() and other not in dead()
