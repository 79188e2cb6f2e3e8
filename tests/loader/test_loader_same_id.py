"""A kernel id names one build: a second tree with the same ``id`` reuses the imported
module when it is the same build (same digest) and is refused when it is not, as PyPI
``kernels`` 0.19.1 does. (Executing a second build under the same id would register its
torch ops twice.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from loader_trees import write_variant

SCRIPT = """
import json, sys
from pathlib import Path
if sys.argv[1] == "ours":
    from kernel_builder import get_local_kernel, get_loaded_kernels
else:
    from kernels import get_local_kernel, get_loaded_kernels
first = get_local_kernel(Path(sys.argv[2]))
first.RUNS = getattr(first, "RUNS", 0) + 1
try:
    second = get_local_kernel(Path(sys.argv[3]))
except RuntimeError as exc:
    print(json.dumps({"outcome": "RuntimeError", "message": str(exc)}))
else:
    print(json.dumps({"outcome": "same" if second is first else "other", "runs": getattr(second, "RUNS", 0),
                      "loaded": sorted(str(Path(k.module.__file__).parent) for k in get_loaded_kernels())}))
"""


def _run(which: str, a: Path, b: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", SCRIPT, which, str(a), str(b)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


@pytest.fixture
def two_copies(tmp_path: Path) -> tuple[Path, Path]:
    write_variant(tmp_path / "a" / "build", "torch-cpu", name="same-id")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    return tmp_path / "a", tmp_path / "b"


def test_same_build_at_two_paths_is_imported_once(two_copies: tuple[Path, Path]) -> None:
    ours, theirs = _run("ours", *two_copies), _run("kernels", *two_copies)
    assert ours["outcome"] == theirs["outcome"] == "same"
    assert ours["runs"] == theirs["runs"] == 1
    assert ours["loaded"] == theirs["loaded"]  # one entry per variant path, one module


def test_other_build_under_the_same_id_is_refused(two_copies: tuple[Path, Path]) -> None:
    a, b = two_copies
    vdir = b / "build" / "torch-cpu"
    (vdir / "__init__.py").write_text((vdir / "__init__.py").read_text() + "\nCHANGED = True\n")
    from kernel_builder.tree.layout import hash_tree

    hash_tree(b)
    ours, theirs = _run("ours", a, b), _run("kernels", a, b)
    assert ours["outcome"] == theirs["outcome"] == "RuntimeError"
    assert "same id" in ours["message"] and "__init__.py" in ours["message"]


def test_digest_on_one_side_only_is_refused(two_copies: tuple[Path, Path]) -> None:
    a, b = two_copies
    meta = b / "build" / "torch-cpu" / "metadata.json"
    data = json.loads(meta.read_text())
    data.pop("digest")
    meta.write_text(json.dumps(data))
    ours, theirs = _run("ours", a, b), _run("kernels", a, b)
    assert ours["outcome"] == theirs["outcome"] == "RuntimeError"
    assert "digest" in ours["message"]
