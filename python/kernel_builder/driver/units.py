"""Compile one translation unit, or link the objects, of a per-object build (``driver.plan``).

    python -m kernel_builder.driver.units object --plan PLAN --source REL --file FILE \\
        [--headers DIR] --out OUT
    python -m kernel_builder.driver.units link --plan PLAN --objects DIR... --out OUT

Each step recreates the plan's scratch directory at the same place under this build's
temporary directory (so the compiler sees the same paths as the plan's configure did;
the prefix maps keep them out of the objects), then runs the plan's command. ``object``
writes ``OUT/object.o`` and ``OUT/unit.json`` (its source); ``link`` lays every object back, links, and writes the module and ``module.json`` (ops id, archs,
file name), which ``run_variant --prebuilt-module`` assembles into the variant.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kernel_builder.errors import BuildError, KernelBuilderError
from kernel_builder.driver.generate import DRIVER_STUB_FILE
from kernel_builder.driver.planfile import TOP, Plan, Unit

__all__ = ["OBJECT", "UNIT", "compile_unit", "link_objects", "main"]

# An object step's output: the object, and which unit it is (the link puts it back in place).
OBJECT = "object.o"
UNIT = "unit.json"


def _top() -> str:
    return os.environ.get("NIX_BUILD_TOP") or tempfile.gettempdir()


def _here(text: str) -> str:
    return text.replace(TOP, _top())


def _overlay(origin: Path, dest: Path, *, substitute: bool = False) -> None:
    """Copy the files under ``origin`` into ``dest``, writable (store copies are not);
    with ``substitute``, ``TOP`` in them becomes this build's temporary directory."""
    token, here = TOP.encode(), _top().encode()
    for root, _dirs, files in os.walk(origin):
        target = dest / Path(root).relative_to(origin)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            data = (Path(root) / name).read_bytes()
            (target / name).write_bytes(data.replace(token, here) if substitute else data)


def _load(plan_dir: Path) -> tuple[Plan, Path]:
    plan = Plan.from_json((plan_dir / "plan.json").read_text())
    scratch = Path(_here(plan.scratch))
    _overlay(plan_dir / "tree", scratch, substitute=True)
    return plan, scratch


def _unit(plan: Plan, source: str) -> Unit:
    for unit in plan.units:
        if unit.source == source:
            return unit
    raise BuildError(
        f"{source} is not a translation unit of {plan.variant}'s plan; it has {', '.join(u.source for u in plan.units)}",
        hint="the Nix side and the planner disagree on which files are compiled: a bug, please report it",
    )


def compile_unit(plan_dir: Path, source: str, file: Path, headers: Path | None, out: Path) -> Path:
    """Compile ``source`` (its contents: ``file``) with the plan's command; give back the object."""
    plan, scratch = _load(plan_dir)
    unit = _unit(plan, source)
    if headers is not None:
        _overlay(headers, scratch / "src")
    target = scratch / "src" / source
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(file, target)
    obj = scratch / _here(unit.object)
    obj.parent.mkdir(parents=True, exist_ok=True)
    argv = [_here(arg) for arg in unit.command]
    done = subprocess.run(argv, cwd=_here(unit.directory), capture_output=True, text=True, check=False)
    output = done.stdout + done.stderr
    # The compiler's messages as it wrote them, warnings included, in the object's log (where
    # flake.failure.explain finds the first error, as in a whole-variant build's log).
    sys.stderr.write(output)
    if done.returncode != 0:
        raise BuildError(
            f"compiling {source} for {plan.variant} failed (exit {done.returncode}); the compiler's messages are above\n"
            f"command:\n  {' '.join(argv)}",
            hint=f"fix {source}",
        )
    out.mkdir(parents=True, exist_ok=True)
    dest = out / OBJECT
    shutil.copyfile(obj, dest)
    (out / UNIT).write_text(json.dumps({"source": source}) + "\n")
    return dest


def link_objects(plan_dir: Path, objects: list[Path], out: Path) -> Path:
    """Lay the objects back into the plan's build directory, run its link, write the module."""
    plan, scratch = _load(plan_dir)
    for directory in objects:
        unit = _unit(plan, json.loads((directory / UNIT).read_text())["source"])
        target = scratch / _here(unit.object)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(directory / OBJECT, target)
    missing = [u.source for u in plan.units if not (scratch / _here(u.object)).is_file()]
    if missing:
        raise BuildError(
            f"the link of {plan.variant} has no object for {', '.join(missing)}",
            hint="the Nix side and the planner disagree on which files are compiled: a bug, please report it",
        )
    shell = os.environ.get("sandboxShell") or "/bin/sh"
    command = _here(plan.link_command)
    directory = Path(_here(plan.link_directory))
    done = subprocess.run([shell, "-c", command], cwd=directory, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stdout + done.stderr)
    if done.returncode != 0:
        raise BuildError(f"linking {plan.module} for {plan.variant} failed (exit {done.returncode}); command:\n  {command}")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(directory / plan.module, out / plan.module)
    stub = directory / DRIVER_STUB_FILE  # a CUDA plan's stub libcuda.so.1: the variant's import check loads it
    if stub.is_file():
        shutil.copyfile(stub, out / DRIVER_STUB_FILE)
    facts = {"ops_id": plan.ops_id, "archs": list(plan.archs), "module": plan.module, "variant": plan.variant}
    (out / "module.json").write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
    return out / plan.module


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m kernel_builder.driver.units", description=__doc__.split("\n")[0])
    steps = p.add_subparsers(dest="step", required=True)
    obj = steps.add_parser("object", help="compile one translation unit")
    obj.add_argument("--plan", required=True, type=Path, help="the plan's output (plan.json, tree/)")
    obj.add_argument("--source", required=True, help="the unit's path relative to the kernel, as in the plan")
    obj.add_argument("--file", required=True, type=Path, help="the unit's contents")
    obj.add_argument("--headers", type=Path, help="the backend's other files (headers), laid out as in the kernel")
    obj.add_argument("--out", required=True, type=Path)
    link = steps.add_parser("link", help="link the objects into the module")
    link.add_argument("--plan", required=True, type=Path)
    link.add_argument("--objects", nargs="*", default=[], type=Path, help="outputs of the object steps")
    link.add_argument("--out", required=True, type=Path)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.step == "object":
            compile_unit(args.plan, args.source, args.file, args.headers, args.out)
        else:
            link_objects(args.plan, args.objects, args.out)
    except KernelBuilderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
