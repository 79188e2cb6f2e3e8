"""The capability probe used for CUDA/ROCm dispatch.

Kept apart so tests can replace ``current_capability`` (``monkeypatch.setattr``) and
exercise capability ranges on a machine without a GPU.
"""

from __future__ import annotations

import functools

__all__ = ["current_capability"]


@functools.cache
def _probe() -> int:
    import torch  # lazy: torch loads on first use, never with import kernel_builder or the CLI

    major, minor = torch.cuda.get_device_capability(device=None)
    return major * 10 + minor


def current_capability() -> int:
    """Capability of the current device as ``major * 10 + minor`` (probed once per process)."""
    return _probe()
