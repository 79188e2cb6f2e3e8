"""The registry of Python dependencies a kernel may declare (``python-depends``).

Kernels cannot pull arbitrary pip packages: each allowed name maps to pip packages (for
metadata and the loader) and nixpkgs attributes (for builds). General names may appear
in ``[general]``; backend names only in ``[general.<backend>]``. The data lives in
``kernel_builder/data/python_dependencies.json``.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

import attrs

from kernel_builder.config.model import Backend

__all__ = ["PythonPackage", "Dependency", "Registry", "registry"]


@attrs.frozen
class PythonPackage:
    """A pip package and the module it is imported as (``None``: nothing to import)."""

    pkg: str
    import_name: str | None = None


@attrs.frozen
class Dependency:
    name: str
    python: tuple[PythonPackage, ...]
    nix: tuple[str, ...]


@attrs.frozen
class Registry:
    """Allowed dependency names: ``general`` and per backend (absent backend: none allowed)."""

    general: dict[str, Dependency]
    backends: dict[Backend, dict[str, Dependency]]

    def allowed(self, backend: Backend | None) -> dict[str, Dependency] | None:
        """Names allowed in ``[general]`` (``backend=None``) or ``[general.<backend>]``.

        ``None`` means the backend has no registry entry at all.
        """
        if backend is None:
            return self.general
        return self.backends.get(backend)

    def lookup(self, name: str, backend: Backend | None = None) -> Dependency:
        """The entry for ``name`` in a scope; ``KeyError`` if it is not allowed there."""
        allowed = self.allowed(backend)
        if allowed is None or name not in allowed:
            raise KeyError(name)
        return allowed[name]

    def problem(self, name: str, backend: Backend | None = None) -> str | None:
        """Why ``name`` is not allowed in a scope, or ``None`` when it is."""
        allowed = self.allowed(backend)
        scope = "[general]" if backend is None else f"[general.{backend.value}]"
        if allowed is None:
            return f"no Python dependencies are defined for backend {backend.value}; remove {name!r}"
        if name in allowed:
            return None
        names = ", ".join(sorted(allowed)) or "none"
        return f"unknown Python dependency {name!r} for {scope}; allowed: {names}"


def _entry(name: str, data: dict) -> Dependency:
    python = tuple(PythonPackage(p["pkg"], p.get("import")) for p in data.get("python", []))
    return Dependency(name, python, tuple(data.get("nix", [])))


@functools.cache
def registry() -> Registry:
    """The registry shipped with kernel-builder (read once)."""
    text = resources.files("kernel_builder").joinpath("data/python_dependencies.json").read_text("utf-8")
    raw = json.loads(text)
    general = {name: _entry(name, data) for name, data in raw["general"].items()}
    backends = {
        Backend(b): {name: _entry(name, data) for name, data in entries.items()}
        for b, entries in raw["backends"].items()
    }
    return Registry(general, backends)
