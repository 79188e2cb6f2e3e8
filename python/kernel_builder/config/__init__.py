"""build.toml: the model, the edition readers, validation errors and update-build.

``load(path)`` and ``loads(text)`` return a ``Build`` (editions 6, 5 and 4; v3 must be
migrated with ``kernel-builder update-build``) or raise ``ConfigError`` listing every
problem of the file; ``dumps(build)`` writes edition-6 TOML.

The names are imported on first use: modules that only need the model (metadata, the
loader) must not pay for the readers, cattrs and tomlkit.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kernel_builder.config.loading import Parsed, load, loads, parse, read_file
    from kernel_builder.config.model import Build
    from kernel_builder.config.problems import BuildTomlError, Problem
    from kernel_builder.config.writer import dumps, to_dict

__all__ = ["Build", "BuildTomlError", "Parsed", "Problem", "dumps", "load", "loads", "parse", "read_file", "to_dict"]

_LAZY = {
    "Build": "model",
    "BuildTomlError": "problems",
    "Parsed": "loading",
    "Problem": "problems",
    "dumps": "writer",
    "load": "loading",
    "loads": "loading",
    "parse": "loading",
    "read_file": "loading",
    "to_dict": "writer",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
