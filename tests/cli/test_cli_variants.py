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


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "build-sets.json"
    path.write_text(json.dumps(SETS))
    return {**os.environ, "KERNEL_BUILDER_BUILD_SETS": str(path)}


def kernel(tmp_path: Path, torch_extra: str = "") -> Path:
    directory = tmp_path / "relu"
    directory.mkdir(exist_ok=True)
    (directory / "build.toml").write_text(KERNEL.format(torch_extra=torch_extra))
    return directory


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernel_builder", "list-variants", *args], env=env, capture_output=True, text=True)


def test_human_output_marks_bundle(tmp_path: Path, env) -> None:
    done = run(env, "--system", "x86_64-linux", str(kernel(tmp_path)))
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert rows == [
        ["torch211-cxx11-cpu-x86_64-linux", "non-bundle"],
        ["torch212-cxx11-cpu-x86_64-linux", "bundle"],
        ["torch212-cxx11-cu126-x86_64-linux", "bundle"],
        ["torch213-cxx11-cpu-x86_64-linux", "bundle"],
        ["torch213-cxx11-cu126-x86_64-linux", "bundle"],
    ]
    assert "5 variant(s) for x86_64-linux (4 in the bundle)" in done.stderr


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


def test_bundle_only(tmp_path: Path, env) -> None:
    done = run(env, "--system", "x86_64-linux", "--bundle", "--json", str(kernel(tmp_path)))
    assert [d["name"] for d in json.loads(done.stdout)] == [
        "torch212-cxx11-cpu-x86_64-linux",
        "torch212-cxx11-cu126-x86_64-linux",
        "torch213-cxx11-cpu-x86_64-linux",
        "torch213-cxx11-cu126-x86_64-linux",
    ]


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
