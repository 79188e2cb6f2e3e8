"""Which build variants can this system load, and which is best.

``resolve(system, names)`` is a pure function in the spirit of ``packaging.tags``: every
candidate directory name gets exactly one decision, accepted ones come back in preference
order (best first) and rejected ones carry the reason. The acceptance and ranking rules are
those of the reference loader (PyPI ``kernels``), so a tree resolves to the same variant with
either loader; a differential test holds us to it.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from kernel_builder.config.model import Backend
from kernel_builder.variants import names
from kernel_builder.variants.system import BackendInfo, System

__all__ = [
    "Candidate",
    "VariantAccepted",
    "VariantRejected",
    "Resolution",
    "resolve",
    "candidate",
    "format_trace",
]

# Metal arch builds use -std=metal4.0, which needs macOS 26 at run time.
METAL_MIN_MACOS = (26, 0)

TORCH, STABLE_ABI, TVM_FFI, NOARCH = "torch", "stable-abi", "tvm-ffi", "noarch"


@attrs.frozen
class Candidate:
    """The parts of a variant name that resolution looks at."""

    name: str
    kind: str  # torch | stable-abi | tvm-ffi | noarch
    version: tuple[int, int] | None = None  # framework version (torch, stable ABI, tvm-ffi)
    cxx11: bool | None = None  # torch arch only: None when the name has no ABI tag
    backend: BackendInfo | None = None  # arch only
    cpu: str | None = None
    os: str | None = None
    noarch: str | None = None  # noarch only: the name after ``torch-``

    @property
    def is_arch(self) -> bool:
        return self.kind != NOARCH


def candidate(name: str) -> Candidate:
    """Parse a directory name into a ``Candidate``; ``ValueError`` when it is not a variant."""
    v = names.parse(name)
    if v.kind is names.Kind.NOARCH:
        return Candidate(name=name, kind=NOARCH, noarch=v.noarch)
    assert v.compute is not None
    return Candidate(
        name=name,
        kind=_KINDS[v.kind],
        version=v.version,
        cxx11=v.cxx11,
        backend=v.compute,
        cpu=v.cpu,
        os=v.os,
    )


_KINDS = {names.Kind.TORCH: TORCH, names.Kind.STABLE_ABI: STABLE_ABI, names.Kind.TVM_FFI: TVM_FFI}


@attrs.frozen
class VariantAccepted:
    """A variant this system can load."""

    variant: str


@attrs.frozen
class VariantRejected:
    """A variant this system cannot load, and why."""

    variant: str
    reason: str


Decision = VariantAccepted | VariantRejected


@attrs.frozen
class Resolution:
    """Accepted variants best first, rejected ones with reasons (in rank order too)."""

    accepted: tuple[VariantAccepted, ...]
    rejected: tuple[VariantRejected, ...]

    @property
    def best(self) -> str | None:
        return self.accepted[0].variant if self.accepted else None

    @property
    def decisions(self) -> tuple[Decision, ...]:
        """The whole trace: accepted first (best first), then rejected."""
        return (*self.accepted, *self.rejected)

    def trace(self) -> str:
        return format_trace(self)


def _fmt(version: tuple[int, ...] | None) -> str:
    return "none" if version is None else ".".join(str(p) for p in version)


def _check(system: System, c: Candidate) -> str | None:
    """The reason ``c`` cannot load on ``system``, or ``None`` when it can."""
    if not c.is_arch:
        wanted = system.backend.noarch_name
        if c.noarch in (wanted, "universal"):
            return None
        return f"noarch backend {c.noarch} does not match system backend {wanted} and is not universal"
    if system.free_threaded:
        return "arch kernels need the stable ABI, which free-threaded Python < 3.15 lacks"
    if c.cpu != system.cpu:
        return f"CPU {c.cpu} does not match system CPU {system.cpu}"
    if c.os != system.os:
        return f"OS {c.os} does not match system OS {system.os}"
    if c.kind == TORCH:
        if c.version != system.torch_version:
            return f"Torch version {_fmt(c.version)} does not match environment Torch version {_fmt(system.torch_version)}"
        if c.cxx11 is not None and c.cxx11 != system.cxx11_abi:
            return f"Torch CXX11 ABI {c.cxx11} does not match environment Torch CXX11 ABI {system.cxx11_abi}"
    elif c.kind == STABLE_ABI:
        if system.torch_version is None or (c.version or (0, 0)) > system.torch_version:
            return (
                f"Torch stable ABI {_fmt(c.version)} is too new for environment Torch version "
                f"{_fmt(system.torch_version)}"
            )
    elif c.kind == TVM_FFI:
        if c.version != system.tvm_ffi_version:
            return f"tvm-ffi version {_fmt(c.version)} does not match environment tvm-ffi version {_fmt(system.tvm_ffi_version)}"
    assert c.backend is not None
    mine = system.backend
    if mine.name is Backend.CUDA and c.backend.name is Backend.CUDA:
        theirs_v, mine_v = c.backend.version or (0, 0), mine.version or (0, 0)
        if theirs_v[0] != mine_v[0] or theirs_v[1] > mine_v[1]:
            return f"CUDA {_fmt(theirs_v)} is not compatible with system CUDA {_fmt(mine_v)} (same major, minor <= system)"
        return None
    if c.backend.variant_str != mine.variant_str:
        return f"backend {c.backend.variant_str} does not match selected backend {mine.variant_str}"
    if c.backend.name is Backend.METAL and (system.macos_version is None or system.macos_version < METAL_MIN_MACOS):
        return f"Metal kernels require macOS {_fmt(METAL_MIN_MACOS)} or later, system macOS is {_fmt(system.macos_version)}"
    return None


def _rank(c: Candidate) -> tuple[int, ...]:
    """Smaller is better: stable ABI (newest first) < torch (tagless first) < tvm-ffi = noarch."""
    if not c.is_arch:
        return (2, 0, 0, 1 if c.noarch == "universal" else 0)
    major, minor = c.version or (0, 0)
    if c.kind == STABLE_ABI:
        framework = (0, -major, -minor)
    elif c.kind == TORCH:
        framework = (1, 0, 0 if c.cxx11 is None else 1)
    else:
        framework = (2, 0, 0)
    assert c.backend is not None
    versioned = c.backend.name in (Backend.CUDA, Backend.ROCM, Backend.XPU, Backend.CANN)
    return (*framework, -(c.backend.version or (0, 0))[1] if versioned else 0)


def resolve(system: System, names: Iterable[str]) -> Resolution:
    """Decide every candidate name; accepted ones sorted best first.

    Ties keep input order (the sort is stable). Names that are not variant names are
    rejected with that reason and sorted last.
    """
    accepted: list[tuple[tuple[int, ...], Candidate]] = []
    rejected: list[tuple[tuple[int, ...], VariantRejected]] = []
    unparsable: list[VariantRejected] = []
    for name in names:
        try:
            c = candidate(name)
        except ValueError as exc:
            unparsable.append(VariantRejected(name, f"not a variant name ({exc})"))
            continue
        reason = _check(system, c)
        if reason is None:
            accepted.append((_rank(c), c))
        else:
            rejected.append((_rank(c), VariantRejected(name, reason)))
    accepted.sort(key=lambda item: item[0])
    rejected.sort(key=lambda item: item[0])
    return Resolution(
        accepted=tuple(VariantAccepted(c.name) for _, c in accepted),
        rejected=(*(r for _, r in rejected), *unparsable),
    )


def format_trace(resolution: Resolution) -> str:
    """One line per decision: ``NAME compatible, preferred ✅`` / ``NAME: reason``."""
    lines = []
    for i, d in enumerate(resolution.decisions):
        if isinstance(d, VariantAccepted):
            lines.append(f"{d.variant} compatible, preferred ✅" if i == 0 else f"{d.variant} compatible ✅")
        else:
            lines.append(f"{d.variant}: {d.reason}")
    return "\n".join(lines)
