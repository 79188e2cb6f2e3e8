"""Nix 2.8 (Debian 12) and Nix 2.26 (Debian 13) alike: the examples' flakes, the kernel's
flake.lock as the CLI copies it, and `toolchain fetch` into a store under another directory.
The slow tests run Debian 13's Nix from a private prefix and a private store
(`.ci/modern-nix.sh`), so the machine's Nix and /nix are never touched."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import attrs
import pytest

from kernel_builder.flake import nix
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from kernel_builder.flake.kernel_source import lock_for_copy
from kernel_builder.toolchain.pinned.fetch import download_debs, fetch
from kernel_builder.toolchain.pinned.lockfile import Artifact, load_lock
from nix_support import EXAMPLES, REPO, copy_kernel, environ_set, snapshot_builder

SYSTEM = "x86_64-linux"
TRACKED_EXAMPLES = sorted(
    Path(p).parent.name
    for p in subprocess.run(["git", "-C", str(REPO), "ls-files", "examples/*/flake.nix"], capture_output=True,
                            text=True, check=True).stdout.split()
)

# What Nix 2.26 writes for examples/relu's `inputs.kernel-builder.url = "path:../.."` (no
# narHash, a `parent`): Nix 2.8 refuses every flake command on a lock holding it.
LOCK_2_26 = {
    "nodes": {
        "kernel-builder": {
            "locked": {"path": "../..", "type": "path"},
            "original": {"path": "../..", "type": "path"},
            "parent": [],
        },
        "root": {"inputs": {"kernel-builder": "kernel-builder"}},
    },
    "root": "root",
    "version": 7,
}


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("state")
    root = snapshot_builder(tmp_path_factory.mktemp("builder"))
    with environ_set({"KERNEL_BUILDER_STATE_DIR": str(path), "KERNEL_BUILDER_ROOT": str(root)}):
        yield path


def _nix_config(extra: str) -> str:
    return "\n".join(filter(None, [os.environ.get("NIX_CONFIG", "").strip(), extra])) + "\n"


# -- the lock the CLI copies ------------------------------------------------------------


def test_lock_for_copy_drops_the_builder_input() -> None:
    assert lock_for_copy(json.dumps(LOCK_2_26).encode()) is None
    other = {"locked": {"type": "github", "owner": "o", "repo": "r", "rev": "0" * 40, "narHash": "sha256-x"},
             "original": {"type": "github", "owner": "o", "repo": "r"}}
    builder_dep = {"locked": {"type": "path", "path": "/b", "narHash": "sha256-y"}, "original": {"type": "path", "path": "/b"}}
    lock = {
        "nodes": {
            "root": {"inputs": {"kernel-builder": "kernel-builder", "extra": "extra"}},
            "kernel-builder": {**LOCK_2_26["nodes"]["kernel-builder"], "inputs": {"dep": "dep"}},
            "dep": builder_dep,
            "extra": other,
        },
        "root": "root",
        "version": 7,
    }
    kept = json.loads(lock_for_copy(json.dumps(lock).encode()) or b"null")
    assert kept == {"nodes": {"root": {"inputs": {"extra": "extra"}}, "extra": other}, "root": "root", "version": 7}
    for text in (b"not json", b"[]", b'{"nodes": {}}', json.dumps({**lock, "nodes": {**lock["nodes"], "root": {}}}).encode()):
        assert lock_for_copy(text) == text  # nothing to drop: Nix reads (and judges) it as written


def test_a_lock_written_by_nix_2_26_does_not_stop_a_build(tmp_path: Path, state: Path) -> None:
    """A kernel whose flake.lock Nix 2.26 wrote for a relative builder input: plain Nix 2.8
    refuses it, the CLI (which overrides the builder input) evaluates, and leaves it as it was."""
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    text = json.dumps(LOCK_2_26, indent=2) + "\n"
    (kernel / "flake.lock").write_text(text)
    with pytest.raises(nix.NixError, match="mutable lock"):
        nix.eval_json(f"path:{kernel}#legacyPackages.{SYSTEM}.variants",
                      flake_args=["--override-input", "kernel-builder", f"path:{REPO}", "--no-write-lock-file"])
    prepared = prepare_kernel_flake(kernel)
    assert "torch213-cxx11-cpu-x86_64-linux" in nix.eval_json(prepared.installable("variants"), flake_args=prepared.flake_args)
    assert not (Path(prepared.ref.removeprefix("path:")) / "flake.lock").exists()
    assert (kernel / "flake.lock").read_text() == text


# -- the examples' flakes ---------------------------------------------------------------


@pytest.mark.parametrize("name", TRACKED_EXAMPLES)
def test_example_flake_lists_every_output_of_the_library(name: str, state: Path) -> None:
    """The examples spell their output names out (Nix 2.26 needs that for a relative input):
    the names must be exactly the library's, so no output is hidden."""
    text = (EXAMPLES / name / "flake.nix").read_text()
    listed = re.search(r"inherit \(kernel\) ([\w ]+);", text)
    assert listed, f"examples/{name}/flake.nix does not spell its outputs out: Nix 2.26 recurses forever on it"
    builder = Path(os.environ["KERNEL_BUILDER_ROOT"])
    expr = (f'builtins.attrNames ((builtins.getFlake "path:{builder}").lib.genKernelFlakeOutputs '
            f'{{ path = {EXAMPLES / name}; }})')
    assert sorted(listed.group(1).split()) == json.loads(nix.run_nix(["eval", "--impure", "--json", "--expr", expr]).stdout)


# -- toolchain fetch into a store elsewhere -----------------------------------------------


def test_fetch_seeds_a_store_under_another_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`store = local?root=DIR`: the seed is added to that store, once from the .deb this
    fetch downloads, once from the .deb the store already holds (read through Nix: its
    file is under DIR, not at its /nix/store path)."""
    lock = attrs.evolve(load_lock(), groups={})  # only the seed and its .deb
    assert lock.seed is not None
    deb = lock.artifacts[lock.seed.deb]
    for case in ("downloaded", "in-store"):
        root = tmp_path / case / "root"
        monkeypatch.setenv("NIX_CONFIG", _nix_config(f"store = local?root={root}"))
        if case == "in-store":
            named = tmp_path / case / deb.key
            named.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(deb.store_path if Path(deb.store_path).is_file() else _download(deb, tmp_path), named)
            assert nix.run_nix(["--add-fixed", "sha256", str(named)], program="nix-store").stdout.strip() == deb.store_path
        report = fetch(lock, [], state=tmp_path / case / "state")
        assert lock.seed.store_path in report.added
        assert (deb.store_path in report.added) == (case == "downloaded")
        assert (root / lock.seed.store_path.lstrip("/") / Path(lock.seed.member).name).is_file()
        assert nix.invalid_paths([lock.seed.store_path, deb.store_path]) == []


def _download(deb: Artifact, into: Path) -> Path:
    return download_debs([deb], into / "download")[deb.key]
