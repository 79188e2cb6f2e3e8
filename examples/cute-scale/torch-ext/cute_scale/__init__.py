"""cute-scale: ``scale(x, alpha)`` = alpha * x (the CUDA version indexes through CuTe)."""

from typing import Optional

import torch

from ._ops import ops


def scale(x: torch.Tensor, alpha: float, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    if out is None:
        out = torch.empty_like(x)
    ops.scale(out, x, alpha)
    return out


__all__ = ["scale"]
