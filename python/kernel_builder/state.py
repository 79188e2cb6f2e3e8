"""Where kernel-builder keeps machine state: toolchain records, environments, flake inputs.

``$KERNEL_BUILDER_STATE_DIR``, else ``$XDG_STATE_HOME/kernel-builder``, else
``~/.local/state/kernel-builder``. Nothing here lives in the builder checkout or in a
kernel's tracked files.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from pathlib import Path

from kernel_builder._files import unwritable
from kernel_builder.errors import ConfigError

__all__ = ["ENV_VAR", "clean_stale_scratch", "scratch_dir", "state_dir", "writable_state_dir"]

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


_SCRATCH = re.compile(r"^(?P<kind>[a-z-]+)\.pid(?P<pid>\d+)\.[0-9a-f]+$")


def scratch_dir(kind: str, state: Path | None = None) -> Path:
    """A new temporary directory ``<state>/tmp/<kind>.pid<PID>.<hex>``: under the state
    directory (not /tmp, which may be small or a RAM disk) and named after its owner, so the
    next run removes it when its owner died (``clean_stale_scratch``)."""
    base = (state or state_dir()) / "tmp"
    base.mkdir(parents=True, exist_ok=True)
    path = base / f"{kind}.pid{os.getpid()}.{secrets.token_hex(4)}"
    path.mkdir()
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale_scratch(kind: str, state: Path | None = None) -> list[Path]:
    """Remove the ``kind`` scratch directories whose owner process is gone; what was removed."""
    base = (state or state_dir()) / "tmp"
    removed = []
    for path in sorted(base.iterdir()) if base.is_dir() else ():
        match = _SCRATCH.match(path.name)
        if match and match["kind"] == kind and int(match["pid"]) != os.getpid() and not _alive(int(match["pid"])):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
