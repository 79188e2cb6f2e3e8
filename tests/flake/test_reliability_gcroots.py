"""Issue 45, finding 16: every kernel directory has its own build GC-root directory.

The roots directory was the kernel path with ``/`` replaced by ``_``: ``/tmp/r4/relu`` and
``/tmp/r4_relu`` shared ``tmp_r4_relu``, so building one un-rooted the other's outputs (and a
kernel at ``/toolchain`` would have shared the toolchain's roots). ``_gcroot`` only makes
directories and links, so no store is needed: the ``result`` links are planted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_builder.flake import flake_build


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_BUILDER_STATE_DIR", str(tmp_path / "state"))


def _built(kernel: Path) -> Path:
    """What a build leaves: its result link in the kernel's roots directory."""
    link = flake_build._gcroot(kernel)
    link.symlink_to(f"/nix/store/{'a' * 32}-{kernel.name}-variants")
    return link


def test_two_kernels_whose_paths_differ_only_in_slashes_keep_their_own_roots(tmp_path: Path) -> None:
    one, two = tmp_path / "r4" / "relu", tmp_path / "r4_relu"
    one.mkdir(parents=True)
    two.mkdir()
    first = _built(one)
    second = _built(two)
    assert first.parent != second.parent
    assert first.is_symlink() and second.is_symlink()  # building the second kept the first rooted
    assert (first.parent / "kernel-dir").read_text() == str(one.resolve())


def test_a_kernel_named_toolchain_does_not_share_the_toolchain_roots(tmp_path: Path) -> None:
    kernel = tmp_path / "toolchain"
    kernel.mkdir()
    link = _built(kernel)
    assert link.parent.name != "toolchain" and link.parent.name.startswith("toolchain-")


def test_roots_under_the_old_name_are_dropped_by_the_next_build(tmp_path: Path) -> None:
    kernel = tmp_path / "r4" / "relu"
    kernel.mkdir(parents=True)
    old = tmp_path / "state" / "gcroots" / kernel.as_posix().strip("/").replace("/", "_")
    old.mkdir(parents=True)
    (old / "kernel-dir").write_text(str(kernel.resolve()))
    (old / "result").symlink_to(f"/nix/store/{'b' * 32}-old")
    other = tmp_path / "other"
    other.mkdir()
    _built(other)
    assert (old / "result").is_symlink()  # another kernel's build leaves it
    link = _built(kernel)
    assert not old.exists() and link.is_symlink()
