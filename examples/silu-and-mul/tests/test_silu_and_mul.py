"""Tests of the noarch silu-and-mul kernel, run against a built tree (KERNEL_BUILD_DIR)."""

import os
from pathlib import Path

import pytest
import torch
from kernels import get_local_kernel

BUILD = Path(os.environ.get("KERNEL_BUILD_DIR", Path(__file__).resolve().parents[1] / "build"))


def reference(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


@pytest.fixture(scope="module")
def kernel():
    return get_local_kernel(BUILD)


@pytest.mark.parametrize("shape", [(4, 64), (2, 3, 128)])
def test_matches_reference(kernel, shape):
    x = torch.randn(shape)
    assert torch.allclose(kernel.silu_and_mul(x), reference(x))


def test_fake_tensor_shape(kernel):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        y = kernel.silu_and_mul(torch.empty(5, 32))
    assert tuple(y.shape) == (5, 16)


def test_layer(kernel):
    x = torch.randn(3, 16)
    assert torch.allclose(kernel.layers.SiluAndMul()(x), reference(x))
