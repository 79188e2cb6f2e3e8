"""Real `nix build`s of the examples through `kernel-builder build` and `nix run .#build-variants`.

One relu copy is shared by the tests of this module, in order: build the CPU variants,
rebuild with nothing changed (Nix builds nothing), build the cu130 variants with
`nix run .#build-variants`, then edit a CPU-only source (only CPU variants are stale).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from nix_support import (
    PINNED_RELU, PINNED_RELU_BUILT, PINNED_RELU_CPU, PINNED_RELU_CUDA, PYTHON, copy_kernel, dry_run, environ_set, kernel_builder, make_dirty,
    run_with_kernels, snapshot_builder, torch214_python,
)

pytestmark = pytest.mark.slow

CPU213 = "torch213-cxx11-cpu-x86_64-linux"

LOAD_RELU = """
import json, torch
from kernels import get_local_kernel
kernel = get_local_kernel(__import__("pathlib").Path({path!r}))
x = torch.randn(257, dtype=torch.float32)
assert torch.equal(kernel.relu(x), torch.relu(x))
print(json.dumps({{"torch": torch.__version__, "module": kernel.__name__}}))
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    state = tmp_path_factory.mktemp("kb-state")
    builder = snapshot_builder(tmp_path_factory.mktemp("builder"))
    pinned = {"KERNEL_BUILDER_STATE_DIR": str(state), "KERNEL_BUILDER_ROOT": str(builder)}
    environ = {**os.environ, **pinned}
    environ.pop("PYTHONPATH", None)
    kernel_builder("toolchain", "discover", "--python", torch214_python(state), env=environ)
    with environ_set(pinned):  # for the in-process prepare_kernel_flake
        yield environ


@pytest.fixture(scope="module")
def relu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    kernel = copy_kernel("relu", tmp_path_factory.mktemp("relu") / "relu", salt=True)
    make_dirty(kernel)
    return kernel


def toolchain_pythons(kernel: Path) -> dict[str, str]:
    """Variant -> the pinned environment's Python (torch of that variant, from the store)."""
    prepared = prepare_kernel_flake(kernel)
    table = nix.eval_json(prepared.installable("variantTable"), flake_args=prepared.flake_args)
    return {row["name"]: row["toolchainPython"] for row in table if row["buildable"]}


def torch_of(variant: str) -> str:
    """``torch212-cxx11-cpu-x86_64-linux`` -> ``2.12``."""
    return f"{variant[5]}.{variant[6:8]}"


def _build_json(kernel: Path, env: dict[str, str], *args: str) -> tuple[dict[str, dict], str]:
    done = kernel_builder("build", str(kernel), "--json", *args, env=env)
    return {row["variant"]: row for row in json.loads(done.stdout)}, done.stderr


@pytest.mark.timeout(600)
def test_build_cpu_variants_load_with_pypi_kernels(relu: Path, env: dict[str, str]) -> None:
    # this machine's system only: the cross-built aarch64 ones cannot load here (test_cross_aarch64)
    rows, stderr = _build_json(relu, env, "--backend", "cpu", "--system", "x86_64-linux")
    assert {name: row["status"] for name, row in rows.items()} == {name: "built" for name in PINNED_RELU_CPU}
    assert "not hermetic" not in stderr  # the pinned toolchains, in the sandbox, are the default
    assert "nix -j 2" in stderr
    pythons = toolchain_pythons(relu)
    for name in PINNED_RELU_CPU:  # each with PyPI kernels on its own torch (the pinned environment's)
        metadata = json.loads((relu / "build" / name / "metadata.json").read_text())
        assert metadata["digest"]["algorithm"] == "sha256"
        loaded = json.loads(run_with_kernels(pythons[name], LOAD_RELU.format(path=str(relu / "build" / name))).splitlines()[-1])
        assert loaded["module"] == metadata["id"]
        assert loaded["torch"].startswith(torch_of(name) + ".")


def test_second_build_builds_nothing(relu: Path, env: dict[str, str]) -> None:
    rows, stderr = _build_json(relu, env, "--backend", "cpu", "--system", "x86_64-linux")
    assert {row["status"] for row in rows.values()} == {"cached"}
    assert f"{len(PINNED_RELU_CPU)} variant(s): {len(PINNED_RELU_CPU)} already in the store; results in" in stderr
    prepared = prepare_kernel_flake(relu)
    installables = [prepared.installable(f"redistributable.{v}") for v in PINNED_RELU_CPU]
    assert dry_run(installables, flake_args=prepared.flake_args) == []


