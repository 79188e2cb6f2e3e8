"""Issue 24, finding 10: messages that misled. Each now says what happened and what to do."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_builder.errors import NixError
from kernel_builder.flake import nix
from nix_support import copy_kernel

PUBLIC = "team-1:" + "A" * 43 + "="


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_kernel("relu", tmp_path_factory.mktemp("messages") / "k", git=False)


def _build(kernel: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    return subprocess.run([sys.executable, "-m", "kernel_builder", "build", str(kernel), *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)


def test_a_mistyped_cache_is_an_error_not_an_empty_cache(kernel: Path, tmp_path: Path) -> None:
    done = _build(kernel, tmp_path, "--cache", "./typo-cache", "--trusted-key", PUBLIC)
    assert done.returncode == 3, done.stderr
    assert f"--cache ./typo-cache: {tmp_path / 'typo-cache'} does not exist" in done.stderr
    assert not (tmp_path / "typo-cache").exists()
    (tmp_path / "plain-dir").mkdir()
    done = _build(kernel, tmp_path, "--cache", f"file://{tmp_path / 'plain-dir'}", "--trusted-key", PUBLIC)
    assert done.returncode == 3 and "is not a binary cache (no nix-cache-info)" in done.stderr, done.stderr


def test_the_machines_file_is_checked(kernel: Path, tmp_path: Path) -> None:
    for jobs in ("0", "1"):
        done = _build(kernel, tmp_path, "-j", jobs, "--builders", "@/missing/file")
        assert done.returncode == 3, done.stderr
        assert "--builders @/missing/file: the machines file /missing/file does not exist" in done.stderr
    (tmp_path / "machines").write_text("# nothing yet\n")
    done = _build(kernel, tmp_path, "--builders", f"@{tmp_path / 'machines'}")
    assert done.returncode == 3 and "lists no machine" in done.stderr, done.stderr


def test_no_local_jobs_without_builders_says_so(kernel: Path, tmp_path: Path) -> None:
    done = _build(kernel, tmp_path, "-j", "0")
    assert done.returncode == 3, done.stderr
    assert "-j 0 allows no build on this machine, and no --builders were given" in done.stderr
    assert "unable to start any build" not in done.stderr


def test_a_secret_key_path_with_an_ampersand_signs(tmp_path: Path) -> None:
    keys = tmp_path / "a&b=c"
    keys.mkdir()
    nix.generate_cache_key("amp-1", keys / "amp-1.sec", keys / "amp-1.pub")
    payload = tmp_path / "payload.txt"
    payload.write_text(f"signed {tmp_path}\n")
    path = nix.run_nix(["--add", str(payload)], program="nix-store").stdout.strip()
    cache = tmp_path / "cache"
    nix.copy_to_cache(f"file://{cache}", [path], keys / "amp-1.sec")
    info = json.loads(nix.run_nix(["path-info", "--json", "--store", f"file://{cache}", path]).stdout)
    assert any(sig.startswith("amp-1:") for sig in info[0].get("signatures", [])), info


def test_nix_commands_in_messages_can_be_pasted() -> None:
    with pytest.raises(NixError) as info:
        nix.run_nix(["eval", "--expr", "1 + "])
    assert shlex.quote("1 + ") in str(info.value)


def test_fallback_is_not_suggested() -> None:
    text = ("error: some substitutes for the outputs of derivation '/nix/store/x.drv' failed (usually happens due to "
            "networking issues); try '--fallback' to build derivation from source ")
    explained = nix.explain(text)
    assert "--fallback" not in explained and "kernel-builder cache push" in explained
