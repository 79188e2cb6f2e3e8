"""build.toml: the model, the edition readers, validation errors and update-build.

``load(path)`` and ``loads(text)`` return a ``Build`` (editions 5 and 4; v3 must be
migrated with ``kernel-builder update-build``) or raise ``ConfigError`` listing every
problem of the file; ``dumps(build)`` writes edition-5 TOML.
"""

from __future__ import annotations

from kernel_builder.config.loading import Parsed, load, loads, parse, read_file
from kernel_builder.config.model import Build
from kernel_builder.config.problems import BuildTomlError, Problem
from kernel_builder.config.writer import dumps, to_dict

__all__ = ["Build", "BuildTomlError", "Parsed", "Problem", "dumps", "load", "loads", "parse", "read_file", "to_dict"]
