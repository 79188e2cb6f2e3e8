"""The lock's native hosts (`requests.hosts.<system>`, issue 44): `toolchain lock --group
<system>/<group>` resolves a host's Debian group for its architecture (a real `apt-cache show`
/ `apt-get download --print-uris` against this machine's arm64 package lists, as .ci/setup
fetches them) and its seed, keeping everything else; a malformed host request is a located
error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kernel_builder.errors import ConfigError
from kernel_builder.toolchain.pinned.lockfile import load_lock
from kernel_builder.toolchain.pinned.locking import relock

LOCK = Path(__file__).resolve().parents[2] / "nix" / "toolchain-lock.json"
HOST = "aarch64-linux"


def _copy(tmp_path: Path) -> tuple[Path, dict]:
    copy = tmp_path / "toolchain-lock.json"
    shutil.copyfile(LOCK, copy)
    return copy, json.loads(LOCK.read_text())


@pytest.mark.skipif(shutil.which("apt-cache") is None, reason="needs apt (Debian)")
def test_a_hosts_debian_groups_and_seed_relock_to_the_same_records(tmp_path: Path) -> None:
    path, before = _copy(tmp_path)
    data = json.loads(path.read_text())
    names = [f"{HOST}/seed", f"{HOST}/tools", f"{HOST}/python"]
    for name in names:
        del data["groups"][name]
    del data["hostSeeds"]
    path.write_text(json.dumps(data, indent=1) + "\n")
    relock(path, only_groups=tuple(names))
    after = json.loads(path.read_text())
    assert after["groups"] == before["groups"]
    assert after["artifacts"] == before["artifacts"]
    assert after["hostSeeds"] == before["hostSeeds"]  # the arm64 busybox, taken out of its .deb again
    assert after["seed"] == before["seed"]
    # arm64 packages by name:arm64, the architecture-free one plainly (one file for both machines)
    python = [after["artifacts"][k] for k in after["groups"][f"{HOST}/python"]]
    assert {a["name"] for a in python} >= {"python3.11-minimal:arm64", "media-types"}
    assert [a["file"] for a in python if a["name"] == "media-types"] == [
        after["artifacts"][k]["file"] for k in after["groups"]["python"] if k.startswith("media-types")]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda h: h.update(machine="riscv64"), "requests.hosts.aarch64-linux.machine: expected one of aarch64, got 'riscv64'"),
    (lambda h: h["debian"].pop("architecture"), "requests.hosts.aarch64-linux.debian.architecture: expected a Debian architecture"),
    (lambda h: h["seed"].update(group="nope"), "requests.hosts.aarch64-linux.seed.group: unknown group 'nope'"),
    (lambda h: h["buildSets"].update({"torch2.13-cpu": "torch9.9"}),
     "requests.hosts.aarch64-linux.buildSets.torch2.13-cpu: unknown environment 'torch9.9'"),
    (lambda h: h["cuda"].update({"torch9.9": "13.0"}), "requests.hosts.aarch64-linux.cuda.torch9.9: unknown environment 'torch9.9'"),
])
def test_a_malformed_host_request_is_a_located_error(tmp_path: Path, edit, message: str) -> None:
    path, _ = _copy(tmp_path)
    data = json.loads(path.read_text())
    edit(data["requests"]["hosts"][HOST])
    path.write_text(json.dumps(data, indent=1) + "\n")
    with pytest.raises(ConfigError) as caught:
        load_lock(path)
    assert str(path) in caught.value.message and message in caught.value.message


def test_a_seed_of_no_host_is_refused(tmp_path: Path) -> None:
    path, _ = _copy(tmp_path)
    data = json.loads(path.read_text())
    data["hostSeeds"]["riscv64-linux"] = data["hostSeeds"][HOST]
    path.write_text(json.dumps(data, indent=1) + "\n")
    with pytest.raises(ConfigError, match="hostSeeds.riscv64-linux: riscv64-linux is not a host of requests.hosts"):
        load_lock(path)
