"""Compile one translation unit, or link the objects, of a per-object build (``driver.plan``).

    python -m kernel_builder.driver.units deps --plan PLAN --sources DIR --out OUT
    python -m kernel_builder.driver.units object --unit UNIT.json --files DIR --label NAME --out OUT
    python -m kernel_builder.driver.units object --plan PLAN --source REL --file FILE \\
        [--headers DIR] --out OUT
    python -m kernel_builder.driver.units link --plan PLAN --objects DIR... --out OUT

``deps`` measures what each unit reads (``driver.unitdeps``) and writes ``OUT/deps.json``.
``object --unit`` compiles one unit from that entry alone: its canonical command, the kernel
files it reads (``--files``), the generated files it reads; it knows no plan, no variant and
no torch it does not read, so variants whose compile of it is the same share the object.
``object --plan`` is the compile of a unit that could not be measured (the plan's command).

Each step recreates the plan's scratch directory at the same place under this build's
temporary directory (so the compiler sees the same paths as the plan's configure did;
the prefix maps keep them out of the objects), then runs the plan's command. ``object``
writes ``OUT/object.o`` and ``OUT/unit.json`` (its source); ``link`` lays every object back, links, and writes the module and ``module.json`` (ops id, archs,
file name), which ``run_variant --prebuilt-module`` assembles into the variant.
"""

from __future__ import annotations

import argparse
import json

import attrs
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kernel_builder.errors import BuildError, KernelBuilderError
from kernel_builder.driver.generate import DRIVER_STUB_FILE
from kernel_builder.driver.planfile import TOP, UID_PLACEHOLDER, Plan, Unit
from kernel_builder.driver.unitdeps import UNIT_DIR, UnitDeps, scan_plan

__all__ = ["DEPS", "OBJECT", "UNIT", "compile_exact", "compile_unit", "link_objects", "main", "write_deps"]

# An object step's output: the object, and which unit it is (the link puts it back in place).
OBJECT = "object.o"
UNIT = "unit.json"
DEPS = "deps.json"  # the deps step's output: source -> unitdeps.UnitDeps


def _top() -> str:
    return os.environ.get("NIX_BUILD_TOP") or tempfile.gettempdir()


# The kernel's unique id (``--unique-id``), put where a plan made without it has
# UID_PLACEHOLDER (per-object.nix plans every commit of a kernel once).
_UNIQUE_ID: str | None = None


def _here(text: str) -> str:
    text = text.replace(TOP, _top())
    return text.replace(UID_PLACEHOLDER, _UNIQUE_ID) if _UNIQUE_ID else text


def _overlay(origin: Path, dest: Path, *, substitute: bool = False) -> None:
    """Copy the files under ``origin`` into ``dest``, writable (store copies are not);
    with ``substitute``, ``_here`` in their names and contents (``TOP`` becomes this
    build's temporary directory, the unique id's placeholder the unique id)."""
    for root, _dirs, files in os.walk(origin):
        rel = Path(root).relative_to(origin).as_posix()
        target = dest / (_here(rel) if substitute else rel)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            data = (Path(root) / name).read_bytes()
            if substitute:
                data = data.replace(TOP.encode(), _top().encode())
                if _UNIQUE_ID:
                    data = data.replace(UID_PLACEHOLDER.encode(), _UNIQUE_ID.encode())
            (target / (_here(name) if substitute else name)).write_bytes(data)


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


def write_deps(
    plan_dir: Path, sources: Path, out: Path, aliases: list[tuple[str, str]] | None = None, *,
    only: str | None = None, unit_file: Path | None = None,
) -> dict[str, UnitDeps]:
    """``OUT/deps.json``: every unit of the plan (or ``only`` that one, its contents
    ``unit_file``) measured over the kernel files in ``sources``."""
    jobs = int(os.environ.get("NIX_BUILD_CORES") or 0) or os.cpu_count() or 1
    if only is not None:
        merged = Path(_top()) / "sources"
        _overlay(sources, merged)
        if unit_file is not None:
            (merged / only).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(unit_file, merged / only)
        sources = merged
    found = scan_plan(plan_dir, sources, work=Path(_top()) / "scan", jobs=jobs, aliases=aliases or [], only=only)
    out.mkdir(parents=True, exist_ok=True)
    data = {source: attrs.asdict(deps) for source, deps in sorted(found.items())}
    (out / DEPS).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    for deps in found.values():
        # the reason's first line only: a compiler error is the object's to report (deps.json keeps it whole)
        what = ("exact, ops id" if deps.ops_id else "exact") if deps.exact else f"the plan's command: {deps.reason.splitlines()[0][:200]}"
        print(f"kernel-builder: {deps.source}: {len(deps.kernel_files)} kernel file(s), "
              f"{len(deps.store_roots)} store path(s) ({what})", file=sys.stderr)
    return found


def merge_deps(parts: list[Path], out: Path) -> None:
    """``OUT/deps.json``: the per-unit steps' entries in one file (what evaluation reads)."""
    data: dict[str, object] = {}
    for part in parts:
        data.update(json.loads((part / DEPS).read_text()))
    out.mkdir(parents=True, exist_ok=True)
    (out / DEPS).write_text(json.dumps(dict(sorted(data.items())), indent=1, sort_keys=True) + "\n")


