"""``kernel-builder build --local``: build with the torch you have, no Nix.

The variants follow from the toolchain Python's torch: its version (or the kernel's
stable-ABI version), CPU always, CUDA when that torch is a CUDA build; noarch backends
always. Other compiled backends are skipped with a note unless asked for by name, in which
case their build files are generated and the build fails, saying the toolchain is absent.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

from kernel_builder.variant_build.toolchain_probe import Toolchain, probe_toolchain
from kernel_builder.variant_build.variant import VariantResult, build_variant
from kernel_builder.config.model import Backend, Build
from kernel_builder.errors import BuildError
from kernel_builder.variants.host import host_platform
from kernel_builder.variants.names import Compute, Variant, parse

__all__ = ["build_local", "local_variants"]


def _arch_variant(build: Build, backend: Backend, toolchain: Toolchain) -> Variant:
    if backend is Backend.CUDA:
        compute = Compute("cuda", toolchain.cuda_major_minor)
    elif backend is Backend.CPU:
        compute = Compute("cpu")
    elif backend is Backend.METAL:
        compute = Compute("metal")
    elif backend is Backend.ROCM:
        compute = Compute("rocm", tuple(int(p) for p in (toolchain.hip or "0.0").split(".")[:2]))
    else:
        compute = Compute("xpu", tuple(int(p) for p in (toolchain.xpu or "0.0").split(".")[:2]))
    stable = build.stable_abi_for(backend)
    host = host_platform()
    if stable is not None:
        return Variant.stable_abi(stable.major_minor(), compute, host.cpu, host.os)
    return Variant.torch(toolchain.torch_major_minor, compute, host.cpu, host.os, cxx11=host.os == "linux" or None)


def _noarch_backends(system: str) -> set[Backend]:
    """Backends with a build set on ``system``: the noarch variants ``list-variants`` lists."""
    from kernel_builder.variants.buildsets import load_build_sets

    return {b.backend for b in load_build_sets() if b.system == system}


def local_variants(
    build: Build, toolchain: Toolchain, backends: Iterable[str] | None = None, *, system: str | None = None
) -> tuple[list[str], list[str]]:
    """(variant names to build, skip notes) for this toolchain.

    Without ``backends``, noarch variants are those ``list-variants`` lists for ``system``
    (default: this machine); a backend asked for by name is built anyway.
    """
    from kernel_builder.variants.buildsets import current_system

    wanted = None if backends is None else {Backend.parse(b) for b in backends}
    system = system or current_system()
    names: list[str] = []
    skipped: list[str] = []
    listed: set[Backend] | None = None
    for backend in build.general.backends:
        if wanted is not None and backend not in wanted:
            continue
        if not build.is_arch_for(backend):
            listed = _noarch_backends(system) if listed is None else listed
            if wanted is None and backend not in listed:
                skipped.append(f"torch-{backend.value}: no build set for {system} (pass --backend {backend.value} to build it anyway)")
                continue
            names.append(f"torch-{backend.value}")
            continue
        runnable = backend is Backend.CPU or (backend is Backend.CUDA and toolchain.cuda is not None)
        if not runnable and wanted is None:
            skipped.append(f"{backend.value}: the toolchain torch {toolchain.torch_version} cannot build it")
            continue
        if backend is Backend.CUDA and toolchain.cuda is None:
            raise BuildError(
                f"toolchain for cuda is not available: torch {toolchain.torch_version} at {toolchain.python} has no CUDA",
                hint="pass --toolchain-python with a CUDA build of torch",
            )
        names.append(_arch_variant(build, backend, toolchain).name)
    if wanted is not None:
        unknown = wanted - set(build.general.backends)
        if unknown:
            raise BuildError(
                f"--backend {', '.join(sorted(b.value for b in unknown))} is not in [general] backends "
                f"{[b.value for b in build.general.backends]}"
            )
    return names, skipped


def build_local(
    kernel_dir: str | Path,
    *,
    variants: Iterable[str] | None = None,
    backends: Iterable[str] | None = None,
    out_dir: str | Path | None = None,
    toolchain: str | None = None,
    jobs: int | None = None,
    verbose: bool = False,
) -> list[VariantResult]:
    """Build the kernel in ``kernel_dir`` into ``out_dir`` (default ``kernel_dir/build``).

    ``variants`` builds exactly those names; otherwise the names come from the toolchain
    (see ``local_variants``), restricted to ``backends`` when given. ``toolchain`` is the
    Python with torch (default: this interpreter).
    """
    from kernel_builder.config import load

    kernel_dir = Path(kernel_dir)
    build = load(kernel_dir, check_sources=True)
    python = toolchain or sys.executable
    out = Path(out_dir) if out_dir is not None else kernel_dir / "build"
    if variants is not None:
        names = list(variants)
        for name in names:  # every name checked before anything is announced or built
            try:
                parse(name)
            except ValueError as exc:
                raise BuildError(str(exc), hint="run `kernel-builder list-variants` to see valid names") from None
    else:
        names, skipped = local_variants(build, probe_toolchain(python), backends)
        for note in skipped:
            print(f"kernel-builder: skipping {note}", file=sys.stderr)
        if not names:
            raise BuildError(
                "no variant of this kernel can be built with this toolchain",
                hint="pass --toolchain-python with a torch that fits build.toml, or choose --backend",
            )
    print(f"kernel-builder: {len(names)} variant(s) selected: {', '.join(names)}", file=sys.stderr)
    created = not out.exists()
    # SIGTERM unwinds like Ctrl-C, so the staging directory of the running variant is removed.
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main else None
    try:
        return [
            build_variant(kernel_dir, name, out, toolchain_python=python, build=build, jobs=jobs, verbose=verbose)
            for name in names
        ]
    except BaseException:
        if created and out.is_dir() and not any(out.iterdir()):  # a failed first build leaves no empty build/
            out.rmdir()
        raise
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
