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


@pytest.fixture(scope="module")
def add_tvm_ffi():
    return get_local_kernel(BUILD)


def test_add_torch(add_tvm_ffi) -> None:
    a = torch.arange(-8, 8, dtype=torch.float32)
    b = torch.full((16,), 0.5)
    out = torch.empty_like(a)
    assert add_tvm_ffi.add(a, b, out) is out
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
