"""Variant names as values: one grammar, ``format`` and ``parse`` that round-trip.

A variant name says which build of a kernel a directory under ``build/`` holds. Two
spellings exist; the builder writes the first (what the Hub's kernels use), the loader
reads both, as PyPI ``kernels`` 0.19.1 does::

    legacy                                   new (Python version and ABI spelled out)
    torch213-cxx11-cu130-x86_64-linux        torch-2.13-cxx11-cuda-13.0-cpython-3.9-abi3-x86_64-linux
    torch-stable-abi211-cu126-x86_64-linux   torch-stable-abi-2.11-cuda-12.6-cpython-3.9-abi3-x86_64-linux
    tvm-ffi01-cu126-x86_64-linux             tvm-ffi-0.1-cuda-12.6-cpython-3.9-abi3-x86_64-linux
    torch-cuda                               (noarch, pure Python, one per backend)
                                             mlx-metal (noarch MLX)
                                             sdk, sdk-cuda, sdk-cpython-3.12-abi3-x86_64-linux,
                                             sdk-cuda-12.8-cpython-3.12-abi3-x86_64-linux

A legacy name stands for ``cpython-3.9-abi3`` (``LEGACY_PYTHON``); ``Variant.python`` is
``None`` for it, so the spelling follows from the value. In legacy names versions are
flattened the way the reference loader reads them back: Torch, stable-ABI and tvm-ffi
versions are "first digit = major, the rest = minor"; compute versions (``cu``, ``rocm``,
``xpu``, ``cann``) are "all but the last digit = major, last digit = minor" (``rocm714`` is
ROCm 7.14). Values a legacy name could not carry unambiguously are rejected at
construction, so ``parse(format(v)) == v`` always holds. ``abi3t`` (free-threaded Python,
PEP 803) needs Python 3.15 or later.
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
    "PythonTag",
    "LEGACY_PYTHON",
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
_DOTTED_RE = r"(\d+)\.(\d+)"  # a version in a new-style name: 2.13, 13.0, 3.12
_PYTHON_MARKER = "cpython"
_ABIS = ("abi3", "abi3t")
_ABI3T_MIN_PYTHON = (3, 15)
# Legacy ROCm names flatten 7.14 to rocm714, the one two-digit minor they carry.
_ROCM_714 = (7, 14)


class Kind(str, enum.Enum):
    """What a variant is built against."""

    TORCH = "torch"  # torch<MM>[-cxx11]-<compute>-<cpu>-<os>
    STABLE_ABI = "torch-stable-abi"  # torch-stable-abi<MM>-<compute>-<cpu>-<os>
    TVM_FFI = "tvm-ffi"  # tvm-ffi<MM>-<compute>-<cpu>-<os>
    NOARCH = "noarch"  # torch-<backend>
    MLX = "mlx"  # mlx-<backend>: noarch MLX (read, never built)
    SDK = "sdk"  # sdk[-<backend>][-cpython-X.Y-<abi>-<cpu>-<os>] (read, never built)

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

    @property
    def new_str(self) -> str:
        """This backend in a new-style name: ``cuda-12.8``, ``rocm-7.1``, ``cpu``."""
        if self.version is None:
            return self.name.value
        return f"{self.name.value}-{self.version[0]}.{self.version[1]}"

    @classmethod
    def parse(cls, text: str) -> BackendInfo:
        """A legacy name's compute token: ``cu128`` -> cuda 12.8, ``cpu`` -> cpu."""
        if text in PLAIN_COMPUTE:
            return cls(text)
        if text == "rocm714":
            return cls(Backend.ROCM, _ROCM_714)
        match = re.fullmatch(_VERSIONED_RE, text)
        if match is None:
            raise ValueError(f"unknown compute part {text!r} (expected cpu, metal, neuron, tpu, cuXY, rocmXY, xpuXY or cannXY)")
        return cls(by_token(match[1]), (int(match[2]), int(match[3])))

    @classmethod
    def parse_new(cls, parts: list[str]) -> BackendInfo:
        """A new-style name's backend parts: ``["cuda", "12.8"]`` -> cuda 12.8, ``["cpu"]``."""
        name = parts[0] if parts else ""
        if name in PLAIN_COMPUTE and len(parts) == 1:
            return cls(name)
        if name in VERSIONED_COMPUTE and len(parts) == 2:
            match = re.fullmatch(_DOTTED_RE, parts[1])
            if match is not None:
                return cls(name, (int(match[1]), int(match[2])))
        raise ValueError(
            f"unknown backend part {'-'.join(parts)!r} (expected cpu, metal, neuron, tpu, or cuda, rocm, xpu, cann "
            "followed by -<major>.<minor>)"
        )

    def __str__(self) -> str:
        if self.version is None:
            return self.name.value
        return f"{self.name.value} {self.version[0]}.{self.version[1]}"


