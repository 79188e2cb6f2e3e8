"""The build matrix: (build.toml, build sets, system) → the variants to build, with reasons.

A pure function. For each build set, in file order (systems sorted when listing all):

1. keep it only if its backend is in ``general.backends``; for tvm-ffi kernels only if it
   has a tvm-ffi version; for CUDA sets only if ``[general.cuda] minver`` ≤ CUDA ≤
   ``maxver``; for ``[torch]`` kernels only if ``[torch] minver`` ≤ Torch ≤ ``maxver``.
   Bounds are inclusive; unset ones come from the build sets file's ``defaultBounds``.
2. for a backend built against the Torch stable ABI keep only the newest Torch per
   (system, backend, backend version).
3. name it (see ``names``): tvm-ffi kernels ``tvm-ffi<MM>-…``; ``[torch]`` kernels with a
   compiled component for the backend ``torch-stable-abi<MM>-…`` (stable ABI) or
   ``torch<MM>[-cxx11]-…``; ``[mlx-noarch]`` kernels ``mlx-<backend>`` (as kernels 0.19
   names them); everything else, and every TPU set, ``torch-<backend>``.
4. build sets giving the same name collapse into one variant at the first one's place; it
   is a bundle variant if any of them is a bundle set, and is built from the first bundle
   set (else the first set).

``nix/lib/pure/matrix.nix`` implements the same rules; a test compares both on many files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from kernel_builder._eq import fields_eq, fields_hash
from kernel_builder._repr import fields_repr
from kernel_builder.backends import spec
from kernel_builder.config.model import Backend, Build, Torch, TvmFfi, Version
from kernel_builder.variants.buildsets import BuildSet, DefaultBounds, all_systems, default_bounds
from kernel_builder.variants.names import BackendInfo, Variant

__all__ = [
    "MatrixVariant",
    "Decision",
    "Skipped",
    "MatrixResult",
    "matrix",
    "variant_for",
]


@attrs.frozen(slots=False)
class MatrixVariant:
    """One variant of the matrix and the build set it is built from."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    variant: Variant
    build_set: BuildSet
    bundle: bool
    build_sets: tuple[BuildSet, ...] = ()

    @property
    def name(self) -> str:
        return self.variant.name

    @property
    def system(self) -> str | None:
        """The Nix system of arch variants; ``None`` for noarch ones (they run anywhere)."""
        return None if self.variant.is_noarch else self.build_set.system

    @property
    def local(self) -> bool:
        """Whether the pinned toolchains of this machine build it: its build set's, or for a
        noarch variant any build set of its group, since it does not depend on the torch it
        is built with (Nix tries them in that order: ``nix/lib/pure/variant-records.nix``)."""
        return self.build_set.local or (self.variant.is_noarch and any(s.local for s in self.build_sets))

    @property
    def backend(self) -> Backend:
        return self.build_set.backend

    @property
    def torch(self) -> str:
        return self.build_set.torch

    @property
    def backend_version(self) -> str | None:
        return self.build_set.backend_version

    @property
    def kind(self) -> str:
        return self.variant.kind.value

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "system": self.system,
            "backend": self.backend.value,
            "backend_version": self.backend_version,
            "torch": self.torch,
            "kind": self.kind,
            "bundle": self.bundle,
            "local": self.local,
            "build_set": self.build_set.label,
        }


@attrs.frozen(eq=False, slots=False)
class Decision:
    """What happened to one build set: ``variant`` is set when it is in."""
    __repr__ = fields_repr

    build_set: BuildSet
    reason: str
    variant: str | None = None

    @property
    def included(self) -> bool:
        return self.variant is not None


@attrs.frozen(eq=False, slots=False)
class Skipped:
    __repr__ = fields_repr

    build_set: BuildSet
    reason: str


@attrs.frozen(eq=False, slots=False)
class MatrixResult:
    __repr__ = fields_repr

    variants: tuple[MatrixVariant, ...]
    skipped: tuple[Skipped, ...]
    decisions: tuple[Decision, ...]
    notes: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variants]

    def bundle_only(self) -> MatrixResult:
        return attrs.evolve(self, variants=tuple(v for v in self.variants if v.bundle))


def _compute(build_set: BuildSet) -> BackendInfo:
    version = build_set.backend_version_v
    return BackendInfo(build_set.backend, None if version is None else version.major_minor())


def variant_for(build: Build, build_set: BuildSet) -> Variant:
    """The variant name ``build`` gets from ``build_set`` (no filtering)."""
    backend = build_set.backend
    if isinstance(build.framework, TvmFfi):
        assert build_set.tvm_ffi is not None
        return Variant.tvm_ffi(Version.parse(build_set.tvm_ffi), _compute(build_set), build_set.cpu, build_set.os)
    if build.is_mlx:
        return Variant.mlx_for(backend.value)
    # a backend no [kernel.*] component may target (TPU) has noarch variants only
    if not spec(backend).kernel or not build.is_arch_for(backend):
        return Variant.noarch_for(backend.value)
    stable = build.stable_abi_for(backend)
    if stable is not None:
        return Variant.stable_abi(stable, _compute(build_set), build_set.cpu, build_set.os)
    cxx11 = True if build_set.cxx11 and build_set.os == "linux" else None
    return Variant.torch(build_set.torch_v, _compute(build_set), build_set.cpu, build_set.os, cxx11=cxx11)


