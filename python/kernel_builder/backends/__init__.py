"""Compute backends: where a backend lives.

A backend is one row of ``kernel_builder/data/backends.json`` (the table Python and Nix both
read: its name, how a variant name writes it, its macros, its source suffixes, its label)
plus, when kernel-builder compiles for it, one module beside this one (``cpu``, ``cuda``,
``rocm``, ``xpu``, ``metal``) implementing ``BackendModule`` (``base.py``): its
architectures, per-source flags, device compiler flags and the blocks of the generated
CMake project it turns on. Every other module asks this package instead of branching on a
backend's name. Adding a backend is one row plus one module (docs/backends.md).

``$KERNEL_BUILDER_EXTRA_BACKENDS`` names a JSON file of more rows (the same keys; ``module``
a dotted module importable from ``sys.path``) appended to the table at import: how a test,
or a backend developed out of tree, adds a backend without editing this package. Nix does
not see those rows (a backend built by Nix is a row of backends.json).
"""

from __future__ import annotations

import enum
import importlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import attrs

from kernel_builder._repr import fields_repr
from kernel_builder.backends.base import ArchChoice, ArchContext, BackendModule
from kernel_builder.errors import ConfigError

__all__ = [
    "Backend",
    "BackendSpec",
    "BackendModule",
    "ArchChoice",
    "ArchContext",
    "BACKENDS",
    "EXTRA_BACKENDS_ENV",
    "ROW_KEYS",
    "TABLE_FILE",
    "spec",
    "backend_module",
    "torch_backend",
    "versioned",
    "by_token",
    "from_torch_versions",
    "kernel_backends",
    "languages",
    "build_set_backends",
    "compiled_suffixes",
    "torch_index",
]

TABLE_FILE = Path(__file__).resolve().parent.parent / "data" / "backends.json"
EXTRA_BACKENDS_ENV = "KERNEL_BUILDER_EXTRA_BACKENDS"


# The keys of a row (docs/backends.md says what each means).
ROW_KEYS = frozenset({
    "name", "token", "versioned", "noarch", "label", "defines", "archKey", "torchVersionAttr", "compilableHere",
    "kernel", "buildSet", "minorCompatible", "torchIndex", "pypi", "sources", "torch", "module",
})
_HINT = "see docs/backends.md (Adding a backend) for the table's keys"


def _read_rows(path: Path, what: str) -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{what} {path} cannot be read as JSON: {exc}", hint=_HINT) from None
    rows = data.get("backends") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get("name"), str) for r in rows):
        raise ConfigError(f'{what} {path}: expected {{"backends": [{{"name": "...", ...}}, ...]}}', hint=_HINT)
    for i, row in enumerate(rows):
        unknown = sorted(set(row) - ROW_KEYS)
        if unknown:
            raise ConfigError(
                f"{what} {path}: backends[{i}] ({row['name']}) has unknown keys {unknown}; expected some of {sorted(ROW_KEYS)}",
                hint=_HINT,
            )
    return list(data.get("commonSources", [])), rows, list(data.get("languages", []))


def _table() -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    common, rows, languages = _read_rows(TABLE_FILE, "the backend table")
    extra = os.environ.get(EXTRA_BACKENDS_ENV)
    if extra:
        _, more, more_languages = _read_rows(Path(extra), f"${EXTRA_BACKENDS_ENV}")
        known = {r["name"] for r in rows}
        clash = sorted(r["name"] for r in more if r["name"] in known)
        if clash:
            raise ConfigError(
                f"${EXTRA_BACKENDS_ENV} ({extra}) names backends the table has: {', '.join(clash)}",
                hint="a row of that file adds a backend; change the table itself (data/backends.json) to change one",
            )
        rows, languages = rows + more, languages + more_languages
    return common, rows, languages


_COMMON_SOURCES, _ROWS, _LANGUAGES = _table()


class _BackendBase(str, enum.Enum):
    """A compute backend. The value is the lowercase name used in TOML, JSON and names."""

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, text: str) -> Backend:
        """Parse a backend name (case-insensitive); ``ValueError`` lists the valid names."""
        try:
            return cls(text.lower())
        except (ValueError, AttributeError):
            valid = ", ".join(b.value for b in cls)
            raise ValueError(f"unknown backend {text!r}; expected one of {valid}") from None


# The members are the table's rows (``Backend.CUDA``...), in name order.
Backend = _BackendBase(  # type: ignore[call-overload]
    "Backend",
    [(r["name"].upper().replace("-", "_"), r["name"]) for r in sorted(_ROWS, key=lambda r: r["name"])],
    module=__name__,
    qualname="Backend",
)


@attrs.frozen(eq=False, slots=False)  # one instance per backend (BACKENDS): identity is equality
class BackendSpec:
    """What one backend is, for names, builds and probes: its row of backends.json."""
    __repr__ = fields_repr

    backend: Backend
    token: str  # in a variant name: the prefix of a versioned backend (``cu``), else the name
    versioned: bool  # the variant name carries the backend version (``cu130``)
    noarch_name: str  # a noarch variant is ``torch-<noarch_name>``
    defines: tuple[str, ...] = ()  # macros the kernel's sources see (the source contract)
    arch_key: str | None = None  # the build.toml key that lists architectures
    torch_version_attr: str | None = None  # ``torch.version.<attr>`` holds its version
    compilable_here: bool = False  # a toolchain (pinned or host) can compile it on these machines
    label: str | None = None  # how messages write it with its version (``CUDA 13.0``)
    kernel: bool = False  # a ``[kernel.*]`` component may name it (``backend = ...``)
    build_set: bool = False  # build-sets.json may name it
    minor_compatible: bool = False  # its variants run on a newer minor of the same major
    torch_index: str | None = None  # PyTorch's index for it, under download.pytorch.org/whl
    pypi: str | None = None  # PyPI's torch: "default" (PyPI's build is this backend's), "also" (published there too)
    sources: tuple[str, ...] = ()  # compiled source suffixes of its own (beside commonSources)
    torch: str | None = None  # the backend whose torch build compiles and imports it (default: itself)
    module_name: str | None = None  # the BackendModule implementation


