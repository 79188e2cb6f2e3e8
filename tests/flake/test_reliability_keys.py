"""Issue 24, finding 4: key files through the bounded reader, secrets never printed.

A literal secret key passed to `--trusted-key` was printed in full; `--secret-key /bin/ls`
and `--trusted-key /bin/ls` gave a `UnicodeDecodeError` traceback, `/dev/zero` read without
limit and a FIFO blocked forever.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nix_support import copy_kernel

SECRET = "team-1:" + "Zm9v" * 21 + "YQ=="  # the shape of a Nix secret key: NAME:<86 base64>==
PUBLIC = "team-1:" + "A" * 43 + "="


def _cache(tmp_path: Path) -> str:
    """An (empty) file:// cache directory, as `cache push` makes one."""
    (tmp_path / "cache").mkdir(exist_ok=True)
    (tmp_path / "cache" / "nix-cache-info").write_text("StoreDir: /nix/store\n")
    return str(tmp_path / "cache")


def _cli(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_kernel("relu", tmp_path_factory.mktemp("keys") / "k", git=False)


def test_a_literal_secret_key_is_never_printed(kernel: Path, tmp_path: Path) -> None:
    done = _cli("build", str(kernel), "--cache", _cache(tmp_path), "--trusted-key", SECRET, state=tmp_path / "s")
    assert done.returncode == 3
    assert "is a secret key" in done.stderr and "'team-1'" in done.stderr, done.stderr
    assert SECRET.split(":")[1][:20] not in done.stderr + done.stdout
    # Not a key at all: the value is not echoed either when it looks like key material.
    done = _cli("build", str(kernel), "--cache", _cache(tmp_path), "--trusted-key", "team-1:" + "x" * 100, state=tmp_path / "s")
    assert done.returncode == 3 and "x" * 30 not in done.stderr, done.stderr


def test_a_secret_key_file_passed_as_trusted_key_names_only_the_file(kernel: Path, tmp_path: Path) -> None:
    key = tmp_path / "team-1.sec"
    key.write_text(SECRET + "\n")
    done = _cli("build", str(kernel), "--cache", _cache(tmp_path), "--trusted-key", str(key), state=tmp_path / "s")
    assert done.returncode == 3 and f"{key} is a secret key" in done.stderr
    assert SECRET.split(":")[1][:20] not in done.stderr


def _fifo(tmp_path: Path) -> Path:
    fifo = tmp_path / "pipe.pub"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize("option", ["--trusted-key", "--secret-key"])
@pytest.mark.parametrize("target, expected", [
    ("/bin/ls", "bytes; the limit is 4096 bytes"),
    ("/dev/zero", "is a character device"),
    ("fifo", "is a FIFO (named pipe)"),
    ("binary", "is not UTF-8 text"),
])
def test_unreadable_key_files_give_one_error(kernel: Path, tmp_path: Path, option: str, target: str, expected: str) -> None:
    if target == "fifo":
        target = str(_fifo(tmp_path))
    elif target == "binary":
        (tmp_path / "bin.key").write_bytes(b"\xff\xfe\x00garbage")
        target = str(tmp_path / "bin.key")
    if option == "--trusted-key":
        args = ["build", str(kernel), "--cache", _cache(tmp_path), "--trusted-key", target]
    else:
        args = ["cache", "push", str(kernel), "--to", str(tmp_path / "cache"), "--secret-key", target]
    done = _cli(*args, state=tmp_path / "s")  # the FIFO case: the 60 s timeout fails the test if it blocks
    assert done.returncode == 3, done.stderr
    assert f"{option} {target} " in done.stderr and expected in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_public_key_still_reads(tmp_path: Path) -> None:
    from kernel_builder.flake.cache import read_public_key, secret_key_name

    (tmp_path / "team-1.pub").write_text(PUBLIC + "\n")
    assert read_public_key(str(tmp_path / "team-1.pub")) == PUBLIC == read_public_key(PUBLIC)
    (tmp_path / "team-1.sec").write_text(SECRET + "\n")
    assert secret_key_name(tmp_path / "team-1.sec") == "team-1"


def test_cache_key_refuses_a_dangling_symlink(tmp_path: Path) -> None:
    """Finding 11: `cache key` wrote the secret key through `keys/x.sec -> /elsewhere/stolen.sec`."""
    keys = tmp_path / "keys"
    keys.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (keys / "x.sec").symlink_to(elsewhere / "stolen.sec")
    done = _cli("cache", "key", "x", "--out", str(keys), state=tmp_path / "s")
    assert done.returncode == 3, done.stderr
    assert f"{keys / 'x.sec'} is a symlink to {elsewhere / 'stolen.sec'}" in done.stderr
    assert not (elsewhere / "stolen.sec").exists() and not (keys / "x.pub").exists()
    (keys / "x.sec").unlink()
    (keys / "x.pub").symlink_to(elsewhere / "stolen.pub")  # the public half too
    done = _cli("cache", "key", "x", "--out", str(keys), state=tmp_path / "s")
    assert done.returncode == 3 and not (elsewhere / "stolen.pub").exists() and not (keys / "x.sec").exists()