def _filter_reason(build: Build, build_set: BuildSet, bounds: DefaultBounds) -> str | None:
    general = build.general
    backend = build_set.backend
    if backend not in general.backends:
        listed = ", ".join(b.value for b in general.backends) or "none"
        return f"backend {backend.value} not in general.backends ({listed})"
    if isinstance(build.framework, TvmFfi) and build_set.tvm_ffi is None:
        return "no tvm-ffi version in this build set"
    if backend is Backend.CUDA:
        cuda = build_set.backend_version_v
        assert cuda is not None
        section = general.cuda
        minver = section.minver if section and section.minver else bounds.cuda_min
        maxver = section.maxver if section and section.maxver else bounds.cuda_max
        if minver is not None and cuda < minver:
            return f"cuda {build_set.backend_version} < [general.cuda].minver {minver}"
        if maxver is not None and cuda > maxver:
            return f"cuda {build_set.backend_version} > [general.cuda].maxver {maxver}"
    if isinstance(build.framework, Torch):
        torch = build_set.torch_v
        minver = build.framework.minver or bounds.torch_min
        maxver = build.framework.maxver or bounds.torch_max
        if minver is not None and torch < minver:
            return f"torch {build_set.torch} < [torch].minver {minver}"
        if maxver is not None and torch > maxver:
            return f"torch {build_set.torch} > [torch].maxver {maxver}"
    return None


def _stable_key(build_set: BuildSet) -> tuple[str, str, str]:
    return (build_set.system, build_set.backend.value, build_set.backend_version or "")


def _select_sets(build_sets: Sequence[BuildSet], system: str | None) -> list[BuildSet]:
    if system is None or system == "all":
        order = {s: i for i, s in enumerate(all_systems(build_sets))}
        return sorted(build_sets, key=lambda b: order[b.system])  # stable: file order within a system
    return [b for b in build_sets if b.system == system]


def matrix(
    build: Build, build_sets: Iterable[BuildSet], system: str | None = None, *, bounds: DefaultBounds | None = None
) -> MatrixResult:
    """The ordered variants of ``build`` on ``system`` (``None`` or ``"all"``: every system).

    ``bounds``: the Torch/CUDA bounds for a build.toml that sets none; by default the build
    sets file's ``defaultBounds``."""
    bounds = bounds if bounds is not None else default_bounds()
    candidates = _select_sets(list(build_sets), system)
    reasons: dict[int, str] = {}
    kept: list[int] = []
    for index, build_set in enumerate(candidates):
        reason = _filter_reason(build, build_set, bounds)
        if reason is None:
            kept.append(index)
        else:
            reasons[index] = reason

    # Stable ABI: only the newest Torch per (system, backend, backend version) survives.
    newest: dict[tuple[str, str, str], int] = {}
    for index in kept:
        build_set = candidates[index]
        if build.stable_abi_for(build_set.backend) is None:
            continue
        key = _stable_key(build_set)
        best = newest.get(key)
        if best is None or candidates[best].torch_v < build_set.torch_v:
            newest[key] = index
    for index in kept:
        build_set = candidates[index]
        if build.stable_abi_for(build_set.backend) is not None:
            winner = newest[_stable_key(build_set)]
            if winner != index:
                reasons[index] = f"stable ABI: superseded by torch {candidates[winner].torch}"

    groups: dict[str, list[BuildSet]] = {}
    named: dict[str, Variant] = {}  # a name is one variant (names.parse(v.name) == v)
    decisions: list[Decision] = []
    for index, build_set in enumerate(candidates):
        if index in reasons:
            decisions.append(Decision(build_set, reasons[index]))
            continue
        variant = variant_for(build, build_set)
        name = named.setdefault(variant.name, variant).name
        first = name not in groups
        groups.setdefault(name, []).append(build_set)
        reason = "in" if first else f"in (same variant as {groups[name][0].label})"
        decisions.append(Decision(build_set, reason, name))

    variants = []
    for name, sets in groups.items():
        bundle_sets = [s for s in sets if s.bundle]
        chosen = bundle_sets[0] if bundle_sets else sets[0]
        variants.append(MatrixVariant(named[name], chosen, bool(bundle_sets), tuple(sets)))

    covered = {b.backend for b in candidates}
    notes = tuple(
        f"backend {b.value}: no build set in build-sets.json" + ("" if system in (None, "all") else f" for {system}")
        for b in build.general.backends
        if b not in covered
    )
    skipped = tuple(Skipped(d.build_set, d.reason) for d in decisions if not d.included)
    return MatrixResult(tuple(variants), skipped, tuple(decisions), notes)
