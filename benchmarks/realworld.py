"""Real kernels: a sweep over a checkout of huggingface/kernels-community.

For each kernel directory (one with build.toml) of KC_DIR, in a scratch copy whose
flake.nix calls this checkout's genKernelFlakeOutputs (the kernels' own flakes name the
upstream builder): `check-config`, then `build` with the pinned toolchains (every variant
they serve: CPU, noarch and cu130, with --cuda-capabilities narrowed to one architecture
to keep it finite), then each CPU/noarch result is loaded with PyPI `kernels`
(`get_local_kernel`) by this interpreter when its torch can import it. Prints one row per kernel and, last,
`ratio: built / buildable` over variants (buildable: selected by `build`, i.e. not skipped
for a backend, dependency or toolchain this machine lacks).

Run: PYTHONPATH=$PWD/python .venv/bin/python benchmarks/realworld.py KC_DIR [NAME ...]
     [--capability 9.0] [--timeout 3600]
(a checkout: `git clone https://github.com/huggingface/kernels-community`, or a snapshot
unpacked with `git archive`). The kernels' own test suites are not run by this script.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FLAKE = """{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
"""
LOAD = """
import sys
from pathlib import Path
from kernels import get_local_kernel
module = get_local_kernel(Path(sys.argv[1]))
print(module.__name__)
"""


def run(argv: list[str], *, timeout: int, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False)
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(argv, 124, exc.stdout or "", f"timed out after {timeout}s")


def kb(*args: str, timeout: int) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "kernel_builder", *args], timeout=timeout)


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:160] if lines else ""


def first_error(text: str) -> str:
    for line in text.splitlines():
        if "error" in line.lower():
            return line.strip()[:160]
    return last_line(text)


def importable_here(name: str) -> bool:
    """Whether this interpreter's torch can import variant ``name`` (the one compatibility rule)."""
    from kernel_builder.variants.compat import importable  # lazy: only when a variant was built
    from kernel_builder.variants.names import try_parse  # lazy: as above
    from kernel_builder.variants.system import detect_system  # lazy: as above

    parsed = try_parse(name)
    return parsed is not None and bool(importable(parsed, detect_system()))


def sweep_one(source: Path, scratch: Path, capability: str, timeout: int) -> dict[str, object]:
    kernel = scratch / source.name
    shutil.copytree(source, kernel, symlinks=True)
    (kernel / "flake.nix").write_text(FLAKE % REPO)
    (kernel / "flake.lock").unlink(missing_ok=True)
    row: dict[str, object] = {"kernel": source.name, "built": 0, "failed": 0, "loaded": 0, "notes": ""}
    checked = kb("check-config", str(kernel), timeout=120)
    if checked.returncode != 0:
        row["notes"] = "check-config: " + first_error(checked.stderr)
        return row
    started = time.monotonic()
    built = kb("build", str(kernel), "--cuda-capabilities", capability, "-j", "1", "--json", timeout=timeout)
    row["seconds"] = round(time.monotonic() - started)
    try:
        results = json.loads(built.stdout)
    except ValueError:
        row["notes"] = "build: " + first_error(built.stderr)
        return row
    failed = [r["variant"] for r in results if r["status"] == "failed"]
    done = [r for r in results if r["path"]]
    row["built"], row["failed"] = len(done), len(failed)
    notes = [f"failed {', '.join(failed)}: {first_error(built.stderr)}"] if failed else []
    for result in done:
        name = result["variant"]
        if "-cu" in name or name in ("torch-cuda", "torch-rocm", "torch-xpu", "torch-metal"):
            continue  # no GPU here: only CPU and noarch-cpu results are loaded
        if not importable_here(name):
            continue  # another torch than this interpreter's
        loaded = run([sys.executable, "-c", LOAD, result["path"]], timeout=600)
        if loaded.returncode == 0:
            row["loaded"] = int(row["loaded"]) + 1
        else:
            notes.append(f"load {name}: {last_line(loaded.stderr)}")
    row["notes"] = "; ".join(notes)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kc_dir", type=Path)
    parser.add_argument("names", nargs="*", help="only these kernel directories")
    parser.add_argument("--capability", default="9.0", help="the one CUDA architecture built (default 9.0)")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per kernel build")
    args = parser.parse_args()
    sources = sorted(p.parent for p in args.kc_dir.glob("*/build.toml"))
    if args.names:
        sources = [p for p in sources if p.name in args.names]
    if not sources:
        sys.exit(f"no kernel directories (*/build.toml) in {args.kc_dir}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="kb-realworld-") as tmp:
        for source in sources:
            row = sweep_one(source, Path(tmp), args.capability, args.timeout)
            rows.append(row)
            print(f"{row['kernel']:<28} built {row['built']:>2}  failed {row['failed']:>2}  loaded {row['loaded']:>2}  "
                  f"{row.get('seconds', '-')}s  {row['notes']}", flush=True)
    built = sum(int(r["built"]) for r in rows)
    buildable = built + sum(int(r["failed"]) for r in rows)
    print(f"{len(rows)} kernel(s); {built} of {buildable} buildable variant(s) built")
    print(f"ratio: {built / buildable if buildable else 0:.3f}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
