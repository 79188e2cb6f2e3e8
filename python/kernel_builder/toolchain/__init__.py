"""Host toolchains for Nix builds: discover them, set them up, hand them to the flake.

Nix cannot fetch nixpkgs on these machines, so variant derivations use this machine's
compiler, nvcc and Python environments (each with one torch). That is **not hermetic**:
the build uses whatever those paths hold. What makes it safe to cache is the record:
``discover`` writes every toolchain's identity (torch version and RECORD hash, wheel hash,
compiler, nvcc, cmake and ninja versions) into ``toolchains.json`` in the state directory,
and each variant derivation carries its build set's identity, so any change rebuilds.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "Environment",
    "build_set_key",
    "is_stale",
    "load_toolchains",
    "probe_environment",
    "state_dir",
    "toolchains_path",
    "write_toolchains",
]

_HOME = {"state_dir": "kernel_builder.toolchain.state", "build_set_key": "kernel_builder.variants.buildsets"}


def __getattr__(name: str) -> Any:
    # Lazy, so that reading the toolchain lock (variants.buildsets -> toolchain.lockfile)
    # imports neither the host-toolchain discovery nor a cycle back into variants. The
    # function `discover` is not re-exported: `kernel_builder.toolchain.discover` is its module.
    if name not in __all__:
        raise AttributeError(name)
    return getattr(importlib.import_module(_HOME.get(name, "kernel_builder.toolchain.discover")), name)


def __dir__() -> list[str]:
    return list(__all__)