def _check_compute(compute: BackendInfo, *, legacy: bool = True) -> None:
    """Whether ``compute`` can be written in a variant name and read back unchanged (every
    ``Backend`` is in ``VERSIONED_COMPUTE`` or ``PLAIN_COMPUTE``); a new-style name writes
    any version, a legacy one only a single-digit minor (and ROCm 7.14)."""
    backend = compute.name.value
    if backend in VERSIONED_COMPUTE:
        if compute.version is None:
            raise ValueError(f"compute backend {backend!r} needs a version")
        if compute.version[0] < 0 or compute.version[1] < 0:
            raise ValueError(f"{backend} version {compute.version} cannot be negative")
        if compute.name is Backend.ROCM and compute.version == _ROCM_714:
            return
        if legacy and compute.version[1] > 9:
            raise ValueError(
                f"{backend} version {compute.version[0]}.{compute.version[1]} cannot be written in a "
                "variant name: the minor version must be a single digit"
            )
    elif compute.version is not None:
        raise ValueError(f"compute backend {backend!r} takes no version")


def _check_word(field: str, value: str | None) -> None:
    if value is None or not _WORD_RE.fullmatch(value):
        raise ValueError(f"variant {field} must be a non-empty word without dashes, got {value!r}")


def _python_version(value: object) -> tuple[int, int]:
    return _major_minor(value)


