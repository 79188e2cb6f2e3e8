"""`compiling k/n` per variant while Nix builds its objects: the naming rule, the counting,
the tracker fed by internal-json streams (synthesized ones replayed through `nix.build` by
a stand-in `nix`, and a real `nix build` of tiny derivations named like the per-object
graph), and the live table's rendering."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.flake import flake_build
from kernel_builder.flake.flake_build import RowStatus, VariantRow
from kernel_builder.flake.object_progress import ObjectCounts
from kernel_builder.nix.steps import Step, Unit, step_of

CPU = "torch213-cxx11-cpu-x86_64-linux"
CPU_SHORT = "torch-cpu"
VARIANTS = [CPU, CPU_SHORT, "torch213-cxx11-cu130-x86_64-linux"]


def _drv(name: str, digest: str = "0" * 32) -> str:
    return f"/nix/store/{digest}-{name}.drv"


# --- the naming rule ---------------------------------------------------------------------

def test_step_of_reads_plan_object_and_link_names_of_each_variant() -> None:
    assert step_of(_drv(f"relu-{CPU}-plan"), VARIANTS) == Unit(CPU, Step.PLAN)
    assert step_of(_drv(f"relu-{CPU}-link"), VARIANTS) == Unit(CPU, Step.LINK)
    assert step_of(_drv(f"0-obj-relu-{CPU}-relu_cpu_relu_cpu.cpp"), VARIANTS) == Unit(CPU, Step.OBJECT, "relu_cpu_relu_cpu.cpp")
    # an output path (no .drv) and a kernel name with dashes
    assert step_of(f"/nix/store/{'1' * 32}-0-obj-my-kernel-{CPU}-a.cpp", VARIANTS) == Unit(CPU, Step.OBJECT, "a.cpp")
    # the variant derivation itself, another variant's, and unrelated derivations are not steps
    assert step_of(_drv(f"relu-{CPU}"), VARIANTS) is None
    assert step_of(_drv("0-obj-relu-torch212-cxx11-cpu-x86_64-linux-a.cpp"), VARIANTS) is None
    assert step_of(_drv("python3-3.11-env"), VARIANTS) is None
    assert step_of(_drv(f"0-obj-relu-{CPU}-"), VARIANTS) is None  # an object names its source
    # the naming rules before objects sorted first are no object
    assert step_of(_drv(f"relu-{CPU}-obj-a.cpp"), VARIANTS) is None
    assert step_of(_drv(f"relu-obj-{CPU}-a.cpp"), VARIANTS) is None
    assert step_of(None, VARIANTS) is None
    # a torch-free unit's object, every torch version's: named without the torch part
    assert step_of(_drv("0-obj-relu-cxx11-cpu-x86_64-linux-a.cpp"), VARIANTS) == Unit(CPU, Step.OBJECT, "a.cpp")
    assert step_of(_drv(f"relu-{CPU}-deps"), VARIANTS) == Unit(CPU, Step.PLAN)  # the plan's second half


def test_step_of_prefers_the_longest_variant_name() -> None:
    # "torch-cpu" is a suffix of nothing here, but "x-torch-cpu-link" must not be read as
    # a longer name's; with both `torch-cpu` and `cu-torch-cpu` selected the longer wins.
    names = ["torch-cpu", "cu-torch-cpu"]
    assert step_of(_drv("k-cu-torch-cpu-link"), names) == Unit("cu-torch-cpu", Step.LINK)
    assert step_of(_drv("k-torch-cpu-link"), names) == Unit("torch-cpu", Step.LINK)


# --- the counting ------------------------------------------------------------------------

def test_counts_say_planning_then_compiling_k_of_n_then_linking() -> None:
    counts = ObjectCounts()
    plan, link = Unit(CPU, Step.PLAN), Unit(CPU, Step.LINK)
    objects = [(Unit(CPU, Step.OBJECT, s), _drv(f"0-obj-relu-{CPU}-{s}")) for s in ("a.cpp", "b.cpp", "c.cpp")]
    assert counts.phase() is None
    counts.start(plan, _drv(f"relu-{CPU}-plan"))
    assert counts.phase() == "planning"
    counts.finish(plan, _drv(f"relu-{CPU}-plan"))
    counts.plan(drv for _, drv in objects)
    assert counts.phase() is None and counts.total == 3
    counts.start(*objects[0])
    assert counts.phase() == "compiling 0/3"
    assert counts.finish(*objects[0]) and counts.phase() == "compiling 1/3"
    assert not counts.finish(*objects[0]), "a second stop of one object counts once"
    for unit, drv in objects[1:]:
        counts.start(unit, drv)
        counts.finish(unit, drv)
    assert counts.phase() == "compiling 3/3"
    counts.start(link, _drv(f"relu-{CPU}-link"))
    assert counts.phase() == "linking"


def test_counts_without_a_plan_grow_with_the_objects_that_start() -> None:
    counts = ObjectCounts()
    a, b = (Unit(CPU, Step.OBJECT, s) for s in ("a.cpp", "b.cpp"))
    counts.start(a, "a.drv")
    assert counts.phase() == "compiling 0/1"
    counts.finish(a, "a.drv")
    counts.start(b, "b.drv")
    assert counts.phase() == "compiling 1/2"
    counts.finish(b, "b.drv")
    assert counts.phase() == "compiling 2/2"


# --- the tracker, fed by nix.build from a replayed internal-json stream ------------------

class Recorder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.logged: list[tuple[str, str]] = []

    def changed(self, row: VariantRow, line: str) -> None:
        self.lines.append(line)

    def log(self, row: VariantRow, text: str) -> None:
        self.logged.append((row.name, text))


class Stream:
    """An internal-json stream as nix 2.8 writes it (the shapes recorded from a real build)."""

    BUILDS = 900

    def __init__(self) -> None:
        self.lines = [json.dumps({"action": "start", "id": self.BUILDS, "level": 0, "text": "", "type": 104})]
        self.done = self.failed = 0

    def _add(self, **fields: object) -> None:
        self.lines.append(json.dumps(fields))

    def start(self, ident: int, drv: str) -> None:
        self._add(action="start", fields=[drv, "", 1, 1], id=ident, level=3, text=f"building '{drv}'", type=105)

    def log(self, ident: int, text: str) -> None:
        self._add(action="result", fields=[text], id=ident, type=101)

    def stop(self, ident: int, *, ok: bool = True) -> None:
        self.done += ok
        self.failed += not ok
        self._add(action="result", fields=[self.done, 9, 0, self.failed], id=self.BUILDS, type=105)
        self._add(action="stop", id=ident)

    def fail(self, drv: str) -> None:
        self._add(action="msg", level=0, msg=f"error: builder for '{drv}' failed with exit code 1")

    def text(self) -> str:
        return "".join(f"@nix {line}\n" for line in self.lines)


def _replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: Stream, rows: dict[str, VariantRow],
            planned: dict[str, list[str]], code: int = 0) -> Recorder:
    """Run ``nix.build`` against a stand-in ``nix`` that writes ``stream`` to stderr."""
    recorded = tmp_path / "stream.jsonl"
    recorded.write_text(stream.text())
    shim = tmp_path / "bin" / "nix"
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\ncat {recorded} >&2\necho '[]'\nexit {code}\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(nix.runner, "nix_executable", lambda: str(shim))  # what nix_argv calls
    recorder = Recorder()
    asked: list[str] = []

    def objects_to_build(drv: str, variants: list[str]) -> list[str]:
        asked.append(drv)
        return planned.get(step_of(drv, variants).variant, [])

    tracker = flake_build._Tracker(rows, recorder, 1, objects_to_build=objects_to_build)
    nix.build({name: name for name in rows}, nix.NixOptions(max_jobs=1), on_event=tracker.on_event)
    assert len(asked) <= len(rows), "the store is asked once per variant, at its first object"
    return recorder


def test_a_replayed_stream_shows_compiling_k_of_n_per_variant_then_linking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cpu = {s: _drv(f"0-obj-relu-{CPU}-{s}", f"{i:032d}") for i, s in enumerate(("a.cpp", "b.cpp", "c.cpp"))}
    noarch = {"x.cpp": _drv(f"0-obj-relu-{CPU_SHORT}-x.cpp", "7" * 32)}
    stream = Stream()
    stream.start(1, _drv(f"relu-{CPU}-plan", "8" * 32))
    stream.log(1, "planning")
    stream.stop(1)
    ident = 10
    for source, drv in [*cpu.items(), *noarch.items()]:
        stream.start(ident, drv)
        stream.log(ident, f"compiling {source}")
        stream.stop(ident)
        ident += 1
    stream.start(20, _drv(f"relu-{CPU}-link", "9" * 32))
    stream.stop(20)
    stream.start(21, _drv(f"relu-{CPU}", "6" * 32))
    stream.log(21, "assembling")
    rows = {CPU: VariantRow(CPU), CPU_SHORT: VariantRow(CPU_SHORT)}
    recorder = _replay(tmp_path, monkeypatch, stream, rows, {CPU: sorted(cpu.values()), CPU_SHORT: sorted(noarch.values())})
    cpu_lines = [line for line in recorder.lines if line.startswith(f"{CPU}:")]
    assert cpu_lines == [f"{CPU}: {phase}" for phase in
                         ("planning", "compiling 0/3", "compiling 1/3", "compiling 2/3", "compiling 3/3", "linking")]
    assert [line for line in recorder.lines if line.startswith(f"{CPU_SHORT}:")] == [
        f"{CPU_SHORT}: compiling 0/1", f"{CPU_SHORT}: compiling 1/1"]
    # the variant derivation started: its objects are linked, the row says `building` again
    assert rows[CPU].status is RowStatus.BUILDING and rows[CPU].phase is None and rows[CPU].state() == "building"
    assert rows[CPU_SHORT].state() == "compiling 1/1"
    assert (CPU, "compiling b.cpp") in recorder.logged  # -L streams the objects' logs under their variant


def test_a_failed_object_fails_its_variant_with_that_objects_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = (_drv(f"0-obj-relu-{CPU}-{s}", d * 32) for s, d in (("a.cpp", "1"), ("b.cpp", "2")))
    stream = Stream()
    stream.start(10, a)
    stream.log(10, "a.cpp:3:1: warning: unused")
    stream.stop(10)
    stream.start(11, b)
    stream.log(11, "b.cpp:1:5: error: 'nope' was not declared in this scope")
    stream.fail(b)
    stream.stop(11, ok=False)
    rows = {CPU: VariantRow(CPU)}
    recorder = _replay(tmp_path, monkeypatch, stream, rows, {CPU: [a, b]}, code=1)
    assert rows[CPU].status is RowStatus.FAILED and rows[CPU].drv == b
    assert rows[CPU].log[0].startswith("the obj derivation of b.cpp") and "error: 'nope'" in rows[CPU].log[1]
    assert "warning: unused" not in "\n".join(rows[CPU].log), "another object's log is not the failure's"
    assert recorder.lines[-1].startswith(f"FAILED {CPU}")
    assert rows[CPU].state() == "failed"


# --- a real nix build of derivations named like the per-object graph ---------------------

GRAPH = """
let
  mk = name: deps: derivation {{
    inherit name deps; system = "x86_64-linux"; builder = "/bin/sh"; salt = "{salt}";
    args = [ "-c" "echo compiling $name; /bin/sleep 1; echo x > $out" ];
  }};
  objects = map (s: mk "0-obj-relu-{variant}-${{s}}" []) [ "a.cpp" "b.cpp" "c.cpp" ];
  link = mk "relu-{variant}-link" objects;
