"""``_files.write_atomic``: the one way kernel-builder replaces a file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kernel_builder._files import write_atomic


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_text_and_bytes(tmp_path: Path) -> None:
    write_atomic(tmp_path / "a.txt", "héllo\r\n")
    assert (tmp_path / "a.txt").read_bytes() == "héllo\r\n".encode()  # UTF-8, no newline translation
    write_atomic(tmp_path / "a.txt", b"\x00\xff")
    assert (tmp_path / "a.txt").read_bytes() == b"\x00\xff"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_a_new_file_gets_the_mode_open_gives(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new", "x")
        (tmp_path / "plain").write_text("x")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "new") == _mode(tmp_path / "plain") == 0o640


def test_the_mode_of_the_replaced_file_is_kept_unless_one_is_given(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("old")
    path.chmod(0o751)
    write_atomic(path, "new")
    assert path.read_text() == "new" and _mode(path) == 0o751
    write_atomic(path, "newer", mode=0o644)
    assert _mode(path) == 0o644


def test_a_symlink_is_followed_and_stays(tmp_path: Path) -> None:
    (tmp_path / "target").write_text("old")
    (tmp_path / "link").symlink_to("target")
    write_atomic(tmp_path / "link", "new")
    assert (tmp_path / "link").is_symlink() and (tmp_path / "target").read_text() == "new"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    path.write_text("old")

    def no_rename(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_rename)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(path, "new")
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]
