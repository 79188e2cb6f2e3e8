"""examples/relu, CPU variant for torch 2.13: build_local, layout, op, interop, checks, reproducibility."""

from __future__ import annotations

import json
import shutil
import sys

import pytest
from buildtest_helpers import (
    CPU_PYTHON,
    CPU_VARIANT,
    EXAMPLES,
    INTEROP_RELU,
    copy_example,
    run,
    run_python,
    run_example_tests,
    run_variant,
)

from kernel_builder.flake.local import build_local
from kernel_builder.tree.digest import compute_digest, validate_digest
from kernel_builder.tree.metadata import Metadata

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("relu-cpu") / "build"
    results = build_local(EXAMPLES / "relu", out_dir=out, toolchain=CPU_PYTHON)
    return out, results


def test_build_local_selects_only_what_the_cpu_torch_can_build(built):
    out, results = built
    assert [r.variant for r in results] == [CPU_VARIANT]
    assert sorted(p.name for p in out.iterdir()) == [CPU_VARIANT], "no staging leftovers, one variant"


def test_layout_is_flat_with_the_abi3_module(built):
    out, results = built
    variant = out / CPU_VARIANT
    ops_id = results[0].ops_id
    assert ops_id.startswith("_relu_cpu_")
    assert sorted(p.name for p in variant.iterdir()) == sorted(
        ["__init__.py", "layers.py", "_ops.py", f"{ops_id}.abi3.so", "metadata.json", "symbols.json"]
    )
    ops_py = (variant / "_ops.py").read_text()
    assert f"from . import {ops_id}" in ops_py and f'f"{ops_id}::{{op_name}}"' in ops_py


def test_metadata_and_digest(built):
    out, results = built
    variant = out / CPU_VARIANT
    metadata = Metadata.read(variant / "metadata.json")
    assert metadata.name == "relu" and metadata.id == results[0].ops_id and metadata.version == 1
    assert metadata.backend.type.value == "cpu" and metadata.backend.archs is None
    assert metadata.digest is not None and validate_digest(variant, metadata.digest) == []
    assert set(metadata.digest.files) == {"__init__.py", "layers.py", "_ops.py", f"{metadata.id}.abi3.so", "symbols.json"}
    assert metadata.provenance is not None and metadata.provenance.kernel is not None


def test_runpath_is_stripped(built):
    out, results = built
    so = out / CPU_VARIANT / f"{results[0].ops_id}.abi3.so"
    dynamic = run(["readelf", "-d", str(so)]).stdout
    assert "RUNPATH" not in dynamic and "RPATH" not in dynamic
    assert "NEEDED" in dynamic


def test_manylinux_is_a_warning_that_says_why(built):
    _, results = built
    assert any("manylinux_2_28" in w and "host toolchain" in w for w in results[0].warnings)


def test_op_matches_torch_relu(built):
    out, results = built
    script = r"""
import importlib.util, sys, torch
path, ops_id = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location(ops_id, path + "/__init__.py", submodule_search_locations=[path])
mod = importlib.util.module_from_spec(spec); sys.modules[ops_id] = mod; spec.loader.exec_module(mod)
x = torch.randn(4096, dtype=torch.float64)
assert torch.equal(mod.relu(x), torch.relu(x))
print(getattr(torch.ops, ops_id).relu.default._schema.name)
"""
    stdout = run_python(script, str(out / CPU_VARIANT), results[0].ops_id)
    assert stdout.strip() == f"{results[0].ops_id}::relu"


def test_interop_get_local_kernel_and_kernelize(built):
    out, results = built
    stdout = run_python(INTEROP_RELU, str(out), "cpu", "1")
    assert f"module {results[0].ops_id}" in stdout
    assert "op ok" in stdout and "layer ok" in stdout
    assert f"forward {results[0].ops_id}.layers ReLU.forward" in stdout


def test_check_cli_passes_and_reports_registered_ops(built):
    out, results = built
    done = run([sys.executable, "-m", "kernel_builder", "check", str(out), "--json"])
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["variant"] == CPU_VARIANT and report["ok"] is True
    assert any(results[0].ops_id + "::relu" in note for note in report["notes"])


def test_check_cli_catches_a_tampered_file(built, tmp_path):
    out, _ = built
    copy = tmp_path / "build"
    shutil.copytree(out, copy)
    (copy / CPU_VARIANT / "layers.py").write_text("# changed\n")
    (copy / CPU_VARIANT / "stray.o").write_bytes(b"\0")
    done = run([sys.executable, "-m", "kernel_builder", "check", str(copy), "--no-import"])
    assert done.returncode == 8
    assert "File hash mismatch for layers.py" in done.stderr
    assert "Unknown file: stray.o" in done.stderr
    assert "build byproduct stray.o" in done.stderr


def test_reproducible_from_another_directory(built, tmp_path):
    """The same variant built from a copy of the source elsewhere, into another out dir: same digest.

    The copy is outside git, so it gets the same ops id through --unique-id (as Nix passes
    it). Reproducible because the compiled sources are built from a scratch path that
    depends only on their content, the variant and the ops id (see build/scratch.py), and
    local symbols are discarded at link time.
    """
    out, results = built
    source = copy_example("relu", tmp_path / "elsewhere")
    other = tmp_path / "out"
    uid = results[0].ops_id.removeprefix("_relu_cpu_")
    done = run_variant(source, CPU_VARIANT, other, CPU_PYTHON, "--unique-id", uid)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(other / CPU_VARIANT)
    first = compute_digest(out / CPU_VARIANT).files
    assert compute_digest(other / CPU_VARIANT).files == first
    assert f"{results[0].ops_id}.abi3.so" in first


def test_example_own_tests_pass_on_the_build(built):
    out, _ = built
    assert " passed" in run_example_tests("relu", out)
