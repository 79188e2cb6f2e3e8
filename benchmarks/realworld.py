"""A sweep of real kernels: how many of huggingface/kernels-community build here.

For each kernel directory (one with a ``build.toml``) of a kernels-community checkout:

1. ``kernel-builder check-config``;
2. ``kernel-builder list-variants --json``: the variants this machine builds with the pinned
   toolchains, kept to the cpu, noarch and CUDA 13.0 ones (the others need toolchains
   published where this machine cannot reach);
3. ``kernel-builder build --variant ...`` of those, CUDA narrowed to one architecture
   (``--cuda-capabilities``) to keep the sweep finite: ``--cuda-capability`` where each CUDA
   component builds it, else the lowest one that component builds (msa declares only 10.0);
4. each built CPU variant (cpu arch or noarch) is loaded with PyPI ``kernels``
   (``get_local_kernel``); a kernel whose built variants are all CUDA ones says ``gpu``;
5. the kernel's own tests run on those CPU variants (``kernel-builder test --json``):
   ``pass(N)`` counts the tests that ran, ``skip(N)`` means every test was skipped (not a
   pass), ``fail(F/T)`` counts failures and errors.

It prints one table row per kernel and, last, ``ratio: built / buildable`` over variants.
This is a benchmark, not a test: a full sweep takes hours on two cores, so builds run one
at a time with one compile job (``-j 1 --cores 1``); ``--jobs 2`` lets Nix run two compile
steps at once when the machine is the sweep's alone. ``--kernels`` picks a few, ``--only``
some of the groups (``noarch``, ``cpu``, ``cuda``: the cheap ones first), ``--timeout``
bounds each build, ``--torch`` keeps the arch variants of some torch versions (the large
CUDA kernels take hours a variant here).

Run: .venv/bin/python benchmarks/realworld.py KC_DIR [--kernels relu,rmsnorm] [--only noarch,cpu] [--torch 2.13] [--jobs 2] [--timeout 1800]
KC_DIR is a work tree, or a bare git repository (``fetch`` gives one): its HEAD is
exported to a temporary directory first, as are work trees, so the checkout stays clean.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "kernel_builder"]
KEPT_BACKENDS = {"cpu", "cuda"}
CUDA_VERSION = "13.0"
GROUPS = frozenset({"noarch", "cpu", "cuda"})


def limits(jobs: int) -> list[str]:
    """Nix's parallel derivations (compile steps, with per-object builds), one core each."""
    return ["-j", str(jobs), "--cores", "1"]


@attrs.define
class Row:
    kernel: str
    config: str = "-"
    buildable: int = 0
    built: int = 0
    loaded: str = "-"
    tests: str = "-"
    seconds: float = 0.0
    reason: str = ""


def run(argv: list[str], cwd: Path | None = None, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """``argv`` in its own process group that dies with the sweep (a killed sweep leaves no
    ``kernel-builder build`` compiling); past ``timeout`` it gets SIGTERM, which it forwards
    to its nix, and the sweep waits for both to stop."""
    from kernel_builder import _children

    proc = _children.popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        stdout, _ = proc.communicate()
        return subprocess.CompletedProcess(argv, 124, stdout, f"timed out after {timeout:.0f}s")
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error") or "error:" in line]
    # "error: `nix ... eval ...` failed (exit 1):" names the command; Nix's own error follows
    errors = [line for line in errors if not line.startswith("error: `")] or errors
    return (errors[0] if errors else lines[-1] if lines else "")[:160]


def export(source: Path, into: Path) -> Path:
    """A plain copy of the kernels at ``source``'s HEAD (a work tree or a bare repository)."""
    git_dir = source if (source / "HEAD").is_file() and not (source / ".git").exists() else source / ".git"
    archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "HEAD"], capture_output=True, check=True).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def group(variant: dict) -> str:
    """``noarch``, ``cpu`` or ``cuda``: the groups ``--only`` picks from."""
    return "noarch" if variant["kind"] == "noarch" else variant["backend"]


