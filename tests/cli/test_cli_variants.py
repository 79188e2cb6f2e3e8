"""`kernel-builder list-variants` run as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SETS = {
    "buildSets": [
        {"torch": "2.11", "backend": "cpu", "systems": ["x86_64-linux"], "bundle": False},
        {"torch": "2.12", "backend": "cpu", "systems": ["aarch64-darwin", "x86_64-linux"]},
        {"torch": "2.12", "backend": "cuda", "backendVersion": "12.6", "systems": ["x86_64-linux"]},
        {"torch": "2.13", "backend": "cpu", "systems": ["aarch64-darwin", "x86_64-linux"]},
        {"torch": "2.13", "backend": "cuda", "backendVersion": "12.6", "systems": ["x86_64-linux"]},
    ]
}

KERNEL = """
[general]
name = "relu"
version = 1
edition = 5
license = "MIT"
backends = ["cpu", "cuda"]

[torch]
src = ["torch-ext/b.cpp"]
{torch_extra}

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu.cpp"]

[kernel.relu_cuda]
backend = "cuda"
depends = ["torch"]
src = ["relu.cu"]
"""


# What list-variants reads of a toolchain lock (its requests): torch 2.13's PyPI build is
# the CUDA 13.0 one and serves the cpu set here; nothing else is pinned.
LOCK = {
    "schema": 1,
    "system": "x86_64-linux",
    "requests": {
        "python": {"version": "3.11", "environments": {"torch2.13": ["torch==2.13.0,!=2.13.0+cpu", "ninja"]}},
        "buildSets": {"torch2.13-cpu": "torch2.13"},
        "cuda": {"torch2.13": "13.0"},
    },
}


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "build-sets.json"
    path.write_text(json.dumps(SETS))
    lock = tmp_path / "toolchain-lock.json"
    lock.write_text(json.dumps(LOCK))
    return {**os.environ, "KERNEL_BUILDER_BUILD_SETS": str(path), "KERNEL_BUILDER_TOOLCHAIN_LOCK": str(lock)}


def kernel(tmp_path: Path, torch_extra: str = "") -> Path:
    directory = tmp_path / "relu"
    directory.mkdir(exist_ok=True)
    (directory / "build.toml").write_text(KERNEL.format(torch_extra=torch_extra))
    return directory


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernel_builder", "list-variants", *args], env=env, capture_output=True, text=True)


def test_human_output_marks_bundle_and_what_builds_here(tmp_path: Path, env) -> None:
    done = run(env, "--system", "x86_64-linux", str(kernel(tmp_path)))
    assert done.returncode == 0, done.stderr
    rows = [line.split(None, 3) for line in done.stdout.splitlines()]
    assert [row[:3] for row in rows] == [
        ["torch211-cxx11-cpu-x86_64-linux", "non-bundle", "not-here:"],
        ["torch212-cxx11-cpu-x86_64-linux", "bundle", "not-here:"],
        ["torch212-cxx11-cu126-x86_64-linux", "bundle", "not-here:"],
        ["torch213-cxx11-cpu-x86_64-linux", "bundle", "buildable-here"],
        ["torch213-cxx11-cu126-x86_64-linux", "bundle", "not-here:"],
    ]
    why = {row[0]: row[3] for row in rows if len(row) == 4}
    assert why["torch212-cxx11-cpu-x86_64-linux"].startswith("torch 2.12 (cpu) is not in the toolchain lock; torch 2.12 is published on PyPI")
    # torch 2.13's CUDA build on PyPI is the pinned 13.0 one: 12.6 is only on the PyTorch index
    assert why["torch213-cxx11-cu126-x86_64-linux"] == (
        "torch 2.13 + CUDA 12.6 is published on the PyTorch index (https://download.pytorch.org/whl/cu126), "
        "not on PyPI (whose torch 2.13 is the CUDA 13.0 build), and is not in the toolchain lock: pin it with "
        "`kernel-builder toolchain lock` on a machine whose pip reaches that index (docs/nix.md, Adding a build set)"
    )
    assert "PyPI" not in why["torch212-cxx11-cu126-x86_64-linux"]  # nothing of torch 2.12 is pinned: unknown
    assert all("--toolchain host" not in line for line in done.stdout.splitlines())
    assert "5 variant(s) for x86_64-linux (4 in the bundle, 1 buildable here)" in done.stderr


def test_other_systems_say_the_lock_pins_only_its_own(tmp_path: Path, env) -> None:
    done = run(env, "--system", "aarch64-darwin", str(kernel(tmp_path)))
    assert done.returncode == 0, done.stderr
    for line in done.stdout.splitlines():
        assert "not-here: no pinned toolchain for aarch64-darwin: the toolchain lock (nix/toolchain-lock.json) pins x86_64-linux toolchains only" in line


def test_json_all_systems(tmp_path: Path, env) -> None:
    done = run(env, "--system", "all", "--json", str(kernel(tmp_path)))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [d["name"] for d in data] == [
        "torch212-cpu-aarch64-darwin",
        "torch213-cpu-aarch64-darwin",
        "torch211-cxx11-cpu-x86_64-linux",
        "torch212-cxx11-cpu-x86_64-linux",
        "torch212-cxx11-cu126-x86_64-linux",
        "torch213-cxx11-cpu-x86_64-linux",
        "torch213-cxx11-cu126-x86_64-linux",
    ]
    first = data[0]
    assert {k: first[k] for k in ("name", "system", "backend", "torch", "bundle")} == {
        "name": "torch212-cpu-aarch64-darwin",
        "system": "aarch64-darwin",
        "backend": "cpu",
        "torch": "2.12",
        "bundle": True,
    }
    assert [d["local"] for d in data if d["system"] == "x86_64-linux"] == [False, False, False, True, False]
    assert ["why_not_here" in d for d in data if d["system"] == "x86_64-linux"] == [True, True, True, False, True]
    assert data[0]["why_not_here"].startswith("no pinned toolchain for aarch64-darwin")


def test_bundle_only(tmp_path: Path, env) -> None:
    done = run(env, "--system", "x86_64-linux", "--bundle", "--json", str(kernel(tmp_path)))
    assert [d["name"] for d in json.loads(done.stdout)] == [
        "torch212-cxx11-cpu-x86_64-linux",
        "torch212-cxx11-cu126-x86_64-linux",
        "torch213-cxx11-cpu-x86_64-linux",
        "torch213-cxx11-cu126-x86_64-linux",
    ]


def deps_env(tmp_path: Path, import_check: dict[str, list[str]]) -> dict[str, str]:
    """A lock pinning torch 2.13 for cpu and CUDA 13.0, with these import-check sets."""
    sets = tmp_path / "sets.json"
    sets.write_text(json.dumps({"buildSets": [
        {"torch": "2.13", "backend": "cpu", "systems": ["x86_64-linux"]},
        {"torch": "2.13", "backend": "cuda", "backendVersion": "13.0", "systems": ["x86_64-linux"]},
    ]}))
    lock = json.loads(json.dumps(LOCK))
    lock["requests"]["buildSets"]["torch2.13-cuda13.0"] = "torch2.13"
    lock["requests"]["python"]["importCheck"] = import_check
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(lock))
    return {**os.environ, "KERNEL_BUILDER_BUILD_SETS": str(sets), "KERNEL_BUILDER_TOOLCHAIN_LOCK": str(path)}


def test_python_depends_the_lock_does_not_pin_are_not_buildable_here(tmp_path: Path) -> None:
    directory = kernel(tmp_path)
    toml = directory / "build.toml"
    toml.write_text(toml.read_text().replace('license = "MIT"', 'license = "MIT"\npython-depends = ["einops"]'))
    unpinned = run(deps_env(tmp_path, {"loader": ["kernels"]}), "--json", "--system", "x86_64-linux", str(directory))
    assert unpinned.returncode == 0, unpinned.stderr
    data = json.loads(unpinned.stdout)
    assert [(d["name"], d["local"]) for d in data] == [
        ("torch213-cxx11-cpu-x86_64-linux", False),
        ("torch213-cxx11-cu130-x86_64-linux", False),
    ]
    assert {d["why_not_here"] for d in data} == {
        "build.toml python-depends einops: not pinned for the import check "
        "(requests.python.importCheck of the toolchain lock pins: )"
    }
    assert "(2 in the bundle, 0 buildable here)" in unpinned.stderr
    pinned = run(deps_env(tmp_path, {"loader": ["kernels"], "einops": ["einops"]}), "--json", "--system", "x86_64-linux", str(directory))
    assert [(d["local"], "why_not_here" in d) for d in json.loads(pinned.stdout)] == [(True, False), (True, False)]


def test_a_cpp_dependency_nothing_provides_blocks_only_its_backend(tmp_path: Path) -> None:
    directory = kernel(tmp_path)
    toml = directory / "build.toml"
    toml.write_text(toml.read_text().replace('depends = ["torch"]\nsrc = ["relu.cu"]', 'depends = ["torch", "cutlass_4_5"]\nsrc = ["relu.cu"]'))
    done = run(deps_env(tmp_path, {}), "--system", "x86_64-linux", str(directory))
    assert done.returncode == 0, done.stderr
    rows = {line.split(None, 3)[0]: line.split(None, 3)[2:] for line in done.stdout.splitlines()}
    assert rows["torch213-cxx11-cpu-x86_64-linux"] == ["buildable-here"]
    state, why = rows["torch213-cxx11-cu130-x86_64-linux"]
    assert state == "not-here:" and why.startswith("[kernel.relu_cuda] depends on cutlass_4_5: CUTLASS 4.5 has no nvidia-cutlass wheel")
    assert "(2 in the bundle, 1 buildable here)" in done.stderr


def test_explain_reasons(tmp_path: Path, env) -> None:
    directory = kernel(tmp_path, 'minver = "2.12"\n[torch.stable-abi]\ncuda = "2.11"\n')
    done = run(env, "--system", "x86_64-linux", "--explain", str(directory))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "out  torch 2.11 cpu x86_64-linux: torch 2.11 < [torch].minver 2.12" in out
    assert "out  torch 2.12 cuda 12.6 x86_64-linux: stable ABI: superseded by torch 2.13" in out
    assert "in   torch 2.13 cuda 12.6 x86_64-linux -> torch-stable-abi211-cu126-x86_64-linux" in out
    done = run(env, "--system", "x86_64-linux", "--explain", "--json", str(directory))
    data = json.loads(done.stdout)
    assert [v["name"] for v in data["variants"]] == [
        "torch212-cxx11-cpu-x86_64-linux",
        "torch213-cxx11-cpu-x86_64-linux",
        "torch-stable-abi211-cu126-x86_64-linux",
    ]
    assert len(data["build_sets"]) == 5
    assert data["build_sets"][0] == {
        "build_set": "torch 2.11 cpu x86_64-linux",
        "included": False,
        "variant": None,
        "reason": "torch 2.11 < [torch].minver 2.12",
    }


def test_default_system_is_this_machine(tmp_path: Path, env) -> None:
    from kernel_builder.variants.buildsets import current_system

    done = run(env, "--json", str(kernel(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert {d["system"] for d in json.loads(done.stdout)} <= {current_system()}
    assert f"for {current_system()}" in done.stderr


def test_unknown_system(tmp_path: Path, env) -> None:
    done = run(env, "--system", "riscv64-linux", str(kernel(tmp_path)))
    assert done.returncode == 2
    assert "unknown system 'riscv64-linux'" in done.stderr and "x86_64-linux" in done.stderr


def test_missing_build_toml(tmp_path: Path, env) -> None:
    done = run(env, str(tmp_path))
    assert done.returncode == 3
    assert "build.toml" in done.stderr


def test_real_example_and_no_heavy_imports(repo_root: Path) -> None:
    code = (
        "import sys\n"
        "from kernel_builder.cli import main\n"
        "try:\n"
        f"    main(['list-variants', '--system', 'all', '--json', {str(repo_root / 'examples' / 'relu')!r}])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "heavy = [m for m in ('torch', 'huggingface_hub') if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stderr
    names = [d["name"] for d in json.loads(done.stdout)]
    assert "torch214-cxx11-cu130-x86_64-linux" in names and "torch213-cxx11-cpu-x86_64-linux" in names
