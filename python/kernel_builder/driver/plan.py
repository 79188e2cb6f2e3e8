"""The per-object build's plan of one variant: one compile command per translation unit.

    python -m kernel_builder.driver.plan --source SRC --variant NAME --out OUT \\
        --toolchain-python PY --unique-id ID

Runs the planner of the one-variant build (``variant.make_plan``, ``compile.write_project``)
and CMake's configure step with ``CMAKE_EXPORT_COMPILE_COMMANDS``, then writes
``OUT/plan.json`` (see ``Plan``) and ``OUT/tree/``: the configured scratch directory
without the sources (the generated project, ``include/registration.h``, the CMake build
directory with its response files), which every object and the link build in.

The plan's Nix derivation gets empty files in place of the sources, so its output does
not change when a source's contents do: only the object of that source is rebuilt. Paths
under the build's temporary directory are written with ``TOP`` in their place
(``driver.units`` puts its own back), so the plan holds no trace of where it ran.
Its options and the environment variables it reads are ``driver.job``'s (a ``VariantJob``).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from kernel_builder.backends import backend_module
from kernel_builder.config import load
from kernel_builder.config.model import Build
from kernel_builder.errors import BuildError, KernelBuilderError
from kernel_builder.driver.compile import build_env, configure_args, write_project
from kernel_builder.driver.job import VariantJob, parse as parse_job
from kernel_builder.driver.ops_id import ops_identifier, unique_id
from kernel_builder.driver.scratch import scratch_dir
from kernel_builder.driver.planfile import TOP, Plan, Unit
from kernel_builder.driver.variant import make_plan, read_build
from kernel_builder.pyenv import find_tool, probe_toolchain
from kernel_builder.variants.names import Kind, parse

__all__ = ["main", "split_commands", "write_plan"]

def _tokenize(text: str, top: str) -> str:
    return text.replace(top, TOP)


def split_commands(
    compile_commands: list[dict[str, str]], link_lines: list[str], *, scratch: Path, top: Path, ops_id: str
) -> tuple[tuple[Unit, ...], str, str, str]:
    """(units, link command, link directory, module) from CMake's ``compile_commands.json``
    and ``ninja -t commands`` (whose last line is the link), paths under ``top`` tokenized."""
    src = scratch / "src"
    units = []
    for entry in compile_commands:
        directory = Path(entry["directory"])
        argv = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
        output = entry.get("output") or argv[argv.index("-o") + 1]
        source = Path(entry["file"])
        if source.is_relative_to(scratch / "project"):
            continue  # a generated source (CompilePlan.generated_targets): the plan step builds it
        if not source.is_relative_to(src):
            raise BuildError(f"compile command for {source}, which is outside the plan's sources {src}")
        units.append(Unit(
            source=source.relative_to(src).as_posix(),
            object=_tokenize((directory / output).relative_to(scratch).as_posix(), str(top)),
            command=tuple(_tokenize(arg, str(top)) for arg in argv),
            directory=_tokenize(str(directory), str(top)),
        ))
    if not link_lines:
        raise BuildError("`ninja -t commands` printed nothing: no link command in the plan")
    link = link_lines[-1]
    words = shlex.split(link)
    modules = [w for w in words if w.startswith(ops_id) and w.endswith(".so")]
    if not modules:
        raise BuildError(f"the last command of the build does not write {ops_id}*.so: {link}")
    build_dir = scratch / "cmake-build"
    return (tuple(sorted(units, key=lambda u: u.source)), _tokenize(link, str(top)),
            _tokenize(str(build_dir), str(top)), modules[-1])


def _copy_tree(origin: Path, dest: Path, top: str) -> None:
    """``origin`` into ``dest`` without the sources (the object builds bring the real ones),
    ``top`` written as ``TOP`` in every file (CMake's response files and caches name it)."""
    needle, token = top.encode(), TOP.encode()
    for root, dirs, files in os.walk(origin):
        here = Path(root)
        if here == origin:
            dirs[:] = [d for d in dirs if d != "src"]
        target = dest / here.relative_to(origin)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            data = (here / name).read_bytes()
            (target / name).write_bytes(data.replace(needle, token))


def write_plan(job: VariantJob, build: Build | None = None) -> Plan:
    """Plan ``job.variant`` of the kernel in ``job.source`` into ``job.out`` (``build``: its
    build.toml when the caller read it already)."""
    source, out, capabilities = job.source, job.out, job.options.cuda_capabilities
    build = build or load(source)
    variant = parse(job.variant)
    if variant.kind is Kind.NOARCH:
        raise BuildError(f"variant {variant} compiles nothing: it has no plan")
    uid = unique_id(source, override=job.options.uid)
    ops_id = ops_identifier(build.python_name, variant.backend, uid)
    narrowed = capabilities if backend_module(variant.backend).narrows_capabilities and capabilities else None
    toolchain = probe_toolchain(job.toolchain.python)
    with scratch_dir(build, source, variant.name, ops_id) as scratch:
        compile_plan = make_plan(build, variant, ops_id, scratch, toolchain, given=job.toolchain, narrow_cuda=narrowed)
        project = write_project(compile_plan, scratch.path)
        build_dir = scratch.path / "cmake-build"
        env = build_env(compile_plan, job.toolchain.environ)
        cross = job.toolchain.target.platform is not None
        configure = [*configure_args(compile_plan, toolchain, project, build_dir, cross=cross),
                     "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"]
        _run(configure, env=env, what="cmake configure")
        ninja = find_tool("ninja", toolchain.python)
        listed = _run([ninja, "-C", str(build_dir), "-t", "commands"], env=env, what="ninja -t commands")
        commands = json.loads((build_dir / "compile_commands.json").read_text())
        if compile_plan.generated_targets:  # built here, so the link finds them in the tree
            _run([ninja, "-C", str(build_dir), *compile_plan.generated_targets], env=env, what="ninja (generated sources)")
        top = scratch.path.parent.parent
        units, link, link_dir, module = split_commands(
            commands, listed.splitlines(), scratch=scratch.path, top=top, ops_id=ops_id
        )
        plan = Plan(
            variant=variant.name, ops_id=ops_id, archs=tuple(compile_plan.archs),
            scratch=_tokenize(str(scratch.path), str(top)), units=units,
            link_command=link, link_directory=link_dir, module=module,
        )
        out.mkdir(parents=True, exist_ok=True)
        _copy_tree(scratch.path, out / "tree", str(top))
    (out / "plan.json").write_text(plan.to_json())
    return plan


def _run(cmd: list[str], *, env: dict[str, str], what: str) -> str:
    """Run ``cmd``; its output is the derivation's log. Its stdout is given back."""
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        sys.stderr.write(done.stdout)
        raise BuildError(f"{what} failed (exit {done.returncode}); command:\n  {shlex.join(cmd)}\n(the output is above)")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    try:
        job = parse_job("plan", argv)
        assert isinstance(job, VariantJob)
        plan = write_plan(job, read_build(job))
    except KernelBuilderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"kernel-builder: planned {plan.variant}: {len(plan.units)} translation unit(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
