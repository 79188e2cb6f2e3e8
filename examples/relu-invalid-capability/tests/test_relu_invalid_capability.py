"""relu-invalid-capability must not build: its CUDA and ROCm archs match no toolkit.

(A builder fixture: it runs kernel-builder's planner, which fails before any compiler.)
"""

from pathlib import Path

import pytest
from kernel_builder.backends.cuda_archs import select_archs
from kernel_builder.driver.generate import plan_compile
from kernel_builder.config import load
from kernel_builder.errors import BuildError

SOURCE = Path(__file__).resolve().parents[1]


def test_cuda_capabilities_have_no_intersection():
    kernel = load(SOURCE).kernels["relu_cuda"]
    with pytest.raises(BuildError, match="empty set of capabilities after intersection"):
        select_archs(kernel.cuda_capabilities, cuda_version=(13, 0), kernel="relu_cuda")


def test_rocm_archs_have_no_intersection(tmp_path):
    with pytest.raises(BuildError, match="empty set of architectures after intersection"):
        plan_compile(
            load(SOURCE),
            variant="torch213-cxx11-rocm71-x86_64-linux",
            backend="rocm",
            ops_id="_relu_rocm_test",
            source_dir=SOURCE,
            scratch_dir=tmp_path,
            torch_version=(2, 13),
        )
