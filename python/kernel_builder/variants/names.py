"""Variant names as values: one grammar, ``format`` and ``parse`` that round-trip.

A variant name says which build of a kernel a directory under ``build/`` holds::

    torch213-cxx11-cu130-x86_64-linux      Torch 2.13, C++11 ABI, CUDA 13.0, x86_64 Linux
    torch212-cpu-aarch64-darwin             Torch 2.12, CPU, Apple silicon
    torch-stable-abi211-cu126-x86_64-linux  Torch stable ABI 2.11 (loads on Torch >= 2.11)
    tvm-ffi01-cu126-x86_64-linux            tvm-ffi 0.1
    torch-cuda                              noarch (pure Python), one per backend

Versions are flattened the way the reference loader reads them back: Torch, stable-ABI
and tvm-ffi versions are "first digit = major, the rest = minor"; compute versions
(``cu``, ``rocm``, ``xpu``, ``cann``) are "all but the last digit = major, last digit =
minor". Values that could not be read back unambiguously (a compute minor of 10 or more,
a framework major of 10 or more) are rejected at construction so that
``parse(format(v)) == v`` always holds.
"""

from __future__ import annotations

import enum
import functools
import re

import attrs

from kernel_builder._eq import fields_eq, fields_hash
from kernel_builder._repr import fields_repr
from kernel_builder.backends import BACKENDS, Backend, by_token, spec
from kernel_builder.versions import major_minor as _major_minor
from kernel_builder.versions import optional_major_minor as _optional_major_minor

__all__ = [
    "Kind",
    "BackendInfo",
    "Variant",
    "parse",
    "format_variant",
    "try_parse",
    "flatten_version",
    "VERSIONED_COMPUTE",
    "PLAIN_COMPUTE",
]

# Compute backends whose name carries a version, and the prefix used in names (from the
# one backend table, kernel_builder.backends).
VERSIONED_COMPUTE: dict[str, str] = {b.value: s.token for b, s in BACKENDS.items() if s.versioned}
# Compute backends written without a version.
PLAIN_COMPUTE = tuple(b.value for b, s in BACKENDS.items() if not s.versioned)

# Patterns as text: re compiles one on first use (and caches it), not at every start-up.
_VERSIONED_RE = "(" + "|".join(map(re.escape, VERSIONED_COMPUTE.values())) + r")(\d+)(\d)"
_TORCH_RE = r"torch(\d)(\d+)"
_STABLE_RE = r"torch-stable-abi(\d)(\d+)"
_TVM_FFI_RE = r"tvm-ffi(\d)(\d+)"
_WORD_RE = re.compile(r"[A-Za-z0-9_.]+")


class Kind(str, enum.Enum):
    """What a variant is built against."""

    TORCH = "torch"  # torch<MM>[-cxx11]-<compute>-<cpu>-<os>
    STABLE_ABI = "torch-stable-abi"  # torch-stable-abi<MM>-<compute>-<cpu>-<os>
    TVM_FFI = "tvm-ffi"  # tvm-ffi<MM>-<compute>-<cpu>-<os>
    NOARCH = "noarch"  # torch-<backend>

    def __str__(self) -> str:
        return self.value


def flatten_version(version: tuple[int, int]) -> str:
    """``(2, 13)`` → ``"213"``; the digits used in variant names."""
    return f"{version[0]}{version[1]}"


def _backend_name(value: str | Backend) -> Backend:
    return value if isinstance(value, Backend) else Backend.parse(value)


@attrs.frozen(slots=False)
class BackendInfo:
    """A compute backend and its version: the one value for "cuda 12.8", on a machine
    (``System.backend``) and in a variant name (``Variant.compute``, written ``cu128``).

    ``version`` is ``None`` for cpu, metal, neuron and tpu. Any version is a valid machine
    fact; ``Variant`` checks that its compute part can be written in a name and read back.
    """
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    name: Backend = attrs.field(converter=_backend_name)
    version: tuple[int, int] | None = attrs.field(default=None, converter=_optional_major_minor)

    @property
    def variant_str(self) -> str:
        """The token this backend has in a variant name: ``cu128``, ``rocm71``, ``cpu``."""
        s = spec(self.name)
        return s.token + flatten_version(self.version or (0, 0)) if s.versioned else s.token

    @property
    def noarch_name(self) -> str:
        """The name a noarch variant for this backend has (``torch-<name>``); CANN is ``npu``."""
        return spec(self.name).noarch_name

    @classmethod
    def parse(cls, text: str) -> BackendInfo:
        """A variant name's compute token: ``cu128`` -> cuda 12.8, ``cpu`` -> cpu."""
        if text in PLAIN_COMPUTE:
            return cls(text)
        match = re.fullmatch(_VERSIONED_RE, text)
        if match is None:
            raise ValueError(f"unknown compute part {text!r} (expected cpu, metal, neuron, tpu, cuXY, rocmXY, xpuXY or cannXY)")
        return cls(by_token(match[1]), (int(match[2]), int(match[3])))

    def __str__(self) -> str:
        if self.version is None:
            return self.name.value
        return f"{self.name.value} {self.version[0]}.{self.version[1]}"