def test_checks_outputs_run_kernel_builder_check_on_each_variant(relu: Path, env: dict[str, str]) -> None:
    prepared = prepare_kernel_flake(relu)
    checks = {f"{v}-check": prepared.installable(f"checks.x86_64-linux.{v}") for v in PINNED_RELU_CPU}
    report = nix.build(checks, nix.NixOptions(max_jobs=2), flake_args=prepared.flake_args)
    assert report.returncode == 0, report.errors
    assert {key: Path(out).read_text().strip() for key, out in report.outputs.items()} == {
        f"{v}-check": f"{v}: checks passed" for v in PINNED_RELU_CPU
    }


@pytest.mark.timeout(1800)
def test_nix_run_build_variants_builds_the_cu130_variants(relu: Path, env: dict[str, str]) -> None:
    (relu / "build" / "torch199-stale-variant").mkdir()
    prepared = prepare_kernel_flake(relu)
    done = nix.run_nix(["run", "-j", "2", "--cores", "2", *prepared.flake_args, prepared.installable("build-variants")], cwd=str(relu))
    assert f"copied {len(PINNED_RELU_BUILT)} variant(s)" in done.stderr  # the aarch64 ones too (cross-built)
    assert sorted(p.name for p in (relu / "build").iterdir()) == sorted(["CARD.md", *PINNED_RELU_BUILT, "torch199-stale-variant"])
    pythons = toolchain_pythons(relu)
    for name in PINNED_RELU_CUDA:
        metadata = json.loads((relu / "build" / name / "metadata.json").read_text())
        assert metadata["backend"]["type"] == "cuda" and metadata["backend"]["archs"]
        # No GPU here: loading the library registers the ops, which is what can be checked.
        code = f"""
import importlib.util, json, sys, torch
path = {str(relu / 'build' / name)!r}
spec = importlib.util.spec_from_file_location({metadata['id']!r}, path + "/__init__.py", submodule_search_locations=[path])
module = importlib.util.module_from_spec(spec); sys.modules[spec.name] = module; spec.loader.exec_module(module)
print(json.dumps([torch.__version__, hasattr(getattr(torch.ops, {metadata['id']!r}), "relu")]))
"""
        version, registered = json.loads(run_with_kernels(pythons[name], code).strip().splitlines()[-1])
        assert version.startswith(torch_of(name) + ".") and registered is True


def test_cpu_only_edit_rebuilds_only_cpu_variants(relu: Path, env: dict[str, str]) -> None:
    prepared = prepare_kernel_flake(relu)
    everything = [prepared.installable(f"redistributable.{v}") for v in PINNED_RELU]
    assert dry_run(everything, flake_args=prepared.flake_args) == []
    source = relu / "relu_cpu" / "relu_cpu.cpp"
    source.write_text(source.read_text() + "\n// a comment changes the CPU variants only\n")
    prepared = prepare_kernel_flake(relu)
    everything = [prepared.installable(f"redistributable.{v}") for v in PINNED_RELU]
    stale = dry_run(everything, flake_args=prepared.flake_args)
    # per object (docs/nix.md): the edited source's object, the link and the variant, per CPU variant
    assert sorted(Path(p).name.split("-", 1)[1] for p in stale) == sorted(
        name for v in PINNED_RELU_CPU
        for name in (f"relu-{v}.drv", f"relu-{v}-link.drv", f"0-obj-relu-{v}-relu_cpu-relu_cpu.cpp.drv"))


