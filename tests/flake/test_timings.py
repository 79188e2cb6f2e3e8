"""``build --timings`` without building: a recorded build replayed through the recorder, the
layout, and the page and picture drawn from it.

The recording (data/timings_relu_cpu_j2.json) is a real ``kernel-builder build --timings -j 2``
of examples/relu's torch213 and torch214 CPU variants with the pinned toolchains: the events
``nix.build`` delivered, with the moment each arrived, and what the recorder asked the store.
Replayed with those answers, it must give the times Nix reported: an object ends when Nix's
count of finished builds grows (its activity's stop comes after that), and a variant, whose
activity Nix 2.8 stops only when it exits, ends when the count grew and the store holds its
output.
"""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.flake import timings, timings_page
from kernel_builder.flake.timings import Part, Record, Recorder, Span

DATA = json.loads((Path(__file__).parent / "data" / "timings_relu_cpu_j2.json").read_text())
V213, V214 = "torch213-cxx11-cpu-x86_64-linux", "torch214-cxx11-cpu-x86_64-linux"
VARIANTS = [tuple(v) for v in DATA["variants"]]
NAMES = [name for name, _ in VARIANTS]


def _drv(name: str) -> str:
    """The recorded .drv whose name (after the hash) is ``name``."""
    found = [e["drv"] for e in DATA["events"] if e["kind"] == "start" and timings.drv_name(e["drv"]) == name]
    assert len(found) == 1, name
    return found[0]


def _replay() -> Recorder:
    """The recorded events through a recorder whose clock, store and .drv reader answer as
    they did during the build."""
    events = DATA["events"]
    clock = iter([0.0] + [e["t"] for e in events])
    answers = {tuple(asked): set(valid) for asked, valid in DATA["valid"]}
    asked: list[tuple[str, ...]] = []

    def valid_outputs(outs: list[str]) -> set[str]:
        asked.append(tuple(outs))
        return answers[tuple(outs)]

    recorder = Recorder(clock=lambda: next(clock), valid_outputs=valid_outputs, output_of=DATA["outputs"].get)
    for e in events:
        recorder.on_event(nix.BuildEvent(e["kind"], drv=e["drv"], text=e["text"], machine=e["machine"], target=e["target"]))
    assert asked == [tuple(a) for a, _ in DATA["valid"]]  # the store was asked exactly what it was asked then
    return recorder


def _t(kind: str, drv: str | None = None, text: str = "") -> float:
    """When the recorded event (the first of ``kind`` about ``drv``, or with ``text``) came,
    in seconds after Nix's first event."""
    for e in DATA["events"]:
        if e["kind"] == kind and (drv is None or e["drv"] == drv) and e["text"].startswith(text):
            return e["t"] - DATA["events"][0]["t"]
    raise AssertionError((kind, drv, text))


def _layout(closures: dict[str, set[str]] | None = None) -> timings.Layout:
    recorder = _replay()
    found = timings.spans(recorder.records, recorder.wall)
    closures = closures if closures is not None else {v: set(c) for v, c in DATA["closures"].items()}
    parts = timings.describe([s.drv for s in found], NAMES, closures, env_of=lambda drv: DATA["env"].get(drv, {}))
    return timings.layout("relu", found, parts, VARIANTS, wall=recorder.wall, waited=recorder.waited)


def test_each_derivation_runs_from_its_start_to_the_moment_nix_counted_it_finished() -> None:
    recorder = _replay()
    found = {timings.drv_name(s.drv): s for s in timings.spans(recorder.records, recorder.wall)}
    assert len(found) == 13 and {s.status for s in found.values()} == {"built"}
    obj = _drv(f"0-obj-relu-{V213}-relu_cpu-relu_cpu.cpp")
    span = found[timings.drv_name(obj)]
    assert span.start == _t("start", obj)
    # it ended when the count of finished builds reached 3, not at its stop ~0.09 s later
    assert span.end == _t("progress", text="3 ") < _t("stop", obj)
    # torch213's variant: its activity stops only when nix exits, ~3 minutes later; it ended
    # when the count reached 6 and the store held its output
    variant = found[f"relu-{V213}"]
    assert variant.start == _t("start", _drv(f"relu-{V213}"))
    assert variant.end == _t("progress", text="6 ")
    assert _t("stop", _drv(f"relu-{V213}")) - variant.end > 180
    # the last variant ended with the last count, before nix's exit stopped it
    assert found[f"relu-{V214}"].end == _t("progress", text="13 ")
    assert recorder.wall == pytest.approx(_t("stop", _drv(f"relu-{V213}")))  # nix's last event
    assert recorder.waited == DATA["events"][0]["t"]


