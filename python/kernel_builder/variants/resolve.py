"""Which build variants can this system load, and which is best.

``resolve(system, names)`` is a pure function in the spirit of ``packaging.tags``: every
candidate directory name gets exactly one decision, accepted ones come back in preference
order (best first) and rejected ones carry the reason. The acceptance rule is
``variants.compat.fits``; it and the ranking here are
those of the reference loader (PyPI ``kernels``), so a tree resolves to the same variant with
either loader; a differential test holds us to it.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from kernel_builder.backends import spec
from kernel_builder.variants.compat import fits
from kernel_builder.variants.names import Kind, Variant, parse
from kernel_builder.variants.system import System

__all__ = ["VariantAccepted", "VariantRejected", "Resolution", "resolve", "format_trace"]


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


def _python_rank(v: Variant) -> tuple[int, int, int]:
    """abi3 before abi3t (a GIL Python prefers abi3), then the newest Python version."""
    tag = v.python_tag
    if tag is None:
        return (0, 0, 0)
    return (0 if tag.abi == "abi3" else 1, -tag.version[0], -tag.version[1])


def _compute_rank(v: Variant) -> int:
    """The newest compatible minor of a versioned backend first."""
    if v.compute is None:
        return 1  # a backend-agnostic SDK is the least specific
    return -(v.compute.version or (0, 0))[1] if spec(v.compute.name).versioned else 0


def _rank(v: Variant) -> tuple[int, ...]:
    """Smaller is better: stable ABI (newest first) < torch (tagless first) < tvm-ffi <
    SDK with compiled parts < noarch (torch, MLX; universal last) < SDK for a backend < bare
    SDK; arch ties broken by Python ABI and version."""
    if v.kind in (Kind.NOARCH, Kind.MLX):
        return (4, 0, 0, 1 if v.noarch == "universal" else 0, 0, 0, 0)
    if v.kind is Kind.SDK:
        if v.python is None:
            return (5 if v.noarch is not None else 6, 0, 0, 0, 0, 0, 0)
        return (3, 0, 0, _compute_rank(v), *_python_rank(v))
    major, minor = v.version or (0, 0)
    if v.kind is Kind.STABLE_ABI:
        framework = (0, -major, -minor)
    elif v.kind is Kind.TORCH:
        framework = (1, 0, 0 if v.cxx11 is None else 1)
    else:
        framework = (2, 0, 0)
    return (*framework, _compute_rank(v), *_python_rank(v))


def resolve(system: System, names: Iterable[str]) -> Resolution:
    """Decide every candidate name; accepted ones sorted best first.

    Ties keep input order (the sort is stable). Names that are not variant names are
    rejected with that reason and sorted last.
    """
    accepted: list[tuple[tuple[int, ...], str]] = []
    rejected: list[tuple[tuple[int, ...], VariantRejected]] = []
    unparsable: list[VariantRejected] = []
    for name in names:
        try:
            variant = parse(name)
        except ValueError as exc:
            unparsable.append(VariantRejected(name, f"not a variant name ({exc})"))
            continue
        fit = fits(variant, system)
        if fit:
            accepted.append((_rank(variant), name))
        else:
            rejected.append((_rank(variant), VariantRejected(name, fit.reason or "")))
    accepted.sort(key=lambda item: item[0])
    rejected.sort(key=lambda item: item[0])
    return Resolution(
        accepted=tuple(VariantAccepted(name) for _, name in accepted),
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
