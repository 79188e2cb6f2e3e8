"""`build-and-upload` (CLI and flake app) publishes what `build` + `upload` publish, and the
flake's `build-and-copy` and test shell work (real nix builds, the local Hub server).

The relu copy's flake keeps only the torch 2.13 CPU build set on x86_64-linux (`torchVersions`), so the
bundle the flake apps build is one small variant.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from nix_support import REPO, copy_kernel, environ_set, kernel_builder, make_dirty, snapshot_builder

pytestmark = pytest.mark.slow

CPU213 = "torch213-cxx11-cpu-x86_64-linux"
TOKEN = "hf_build_and_upload_test_token"
# x86_64-linux only: the aarch64 one (cross-built here) is test_cross_aarch64's
ONLY_CPU213 = (
    'torchVersions = all: builtins.map (v: v // { systems = builtins.filter (s: s == "x86_64-linux") v.systems; })'
    ' (builtins.filter (v: v ? cpu && v.torchVersion == "2.13") all);'
)


@pytest.fixture(scope="module")
def builder(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    state = tmp_path_factory.mktemp("kb-state")
    root = snapshot_builder(tmp_path_factory.mktemp("builder"))
    pinned = {"KERNEL_BUILDER_STATE_DIR": str(state), "KERNEL_BUILDER_ROOT": str(root)}
    with environ_set(pinned):
        yield pinned


@pytest.fixture(scope="module")
def relu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    kernel = copy_kernel("relu", tmp_path_factory.mktemp("relu") / "relu")
    flake = kernel / "flake.nix"
    flake.write_text(flake.read_text().replace("path = ./.; }", f"path = ./.; {ONLY_CPU213} }}"))
    make_dirty(kernel)
    return kernel


def _env(builder: dict[str, str]) -> dict[str, str]:
    return {**os.environ, **builder, "PYTHONPATH": str(REPO / "python"), "HF_TOKEN": TOKEN}


def _variant_files(hub, repo_id: str) -> dict[str, bytes]:
    return {path: data for path, data in hub.files(repo_id, "v1").items() if path.startswith("build/")}


@pytest.mark.timeout(900)
def test_cli_build_and_upload_publishes_what_build_and_upload_do(relu: Path, builder: dict[str, str], hub_server) -> None:
    env = _env(builder)
    kernel_builder("build-and-upload", str(relu), "--backend", "cpu", "--repo-id", "org/relu-one-step", env=env)
    kernel_builder("build", str(relu), "--backend", "cpu", env=env)
    kernel_builder("upload", str(relu), "--repo-id", "org/relu-two-steps", env=env)
    one = _variant_files(hub_server, "org/relu-one-step")
    assert any(path.startswith(f"build/{CPU213}/") for path in one)
    assert one == _variant_files(hub_server, "org/relu-two-steps")


@pytest.mark.timeout(900)
def test_flake_apps_build_and_copy_and_build_and_upload(relu: Path, builder: dict[str, str], hub_server) -> None:
    env = _env(builder)
    prepared = prepare_kernel_flake(relu)
    nix_env = nix.nix_env(env, sandbox=True)
    copy = subprocess.run(
        nix.nix_argv("run", *prepared.flake_args, prepared.installable("build-and-copy")),
        cwd=relu, env=nix_env, capture_output=True, text=True, check=False,
    )
    assert copy.returncode == 0, copy.stderr[-3000:]
    assert "build-and-copy: copied 1 variant(s) of relu into ./build" in copy.stderr
    assert (relu / "build" / CPU213 / "metadata.json").is_file()
    upload = subprocess.run(
        nix.nix_argv("run", *prepared.flake_args, prepared.installable("build-and-upload")),
        cwd=relu, env=nix_env, capture_output=True, text=True, check=False,
    )
    assert upload.returncode == 0, upload.stderr[-3000:]
    kernel_builder("upload", str(relu), "--repo-id", "org/relu-two-steps", env=env)
    app = _variant_files(hub_server, "kernels-test/relu")  # the repo id of relu's build.toml
    assert any(path.startswith(f"build/{CPU213}/") for path in app)
    assert app == _variant_files(hub_server, "org/relu-two-steps")


@pytest.mark.timeout(900)
def test_the_test_shell_imports_the_built_variant_and_has_pytest(relu: Path, builder: dict[str, str]) -> None:
    prepared = prepare_kernel_flake(relu)
    done = subprocess.run(
        nix.nix_argv(
            "develop", *prepared.flake_args, prepared.installable("devShells.x86_64-linux.test"), "--command", "bash", "-c",
            'python -c "import relu, torch; print(relu.relu(torch.tensor([-1.0, 2.0])).tolist())" && pytest --version',
        ),
        cwd=relu, env=nix.nix_env(sandbox=True), capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "[0.0, 2.0]" in done.stdout
    assert "pytest" in done.stdout + done.stderr
    assert f"kernel-builder test shell: relu {CPU213}" in done.stderr


@pytest.mark.timeout(900)
def test_cli_testshell_runs_the_kernel_tests_and_devshell_has_the_toolchain(relu: Path, builder: dict[str, str]) -> None:
    env = _env(builder)
    done = kernel_builder("testshell", str(relu), "--variant", CPU213, "-c", "pytest -q -p no:cacheprovider tests", env=env)
    assert "5 passed" in done.stdout
    done = kernel_builder("devshell", str(relu), "-c", 'echo "variant=$variant cxx=$CXX"', env=env)
    assert f"variant={CPU213} cxx=/nix/store/" in done.stdout
    refused = kernel_builder("testshell", str(relu), "--variant", "torch214-cxx11-cu130-x86_64-linux", env=env, check=False)
    assert refused.returncode == 3 and "unknown variant" in refused.stderr


@pytest.mark.timeout(900)
def test_the_ci_output_builds_variants_checks_and_tests(relu: Path, builder: dict[str, str]) -> None:
    prepared = prepare_kernel_flake(relu)
    done = subprocess.run(
        nix.nix_argv("build", "--json", "--no-link", *prepared.flake_args, prepared.installable("ci")),
        cwd=relu, env=nix.nix_env(sandbox=True), capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = Path(json.loads(done.stdout)[0]["outputs"]["out"])
    assert sorted(p.name for p in out.iterdir()) == [CPU213, f"{CPU213}-check", f"{CPU213}-tests"]
    assert "kernel tests passed" in (out / f"{CPU213}-tests").read_text()
