"""ReLU plus tuning data shipped as JSON (``configs/tuning.json``) inside the package."""

import json
from pathlib import Path

import torch

from ._ops import ops

_CONFIG = json.loads((Path(__file__).parent / "configs" / "tuning.json").read_text())


def block_size(n: int) -> int:
    """The block size the tuning table picks for a problem of ``n`` elements."""
    for entry in _CONFIG["blocks"]:
        if n <= entry["max_n"]:
            return entry["block"]
    return _CONFIG["default_block"]


def relu(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    ops.relu(out, x)
    return out


__all__ = ["relu", "block_size"]