in {{ "{variant}" = mk "relu-{variant}" [ link ]; }}
"""


def test_a_real_nix_build_counts_the_objects_the_store_says_it_builds(tmp_path: Path) -> None:
    expr = tmp_path / "graph.nix"
    expr.write_text(GRAPH.format(salt=time.time_ns(), variant=CPU))
    rows = {CPU: VariantRow(CPU)}
    recorder = Recorder()
    report = nix.build(
        {CPU: CPU}, nix.NixOptions(max_jobs=1, sandbox=False), flake_args=["-f", str(expr)],
        on_event=flake_build._Tracker(rows, recorder, 1).on_event,
    )
    assert report.returncode == 0, report.errors
    phases = [line.split(": ", 1)[1] for line in recorder.lines if line.startswith(f"{CPU}: ")]
    assert phases == ["compiling 0/3", "compiling 1/3", "compiling 2/3", "compiling 3/3", "linking"], recorder.lines
    assert any(line.startswith(f"built {CPU}") for line in recorder.lines), recorder.lines


# Derivations named like the per-object graph's parts, each writing its output at once.
_MK = """
  mk = name: deps: derivation {{
    inherit name deps; system = "x86_64-linux"; builder = "/bin/sh"; salt = "{salt}";
    args = [ "-c" "echo x > $out" ];
  }};
