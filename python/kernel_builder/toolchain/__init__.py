"""Host toolchains for Nix builds: discover them, set them up, hand them to the flake.

Nix cannot fetch nixpkgs on these machines, so variant derivations use this machine's
compiler, nvcc and Python environments (each with one torch). That is **not hermetic**:
the build uses whatever those paths hold. What makes it safe to cache is the record:
``discover`` writes every toolchain's identity (torch version and RECORD hash, wheel hash,
compiler, nvcc, cmake and ninja versions) into ``toolchains.json`` in the state directory,
and each variant derivation carries its build set's identity, so any change rebuilds.
"""

from __future__ import annotations

from kernel_builder.toolchain.discover import (
    Environment,
    build_set_key,
    discover,
    is_stale,
    load_toolchains,
    probe_environment,
    toolchains_path,
    write_toolchains,
)
from kernel_builder.toolchain.state import state_dir

__all__ = [
    "Environment",
    "build_set_key",
    "discover",
    "is_stale",
    "load_toolchains",
    "probe_environment",
    "state_dir",
    "toolchains_path",
    "write_toolchains",
]