@pytest.mark.timeout(600)
def test_silu_and_mul_noarch_variants_via_nix_run(tmp_path: Path, env: dict[str, str]) -> None:
    kernel = copy_kernel("silu-and-mul", tmp_path / "silu-and-mul", salt=True)
    # plain `nix run`, with the arguments `kernel-builder build --print-nix-args` prints
    args = kernel_builder("build", str(kernel), "--print-nix-args", env=env).stdout.split()
    assert args[:2] == ["--override-input", "kernel-builder"] and args[-1] == "--no-write-lock-file"
    done = subprocess.run(
        ["nix", "run", "-j", "2", "--cores", "1", *args, ".#build-variants"],
        cwd=kernel, env=nix.nix_env(env), capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "copied 2 variant(s)" in done.stderr
    assert sorted(p.name for p in (kernel / "build").iterdir()) == ["CARD.md", "torch-cpu", "torch-cuda"]
    # no CARD.md in the kernel: the bundle renders the default card, as upload would
    card = (kernel / "build" / "CARD.md").read_text()
    assert card.startswith("---\nlibrary_name: kernels\n") and "{{" not in card and "{%" not in card
    assert 'get_kernel("' in card and "silu_and_mul" in card
    code = f"""
import torch
from pathlib import Path
from kernels import get_local_kernel
kernel = get_local_kernel(Path({str(kernel / 'build' / 'torch-cpu')!r}))
x = torch.randn(4, 64)
d = x.shape[-1] // 2
expected = torch.nn.functional.silu(x[..., :d]) * x[..., d:]
name = [n for n in kernel.__all__ if n != "layers"][0]
torch.testing.assert_close(getattr(kernel, name)(x), expected)
print("ok")
"""
    assert run_with_kernels(PYTHON, code).strip().endswith("ok")


def test_builders_option_reaches_nix(tmp_path: Path, env: dict[str, str]) -> None:
    kernel = copy_kernel("silu-and-mul", tmp_path / "silu", git=False, salt=True)
    # new content, so the derivation is not already in the store and nix must build it
    (kernel / "torch-ext" / "silu_and_mul" / "_salt.py").write_text(f"SALT = {str(tmp_path)!r}\n")
    done = kernel_builder(
        "build", str(kernel), "--variant", "torch-cpu", "-j", "0", "--builders", "ssh://kb-no-such-host x86_64-linux",
        env=env, check=False,
    )
    assert done.returncode != 0
    # nix's own build hook tried the remote machine (not just our echo of the command),
    # and the error names it with nix's reason
    assert "no remote builder could take the build" in done.stderr
    assert "ssh://kb-no-such-host: cannot connect to 'kb-no-such-host'" in done.stderr


@pytest.mark.timeout(600)
def test_failed_variant_shows_its_first_error_and_keeps_the_others(tmp_path: Path, env: dict[str, str]) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", git=False, salt=True)
    # cuda becomes noarch (no [kernel.*] for it): a quick variant that succeeds
    text = (kernel / "build.toml").read_text()
    (kernel / "build.toml").write_text(text.split("[kernel.relu_cuda]")[0])
    broken = kernel / "relu_cpu" / "relu_cpu.cpp"
    broken.write_text(broken.read_text() + "\nthis is not C++;\n")
    done = kernel_builder("build", str(kernel), "--variant", CPU213, "--variant", "torch-cuda", "--json", env=env, check=False)
    assert done.returncode == 4
    rows = {row["variant"]: row for row in json.loads(done.stdout)}
    assert rows[CPU213]["status"] == "failed" and rows["torch-cuda"]["status"] == "built"
    assert (kernel / "build" / "torch-cuda" / "metadata.json").is_file()
    assert not (kernel / "build" / CPU213).exists()
    assert "relu_cpu.cpp" in done.stderr and "this is not C++" in done.stderr  # the first error, with its excerpt
    # the log to read is the failed object's (per object: docs/nix.md)
    assert "nix --extra-experimental-features nix-command log /nix/store/" in done.stderr
    assert f"0-obj-relu-{CPU213}-relu_cpu-relu_cpu.cpp.drv" in done.stderr


@pytest.mark.timeout(600)
def test_host_toolchain_is_an_explicit_opt_in(tmp_path: Path, env: dict[str, str]) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", salt=True)
    rows, stderr = _build_json(kernel, env, "--variant", CPU213, "--toolchain", "host")
    assert rows[CPU213]["status"] == "built"
    assert "host toolchain (not hermetic)" in stderr
    drv = rows[CPU213]["drv"]
    shown = json.loads(nix.run_nix(["show-derivation", drv]).stdout)[drv]
    assert shown["builder"] == "/bin/bash" and shown["env"]["toolchainProvider"] == "host"
    loaded = json.loads(run_with_kernels(PYTHON, LOAD_RELU.format(path=str(kernel / "build" / CPU213))).splitlines()[-1])
    assert loaded["torch"].startswith("2.13")
