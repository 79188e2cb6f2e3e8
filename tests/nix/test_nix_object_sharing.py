"""Objects keyed by what each unit reads (issue 46): real evaluations and builds of a small
CPU kernel whose units read torch or not.

`share` has a torch-free unit (`share/pure.cpp`: its own header and the C++ library), a unit
that reads one header through torch's include directory (`share/torchdir.cpp`), and the torch
binding. Its torch 2.12 and 2.13 CPU variants have one derivation for the torch-free unit's
object, built once; the unit that reads torch, and the binding, have one per variant. A macro
that differs (the kernel's `cxx-flags`) gives the torch-free unit another object, though it
never reads the macro. The shared object rebuilds bit for bit, and its derivation closure
names no path outside the store.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from kernel_builder import nix
from nix_support import snapshot_builder

pytestmark = pytest.mark.slow

SYSTEM = "x86_64-linux"
VARIANTS = ("torch212-cxx11-cpu-x86_64-linux", "torch213-cxx11-cpu-x86_64-linux")
SHARED = "cxx11-cpu-x86_64-linux"  # a torch-free unit's object is named by the variant without its torch part
_WILL_BUILD = re.compile(r"^\s+(/nix/store/[a-z0-9]{32}-([^\s]+)\.drv)$", re.M)

BUILD_TOML = """[general]
name = "share"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu"]

[torch]
src = ["torch-ext/torch_binding.cpp"]

[kernel.share]
backend = "cpu"
depends = ["torch"]
src = ["share/pure.h", "share/pure.cpp", "share/torchdir.cpp"]
"""
PURE_H = """#pragma once
float share_pure(float x);
int share_torchdir();
"""
PURE_CPP = """#include "pure.h"

#include <cmath>

float share_pure(float x) { return std::fabs(x) * 2.0f; }
"""
# read through torch's include directory (the torch env): another file per torch version
TORCHDIR_CPP = """#include "pure.h"

#include <c10/macros/cmake_macros.h>

int share_torchdir() { return 3; }
"""
BINDING = """#include <torch/library.h>

#include "registration.h"
#include "../share/pure.h"

void share(at::Tensor &out, at::Tensor const &x) {
  float *o = out.data_ptr<float>();
  float const *in = x.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = share_pure(in[i]) + share_torchdir();
}

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("share(Tensor! out, Tensor x) -> ()");
  ops.impl("share", c10::kCPU, &share);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
