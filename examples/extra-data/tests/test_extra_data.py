"""Tests of the extra-data kernel: the JSON table ships inside the built package."""

import os
from pathlib import Path

import pytest
import torch
from kernels import get_local_kernel

BUILD = Path(os.environ.get("KERNEL_BUILD_DIR", Path(__file__).resolve().parents[1] / "build"))


@pytest.fixture(scope="module")
def kernel():
    return get_local_kernel(BUILD)


def test_relu(kernel):
    x = torch.randn(256)
    assert torch.equal(kernel.relu(x), torch.relu(x))


@pytest.mark.parametrize(("n", "block"), [(1, 128), (1024, 128), (1025, 256), (10**7, 512)])
def test_block_size_from_json(kernel, n, block):
    assert kernel.block_size(n) == block
