"""Tests of the add-tvm-ffi kernel itself, run against a built tree with `kernels` and
apache-tvm-ffi installed.

KERNEL_BUILD_DIR points at the directory holding the variant directories (default:
this kernel's build/). Build first:
  kernel-builder build examples/add-tvm-ffi --variant tvm-ffi01-cpu-x86_64-linux
"""

import os
from pathlib import Path

import numpy as np
import pytest
import torch
from kernels import get_local_kernel

BUILD = Path(os.environ.get("KERNEL_BUILD_DIR", Path(__file__).resolve().parents[1] / "build"))
# The CUDA variant where torch has a GPU (the variant kernels picks there), else the CPU one.
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture(scope="module")
def add_tvm_ffi():
    """The CPU variant (NumPy arrays live on the CPU)."""
    return get_local_kernel(BUILD, backend="cpu")


def test_add_torch() -> None:
    kernel = get_local_kernel(BUILD, backend=DEVICE)
    a = torch.arange(-8, 8, dtype=torch.float32, device=DEVICE)
    b = torch.full((16,), 0.5, device=DEVICE)
    out = torch.empty_like(a)
    assert kernel.add(a, b, out) is out
    torch.testing.assert_close(out, a + b)


def test_add_numpy(add_tvm_ffi) -> None:
    a = np.linspace(-1, 1, 33, dtype=np.float32)
    out = np.empty_like(a)
    add_tvm_ffi.add(a, a, out)
    np.testing.assert_allclose(out, 2 * a)


def test_wrong_dtype_is_a_python_error(add_tvm_ffi) -> None:
    a = torch.zeros(4, dtype=torch.float64)
    with pytest.raises(TypeError, match="float32"):
        add_tvm_ffi.add(a, a, torch.empty_like(a))