def test_the_layout_groups_by_variant_and_puts_what_both_use_in_a_shared_group() -> None:
    layout = _layout()
    assert [g.title for g in layout.groups] == [V213, V214, "shared by 2 variants"]
    labels = {g.title: [b.part.label for b in g.bars] for g in layout.groups}
    assert labels[V213] == ["plan", "relu_cpu/relu_cpu.cpp", "torch-ext/torch_binding.cpp", "link", "assemble and check"]
    # torch214's toolchain environment was built in this run too: it is torch214's alone
    assert labels[V214][:2] == ["kb-env-torch2.14", "kb-cuda13.0"]
    assert labels[V214][2:] == labels[V213]
    assert labels["shared by 2 variants"] == ["kernel-builder-python-compiled"]
    kinds = {b.part.label: b.part.kind for b in layout.groups[0].bars}
    assert kinds == {"plan": "plan", "relu_cpu/relu_cpu.cpp": "object", "torch-ext/torch_binding.cpp": "object",
                     "link": "link", "assemble and check": "variant"}
    shared = layout.groups[2].bars[0].part
    assert shared.shared and shared.owners == (V213, V214) and shared.kind == "other"
    # the slowest, slowest first: the torch 2.14 environment, then the torch bindings
    assert [b.rank for b in layout.slowest] == list(range(1, 11))
    assert [b.part.label for b in layout.slowest[:3]] == [
        "kb-env-torch2.14", "torch-ext/torch_binding.cpp", "torch-ext/torch_binding.cpp"]
    assert layout.slowest[0].span.seconds == pytest.approx(201.1518, abs=1e-3)
    assert layout.concurrency == 2
    assert layout.busy == pytest.approx(sum(b.span.seconds for b in layout.bars))


def test_an_object_in_both_variants_closures_is_a_shared_object_and_is_marked() -> None:
    obj = _drv(f"0-obj-relu-{V213}-relu_cpu-relu_cpu.cpp")
    closures = {v: set(c) for v, c in DATA["closures"].items()}
    closures[V214].add(obj)  # as when one object derivation serves both torch versions
    layout = _layout(closures)
    group = next(g for g in layout.groups if g.owners == (V213, V214))
    bar = next(b for b in group.bars if b.part.drv == obj)
    assert bar.part.kind == "object" and bar.part.shared and bar.part.label == "relu_cpu/relu_cpu.cpp"
    assert obj not in {b.part.drv for b in layout.groups[0].bars}
    fig = timings_page.figure(layout)
    rects = [i for i in fig.items if isinstance(i, timings_page.Rect) and i.title and timings.drv_name(obj) in i.title]
    assert len(rects) == 1 and rects[0].fill == timings_page.COLORS["shared"] and rects[0].stroke
    assert f"used by {V213}, {V214}" in (rects[0].title or "")
    texts = [i.text for i in fig.items if isinstance(i, timings_page.Text)]
    assert any(t.endswith("relu_cpu/relu_cpu.cpp [shared by 2]") for t in texts)
    assert "shared object" in texts  # the legend
    assert "1 shared object(s)" in timings_page.summary(layout)


def test_bars_sit_on_the_time_axis() -> None:
    layout = _layout()
    fig = timings_page.figure(layout)
    scale = timings_page.PLOT_W / layout.wall
    for bar in layout.bars:
        rect = next(i for i in fig.items if isinstance(i, timings_page.Rect) and i.title
                    and i.title.startswith(timings.drv_name(bar.part.drv) + "\n"))
        assert rect.x == pytest.approx(timings_page.PLOT_X + bar.span.start * scale)
        assert rect.w == pytest.approx(max(1.0, bar.span.seconds * scale))
    ticks = [i.text for i in fig.items if isinstance(i, timings_page.Text) and i.anchor == "middle"]
    assert ticks == ["0", "30.0s", "1m00s", "1m30s", "2m00s", "2m30s", "3m00s", "3m30s"]


def test_the_page_is_self_contained_and_names_every_variant_and_unit() -> None:
    page = timings_page.html(_layout())
    assert "<script" not in page and "<link" not in page and "@import" not in page and "url(" not in page
    assert re.findall(r"https?://[^\s\"']+", page) == ["http://www.w3.org/2000/svg"]  # the SVG namespace only
    for name in (V213, V214, "relu_cpu/relu_cpu.cpp", "torch-ext/torch_binding.cpp", "kb-env-torch2.14",
                 "assemble and check", "Slowest derivations", "<svg"):
        assert name in page
    assert page.count("<tr>") == 1 + 2 + 1 + 10 + 1 + 13  # header + variants, slowest, every derivation


