"""``kernel-builder list-variants``: the variants a kernel builds, and why build sets are out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kernel_builder.cli import output
from kernel_builder.config import cpp_deps
from kernel_builder.driver import rust
from kernel_builder.config.model import Backend, Build, Version
from kernel_builder.flake.kernel import Kernel
from kernel_builder.toolchain.pinned.availability import unpinned_python_depends, unpinned_reason
from kernel_builder.toolchain.pinned.lockrequests import cross_build_sets, import_check_names, lock_facts, lock_path, pins_rust, served_build_sets
from kernel_builder.variants.buildsets import all_systems, build_sets_path, current_system, default_bounds, load_build_sets
from kernel_builder.variants.matrix import MatrixVariant, matrix

__all__ = ["list_variants"]


@click.command("list-variants")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=True, path_type=Path))
@click.option(
    "--system",
    "system",
    metavar="SYSTEM|all",
    default=None,
    help="Nix system to list (x86_64-linux, aarch64-linux, aarch64-darwin) or `all`. Default: this machine.",
)
@click.option("--bundle", is_flag=True, help="Only variants of the default bundle (what `build` builds).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects (name, system, backend, torch, bundle, ...).")
@click.option("--explain", is_flag=True, help="Also show every build set and why it is in or out.")
@click.option(
    "--cuda-capabilities",
    "cuda_capabilities",
    metavar="LIST",
    help="Show the archs each CUDA variant builds when narrowed to these (comma-separated, as `build --cuda-capabilities`).",
)
def list_variants(
    directory: Path, system: str | None, bundle: bool, as_json: bool, explain: bool, cuda_capabilities: str | None = None
) -> None:
    """List the build variants of the kernel in DIRECTORY (default: the current directory).

    Every applicable build set's variant is listed, bundle and non-bundle alike (the
    second column says which); `--bundle` keeps the bundle ones. The third column says
    whether the pinned toolchains (nix/toolchain-lock.json) build it here, and if not,
    which torch build is missing and where it is published. Variant names follow
    docs/variants.md; the build sets come from nix/build-sets.json.

    \b
    Examples:
      kernel-builder list-variants examples/relu
      kernel-builder list-variants --system all --json examples/relu
      kernel-builder list-variants --explain --system x86_64-linux .

    With `--json --explain` the output is an object with `variants` and `build_sets`
    (each build set with `reason` and, when it is in, `variant`). Each JSON variant has
    `local` (buildable here) and, when it is not, `why_not_here`.
    """
    lock, sets_file = lock_path(), build_sets_path()  # found once, for every read below
    build_sets = load_build_sets(sets_file, served=served_build_sets(lock))
    known = all_systems(build_sets)
    if system is None:
        system = current_system()
    elif system != "all" and system not in known:
        raise click.BadParameter(f"unknown system {system!r}; expected one of {', '.join(known)} or all", param_hint="--system")

    build = Kernel.read(directory).build  # the one read of build.toml
    result = matrix(build, build_sets, system, bounds=default_bounds(sets_file))
    if bundle:
        result = result.bundle_only()
    archs = _narrowed_archs(build, result.variants, cuda_capabilities) if cuda_capabilities is not None else {}
    blocked = _blocked_backends(build, lock)

    def here(v: MatrixVariant) -> bool:
        return v.local and v.backend not in blocked

    lock_system, pypi_cuda = lock_facts(lock)  # read once, for every variant that is not buildable here
    cross = cross_build_sets(lock)

    def why_not(v: MatrixVariant) -> str:
        if not v.local:
            return unpinned_reason(v.torch, v.backend.value, v.backend_version, v.build_set.system,
                                   lock_system=lock_system, pypi_cuda=pypi_cuda, cross=cross)
        return blocked[v.backend]

    if as_json:
        variants = [
            v.to_json()
            | {"local": here(v)}
            | ({"archs": archs[v.name]} if v.name in archs else {})
            | ({} if here(v) else {"why_not_here": why_not(v)})
            for v in result.variants
        ]
        if explain:
            decisions = [
                {"build_set": d.build_set.label, "included": d.included, "variant": d.variant, "reason": d.reason}
                for d in result.decisions
            ]
            output.result_json({"variants": variants, "build_sets": decisions})
        else:
            output.result_json(variants)
    else:
        width = max((len(v.name) for v in result.variants), default=0)
        for v in result.variants:
            shown = f"  archs {' '.join(archs[v.name])}" if v.name in archs else ""
            where = "buildable-here" if here(v) else f"not-here: {why_not(v)}"
            output.result(f"{v.name:<{width}}  {'bundle' if v.bundle else 'non-bundle':<10}{shown}  {where}")
        if explain:
            output.result("")
            for d in result.decisions:
                if d.included:
                    output.result(f"in   {d.build_set.label} -> {d.variant}" + ("" if d.reason == "in" else f" {d.reason[3:]}"))
                else:
                    output.result(f"out  {d.build_set.label}: {d.reason}")

    for note in result.notes:
        output.note(f"note: {note}")
    where = "all systems" if system == "all" else system
    n_bundle = sum(1 for v in result.variants if v.bundle)
    n_here = sum(1 for v in result.variants if here(v))
    output.note(f"{len(result.variants)} variant(s) for {where} ({n_bundle} in the bundle, {n_here} buildable here)")


def _blocked_backends(build: Build, lock: Path) -> dict[Backend, str]:
    """Backend -> why its variants are not built here even with a pinned torch: a C++
    dependency nothing provides, or a ``python-depends`` name the import check has no pin
    for (the reasons the Nix build gives, in the same order)."""
    pinned = import_check_names(lock)
    rust_pinned = pins_rust(lock)
    out = {}
    for backend in build.general.backends:
        names = (*build.general.python_depends, *build.general.backend_python_depends(backend))
        reason = (cpp_deps.unbuildable_reason(build, backend) or rust.unbuildable_reason(build, backend, rust_pinned=rust_pinned)
                  or unpinned_python_depends(names, pinned))
        if reason:
            out[backend] = reason
    return out


def _narrowed_archs(build: Any, variants: Any, text: str) -> dict[str, list[str]]:
    """Variant name → the archs its build compiles under ``--cuda-capabilities text``
    (CUDA arch variants only); a narrowing that leaves a component nothing is an error."""
    from kernel_builder.backends.cuda_archs import archs_for, checked_capabilities  # lazy: only with --cuda-capabilities
    from kernel_builder.errors import BuildError  # lazy: as above

    try:
        only = list(checked_capabilities(text) or ())
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--cuda-capabilities") from None
    caps = {name: k.cuda_capabilities for name, k in build.kernels_for(Backend.CUDA).items()}
    out: dict[str, list[str]] = {}
    for v in variants:
        if v.backend is not Backend.CUDA or v.kind == "noarch" or not caps or v.backend_version is None:
            continue
        version = Version.parse(v.backend_version).major_minor()
        try:
            out[v.name] = [str(a) for a in archs_for(caps, version, only)]
        except BuildError as exc:
            raise click.UsageError(f"{v.name}: {exc}") from None
    return out
