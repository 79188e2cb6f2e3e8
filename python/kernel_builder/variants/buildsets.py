"""Build sets: the Torch × backend × system combinations kernel-builder can build.

They live in one data file, ``nix/build-sets.json``, read both here and by
``nix/lib/pure/matrix.nix``, so Python and Nix can never disagree about versions. Each entry
names a Torch version, a backend (with its version for CUDA, ROCm and XPU), the Nix
systems it exists on, whether it is part of the default bundle, and an optional tvm-ffi
version. Entries are expanded to one ``BuildSet`` per system, in file order. The file's
``defaultBounds`` are the Torch and CUDA bounds a build.toml gets when it names none.

``BuildSet.local`` (this machine can build the set) is not in the shared file: the caller
passes what the pinned toolchain lock serves (``toolchain.pinned.lockrequests.served_build_sets``),
so this module reads no toolchain file.

The file is found through ``$KERNEL_BUILDER_BUILD_SETS`` or ``kernel_builder._source.nix_dir()``.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

import attrs

from kernel_builder._eq import fields_eq, fields_hash
from kernel_builder._repr import fields_repr
from kernel_builder._source import nix_data_file
from kernel_builder.backends import build_set_backends, spec
from kernel_builder.config.model import Backend, Version
from kernel_builder.errors import ConfigError

__all__ = [
    "BuildSet",
    "DefaultBounds",
    "ENV_VAR",
    "default_bounds",
    "build_sets_path",
    "load_build_sets",
    "parse_build_sets",
    "current_system",
    "all_systems",
    "build_set_key",
    "SYSTEMS",
]

ENV_VAR = "KERNEL_BUILDER_BUILD_SETS"
# Nix systems kernel-builder knows how to name.
SYSTEMS = ("aarch64-darwin", "aarch64-linux", "x86_64-linux")
# The backends a build set may name (the backend table's ``buildSet`` column).
_BUILDABLE = build_set_backends()
# Buildable backends whose variant token carries a version need a backendVersion.
_VERSIONED = {b for b in _BUILDABLE if spec(b).versioned}
_KEYS = {"torch", "backend", "backendVersion", "systems", "bundle", "cxx11", "tvmFfi"}


@attrs.frozen(slots=False)
class BuildSet:
    """One Torch version × backend (× backend version) on one Nix system.

    Versions are kept as written in the file (``"13.0"``, ``"2025.3.2"``); the ``*_v``
    properties give comparable ``Version`` values.
    """
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    torch: str
    backend: Backend
    system: str
    backend_version: str | None = None
    bundle: bool = True
    cxx11: bool = True
    tvm_ffi: str | None = None
    local: bool = False

    @property
    def torch_v(self) -> Version:
        return Version.parse(self.torch)

    @property
    def backend_version_v(self) -> Version | None:
        return None if self.backend_version is None else Version.parse(self.backend_version)

    @property
    def os(self) -> str:
        return self.system.split("-", 1)[1]

    @property
    def cpu(self) -> str:
        return self.system.split("-", 1)[0]

    @property
    def key(self) -> str:
        """The toolchain key: ``torch2.13-cpu``, ``torch2.14-cuda13.0`` (as in the toolchain
        lock, toolchains.json and ``nix/lib/pure/variant-records.nix``)."""
        return build_set_key(self.torch, self.backend.value, self.backend_version)

    @property
    def label(self) -> str:
        """A short human name: ``torch 2.13 cuda 13.0 x86_64-linux``."""
        backend = self.backend.value if self.backend_version is None else f"{self.backend.value} {self.backend_version}"
        return f"torch {self.torch} {backend} {self.system}"

    def to_json(self) -> dict[str, Any]:
        return {
            "torch": self.torch,
            "backend": self.backend.value,
            "backend_version": self.backend_version,
            "system": self.system,
            "bundle": self.bundle,
            "cxx11": self.cxx11,
            "tvm_ffi": self.tvm_ffi,
            "local": self.local,
        }


def build_set_key(torch: str, backend: str, backend_version: str | None = None) -> str:
    """``torch2.13-cpu``, ``torch2.14-cuda13.0``: how the toolchain lock, toolchains.json and
    ``nix/lib/pure/variant-records.nix`` (``keyOf``) name a build set."""
    return f"torch{torch}-{backend}{backend_version or ''}"


def build_sets_path() -> Path:
    """Where ``build-sets.json`` is: ``$KERNEL_BUILDER_BUILD_SETS`` or kernel-builder's ``nix/``
    (the checkout's, or the copy an installed wheel carries)."""
    return nix_data_file("build-sets.json", ENV_VAR)


def _fail(path: Path | str, message: str) -> ConfigError:
    return ConfigError(f"{path}: {message}", hint="see docs/variants.md for the build-sets.json format")


def _version_field(entry: dict[str, Any], key: str, where: str, path: Path | str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    try:
        Version.parse(value)
    except ValueError as exc:
        raise _fail(path, f"{where}.{key}: {exc}") from None
    return value


def parse_build_sets(data: Any, path: Path | str = "build-sets.json") -> tuple[BuildSet, ...]:
    """Validate the parsed file and expand it to one ``BuildSet`` per system, in file order."""
    if not isinstance(data, dict) or not isinstance(data.get("buildSets"), list):
        raise _fail(path, "expected an object with a `buildSets` list")
    result: list[BuildSet] = []
    for index, entry in enumerate(data["buildSets"]):
        where = f"buildSets[{index}]"
        if not isinstance(entry, dict):
            raise _fail(path, f"{where} must be an object")
        unknown = set(entry) - _KEYS
        if unknown:
            raise _fail(path, f"{where} has unknown keys {sorted(unknown)}; expected {sorted(_KEYS)}")
        try:
            backend = Backend.parse(entry.get("backend", ""))
        except ValueError as exc:
            raise _fail(path, f"{where}.backend: {exc}") from None
        if backend not in _BUILDABLE:
            raise _fail(path, f"{where}.backend: no builds exist for backend {backend.value}")
        torch = _version_field(entry, "torch", where, path)
        if torch is None:
            raise _fail(path, f"{where}.torch is required")
        backend_version = _version_field(entry, "backendVersion", where, path)
        if (backend in _VERSIONED) != (backend_version is not None):
            need = "needs a" if backend in _VERSIONED else "takes no"
            raise _fail(path, f"{where}: backend {backend.value} {need} backendVersion")
        systems = entry.get("systems")
        if not isinstance(systems, list) or not systems or not all(s in SYSTEMS for s in systems):
            raise _fail(path, f"{where}.systems must be a non-empty list of {', '.join(SYSTEMS)}")
        flags = {}
        for key in ("bundle", "cxx11"):
            value = entry.get(key, True)
            if not isinstance(value, bool):
                raise _fail(path, f"{where}.{key} must be true or false")
            flags[key] = value
        tvm_ffi = _version_field(entry, "tvmFfi", where, path)
        for system in systems:
            result.append(
                BuildSet(
                    torch=torch,
                    backend=backend,
                    system=system,
                    backend_version=backend_version,
                    bundle=flags["bundle"],
                    cxx11=flags["cxx11"],
                    tvm_ffi=tvm_ffi,
                )
            )
    return tuple(result)


@functools.lru_cache(maxsize=8)
def _load(path: str) -> tuple[tuple[BuildSet, ...], DefaultBounds]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read the build sets file {path}: {exc.strerror or exc}",
            hint=f"set ${ENV_VAR} to the path of build-sets.json",
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(path, f"not valid JSON: {exc}") from None
    return parse_build_sets(data, path), parse_bounds(data, path)


def load_build_sets(
    path: str | os.PathLike[str] | None = None, *, served: Collection[tuple[str, str]] = frozenset()
) -> tuple[BuildSet, ...]:
    """Every build set, one per (entry, system), in file order; ``local`` marks those in
    ``served`` ((system, key) pairs: what the pinned toolchain lock serves)."""
    sets = _load(str(path if path is not None else build_sets_path()))[0]
    return tuple(attrs.evolve(b, local=True) if (b.system, b.key) in served else b for b in sets)


@attrs.frozen(slots=False)
class DefaultBounds:
    """The file's ``defaultBounds``: what a build.toml without minver/maxver gets (``None``: unbounded)."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    torch_min: Version | None = None
    torch_max: Version | None = None
    cuda_min: Version | None = None
    cuda_max: Version | None = None


def parse_bounds(data: Any, path: Path | str = "build-sets.json") -> DefaultBounds:
    raw = data.get("defaultBounds", {}) if isinstance(data, dict) else {}
    if not isinstance(raw, dict) or set(raw) - {"torch", "cuda"}:
        raise _fail(path, "defaultBounds must be an object with `torch` and `cuda` entries")
    values: dict[str, Version | None] = {}
    for what in ("torch", "cuda"):
        entry = raw.get(what, {})
        if not isinstance(entry, dict) or set(entry) - {"minver", "maxver"}:
            raise _fail(path, f"defaultBounds.{what} must be an object with minver and maxver")
        for bound in ("minver", "maxver"):
            text = _version_field(entry, bound, f"defaultBounds.{what}", path)
            values[f"{what}_{bound[:3]}"] = None if text is None else Version.parse(text)
    return DefaultBounds(**values)


def default_bounds(path: str | os.PathLike[str] | None = None) -> DefaultBounds:
    """The default Torch and CUDA bounds of the build sets file."""
    return _load(str(path if path is not None else build_sets_path()))[1]


def all_systems(build_sets: tuple[BuildSet, ...] | list[BuildSet]) -> list[str]:
    """The systems the build sets cover, sorted."""
    return sorted({b.system for b in build_sets})


def current_system() -> str:
    """This machine as a Nix system string (``x86_64-linux``), without importing torch."""
    from kernel_builder.variants.host import host_platform  # lazy: `list-variants --system all` names no machine

    return host_platform().system
