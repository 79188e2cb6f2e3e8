"""`toolchain lock --group NAME` resolves only the named groups and keeps every other one.

Resolving a Debian group is a real `apt-cache show` / `apt-get download --print-uris` run
against this machine's package lists (no network: apt answers from its cache), as
`toolchain lock` runs it; the other groups are never resolved, so the run takes seconds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from kernel_builder.errors import ConfigError
from kernel_builder.toolchain.pinned.locking import relock

LOCK = Path(__file__).resolve().parents[2] / "nix" / "toolchain-lock.json"

pytestmark = pytest.mark.skipif(shutil.which("apt-cache") is None, reason="needs apt (Debian)")


def _copy(tmp_path: Path) -> tuple[Path, dict]:
    copy = tmp_path / "toolchain-lock.json"
    shutil.copyfile(LOCK, copy)
    return copy, json.loads(LOCK.read_text())


def test_one_debian_group_is_resolved_and_the_rest_kept(tmp_path: Path) -> None:
    path, before = _copy(tmp_path)
    data = json.loads(path.read_text())
    # a new group the lock has not resolved yet: requested, no artifacts
    data["requests"]["debian"]["groups"]["extra"] = ["patchelf"]
    del data["groups"]["rust"]
    rust_keys = before["groups"]["rust"]
    for key in rust_keys:
        if not any(key in keys for group, keys in before["groups"].items() if group != "rust"):
            del data["artifacts"][key]
    path.write_text(json.dumps(data, indent=1) + "\n")
    done = relock(path, only_groups=("rust", "extra"))
    after = json.loads(path.read_text())
    assert done == after
    # the Rust group comes back as the repository's lock has it (same pins, same records)
    assert after["groups"]["rust"] == rust_keys
    assert all(after["artifacts"][k] == before["artifacts"][k] for k in rust_keys)
    assert after["groups"]["extra"] == [k for k in before["groups"]["tools"] if k.startswith("patchelf_")]
    # nothing else moved: every other group and artifact, the seed, the requests
    assert {g: k for g, k in after["groups"].items() if g != "extra"} == before["groups"]
    assert after["artifacts"] == before["artifacts"]
    assert after["seed"] == before["seed"]
    assert after["requests"]["python"] == before["requests"]["python"]


def test_an_unknown_group_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path, _ = _copy(tmp_path)
    text = path.read_text()
    with pytest.raises(ConfigError) as caught:
        relock(path, only_groups=("env:torch9.9",))
    assert "no request makes group 'env:torch9.9'" in caught.value.message
    assert "env:torch2.15" in (caught.value.hint or "") and "rust" in (caught.value.hint or "")
    assert path.read_text() == text


def test_the_cli_takes_repeatable_groups(tmp_path: Path) -> None:
    path, before = _copy(tmp_path)
    done = subprocess.run(
        [str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "kernel-builder"), "toolchain", "lock",
         "--lock-file", str(path), "--group", "rust", "--group", "tools"],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(path.read_text())["artifacts"] == before["artifacts"]
    assert "locked" in done.stderr + done.stdout
