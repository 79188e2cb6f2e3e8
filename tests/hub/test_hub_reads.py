"""``upload`` reads each file of the tree once: the checks, the plan and huggingface_hub share one scan."""

from __future__ import annotations

import builtins
import collections
import os
from pathlib import Path

from hub_trees import make_kernel, write_variant

from kernel_builder import digest
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