def compile_exact(unit_file: Path, files: Path | None, label: str, out: Path) -> Path:
    """Compile one measured unit (a ``deps.json`` entry) in a scratch directory of a fixed
    name, from the files it reads alone."""
    deps = json.loads(unit_file.read_text())
    source = deps["source"]
    unit_dir = Path(_top()) / "kernel-builder" / "unit"

    def here(text: str) -> str:
        return text.replace(UNIT_DIR, str(unit_dir)).replace(TOP, _top())

    for rel in deps["kernel_files"]:
        if files is None:
            raise BuildError(f"{source} reads {rel} but the object step got no kernel files")
        target = unit_dir / "src" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(files / rel, target)
    for rel, text in deps["generated"].items():
        target = unit_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    cwd = Path(here(deps["directory"]))
    cwd.mkdir(parents=True, exist_ok=True)
    argv = [here(arg) for arg in deps["command"]]
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stdout + done.stderr)
    if done.returncode != 0:
        raise BuildError(
            f"compiling {source} for {label} failed (exit {done.returncode}); the compiler's messages are above\n"
            f"command:\n  {' '.join(argv)}",
            hint=f"fix {source}",
        )
    out.mkdir(parents=True, exist_ok=True)
    dest = out / OBJECT
    shutil.copyfile(unit_dir / "object.o", dest)
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
        raise BuildError(f"linking {_here(plan.module)} for {plan.variant} failed (exit {done.returncode}); command:\n  {command}")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(directory / _here(plan.module), out / _here(plan.module))
    stub = directory / DRIVER_STUB_FILE  # a CUDA plan's stub libcuda.so.1: the variant's import check loads it
    if stub.is_file():
        shutil.copyfile(stub, out / DRIVER_STUB_FILE)
    facts = {"ops_id": _here(plan.ops_id), "archs": list(plan.archs), "module": _here(plan.module), "variant": plan.variant}
    (out / "module.json").write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
    return out / _here(plan.module)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m kernel_builder.driver.units", description=__doc__.split("\n")[0])
    steps = p.add_subparsers(dest="step", required=True)
    deps = steps.add_parser("deps", help="measure what each translation unit reads (deps.json)")
    deps.add_argument("--plan", required=True, type=Path, help="the plan's output (plan.json, tree/)")
    deps.add_argument("--sources", required=True, type=Path, help="the backend's compiled files and headers, laid out as in the kernel")
    deps.add_argument("--out", required=True, type=Path)
    deps.add_argument("--unit", dest="only", help="measure this unit only (its contents: --unit-file)")
    deps.add_argument("--unit-file", type=Path, help="with --unit: the unit's contents")
    deps.add_argument("--alias", action="append", default=[], metavar="HOME=COMPILER",
                      help="a CUDA home and the CUDA compiler made from the same wheels (store paths)")
    obj = steps.add_parser("object", help="compile one translation unit")
    obj.add_argument("--unit", type=Path, help="the unit's deps.json entry (a measured unit: no --plan)")
    obj.add_argument("--files", type=Path, help="with --unit: the kernel files the unit reads, laid out as in the kernel")
    obj.add_argument("--label", default="", help="with --unit: what the unit is compiled for, in messages")
    obj.add_argument("--plan", type=Path, help="the plan's output (plan.json, tree/)")
    obj.add_argument("--source", help="the unit's path relative to the kernel, as in the plan")
    obj.add_argument("--file", type=Path, help="the unit's contents")
    obj.add_argument("--headers", type=Path, help="the backend's other files (headers), laid out as in the kernel")
    obj.add_argument("--unique-id", help="with --plan: the kernel's unique id, where the plan has its placeholder")
    obj.add_argument("--out", required=True, type=Path)
    link = steps.add_parser("link", help="link the objects into the module")
    link.add_argument("--plan", required=True, type=Path)
    link.add_argument("--objects", nargs="*", default=[], type=Path, help="outputs of the object steps")
    link.add_argument("--unique-id", help="the kernel's unique id, where the plan has its placeholder")
    link.add_argument("--out", required=True, type=Path)
    merge = steps.add_parser("merge", help="one deps.json from each unit's")
    merge.add_argument("--parts", nargs="*", default=[], type=Path, help="outputs of the per-unit deps steps")
    merge.add_argument("--out", required=True, type=Path)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    global _UNIQUE_ID
    _UNIQUE_ID = (getattr(args, "unique_id", None) or "").replace("-", "_") or None
    try:
        if args.step == "deps":
            aliases = [tuple(a.split("=", 1)) for a in args.alias if "=" in a]
            write_deps(args.plan, args.sources, args.out, aliases, only=args.only, unit_file=args.unit_file)  # type: ignore[arg-type]
        elif args.step == "merge":
            merge_deps(args.parts, args.out)
        elif args.step == "object" and args.unit is not None:
            compile_exact(args.unit, args.files, args.label, args.out)
        elif args.step == "object":
            if args.plan is None or args.source is None or args.file is None:
                raise BuildError("object: --unit, or --plan, --source and --file, are required")
            compile_unit(args.plan, args.source, args.file, args.headers, args.out)
        else:
            link_objects(args.plan, args.objects, args.out)
    except KernelBuilderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
