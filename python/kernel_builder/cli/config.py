"""``check-config`` and ``update-build``: thin Click shells over ``kernel_builder.config``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from kernel_builder.cli import output
from kernel_builder.config import BuildTomlError, cpp_deps, to_dict
from kernel_builder.config.model import CURRENT_EDITION, FRAMEWORK_KEYS, KEYED_EDITIONS, Backend
from kernel_builder.config.loading import build_toml_path
from kernel_builder.config.update import plan_update, write_atomic
from kernel_builder.variants.buildsets import load_build_sets
from kernel_builder.backends.cuda_archs import unbuilt_by_version
from kernel_builder.variants.checks import matrix_problems

if TYPE_CHECKING:
    from kernel_builder.config import Parsed

__all__ = ["check_config", "update_build"]

_DIR = click.argument("kernel_dir", metavar="[DIR]", default=".", type=click.Path(exists=True, file_okay=True, dir_okay=True))


def _summary(parsed: Parsed) -> str:
    build = parsed.build
    framework = next(k for k, cls in FRAMEWORK_KEYS.items() if isinstance(build.framework, cls))
    edition = str(parsed.edition)
    if parsed.edition not in KEYED_EDITIONS:
        edition += " (legacy; upgraded in memory, run `kernel-builder update-build`)"
    kernels = ", ".join(
        f"{name} ({k.backend.value})" if parsed.edition < 6 else f"{name} ({k.language.value})" for name, k in build.kernels.items()
    ) or "none"
    rows = [
        ("name", build.general.name),
        ("version", str(build.general.version)),
        ("edition", edition),
        ("framework", framework),
        ("backends", ", ".join(b.value for b in build.general.backends) or "none"),
        ("kernels", kernels),
    ]
    return "\n".join(f"{key + ':':<11}{value}" for key, value in rows)


def _check_matrix(parsed: Parsed, kernel_dir: str) -> None:
    """Problems only the build matrix shows (a stable ABI newer than the Torch it has)."""
    file = str(build_toml_path(kernel_dir))
    problems, warnings = matrix_problems(parsed, load_build_sets(), file=file)
    if problems:
        raise BuildTomlError(
            file, problems, hint="lower the stable ABI to a Torch version the matrix builds (see `kernel-builder list-variants`)"
        )
    for warning in warnings:
        output.warn(str(warning))


def _report_dependencies_and_archs(parsed: Parsed) -> None:
    """Say which backends a C++ dependency makes unbuildable here, which dependency releases
    stand in for upstream's, and which requested CUDA capabilities a CUDA version of the
    build matrix cannot build (those variants drop them)."""
    build = parsed.build
    for backend in build.general.backends:
        reason = cpp_deps.unbuildable_reason(build, backend)
        if reason:
            output.note(f"note: the {backend.value} variants cannot be built here: {reason}")
        for text in cpp_deps.stand_in_notes(build, backend):
            output.note(f"note: {text}")
    versions = {
        v.major_minor()
        for bs in load_build_sets()
        if bs.backend is Backend.CUDA and (v := bs.backend_version_v) is not None
    }
    for name, kernel in sorted(build.kernels_for(Backend.CUDA).items()):
        for arch, missing in unbuilt_by_version(kernel.cuda_capabilities or (), versions).items():
            shown = ", ".join(f"{a}.{b}" for a, b in missing)
            output.warn(f"[kernel.{name}] cuda-capabilities {arch}: CUDA {shown} cannot build it; those variants leave it out")


@click.command("check-config")
@_DIR
@click.option("--json", "as_json", is_flag=True, help="Print the normalised model (edition-6 keys) as JSON.")
@click.option(
    "--toolchain",
    type=click.Choice(["pinned", "host"]),
    default="pinned",
    show_default=True,
    help="The toolchain the build will use: pinned also refuses flags that build for this machine only "
    "(-march=native, -arch=native), as `build` does; host allows them.",
)
def check_config(kernel_dir: str, as_json: bool, toolchain: str = "pinned") -> None:
    """Validate DIR/build.toml (default: the current directory) and summarise it.

    Every problem of the file is reported at once, as FILE:LINE:COL: KEY.PATH: PROBLEM,
    and the command exits 3. A valid file prints its name, version, edition, framework,
    backends and kernels and exits 0. Warnings (for example a [kernel.X] whose backend
    is not in general.backends) go to stderr. DIR may also be the build.toml itself.
    With --toolchain pinned (the default) a flag that builds for this machine only
    (-march=native, nvcc -arch=native) is a problem too, as it is for `build`.

    \b
    Example:
      kernel-builder check-config examples/relu
      kernel-builder check-config --json examples/relu
    """
    from kernel_builder.flake.kernel import Kernel  # lazy: update-build needs no kernel value

    kernel = Kernel.read(kernel_dir, check_sources=True, warn=False)  # the one read; warnings are printed below
    kernel.refuse_host_specific_flags(toolchain)  # the same refusal as `build`'s, so check-config passes only what builds
    parsed = kernel.parsed
    _check_matrix(parsed, kernel_dir)
    _report_dependencies_and_archs(parsed)
    for warning in parsed.warnings:
        output.warn(str(warning))
    if as_json:
        output.result_json(to_dict(parsed.build))
    else:
        output.result(_summary(parsed))


@click.command("update-build")
@_DIR
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if build.toml needs an update (for CI).")
@click.option("--diff", "show_diff", is_flag=True, help="Print the change as a unified diff instead of writing it.")
def update_build(kernel_dir: str, check: bool, show_diff: bool) -> None:
    """Rewrite DIR/build.toml (default: the current directory) as edition 6.

    Edition-5 files get `edition = 6`, legacy v4 files gain it; v3 files also get
    `version = 1` when it is missing and an empty [torch-noarch] when they have no
    framework table (v3 files without `license` are refused: add one first). Each
    [kernel.NAME] `backend = "cuda"` becomes `language = "cpp-cuda"`. Comments, key order
    and formatting are kept. [torch-noarch] `cuda-capabilities` / `rocm-archs` become
    `cuda_capabilities` / `rocm_archs`, the spelling PyPI `kernels` also reads (in any
    edition); an edition-6 file without those is left untouched. Files older than v3
    (`universal = ...`, no `backends`) are refused with what to write by hand. The file
    is replaced atomically.

    \b
    Example:
      kernel-builder update-build --diff my-kernel
      kernel-builder update-build my-kernel
      kernel-builder update-build --check my-kernel   # exit 1 if still legacy
    """
    plan = plan_update(kernel_dir)
    if not plan.needed:
        output.note(f"{plan.path} is already edition {CURRENT_EDITION}; nothing to do")
        return
    if show_diff:
        output.result(plan.diff(), nl=False)
    if check:
        output.note(f"{plan.path} needs an update ({plan.describe()}); run `kernel-builder update-build`")
        sys.exit(1)
    if show_diff:
        return
    write_atomic(plan.path, plan.new_text)
    output.note(f"updated {plan.path}: {plan.describe()}")