@attrs.frozen(slots=False)
class PythonTag:
    """The Python a variant's compiled parts need: the oldest ``version`` and the ``abi``
    (``abi3``: the stable ABI of GIL builds; ``abi3t``: that of free-threaded builds,
    Python >= 3.15, PEP 803). Written ``cpython-3.12-abi3`` in a new-style name."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    version: tuple[int, int] = attrs.field(converter=_python_version)
    abi: str = "abi3"

    def __attrs_post_init__(self) -> None:
        if self.abi not in _ABIS:
            raise ValueError(f"Python ABI must be one of {', '.join(_ABIS)}, got {self.abi!r}")
        if self.abi == "abi3t" and self.version < _ABI3T_MIN_PYTHON:
            raise ValueError(f"abi3t needs Python 3.15 or later, not {self.version[0]}.{self.version[1]}")

    @classmethod
    def parse(cls, parts: list[str]) -> PythonTag:
        """``["cpython", "3.12", "abi3"]`` -> Python 3.12, abi3."""
        if len(parts) != 3 or parts[0] != _PYTHON_MARKER:
            raise ValueError(f"expected cpython-<major>.<minor>-<abi3|abi3t>, got {'-'.join(parts)!r}")
        match = re.fullmatch(_DOTTED_RE, parts[1])
        if match is None:
            raise ValueError(f"invalid Python version {parts[1]!r} (expected <major>.<minor>)")
        return cls((int(match[1]), int(match[2])), parts[2])

    def __str__(self) -> str:
        return f"{_PYTHON_MARKER}-{self.version[0]}.{self.version[1]}-{self.abi}"


#: What a legacy name (no ``cpython-…`` part) stands for.
LEGACY_PYTHON = PythonTag((3, 9), "abi3")


def _python_tag(value: object) -> PythonTag | None:
    if value is None or isinstance(value, PythonTag):
        return value
    if isinstance(value, str):
        return PythonTag.parse(value.split("-"))
    raise TypeError(f"python must be a PythonTag or text like 'cpython-3.12-abi3', got {value!r}")


@attrs.frozen(slots=False)
class Variant:
    """A parsed variant name. ``str(v)`` / ``v.name`` is the name; ``parse(v.name) == v``.

    Arch variants (``kind`` torch, stable ABI, tvm-ffi) have ``version`` (the Torch,
    stable-ABI or tvm-ffi major.minor), ``compute``, ``cpu`` and ``os``; ``cxx11`` is
    ``True`` for a ``-cxx11`` tag, ``False`` for the legacy ``-cxx98`` tag and ``None`` for
    no tag (only Torch arch names carry one); ``python`` is ``None`` for a legacy name
    (``cpython-3.9-abi3`` implied) and the ``PythonTag`` of a new-style one. Noarch variants
    (torch, MLX) have only ``noarch``: the text after ``torch-`` / ``mlx-`` (normally a
    backend name; the loader also meets ``universal``). SDK variants have an optional
    backend (``noarch`` without compiled parts, ``compute`` with them) and, together,
    ``python``, ``cpu`` and ``os`` when they hold compiled parts.
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
    python: PythonTag | None = attrs.field(default=None, converter=_python_tag)

    def __attrs_post_init__(self) -> None:
        if self.kind in (Kind.NOARCH, Kind.MLX):
            if not self.noarch:
                raise ValueError(f"a noarch variant needs a backend name ({self._noarch_head}-<backend>)")
            extra = [f for f in ("version", "compute", "cpu", "os", "cxx11", "python") if getattr(self, f) is not None]
            if extra:
                raise ValueError(f"a noarch variant has no {', '.join(extra)}")
            return
        if self.kind is Kind.SDK:
            self._check_sdk()
            return
        if self.noarch is not None:
            raise ValueError("only noarch and SDK variants have a noarch backend name")
        if self.version is None or self.compute is None:
            raise ValueError(f"a {self.kind} variant needs a version and a compute part")
        if self.version[0] < 0 or self.version[1] < 0:
            raise ValueError(f"{self.kind} version {self.version} cannot be negative")
        if self.python is None and self.version[0] > 9:
            raise ValueError(
                f"{self.kind} version {self.version[0]}.{self.version[1]} cannot be written in a legacy variant "
                "name: the major version must be a single digit"
            )
        _check_compute(self.compute, legacy=self.python is None)
        _check_word("cpu", self.cpu)
        _check_word("os", self.os)
        if self.cxx11 is not None and self.kind is not Kind.TORCH:
            raise ValueError(f"only torch<MM> variants carry a cxx11/cxx98 tag, not {self.kind}")

    def _check_sdk(self) -> None:
        if self.version is not None or self.cxx11 is not None:
            raise ValueError("an SDK variant has no framework version and no cxx11 tag")
        compiled = (self.python is not None, self.cpu is not None, self.os is not None)
        if len(set(compiled)) != 1:
            raise ValueError("an SDK variant names its Python, CPU and OS together, or none of them")
        if compiled[0]:
            if self.noarch is not None:
                raise ValueError("an SDK variant with compiled parts names a versioned backend (compute), not a noarch one")
            if self.compute is not None:
                _check_compute(self.compute, legacy=False)
            _check_word("cpu", self.cpu)
            _check_word("os", self.os)
        else:
            if self.compute is not None:
                raise ValueError("an SDK variant with a versioned backend also names its Python, CPU and OS")
            if self.noarch is not None:
                _check_word("backend", self.noarch)

    # -- constructors -------------------------------------------------------------------
    @classmethod
    def torch(
        cls,
        version: object,
        compute: BackendInfo | str,
        cpu: str,
        os: str,
        *,
        cxx11: bool | None = None,
        python: PythonTag | str | None = None,
    ) -> Variant:
        return cls(Kind.TORCH, version, _compute(compute), cpu, os, cxx11, python=python)

    @classmethod
    def stable_abi(
        cls, version: object, compute: BackendInfo | str, cpu: str, os: str, *, python: PythonTag | str | None = None
    ) -> Variant:
        return cls(Kind.STABLE_ABI, version, _compute(compute), cpu, os, python=python)

    @classmethod
    def tvm_ffi(
        cls, version: object, compute: BackendInfo | str, cpu: str, os: str, *, python: PythonTag | str | None = None
    ) -> Variant:
        return cls(Kind.TVM_FFI, version, _compute(compute), cpu, os, python=python)

    @classmethod
    def noarch_for(cls, backend: str) -> Variant:
        return cls(Kind.NOARCH, noarch=str(backend))

    @classmethod
    def mlx_for(cls, backend: str) -> Variant:
        return cls(Kind.MLX, noarch=str(backend))

    @classmethod
    def sdk(
        cls,
        backend: BackendInfo | str | None = None,
        *,
        python: PythonTag | str | None = None,
        cpu: str | None = None,
        os: str | None = None,
    ) -> Variant:
        """``sdk`` (nothing), ``sdk-<backend>`` (a name, no compiled parts) or an SDK with
        compiled parts for ``python`` on ``cpu``-``os`` (``backend`` a ``BackendInfo`` or None)."""
        if python is None:
            return cls(Kind.SDK, noarch=None if backend is None else str(backend))
        compute = None if backend is None else (backend if isinstance(backend, BackendInfo) else BackendInfo(backend))
        return cls(Kind.SDK, compute=compute, cpu=cpu, os=os, python=python)

    # -- views --------------------------------------------------------------------------
    @property
    def is_noarch(self) -> bool:
        """No compiled parts: a torch or MLX noarch variant, or an SDK without a system."""
        return self.kind in (Kind.NOARCH, Kind.MLX) or (self.kind is Kind.SDK and self.cpu is None)

    @property
    def is_legacy(self) -> bool:
        """Written in the legacy spelling (what the builder writes): no ``cpython-…`` part."""
        return self.kind in (Kind.TORCH, Kind.STABLE_ABI, Kind.TVM_FFI) and self.python is None

    @property
    def python_tag(self) -> PythonTag | None:
        """The Python the compiled parts need (``LEGACY_PYTHON`` for a legacy arch name),
        ``None`` when nothing is compiled."""
        if self.is_legacy:
            return LEGACY_PYTHON
        return self.python

    @property
    def backend(self) -> str | None:
        """The backend name: ``cuda`` for ``cu130``, ``cpu``, a noarch name as written, or
        ``None`` for a backend-agnostic SDK."""
        if self.compute is not None:
            return self.compute.name.value
        return self.noarch

    @property
    def system(self) -> str | None:
        """``<cpu>-<os>`` (the Nix system string) for variants with compiled parts, else ``None``."""
        if self.cpu is None:
            return None
        return f"{self.cpu}-{self.os}"

    @property
    def _noarch_head(self) -> str:
        return "mlx" if self.kind is Kind.MLX else "torch"

    @functools.cached_property
    def name(self) -> str:
        """Made on first use and kept: a variant is immutable."""
        if self.kind in (Kind.NOARCH, Kind.MLX):
            return f"{self._noarch_head}-{self.noarch}"
        if self.kind is Kind.SDK:
            parts = ["sdk"]
            if self.noarch is not None:
                parts.append(self.noarch)
            if self.compute is not None:
                parts.append(self.compute.new_str)
            if self.python is not None:
                parts += [str(self.python), f"{self.cpu}-{self.os}"]
            return "-".join(parts)
        assert self.version is not None and self.compute is not None
        if self.python is None:
            flat = flatten_version(self.version)
            head = {Kind.TORCH: f"torch{flat}", Kind.STABLE_ABI: f"torch-stable-abi{flat}"}.get(self.kind, f"tvm-ffi{flat}")
            compute = self.compute.variant_str
        else:
            dotted = f"{self.version[0]}.{self.version[1]}"
            head = {Kind.TORCH: f"torch-{dotted}", Kind.STABLE_ABI: f"torch-stable-abi-{dotted}"}.get(self.kind, f"tvm-ffi-{dotted}")
            compute = self.compute.new_str
        if self.cxx11 is not None:
            head += "-cxx11" if self.cxx11 else "-cxx98"
        python = "" if self.python is None else f"-{self.python}"
        return f"{head}-{compute}{python}-{self.cpu}-{self.os}"

    def __str__(self) -> str:
        return self.name


