"""Tests of the cute-scale kernel, run against a built tree (KERNEL_BUILD_DIR, default:
this kernel's build/)."""

import os
from pathlib import Path

import pytest
import torch
from kernels import get_local_kernel

BUILD = Path(os.environ.get("KERNEL_BUILD_DIR", Path(__file__).resolve().parents[1] / "build"))
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_scale_matches_torch(device):
    kernel = get_local_kernel(BUILD)
    x = torch.randn(4, 1000, device=device)
    assert torch.allclose(kernel.scale(x, 2.5), 2.5 * x)
