"""Tests of the stable-ABI relu kernel, run against a built tree.

KERNEL_BUILD_DIR points at the directory holding the variant directories (default:
this kernel's build/). Build first: kernel-builder build --local examples/relu-stable-abi
"""

import os
from pathlib import Path

import pytest
import torch
from kernels import LocalLayerRepository, Mode, get_local_kernel, kernelize, use_kernel_forward_from_hub, use_kernel_mapping

BUILD = Path(os.environ.get("KERNEL_BUILD_DIR", Path(__file__).resolve().parents[1] / "build"))
DEVICES = ["cpu"]


@pytest.fixture(scope="module")
def relu():
    return get_local_kernel(BUILD)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32])
def test_relu_matches_torch(relu, device, dtype):
    x = torch.randn(3, 1000, device=device, dtype=dtype)
    assert torch.equal(relu.relu(x), torch.relu(x))


def test_relu_out_argument(relu):
    x = torch.randn(64)
    out = torch.empty_like(x)
    assert relu.relu(x, out=out) is out
    assert torch.equal(out, torch.relu(x))


def test_relu_rejects_other_dtypes(relu):
    with pytest.raises(RuntimeError, match="only float32"):
        relu.ops.relu(torch.empty(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64))


def test_variant_is_the_stable_abi_build():
    assert [p.name for p in BUILD.iterdir() if p.name.startswith("torch-stable-abi")] != []


def test_relu_layer_is_swapped_in_by_kernelize():
    @use_kernel_forward_from_hub("ReLU")
    class ReLU(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x)

    model = torch.nn.Sequential(ReLU())
    with use_kernel_mapping({"ReLU": {"cpu": LocalLayerRepository(repo_path=BUILD, layer_name="ReLU")}}):
        model = kernelize(model, mode=Mode.INFERENCE, device="cpu")
    assert model[0].forward.__func__.__qualname__ == "ReLU.forward"
    assert model[0].forward.__func__.__module__.endswith(".layers")
    x = torch.randn(100)
    assert torch.equal(model(x), torch.relu(x))
