"""ReLU kernel: ``relu(x)`` and an in-place-output ``relu_out(out, x)``."""

from typing import Optional

import torch

from . import layers
from ._ops import ops


def relu(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """max(x, 0) computed by this kernel's CPU or CUDA implementation."""
    if out is None:
        out = torch.empty_like(x)
    ops.relu(out, x)
    return out


__all__ = ["relu", "layers"]
