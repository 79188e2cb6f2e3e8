"""A new build set is a data change: edit the lock's requests, run `toolchain lock` with a
pip that reaches the torch build's index, `toolchain fetch`, and Nix builds with it.

The index here is a local directory (`PIP_FIND_LINKS`, `PIP_NO_INDEX`: what a maintainer's
pip configuration would say for the PyTorch index) holding a fake but installable torch
2.11.0 wheel and the other wheels the lock resolves (copied from the store, where `.ci/setup`
put them). Nothing in kernel-builder's code changes: the test edits only a snapshot's
`nix/toolchain-lock.json`, then checks the lock, the fetch, `list-variants`, the Nix
derivation graph of relu's torch 2.11 variant, and the environment Nix builds from the wheel.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.toolchain.pinned.lockfile import fixed_output_path, load_lock, store_name
from nix_support import EXAMPLES, commit_all, kernel_builder, snapshot_builder

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

NEW_SET = "torch2.11-cpu"
VARIANT = "torch211-cxx11-cpu-x86_64-linux"
HOST_PATH = re.compile(r"(?:^|[\s:=\"'])(/(?:usr|bin|sbin|lib|lib64|root|home|tmp|opt|etc|var|work|srv|mnt|run)(?:/|$|[\s:]))")


def fake_torch_wheel(directory: Path, salt: str) -> Path:
    """torch 2.11.0 as a pure wheel pip installs: a package and valid dist-info (RECORD hashes)."""
    files = {
        "torch/__init__.py": f'__version__ = "2.11.0"\n# {salt}\n',
        "torch-2.11.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0\n",
        "torch-2.11.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: kernel-builder-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files["torch-2.11.0.dist-info/RECORD"] = "\n".join(record + ["torch-2.11.0.dist-info/RECORD,,"]) + "\n"
    wheel = directory / "torch-2.11.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), text)
    return wheel


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A snapshot of kernel-builder whose lock asks for torch 2.11 from a local index."""
    root = tmp_path_factory.mktemp("data-change")
    builder = snapshot_builder(root / "builder")
    lock_file = builder / "nix" / "toolchain-lock.json"
    current = load_lock(lock_file)
    index = root / "index"
    index.mkdir()
    data = json.loads(lock_file.read_text())
    requests = data["requests"]
    torch_envs = set(requests["buildSets"].values())
    kept = {name: specs for name, specs in requests["python"]["environments"].items() if name not in torch_envs}
    # Every wheel the other requests resolve to (the other environments, C++ headers, test and
    # import-check sets; ninja from torch2.14's), as a mirror would hold them: no real torch.
    torch_groups = {f"env:{name}" for name in torch_envs}
    # (this machine's groups only: a native host's, `aarch64-linux/...`, are not fetched here)
    wanted = {k for group, keys in current.groups.items() if group not in torch_groups and "/" not in group for k in keys}
    wanted |= {k for k in current.groups["env:torch2.14"] if current.artifacts[k].name == "ninja"}
    for key in sorted(wanted):
        artifact = current.artifacts[key]
        if artifact.kind != "wheel" or artifact.name in ("torch", "triton"):
            continue
        assert Path(artifact.store_path).is_file(), f"{artifact.file} is not in the store: run `kernel-builder toolchain fetch`"
        (index / artifact.file).write_bytes(Path(artifact.store_path).read_bytes())
    wheel = fake_torch_wheel(index, f"salt {time.time_ns()}")  # a new file each run: fetch must add it
    # The data change: a new environment and the build set it serves (the torch ones go, so
    # that the index needs no torch but the fake one).
    requests["python"]["environments"] = kept | {"torch2.11": ["torch==2.11.0", "ninja"]}
    requests["buildSets"] = {NEW_SET: "torch2.11"}
    requests["cuda"] = {}
    requests.pop("targets", None)  # the cross builds' sets are torch ones, gone here
    requests.pop("hosts", None)  # so are a native host's (its groups need its own wheels)
    data.pop("hostSeeds", None)
    lock_file.write_text(json.dumps(data, indent=1) + "\n")
    env = dict(os.environ)
    env |= {
        "KERNEL_BUILDER_ROOT": str(builder),
        "KERNEL_BUILDER_TOOLCHAIN_LOCK": str(lock_file),
        "KERNEL_BUILDER_STATE_DIR": str(root / "state"),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(index),
    }
    return {"root": root, "builder": builder, "lock": lock_file, "wheel": wheel, "env": env}


@pytest.fixture(scope="module")
def locked(world: dict) -> dict:
    kernel_builder("toolchain", "lock", "--lock-file", str(world["lock"]), env=world["env"])
    return world


