"""metadata.json: unknown keys are warned about by ``check`` and ignored by readers (as PyPI
kernels 0.19.1 ignores them); a file over the size cap is refused by check and upload before
any request (issue 45 #25: a 60 MB metadata.json with an unknown key passed both)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hub_trees import make_kernel
from kernel_builder.tree.metadata import METADATA_LIMIT, Metadata


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_TOKEN": "hf_metadata_test"}
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], env=env, capture_output=True, text=True, timeout=120)


def _add_key(variant: Path, key: str, value: object) -> None:
    meta = json.loads((variant / "metadata.json").read_text())
    meta[key] = value  # the digest does not cover metadata.json: it stays valid
    (variant / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n")


def test_an_unknown_key_is_a_warning_of_check_and_ignored_by_readers(tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    variant = root / "build" / "torch-cpu"
    _add_key(variant, "build-notes", "by hand")
    _add_key(variant, "licence", "MIT")  # a typo of license
    done = _cli("check", "--no-import", str(root))
    assert done.returncode == 0, done.stderr
    assert ("torch-cpu: metadata: metadata.json has keys kernel-builder does not know, which loaders ignore: "
            "build-notes, licence") in done.stderr
    metadata = Metadata.read(variant / "metadata.json")
    assert metadata.unknown_keys == ("build-notes", "licence")
    assert "licence" not in metadata.to_json()  # not carried into what kernel-builder writes


def test_a_metadata_json_over_the_cap_is_refused_by_check_and_upload(hub_server, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    variant = root / "build" / "torch-cpu"
    _add_key(variant, "padding", "x" * (60 << 20))  # 60 MB, as in the report
    assert (variant / "metadata.json").stat().st_size > METADATA_LIMIT
    for command in (["check", "--no-import"], ["upload", "--dry-run"], ["upload"]):
        done = _cli(*command, str(root))
        assert done.returncode == 8, (command, done.stderr)
        assert "Traceback" not in done.stderr
        assert f"{variant / 'metadata.json'}" in done.stderr and f"{METADATA_LIMIT} bytes" in done.stderr, (command, done.stderr[-2000:])
    assert hub_server.requests == []