def _compute(value: BackendInfo | str) -> BackendInfo:
    return value if isinstance(value, BackendInfo) else BackendInfo.parse(value)


def _split_tail(parts: list[str], *, legacy: bool) -> tuple[BackendInfo, PythonTag | None, str, str]:
    """The parts after the framework: ``<compute>[-cpython-X.Y-<abi>]-<cpu>-<os>``."""
    if len(parts) < 3:
        raise ValueError("expected <compute>-<cpu>-<os> after the framework part")
    rest, cpu, os = parts[:-2], parts[-2], parts[-1]
    if legacy:
        if len(rest) != 1:
            raise ValueError("expected <compute>-<cpu>-<os> after the framework part")
        return BackendInfo.parse(rest[0]), None, cpu, os
    if _PYTHON_MARKER not in rest:
        raise ValueError("a new-style name needs cpython-<major>.<minor>-<abi> before <cpu>-<os>")
    at = rest.index(_PYTHON_MARKER)
    python = PythonTag.parse(rest[at:])
    if at == 0:
        raise ValueError("missing backend before cpython-…")
    return BackendInfo.parse_new(rest[:at]), python, cpu, os


def _version(pattern: str, text: str, expected: str) -> tuple[int, int]:
    match = re.fullmatch(pattern, text)
    if match is None:
        raise ValueError(f"expected {expected}")
    return int(match[1]), int(match[2])


