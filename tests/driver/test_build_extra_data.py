"""examples/extra-data: pyext = ["json", "py"] ships data files and nothing else."""

from __future__ import annotations

import pytest
from buildtest_helpers import CPU_PYTHON, CPU_VARIANT, EXAMPLES, run_example_tests, run_python

from kernel_builder.flake.local import build_local
from kernel_builder.tree.metadata import Metadata

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("extra") / "build"
    build_local(EXAMPLES / "extra-data", out_dir=out, toolchain=CPU_PYTHON)
    return out / CPU_VARIANT


def test_json_is_shipped_and_hashed_txt_is_not(built):
    assert (built / "configs" / "tuning.json").is_file()
    assert not (built / "NOTES.txt").exists()
    assert (EXAMPLES / "extra-data" / "torch-ext" / "extra_data" / "NOTES.txt").is_file()
    metadata = Metadata.read(built / "metadata.json")
    assert "configs/tuning.json" in metadata.digest.files


def test_loads_and_reads_its_data(built):
    script = r"""
import sys
from pathlib import Path
import torch
from kernels import get_local_kernel
kernel = get_local_kernel(Path(sys.argv[1]))
x = torch.randn(100)
assert torch.equal(kernel.relu(x), torch.relu(x))
print(kernel.block_size(10), kernel.block_size(5000), kernel.block_size(10**9))
"""
    assert run_python(script, str(built.parent)).split() == ["128", "256", "512"]


def test_example_own_tests_pass_on_the_build(built):
    assert " passed" in run_example_tests("extra-data", built.parent)
