"""Issue 42 item 3: an edition-6 kernel (components carry `language`) builds exactly as its
edition-5 twin (`backend`): the Nix side reads a component's backend through one table,
nix/lib/pure/languages.nix, which must be the model's (`Language.backend`)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kernel_builder.config import load, loads
from kernel_builder.config.model import Language
from kernel_builder import nix
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from kernel_builder.variants.buildsets import build_sets_path, load_build_sets
from kernel_builder.variants.matrix import matrix
from nix_support import EXAMPLES, copy_kernel, kernel_builder, make_dirty, snapshot_builder

REPO = Path(__file__).resolve().parents[2]
CPU213 = "torch213-cxx11-cpu-x86_64-linux"
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "build.toml").is_file())


def nix_eval(expr: str) -> object:
    done = nix.run_nix(["eval", "--json", "--impure", "--expr", expr], cwd=str(REPO))
    return json.loads(done.stdout)


def edition6_twin(example: str, dest: Path) -> Path:
    """A copy of examples/EXAMPLE whose build.toml `update-build` rewrote to edition 6."""
    shutil.copytree(EXAMPLES / example, dest, ignore=shutil.ignore_patterns("build", "__pycache__", "result*"))
    kernel_builder("update-build", str(dest), env=dict(os.environ))
    return dest


def test_the_nix_language_table_is_the_models() -> None:
    table = nix_eval(f"(import {REPO}/nix/lib/pure/languages.nix).backends")
    assert table == {language.value: language.backend.value for language in Language}


def test_update_build_gives_languages_to_every_compiled_example(tmp_path: Path) -> None:
    """The twins below are really edition 6 (else the comparisons prove nothing)."""
    twin = edition6_twin("relu", tmp_path / "relu")
    text = (twin / "build.toml").read_text()
    assert "edition = 6" in text and 'language = "cpp-cpu"' in text and "backend =" not in text


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_nix_reads_an_edition6_twin_as_its_original(example: str, tmp_path: Path) -> None:
    """Same kernel backends, same source inputs per backend, same matrix (names, kinds,
    build sets, reasons) on every system, from the pure Nix library."""
    twin = edition6_twin(example, tmp_path / example)
    facts = """
      dir: let
        c = import REPO/nix/lib/pure/kernel-config.nix dir;
        m = import REPO/nix/lib/pure/matrix.nix;
        i = import REPO/nix/lib/pure/inputs.nix;
        data = builtins.fromJSON (builtins.readFile SETS);
      in {
        kernelBackends = c.kernelBackends;
        inputs = map (b: i.inputPaths c b) c.backends;
        placeholders = map c.placeholdersFor c.backends;
        matrix = m.matrix data c.toml "all";
      }
    """.replace("REPO", str(REPO)).replace("SETS", json.dumps(str(build_sets_path())))
    original, rewritten = nix_eval(f"let f = {facts}; in map f [ {EXAMPLES / example} {twin} ]")  # type: ignore[misc]
    if load(twin).kernels:
        assert original["kernelBackends"], example  # a compiled kernel: the comparison is not vacuous
    assert rewritten == original
    # and the Python matrix agrees with both
    assert [v["name"] for v in rewritten["matrix"]["variants"]] == matrix(load(twin), load_build_sets(), "all").names


def test_an_mlx_kernel_is_named_as_kernels_names_it(tmp_path: Path) -> None:
    """`[mlx-noarch]` gives `mlx-<backend>` (kernels 0.19.1 parses it as an MLX noarch
    variant), in the Python and the Nix matrix alike."""
    from kernels._internals.variants import MlxNoarch, parse_variant

    text = '[general]\nname = "mlx-kernel"\nversion = 1\nedition = 6\nlicense = "mit"\nbackends = ["metal"]\n\n[mlx-noarch]\n'
    path = tmp_path / "build.toml"
    path.write_text(text)
    ours = matrix(loads(text, path=str(path)), load_build_sets(), "all")
    assert ours.names == ["mlx-metal"]
    assert isinstance(parse_variant("mlx-metal").framework, MlxNoarch)
    theirs = nix_eval(
        f"map (v: v.name) ((import {REPO}/nix/lib/pure/matrix.nix).matrix"
        f" (builtins.fromJSON (builtins.readFile {json.dumps(str(build_sets_path()))}))"
        f" (builtins.fromTOML (builtins.readFile {path})) \"all\").variants"
    )
    assert theirs == ["mlx-metal"]


def test_the_flake_of_an_edition6_twin_lists_the_same_variants(tmp_path: Path) -> None:
    original = copy_kernel("relu", tmp_path / "relu", git=False)
    twin = edition6_twin("relu", tmp_path / "twin")
    listed = []
    for kernel in (original, twin):
        prepared = prepare_kernel_flake(kernel, state=tmp_path / "state")
        listed.append(nix.eval_json(prepared.installable("variants"), flake_args=prepared.flake_args))
    assert listed[0] and listed[1] == listed[0]
    assert CPU213 in listed[0]


def _tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_an_edition6_twin_builds_the_same_bytes(tmp_path: Path) -> None:
    """relu and its edition-6 twin, built in the sandbox for torch 2.13 CPU from one git
    tree (same commit, dirty: the same kernel identity, so the same ops namespace), give
    byte-identical variants: module, Python package, metadata.json and digest."""
    kernel = copy_kernel("relu", tmp_path / "relu", git=True)
    make_dirty(kernel)  # the unique id is "<commit>_dirty" for both builds below
    # a snapshot of the builder: edits to this checkout while the test runs change neither build
    root = snapshot_builder(tmp_path / "builder")
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state"), "KERNEL_BUILDER_ROOT": str(root)}
    kernel_builder("build", str(kernel), "--variant", CPU213, "-j", "1", "--cores", "2", env=env)
    before = _tree(kernel / "build" / CPU213)
    shutil.rmtree(kernel / "build")

    kernel_builder("update-build", str(kernel), env=env)
    assert 'language = "cpp-cpu"' in (kernel / "build.toml").read_text()
    kernel_builder("build", str(kernel), "--variant", CPU213, "-j", "1", "--cores", "2", env=env)
    after = _tree(kernel / "build" / CPU213)

    assert any(name.endswith(".so") for name in before)
    assert "metadata.json" in before
    assert sorted(after) == sorted(before)
    differing = [name for name in before if before[name] != after[name]]
    assert differing == []


def test_a_rust_components_cargo_manifest_is_an_input_in_nix_as_in_python(tmp_path: Path) -> None:
    """inputs.nix names the files Build.input_paths names, cargo-manifest included (it
    enters the backend's source; editing it rebuilds that backend's variants)."""
    from kernel_builder.config.model import Backend

    (tmp_path / "r" / "src").mkdir(parents=True)
    (tmp_path / "r" / "src" / "lib.rs").write_text("")
    (tmp_path / "r" / "Cargo.toml").write_text("")
    (tmp_path / "build.toml").write_text(
        '[general]\nname = "rk"\nversion = 1\nedition = 6\nlicense = "mit"\nbackends = ["cpu"]\n\n[tvm-ffi]\n\n'
        '[kernel.r]\nlanguage = "rust-cpu"\nsrc = ["r/src/lib.rs"]\ncargo-manifest = "r/Cargo.toml"\n'
    )
    python = load(tmp_path).input_paths(Backend.CPU)
    assert "r/Cargo.toml" in python
    got = nix_eval(
        f"let c = import {REPO}/nix/lib/pure/kernel-config.nix {tmp_path}; i = import {REPO}/nix/lib/pure/inputs.nix; in"
        f" [ (i.inputPaths c \"cpu\") (map (rel: i.keepSource c \"cpu\" rel \"regular\") [ \"r/Cargo.toml\" \"r/src/lib.rs\" ]) ]"
    )
    inputs, kept = got  # type: ignore[misc]
    assert sorted(python) == sorted({*inputs["files"], *inputs["includeDirs"], inputs["extDir"]})
    assert kept == [True, True]