"""
TWO_VARIANTS = """
let""" + _MK + """  variant = v: let objects = map (s: mk "0-obj-relu-${{v}}-${{s}}" []) [ "a.cpp" "b.cpp" ];
    in mk "relu-${{v}}" [ (mk "relu-${{v}}-link" objects) ];
in {{ "{first}" = variant "{first}"; "{second}" = variant "{second}"; }}
"""
TWO_KERNELS = """
let""" + _MK + """  kernel = k: let objects = map (s: mk "0-obj-${{k}}-{variant}-${{s}}" []) [ "a.cpp" "b.cpp" ];
    in mk "${{k}}-{variant}" [ (mk "${{k}}-{variant}-link" objects) ];
in {{ relu = kernel "relu"; relu-twin = kernel "relu-twin"; }}
"""


def _steps_in_start_order(expr: Path, targets: list[str], variants: list[str]) -> list[Step | str]:
    """What one `nix build -j 1` of ``targets`` starts, in order: each part's step, or "variant"."""
    started: list[str] = []

    def on_event(event: nix.BuildEvent) -> None:
        if event.kind == "start" and event.drv:
            started.append(event.drv)

    report = nix.build({t: t for t in targets}, nix.NixOptions(max_jobs=1, sandbox=False),
                       flake_args=["-f", str(expr)], on_event=on_event)
    assert report.returncode == 0, report.errors
    return [unit.step if unit else "variant" for unit in (step_of(drv, variants) for drv in started)]


