"""Per-object build of a CUDA variant: relu with a second `.cu` file, its cu130 variant
narrowed to one arch (`--cuda-capabilities 9.0`, recorded in the builder input as
`kernel-builder build` records it) to keep the compile short. No GPU is needed: the module's
embedded device code is listed with cuobjdump."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from kernel_builder import nix
from nix_support import EXAMPLES, PYTHON, snapshot_builder

pytestmark = pytest.mark.slow

VARIANT = "torch213-cxx11-cu130-x86_64-linux"
OTHER = "torch214-cxx11-cu130-x86_64-linux"
SHARED = "0-obj-relu-cxx11-cu130-x86_64-linux-"  # a torch-free unit's object
_BUILDING = re.compile(r"building '/nix/store/[a-z0-9]{32}-([^']+)\.drv'")

SCALE_CU = """#include <cuda_runtime.h>

// A second translation unit with device code: its object holds its own sm_90 cubin.
__global__ void relu_scale_kernel(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

void relu_scale(float *x, float s, int n) {
  relu_scale_kernel<<<(n + 255) / 256, 256>>>(x, s, n);
}
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    builder = snapshot_builder(tmp_path_factory.mktemp("builder"))
    (builder / "state").mkdir()
    (builder / "state" / "build-options.json").write_text(json.dumps({"cudaCapabilities": ["9.0"]}))
    root = tmp_path_factory.mktemp("relu2") / "relu2"
    shutil.copytree(EXAMPLES / "relu", root, ignore=shutil.ignore_patterns("build", "__pycache__", "result*"))
    (root / "relu_cuda" / "scale.cu").write_text(SCALE_CU + f"// salt {time.time_ns()}\n")
    # every source salted too: an object is keyed by what its unit reads, not by the plan
    for rel in ("relu_cuda/relu.cu", "torch-ext/torch_binding.cpp"):
        (root / rel).write_text((root / rel).read_text() + f"// salt {time.time_ns()}\n")
    toml = root / "build.toml"
    # salted: a new plan, so every object is new too (the plan sees build.toml, not sources)
    toml.write_text(toml.read_text().replace('src = ["relu_cuda/relu.cu"]', 'src = ["relu_cuda/relu.cu", "relu_cuda/scale.cu"]')
                    + f"# salt {time.time_ns()}\n")
    (root / "flake.nix").write_text("""{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
""" % builder)
    return root


@pytest.mark.timeout(3600)
def test_a_cuda_variant_builds_per_object_for_its_archs(kernel: Path) -> None:
    attr = f".#legacyPackages.x86_64-linux.redistributable.{VARIANT}"
    done = nix.run_nix(["build", "-L", "--no-link", "-j", "1", "--cores", "1", attr], cwd=kernel)
    built = _BUILDING.findall(done.stderr)
    prefix = f"0-obj-relu-{VARIANT}-"
    assert sorted(n.removeprefix(prefix) for n in built if n.startswith(prefix)) == [
        "relu_cuda-relu.cu", "torch-ext-torch_binding.cpp"]
    # scale.cu reads no torch: its object is every torch version's (named without torch213-)
    assert [n for n in built if n.startswith("0-obj-") and not n.startswith(prefix)] == [f"{SHARED}relu_cuda-scale.cu"]
    tree = Path(nix.run_nix(["eval", "--raw", attr + ".outPath"], cwd=kernel).stdout) / VARIANT
    metadata = json.loads((tree / "metadata.json").read_text())
    assert metadata["backend"]["archs"] == ["9.0"]
    cuobjdump = shutil.which("cuobjdump") or next(
        Path(PYTHON).parents[1].glob("lib/python3.*/site-packages/nvidia/cu13/bin/cuobjdump"))
    module = next(tree.glob("*.abi3.so"))
    listed = subprocess.run([str(cuobjdump), "--list-elf", str(module)], capture_output=True, text=True, check=True).stdout
    # one cubin per translation unit with device code, each for sm_90 only
    assert sorted(re.findall(r"sm_(\d+)", listed)) == ["90", "90"], listed


@pytest.mark.timeout(1800)
def test_a_torch_free_cuda_unit_has_one_object_for_torch_2_13_and_2_14(kernel: Path) -> None:
    """The CUDA case of issue 46's sharing rule: scale.cu includes only cuda_runtime.h, and
    compiles with the CUDA compiler made from the CUDA wheels alone (the same wheels in both
    environments), so both variants have one derivation for its object, which names no torch
    environment; relu.cu reads torch and has one per torch version."""
    found = {}
    for variant in (VARIANT, OTHER):
        done = nix.run_nix(["eval", "--json", f".#legacyPackages.x86_64-linux.redistributable.{variant}", "--apply",
                            "d: map (o: { name = o.name; drv = o.drvPath; }) d.objects"], cwd=kernel)
        found[variant] = {o["name"].rsplit("-relu_cuda-", 1)[-1] if "-relu_cuda-" in o["name"] else "binding": o
                          for o in json.loads(done.stdout)}
    assert found[VARIANT]["scale.cu"]["drv"] == found[OTHER]["scale.cu"]["drv"]
    assert found[VARIANT]["scale.cu"]["name"] == f"{SHARED}relu_cuda-scale.cu"
    assert found[VARIANT]["relu.cu"]["drv"] != found[OTHER]["relu.cu"]["drv"]
    shown = json.loads(nix.run_nix(["show-derivation", found[VARIANT]["scale.cu"]["drv"]]).stdout)
    own = next(iter(shown.values()))
    assert "kb-env-torch" not in json.dumps(own), own["env"].get("storeInputs")
    assert "kb-cuda13.0-compiler" in own["env"]["storeInputs"]
