"""Issue 45, findings 3, 7 and 11: ``hash``, ``check`` and ``upload`` read a variant's own files only.

A symlink out of a variant (``notes.txt -> /etc/passwd``) would be hashed into the digest and
published; a FIFO would block; a huge file under a symlinked directory, which no digest
covers, was read whole by ``upload --dry-run`` before it was refused. Each CLI run here must
end with exit 8 and a message naming the path, before anything is read or requested.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hub_trees import make_kernel, rehash
from kernel_builder.errors import CheckError
from kernel_builder.tree import digest

SECRET = "root:x:0:0:SECRET-LINE:/root:/bin/bash\n"


def _cli(*args: str, timeout: int = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_TOKEN": "hf_links_test"}
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], env=env, capture_output=True, text=True, timeout=timeout)


def _outside(tmp_path: Path) -> Path:
    secret = tmp_path / "etc" / "passwd"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(SECRET)
    return secret


@pytest.mark.parametrize("kind", ["file-link", "dir-link", "fifo", "loop"])
def test_hash_check_and_upload_refuse_what_is_not_the_variants_own_file(hub_server, tmp_path: Path, kind: str) -> None:
    root = make_kernel(tmp_path / "relu")
    variant = root / "build" / "torch-cpu"
    secret = _outside(tmp_path)
    if kind == "file-link":
        (variant / "notes.txt").symlink_to(secret)
        rel, fragment = "notes.txt", f"is a symlink to {secret}, which resolves to {secret}, outside the variant directory"
    elif kind == "dir-link":
        (variant / "extra").symlink_to(secret.parent)
        rel, fragment = "extra", f"is a symlink to {secret.parent}, which resolves to {secret.parent}, outside the variant directory"
    elif kind == "fifo":
        os.mkfifo(variant / "pipe.py")
        rel, fragment = "pipe.py", "is a FIFO (named pipe)"
    else:
        (variant / "sub").mkdir()
        (variant / "sub" / "up").symlink_to("..")
        rel, fragment = "sub/up", "is a symlink to .., a directory above it (a symlink loop)"
    if kind != "fifo":
        rehash(variant)  # a digest that covers the planted file, as the old `hash` wrote it
    before = (variant / "metadata.json").read_bytes()
    expected = f"{variant / rel} {fragment}"
    for command in (["hash"], ["check"], ["upload", "--dry-run"], ["upload"]):
        done = _cli(*command, str(root))
        assert done.returncode == 8, (command, done.stderr)
        assert "Traceback" not in done.stderr and expected in done.stderr, (command, done.stderr)
    assert (variant / "metadata.json").read_bytes() == before  # hash wrote nothing
    assert hub_server.requests == []  # nothing was published


def test_a_link_to_a_file_inside_the_variant_is_hashed_through(tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    variant = root / "build" / "torch-cpu"
    (variant / "same.py").symlink_to("layers.py")
    done = _cli("hash", str(root))
    assert done.returncode == 0, done.stderr
    files = json.loads((variant / "metadata.json").read_text())["digest"]["files"]
    assert files["same.py"] == files["layers.py"]
    assert _cli("check", str(root)).returncode == 0


def test_upload_dry_run_refuses_a_huge_uncovered_file_at_once(hub_server, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with open(elsewhere / "huge.bin", "wb") as handle:  # 20 GB, sparse: reading it takes minutes
        handle.truncate(20 << 30)
    (root / "build" / "torch-cpu" / "extra").symlink_to(elsewhere)
    for command in (["check"], ["upload", "--dry-run"]):
        started = time.monotonic()
        done = _cli(*command, str(root))
        assert done.returncode == 8, done.stderr
        assert "outside the variant directory" in done.stderr, done.stderr
        assert time.monotonic() - started < 20, (command, time.monotonic() - started)
    assert hub_server.requests == []


def test_the_scan_never_reads_a_file_no_digest_covers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A symlinked directory inside the variant: its files are sent by an upload but no digest
    covers them, so the checks refuse them; the scan must not read them first."""
    variant = make_kernel(tmp_path / "relu") / "build" / "torch-cpu"
    (variant / "__pycache__").mkdir()
    (variant / "__pycache__" / "big.bin").write_bytes(b"\0" * 1000)  # the digest leaves __pycache__ out
    (variant / "alias").symlink_to("__pycache__")
    read: list[str] = []
    real = digest._read_into
    monkeypatch.setattr(digest, "_read_into", lambda path, hashers: read.append(Path(path).name) or real(path, hashers))
    scan = digest.scan_variant(variant)
    assert "big.bin" not in read
    assert scan.uncovered() == ["alias/big.bin"]
    from kernel_builder.tree.checks import check_variant

    report = check_variant(variant, raise_errors=False, scan=scan)
    assert "digest: alias/big.bin would be uploaded but the digest does not cover it (a symlinked directory?)" in report.errors
    assert "big.bin" not in read
    forced = digest.scan_variant(variant, read_uncovered=True)  # upload --force sends it, so it is read
    assert "big.bin" in read and forced.uncovered() == ["alias/big.bin"]
    from kernel_builder.hub.plan import variant_files

    sent = {f.path_in_repo: f for f in variant_files(scan, "build/torch-cpu")}
    assert sent["build/torch-cpu/alias/big.bin"].sha256 == next(f.sha256 for f in forced.files if f.relpath == "alias/big.bin")


