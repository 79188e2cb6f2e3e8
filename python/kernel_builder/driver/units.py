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
Every step gets its ``driver.job.UnitJob`` (argv, and the sandbox from the environment).
"""

from __future__ import annotations

import json

import attrs
import os
import shutil
import subprocess
import sys
from pathlib import Path

from kernel_builder.errors import BuildError, KernelBuilderError
from kernel_builder.driver.generate import DRIVER_STUB_FILE
from kernel_builder.driver.job import UnitJob, parse
from kernel_builder.driver.planfile import TOP, UID_PLACEHOLDER, Plan, Unit
from kernel_builder.driver.unitdeps import UNIT_DIR, UnitDeps, scan_plan

__all__ = ["DEPS", "OBJECT", "UNIT", "compile_exact", "compile_unit", "link_objects", "main", "write_deps"]

# An object step's output: the object, and which unit it is (the link puts it back in place).
OBJECT = "object.o"
UNIT = "unit.json"
DEPS = "deps.json"  # the deps step's output: source -> unitdeps.UnitDeps


def _here(job: UnitJob, text: str) -> str:
    """``text`` with ``TOP`` as this build's temporary directory and, where a plan made
    without it has UID_PLACEHOLDER (per-object.nix plans every commit of a kernel once),
    the kernel's unique id (``--unique-id``)."""
    text = text.replace(TOP, job.sandbox.temp)
    return text.replace(UID_PLACEHOLDER, job.uid) if job.uid else text


def _overlay(origin: Path, dest: Path, *, substitute: UnitJob | None = None) -> None:
    """Copy the files under ``origin`` into ``dest``, writable (store copies are not);
    with ``substitute``, that job's ``_here`` in their names and contents."""
    for root, _dirs, files in os.walk(origin):
        rel = Path(root).relative_to(origin).as_posix()
        target = dest / (_here(substitute, rel) if substitute else rel)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            data = (Path(root) / name).read_bytes()
            if substitute:
                data = data.replace(TOP.encode(), substitute.sandbox.temp.encode())
                if substitute.uid:
                    data = data.replace(UID_PLACEHOLDER.encode(), substitute.uid.encode())
            (target / (_here(substitute, name) if substitute else name)).write_bytes(data)


def _load(job: UnitJob) -> tuple[Plan, Path]:
    assert job.plan is not None
    plan = Plan.from_json((job.plan / "plan.json").read_text())
    scratch = Path(_here(job, plan.scratch))
    _overlay(job.plan / "tree", scratch, substitute=job)
    return plan, scratch


def _unit(plan: Plan, source: str) -> Unit:
    for unit in plan.units:
        if unit.source == source:
            return unit
    raise BuildError(
        f"{source} is not a translation unit of {plan.variant}'s plan; it has {', '.join(u.source for u in plan.units)}",
        hint="the Nix side and the planner disagree on which files are compiled: a bug, please report it",
    )


def compile_unit(job: UnitJob) -> Path:
    """Compile ``job.source`` (its contents: ``job.file``) with the plan's command; give back the object."""
    assert job.source is not None and job.file is not None
    source, out = job.source, job.out
    plan, scratch = _load(job)
    unit = _unit(plan, source)
    if job.headers is not None:
        _overlay(job.headers, scratch / "src")
    target = scratch / "src" / source
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(job.file, target)
    obj = scratch / _here(job, unit.object)
    obj.parent.mkdir(parents=True, exist_ok=True)
    argv = [_here(job, arg) for arg in unit.command]
    done = subprocess.run(argv, cwd=_here(job, unit.directory), capture_output=True, text=True, check=False)
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


