"""Where kernel-builder keeps machine state: toolchain records, environments, flake inputs.

``$KERNEL_BUILDER_STATE_DIR``, else ``$XDG_STATE_HOME/kernel-builder``, else
``~/.local/state/kernel-builder``. Nothing here lives in the builder checkout or in a
kernel's tracked files.
"""

from __future__ import annotations

import os
from pathlib import Path

from kernel_builder._files import unwritable
from kernel_builder.errors import ConfigError

__all__ = ["state_dir", "writable_state_dir", "ENV_VAR"]

ENV_VAR = "KERNEL_BUILDER_STATE_DIR"


def state_dir() -> Path:
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return Path(explicit).absolute()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return (base / "kernel-builder").absolute()


def writable_state_dir() -> Path:
    """``state_dir()``, made and checked writable: a located error, not a traceback later."""
    state = state_dir()
    reason = unwritable(state)
    if reason:
        raise ConfigError(
            f"the state directory {state} is not writable: {reason}",
            hint=f"set {ENV_VAR} to a writable directory (kernel-builder keeps flake inputs, toolchain records "
            "and temporary downloads there)",
        )
    return state
