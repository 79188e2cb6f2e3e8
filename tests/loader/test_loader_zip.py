"""The ZIP build layout: metadata.json ``"build-layout": "zip"`` puts the package in
``<id>.zip`` in the variant directory. Our loader imports it (digest checked first), and PyPI
``kernels`` 0.19.1 loads the same tree to the same module."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from loader_trees import write_variant

from kernel_builder import get_local_kernel
from kernel_builder.loader.errors import IntegrityError, InvalidMetadata, KernelNotFound
from kernel_builder.tree.metadata import Metadata
from kernel_builder.variants.system import detect_system

CPU = detect_system(backend="cpu")

LOAD = """
import json, sys
from pathlib import Path
if sys.argv[1] == "ours":
    from kernel_builder import get_local_kernel
else:
    from kernels import get_local_kernel
m = get_local_kernel(Path(sys.argv[2]))
print(json.dumps({"name": m.__name__, "file": m.__file__, "variant": m.VARIANT, "ops": m.OPS_ID,
                  "relu": m.relu([-1, 2]), "ops_file": sys.modules[m.__name__ + "._ops"].__file__}))
"""


def _load(which: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", LOAD, which, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


@pytest.fixture
def zip_tree(tmp_path: Path) -> Path:
    write_variant(tmp_path / "relu-zip" / "build", "torch-cpu", name="relu-zip", layout="zip")
    return tmp_path / "relu-zip"


def test_zip_tree_is_written_as_the_reference_reads_it(zip_tree: Path) -> None:
    vdir = zip_tree / "build" / "torch-cpu"
    meta = json.loads((vdir / "metadata.json").read_text())
    assert meta["build-layout"] == "zip"
    assert {p.name for p in vdir.iterdir()} == {"metadata.json", f"{meta['id']}.zip"}
    assert set(meta["digest"]["files"]) == {f"{meta['id']}.zip"}
    from kernels._rust import BuildLayout
    from kernels._rust import Metadata as RefMetadata

    assert RefMetadata.read_from_file(str(vdir / "metadata.json")).build_layout == BuildLayout.ZIP
    assert Metadata.read(vdir / "metadata.json").build_layout == "zip"


def test_ours_and_the_reference_load_the_zip_tree_alike(zip_tree: Path) -> None:
    ours, theirs = _load("ours", zip_tree), _load("kernels", zip_tree)
    assert ours == theirs
    archive = zip_tree / "build" / "torch-cpu" / f"{ours['ops']}.zip"
    assert ours["name"] == ours["ops"] and ours["relu"] == [0, 2] and ours["variant"] == "torch-cpu"
    assert ours["file"] == f"{archive}/__init__.py" and ours["ops_file"] == f"{archive}/_ops.py"


def test_zip_kernel_in_process_and_its_resources(zip_tree: Path) -> None:
    import importlib.resources

    module = get_local_kernel(zip_tree, system=CPU)
    assert module.relu([-3, 4]) == [0, 4] and module.__spec__.origin.endswith(".zip/__init__.py")
    assert "OPS_ID" in importlib.resources.files(module).joinpath("_ops.py").read_text()


def test_tampered_archive_is_refused_by_the_digest(zip_tree: Path) -> None:
    vdir = zip_tree / "build" / "torch-cpu"
    (archive,) = vdir.glob("*.zip")
    with zipfile.ZipFile(archive, "a") as z:
        z.writestr("evil.py", "raise SystemExit('ran')\n")
    with pytest.raises(IntegrityError, match=f"{archive.name}"):
        get_local_kernel(zip_tree, system=CPU)


def test_missing_archive_and_bad_layout(tmp_path: Path, zip_tree: Path) -> None:
    vdir = zip_tree / "build" / "torch-cpu"
    (archive,) = vdir.glob("*.zip")
    archive.unlink()
    meta = json.loads((vdir / "metadata.json").read_text())
    meta.pop("digest")
    (vdir / "metadata.json").write_text(json.dumps(meta))
    with pytest.warns(UserWarning, match="no digest"), pytest.raises(KernelNotFound, match="No kernel archive found at"):
        get_local_kernel(zip_tree, system=CPU)
    (vdir / "metadata.json").write_text(json.dumps({**meta, "build-layout": "tarball"}))
    with pytest.raises(InvalidMetadata, match="`build-layout` 'tarball' is not one of files, zip"):
        get_local_kernel(zip_tree, system=CPU)