def _spec(row: dict[str, Any]) -> BackendSpec:
    name = row["name"]
    return BackendSpec(
        backend=Backend(name),
        token=row.get("token", name),
        versioned=bool(row.get("versioned", False)),
        noarch_name=row.get("noarch", name),
        defines=tuple(row.get("defines", ())),
        arch_key=row.get("archKey"),
        torch_version_attr=row.get("torchVersionAttr"),
        compilable_here=bool(row.get("compilableHere", False)),
        label=row.get("label"),
        kernel=bool(row.get("kernel", False)),
        build_set=bool(row.get("buildSet", False)),
        minor_compatible=bool(row.get("minorCompatible", False)),
        torch_index=row.get("torchIndex"),
        pypi=row.get("pypi"),
        sources=tuple(row.get("sources", ())),
        torch=row.get("torch"),
        module_name=row.get("module"),
    )


BACKENDS: dict[Backend, BackendSpec] = {s.backend: s for s in map(_spec, _ROWS)}


def spec(backend: Backend | str) -> BackendSpec:
    return BACKENDS[backend if isinstance(backend, Backend) else Backend.parse(backend)]


@cache
def backend_module(backend: Backend | str) -> BackendModule:
    """The ``BackendModule`` of ``backend`` (its row's ``module``; the base, which compiles
    nothing of its own, for a backend without one)."""
    s = spec(backend)
    if s.module_name is None:
        return BackendModule(s.backend.value)
    found = importlib.import_module(s.module_name).BACKEND
    if not isinstance(found, BackendModule) or found.name != s.backend.value:
        raise ConfigError(f"{s.module_name}.BACKEND is not the BackendModule of {s.backend.value}", hint=_HINT)
    return found


def torch_backend(backend: Backend | str) -> Backend:
    """The backend whose torch build compiles and imports ``backend``'s variants: its row's
    ``torch`` (a backend that runs on another's torch, such as a test backend on CPU torch),
    else itself."""
    s = spec(backend)
    return s.backend if s.torch is None else Backend.parse(s.torch)


def languages() -> dict[str, Backend]:
    """Edition 6's component languages and the backend each one builds for: ``cpp-<backend>``
    for every backend a component may target, then the table's ``languages`` rows (Rust)."""
    cpp = {f"cpp-{b.value}": b for b, s in BACKENDS.items() if s.kernel}
    return cpp | {row["name"]: Backend.parse(row["backend"]) for row in _LANGUAGES}


def versioned() -> tuple[Backend, ...]:
    """The backends whose variant names carry a version, in table order."""
    return tuple(b for b, s in BACKENDS.items() if s.versioned)


def kernel_backends() -> frozenset[Backend]:
    """The backends a ``[kernel.*]`` component may name."""
    return frozenset(b for b, s in BACKENDS.items() if s.kernel)


def build_set_backends() -> frozenset[Backend]:
    """The backends a build set (build-sets.json) may name."""
    return frozenset(b for b, s in BACKENDS.items() if s.build_set)


def compiled_suffixes() -> tuple[str, ...]:
    """The suffixes of compiled sources (``.cpp``, ``.cu``, ``.metal``...): commonSources and
    every backend's own, in table order (nix/lib/builders/per-object.nix reads the same)."""
    own = (suffix for s in BACKENDS.values() for suffix in s.sources)
    return tuple(f".{suffix}" for suffix in dict.fromkeys([*_COMMON_SOURCES, *own]))


def torch_index(backend: Backend | str, backend_version: str | None, base: str) -> str | None:
    """The PyTorch index under ``base`` publishing torch for this backend (its row's
    ``torchIndex``: ``{version}`` is the version, ``{flat}`` without dots), or None when
    PyTorch publishes none or the row needs a version that is not given."""
    template = spec(backend).torch_index
    if template is None or (("{" in template) and not backend_version):
        return None
    version = backend_version or ""
    return f"{base}/" + template.format(version=version, flat=version.replace(".", ""))


def by_token(token: str) -> Backend | None:
    """The versioned backend written with ``token`` in names (``cu`` -> cuda)."""
    return next((b for b, s in BACKENDS.items() if s.versioned and s.token == token), None)


def from_torch_versions(versions: dict[str, str | None]) -> tuple[Backend, str | None]:
    """The backend a torch was built for, from its ``torch.version`` attributes (``cuda``,
    ``hip``, ``xpu``), and that backend's version text; CPU when none is set. The first
    set attribute in table order wins (a torch is built for one of them)."""
    for backend, s in BACKENDS.items():
        value = versions.get(s.torch_version_attr) if s.torch_version_attr else None
        if value:
            return backend, value
    return Backend.CPU, None
