"""A kernel declaring a C++ dependency (CUTLASS) builds in the Nix sandbox with the pinned
toolchains: examples/cute-scale includes <cute/tensor.hpp> and declares cutlass_3_8."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from nix_support import PYTHON, kernel_builder
from test_nix_hermetic import HOST_PATH, fetched, hermetic_copy, plain_nix  # noqa: F401  (fetched: a fixture)

pytestmark = pytest.mark.slow

CPU214 = "torch214-cxx11-cpu-x86_64-linux"
CU130 = "torch214-cxx11-cu130-x86_64-linux"


@pytest.fixture(scope="module")
def cute(tmp_path_factory: pytest.TempPathFactory, fetched: None) -> Path:  # noqa: F811
    return hermetic_copy("cute-scale", tmp_path_factory.mktemp("cpp-deps") / "cute-scale")


def _closure(kernel: Path, variant: str) -> dict:
    return json.loads(plain_nix("show-derivation", "-r", "--no-write-lock-file", f".#redistributable.{variant}", cwd=kernel).stdout)


def test_only_the_cuda_variants_get_cutlass_and_no_host_path(cute: Path) -> None:
    cuda = _closure(cute, CU130)
    headers = [d for d in cuda if d.endswith("-kb-cutlass-3.8-headers.drv")]
    assert len(headers) == 1
    # the variant and its plan (built per object: the plan's compile commands name the headers)
    steps = [d for d in cuda.values() if d["env"].get("variant") == CU130]
    assert sorted(d["env"].get("step", "variant") for d in steps) == ["plan", "variant"]
    given, *others = [json.loads(d["env"]["KERNEL_BUILDER_CPP_DEPS"]) for d in steps]
    assert others == [given]
    assert list(given) == ["cutlass-3.8"] and given["cutlass-3.8"].startswith("/nix/store/")
    for drv, data in cuda.items():
        for value in [data["builder"], *data["args"], *data["env"].values()]:
            match = HOST_PATH.search(value)
            assert match is None, f"{drv} names host path {match.group(1)!r} in {value[:200]!r}"
    cpu = _closure(cute, CPU214)
    assert not any("cutlass" in d for d in cpu)
    assert not any("KERNEL_BUILDER_CPP_DEPS" in d["env"] for d in cpu.values())


@pytest.mark.timeout(1200)
def test_the_cu130_variant_builds_in_the_sandbox_for_the_requested_archs(cute: Path) -> None:
    built = plain_nix("build", "--no-link", "--json", "-j", "1", "--cores", "2", "--no-write-lock-file",
                      f".#redistributable.{CU130}", cwd=cute)
    out = Path(json.loads(built.stdout)[0]["outputs"]["out"])
    refs = subprocess.run(["nix-store", "-q", "--references", str(out)], capture_output=True, text=True, check=True).stdout
    assert refs.split() == []  # the CUTLASS store path was prefix-mapped away
    tree = out / CU130
    metadata = json.loads((tree / "metadata.json").read_text())
    assert metadata["backend"]["archs"] == ["8.0", "9.0"]
    cuobjdump = shutil.which("cuobjdump") or next(Path(PYTHON).parents[1].glob("lib/python3.*/site-packages/nvidia/cu13/bin/cuobjdump"))
    module = next(tree.glob("*.abi3.so"))
    listed = subprocess.run([str(cuobjdump), "--list-elf", str(module)], capture_output=True, text=True, check=True).stdout
    assert sorted(re.findall(r"sm_(\d+)", listed)) == ["80", "90"]


@pytest.mark.timeout(1200)
def test_cuda_capabilities_narrows_the_build_is_recorded_and_upload_refuses(cute: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNEL_BUILDER_")}
    built = kernel_builder("build", str(cute), "--variant", CU130, "--cuda-capabilities", "9.0", "-j", "1",
                           "--cores", "2", env=env, check=False)
    assert built.returncode == 0, built.stderr[-3000:]
    assert "--cuda-capabilities 9.0: the CUDA variants build only these archs" in built.stderr
    tree = cute / "build" / CU130
    metadata = json.loads((tree / "metadata.json").read_text())
    assert metadata["backend"]["archs"] == ["9.0"]
    assert metadata["provenance"]["cuda-capabilities"] == ["9.0"]
    cuobjdump = shutil.which("cuobjdump") or next(Path(PYTHON).parents[1].glob("lib/python3.*/site-packages/nvidia/cu13/bin/cuobjdump"))
    listed = subprocess.run([str(cuobjdump), "--list-elf", str(next(tree.glob("*.abi3.so")))],
                            capture_output=True, text=True, check=True).stdout
    assert re.findall(r"sm_(\d+)", listed) == ["90"]
    # No Hub is needed: the narrowed tree is refused before any request.
    refused = kernel_builder("upload", str(cute), env={**env, "HF_ENDPOINT": "http://127.0.0.1:9", "HF_TOKEN": "x"}, check=False)
    assert refused.returncode == 8, refused.stderr
    assert f"{CU130} (only 9.0)" in refused.stderr and "--force" in refused.stderr
