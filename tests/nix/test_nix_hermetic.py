"""Hermetic builds: pinned toolchains in the store, variants built inside the Nix sandbox.

Everything here runs plain Nix with only the offline settings and ``sandbox = true`` (no
override arguments, no recorded machine state), as a new user would after
``kernel-builder toolchain fetch`` (which `.ci/setup` runs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import kernel_abi_check
import pytest

from kernel_builder import nix
from kernel_builder.toolchain.pinned.lockfile import fixed_output_path, load_lock
from nix_support import (
    HOST_PATH, PINNED_RELU, PINNED_RELU_BUILT, PINNED_RELU_CPU, PINNED_RELU_CROSS_CPU, PINNED_RELU_CUDA, PYTHON, REPO, commit_all, copy_kernel,
    kernel_builder, run_with_kernels, salt_sources,
)

pytestmark = pytest.mark.slow

CPU213 = "torch213-cxx11-cpu-x86_64-linux"
CPU214 = "torch214-cxx11-cpu-x86_64-linux"
CPU215 = "torch215-cxx11-cpu-x86_64-linux"
CU130 = "torch214-cxx11-cu130-x86_64-linux"
# Host locations a hermetic derivation must never name.

LOAD_RELU = """
import json, torch
from pathlib import Path
from kernels import get_local_kernel
kernel = get_local_kernel(Path({path!r}))
x = torch.randn(257)
assert torch.equal(kernel.relu(x), torch.relu(x))
print(json.dumps({{"torch": torch.__version__, "module": kernel.__name__}}))
"""

LOAD_CUDA_OPS = """
import importlib.util, json, sys, torch
path = {path!r}
spec = importlib.util.spec_from_file_location({ops_id!r}, path + "/__init__.py", submodule_search_locations=[path])
module = importlib.util.module_from_spec(spec); sys.modules[spec.name] = module; spec.loader.exec_module(module)
print(json.dumps(hasattr(getattr(torch.ops, {ops_id!r}), "relu")))
"""


FLAKE = """{
  inputs.kernel-builder.url = "git+file://%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
""" % REPO


def hermetic_copy(name: str, dest: Path, *, git: bool = True) -> Path:
    """A salted copy of examples/NAME whose flake input is this checkout, as git (only its
    tracked files enter the store), and nothing else: no override, no recorded state."""
    kernel = copy_kernel(name, dest, git=False, salt=True)
    (kernel / "flake.nix").write_text(FLAKE)
    if git:
        commit_all(kernel, init=True)
    return kernel


def plain_nix_env() -> dict[str, str]:
    """Only what the issue allows: flakes on, the offline settings, the sandbox on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KERNEL_BUILDER_", "NIX_"))}
    env["NIX_CONFIG"] = (
        "experimental-features = nix-command flakes\nbuild-users-group =\nsubstituters =\n"
        f"sandbox = true\nflake-registry = {nix.empty_registry()}\n"
    )
    return env


def plain_nix(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["nix", *args], cwd=cwd, env=plain_nix_env(), capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"nix {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-5000:]}")
    return done


def toolchain_pythons(kernel: Path) -> dict[str, str]:
    """Bundle variant -> the Python of its pinned environment (its torch, from the store)."""
    table = json.loads(plain_nix("eval", "--json", "--no-write-lock-file", ".#legacyPackages.x86_64-linux.variantTable", cwd=kernel).stdout)
    return {row["name"]: row["toolchainPython"] for row in table if row["buildable"] and row["bundle"]}


@pytest.fixture(scope="module")
def fetched() -> None:
    """The store holds every pinned artifact (`.ci/setup` fetched them; this is a no-op then)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    kernel_builder("toolchain", "fetch", env=env)


@pytest.fixture(scope="module")
def relu(tmp_path_factory: pytest.TempPathFactory, fetched: None) -> Path:
    """A committed relu copy whose flake input is this checkout; salted, so Nix must build."""
    return hermetic_copy("relu", tmp_path_factory.mktemp("hermetic") / "relu")


# -- the lock and the fetch ---------------------------------------------------------------


def test_store_paths_match_nix_for_flat_and_recursive_hashes() -> None:
    lock = load_lock()
    artifact = next(iter(lock.artifacts.values()))
    flat = subprocess.run(["nix-store", "--print-fixed-path", "sha256", artifact.sha256, artifact.key],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert artifact.store_path == flat
    recursive = subprocess.run(["nix-store", "--print-fixed-path", "--recursive", "sha256", lock.seed.nar_sha256, lock.seed.name],
                               capture_output=True, text=True, check=True).stdout.strip()
    assert lock.seed.store_path == recursive == fixed_output_path(lock.seed.name, lock.seed.nar_sha256, recursive=True)


def test_lock_lists_every_artifact_with_hash_and_public_url() -> None:
    lock = load_lock()
    assert set(lock.build_sets) == {
        "torch2.12-cpu", "torch2.12-cuda13.0", "torch2.13-cpu", "torch2.13-cuda13.0", "torch2.14-cpu", "torch2.14-cuda13.0",
        "torch2.15-cpu", "torch2.15-cuda13.2",
    }
    kinds = {a.kind for a in lock.artifacts.values()}
    assert kinds == {"deb", "wheel"}
    for artifact in lock.artifacts.values():
        assert re.fullmatch(r"[0-9a-f]{64}", artifact.sha256)
        assert artifact.url.startswith(("https://", "http://")) and "file:" not in artifact.url
        assert artifact.name and artifact.version and artifact.file
    for env, torch in (("torch2.12", "2.12.1"), ("torch2.13", "2.13.0"), ("torch2.14", "2.14.1")):
        artifacts = [lock.artifacts[k] for k in lock.groups[f"env:{env}"]]
        # PyPI's CUDA 13.0 build of torch, the CUDA compiler from wheels, and triton for the
        # import check (megablocks imports it)
        assert [a.version for a in artifacts if a.name == "torch"] == [torch]
        names = {a.name for a in artifacts}
        assert {"torch", "triton", "nvidia-cuda-nvcc", "nvidia-cuda-crt", "nvidia-cuda-cccl", "nvidia-nvvm", "cmake", "ninja"} <= names
        assert lock.requests["cuda"][env] == "13.0"
    # torch 2.15 is PyPI's CUDA 13.2 build, compiled with the CUDA 13.2 compiler wheels
    artifacts = [lock.artifacts[k] for k in lock.groups["env:torch2.15"]]
    assert [a.version for a in artifacts if a.name == "torch"] == ["2.15.0"]
    assert {a.version for a in artifacts if a.name == "nvidia-cuda-nvcc"} == {"13.2.86"}
    assert lock.requests["cuda"]["torch2.15"] == "13.2"
    # shared wheels are one artifact (one store path), listed by every environment that uses it
    shared = set(lock.groups["env:torch2.12"]) & set(lock.groups["env:torch2.13"]) & set(lock.groups["env:torch2.14"])
    assert {lock.artifacts[k].name for k in shared} >= {"nvidia-cuda-nvcc", "nvidia-cublas", "numpy", "cmake"}


def test_fetch_is_idempotent(fetched: None) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = kernel_builder("toolchain", "fetch", "--json", env=env)
    report = json.loads(done.stdout)
    assert report["added"] == []
    # this machine's artifacts (not a native aarch64 host's), + the seed
    assert len(report["present"]) == len(load_lock().artifacts_for()) + 1


def test_fetch_refuses_a_corrupted_artifact(tmp_path: Path, fetched: None) -> None:
    data = json.loads(load_lock().path.read_text())
    # mdurl: a wheel the machine's local package mirror holds, so pip talks to no registry
    key = next(k for k in data["groups"]["env:driver"] if data["artifacts"][k]["name"] == "mdurl")
    good = data["artifacts"][key]["sha256"]
    bad = ("0" if good[0] != "0" else "1") + good[1:]
    data["artifacts"][key]["sha256"] = bad
    lock_file = tmp_path / "toolchain-lock.json"
    lock_file.write_text(json.dumps(data))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["KERNEL_BUILDER_TOOLCHAIN_LOCK"] = str(lock_file)
    if Path("/opt/pypi/simple").is_dir():
        env["PIP_INDEX_URL"] = "file:///opt/pypi/simple"
    done = kernel_builder("toolchain", "fetch", "--build-set", "torch2.13-cpu", env=env, check=False)
    assert done.returncode == 3
    assert "Traceback" not in done.stderr
    assert "mdurl" in done.stderr and bad in done.stderr and "nothing was added" in done.stderr
    wrong_path = fixed_output_path(key, bad, recursive=False)
    assert subprocess.run(["nix-store", "--check-validity", wrong_path], capture_output=True).returncode != 0


# -- plain nix, sandboxed -----------------------------------------------------------------


@pytest.mark.timeout(2400)
def test_plain_nix_run_builds_every_pinned_variant_in_the_sandbox(relu: Path) -> None:
    """relu's six pinned x86_64 bundle variants (torch 2.13, 2.14 x cpu, cu130; 2.15 x cpu, cu132)
    and the cross-built aarch64 ones (test_cross_aarch64.py checks those); each x86_64 one loads
    with PyPI `kernels` on its own torch (the pinned environment's Python); the CPU ones run."""
    done = plain_nix("run", "-j", "2", "--cores", "1", "--no-write-lock-file", ".#build-variants", cwd=relu)
    assert f"copied {len(PINNED_RELU_BUILT)} variant(s)" in done.stderr
    assert sorted(p.name for p in (relu / "build").iterdir()) == ["CARD.md", *PINNED_RELU_BUILT]
    pythons = toolchain_pythons(relu)
    assert sorted(pythons) == PINNED_RELU_BUILT and all(p.startswith("/nix/store/") for p in pythons.values())
    for name in PINNED_RELU_CPU:
        metadata = json.loads((relu / "build" / name / "metadata.json").read_text())
        loaded = json.loads(run_with_kernels(pythons[name], LOAD_RELU.format(path=str(relu / "build" / name))).splitlines()[-1])
        assert loaded["module"] == metadata["id"]
        assert loaded["torch"].startswith(f"{name[5]}.{name[6:8]}.")
        # built against a CUDA build of torch, yet it must load with CPU builds of torch
        module = next((relu / "build" / name).glob("*.abi3.so"))
        dynamic = subprocess.run(["readelf", "-d", str(module)], capture_output=True, text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\).*\[(.+)\]", dynamic)
        assert "libtorch_cpu.so" in needed and not [lib for lib in needed if "cuda" in lib], needed
    cuobjdump = shutil.which("cuobjdump") or next(Path(PYTHON).parents[1].glob("lib/python3.*/site-packages/nvidia/cu13/bin/cuobjdump"))
    for name in PINNED_RELU_CUDA:
        metadata = json.loads((relu / "build" / name / "metadata.json").read_text())
        assert metadata["backend"]["archs"] == ["8.0", "9.0"]
        # No GPU here: loading the module registers its ops, which is what can be checked.
        code = LOAD_CUDA_OPS.format(path=str(relu / "build" / name), ops_id=metadata["id"])
        assert run_with_kernels(pythons[name], code).strip().splitlines()[-1] == "true"
        module = next((relu / "build" / name).glob("*.abi3.so"))
        listed = subprocess.run([str(cuobjdump), "--list-elf", str(module)], capture_output=True, text=True, check=True).stdout
        assert sorted(re.findall(r"sm_(\d+)", listed)) == ["80", "90"]


def test_variant_outputs_reference_no_store_path(relu: Path) -> None:
    for name in PINNED_RELU:  # built by the test above; a no-op build then
        built = plain_nix("build", "--no-link", "--json", "-j", "2", "--no-write-lock-file", f".#redistributable.{name}", cwd=relu)
        out = json.loads(built.stdout)[0]["outputs"]["out"]
        refs = subprocess.run(["nix-store", "-q", "--references", out], capture_output=True, text=True, check=True).stdout
        assert refs.split() == [], f"{name} refers to {refs}"


def test_derivation_closure_names_no_host_path(relu: Path) -> None:
    for name in PINNED_RELU:
        shown = json.loads(plain_nix("show-derivation", "-r", "--no-write-lock-file", f".#redistributable.{name}", cwd=relu).stdout)
        assert any(d["env"].get("variant") == name for d in shown.values())
        for drv, data in shown.items():
            values = [data["builder"], *data["args"], *data["env"].values()]
            for value in values:
                match = HOST_PATH.search(value)
                assert match is None, f"{drv} names host path {match.group(1)!r} in {value[:200]!r}"
            assert data["builder"].startswith("/nix/store/") or data["builder"] == "builtin:fetchurl"


def _sources_compiled_at_import(python: str, code: str, env: dict[str, str]) -> list[str]:
    """The modules ``python -c code`` compiled from source: each one it found no usable .pyc for."""
    done = subprocess.run([python, "-v", "-c", code], capture_output=True, text=True, check=True,
                          env={**env, "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"})
    return re.findall(r"^# code object from '?(\S+\.py)'?$", done.stderr, flags=re.M)


def test_every_python_a_variant_step_starts_reads_bytecode(relu: Path) -> None:
    """The store is read-only, so a module without a usable .pyc is compiled again by every
    step: the Debian standard library (kb-python3.11), the driver's package
    (kernel-builder-python-compiled) and torch's environment all carry unchecked-hash .pyc."""
    shown = json.loads(plain_nix("show-derivation", "--no-write-lock-file", f".#redistributable.{CPU213}", cwd=relu).stdout)
    step = next(iter(shown.values()))["env"]
    assert step["kernelBuilderPython"].endswith("-kernel-builder-python-compiled")
    driver = _sources_compiled_at_import(step["driverPython"], "import kernel_builder.driver.run_variant, kernel_builder.driver.units, argparse, enum",
                                         {"PYTHONPATH": step["kernelBuilderPython"]})
    assert driver == []
    torch = _sources_compiled_at_import(step["toolchainPython"], "import torch, json, importlib.util", {})
    assert torch == []


@pytest.mark.timeout(900)
def test_rebuild_is_bit_identical(relu: Path) -> None:
    for name in (CPU213, CU130):
        done = plain_nix("build", "--rebuild", "--no-link", "--no-write-lock-file", f".#redistributable.{name}", cwd=relu, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "may not be deterministic" not in done.stderr


def test_two_clones_at_different_paths_give_the_same_output(relu: Path, tmp_path: Path) -> None:
    paths = []
    for where in ("a/relu", "somewhere/else/relu"):
        clone = tmp_path / where
        subprocess.run(["git", "clone", "-q", str(relu), str(clone)], check=True)
        paths.append(plain_nix("eval", "--raw", "--no-write-lock-file", f".#redistributable.{CPU213}.outPath", cwd=clone).stdout)
    original = plain_nix("eval", "--raw", "--no-write-lock-file", f".#redistributable.{CPU213}.outPath", cwd=relu).stdout
    assert paths[0] == paths[1] == original


@pytest.mark.timeout(900)
def test_freshly_initialised_kernel_builds_checks_and_develops_with_plain_nix(tmp_path: Path, fetched: None) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KERNEL_BUILDER_ROOT")}
    kernel = tmp_path / "fresh"
    # init writes the published builder URL by default; offline, point it at this checkout
    kernel_builder("init", str(kernel), "--name", "me/fresh", "--backends", "cpu", "--builder-url", f"git+file://{REPO}", env=env)
    salt_sources(kernel)
    commit_all(kernel)
    assert f'inputs.kernel-builder.url = "git+file://{REPO}";' in (kernel / "flake.nix").read_text()
    done = plain_nix("run", "-j", "2", "--cores", "1", ".#build-variants", cwd=kernel)
    assert f"copied {3 + len(PINNED_RELU_CROSS_CPU)} variant(s)" in done.stderr  # the x86_64 CPU bundle and the cross-built aarch64 ones
    built = sorted(p.name for p in (kernel / "build").iterdir())
    assert built == sorted(["CARD.md", "benchmarks", CPU213, CPU214, CPU215, *PINNED_RELU_CROSS_CPU])
    plain_nix("flake", "check", "-j", "2", cwd=kernel)
    shell = plain_nix("develop", f".#devShells.x86_64-linux.{CPU213}", "-c", "bash", "-c",
                      'echo "$(command -v g++) $toolchainPython"', cwd=kernel).stdout.split()
    assert all(p.startswith("/nix/store/") for p in shell), shell


@pytest.mark.timeout(900)
def test_upload_publishes_the_bundle_card_for_the_repo_it_uploads_to(tmp_path: Path, fetched: None, hub_server) -> None:
    """silu-and-mul has neither `[general.hub] repo-id` nor CARD.md: plain `nix run
    .#build-variants` renders build/CARD.md without a repo id (placeholder and stamp), and
    `kernel-builder upload --repo-id` publishes a card for that repository, never one that
    names the kernel's name."""
    kernel = hermetic_copy("silu-and-mul", tmp_path / "silu-and-mul")
    done = plain_nix("run", "-j", "2", "--cores", "1", "--no-write-lock-file", ".#build-variants", cwd=kernel)
    assert "copied 2 variant(s)" in done.stderr
    bundled = (kernel / "build" / "CARD.md").read_text()
    assert 'get_kernel("ORG/NAME", version=1)' in bundled and 'get_kernel("silu-and-mul"' not in bundled
    assert bundled.endswith("\n<!-- kernel-builder card: rendered without a repo id; template: default -->\n")
    env = {**os.environ, "HF_TOKEN": "hf_card_test_token"}
    for directory, repo_id in ((kernel, "org/x"), (kernel / "build", "org/bare")):  # the kernel; a bare tree
        kernel_builder("upload", str(directory), "--repo-id", repo_id, env=env)
        readme = hub_server.files(repo_id, "main")["README.md"].decode()
        assert f"# {repo_id}\n" in readme and f'get_kernel("{repo_id}", version=1)' in readme
        assert "ORG/NAME" not in readme and "silu-and-mul\"" not in readme and "silu_and_mul" in readme
        assert readme.endswith(f"\n<!-- kernel-builder card: rendered for {repo_id}; template: default -->\n")
    assert (kernel / "build" / "CARD.md").read_text() == bundled  # upload rendered its own, leaving the tree as it was


@pytest.mark.timeout(900)
def test_pthread_and_dlsym_bind_to_glibc_2_2_5_in_the_sandbox(tmp_path: Path, fetched: None) -> None:
    """Linked against glibc 2.28's symbol versions (the pinned link stubs), not bookworm's
    2.36: pthread_create and dlsym bind to GLIBC_2.2.5 (2.36 would give GLIBC_2.34), and
    kernel-abi-check finds nothing newer than manylinux_2_28; the module still loads."""
    kernel = hermetic_copy("relu", tmp_path / "relu", git=False)
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    source.write_text("#include <dlfcn.h>\n#include <pthread.h>\n" + source.read_text() + (
        "\nstatic void* kb_run(void*) { return nullptr; }\n"
        "int kb_spawn() { pthread_t t; pthread_create(&t, nullptr, kb_run, nullptr); pthread_join(t, nullptr);\n"
        "  return dlsym(RTLD_DEFAULT, \"malloc\") != nullptr; }\n"))
    done = plain_nix("build", "--no-link", "--json", "-L", f".#redistributable.{CPU213}", cwd=kernel, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    variant = Path(json.loads(done.stdout)[0]["outputs"]["out"]) / CPU213
    module = next(variant.glob("*.abi3.so"))
    symbols = subprocess.run(["readelf", "--dyn-syms", "-W", str(module)], capture_output=True, text=True, check=True).stdout
    bound = dict(re.findall(r"UND (\w+)@(GLIBC_[\d.]+)", symbols))
    assert bound["pthread_create"] == bound["dlsym"] == "GLIBC_2.2.5"
    newest = max(tuple(int(p) for p in v[len("GLIBC_"):].split(".")) for v in bound.values())
    assert newest <= (2, 28), bound
    assert list(kernel_abi_check.ObjectFile(str(module)).check_manylinux("manylinux_2_28")) == []
    loaded = json.loads(run_with_kernels(PYTHON, LOAD_RELU.format(path=str(variant))).splitlines()[-1])
    assert loaded["module"] == json.loads((variant / "metadata.json").read_text())["id"]


@pytest.mark.timeout(900)
def test_stable_abi_variant_is_manylinux_clean_with_the_pinned_toolchain(tmp_path: Path, fetched: None) -> None:
    """The stable-ABI headers call dlsym in every object: against bookworm's glibc that was
    dlsym@GLIBC_2.34, an error for every pinned stable-ABI build; now it is GLIBC_2.2.5."""
    kernel = hermetic_copy("relu-stable-abi", tmp_path / "relu-stable-abi", git=False)
    name = "torch-stable-abi211-cpu-x86_64-linux"
    done = plain_nix("build", "--no-link", "--json", "-L", f".#redistributable.{name}", cwd=kernel, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    module = next((Path(json.loads(done.stdout)[0]["outputs"]["out"]) / name).glob("*.abi3.so"))
    symbols = subprocess.run(["readelf", "--dyn-syms", "-W", str(module)], capture_output=True, text=True, check=True).stdout
    assert "UND dlsym@GLIBC_2.2.5" in symbols
    assert list(kernel_abi_check.ObjectFile(str(module)).check_manylinux("manylinux_2_28")) == []


@pytest.mark.timeout(900)
def test_symbol_missing_from_glibc_2_28_is_a_link_error_naming_symbol_and_object(tmp_path: Path, fetched: None) -> None:
    kernel = hermetic_copy("relu", tmp_path / "relu", git=False)
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    # With bookworm's headers stat() is a call to stat, which glibc exports since 2.33 only.
    source.write_text("#include <sys/stat.h>\n" + source.read_text() + (
        "\nint kb_size(const char* path) { struct stat s; return stat(path, &s) == 0 ? int(s.st_size) : -1; }\n"))
    done = plain_nix("build", "--no-link", "-L", f".#redistributable.{CPU213}", cwd=kernel, check=False)
    assert done.returncode != 0
    assert "undefined reference to 'stat': glibc 2.28 does not export it (added in GLIBC_2.33)" in done.stderr
    assert "used by relu_cpu.cpp.o" in done.stderr


@pytest.mark.timeout(600)
def test_import_check_finds_triton_like_the_reference_environment(tmp_path: Path, fetched: None) -> None:
    """Kernels such as megablocks import triton unconditionally, even in their CPU variant:
    the pinned environments carry it, so the import check inside the sandbox passes."""
    kernel = hermetic_copy("relu", tmp_path / "relu", git=False)
    init = kernel / "torch-ext" / "relu" / "__init__.py"
    init.write_text("import triton  # noqa: F401\n" + init.read_text())
    done = plain_nix("build", "--no-link", "-L", "--print-build-logs", f".#redistributable.{CPU213}", cwd=kernel, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "No module named 'triton'" not in done.stderr


@pytest.mark.timeout(600)
def test_cli_nix_package_builds_a_kernel_without_pip(tmp_path: Path, fetched: None) -> None:
    """`nix run <builder>#kernel-builder -- build .`: the CLI from the builder flake, with its
    own pinned Python environment (no venv, no pip install)."""
    kernel = hermetic_copy("relu", tmp_path / "relu")
    env = plain_nix_env()
    env["KERNEL_BUILDER_STATE_DIR"] = str(tmp_path / "state")
    env["PATH"] = "/usr/bin:/bin"  # nix itself, nothing of the test venv
    done = subprocess.run(
        ["nix", "run", f"git+file://{REPO}#kernel-builder", "--", "build", ".", "--variant", CPU213, "--json"],
        cwd=kernel, env=env, capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert json.loads(done.stdout)[0]["status"] == "built"
    version = subprocess.run(["nix", "run", f"git+file://{REPO}#kernel-builder", "--", "--version"],
                             env=env, capture_output=True, text=True, check=True).stdout
    assert version.startswith("kernel-builder, version")
    loaded = json.loads(run_with_kernels(PYTHON, LOAD_RELU.format(path=str(kernel / "build" / CPU213))).splitlines()[-1])
    assert loaded["torch"].startswith("2.13")


def test_public_wheel_urls_for_mirrored_wheels() -> None:
    from kernel_builder.toolchain.pinned.locking import public_wheel_url

    assert public_wheel_url("file:///opt/pypi/files/mdurl-0.1.2-py3-none-any.whl", "mdurl-0.1.2-py3-none-any.whl") == (
        "https://files.pythonhosted.org/packages/py3/m/mdurl/mdurl-0.1.2-py3-none-any.whl"
    )
    cpu = "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert public_wheel_url(f"file:///opt/wheels/{cpu}", cpu) == (
        "https://download.pytorch.org/whl/cpu/torch-2.13.0%2Bcpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    )
    online = "https://files.pythonhosted.org/packages/aa/bb/x-1.0-py3-none-any.whl"
    assert public_wheel_url(online, "x-1.0-py3-none-any.whl") == online