def _check_compute(compute: BackendInfo) -> None:
    """Whether ``compute`` can be written in a variant name and read back unchanged (every
    ``Backend`` is in ``VERSIONED_COMPUTE`` or ``PLAIN_COMPUTE``)."""
    backend = compute.name.value
    if backend in VERSIONED_COMPUTE:
        if compute.version is None:
            raise ValueError(f"compute backend {backend!r} needs a version")
        if not 0 <= compute.version[1] <= 9 or compute.version[0] < 0:
            raise ValueError(
                f"{backend} version {compute.version[0]}.{compute.version[1]} cannot be written in a "
                "variant name: the minor version must be a single digit"
            )
    elif compute.version is not None:
        raise ValueError(f"compute backend {backend!r} takes no version")


def _check_word(field: str, value: str | None) -> None:
    if value is None or not _WORD_RE.fullmatch(value):
        raise ValueError(f"variant {field} must be a non-empty word without dashes, got {value!r}")


@attrs.frozen(slots=False)
class Variant:
    """A parsed variant name. ``str(v)`` / ``v.name`` is the name; ``parse(v.name) == v``.

    Arch variants (``kind`` torch, stable ABI, tvm-ffi) have ``version`` (the Torch,
    stable-ABI or tvm-ffi major.minor), ``compute``, ``cpu`` and ``os``; ``cxx11`` is
    ``True`` for a ``-cxx11`` tag, ``False`` for the legacy ``-cxx98`` tag and ``None`` for
    no tag (only Torch arch names carry one). Noarch variants have only ``noarch``: the text
    after ``torch-`` (normally a backend name; the loader also meets ``universal``).
    """
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    kind: Kind = attrs.field(converter=Kind)
    version: tuple[int, int] | None = attrs.field(default=None, converter=_optional_major_minor)
    compute: BackendInfo | None = None
    cpu: str | None = None
    os: str | None = None
    cxx11: bool | None = None
    noarch: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind is Kind.NOARCH:
            if not self.noarch:
                raise ValueError("a noarch variant needs a backend name (torch-<backend>)")
            extra = [f for f in ("version", "compute", "cpu", "os", "cxx11") if getattr(self, f) is not None]
            if extra:
                raise ValueError(f"a noarch variant has no {', '.join(extra)}")
            return
        if self.noarch is not None:
            raise ValueError("only noarch variants have a noarch backend name")
        if self.version is None or self.compute is None:
            raise ValueError(f"a {self.kind} variant needs a version and a compute part")
        if not 0 <= self.version[0] <= 9 or self.version[1] < 0:
            raise ValueError(
                f"{self.kind} version {self.version[0]}.{self.version[1]} cannot be written in a variant "
                "name: the major version must be a single digit"
            )
        _check_compute(self.compute)
        _check_word("cpu", self.cpu)
        _check_word("os", self.os)
        if self.cxx11 is not None and self.kind is not Kind.TORCH:
            raise ValueError(f"only torch<MM> variants carry a cxx11/cxx98 tag, not {self.kind}")

    # -- constructors -------------------------------------------------------------------
    @classmethod
    def torch(
        cls, version: object, compute: BackendInfo | str, cpu: str, os: str, *, cxx11: bool | None = None
    ) -> Variant:
        return cls(Kind.TORCH, version, _compute(compute), cpu, os, cxx11)

    @classmethod
    def stable_abi(cls, version: object, compute: BackendInfo | str, cpu: str, os: str) -> Variant:
        return cls(Kind.STABLE_ABI, version, _compute(compute), cpu, os)

    @classmethod
    def tvm_ffi(cls, version: object, compute: BackendInfo | str, cpu: str, os: str) -> Variant:
        return cls(Kind.TVM_FFI, version, _compute(compute), cpu, os)

    @classmethod
    def noarch_for(cls, backend: str) -> Variant:
        return cls(Kind.NOARCH, noarch=str(backend))

    # -- views --------------------------------------------------------------------------
    @property
    def is_noarch(self) -> bool:
        return self.kind is Kind.NOARCH

    @property
    def backend(self) -> str:
        """The backend name: ``cuda`` for ``cu130``, ``cpu``, or a noarch name as written."""
        if self.kind is Kind.NOARCH:
            return self.noarch  # type: ignore[return-value]
        return self.compute.name.value  # type: ignore[union-attr]

    @property
    def system(self) -> str | None:
        """``<cpu>-<os>`` (the Nix system string) for arch variants, ``None`` for noarch."""
        if self.kind is Kind.NOARCH:
            return None
        return f"{self.cpu}-{self.os}"

    @functools.cached_property
    def name(self) -> str:
        """Made on first use and kept: a variant is immutable."""
        if self.kind is Kind.NOARCH:
            return f"torch-{self.noarch}"
        flat = flatten_version(self.version)  # type: ignore[arg-type]
        if self.kind is Kind.TORCH:
            head = f"torch{flat}"
            if self.cxx11 is not None:
                head += "-cxx11" if self.cxx11 else "-cxx98"
        elif self.kind is Kind.STABLE_ABI:
            head = f"torch-stable-abi{flat}"
        else:
            head = f"tvm-ffi{flat}"
        return f"{head}-{self.compute.variant_str}-{self.cpu}-{self.os}"  # type: ignore[union-attr]

    def __str__(self) -> str:
        return self.name


