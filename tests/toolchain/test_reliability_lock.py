"""Issue 24, finding 6: a hand-edited toolchain lock.

`seed` as a string, `seed` without `name`, `artifacts`/`groups`/`buildSets` as lists gave
tracebacks; a build set naming an unknown environment fetched nothing and exited 0;
`"schema": 2` was refused by Python but built by plain Nix; `groups.runtime = "libc6"` said
"unknown artifact 'l'". Now every one is an error naming the lock file, the key path and
the fix, in Python before anything is fetched or built, and in Nix for the schema.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from kernel_builder.errors import ConfigError, NixError
from kernel_builder import nix
from kernel_builder.toolchain.pinned.lockfile import load_lock
from nix_support import FLAKE, REPO, copy_kernel, snapshot_builder

LOCK = json.loads((REPO / "nix" / "toolchain-lock.json").read_text())


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value
    return edit


def _drop(path: tuple[str, ...]) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        for key in path[:-1]:
            data = data[key]
        del data[path[-1]]
    return edit


EDITS = {
    "seed-string": (_set(("seed",), "busybox"), "seed: expected an object"),
    "seed-no-name": (_drop(("seed", "name")), "seed: missing `name`"),
    "artifacts-list": (_set(("artifacts",), []), "artifacts: expected an object of artifact records, got an array"),
    "groups-list": (_set(("groups",), []), "groups: expected an object of artifact-key arrays, got an array"),
    "buildsets-list": (_set(("requests", "buildSets"), []), "requests.buildSets: expected an object"),
    "group-string": (_set(("groups", "runtime"), "libc6"), "groups.runtime: expected an array of artifact keys, got a string"),
    "unknown-env": (_set(("requests", "buildSets", "torch2.13-cpu"), "torch9.9"), "requests.buildSets.torch2.13-cpu: unknown environment 'torch9.9'"),
    "schema-2": (_set(("schema",), 2), "schema: expected 1, got 2"),
    "target-machine": (_set(("requests", "targets", "aarch64-linux", "machine"), "riscv64"),
                       "requests.targets.aarch64-linux.machine: expected one of aarch64, got 'riscv64'"),
    "target-unknown-env": (_set(("requests", "targets", "aarch64-linux", "buildSets", "torch2.13-cpu"), "torch9.9"),
                           "requests.targets.aarch64-linux.buildSets.torch2.13-cpu: unknown environment 'torch9.9'"),
    "target-not-native": (_set(("requests", "targets", "aarch64-linux", "buildSets", "torch9.9-cpu"), "torch2.13-aarch64"),
                          "requests.targets.aarch64-linux.buildSets.torch9.9-cpu: torch9.9-cpu is not pinned for this system"),
    "target-group": (_set(("requests", "targets", "aarch64-linux", "debianGroups"), ["cross-riscv"]),
                     "requests.targets.aarch64-linux.debianGroups[0]: unknown group 'cross-riscv'"),
    "artifact-sha-number": (lambda d: _set(("artifacts", next(iter(d["artifacts"])), "sha256"), 5)(d), "sha256: expected a string, got a number"),
}


def _edited(tmp_path: Path, name: str) -> Path:
    data = json.loads(json.dumps(LOCK))
    EDITS[name][0](data)
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(data, indent=1))
    return path


@pytest.mark.parametrize("name", sorted(EDITS))
def test_a_hand_edited_lock_names_file_key_and_fix(tmp_path: Path, name: str) -> None:
    path = _edited(tmp_path, name)
    with pytest.raises(ConfigError) as info:
        load_lock(path)
    assert str(path) in str(info.value) and EDITS[name][1] in str(info.value), str(info.value)
    assert "kernel-builder toolchain lock" in str(info.value.hint)


@pytest.mark.parametrize("name", ["seed-string", "unknown-env", "groups-list"])
def test_toolchain_fetch_refuses_it_before_fetching(tmp_path: Path, name: str) -> None:
    path = _edited(tmp_path, name)
    env = {**os.environ, "KERNEL_BUILDER_TOOLCHAIN_LOCK": str(path), "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-m", "kernel_builder", "toolchain", "fetch", "--build-set", "torch2.13-cpu"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 3, done.stderr
    assert str(path) in done.stderr and EDITS[name][1] in done.stderr and "Traceback" not in done.stderr


def test_an_unresolved_environment_is_not_fetched_silently(tmp_path: Path) -> None:
    data = json.loads(json.dumps(LOCK))
    data["requests"]["python"]["environments"]["torch9.9"] = ["torch==9.9"]
    data["requests"]["buildSets"]["torch9.9-cpu"] = "torch9.9"
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"requests\.buildSets\.torch9\.9-cpu: environment 'torch9\.9' has no resolved artifacts"):
        load_lock(path).artifacts_for(["torch9.9-cpu"])


def test_unreadable_locks(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"schema": 1,\n "seed": }')
    with pytest.raises(ConfigError, match=r"bad\.json:2:10: not valid JSON"):
        load_lock(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="is a character device"):
        load_lock(Path("/dev/zero"))


def test_build_refuses_a_bad_builder_lock_before_nix(tmp_path: Path) -> None:
    root = snapshot_builder(tmp_path / "builder")
    lock = root / "nix" / "toolchain-lock.json"
    data = json.loads(lock.read_text())
    del data["seed"]["name"]
    lock.write_text(json.dumps(data))
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    env = {**os.environ, "KERNEL_BUILDER_ROOT": str(root), "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-m", "kernel_builder", "build", str(kernel)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 3, done.stderr
    assert f"{lock}: seed: missing `name`" in done.stderr and "attribute 'name' missing" not in done.stderr


def test_plain_nix_refuses_an_unknown_schema_naming_the_file(tmp_path: Path) -> None:
    root = snapshot_builder(tmp_path / "builder")
    lock = root / "nix" / "toolchain-lock.json"
    lock.write_text(lock.read_text().replace('"schema": 1', '"schema": 2', 1))
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    (kernel / "flake.nix").write_text(FLAKE.replace(str(REPO), str(root)))
    with pytest.raises(NixError) as info:
        nix.run_nix(["eval", "--json", "--no-write-lock-file", f"path:{kernel}#variantTable"])
    assert "toolchain-lock.json" in str(info.value) and "schema 2 is not supported" in str(info.value)
