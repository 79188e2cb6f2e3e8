"""Trees we write still load with PyPI ``kernels`` 0.17.2, the older loader many users run.

``.ci/setup`` installs 0.17.2 in its own venv, ``.venv/kernels-0.17.2`` (it shares the
project venv's torch); each case loads a tree there in a fresh interpreter and compares the
variant it picks with the one our loader picks. New-style variant names (kernels 0.19) are
unknown to 0.17.2, which skips them: a tree that carries both spellings still loads there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from loader_trees import write_variant

from kernel_builder.variants.system import detect_system

REPO = Path(__file__).resolve().parents[2]
OLD_PYTHON = REPO / ".venv" / "kernels-0.17.2" / "bin" / "python"

LOAD = """
import json, sys
from pathlib import Path
import kernels
from kernels import get_local_kernel
m = get_local_kernel(Path(sys.argv[1]))
print(json.dumps({"version": kernels.__version__, "variant": Path(m.__file__).parent.name, "name": m.__name__,
                  "relu": m.relu([-1, 2])}))
"""


def _old_load(tree: Path) -> dict:
    assert OLD_PYTHON.is_file(), f"{OLD_PYTHON} is missing: run .ci/setup (it installs kernels 0.17.2 there)"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    out = subprocess.run([str(OLD_PYTHON), "-c", LOAD, str(tree)], capture_output=True, text=True, timeout=180, env=env)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["version"] == "0.17.2"
    return result


def _ours(tree: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-c", "import sys; from pathlib import Path; from kernel_builder import get_local_kernel; "
         "print(Path(get_local_kernel(Path(sys.argv[1])).__file__).parent.name)", str(tree)],
        capture_output=True, text=True, timeout=180,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()[-1]


def test_legacy_tree_loads_alike_with_kernels_0_17_2(tmp_path: Path) -> None:
    system = detect_system()
    assert system.torch_version is not None, "detect_system() found no torch in the test venv"
    major, minor = system.torch_version
    plat = f"{system.cpu}-{system.os}"
    tree = tmp_path / "relu-old"
    for variant in (f"torch{major}{minor}-cxx11-cpu-{plat}", f"torch{major}{minor - 1}-cxx11-cpu-{plat}", "torch-cpu",
                    f"torch{major}{minor}-cxx11-cu130-{plat}", "torch-cuda"):
        write_variant(tree / "build", variant, name="relu-old", backend="cuda" if "cu" in variant else "cpu")
    old = _old_load(tree)
    assert old["variant"] == _ours(tree) == f"torch{major}{minor}-cxx11-cpu-{plat}"
    assert old["relu"] == [0, 2]


def test_tree_with_new_style_names_still_loads_with_kernels_0_17_2(tmp_path: Path) -> None:
    """Our loader (and 0.19.1) prefer the new-style variant for this Python; 0.17.2 skips the
    names it cannot read and loads the legacy one."""
    system = detect_system()
    assert system.torch_version is not None, "detect_system() found no torch in the test venv"
    major, minor = system.torch_version
    py_major, py_minor = system.python_version
    plat = f"{system.cpu}-{system.os}"
    tree = tmp_path / "relu-mixed"
    legacy = f"torch{major}{minor}-cxx11-cpu-{plat}"
    new = f"torch-{major}.{minor}-cxx11-cpu-cpython-{py_major}.{py_minor}-abi3-{plat}"
    for variant in (legacy, new, "sdk-cpu"):
        write_variant(tree / "build", variant, name="relu-mixed")
    assert _ours(tree) == new
    assert _old_load(tree)["variant"] == legacy
