"""Check a kernel's ``python-depends`` against the registry and the installed packages."""

from __future__ import annotations

import functools
import importlib.util
import json
from importlib import resources
from typing import Any

from kernel_builder.loader.errors import InvalidRequest, MissingDependency
from kernel_builder.tree.metadata import Metadata

__all__ = ["registry", "validate_python_depends"]


@functools.lru_cache(maxsize=1)
def registry() -> dict[str, Any]:
    """The shipped ``python_dependencies.json`` (general names and per-backend names)."""
    text = resources.files("kernel_builder").joinpath("data/python_dependencies.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def validate_python_depends(metadata: Metadata, backend: str) -> None:
    """Unknown names raise ``InvalidRequest``; missing packages ``MissingDependency`` with a pip hint."""
    table = registry()
    module = metadata.name.replace("-", "_")
    for dep in metadata.python_depends:
        entry = table.get("general", {}).get(dep) or table.get("backends", {}).get(backend, {}).get(dep)
        if entry is None:
            raise InvalidRequest(
                f"Kernel module `{module}` uses unsupported kernel dependency: {dep}",
                hint=f"known dependencies are listed in kernel_builder/data/python_dependencies.json (backend {backend})",
            )
        for pkg in entry.get("python", []):
            name = pkg.get("import")
            if name and importlib.util.find_spec(name) is None:
                raise MissingDependency(
                    f"Kernel module `{module}` requires Python dependency `{pkg['pkg']}`. "
                    f"Please install with: pip install {pkg['pkg']}",
                    hint=f"pip install {pkg['pkg']}",
                )
