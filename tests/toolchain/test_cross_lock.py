"""Issue 26: the lock's cross targets (requests.targets) as locking, fetching and
list-variants read them: aarch64 wheel tags, foreign-architecture Debian packages, the
build sets a target serves, and what fetching a build set brings for its targets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernel_builder.errors import BuildError
from kernel_builder.toolchain.pinned.clients import apt_arch_args, pip_platform_args, wheel_machine
from kernel_builder.toolchain.pinned.lockfile import load_lock
from kernel_builder.toolchain.pinned.locking import _arch_name
from kernel_builder.toolchain.pinned.lockrequests import served_build_sets

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "nix" / "toolchain-lock.json"


def _platforms(args: list[str]) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == "--platform"]


def test_x86_64_wheel_tags_are_unchanged_and_aarch64_ones_start_at_manylinux2014() -> None:
    x86 = _platforms(pip_platform_args("3.11"))
    assert x86[0] == "manylinux_2_28_x86_64" and x86[-1] == "manylinux1_x86_64" and len(x86) == 27
    arm = _platforms(pip_platform_args("3.11", "aarch64"))
    # aarch64 wheels exist from manylinux2014 (glibc 2.17) on; nothing older names aarch64
    assert arm[0] == "manylinux_2_28_aarch64" and arm[-1] == "manylinux2014_aarch64"
    assert "manylinux_2_17_aarch64" in arm and not any("x86_64" in p or "2_16" in p for p in arm)


def test_wheel_machine_reads_the_platform_tag() -> None:
    assert wheel_machine("torch-2.13.0-cp311-cp311-manylinux_2_28_aarch64.whl") == "aarch64"
    assert wheel_machine("torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl") == "x86_64"
    assert wheel_machine("six-1.17.0-py2.py3-none-any.whl") == "x86_64"


def test_foreign_debian_architectures_are_named_for_one_call() -> None:
    assert apt_arch_args(["libc6", "bash"]) == []
    assert apt_arch_args(["libc6", "libpython3.11-dev:arm64=3.11.2-6"]) == [
        "-o", "APT::Architectures::=amd64", "-o", "APT::Architectures::=arm64"]
    assert _arch_name("libc6", "amd64") == "libc6"
    assert _arch_name("libc6-arm64-cross", "all") == "libc6-arm64-cross"
    assert _arch_name("libpython3.11-dev", "arm64") == "libpython3.11-dev:arm64"


def test_the_pinned_lock_cross_builds_aarch64_cpu_and_fetches_what_it_needs() -> None:
    lock = load_lock(LOCK)
    served = served_build_sets(LOCK)
    targets = lock.requests["targets"]
    assert "aarch64-linux" in targets
    for key in targets["aarch64-linux"]["buildSets"]:
        assert ("aarch64-linux", key) in served and ("x86_64-linux", key) in served
    key = next(iter(targets["aarch64-linux"]["buildSets"]))
    files = {a.file for a in lock.artifacts_for([key])}
    # the target's torch, the cross compiler, the arm64 sysroot and Python headers
    assert any(f.startswith("torch-") and f.endswith("_aarch64.whl") for f in files)
    assert any(f.startswith("g++-12-aarch64-linux-gnu_") for f in files)
    assert "libc6-dev-arm64-cross" in {a.name for a in lock.artifacts_for([key])}
    assert any(a.name == "libpython3.11-dev:arm64" and a.file.endswith("_arm64.deb") for a in lock.artifacts_for([key]))


def test_a_target_build_set_not_pinned_natively_is_not_served(tmp_path: Path) -> None:
    data = json.loads(LOCK.read_text())
    data["requests"]["buildSets"] = {k: v for k, v in data["requests"]["buildSets"].items() if not k.endswith("-cpu")}
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(data))
    served = served_build_sets(path)
    assert ("aarch64-linux", "torch2.13-cpu") not in served
    assert ("aarch64-linux", "torch2.13-cuda13.0") in served


def test_the_driver_reads_its_cross_target() -> None:
    from kernel_builder.driver.job import ENV, Target

    assert Target.from_environ({}).platform is None
    assert Target.from_environ({ENV.TARGET_SYSTEM: "aarch64-linux"}).platform.system == "aarch64-linux"
    with pytest.raises(BuildError, match="not a Nix system"):
        Target.from_environ({ENV.TARGET_SYSTEM: "aarch64"})


def test_an_unpinned_aarch64_build_set_says_what_the_lock_cross_builds() -> None:
    from kernel_builder.toolchain.pinned.availability import why_not_pinned

    reason = why_not_pinned("2.11", "cpu", None, "aarch64-linux", lock=LOCK)
    assert ("cross-builds aarch64-linux variants of torch2.12-cpu, torch2.12-cuda13.0, torch2.13-cpu, "
            "torch2.13-cuda13.0, torch2.14-cpu, torch2.14-cuda13.0, torch2.15-cpu, torch2.15-cuda13.2 only") in reason
    assert "requests.targets.aarch64-linux" in reason
    assert "pins x86_64-linux toolchains only" in why_not_pinned("2.13", "cpu", None, "aarch64-darwin", lock=LOCK)


def test_fetching_a_cross_built_set_brings_its_emulated_check_environment() -> None:
    """qemu, the arm64 CPython and what the aarch64 torch loads come with the build set."""
    lock = load_lock(LOCK)
    emulation = lock.requests["targets"]["aarch64-linux"]["emulation"]
    assert {f"env:torch2.{minor}-aarch64-emulated" for minor in (12, 13, 14, 15)} <= set(lock.groups)
    artifacts = lock.artifacts_for(["torch2.13-cpu"])
    names = {a.name for a in artifacts}
    assert {"qemu-user-static", "python3.11-minimal:arm64", "libpython3.11-stdlib:arm64"} <= names
    files = {a.file for a in artifacts}
    assert any(f.startswith("nvidia_cudnn_cu13-") and f.endswith("_aarch64.whl") for f in files)
    assert any(f.startswith("kernels-") and f.endswith("_aarch64.whl") for f in files)
    # the stand-in is for the one library no index serves for aarch64
    assert emulation["standIns"] == {f"torch2.{minor}-aarch64": ["libcupti.so.13"] for minor in (12, 13, 14, 15)}
    assert not any(f.startswith("nvidia_cuda_cupti-") and f.endswith("_aarch64.whl") for f in files)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: e.update(debianGroups=["nope"]), r"emulation\.debianGroups\[0\]: unknown group 'nope'"),
        (lambda e: e["environments"].update({"torch9-aarch64": []}), r"emulation\.environments\.torch9-aarch64: unknown environment"),
        (lambda e: e.update(standIns={"torch2.13-aarch64": "libcupti.so.13"}), r"emulation\.standIns\.torch2\.13-aarch64: expected an array"),
        (lambda e: e.update(environments=[]), r"emulation\.environments: expected an object"),
        (lambda e: e.update(loadOnly={"torch9-aarch64": []}), r"emulation\.loadOnly\.torch9-aarch64: unknown environment"),
    ],
)
def test_a_broken_emulation_entry_is_a_located_error(tmp_path: Path, change, message: str) -> None:
    from kernel_builder.errors import ConfigError

    data = json.loads(LOCK.read_text())
    change(data["requests"]["targets"]["aarch64-linux"]["emulation"])
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=message) as caught:
        load_lock(path)
    assert str(path) in caught.value.message



def test_the_environments_install_their_wheels_for_exactly_the_locked_platform_tags() -> None:
    """parts.nix hands pip --target the platform tags of the wheels the lock pinned (the
    lock chose them by pip_platform_args' rule), so every locked wheel installs: nccl's
    aarch64 wheels are manylinux_2_18, a tag a fixed list had left out."""
    from kernel_builder import nix

    lock = load_lock(LOCK)
    parts = REPO / "nix" / "toolchains" / "pinned" / "parts.nix"
    cross = f'(import {parts} {{ system = "x86_64-linux"; }}).cross."aarch64-linux"'
    seen: set[str] = set()
    for name in lock.requests["targets"]["aarch64-linux"]["emulation"]["environments"]:
        keys = lock.groups[f"env:{name}"] + lock.groups[f"env:{name}-emulated"]
        wheels = [lock.artifacts[k].file for k in keys if lock.artifacts[k].kind == "wheel"]
        tags = {t for f in wheels for t in f.removesuffix(".whl").rsplit("-", 1)[1].split(".")} - {"any"}
        done = nix.run_nix(["eval", "--raw", "--impure", "--expr", f'{cross}.emulated."{name}".pipPlatforms'])
        assert set(_platforms(done.stdout.split())) == tags
        assert tags <= set(_platforms(pip_platform_args("3.11", "aarch64")))
        seen |= tags
    assert "manylinux_2_18_aarch64" in seen  # nccl's, for torch 2.12 and 2.14


def test_an_emulated_check_environment_agrees_with_its_cross_environment() -> None:
    """The emulated group is installed beside its cross environment by one pip call: a project
    both have must have one version (torch 2.15's emulated group once took the lock's
    cccl 13.0.85 beside the environment's 13.2.86, and its build failed)."""
    from kernel_builder.toolchain.pinned.lockfile import emulated_group

    lock = load_lock(LOCK)
    checked = 0
    for target in lock.requests["targets"].values():
        for env in target["emulation"]["environments"]:
            own = {lock.artifacts[k].name.lower(): lock.artifacts[k].version for k in lock.groups[f"env:{env}"]}
            emulated = {lock.artifacts[k].name.lower(): lock.artifacts[k].version for k in lock.groups[emulated_group(env)]}
            assert {n: (v, emulated[n]) for n, v in own.items() if n in emulated and emulated[n] != v} == {}, env
            checked += 1
    assert checked >= 4
