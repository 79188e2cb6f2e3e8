"""Layers that `kernels.kernelize` can swap into a model."""

import torch
from torch import nn

from ._ops import ops


class SiluAndMul(nn.Module):
    """forward(x) = silu(x[..., :d]) * x[..., d:], d = x.shape[-1] // 2."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ops.silu_and_mul(x)


__all__ = ["SiluAndMul"]