def write_deps(job: UnitJob) -> dict[str, UnitDeps]:
    """``OUT/deps.json``: every unit of the plan (or ``job.only`` that one, its contents
    ``job.unit_file``) measured over the kernel files in ``job.sources``."""
    assert job.plan is not None and job.sources is not None
    sources, only, unit_file, out = job.sources, job.only, job.unit_file, job.out
    jobs = job.sandbox.cores or os.cpu_count() or 1
    if only is not None:
        merged = Path(job.sandbox.temp) / "sources"
        _overlay(sources, merged)
        if unit_file is not None:
            (merged / only).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(unit_file, merged / only)
        sources = merged
    found = scan_plan(job.plan, sources, work=Path(job.sandbox.temp) / "scan", jobs=jobs, aliases=job.aliases, only=only,
                      top=job.sandbox.top or "/tmp")
    out.mkdir(parents=True, exist_ok=True)
    data = {source: attrs.asdict(deps) for source, deps in sorted(found.items())}
    (out / DEPS).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    for deps in found.values():
        # the reason's first line only: a compiler error is the object's to report (deps.json keeps it whole)
        what = ("exact, ops id" if deps.ops_id else "exact") if deps.exact else f"the plan's command: {deps.reason.splitlines()[0][:200]}"
        print(f"kernel-builder: {deps.source}: {len(deps.kernel_files)} kernel file(s), "
              f"{len(deps.store_roots)} store path(s) ({what})", file=sys.stderr)
    return found


def merge_deps(job: UnitJob) -> None:
    """``OUT/deps.json``: the per-unit steps' entries in one file (what evaluation reads)."""
    out = job.out
    data: dict[str, object] = {}
    for part in job.parts:
        data.update(json.loads((part / DEPS).read_text()))
    out.mkdir(parents=True, exist_ok=True)
    (out / DEPS).write_text(json.dumps(dict(sorted(data.items())), indent=1, sort_keys=True) + "\n")


def compile_exact(job: UnitJob) -> Path:
    """Compile one measured unit (a ``deps.json`` entry, ``job.unit``) in a scratch directory
    of a fixed name, from the files it reads alone (``job.files``)."""
    assert job.unit is not None
    files, label, out, top = job.files, job.label, job.out, job.sandbox.temp
    deps = json.loads(job.unit.read_text())
    source = deps["source"]
    unit_dir = Path(top) / "kernel-builder" / "unit"

    def here(text: str) -> str:
        return text.replace(UNIT_DIR, str(unit_dir)).replace(TOP, top)

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


def link_objects(job: UnitJob) -> Path:
    """Lay the objects back into the plan's build directory, run its link, write the module."""
    out = job.out
    plan, scratch = _load(job)
    for directory in job.objects:
        unit = _unit(plan, json.loads((directory / UNIT).read_text())["source"])
        target = scratch / _here(job, unit.object)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(directory / OBJECT, target)
    missing = [u.source for u in plan.units if not (scratch / _here(job, u.object)).is_file()]
    if missing:
        raise BuildError(
            f"the link of {plan.variant} has no object for {', '.join(missing)}",
            hint="the Nix side and the planner disagree on which files are compiled: a bug, please report it",
        )
    shell = job.sandbox.shell
    command = _here(job, plan.link_command)
    directory = Path(_here(job, plan.link_directory))
    done = subprocess.run([shell, "-c", command], cwd=directory, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stdout + done.stderr)
    if done.returncode != 0:
        raise BuildError(f"linking {_here(job, plan.module)} for {plan.variant} failed (exit {done.returncode}); command:\n  {command}")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(directory / _here(job, plan.module), out / _here(job, plan.module))
    stub = directory / DRIVER_STUB_FILE  # a CUDA plan's stub libcuda.so.1: the variant's import check loads it
    if stub.is_file():
        shutil.copyfile(stub, out / DRIVER_STUB_FILE)
    facts = {"ops_id": _here(job, plan.ops_id), "archs": list(plan.archs), "module": _here(job, plan.module), "variant": plan.variant}
    (out / "module.json").write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
    return out / _here(job, plan.module)


def main(argv: list[str] | None = None) -> int:
    try:
        job = parse("units", argv)
        assert isinstance(job, UnitJob)
        if job.step == "deps":
            write_deps(job)
        elif job.step == "merge":
            merge_deps(job)
        elif job.step == "object" and job.unit is not None:
            compile_exact(job)
        elif job.step == "object":
            compile_unit(job)
        else:
            link_objects(job)
    except KernelBuilderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