def wanted(variant: dict, only: frozenset[str] = GROUPS, torch: frozenset[str] = frozenset()) -> bool:
    if not variant.get("local") or group(variant) not in only:
        return False
    if torch and variant["kind"] != "noarch" and variant.get("torch") not in torch:
        return False
    if variant["kind"] == "noarch":
        return variant["backend"] in KEPT_BACKENDS
    if variant["backend"] == "cuda":
        return variant.get("backend_version") == CUDA_VERSION
    return variant["backend"] == "cpu"


def sweep_capabilities(kernel: Path, preferred: str) -> str:
    """The ``--cuda-capabilities`` value that builds one architecture of each CUDA component
    of ``kernel`` for CUDA 13.0: ``preferred`` where the component builds it, else the
    lowest architecture it builds (narrowing to one it lacks is an error)."""
    from kernel_builder.config import read_file  # not load(): check-config already showed its warnings
    from kernel_builder.config.model import Backend
    from kernel_builder.backends.cuda_archs import CudaArch, select_archs

    major, minor = (int(part) for part in CUDA_VERSION.split("."))
    want = CudaArch.parse(preferred).base
    picks = set()
    for name, component in read_file(kernel).build.kernels_for(Backend.CUDA).items():
        bases = sorted({a.base for a in select_archs(component.cuda_capabilities, cuda_version=(major, minor), kernel=name)})
        if bases:
            picks.add(want if want in bases else bases[0])
    return ",".join(str(a) for a in sorted(picks))


def supports(command: str, flag: str) -> bool:
    return flag in run([*CLI, command, "--help"]).stdout


def load_check(kernel: Path) -> str:
    """Load the built kernel with PyPI ``kernels``, the way a user would: it picks the variant
    for this Python's torch."""
    code = f"from pathlib import Path; from kernels import get_local_kernel; get_local_kernel(Path({str(kernel)!r}))"
    done = run([sys.executable, "-c", code], timeout=300)
    return "ok" if done.returncode == 0 else last_line(done.stderr)


def sweep_one(
    kernel: Path, capability: str, timeout: float, with_tests: bool, dry_run: bool = False, only: frozenset[str] = GROUPS,
    jobs: int = 1, torch: frozenset[str] = frozenset(),
) -> Row:
    row = Row(kernel.name)
    done = run([*CLI, "check-config", str(kernel)])
    row.config = "ok" if done.returncode == 0 else "error"
    if done.returncode != 0:
        row.reason = last_line(done.stderr)
        return row
    listed = run([*CLI, "list-variants", "--json", str(kernel)])
    if listed.returncode != 0:
        row.reason = last_line(listed.stderr)
        return row
    variants = [v for v in json.loads(listed.stdout) if wanted(v, only, torch)]
    row.buildable = len(variants)
    if dry_run:
        row.reason = " ".join(v["name"] for v in variants)
        return row
    if not variants:
        row.reason = ("nothing buildable here (backends or toolchains)" if only == GROUPS
                      else f"nothing buildable here in group(s) {', '.join(sorted(only))}")
        return row
    argv = [*CLI, "build", *limits(jobs), str(kernel)] + [a for v in variants for a in ("--variant", v["name"])]
    if capability and any(v["backend"] == "cuda" for v in variants) and supports("build", "--cuda-capabilities"):
        argv += ["--cuda-capabilities", sweep_capabilities(kernel, capability)]
    start = time.perf_counter()
    done = run(argv, timeout=timeout)
    row.seconds = time.perf_counter() - start
    built = [v for v in variants if (kernel / "build" / v["name"] / "metadata.json").is_file()]
    row.built = len(built)
    if done.returncode != 0:
        row.reason = last_line(done.stderr)
    # Only CPU variants (cpu arch and noarch) load and test on this GPU-less machine.
    loadable = [v["name"] for v in built if v["backend"] == "cpu"]
    if loadable:
        row.loaded = load_check(kernel)
        if row.loaded != "ok" and not row.reason:
            row.reason, row.loaded = row.loaded, "fail"
    elif built:
        row.loaded = "gpu"
    if with_tests and loadable and (kernel / "tests").is_dir() and supports("test", "--variant"):
        cpu = [a for name in loadable for a in ("--variant", name)]
        done = run([*CLI, "test", *limits(jobs), "--json", str(kernel), *cpu], timeout=timeout)
        row.tests = tests_summary(done)
        if not row.tests.startswith("pass") and not row.reason:
            row.reason = last_line(done.stderr)
    return row