def test_compute_digest_names_a_fifo_instead_of_skipping_it(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x")
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(CheckError, match=r"pipe is a FIFO \(named pipe\)"):
        digest.compute_digest(tmp_path)


@pytest.mark.parametrize("kind", ["benchmark-link", "card-link", "prerendered-card-link", "benchmark-fifo"])
def test_upload_refuses_a_benchmark_or_card_that_is_not_the_kernels_own_file(hub_server, tmp_path: Path, kind: str) -> None:
    """The other file sets an upload reads: benchmarks/benchmark*.py and the card template
    (CARD.md, or a pre-rendered build/CARD.md), which becomes README.md on main."""
    root = make_kernel(tmp_path / "relu")
    secret = _outside(tmp_path)
    if kind == "benchmark-link":
        planted = root / "benchmarks" / "benchmark_token.py"
        planted.symlink_to(secret)
        fragment = f"is a symlink to {secret}, which resolves to {secret}, outside the kernel directory"
    elif kind == "card-link":
        planted = root / "CARD.md"
        planted.symlink_to(secret)
        fragment = f"is a symlink to {secret}, which resolves to {secret}, outside the kernel directory"
    elif kind == "prerendered-card-link":
        (root / "build.toml").unlink()  # a bare tree: the pre-rendered card is what is published
        planted = root / "build" / "CARD.md"
        planted.symlink_to(secret)
        fragment = f"is a symlink to {secret}, which resolves to {secret}, outside the build directory"
    else:
        planted = root / "benchmarks" / "benchmark_pipe.py"
        os.mkfifo(planted)
        fragment = "is a FIFO (named pipe)"
    for command in (["upload", "--dry-run", "--repo-id", "org/hub-relu"], ["upload", "--repo-id", "org/hub-relu"]):
        done = _cli(*command, str(root))
        assert done.returncode == 8, (command, done.stderr)
        assert f"{planted} {fragment}" in done.stderr and "Traceback" not in done.stderr, (command, done.stderr)
    assert hub_server.requests == []


@pytest.mark.parametrize("kind", ["fifo", "loop"])
def test_the_loader_reports_an_unreadable_variant_as_a_load_error(tmp_path: Path, kind: str) -> None:
    """``validate_digest`` (the loader's check) turns the file-set refusal into a violation, so
    `get_local_kernel` raises its ``IntegrityError`` (a ``LoadError``), not a ``CheckError``
    that callers catching ``LoadError`` would not expect; and nothing blocks on a FIFO."""
    root = make_kernel(tmp_path / "relu", backends=("cpu",))
    variant = root / "build" / "torch-cpu"
    if kind == "fifo":
        os.mkfifo(variant / "pipe.py")
        fragment = f"{variant / 'pipe.py'} is a FIFO (named pipe), expected a regular file or a directory"
    else:
        (variant / "loop").symlink_to(".")
        fragment = f"{variant / 'loop'} is a symlink to ., a directory above it (a symlink loop)"
    meta = digest.Digest.from_json(json.loads((variant / "metadata.json").read_text())["digest"])
    assert digest.validate_digest(variant, meta) == [fragment]
    script = (
        "from kernel_builder import get_local_kernel\nfrom kernel_builder.errors import LoadError\n"
        "from kernel_builder.variants.system import detect_system\n"
        f"try:\n    get_local_kernel({str(root / 'build')!r}, system=detect_system(backend='cpu'))\n"
        "except LoadError as exc:\n    print('LOAD ERROR', exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "LOAD ERROR refusing to load" in done.stdout and fragment in done.stdout, done.stdout


def test_hash_check_and_upload_refuse_a_build_directory_linked_out_of_the_kernel(hub_server, tmp_path: Path) -> None:
    """`build -> /elsewhere/build`: the tree commands would hash, check and publish a tree that
    is not the kernel's (and `hash` would write there)."""
    elsewhere = make_kernel(tmp_path / "other")
    root = make_kernel(tmp_path / "relu", backends=())
    (root / "build").symlink_to(elsewhere / "build")
    before = (elsewhere / "build" / "torch-cpu" / "metadata.json").read_bytes()
    for command in (["hash"], ["check"], ["upload", "--dry-run"], ["upload"]):
        done = _cli(*command, str(root))
        assert done.returncode == 8, (command, done.stderr)
        assert f"{root / 'build'} is a symlink to {elsewhere / 'build'}" in done.stderr and "Traceback" not in done.stderr, (command, done.stderr)
    assert (elsewhere / "build" / "torch-cpu" / "metadata.json").read_bytes() == before
    assert hub_server.requests == []
