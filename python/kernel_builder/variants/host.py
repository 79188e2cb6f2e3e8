"""This machine's CPU and OS, spelled the way variant names and Nix systems spell them.

One pure mapping (``platform_names``) from what Python reports to our names, and one
cached probe (``host_platform``) that every caller shares: the loader's ``detect_system``,
``list-variants``' current system, ``toolchain discover`` and ``build --local``.
"""

from __future__ import annotations

import functools
import platform

import attrs

from kernel_builder._eq import fields_eq, fields_hash
from kernel_builder._repr import fields_repr

__all__ = ["Platform", "platform_names", "host_platform"]

# What platform.machine() says on Windows and macOS, mapped to the names Linux (and our
# variant names) use.
_CPU_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}


@attrs.frozen(slots=False)
class Platform:
    """A CPU architecture and an OS (``x86_64``, ``linux``)."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    cpu: str
    os: str

    @property
    def system(self) -> str:
        """The Nix system string, also the tail of an arch variant name: ``x86_64-linux``."""
        return f"{self.cpu}-{self.os}"


def platform_names(machine: str, system: str) -> Platform:
    """``platform.machine()``, ``platform.system()`` -> our names (``AMD64``, ``Windows`` ->
    ``x86_64``, ``windows``; ``arm64``, ``Darwin`` -> ``aarch64``, ``darwin``)."""
    cpu = machine.lower()
    return Platform(_CPU_ALIASES.get(cpu, cpu), system.lower())


@functools.cache
def host_platform() -> Platform:
    """This machine (cached: it cannot change while we run)."""
    return platform_names(platform.machine(), platform.system())
