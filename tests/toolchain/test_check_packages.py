"""The kernel-test package set of the lock (requests.python.test -> groups test:<name>)."""

from __future__ import annotations

import json

import pytest

from kernel_builder.toolchain.pinned.lockfile import load_lock, lock_path
from kernel_builder.toolchain.pinned.lockrequests import check_package_name, check_packages


@pytest.mark.parametrize(
    ("requirement", "name"),
    [("einops", "einops"), ("Huggingface_Hub>=1.0", "huggingface-hub"), ("py.cpuinfo", "py-cpuinfo"), (" pytest ==9.2", "pytest")],
)
def test_names_are_normalized_as_pypi_does(requirement: str, name: str) -> None:
    assert check_package_name(requirement) == name


def test_a_bad_requirement_is_refused() -> None:
    with pytest.raises(ValueError, match="not a requirement"):
        check_package_name(">=1.0")


def test_the_lock_resolves_every_test_request_and_nothing_else() -> None:
    """Each request has its group (with the package's own wheel in it), and no group is
    left from a removed request: the lock was regenerated after the requests changed."""
    lock = load_lock()
    names = check_packages()
    assert {"pytest", "numpy", "kernels"} <= set(names)  # every kernel-test run needs these
    groups = sorted(g.removeprefix("test:") for g in lock.groups if g.startswith("test:"))
    assert groups == names
    for name in names:
        projects = {lock.artifacts[key].name.lower().replace("_", "-") for key in lock.groups[f"test:{name}"]}
        assert name in projects


def test_the_test_requests_are_fetched_with_every_build_set() -> None:
    """`toolchain fetch --build-set KEY` seeds the test packages too (offline test runs)."""
    lock = load_lock()
    key = next(iter(lock.build_sets))
    wanted = {a.key for a in lock.artifacts_for([key])}
    assert all(k in wanted for g, keys in lock.groups.items() if g.startswith("test:") for k in keys)
    assert json.loads(lock_path().read_text())["requests"]["python"]["test"]
