"""Issue 42 item 5: Rust kernels (edition 6 ``language = "rust-cpu"``, examples/add-rust).

cargo builds each Rust component's crate offline with the crates of the kernel's vendor/
only (``driver.rust``); a dependency that is not vendored is a located error naming it,
before cargo runs. The example builds in the Nix sandbox with the pinned Rust (Debian's
rustc-web/cargo-web), is import-checked through tvm-ffi, and PyPI kernels 0.19.1 loads
and runs it. rust-cuda-oxide and rust-cutile validate and say why they are not built here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import kernel_abi_check
import pytest

from kernel_builder.config import load, loads
from kernel_builder.config.model import Language
from kernel_builder.config.problems import BuildTomlError
from kernel_builder.driver import rust
from kernel_builder.errors import BuildError
from kernel_builder import nix
from kernel_builder.variants.buildsets import load_build_sets
from kernel_builder.variants.matrix import matrix
from nix_support import EXAMPLES, PYTHON, copy_kernel, kernel_builder, pinned_tvm_ffi_site

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = EXAMPLES / "add-rust"
VARIANT = "tvm-ffi01-cpu-x86_64-linux"



def _kernel(tmp_path: Path) -> Path:
    """A copy of the example to break."""
    kernel = tmp_path / "add-rust"
    shutil.copytree(EXAMPLE, kernel, ignore=shutil.ignore_patterns("build", "target", "__pycache__"))
    return kernel


def _crate(kernel: Path) -> rust.Crate:
    build = load(kernel)
    return rust.crate_of(kernel, "add_rust", build.kernels["add_rust"])


def test_the_example_is_a_rust_cpu_tvm_ffi_kernel_named_as_kernels_names_it() -> None:
    from kernels._internals.variants import TvmFfi, parse_variant
    from kernels._rust import Build

    build = load(EXAMPLE)
    assert build.is_tvm_ffi and build.kernels["add_rust"].language is Language.RUST_CPU
    assert [str(b).lower() for b in Build.open(str(EXAMPLE)).general.backends] == ["cpu"]
    names = matrix(build, load_build_sets(), "x86_64-linux").names
    assert names == [VARIANT]
    assert isinstance(parse_variant(VARIANT).framework, TvmFfi)
    crate = _crate(EXAMPLE)
    assert crate.lib_name == "add_rs" and crate.root == EXAMPLE and crate.lock == EXAMPLE / "Cargo.lock"
    rust.check_vendored(crate)  # everything it needs is in vendor/


def test_an_unvendored_crate_in_cargo_toml_is_a_located_error_naming_it(tmp_path: Path) -> None:
    kernel = _kernel(tmp_path)
    manifest = kernel / "add-rs" / "Cargo.toml"
    manifest.write_text(manifest.read_text() + 'half = { version = "2", default-features = false }\n'
                        "\n[target.'cfg(unix)'.build-dependencies]\ncc = \"1\"\n")
    with pytest.raises(BuildTomlError) as caught:
        rust.check_vendored(_crate(kernel))
    message = caught.value.message
    lines = manifest.read_text().splitlines()
    half_line = next(i for i, line in enumerate(lines, 1) if line.startswith("half"))
    cc_line = next(i for i, line in enumerate(lines, 1) if line.startswith("cc ="))
    assert f"add-rs/Cargo.toml:{half_line}:1: dependencies.half: crate half is not vendored: vendor/ has no half package" in message
    assert f'add-rs/Cargo.toml:{cc_line}:1: target."cfg(unix)".build-dependencies.cc: crate cc is not vendored' in message
    assert "2 problems found" in message and "the Rust build runs offline" in message
    assert "cargo vendor" in (caught.value.hint or "") and "librust-<crate>-dev" in (caught.value.hint or "")


def test_a_lock_entry_that_is_not_vendored_is_located_in_cargo_lock(tmp_path: Path) -> None:
    kernel = _kernel(tmp_path)
    shutil.rmtree(kernel / "vendor" / "libm-0.2.1")
    lock = (kernel / "Cargo.lock").read_text()
    with pytest.raises(BuildTomlError) as caught:
        rust.check_vendored(_crate(kernel))
    line = lock.splitlines().index('name = "libm"') + 1
    assert f"Cargo.lock:{line}:8: package[1].name: crate libm 0.2.1 is not vendored (vendor/ has no libm package)" in caught.value.message
    assert "add-rs/Cargo.toml:" in caught.value.message  # the manifest's libm too


def test_a_missing_lock_and_a_git_dependency_are_refused(tmp_path: Path) -> None:
    kernel = _kernel(tmp_path)
    (kernel / "Cargo.lock").unlink()
    with pytest.raises(BuildError, match=r"Cargo.lock is missing: cargo builds the crate --locked, offline") as caught:
        rust.check_vendored(_crate(kernel))
    assert "generate-lockfile --offline" in (caught.value.hint or "")
    manifest = kernel / "add-rs" / "Cargo.toml"
    manifest.write_text(manifest.read_text() + 'tvm-ffi = { git = "https://github.com/apache/tvm-ffi.git" }\n')
    with pytest.raises(BuildTomlError, match="crate tvm-ffi is a git dependency, which cannot be fetched in the build"):
        rust.check_vendored(_crate(kernel))


def test_no_rust_toolchain_says_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="no Rust toolchain was found") as caught:
        rust.locate({"PATH": str(tmp_path)})
    assert "rustc-web cargo-web" in (caught.value.hint or "")
    with pytest.raises(BuildError, match=r"\$KERNEL_BUILDER_RUST: .* has no cargo, rustc in bin/"):
        rust.locate({rust.ENV_VAR: str(tmp_path)})


OXIDE = """[general]
name = "relu-oxide"
version = 1
edition = 6
license = "Apache-2.0"
backends = ["cpu", "cuda"]