def _compute(value: BackendInfo | str) -> BackendInfo:
    return value if isinstance(value, BackendInfo) else BackendInfo.parse(value)


def _arch_tail(name: str, parts: list[str]) -> tuple[BackendInfo, str, str]:
    if len(parts) != 3:
        raise ValueError(f"invalid variant name {name!r}: expected <compute>-<cpu>-<os> after the framework part")
    compute, cpu, os = parts
    try:
        return BackendInfo.parse(compute), cpu, os
    except ValueError as exc:
        raise ValueError(f"invalid variant name {name!r}: {exc}") from None


def parse(name: str) -> Variant:
    """Parse a variant name; ``ValueError`` says what part is wrong."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"invalid variant name {name!r}")
    parts = name.split("-")
    try:
        if name.startswith("torch-stable-abi"):
            match = re.fullmatch(_STABLE_RE, "-".join(parts[:3]))
            if match is None:
                raise ValueError(f"invalid variant name {name!r}: expected torch-stable-abi<M><m>")
            compute, cpu, os = _arch_tail(name, parts[3:])
            return Variant.stable_abi((int(match[1]), int(match[2])), compute, cpu, os)
        if parts[0] == "torch":
            return Variant.noarch_for("-".join(parts[1:]))
        if parts[0].startswith("torch"):
            match = re.fullmatch(_TORCH_RE, parts[0])
            if match is None:
                raise ValueError(f"invalid variant name {name!r}: expected torch<M><m>")
            cxx11: bool | None = None
            rest = parts[1:]
            if rest and rest[0] in ("cxx11", "cxx98"):
                cxx11 = rest[0] == "cxx11"
                rest = rest[1:]
            compute, cpu, os = _arch_tail(name, rest)
            return Variant.torch((int(match[1]), int(match[2])), compute, cpu, os, cxx11=cxx11)
        if parts[0] == "tvm" and len(parts) > 1:
            match = re.fullmatch(_TVM_FFI_RE, "-".join(parts[:2]))
            if match is None:
                raise ValueError(f"invalid variant name {name!r}: expected tvm-ffi<M><m>")
            compute, cpu, os = _arch_tail(name, parts[2:])
            return Variant.tvm_ffi((int(match[1]), int(match[2])), compute, cpu, os)
    except ValueError as exc:
        if str(exc).startswith("invalid variant name"):
            raise
        raise ValueError(f"invalid variant name {name!r}: {exc}") from None
    raise ValueError(f"invalid variant name {name!r}: unknown framework (expected torch…, torch-stable-abi…, tvm-ffi… or torch-<backend>)")


def try_parse(name: str) -> Variant | None:
    """``parse`` that returns ``None`` for names that are not variants (e.g. stray dirs)."""
    try:
        return parse(name)
    except ValueError:
        return None


def format_variant(variant: Variant) -> str:
    """The name of ``variant`` (same as ``str(variant)``)."""
    return variant.name
