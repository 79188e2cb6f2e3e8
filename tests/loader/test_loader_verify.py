"""verify_variant: full check, the stat stamp that skips re-hashing, and tamper after a stamp."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from loader_trees import write_variant

from kernel_builder.loader import verify
from kernel_builder.loader.errors import IntegrityError
from kernel_builder.tree.metadata import Metadata


@pytest.fixture
def variant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KERNELS_CACHE", str(tmp_path / "cache"))
    return write_variant(tmp_path / "build", "torch-cpu", name="stamped", extra={"lib.so": b"\0" * 4096})


def _count_hashing(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = verify.validate_digest

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(verify, "validate_digest", counting)
    return calls


def test_second_check_uses_stamp(variant: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_hashing(monkeypatch)
    meta = Metadata.read(variant / "metadata.json")
    verify.verify_variant(variant, meta)
    verify.verify_variant(variant, meta)
    assert len(calls) == 1


@pytest.mark.parametrize("change", ["rewrite", "add", "remove", "touch"])
def test_changes_after_stamp_are_caught(variant: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    calls = _count_hashing(monkeypatch)
    meta = Metadata.read(variant / "metadata.json")
    verify.verify_variant(variant, meta)
    if change == "rewrite":  # same size, different bytes
        (variant / "lib.so").write_bytes(b"\1" * 4096)
    elif change == "add":
        (variant / "evil.py").write_text("")
    elif change == "remove":
        (variant / "lib.so").unlink()
    else:  # same bytes, new mtime: re-hashed and accepted
        st = os.stat(variant / "lib.so")
        os.utime(variant / "lib.so", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    if change == "touch":
        verify.verify_variant(variant, meta)
        assert len(calls) == 2
    else:
        with pytest.raises(IntegrityError):
            verify.verify_variant(variant, meta)


def test_other_digest_invalidates_stamp(variant: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_hashing(monkeypatch)
    meta = Metadata.read(variant / "metadata.json")
    verify.verify_variant(variant, meta)
    files = dict(meta.digest.files)
    files["lib.so"] = "AAAA"
    with pytest.raises(IntegrityError, match="File hash mismatch for lib.so"):
        verify.verify_variant(variant, meta.with_digest(type(meta.digest)("sha256", files)))
    assert len(calls) == 2