def _parse_sdk(parts: list[str]) -> Variant:
    rest = parts[1:]
    if _PYTHON_MARKER in rest:
        if len(rest) < 2 or _PYTHON_MARKER not in rest[:-2]:
            raise ValueError("expected sdk[-<backend>]-cpython-<major>.<minor>-<abi>-<cpu>-<os>")
        head, cpu, os = rest[:-2], rest[-2], rest[-1]
        at = head.index(_PYTHON_MARKER)
        python = PythonTag.parse(head[at:])
        compute = BackendInfo.parse_new(head[:at]) if at else None
        return Variant(Kind.SDK, compute=compute, cpu=cpu, os=os, python=python)
    if len(rest) > 1:
        raise ValueError("expected sdk, sdk-<backend> or sdk[-<backend>]-cpython-<major>.<minor>-<abi>-<cpu>-<os>")
    return Variant(Kind.SDK, noarch=rest[0] if rest else None)


def _parse(name: str, parts: list[str]) -> Variant:
    """Dispatch on the framework part the way PyPI ``kernels`` 0.19.1 reads it."""
    if parts[0] == "sdk":
        return _parse_sdk(parts)
    if name.startswith("torch-stable-abi"):
        if len(parts) > 3 and parts[2] == "abi":  # torch-stable-abi-2.11-…
            version = _version(r"torch-stable-abi-" + _DOTTED_RE, "-".join(parts[:4]), "torch-stable-abi-<M>.<m>")
            return Variant(Kind.STABLE_ABI, version, *_arranged(parts[4:], legacy=False))
        version = _version(_STABLE_RE, "-".join(parts[:3]), "torch-stable-abi<M><m>")
        return Variant(Kind.STABLE_ABI, version, *_arranged(parts[3:], legacy=True))
    if parts[0] == "torch" and len(parts) > 1 and parts[1][:1].isdigit():  # torch-2.13[-cxx11]-…
        version = _version(_DOTTED_RE, parts[1], "torch-<M>.<m>")
        cxx11, rest = _cxx_tag(parts[2:])
        return Variant(Kind.TORCH, version, *_arranged(rest, legacy=False, cxx11=cxx11))
    if parts[0] == "torch":
        return Variant.noarch_for("-".join(parts[1:]))
    if parts[0] == "mlx" and len(parts) > 1 and not parts[1][:1].isdigit():
        return Variant.mlx_for("-".join(parts[1:]))
    if parts[0].startswith("torch"):
        version = _version(_TORCH_RE, parts[0], "torch<M><m>")
        cxx11, rest = _cxx_tag(parts[1:])
        return Variant(Kind.TORCH, version, *_arranged(rest, legacy=True, cxx11=cxx11))
    if parts[0] == "tvm" and len(parts) > 1 and parts[1].startswith("ffi"):
        if len(parts) > 2 and parts[1] == "ffi":  # tvm-ffi-0.1-…
            version = _version(_DOTTED_RE, parts[2], "tvm-ffi-<M>.<m>")
            return Variant(Kind.TVM_FFI, version, *_arranged(parts[3:], legacy=False))
        version = _version(_TVM_FFI_RE, "-".join(parts[:2]), "tvm-ffi<M><m>")
        return Variant(Kind.TVM_FFI, version, *_arranged(parts[2:], legacy=True))
    raise ValueError(
        "unknown framework (expected torch…, torch-stable-abi…, tvm-ffi…, torch-<backend>, mlx-<backend> or sdk…)"
    )


def _cxx_tag(parts: list[str]) -> tuple[bool | None, list[str]]:
    if parts and parts[0] in ("cxx11", "cxx98"):
        return parts[0] == "cxx11", parts[1:]
    return None, parts


def _arranged(parts: list[str], *, legacy: bool, cxx11: bool | None = None) -> tuple:
    """``Variant``'s positional fields after ``version``, from the parts after the framework."""
    compute, python, cpu, os = _split_tail(parts, legacy=legacy)
    return compute, cpu, os, cxx11, None, python


def parse(name: str) -> Variant:
    """Parse a variant name, legacy or new-style; ``ValueError`` says what part is wrong."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"invalid variant name {name!r}")
    try:
        return _parse(name, name.split("-"))
    except ValueError as exc:
        raise ValueError(f"invalid variant name {name!r}: {exc}") from None


def try_parse(name: str) -> Variant | None:
    """``parse`` that returns ``None`` for names that are not variants (e.g. stray dirs)."""
    try:
        return parse(name)
    except ValueError:
        return None


def format_variant(variant: Variant) -> str:
    """The name of ``variant`` (same as ``str(variant)``)."""
    return variant.name
