"""silu_and_mul(x) = silu(x[..., :d]) * x[..., d:] with d = x.shape[-1] // 2."""

import torch

from . import layers
from ._ops import add_op_namespace_prefix, ops


@torch.library.custom_op(add_op_namespace_prefix("silu_and_mul"), mutates_args=())
def _silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


@torch.library.register_fake(add_op_namespace_prefix("silu_and_mul"))
def _silu_and_mul_fake(x: torch.Tensor) -> torch.Tensor:
    return x.new_empty((*x.shape[:-1], x.shape[-1] // 2))


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    """The gated activation used by LLaMA-style MLPs."""
    return ops.silu_and_mul(x)


__all__ = ["silu_and_mul", "layers"]
