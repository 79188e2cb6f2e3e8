"""Tests of the add-rust kernel itself, run against a built tree with `kernels` and
apache-tvm-ffi installed.

KERNEL_BUILD_DIR points at the directory holding the variant directories (default:
this kernel's build/). Build first:
  kernel-builder build examples/add-rust --variant tvm-ffi01-cpu-x86_64-linux
"""

import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from kernels import get_local_kernel

BUILD = Path(os.environ.get("KERNEL_BUILD_DIR", Path(__file__).resolve().parents[1] / "build"))


@pytest.fixture(scope="module")
def add_rust():
    return get_local_kernel(BUILD, backend="cpu")


def test_add_torch(add_rust) -> None:
    a = torch.arange(-8, 8, dtype=torch.float32)
    b = torch.full((16,), 0.5)
    out = torch.empty_like(a)
    assert add_rust.add(a, b, out) is out
    torch.testing.assert_close(out, a + b)


def test_gelu_matches_erf(add_rust) -> None:
    x = np.linspace(-4, 4, 101, dtype=np.float32)
    out = np.empty_like(x)
    add_rust.gelu(x, out)
    expected = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()], dtype=np.float32)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(torch.from_numpy(out), torch.nn.functional.gelu(torch.from_numpy(x)))


def test_wrong_dtype_is_a_python_error(add_rust) -> None:
    a = torch.zeros(4, dtype=torch.float64)
    with pytest.raises(TypeError, match="float32"):
        add_rust.add(a, a, torch.empty_like(a))


def test_length_mismatch_is_a_python_error(add_rust) -> None:
    with pytest.raises(ValueError, match="elements"):
        add_rust.add(torch.zeros(3), torch.zeros(4), torch.empty(3))
