"""get_local_kernel, LOCAL_KERNELS, the registry, digests and dependencies on local trees."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest
from loader_trees import write_variant

from kernel_builder import get_kernel, get_loaded_kernels, get_local_kernel
from kernel_builder.errors import KernelBuilderError
from kernel_builder.loader.errors import IntegrityError, InvalidRequest, KernelNotFound, MissingDependency
from kernel_builder.variants.system import detect_system

CPU = detect_system(backend="cpu")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "relu"
    write_variant(root / "build", "torch-cpu")
    write_variant(root / "build", "torch-cuda", backend="cuda")
    return root


@pytest.mark.parametrize("layout", ["root", "build", "variant"])
def test_three_layouts_load_the_cpu_variant(repo: Path, layout: str) -> None:
    path = {"root": repo, "build": repo / "build", "variant": repo / "build" / "torch-cpu"}[layout]
    module = get_local_kernel(path, system=CPU)
    assert module.VARIANT == "torch-cpu"
    assert Path(module.__file__).parent == repo / "build" / "torch-cpu"
    assert module.relu([-1, 2]) == [0, 2]
    # Imported under the metadata id, as a package (relative imports work).
    assert module.__name__ == module.OPS_ID and sys.modules[module.OPS_ID] is module


def test_arch_variant_preferred_over_noarch(tmp_path: Path) -> None:
    # torch is a test dependency: the probe under test must find it (not a reason to skip).
    assert CPU.torch_version is not None, "detect_system() found no torch in the test venv"
    ARCH = "torch{}{}-cpu-{}-{}".format(*CPU.torch_version, CPU.cpu, CPU.os)
    write_variant(tmp_path / "build", "torch-cpu")
    write_variant(tmp_path / "build", ARCH)
    assert get_local_kernel(tmp_path, system=CPU).VARIANT == ARCH


def test_registry_returns_same_module_and_null_repo_info(repo: Path) -> None:
    first = get_local_kernel(repo, system=CPU)
    again = get_local_kernel(repo / "build", system=CPU)
    assert first is again
    entries = [k for k in get_loaded_kernels() if k.module is first]
    assert len(entries) == 1 and entries[0].repo_info is None and entries[0].metadata.name == "relu-test"
    listing = get_loaded_kernels()
    listing.clear()
    assert get_loaded_kernels(), "get_loaded_kernels must return a copy"


def test_no_matching_variant_lists_the_trace(tmp_path: Path) -> None:
    write_variant(tmp_path / "build", "torch-rocm", backend="rocm")
    with pytest.raises(KernelNotFound) as info:
        get_local_kernel(tmp_path, system=CPU)
    text = str(info.value)
    assert "Cannot find a build variant" in text and "torch-rocm: backend (rocm) does not match" in text
    assert isinstance(info.value, FileNotFoundError)


def test_missing_path() -> None:
    with pytest.raises(KernelNotFound, match="Could not find kernel in /non/existing"):
        get_local_kernel(Path("/non/existing"), system=CPU)


def test_tampered_file_refused_listing_every_problem(repo: Path) -> None:
    vdir = repo / "build" / "torch-cpu"
    (vdir / "_ops.py").write_text("OPS_ID = 'evil'\n")
    (vdir / "extra.py").write_text("x = 1\n")
    (vdir / "__init__.py").unlink()
    (vdir / "relu_test").mkdir()
    (vdir / "relu_test" / "__init__.py").write_text("")
    with pytest.raises(IntegrityError) as info:
        get_local_kernel(repo, system=CPU)
    text = str(info.value)
    assert "File hash mismatch for _ops.py" in text
    assert "Missing file: __init__.py" in text
    assert "Unknown file: extra.py" in text and "Unknown file: relu_test/__init__.py" in text
    assert "KERNEL_BUILDER_SKIP_DIGEST" in text
    assert not any(k.metadata.id == "evil" for k in get_loaded_kernels())


def test_skip_digest_env_loads_with_warning(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vdir = repo / "build" / "torch-cpu"
    (vdir / "extra.py").write_text("x = 1\n")
    monkeypatch.setenv("KERNEL_BUILDER_SKIP_DIGEST", "1")
    with pytest.warns(UserWarning, match="digest verification skipped"):
        module = get_local_kernel(repo, system=CPU)
    assert module.VARIANT == "torch-cpu"


def test_skip_digest_keyword(repo: Path) -> None:
    (repo / "build" / "torch-cpu" / "extra.py").write_text("x = 1\n")
    with pytest.warns(UserWarning, match="digest verification skipped"):
        get_local_kernel(repo, system=CPU, verify_digest=False)


def test_no_digest_warns_but_loads(tmp_path: Path) -> None:
    write_variant(tmp_path / "build", "torch-cpu", name="nodigest", digest=False)
    with pytest.warns(UserWarning, match="has no digest"):
        assert get_local_kernel(tmp_path, system=CPU).VARIANT == "torch-cpu"


def test_unknown_python_dependency(tmp_path: Path) -> None:
    write_variant(tmp_path / "build", "torch-cpu", name="deps-a", python_depends=("kepler-22b",))
    with pytest.raises(InvalidRequest, match="uses unsupported kernel dependency: kepler-22b"):
        get_local_kernel(tmp_path, system=CPU)


def test_missing_python_dependency_has_install_hint(tmp_path: Path) -> None:
    write_variant(tmp_path / "build", "torch-cpu", name="deps-b", python_depends=("helion",))
    with pytest.raises(MissingDependency) as info:
        get_local_kernel(tmp_path, system=CPU)
    assert "pip install helion" in str(info.value) and isinstance(info.value, ImportError)


def test_local_kernels_override(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_KERNELS", f"other/thing=/nowhere:acme/does-not-exist={repo}")
    # No version/revision needed, no Hub contacted (HF_ENDPOINT points nowhere).
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    assert get_kernel("acme/does-not-exist", system=CPU).VARIANT == "torch-cpu"
    with pytest.raises(KernelNotFound, match="Could not find kernel in /nowhere"):
        get_kernel("other/thing", system=CPU)


def test_local_kernels_bad_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_KERNELS", "acme/x")
    with pytest.raises(InvalidRequest, match="Invalid LOCAL_KERNELS entry"):
        get_kernel("acme/y", version=1, system=CPU)


def test_invalid_backend() -> None:
    with pytest.raises(KernelBuilderError, match="Invalid backend 'xpu', system supported backends: cpu"):
        get_local_kernel(Path("/tmp"), backend="xpu", system=CPU)


def test_dirty_provenance_warns(tmp_path: Path) -> None:
    from kernel_builder.tree.metadata import BuilderProvenance, GitStatus, Metadata, Provenance

    vdir = write_variant(tmp_path / "build", "torch-cpu", name="dirty-one")
    meta = Metadata.read(vdir / "metadata.json")
    meta.evolve(provenance=Provenance(BuilderProvenance("0.1.0"), GitStatus("a" * 40, True))).write(
        vdir / "metadata.json"
    )
    with pytest.warns(UserWarning, match="dirty git tree"):
        get_local_kernel(tmp_path, system=CPU)


def test_clean_provenance_no_warning(tmp_path: Path) -> None:
    write_variant(tmp_path / "build", "torch-cpu", name="clean-one")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        get_local_kernel(tmp_path, system=CPU)