def test_text_from_the_build_is_escaped() -> None:
    span = Span("/nix/store/" + "a" * 32 + "-x.drv", 0.0, 1.0, "failed")
    part = Part(span.drv, "object", "<img src=x onerror=alert(1)>.cu", ("v&<1>",))
    layout = timings.layout("k<b>", [span], {span.drv: part}, [("v&<1>", "failed")], wall=1.0)
    page = timings_page.html(layout)
    assert "<img" not in page and "<b>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;.cu" in page and "v&amp;&lt;1&gt;" in page


def test_the_png_is_the_figure() -> None:
    pytest.importorskip("PIL")
    layout = _layout()
    data = timings_page.png(layout)
    assert data is not None and data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    fig = timings_page.figure(layout)
    assert (width, height) == (fig.width, fig.height)


def test_write_replaces_both_files_through_temporary_files(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    (tmp_path / "timings.html").write_text("old")
    os.chmod(tmp_path / "timings.html", 0o644)
    written = timings_page.write(tmp_path, _layout())
    assert written == [tmp_path / "timings.html", tmp_path / "timings.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["timings.html", "timings.png"]  # no temporary left
    assert (tmp_path / "timings.html").read_text().startswith("<!doctype html>")
    assert (tmp_path / "timings.html").stat().st_mode & 0o777 == 0o644


def test_a_failed_build_ends_with_its_failure_and_an_interrupted_one_runs_to_the_end() -> None:
    times = iter([0.0, 0.0, 1.0, 2.0, 3.0, 5.0, 6.0, 9.0])
    recorder = Recorder(clock=lambda: next(times), valid_outputs=lambda outs: set(), output_of=lambda drv: None)
    a, b = "/nix/store/" + "a" * 32 + "-0-obj-k-v-a.cu.drv", "/nix/store/" + "b" * 32 + "-0-obj-k-v-b.cu.drv"
    for event in [
        nix.BuildEvent("progress", text="0 0 0"),
        nix.BuildEvent("start", drv=a),
        nix.BuildEvent("start", drv=b),
        nix.BuildEvent("log", drv=a, text="error: a.cu:1:1: nope"),
        nix.BuildEvent("error", drv=a, text=f"error: builder for '{a}' failed with exit code 1"),
        nix.BuildEvent("progress", text="0 1 1"),
        nix.BuildEvent("log", drv=b, text="still compiling"),
    ]:
        recorder.on_event(event)
    assert recorder.records == [Record(1.0, "start", a), Record(2.0, "start", b), Record(5.0, "fail", a)]
    found = {s.drv: s for s in timings.spans(recorder.records, recorder.wall)}
    assert (found[a].status, found[a].end) == ("failed", 5.0)
    assert (found[b].status, found[b].start, found[b].end) == ("unfinished", 2.0, 9.0)  # to Nix's last event


def test_names_say_what_a_derivation_is() -> None:
    names = ["torch213-cxx11-cpu-x86_64-linux"]
    h = "/nix/store/" + "c" * 32 + "-"
    assert timings.kind_of_name(h + "relu-torch213-cxx11-cpu-x86_64-linux-check.drv", names) == ("check", names[0])
    assert timings.kind_of_name(h + "relu-torch213-cxx11-cpu-x86_64-linux-tests-check.drv", names) == ("tests", names[0])
    assert timings.kind_of_name(h + "relu-torch213-cxx11-cpu-x86_64-linux-tests.drv", names) == ("tests", names[0])
    assert timings.kind_of_name(h + "relu-torch213-cxx11-cpu-x86_64-linux.drv", names) == ("variant", names[0])
    assert timings.kind_of_name(h + "relu-torch213-cxx11-cpu-x86_64-linux-plan.drv", names) == ("plan", names[0])
    assert timings.kind_of_name(h + "kb-env-torch2.13.drv", names) == ("other", None)


def test_a_build_that_built_nothing_says_so() -> None:
    layout = timings.layout("relu", [], {}, [(V213, "cached")], wall=0.0)
    assert timings_page.summary(layout).startswith("Nix built nothing")
    page = timings_page.html(layout)
    assert f"{V213}: cached, nothing built in this run" in page
