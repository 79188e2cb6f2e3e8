"""`kernel-builder init`: the scaffold builds (--local), its own tests pass, and Nix
evaluates the same variants as the Python matrix."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.cli.init import DEFAULT_BUILDER_URL, INIT_BACKENDS, scaffold_files
from kernel_builder.config import load, loads
from kernel_builder.errors import ConfigError
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from kernel_builder.variants.buildsets import load_build_sets
from kernel_builder.variants.matrix import matrix
from nix_support import PYTHON, flake_variants, kernel_builder


def test_scaffold_files_are_a_valid_edition_6_kernel() -> None:
    files = scaffold_files("my-org/Fancy_Op", ["cpu", "cuda"], "MIT", "path:/x")
    build = loads(files["build.toml"], path=Path("build.toml"))
    assert "\nedition = 6\n" in files["build.toml"] and "backend = " not in files["build.toml"]
    assert {k.language.value for k in build.kernels.values()} == {"cpp-cpu", "cpp-cuda"}
    assert build.general.name == "fancy-op" and build.general.license == "MIT"
    assert build.general.hub.repo_id == "my-org/Fancy_Op"
    assert sorted(files) == sorted([
        "build.toml", "flake.nix", ".gitignore", "CARD.md", "torch-ext/torch_binding.h", "torch-ext/torch_binding.cpp",
        "torch-ext/fancy_op/__init__.py", "tests/test_fancy_op.py", "fancy_op_cpu/fancy_op_cpu.cpp",
        "fancy_op_cuda/fancy_op_cuda.cu", "benchmarks/benchmark_fancy_op.py", ".github/workflows/kernel.yml",
    ])
    assert '__all__ = ["fancy_op"]' in files["torch-ext/fancy_op/__init__.py"]
    assert 'inputs.kernel-builder.url = "path:/x";' in files["flake.nix"]
    assert "genKernelFlakeOutputs" in files["flake.nix"]


@pytest.mark.parametrize("noarch", [False, True])
def test_kernels_0_19_reads_what_init_writes(tmp_path: Path, noarch: bool) -> None:
    """PyPI kernels 0.19.1 (`kernels._rust.Build.open`, upstream's parser) accepts the
    edition-6 build.toml of every backend init scaffolds, with the same backends."""
    from kernels._rust import Build

    backends = ["cpu", "cuda", "rocm", "xpu", "metal"]
    files = scaffold_files("o/all-ops", backends, "Apache-2.0", "path:/x", noarch=noarch)
    (tmp_path / "build.toml").write_text(files["build.toml"])
    reference = Build.open(str(tmp_path))
    assert sorted(str(b).lower().removeprefix("backend.") for b in reference.general.backends) == sorted(backends)
    ours = loads(files["build.toml"], path=Path("build.toml"))
    assert sorted(b.value for b in ours.general.backends) == sorted(backends)
    assert "\nedition = 6\n" in files["build.toml"]


@pytest.mark.parametrize(
    ("repo_id", "backends", "message"),
    [("no-slash", ["cpu"], "--name must look like ORG/NAME"), ("o/rk", ["tpu"], "cannot scaffold backend"), ("o/rk", [], "cannot scaffold")],
)
def test_scaffold_rejects_bad_arguments(repo_id: str, backends: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        scaffold_files(repo_id, backends, "Apache-2.0", "path:/x")


def test_scaffold_has_every_upstream_backend() -> None:
    """cpu, cuda, rocm (the CUDA source as HIP), xpu (SYCL) and metal (MPS): a valid
    build.toml with one kernel per backend, each source present, each registered for its
    device; the matrix lists their variants (only cpu and cuda build here)."""
    files = scaffold_files("o/all-ops", list(INIT_BACKENDS), "Apache-2.0", "path:/x")
    build = loads(files["build.toml"], path=Path("build.toml"))
    kernels = {k.backend.value: list(k.src) for k in build.kernels.values()}
    assert kernels == {
        "cpu": ["all_ops_cpu/all_ops_cpu.cpp"], "cuda": ["all_ops_cuda/all_ops_cuda.cu"],
        "rocm": ["all_ops_cuda/all_ops_cuda.cu"], "xpu": ["all_ops_xpu/all_ops_xpu.cpp"],
        "metal": ["all_ops_metal/all_ops_metal.mm"],
    }
    assert all(src in files for srcs in kernels.values() for src in srcs)
    binding = files["torch-ext/torch_binding.cpp"]
    for key in ("c10::kCPU", "c10::kCUDA", "c10::kXPU", "c10::kMPS"):
        assert key in binding
    assert "c10::hip::getCurrentHIPStream" in files["all_ops_cuda/all_ops_cuda.cu"]
    names = [v.name for v in matrix(build, load_build_sets(), "x86_64-linux").variants]
    assert any("-rocm" in n for n in names) and any("-xpu" in n for n in names)
    assert [v.name for v in matrix(build, load_build_sets(), "aarch64-darwin").variants if "metal" in v.name]


def test_a_noarch_scaffold_is_pure_python() -> None:
    files = scaffold_files("o/noop", ["cpu", "cuda"], "Apache-2.0", "path:/x", noarch=True)
    build = loads(files["build.toml"], path=Path("build.toml"))
    assert not build.kernels and "[torch-noarch]" in files["build.toml"]
    assert not [rel for rel in files if rel.endswith((".cpp", ".cu", ".h", ".mm"))]
    names = [v.name for v in matrix(build, load_build_sets(), "x86_64-linux").variants]
    assert names == ["torch-cpu", "torch-cuda"]
    assert "tests/test_noop.py" in files and ".github/workflows/kernel.yml" in files


def test_the_default_builder_input_is_no_local_path() -> None:
    """flake.nix names where kernel-builder is published, not this machine's checkout; build
    and test override it (the comment says so)."""
    files = scaffold_files("o/kk", ["cpu"], "Apache-2.0", DEFAULT_BUILDER_URL)
    assert f'inputs.kernel-builder.url = "{DEFAULT_BUILDER_URL}";' in files["flake.nix"]
    assert "file://" not in files["flake.nix"] and "--override-input kernel-builder" in files["flake.nix"]


def test_the_workflow_builds_tests_caches_and_uploads() -> None:
    import yaml  # lazy: only this test reads YAML

    workflow = yaml.safe_load(scaffold_files("o/kk", ["cpu"], "Apache-2.0", "path:/x")[".github/workflows/kernel.yml"])
    steps = workflow["jobs"]["build-and-test"]["steps"]
    runs = {step.get("name"): step.get("run", "") for step in steps}
    assert "kernel-builder build ." in runs["Build"] and "--cache" in runs["Build"]
    assert runs["Test"].startswith("kernel-builder test .")
    assert "kernel-builder cache push" in runs["Push to the binary cache"]
    assert "kernel-builder upload . --repo-id o/kk" in runs["Upload to the Hub"]
    upload = next(step for step in steps if step.get("name") == "Upload to the Hub")
    assert "refs/tags/v" in upload["if"]


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    env = dict(os.environ)
    kernel_builder("init", str(tmp_path / "k"), "--name", "o/kk", "--backends", "cpu", "--no-git", env=env)
    done = kernel_builder("init", str(tmp_path / "k"), "--name", "o/kk", "--backends", "cpu", env=env, check=False)
    assert done.returncode == 3 and "already has: " in done.stderr and "--overwrite" in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_scaffold_builds_and_its_tests_pass(tmp_path: Path) -> None:
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    kernel = tmp_path / "my-kernel"
    done = kernel_builder("init", str(kernel), "--name", "test-org/my-kernel", "--backends", "cpu,cuda", env=env)
    assert "git repository initialised" in done.stderr
    staged = subprocess.run(["git", "-C", str(kernel), "ls-files"], capture_output=True, text=True).stdout.split()
    assert "build.toml" in staged and "flake.nix" in staged
    kernel_builder("build", str(kernel), "--local", env=env)
    tests = subprocess.run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=kernel, capture_output=True, text=True, env=env)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "4 passed" in tests.stdout
    # and Nix sees the same variants as the Python matrix
    os.environ["KERNEL_BUILDER_STATE_DIR"] = env["KERNEL_BUILDER_STATE_DIR"]
    try:
        prepared = prepare_kernel_flake(kernel)
        variants = nix.eval_json(prepared.installable("variants"), flake_args=prepared.flake_args)
    finally:
        os.environ.pop("KERNEL_BUILDER_STATE_DIR", None)
    assert variants == [v.name for v in flake_variants(load(kernel), load_build_sets(), "x86_64-linux")]
    assert "torch214-cxx11-cu130-x86_64-linux" in variants


def _workflow_script(kernel: Path) -> str:
    """The `run:` steps of the scaffold's workflow as one bash script, the way the runner
    runs them (each step `bash -e`), leaving out the pip install (this checkout is used) and
    the steps whose `if:` does not hold without a cache secret or a tag."""
    import yaml  # lazy: only these tests read YAML

    steps = yaml.safe_load((kernel / ".github" / "workflows" / "kernel.yml").read_text())["jobs"]["build-and-test"]["steps"]
    parts = []
    for step in steps:
        if "run" not in step or step["name"] == "Install kernel-builder":
            continue
        condition = step.get("if", "")
        if "NIX_CACHE_SECRET_KEY" in condition or "refs/tags/v" in condition:
            continue
        parts.append(f"echo '::step {step['name']}'\n( set -e\n{step['run']}\n)")
    return "set -e\n" + "\n".join(parts) + "\n"


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_init_then_the_workflow_steps_build_and_test_the_cpu_variants(tmp_path: Path) -> None:
    """A fresh scaffold, its workflow's steps run as a script (CPU variants only, through
    the KERNEL_BUILD_ARGS hook): build, `kernel-builder test` (its tests compare the kernel
    with torch, in the sandbox) and check all pass."""
    from nix_support import REPO, snapshot_builder

    state = tmp_path / "state"
    env = {
        **os.environ, "KERNEL_BUILDER_STATE_DIR": str(state), "KERNEL_BUILDER_ROOT": str(snapshot_builder(tmp_path / "builder")),
        "PYTHONPATH": str(REPO / "python"), "KERNEL_BUILD_ARGS": "--backend cpu", "NIX_CACHE_URL": "", "HF_TOKEN": "",
    }
    env["PATH"] = f"{Path(PYTHON).parent}:{env['PATH']}"  # the venv's kernel-builder program
    kernel = tmp_path / "my-kernel"
    kernel_builder("init", str(kernel), "--name", "test-org/my-kernel", "--backends", "cpu,cuda", env=env)
    done = subprocess.run(["bash", "-c", _workflow_script(kernel)], cwd=kernel, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    out = done.stdout + done.stderr
    for variant in ("torch213-cxx11-cpu-x86_64-linux", "torch214-cxx11-cpu-x86_64-linux"):
        assert f"{variant}: 4 passed" in out and (kernel / "build" / variant / "metadata.json").is_file()
    assert "::step Check" in out and "FAILED" not in out


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_init_noarch_then_kernel_builder_test_passes_for_torch_cpu(tmp_path: Path) -> None:
    from nix_support import REPO, snapshot_builder

    env = {
        **os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state"),
        "KERNEL_BUILDER_ROOT": str(snapshot_builder(tmp_path / "builder")), "PYTHONPATH": str(REPO / "python"),
    }
    kernel = tmp_path / "noop"
    kernel_builder("init", str(kernel), "--name", "test-org/noop", "--backends", "cpu,cuda", "--noarch", env=env)
    done = kernel_builder("test", str(kernel), env=env)
    assert "torch-cpu: 4 passed" in done.stderr
    # the CUDA variant's device tests are skipped for want of a GPU, never passed
    assert "torch-cuda: 1 passed, 3 skipped" in done.stderr and "needs a GPU (none here)" in done.stderr
