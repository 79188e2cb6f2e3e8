"""``upload`` reads each file of the tree once: the checks, the plan and huggingface_hub share one scan."""

from __future__ import annotations

import builtins
import collections
import os
from pathlib import Path

import pytest

from hub_trees import make_kernel, rehash, write_variant

from kernel_builder.tree import digest
from kernel_builder.hub.client import make_api
from kernel_builder.hub.upload import UploadOptions, upload


def _variant_files(root: Path) -> list[Path]:
    return sorted(p for p in (root / "build").rglob("*") if p.is_file())


def test_a_dry_run_opens_each_variant_file_once_in_binary(hub_server, tmp_path: Path, monkeypatch) -> None:
    """Before the scan, the tree checks, the digest check and the plan each read every file."""
    root = make_kernel(tmp_path / "relu")
    opened: collections.Counter[Path] = collections.Counter()
    real_open = builtins.open

    def counting_open(file, mode="r", *args, **kwargs):
        if "b" in mode and "r" in mode and isinstance(file, (str, Path)):
            opened[Path(file)] += 1
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    result = upload(UploadOptions(root, dry_run=True), make_api(hub_server.endpoint))
    assert result.status == "dry_run"
    # metadata.json is also parsed (the tree and the checks read it); every other file is only hashed.
    hashed_only = [p for p in _variant_files(root) if p.name != "metadata.json"]
    assert hashed_only and {p: opened[p] for p in hashed_only} == {p: 1 for p in hashed_only}


def test_an_upload_hashes_each_file_once_and_huggingface_hub_never(hub_server, tmp_path: Path, monkeypatch) -> None:
    """huggingface_hub needs the sha256 of LFS files; it gets the scan's instead of reading them again."""
    from huggingface_hub import constants, lfs

    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    hub_server.lfs_threshold = 4096
    root = make_kernel(tmp_path / "relu")
    write_variant(root / "build", "cpu", extra={"table.bin": os.urandom(64 << 10)})
    hashed: collections.Counter[Path] = collections.Counter()
    real_read = digest._read_into

    def counting_read(path, hashers):
        hashed[Path(path)] += 1
        return real_read(path, hashers)

    rehashed = []
    real_sha = lfs.sha_fileobj
    monkeypatch.setattr(digest, "_read_into", counting_read)
    monkeypatch.setattr(lfs, "sha_fileobj", lambda *a, **k: rehashed.append(a) or real_sha(*a, **k))
    assert upload(UploadOptions(root), make_api(hub_server.endpoint)).status == "uploaded"
    files = _variant_files(root) + sorted((root / "benchmarks").glob("benchmark*.py"))
    assert {p: hashed[p] for p in files} == {p: 1 for p in files}
    assert set(hashed) == set(files)  # nothing else was hashed, nothing twice
    assert hub_server.count("lfs_upload") == 1 and rehashed == []


class TestScanVariant:
    def _variant(self, tmp_path: Path) -> Path:
        root = tmp_path / "torch-cpu"
        (root / "sub" / "__pycache__").mkdir(parents=True)
        (root / "__init__.py").write_bytes(b"hello\n")
        (root / "sub" / "empty.py").write_bytes(b"")
        (root / "sub" / "__pycache__" / "empty.cpython-311.pyc").write_bytes(b"\0")
        (root / "metadata.json").write_text("{}")
        (root / "linked").symlink_to("sub")  # a directory link inside the variant (one out is refused)
        return root

    def test_the_scan_digest_is_compute_digest(self, tmp_path: Path) -> None:
        root = self._variant(tmp_path)
        for algorithm in digest.ALGORITHMS:
            assert digest.scan_variant(root, algorithm).digest() == digest.compute_digest(root, algorithm)

    def test_it_lists_what_an_upload_sends_with_git_blob_ids(self, tmp_path: Path) -> None:
        scan = digest.scan_variant(self._variant(tmp_path))
        assert [f.relpath for f in scan.files] == ["__init__.py", "linked/empty.py", "metadata.json", "sub/empty.py"]
        ids = {f.relpath: f.blob_id for f in scan.files}
        # `git hash-object` of "hello\n" and of the empty file.
        assert ids["__init__.py"] == "ce013625030ba8dba906f756967f9e9ca394464a"
        assert ids["sub/empty.py"] == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

    def test_files_under_a_symlinked_directory_are_uncovered(self, tmp_path: Path) -> None:
        root = self._variant(tmp_path)
        assert digest.scan_variant(root).uncovered() == ["linked/empty.py"] == digest.uncovered_files(root)

    def test_a_link_to_a_directory_above_is_refused_not_followed_forever(self, tmp_path: Path) -> None:
        from kernel_builder.errors import CheckError

        root = self._variant(tmp_path)
        (root / "sub" / "loop").symlink_to(root)
        for read in (digest.scan_variant, digest.uncovered_files, digest.compute_digest):
            with pytest.raises(CheckError, match=r"/loop is a symlink to .*, a directory above it \(a symlink loop\)"):
                read(root)


def test_check_variant_reports_uncovered_files_and_loops(tmp_path: Path) -> None:
    from kernel_builder.tree.checks import check_variant

    variant = write_variant(tmp_path / "build", "cpu")
    (variant / "sub").mkdir()
    (variant / "sub" / "payload.py").write_text("EVIL = 1\n")
    rehash(variant)
    (variant / "extra").symlink_to("sub")
    report = check_variant(variant, raise_errors=False)
    assert [e for e in report.errors if e.startswith("digest: ")] == [
        "digest: extra/payload.py would be uploaded but the digest does not cover it (a symlinked directory?)"
    ]
    (variant / "extra").unlink()
    (variant / "loop").symlink_to(variant)
    report = check_variant(variant, raise_errors=False)
    assert report.errors == (f"files: {variant / 'loop'} is a symlink to {variant}, a directory above it (a symlink loop)",)
