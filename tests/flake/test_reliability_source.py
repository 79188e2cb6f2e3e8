"""Issue 24, finding 1: nothing the build does not read enters the Nix store.

The flake `kernel-builder build` hands Nix is a copy of exactly the files build.toml names;
these tests ask Nix itself what it copied into the store (``nix flake metadata``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from kernel_builder.errors import ConfigError, NixError
from kernel_builder import nix
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from kernel_builder.flake.kernel_source import is_secret_key
from nix_support import FLAKE, commit_all, copy_kernel

NIX_SECRET = "team-1:" + "A" * 86 + "=="


def _store_copy(ref: str, flake_args: tuple[str, ...]) -> Path:
    """The store path Nix copies the flake to."""
    done = nix.run_nix(["flake", "metadata", "--json", *flake_args, ref])
    assert done.returncode == 0, done.stderr
    return Path(json.loads(done.stdout)["path"])


def _plant(kernel: Path, key_name: str) -> None:
    (kernel / "keys").mkdir()
    (kernel / "keys" / key_name).write_text(NIX_SECRET + "\n")
    (kernel / "keys" / key_name).chmod(0o600)
    (kernel / "build" / "torch-cpu").mkdir(parents=True)
    (kernel / "build" / "torch-cpu" / "old.so").write_bytes(b"\x7fELF old")
    (kernel / "NOTES.md").write_text("private notes\n")


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("git", [False, True], ids=["path", "git"])
def test_keys_build_and_unreferenced_files_never_enter_the_store(tmp_path: Path, git: bool) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    key_name = f"team-{uuid.uuid4().hex[:12]}.sec"
    _plant(kernel, key_name)
    if git:  # tracked, and an untracked needed file: the old code fell back to path: for it
        commit_all(kernel, init=True)
        (kernel / "relu_cpu" / "extra.h").write_text("#pragma once\n")
        toml = kernel / "build.toml"
        toml.write_text(toml.read_text().replace('src = ["relu_cpu/relu_cpu.cpp"]', 'src = ["relu_cpu/relu_cpu.cpp", "relu_cpu/extra.h"]'))
    prepared = prepare_kernel_flake(kernel, state=tmp_path / "state")
    store = _store_copy(prepared.ref, prepared.flake_args)
    inside = _files(store)
    assert "build.toml" in inside and "flake.nix" in inside and "relu_cpu/relu_cpu.cpp" in inside
    assert not any(p.startswith(("keys/", "build/")) or p == "NOTES.md" for p in inside), sorted(inside)
    assert "tests/test_relu.py" in inside  # the kernel-test runs read tests/ (no variant does)
    if git:
        assert "relu_cpu/extra.h" in inside
    # Nothing anywhere in the store holds the planted key.
    found = subprocess.run(["find", "/nix/store", "-maxdepth", "3", "-name", key_name], capture_output=True, text=True)
    assert found.stdout == ""
    # The backend's source the variants see is the same filtered set (Nix filters it again).
    done = nix.run_nix(["eval", "--raw", *prepared.flake_args, prepared.installable("sources.cpu")])
    assert not any(p.startswith(("keys/", "build/")) for p in _files(Path(done.stdout)))


@pytest.mark.parametrize("where", ["src", "include", "package"])
def test_a_referenced_secret_key_is_refused(tmp_path: Path, where: str) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    toml = kernel / "build.toml"
    if where == "src":
        (kernel / "relu_cpu" / "signing.sec").write_text("anything\n")
        toml.write_text(toml.read_text().replace('src = ["relu_cpu/relu_cpu.cpp"]', 'src = ["relu_cpu/relu_cpu.cpp", "relu_cpu/signing.sec"]'))
        bad = "relu_cpu/signing.sec"
    elif where == "include":
        (kernel / "inc").mkdir()
        (kernel / "inc" / "team.key").write_text(NIX_SECRET + "\n")
        toml.write_text(toml.read_text().replace("[torch]\n", '[torch]\ninclude = ["inc"]\n', 1))
        bad = "inc/team.key"
    else:  # a PEM key under the Python package with an extension pyext copies
        (kernel / "torch-ext" / "relu" / "deploy.py").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nxx\n")
        bad = "torch-ext/relu/deploy.py"
    with pytest.raises(ConfigError, match="secret key") as info:
        prepare_kernel_flake(kernel, state=tmp_path / "state")
    assert bad in str(info.value) and "outside the kernel directory" in str(info.value.hint)
    assert NIX_SECRET not in str(info.value)


def test_build_refuses_a_referenced_key_through_the_cli(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    (kernel / "relu_cpu" / "signing.sec").write_text(NIX_SECRET + "\n")
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace('src = ["relu_cpu/relu_cpu.cpp"]', 'src = ["relu_cpu/relu_cpu.cpp", "relu_cpu/signing.sec"]'))
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-m", "kernel_builder", "build", str(kernel)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 3, done.stderr
    assert "relu_cpu/signing.sec" in done.stderr and "secret key" in done.stderr and "Traceback" not in done.stderr
    assert NIX_SECRET not in done.stderr + done.stdout


def test_secret_key_recognition() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for name, text, secret in [
            ("a.sec", "", True),
            ("k", NIX_SECRET, True),
            ("pub", "team-1:" + "A" * 43 + "=", False),  # a public key is 32 bytes
            ("pem.txt", "-----BEGIN RSA PRIVATE KEY-----\n", True),
            ("x.cpp", "int main() {}\n", False),
        ]:
            (root / name).write_text(text)
            assert is_secret_key(root / name) is secret, name


def test_the_nix_filter_refuses_a_sec_file_even_without_the_cli(tmp_path: Path) -> None:
    """Plain `nix build` on a kernel directory: source.nix refuses a named *.sec file."""
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    (kernel / "relu_cpu" / "signing.sec").write_text("x\n")
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace('src = ["relu_cpu/relu_cpu.cpp"]', 'src = ["relu_cpu/relu_cpu.cpp", "relu_cpu/signing.sec"]'))
    (kernel / "flake.nix").write_text(FLAKE)
    with pytest.raises(NixError) as info:
        nix.run_nix(["eval", "--raw", f"path:{kernel}#sources.cpu"])
    assert "relu_cpu/signing.sec" in str(info.value) and "secret key" in str(info.value)