def test_lock_pins_the_wheel_from_the_local_index(locked: dict) -> None:
    lock = load_lock(locked["lock"])
    assert lock.build_sets == {NEW_SET: "torch2.11"}
    torch = [lock.artifacts[k] for k in lock.groups["env:torch2.11"] if lock.artifacts[k].name == "torch"]
    assert len(torch) == 1
    assert torch[0].version == "2.11.0" and torch[0].file == locked["wheel"].name
    assert torch[0].sha256 == hashlib.sha256(locked["wheel"].read_bytes()).hexdigest()
    assert "ninja" in {lock.artifacts[k].name for k in lock.groups["env:torch2.11"]}


@pytest.fixture(scope="module")
def fetched(locked: dict) -> dict:
    done = kernel_builder("toolchain", "fetch", "--build-set", NEW_SET, "--json", env=locked["env"])
    return locked | {"report": json.loads(done.stdout)}


def test_fetch_adds_the_new_wheel_and_list_variants_calls_the_set_buildable(fetched: dict) -> None:
    locked, report = fetched, fetched["report"]
    sha = hashlib.sha256(locked["wheel"].read_bytes()).hexdigest()
    wheel_path = fixed_output_path(store_name(locked["wheel"].name), sha, recursive=False)
    assert report["added"] == [wheel_path], report["added"]
    assert report["added_bytes"] == locked["wheel"].stat().st_size  # what the summary reports
    assert subprocess.run(["nix-store", "--check-validity", wheel_path]).returncode == 0
    listed = kernel_builder("list-variants", "--system", "x86_64-linux", "--json", str(EXAMPLES / "relu"), env=locked["env"])
    by_name = {v["name"]: v for v in json.loads(listed.stdout)}
    assert by_name[VARIANT]["local"] is True and "why_not_here" not in by_name[VARIANT]
    assert by_name["torch214-cxx11-cpu-x86_64-linux"]["local"] is False  # not in this lock


def test_nix_derivation_graph_builds_the_environment_from_the_new_wheel(fetched: dict, tmp_path: Path) -> None:
    locked = fetched  # the wheel is in the store: the environment builds offline
    builder = locked["builder"]
    commit_all(builder, init=not (builder / ".git").exists())
    kernel = tmp_path / "relu"
    subprocess.run(["cp", "-r", str(EXAMPLES / "relu"), str(kernel)], check=True)
    (kernel / "flake.nix").write_text(
        '{\n  inputs.kernel-builder.url = "git+file://%s";\n'
        "  outputs = { self, kernel-builder }:\n"
        "    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };\n}\n" % builder
    )
    commit_all(kernel, init=True)
    env = nix.nix_env({k: v for k, v in locked["env"].items() if not k.startswith("KERNEL_BUILDER_")}, sandbox=True)

    def run_nix(*args: str) -> str:
        done = subprocess.run(["nix", *args, "--no-write-lock-file"], cwd=kernel, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-4000:]
        return done.stdout

    table = {v["name"]: v for v in json.loads(run_nix("eval", "--json", ".#legacyPackages.x86_64-linux.variantTable"))}
    assert table[VARIANT]["buildable"] is True and table[VARIANT]["toolchainProvider"] == "pinned"
    assert table["torch214-cxx11-cpu-x86_64-linux"]["buildable"] is False
    # the toolchain's environment (the variant's own graph needs a plan, which the fake
    # torch cannot make: evaluating it runs CMake with that torch, see docs/architecture.md)
    shown = json.loads(run_nix("show-derivation", "-r", f".#legacyPackages.x86_64-linux.pkgs.{VARIANT}.env"))
    sha = hashlib.sha256(locked["wheel"].read_bytes()).hexdigest()
    wheel_path = fixed_output_path(store_name(locked["wheel"].name), sha, recursive=False)
    envs = [drv for drv, data in shown.items() if data["env"].get("name") == "kb-env-torch2.11"]
    assert len(envs) == 1 and wheel_path in shown[envs[0]]["env"]["wheels"].split()
    for drv, data in shown.items():
        for value in [data["builder"], *data["args"], *data["env"].values()]:
            match = HOST_PATH.search(value)
            assert match is None, f"{drv} names host path {match.group(1)!r}"
    realised = subprocess.run(["nix-store", "--realise", envs[0]], env=env, capture_output=True, text=True)
    assert realised.returncode == 0, realised.stderr[-4000:]
    python = realised.stdout.strip() + "/bin/python"
    assert table[VARIANT]["toolchainPython"] == python
    version = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == "2.11.0"