def test_nix_compiles_every_variants_objects_before_any_link(tmp_path: Path) -> None:
    """Nix starts the ready derivations in the order of their names; objects are named
    `0-obj-<kernel>-<variant>-…` so that one build of several variants compiles all of them
    before the first link or check, and the short tails run side by side at the end."""
    first, second = "torch212-cxx11-cpu-x86_64-linux", CPU
    expr = tmp_path / "two.nix"
    expr.write_text(TWO_VARIANTS.format(salt=time.time_ns(), first=first, second=second))
    kinds = _steps_in_start_order(expr, [first, second], [first, second])
    objects_first = [Step.OBJECT] * 4
    tails = ([Step.LINK, "variant"] * 2, [Step.LINK, Step.LINK, "variant", "variant"])  # as the links end
    assert kinds in (objects_first + tails[0], objects_first + tails[1]), kinds


def test_nix_compiles_every_kernels_objects_before_any_link(tmp_path: Path) -> None:
    """The same across kernels built together: `relu-torch…-link` sorts before
    `relu-twin-…`, so with the kernel's name first relu's link and check ran before
    relu-twin's objects, and relu-twin's last object and tail alone at the end
    (benchmarks/parallel_variants.py)."""
    expr = tmp_path / "two-kernels.nix"
    expr.write_text(TWO_KERNELS.format(salt=time.time_ns(), variant=CPU))
    kinds = _steps_in_start_order(expr, ["relu", "relu-twin"], [CPU])
    assert kinds[:4] == [Step.OBJECT] * 4 and Step.OBJECT not in kinds[4:] and len(kinds) == 8, kinds


# --- the live table ----------------------------------------------------------------------

def test_the_live_table_shows_the_phase_in_the_variants_row(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from kernel_builder.cli import build as build_cli

    compiling = VariantRow(CPU, RowStatus.BUILDING, where="local", started=time.monotonic(), phase="compiling 3/16")
    done = VariantRow(CPU_SHORT, RowStatus.BUILT, where="local", phase=None)
    progress = build_cli._Progress([CPU, CPU_SHORT, "torch-cuda"], stream_logs=True)
    progress.rows = {CPU: compiling, CPU_SHORT: done}
    text = io.StringIO()
    Console(file=text, width=200).print(progress._render())
    lines = {line.split()[0]: line.split()[1:] for line in text.getvalue().splitlines() if line.strip()}
    assert lines[CPU][:2] == ["compiling", "3/16"] and lines[CPU_SHORT][0] == "built" and lines["torch-cuda"][0] == "queued"
    compiling.phase = "linking"
    text = io.StringIO()
    Console(file=text, width=200).print(progress._render())
    assert f"{CPU} linking" in " ".join(text.getvalue().split())
