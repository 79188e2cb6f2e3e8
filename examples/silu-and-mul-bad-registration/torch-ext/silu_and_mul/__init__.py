"""A deliberately broken kernel: the op name does not go through add_op_namespace_prefix."""

import torch


@torch.library.custom_op("myns::silu_and_mul", mutates_args=())
def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


__all__ = ["silu_and_mul"]
