"""kernels.lock for kernel-depends: upstream's NixKernelLocks format (checked against PyPI
kernels' parser), located errors for a malformed file, and the fix named when build.toml
and the lock disagree. The Hub + Nix path is tests/nix/test_nix_kernel_deps.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernel_builder.config.model import KernelDependency
from kernel_builder.errors import ConfigError
from kernel_builder.flake.kernel_deps import store_name
from kernel_builder.flake.kernel_deps_lock import LockedDependency, dumps, loads, locked_for

COMMIT = "d649efb56fb249ac8f7a57fa1866728ad0c60e52"
HASH = "sha256-1CM0MGEOCqqnYV989jcUANEbiB727JftjXTdQVUHPwk="
RELU = KernelDependency("kernels-community/relu", version=1)
PINNED = KernelDependency("acme/pinned", revision="main")


def test_the_file_is_upstreams_format_both_ways() -> None:
    from kernels._rust import NixKernelLocks  # the oracle: PyPI kernels 0.19.1

    text = dumps([LockedDependency(RELU, COMMIT, HASH), LockedDependency(PINNED, COMMIT, HASH)])
    theirs = NixKernelLocks.from_json(text)
    assert json.loads(theirs.to_json()) == json.loads(text)
    assert set(loads(theirs.to_json(), Path("kernels.lock"))) == {
        LockedDependency(RELU, COMMIT, HASH), LockedDependency(PINNED, COMMIT, HASH)}


@pytest.mark.parametrize(("text", "where"), [
    ("{", "line 1:2"),
    ("{}", "top level"),
    ('[{"dependency": {"repo-id": "a/b", "version": 1}}]', "[0]"),
    ('[{"dependency": {"repo-id": "a/b"}, "lock": {"commit": "%s", "hash": "%s"}}]' % (COMMIT, HASH), "[0].dependency"),
    ('[{"dependency": {"repo-id": "a/b", "version": 1}, "lock": {"commit": "abc", "hash": "%s"}}]' % HASH, "[0].lock.commit"),
    ('[{"dependency": {"repo-id": "a/b", "version": 1}, "lock": {"commit": "%s", "hash": "md5-x"}}]' % COMMIT, "[0].lock.hash"),
])
def test_a_malformed_lock_is_located(text: str, where: str) -> None:
    with pytest.raises(ConfigError) as err:
        loads(text, Path("/k/kernels.lock"))
    assert err.value.message.startswith(f"/k/kernels.lock: {where}: ")
    assert "kernel-builder lock-kernel-deps" in (err.value.hint or "")


def test_unlocked_missing_and_stale_dependencies_name_the_fix() -> None:
    lock, toml = Path("/k/kernels.lock"), Path("/k/build.toml")
    assert locked_for((), None, lock, toml) == ()
    with pytest.raises(ConfigError, match=r"^/k/build.toml: kernel-depends: 1 dependency is not locked"):
        locked_for((RELU,), None, lock, toml)
    with pytest.raises(ConfigError, match=r"not locked in /k/kernels.lock: acme/pinned \(revision main\)") as err:
        locked_for((RELU, PINNED), (LockedDependency(RELU, COMMIT, HASH),), lock, toml)
    assert err.value.hint == "run `kernel-builder lock-kernel-deps` in the kernel directory"
    bumped = KernelDependency("kernels-community/relu", version=2)
    with pytest.raises(ConfigError, match="no longer declares"):
        locked_for((bumped,), (LockedDependency(bumped, COMMIT, HASH), LockedDependency(RELU, COMMIT, HASH)), lock, toml)
    assert locked_for((RELU,), (LockedDependency(RELU, COMMIT, HASH),), lock, toml) == (LockedDependency(RELU, COMMIT, HASH),)


def test_store_names_are_valid_and_distinct_per_commit() -> None:
    name = store_name(KernelDependency("org/we ird~name", version=1), COMMIT)
    assert name == "kernel-dep-org--we-ird-name-d649efb56fb2"
    assert store_name(RELU, COMMIT) != store_name(RELU, "0" * 40)