def tests_summary(done: subprocess.CompletedProcess[str]) -> str:
    """``pass(P)`` when tests ran and none failed, ``skip(S)`` when every test was skipped
    (a skip is not a pass), ``fail(F/T)`` otherwise; over every tested variant."""
    try:
        outcomes = json.loads(done.stdout)
    except ValueError:
        return "fail"
    counts = {k: sum(int(o["counts"].get(k, 0)) for o in outcomes) for k in ("tests", "failures", "errors", "skipped")}
    bad = counts["failures"] + counts["errors"]
    if done.returncode != 0 or bad:
        return f"fail({bad}/{counts['tests']})"
    ran = counts["tests"] - counts["skipped"]
    return f"pass({ran})" if ran else f"skip({counts['skipped']})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kc_dir", type=Path, help="a kernels-community checkout or bare repository")
    parser.add_argument("--kernels", default="", help="comma-separated kernel names (default: all)")
    parser.add_argument("--cuda-capability", default="9.0", help="the CUDA architecture to build (a component that lacks it builds its lowest one)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per kernel build")
    parser.add_argument("--no-tests", action="store_true", help="skip the kernels' own tests")
    parser.add_argument("--only", default=",".join(sorted(GROUPS)), help="variant groups to build: noarch, cpu, cuda (comma-separated)")
    parser.add_argument("--jobs", type=int, default=1, help="nix -j: derivations built at once (default 1: a shared machine)")
    parser.add_argument("--torch", default="", help="comma-separated torch versions of the arch variants to build, e.g. 2.13: the torch a variant is built with, so a stable-ABI variant matches the build set's torch (torch-stable-abi210-cu130 builds with 2.14), not the ABI it names (default: all; a large CUDA kernel's variants differ only in torch's headers)")
    parser.add_argument("--dry-run", action="store_true", help="only check-config and list what would be built")
    args = parser.parse_args()
    picked = {k for k in args.kernels.split(",") if k}
    torch = frozenset(t for t in args.torch.split(",") if t)
    only = frozenset(g for g in args.only.split(",") if g)
    if not only <= GROUPS:
        parser.error(f"--only: unknown group(s) {', '.join(sorted(only - GROUPS))}; expected {', '.join(sorted(GROUPS))}")
    with tempfile.TemporaryDirectory(prefix="kb-realworld-") as tmp:
        tree = export(args.kc_dir.resolve(), Path(tmp) / "kc")
        kernels = sorted(p.parent for p in tree.glob("*/build.toml") if not picked or p.parent.name in picked)
        rows = []
        for kernel in kernels:
            row = sweep_one(kernel, args.cuda_capability, args.timeout, not args.no_tests, args.dry_run, only, args.jobs, torch)
            rows.append(row)
            print(f"{row.kernel:28} config={row.config:5} built={row.built}/{row.buildable} loaded={row.loaded:5} "
                  f"tests={row.tests:9} {row.seconds:6.0f}s {row.reason}", flush=True)
            shutil.rmtree(kernel / "build", ignore_errors=True)
    buildable = sum(r.buildable for r in rows)
    built = sum(r.built for r in rows)
    print(f"{len(rows)} kernel(s): {built} of {buildable} buildable variant(s) built")
    print(f"ratio: {built / buildable if buildable else 0:.2f}")


if __name__ == "__main__":
    main()
