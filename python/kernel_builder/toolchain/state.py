"""Where kernel-builder keeps machine state: toolchain records, environments, flake inputs.

``$KERNEL_BUILDER_STATE_DIR``, else ``$XDG_STATE_HOME/kernel-builder``, else
``~/.local/state/kernel-builder``. Nothing here lives in the builder checkout or in a
kernel's tracked files.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["state_dir", "ENV_VAR"]

ENV_VAR = "KERNEL_BUILDER_STATE_DIR"


def state_dir() -> Path:
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return Path(explicit).absolute()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return (base / "kernel-builder").absolute()
