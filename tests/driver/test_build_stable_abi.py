"""examples/relu-stable-abi: TORCH_TARGET_VERSION, the stable-ABI symbol check, interop."""

from __future__ import annotations

import subprocess

import pytest
from buildtest_helpers import CPU_PYTHON, EXAMPLES, INTEROP_RELU, run_example_tests, run_python

from kernel_builder.tree.checks import check_stable_abi_symbols
from kernel_builder.driver.generate import stable_abi_define
from kernel_builder.flake.local import build_local
from kernel_builder.tree.metadata import Metadata

pytestmark = pytest.mark.timeout(600)

VARIANT = "torch-stable-abi211-cpu-x86_64-linux"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("stable") / "build"
    results = build_local(EXAMPLES / "relu-stable-abi", out_dir=out, toolchain=CPU_PYTHON)
    return out, results


def test_stable_abi_variant_name_and_layout(built):
    out, results = built
    assert [r.variant for r in results] == [VARIANT]
    metadata = Metadata.read(out / VARIANT / "metadata.json")
    assert (out / VARIANT / f"{metadata.id}.abi3.so").is_file()


def test_target_version_define():
    assert stable_abi_define((2, 11)) == "TORCH_TARGET_VERSION=0x020b000000000000"
    assert stable_abi_define((2, 9)) == "TORCH_TARGET_VERSION=0x0209000000000000"


def test_module_uses_only_stable_symbols(built):
    out, _ = built
    metadata = Metadata.read(out / VARIANT / "metadata.json")
    assert check_stable_abi_symbols(out / VARIANT / f"{metadata.id}.abi3.so") == []


def test_symbol_check_flags_torch_cpp_symbols(tmp_path):
    """A module that calls into c10:: C++ is not stable-ABI clean."""
    src = tmp_path / "bad.cpp"
    src.write_text("namespace c10 { void unstable_helper(); }\nvoid entry() { c10::unstable_helper(); }\n")
    so = tmp_path / "bad.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    problems = check_stable_abi_symbols(so)
    assert len(problems) == 1 and "c10::unstable_helper()" in problems[0]


def test_interop_loads_on_a_newer_torch(built):
    """Built for ABI 2.11, loaded by kernels on torch 2.13: the loader accepts and prefers it."""
    out, results = built
    stdout = run_python(INTEROP_RELU, str(out), "cpu", "1")
    assert f"module {results[0].ops_id}" in stdout and "op ok" in stdout and "layer ok" in stdout


def test_example_own_tests_pass_on_the_build(built):
    out, _ = built
    assert " passed" in run_example_tests("relu-stable-abi", out)
