"""The C++ dependencies a ``[kernel.*]`` component may declare (``depends``), and what
provides each one here.

Every upstream name is known (``CppDependency``); each is either provided (a pinned wheel
from the toolchain lock, unpacked into a store path, whose include directories the build
adds) or refused with the reason, so that a variant needing it is reported unbuildable
instead of failing inside the compiler. The data lives in
``kernel_builder/data/cpp_dependencies.json``, which ``nix/lib/builders/cpp-deps.nix``
reads too.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import attrs

from kernel_builder._eq import fields_eq, fields_hash
from kernel_builder._repr import fields_repr
from kernel_builder.config.model import Backend, Build

__all__ = ["Provider", "CppDep", "Declared", "table", "declared", "unbuildable_reason", "stand_in_notes"]


@attrs.frozen(slots=False)
class Provider:
    """A pinned wheel (``requests.cpp.<name>`` of the toolchain lock) and its include dirs."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    name: str
    wheel: str
    includes: tuple[str, ...]

    @property
    def package(self) -> str:
        return self.wheel.split("==", 1)[0]

    @property
    def version(self) -> str:
        return self.wheel.split("==", 1)[1]


@attrs.frozen(slots=False)
class CppDep:
    """One ``depends`` name: the backends it serves and its provider (or why there is none)."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    name: str
    builtin: bool = False
    backends: tuple[str, ...] = ()
    upstream: str | None = None
    provider: Provider | None = None
    defines: tuple[str, ...] = ()
    stand_in: str | None = None
    unavailable: str | None = None


@attrs.frozen(slots=False)
class Declared:
    """A dependency as one component declares it."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    kernel: str
    dep: CppDep


@functools.cache
def table() -> dict[str, CppDep]:
    """Every known dependency name (read once)."""
    # The package's own file (not importlib.resources, whose import costs list-variants tempfile).
    text = (Path(__file__).resolve().parent.parent / "data" / "cpp_dependencies.json").read_text("utf-8")
    raw = json.loads(text)
    providers = {
        name: Provider(name, data["wheel"], tuple(data["includes"])) for name, data in raw["providers"].items()
    }
    return {
        name: CppDep(
            name,
            builtin=bool(data.get("builtin", False)),
            backends=tuple(data.get("backends", ())),
            upstream=data.get("upstream"),
            provider=providers[data["lock"]] if "lock" in data else None,
            defines=tuple(data.get("defines", ())),
            stand_in=data.get("standIn"),
            unavailable=data.get("unavailable"),
        )
        for name, data in raw["dependencies"].items()
    }


def declared(build: Build, backend: Backend | str) -> tuple[Declared, ...]:
    """The non-builtin dependencies ``backend``'s components declare, in component order."""
    deps = table()
    out = []
    for kname, kernel in sorted(build.kernels_for(Backend(backend)).items()):
        for dep in kernel.depends:
            entry = deps[str(dep)]
            if not entry.builtin:
                out.append(Declared(kname, entry))
    return tuple(out)


def unbuildable_reason(build: Build, backend: Backend | str) -> str | None:
    """Why ``backend``'s variants cannot be built here because of a dependency, or ``None``."""
    backend = Backend(backend)
    reasons = []
    for item in declared(build, backend):
        dep = item.dep
        if backend.value not in dep.backends:
            reasons.append(
                f"[kernel.{item.kernel}] depends on {dep.name}, which serves {', '.join(dep.backends)} kernels, "
                f"not {backend.value}"
            )
        elif dep.provider is None:
            reasons.append(f"[kernel.{item.kernel}] depends on {dep.name}: {dep.unavailable}")
    return "; ".join(dict.fromkeys(reasons)) or None


def stand_in_notes(build: Build, backend: Backend | str) -> tuple[str, ...]:
    """One note per dependency whose provider is a stand-in for upstream's release."""
    notes = []
    for item in declared(build, backend):
        dep = item.dep
        if dep.stand_in and dep.provider is not None and Backend(backend).value in dep.backends:
            notes.append(f"{dep.name}: {dep.stand_in} ({dep.provider.wheel})")
    return tuple(dict.fromkeys(notes))
