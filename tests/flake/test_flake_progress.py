"""Progress that tells the truth, driven by real `nix build`s of tiny derivations (sandbox
off, /bin/sh builders, seconds each): a variant is `building` only once its builder runs,
`built` only once its output exists, a failed one is never `built`, its time is its own
build's, and one failure costs no second `nix build`."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from kernel_builder.flake import flake_build, nix
from kernel_builder.flake.flake_build import RowStatus, VariantRow

DERIVATIONS = """
let
  mk = name: script: derivation {{
    inherit name; system = "x86_64-linux"; builder = "/bin/sh"; args = [ "-c" script ]; salt = "{salt}";
  }};
in {{
  fail = mk "kb-fail" "echo start; /bin/sleep {fail_sleep}; for i in 1 2 3; do echo noise $i; done; echo 'error: boom' >&2; exit 1";
  ok = mk "kb-ok" "echo start; /bin/sleep {ok_sleep}; echo done > $out";
}}
"""


class Recorder:
    def __init__(self) -> None:
        self.lines: list[tuple[float, str]] = []

    def changed(self, row: VariantRow, line: str) -> None:
        self.lines.append((time.monotonic(), line))

    def log(self, row: VariantRow, text: str) -> None:
        pass


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


def test_one_nix_build_states_follow_the_builders_and_times_are_build_times(tmp_path: Path, nix_calls: Path) -> None:
    expr = tmp_path / "drvs.nix"
    expr.write_text(DERIVATIONS.format(salt=time.time_ns(), fail_sleep=2, ok_sleep=2))
    rows = {"fail": VariantRow("fail"), "ok": VariantRow("ok")}
    recorder = Recorder()
    started = time.monotonic()
    link = tmp_path / "gcroots" / "result"
    link.parent.mkdir()
    report = nix.build(
        {"fail": "fail", "ok": "ok"}, nix.NixOptions(max_jobs=1), flake_args=["-f", str(expr)], out_link=str(link),
        on_event=flake_build._Tracker(rows, recorder, 1).on_event,
    )
    total = time.monotonic() - started
    builds = [line for line in nix_calls.read_text().splitlines() if line.startswith("build ")]
    assert len(builds) == 1, builds  # the failure caused no second `nix build`
    assert report.failed == ("fail",) and set(report.outputs) == {"ok"} and os.path.exists(report.outputs["ok"])
    assert os.readlink(link) == report.outputs["ok"]  # the survivor is a GC root, as after a run without failures
    said = [line for _, line in recorder.lines]
    assert said.count("building ok") == 1 and said.count("building fail") == 1
    assert "built ok in" in " ".join(said) and not any(line.startswith("built fail") for line in said)
    assert any(line.startswith("FAILED fail after") for line in said)
    assert rows["ok"].status is RowStatus.BUILT and rows["fail"].status is RowStatus.FAILED
    # -j 1: the two ran one after the other; each time is its own build (~2 s), not the queue
    assert total > 4
    for row in rows.values():
        assert row.seconds is not None and 1.5 < row.seconds < total - 1.5, (row.name, row.seconds, total)
    # the one that waited was announced when its builder ran, not when nix took both
    announced = {line.split()[1]: at for at, line in recorder.lines if line.startswith("building ")}
    assert abs(announced["ok"] - announced["fail"]) > 1.5
    assert rows["fail"].log[-1] == "error: boom" and rows["fail"].log[0] == "start"
    # each end was said when it happened (nix stops a build's activity only when it exits)
    ended = {line.split()[1]: at for at, line in recorder.lines if line.startswith(("built ", "FAILED "))}
    first, second = sorted(ended, key=ended.get)
    assert ended[second] - ended[first] > 1.5, ended


def test_two_at_once_the_failed_one_is_said_when_it_fails(tmp_path: Path) -> None:
    """-j 2: both run; the failing one (its builder's last line is the driver's `error:`) is
    FAILED when it ends, seconds before the other is built."""
    expr = tmp_path / "drvs.nix"
    expr.write_text(DERIVATIONS.format(salt=time.time_ns(), fail_sleep=1, ok_sleep=4))
    rows = {"fail": VariantRow("fail"), "ok": VariantRow("ok")}
    recorder = Recorder()
    nix.build({"fail": "fail", "ok": "ok"}, nix.NixOptions(max_jobs=2), flake_args=["-f", str(expr)],
              on_event=flake_build._Tracker(rows, recorder, 2).on_event)
    ended = {line.split()[1]: (at, line) for at, line in recorder.lines if line.startswith(("built ", "FAILED "))}
    assert ended["fail"][1].startswith("FAILED fail after") and ended["ok"][1].startswith("built ok in")
    assert ended["ok"][0] - ended["fail"][0] > 2, ended
    assert rows["fail"].seconds is not None and rows["fail"].seconds < 3 and 3 < rows["ok"].seconds < 6


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
    expr.write_text(DERIVATIONS.format(salt=time.time_ns(), fail_sleep=0, ok_sleep=0))
    gone, kept = tmp_path / "scratch" / "relu", tmp_path / "kept" / "relu"
    gone.mkdir(parents=True)
    kept.mkdir(parents=True)

    def build_in(kernel: Path) -> str:
        link = flake_build._gcroot(kernel)
        report = nix.build({"ok": "ok"}, nix.NixOptions(max_jobs=1), flake_args=["-f", str(expr)], out_link=str(link))
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
    expr.write_text(DERIVATIONS.format(salt=time.time_ns(), fail_sleep=0, ok_sleep=0))  # another output
    other = build_in(kept)
    assert [p.parent.name for p in roots.glob("*/result")] == [kept.as_posix().strip("/").replace("/", "_")]
    assert output in dead() and other not in dead()
