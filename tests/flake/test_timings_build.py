"""``kernel-builder build --timings``: a real Nix build of examples/relu (one CPU variant,
pinned toolchain, ``-j 1``) writes build/timings.html naming the variant and each of its
derivations (plan, every object by its source, link, the variant), and build/timings.png;
the tree beside them still passes ``check``. ``--timings`` with ``--local`` is refused.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nix_support import REPO, copy_kernel, snapshot_builder

CPU213 = "torch213-cxx11-cpu-x86_64-linux"


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("KERNEL_BUILDER_STATE_DIR", "XDG_STATE_HOME")}
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True,
                          env={**base, "PYTHONPATH": str(REPO / "python"), **env}, timeout=900)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_timings_of_a_real_build_name_the_variant_and_every_unit(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    kernel = copy_kernel("relu", tmp_path / "relu", git=False, salt=True)  # salted: never built before
    env = {"KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state"), "KERNEL_BUILDER_ROOT": str(snapshot_builder(tmp_path / "builder"))}
    done = _cli("build", str(kernel), "--variant", CPU213, "-j", "1", "--timings", env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    page_path, png_path = kernel / "build" / "timings.html", kernel / "build" / "timings.png"
    assert re.search(rf"timings of \d+ derivation\(s\): {re.escape(str(page_path))}, {re.escape(str(png_path))}",
                     done.stderr), done.stderr
    page = page_path.read_text()
    assert "<script" not in page and re.findall(r"https?://[^\s\"']+", page) == ["http://www.w3.org/2000/svg"]
    assert CPU213 in page and f"{CPU213}: built" in page
    rows = re.findall(r"<tr><td class=n>([\d.]+)</td><td class=n>([\d.]+)</td><td class=\"\">built</td><td>(\w+)</td>"
                      r"<td><code>([^<]+)</code></td><td>([^<]*)</td>", page)
    units = {(kind, label) for _, _, kind, label, _ in rows}
    # every derivation of the variant's graph this run built, each by what it is
    # (the plan itself is one for every commit of the kernel: an earlier run may have built it)
    assert {("plan", "deps relu_cpu/relu_cpu.cpp"), ("plan", "deps torch-ext/torch_binding.cpp"),
            ("object", "relu_cpu/relu_cpu.cpp"), ("object", "torch-ext/torch_binding.cpp"),
            ("link", "link"), ("variant", "assemble and check")} <= units, rows
    assert all(owners == CPU213 for *_, kind, _, owners in rows if kind != "other")
    # in Nix's order, one at a time (-j 1): the plan's steps (plan, each unit's deps, their
    # merge), the objects, link, variant
    order = [(kind, label) for _, _, kind, label, _ in sorted(rows, key=lambda r: float(r[0])) if kind != "other"]
    kinds = [kind for kind, _ in order]
    planned = kinds.count("plan")
    assert planned >= 3 and set(kinds[:planned]) == {"plan"}
    assert sorted(label for _, label in order[planned:planned + 2]) == ["relu_cpu/relu_cpu.cpp", "torch-ext/torch_binding.cpp"]
    assert [label for _, label in order[planned + 2:]] == ["link", "assemble and check"]
    # never two at once: the page rounds each start and duration to 0.01 s, so an end read
    # back may pass the next start by up to 0.015 s (three roundings) and never more
    spans = sorted((float(start), float(start) + float(secs)) for start, secs, *_ in rows)
    assert all(end <= nxt + 0.02 for (_, end), (nxt, _) in zip(spans, spans[1:])), sorted(rows)
    assert all(secs and float(secs) > 0 for _, secs, *_ in rows)
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in (kernel / "build").iterdir() if p.name.startswith(".")]  # no temporary left
    checked = _cli("check", str(kernel), env=env)  # the files beside the variants are no variant
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_timings_need_a_nix_build(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    done = _cli("build", str(kernel), "--local", "--timings", env={"KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")})
    assert done.returncode == 2 and "--timings charts the derivations of a Nix build" in done.stderr, done.stderr
    assert not (kernel / "build").exists()
