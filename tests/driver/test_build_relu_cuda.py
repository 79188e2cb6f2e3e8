"""examples/relu, CUDA 13.0 variant for torch 2.14.1: a real nvcc compile, archs, interop.

Needs the torch 2.14.1 toolchain that `.ci/setup` records (or KERNEL_BUILDER_TORCH214_PYTHON; the test fails,
not skips, without it). Nothing runs on a GPU here: there is none. The op-vs-torch
comparison is skipped for that reason only; loading, op registration and kernelize run.
"""

from __future__ import annotations

import re
import shutil
import sys
import sysconfig
from pathlib import Path

import pytest
from buildtest_helpers import (
    CUDA_VARIANT,
    EXAMPLES,
    INTEROP_RELU,
    copy_example,
    kernels_path_for_other_torch,
    run,
    run_python,
    run_variant,
    torch214_python,
)

from kernel_builder.tree.digest import compute_digest, validate_digest
from kernel_builder.tree.metadata import Metadata
from kernel_builder.toolchain.host.discover import python_for_variant

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def python214() -> str:
    return torch214_python()


@pytest.fixture(scope="module")
def built(python214, tmp_path_factory):
    out = tmp_path_factory.mktemp("relu-cuda")
    done = run_variant(EXAMPLES / "relu", CUDA_VARIANT, out, python214)
    assert done.returncode == 0, done.stderr[-6000:]
    return out


def _cuobjdump(python: str) -> str:
    # PyPI nvidia-cuda-cuobjdump: in the test extra, or in the toolchain itself.
    sites = [sysconfig.get_paths()["purelib"]]
    sites.append(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    for site in sites:
        for candidate in sorted(Path(site, "nvidia").glob("*/bin/cuobjdump")):
            return str(candidate)
    found = shutil.which("cuobjdump")
    if found is None:
        pytest.fail("cuobjdump not found: pip install nvidia-cuda-cuobjdump (it is in the test extra)")
    return found


def test_archs_in_the_binary_are_the_metadata_archs(built, python214):
    variant = built / CUDA_VARIANT
    metadata = Metadata.read(variant / "metadata.json")
    assert metadata.backend.type.value == "cuda"
    assert metadata.backend.archs == ("8.0", "9.0")  # cuda-capabilities ∩ CUDA 13.0 defaults
    listing = run([_cuobjdump(python214), "--list-elf", str(variant / f"{metadata.id}.abi3.so")]).stdout
    sms = sorted({m.group(1) for m in re.finditer(r"\.sm_(\d+[af]?)\.cubin", listing)})
    expected = sorted(a.replace(".", "") for a in metadata.backend.archs)
    assert sms == expected, listing


def test_layout_digest_and_no_runpath(built):
    variant = built / CUDA_VARIANT
    metadata = Metadata.read(variant / "metadata.json")
    assert metadata.id.startswith("_relu_cuda_")
    assert sorted(p.name for p in variant.iterdir()) == sorted(
        ["__init__.py", "layers.py", "_ops.py", f"{metadata.id}.abi3.so", "metadata.json", "symbols.json"]
    )
    assert metadata.digest is not None and validate_digest(variant, metadata.digest) == []
    assert "RUNPATH" not in run(["readelf", "-d", str(variant / f"{metadata.id}.abi3.so")]).stdout


def test_interop_loads_registers_and_kernelizes_without_a_gpu(built, python214, tmp_path):
    """kernels 0.17.2 (from the test venv) on torch 2.14.1 loads the variant and swaps ReLU."""
    metadata = Metadata.read(built / CUDA_VARIANT / "metadata.json")
    env = {"PYTHONPATH": kernels_path_for_other_torch(tmp_path)}
    stdout = run_python(INTEROP_RELU, str(built), "cuda", "0", python=python214, env=env)
    assert f"module {metadata.id}" in stdout
    assert f"forward {metadata.id}.layers ReLU.forward" in stdout
    registered = run_python(
        "import sys, torch; import importlib.util as u; p, i = sys.argv[1], sys.argv[2];"
        "s = u.spec_from_file_location(i, p + '/__init__.py', submodule_search_locations=[p]);"
        "m = u.module_from_spec(s); sys.modules[i] = m; s.loader.exec_module(m);"
        "print(torch._C._dispatch_has_kernel_for_dispatch_key(i + '::relu', 'CUDA'))",
        str(built / CUDA_VARIANT),
        metadata.id,
        python=python214,
    )
    assert registered.strip() == "True"


def test_op_matches_torch_on_a_gpu(built, python214):
    has_gpu = run_python("import torch; print(torch.cuda.is_available())", python=python214).strip() == "True"
    if not has_gpu:
        pytest.skip("needs an NVIDIA GPU to run the CUDA relu op; this machine has none")
    stdout = run_python(INTEROP_RELU, str(built), "cuda", "1", python=python214)
    assert "op ok" in stdout and "layer ok" in stdout


def test_reproducible_from_another_directory(built, python214, tmp_path):
    """A second nvcc build from a copy of the source (same ops id) gives the same digest.

    nvcc names internal symbols from the absolute source path and random numbers and
    records its temporary file names; the builder compiles at a content-addressed scratch
    path, seeds nvcc per file (-frandom-seed) and discards local symbols at link time.
    """
    metadata = Metadata.read(built / CUDA_VARIANT / "metadata.json")
    source = copy_example("relu", tmp_path / "elsewhere")
    other = tmp_path / "out"
    uid = metadata.id.removeprefix("_relu_cuda_")
    done = run_variant(source, CUDA_VARIANT, other, python214, "--unique-id", uid)
    assert done.returncode == 0, done.stderr[-4000:]
    assert compute_digest(other / CUDA_VARIANT).files == compute_digest(built / CUDA_VARIANT).files


def test_check_command_imports_each_variant_with_its_recorded_toolchain(built, python214):
    """`kernel-builder check` picks the torch 2.14.1 toolchain for the cu130 variant, so the
    import check runs (and sees the registered op) instead of being skipped."""
    done = run([sys.executable, "-m", "kernel_builder", "check", str(built)])
    assert done.returncode == 0, done.stderr[-4000:]
    metadata = Metadata.read(built / CUDA_VARIANT / "metadata.json")
    assert f"note: {CUDA_VARIANT}: registered ops: {metadata.id}::relu" in done.stderr
    assert "import check skipped" not in done.stderr


def test_python_for_variant_maps_names_to_recorded_build_sets():
    record = {"torch2.14-cuda13.0": "/envs/t214/bin/python", "torch2.13-cpu": "/v/bin/python"}
    assert python_for_variant("torch214-cxx11-cu130-x86_64-linux", record) == "/envs/t214/bin/python"
    assert python_for_variant("torch213-cxx11-cpu-x86_64-linux", record) == "/v/bin/python"
    assert python_for_variant("torch212-cxx11-cpu-x86_64-linux", record) is None  # not recorded
    assert python_for_variant("torch-cpu", record) is None  # noarch: any torch imports it
    assert python_for_variant("not-a-variant", record) is None
    assert python_for_variant("torch213-cxx11-cpu-x86_64-linux", None) is None
