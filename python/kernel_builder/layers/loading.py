"""How repositories obtain kernel modules: through the loader, imported lazily."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["hub_kernel", "local_kernel"]


def hub_kernel(repo_id: str, **kwargs: Any) -> ModuleType:
    """``get_kernel`` from the loader (imported on first use: it pulls in the Hub client)."""
    # lazy: the loader brings huggingface_hub; mapping local kernels never needs it
    from kernel_builder.loader.api import get_kernel

    return get_kernel(repo_id, **kwargs)


def local_kernel(repo_path: Path, *, check_arch: bool = True) -> ModuleType:
    """``get_local_kernel`` from the loader (a repo with ``build/``, a build dir, or a variant dir)."""
    from kernel_builder.loader.api import get_local_kernel  # lazy: as above

    return get_local_kernel(Path(repo_path), check_arch=check_arch)