[tvm-ffi]

[kernel.relu_cpu]
language = "rust-cpu"
src = ["Cargo.toml", "Cargo.lock", "relu-rs"]
cargo-manifest = "relu-rs/Cargo.toml"

[kernel.relu_cuda]
language = "LANG"
src = ["Cargo.toml", "Cargo.lock", "relu-cuda"]
cargo-manifest = "relu-cuda/Cargo.toml"
EXTRA"""


@pytest.mark.parametrize(("language", "extra", "words"), [
    ("rust-cuda-oxide", "", "rustc-codegen-cuda, published only on GitHub in drbh/cuda-oxide"),
    ("rust-cutile", 'tileiras-minver = "13.2"\n', "cuTile Rust crates (published on crates.io"),
])
def test_gpu_rust_languages_validate_and_say_why_they_are_not_built_here(tmp_path: Path, language: str, extra: str, words: str) -> None:
    from kernels._rust import Build

    text = OXIDE.replace("LANG", language).replace("EXTRA", extra)
    (tmp_path / "build.toml").write_text(text)
    Build.open(str(tmp_path))  # upstream's parser accepts it
    build = loads(text)
    assert build.kernels["relu_cuda"].language.value == language
    reason = rust.unbuildable_reason(build, "cuda")
    assert reason is not None and f"[kernel.relu_cuda] is {language}: it needs" in reason and words in reason
    assert rust.unbuildable_reason(build, "cpu") is None
    assert "pins no Rust" in (rust.unbuildable_reason(build, "cpu", rust_pinned=False) or "")
    listed = kernel_builder("list-variants", str(tmp_path), "--json", env=dict(os.environ))
    variants = {v["name"]: v for v in json.loads(listed.stdout)}
    assert variants[VARIANT]["local"] is True
    cuda = [v for n, v in variants.items() if "-cu1" in n]
    assert cuda and not any(v["local"] for v in cuda)
    # the CUDA build sets the lock pins (cu130, cu132) are out for the language's compiler alone
    pinned = [v for n, v in variants.items() if n.endswith(("-cu130-x86_64-linux", "-cu132-x86_64-linux"))]
    assert len(pinned) == 2 and all(words in v["why_not_here"] for v in pinned)
    # the build says the same, before anything is compiled
    with pytest.raises(BuildError, match=f"the cuda variants are not built here: build.toml .*{language}"):
        rust.build_components(build, "cuda", tmp_path, tmp_path / "work", environ={})


def test_the_nix_reason_and_the_python_reason_are_one_table() -> None:
    expr = f"(import {REPO}/nix/lib/pure/languages.nix).unavailable"
    nix_side = json.loads(nix.run_nix(["eval", "--impure", "--json", "--expr", expr]).stdout)
    assert nix_side == {language.value: text for language, text in rust.UNAVAILABLE.items()}


def test_the_nix_build_of_a_rust_variant_is_one_derivation_with_the_pinned_rust(tmp_path: Path) -> None:
    from kernel_builder.flake.kernel_flake import prepare_kernel_flake

    kernel = copy_kernel("add-rust", tmp_path / "add-rust", git=False)
    prepared = prepare_kernel_flake(kernel, state=tmp_path / "state")
    attr = f"redistributable.{VARIANT}"
    rust_path = nix.eval_json(prepared.installable(f"{attr}.KERNEL_BUILDER_RUST"), flake_args=prepared.flake_args)
    assert rust_path.endswith("-kb-rust")
    # no plan/objects/link split: cargo runs before CMake in the one derivation
    split = nix.run_nix(["eval", "--json", *prepared.flake_args, prepared.installable(attr), "--apply", "d: d ? prebuiltModule"])
    assert json.loads(split.stdout) is False


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_example_builds_hermetically_and_kernels_runs_it(tmp_path: Path) -> None:
    kernel = copy_kernel("add-rust", tmp_path / "add-rust", git=False, salt=True)
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    done = kernel_builder("build", str(kernel), "--variant", VARIANT, "-j", "1", "--cores", "2", "-L", env=env)
    assert "[kernel.add_rust]: cargo builds add-rs/Cargo.toml (library add_rs)" in done.stderr, done.stderr[-3000:]
    assert f"{VARIANT}: registered ops: add, gelu" in done.stderr, done.stderr[-3000:]
    variant = kernel / "build" / VARIANT
    metadata = json.loads((variant / "metadata.json").read_text())
    ops_id = metadata["id"]
    assert ops_id.startswith("_add_rust_cpu_") and metadata["backend"] == {"type": "cpu"}
    assert sorted(p.name for p in variant.iterdir()) == sorted(
        ["__init__.py", "_ops.py", "metadata.json", "symbols.json", f"{ops_id}.so"])
    module = variant / f"{ops_id}.so"
    assert list(kernel_abi_check.ObjectFile(str(module)).check_manylinux("manylinux_2_28")) == []
    exported = subprocess.run(["nm", "-D", "--defined-only", str(module)], capture_output=True, text=True, check=True).stdout
    # the Rust functions are the module's; the Rust standard library's symbols are not exported
    assert " T add_rs_add" in exported and " T add_rs_gelu" in exported and " T __tvm_ffi_gelu" in exported
    assert "_ZN3std" not in exported and "17h" not in exported
    assert module.stat().st_size < 8 << 20  # the standard library's debug information is left out
    for path in variant.rglob("*"):
        assert b"/nix/store/" not in path.read_bytes(), path
        assert b"/build/kernel-builder" not in path.read_bytes(), path  # the sandbox's scratch directory
    site = pinned_tvm_ffi_site()
    env_run = {k: v for k, v in os.environ.items() if k != "PYTHONHOME"} | {"PYTHONPATH": str(site)}
    out = subprocess.run([PYTHON, "-c", (
        "import json, math, torch, numpy as np\n"
        "from pathlib import Path\n"
        "from kernels import get_local_kernel\n"
        f"k = get_local_kernel(Path({str(kernel / 'build')!r}))\n"
        "a = torch.arange(-4, 4, dtype=torch.float32); out = torch.empty_like(a)\n"
        "k.add(a, torch.ones(8), out)\n"
        "x = np.array([-1.0, 0.0, 2.0], dtype=np.float32); y = np.empty_like(x); k.gelu(x, y)\n"
        "print(json.dumps([out.tolist(), y.tolist(), k.__file__]))\n"
    )], capture_output=True, text=True, env=env_run, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    added, gelu, where = json.loads(out.stdout.strip().splitlines()[-1])
    assert added == [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0] and VARIANT in where
    assert gelu == pytest.approx([-0.15865526, 0.0, 1.9544997], rel=1e-6)
    tests = subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(kernel / "tests")],
        capture_output=True, text=True, check=False, cwd=kernel,
        env={**env_run, "KERNEL_BUILD_DIR": str(kernel / "build")},
    )
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_nix_build_stops_at_an_unvendored_crate_naming_it(tmp_path: Path) -> None:
    kernel = copy_kernel("add-rust", tmp_path / "add-rust", git=False, salt=True)
    manifest = kernel / "add-rs" / "Cargo.toml"
    manifest.write_text(manifest.read_text() + 'rayon = "1"\n')
    line = manifest.read_text().splitlines().index('rayon = "1"') + 1
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    done = kernel_builder("build", str(kernel), "--variant", VARIANT, "-j", "1", "--cores", "2", env=env, check=False)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert f"add-rs/Cargo.toml:{line}:1: dependencies.rayon: crate rayon is not vendored" in output, output[-3000:]