"""
INIT = '''import torch

from ._ops import ops


def share(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    ops.share(out, x)
    return out
'''
FLAKE = """{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
"""


def write_share(root: Path, builder: Path) -> Path:
    salt = f"// salt {time.time_ns()}\n"  # nothing of it is in the store yet
    files = {
        "build.toml": BUILD_TOML + f"# {salt[3:]}",
        "share/pure.h": PURE_H + salt,
        "share/pure.cpp": PURE_CPP + salt,
        "share/torchdir.cpp": TORCHDIR_CPP + salt,
        "torch-ext/torch_binding.cpp": BINDING + salt,
        "torch-ext/share/__init__.py": INIT,
        "flake.nix": FLAKE % builder,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    builder = snapshot_builder(tmp_path_factory.mktemp("builder"))
    return write_share(tmp_path_factory.mktemp("share") / "share", builder)


def _attr(variant: str) -> str:
    return f".#legacyPackages.{SYSTEM}.redistributable.{variant}"


def objects(kernel: Path, variant: str) -> dict[str, dict[str, str]]:
    """unit -> {name, drv} of the variant's objects (evaluating builds its plan and deps)."""
    found = nix.run_nix(["eval", "--json", _attr(variant), "--apply",
                         "d: map (o: { name = o.name; drv = o.drvPath; }) d.objects"], cwd=kernel)
    result = {}
    for item in json.loads(found.stdout):
        unit = next(u for u in ("-share-pure.cpp", "-share-torchdir.cpp", "-torch-ext-torch_binding.cpp") if item["name"].endswith(u))
        result[unit.removeprefix("-share-").removeprefix("-")] = item
    return result


def will_build(kernel: Path, variant: str) -> list[str]:
    done = nix.run_nix(["build", "--dry-run", "--no-link", _attr(variant)], cwd=kernel)
    return sorted(name for _, name in _WILL_BUILD.findall(done.stderr.split("will be fetched")[0]))


@pytest.mark.timeout(1800)
def test_a_torch_free_unit_has_one_object_for_every_torch_version(kernel: Path) -> None:
    first, second = (objects(kernel, v) for v in VARIANTS)
    assert sorted(first) == ["pure.cpp", "torch-ext-torch_binding.cpp", "torchdir.cpp"], first
    assert first["pure.cpp"]["drv"] == second["pure.cpp"]["drv"]
    assert first["pure.cpp"]["name"] == f"0-obj-share-{SHARED}-share-pure.cpp"
    # a header read through torch's include directory: one object per torch version
    assert first["torchdir.cpp"]["drv"] != second["torchdir.cpp"]["drv"]
    assert first["torchdir.cpp"]["name"] == f"0-obj-share-{VARIANTS[0]}-share-torchdir.cpp"
    assert first["torch-ext-torch_binding.cpp"]["drv"] != second["torch-ext-torch_binding.cpp"]["drv"]


@pytest.mark.timeout(1800)
def test_the_second_torch_version_builds_only_the_units_that_read_torch(kernel: Path) -> None:
    nix.run_nix(["build", "--no-link", "-j", "1", "--cores", "1", _attr(VARIANTS[1])], cwd=kernel)
    pending = will_build(kernel, VARIANTS[0])
    built_objects = sorted(n for n in pending if n.startswith("0-obj-"))
    assert built_objects == [f"0-obj-share-{VARIANTS[0]}-share-torchdir.cpp",
                             f"0-obj-share-{VARIANTS[0]}-torch-ext-torch_binding.cpp"], pending
    nix.run_nix(["build", "--no-link", "-j", "1", "--cores", "1", _attr(VARIANTS[0])], cwd=kernel)
    assert will_build(kernel, VARIANTS[0]) == []


@pytest.mark.timeout(1800)
def test_the_shared_object_is_bit_identical_on_rebuild_and_names_no_host_path(kernel: Path) -> None:
    drv = objects(kernel, VARIANTS[1])["pure.cpp"]["drv"]
    nix.run_nix(["build", "--no-link", "-j", "1", "--cores", "1", drv], cwd=kernel)
    nix.run_nix(["--realise", "--check", drv], program="nix-store")  # fails when the output differs
    shown = json.loads(nix.run_nix(["show-derivation", "-r", drv]).stdout)
    text = json.dumps(shown)
    for host in (str(kernel), str(Path.home()), "/tmp/", "/work/", "/usr/"):
        assert host not in text, host
    own = shown[drv]
    assert "torch" not in json.dumps(own["inputDrvs"]) and "kb-env-torch" not in own["env"]["unitJson"]
    assert own["env"]["name"] == f"0-obj-share-{SHARED}-share-pure.cpp"


@pytest.mark.timeout(1800)
def test_a_macro_that_differs_gives_another_object(kernel: Path) -> None:
    before = objects(kernel, VARIANTS[1])
    toml = kernel / "build.toml"
    original = toml.read_text()
    toml.write_text(original.replace('depends = ["torch"]\n', 'depends = ["torch"]\ncxx-flags = ["-DSHARE_UNUSED=2"]\n', 1))
    try:
        after = objects(kernel, VARIANTS[1])
    finally:
        toml.write_text(original)
    # the unit never reads SHARE_UNUSED; a flag is an input all the same
    assert after["pure.cpp"]["drv"] != before["pure.cpp"]["drv"]
    assert "-DSHARE_UNUSED=2" in json.dumps(json.loads(nix.run_nix(["show-derivation", after["pure.cpp"]["drv"]]).stdout))
