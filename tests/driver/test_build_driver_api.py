"""A kernel that calls the CUDA driver API (tests/driver/driver_api_kernel: cuDriverGetVersion,
cuTensorMapEncodeTiled in host functions), built through the pinned Nix build of
torch213-cxx11-cu130-x86_64-linux (per object, narrowed to sm_90 by the kernel itself).

No driver exists here. The build links the module against a generated stub libcuda.so.1
(--as-needed), so the module NEEDs libcuda.so.1 by soname with no RUNPATH, and the import
check, which binds it to that stub, passes. The driver functions are then called through
the stub the build made: they answer CUDA_ERROR_STUB_LIBRARY (34), as NVIDIA's stub does."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from kernel_builder.driver import generate
from kernel_builder import nix
from nix_support import snapshot_builder


VARIANT = "torch213-cxx11-cu130-x86_64-linux"
FIXTURE = Path(__file__).parent / "driver_api_kernel"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    builder = snapshot_builder(tmp_path_factory.mktemp("builder"))
    root = tmp_path_factory.mktemp("driver-api") / "driver-api"
    shutil.copytree(FIXTURE, root)
    toml = root / "build.toml"
    toml.write_text(toml.read_text() + f"# salt {time.time_ns()}\n")  # a fresh plan: the stub is built and used
    (root / "flake.nix").write_text("""{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
""" % builder)
    return root


@pytest.fixture(scope="module")
def built(kernel: Path) -> tuple[Path, Path]:
    """(the variant directory, the link step's output, which holds the stub beside the module)."""
    attr = f".#legacyPackages.x86_64-linux.redistributable.{VARIANT}"
    done = nix.run_nix(["build", "-L", "--no-link", "-j", "1", "--cores", "1", attr], cwd=kernel)
    assert "registered ops:" in done.stderr, done.stderr[-4000:]
    tree = Path(nix.run_nix(["eval", "--raw", attr + ".outPath"], cwd=kernel).stdout) / VARIANT
    link = Path(nix.run_nix(["eval", "--raw", attr + ".link.outPath"], cwd=kernel).stdout)
    return tree, link


def _dynamic(library: Path) -> str:
    return subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_module_needs_the_driver_by_soname_without_runpath(built: tuple[Path, Path]) -> None:
    tree, _ = built
    module = next(tree.glob("*.abi3.so"))
    dynamic = _dynamic(module)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    assert "libcuda.so.1" in needed, dynamic
    assert "RUNPATH" not in dynamic and "RPATH" not in dynamic, dynamic
    assert not any("/" in name for name in needed), needed  # never the stub's path
    # the stub is never shipped: the variant holds the module and no other library
    assert sorted(p.name for p in tree.glob("*.so*")) == [module.name]
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(module)], capture_output=True, text=True,
                               check=True).stdout
    assert "cuTensorMapEncodeTiled" in undefined and "cuDriverGetVersion" in undefined


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_its_ops_call_the_stub_where_no_driver_exists(kernel: Path, built: tuple[Path, Path]) -> None:
    tree, link = built
    stub = link / generate.DRIVER_STUB_FILE
    assert "(SONAME)" in _dynamic(stub) and "[libcuda.so.1]" in _dynamic(stub)
    metadata = json.loads((tree / "metadata.json").read_text())
    assert metadata["backend"]["archs"] == ["9.0"]
    code = f"""
import ctypes, importlib.util, sys, torch
try:
    ctypes.CDLL("libcuda.so.1")
    print("driver present"); sys.exit(0)
except OSError:
    ctypes.CDLL({str(stub)!r})
path = {str(tree)!r}
spec = importlib.util.spec_from_file_location("driver_api", path + "/__init__.py", submodule_search_locations=[path])
module = importlib.util.module_from_spec(spec); sys.modules["driver_api"] = module; spec.loader.exec_module(module)
print(module.driver_version(), module.encode_tensor_map_status())
"""
    table = nix.eval_json(".#legacyPackages.x86_64-linux.variantTable", cwd=str(kernel))
    python = next(row["toolchainPython"] for row in table if row["name"] == VARIANT)  # torch 2.13 with CUDA
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    if done.stdout.strip() == "driver present":
        pytest.skip("this machine has a CUDA driver: the stub is not used (needs a machine without one)")
    assert done.stdout.split() == ["-34", "34"], done.stdout


CUDA_H_EXCERPT = """
#define __CUDA_API_PTDS(api) api ## _ptds
#define cuMemAlloc                          cuMemAlloc_v2
#define cuMemcpyHtoD                        __CUDA_API_PTDS(cuMemcpyHtoD_v2)
CUresult CUDAAPI cuDriverGetVersion(int *driverVersion);
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);
CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
    cuuint32_t tensorRank, void *globalAddress);
typedef CUresult (CUDAAPI *PFN_cuInit)(unsigned int Flags);
"""


def test_the_stub_defines_each_exported_name_of_the_driver_api() -> None:
    names = generate.driver_api_symbols(CUDA_H_EXCERPT)
    assert names == ("cuDriverGetVersion", "cuMemAlloc", "cuMemAlloc_v2", "cuMemcpyHtoD_v2",
                     "cuMemcpyHtoD_v2_ptds", "cuTensorMapEncodeTiled")
    source = generate.render_driver_stub(names)
    assert 'int cuMemAlloc_v2() { return 34; }' in source and source.count("return 34;") == len(names)
