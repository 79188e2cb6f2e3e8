"""Issue 26: aarch64-linux variants cross-built hermetically on x86_64.

examples/relu's pinned aarch64 CPU variant, with plain Nix and the sandbox on: an
x86_64-linux derivation whose module is an AArch64 shared object, manylinux_2_28_aarch64
clean, naming no store path, imported by the import check under qemu-aarch64 (and by
PyPI's `kernels` under the same emulated aarch64 Python, computing relu), and
bit-identical when rebuilt. Slow: real cross builds, torch imported under emulation.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import kernel_abi_check
import pytest

from kernel_builder import nix
from nix_support import HOST_PATH, REPO, commit_all, copy_kernel

pytestmark = pytest.mark.slow

CROSS = "torch213-cxx11-cpu-aarch64-linux"
CUDA = "torch213-cxx11-cu130-aarch64-linux"
FLAKE = """{
  inputs.kernel-builder.url = "git+file://%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
""" % REPO


def plain_nix(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """nix with only the offline settings and the sandbox on (as in test_nix_hermetic)."""
    config = ("experimental-features = nix-command flakes\nbuild-users-group =\nsubstituters =\n"
              f"sandbox = true\nflake-registry = {nix.empty_registry()}\n")
    return subprocess.run(["nix", *args], cwd=cwd, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "NIX_CONFIG": config},
                          capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def relu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    kernel = copy_kernel("relu", tmp_path_factory.mktemp("cross") / "relu", git=False, salt=True)
    (kernel / "flake.nix").write_text(FLAKE)
    commit_all(kernel, init=True)
    return kernel


def build_log(installable: str, cwd: Path) -> str:
    done = plain_nix("log", "--no-write-lock-file", installable, cwd=cwd)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def emulated_python(installable: str, cwd: Path) -> str:
    """The aarch64 Python under qemu that the variant step imports the module with."""
    shown = json.loads(plain_nix("show-derivation", "--no-write-lock-file", installable, cwd=cwd).stdout)
    (drv,) = shown.values()
    return drv["env"]["KERNEL_BUILDER_TARGET_PYTHON"]


# PyPI's `kernels`, run by the emulated aarch64 Python: it selects the aarch64 CPU variant
# (its torch is a CUDA build, so the CPU backend is asked for) and runs the op. (Not
# kernelize: its LocalLayerRepository resolves without a backend, so a CUDA torch always
# asks for the CUDA variant, even for device "cpu".)
KERNELS_LOAD = r"""
import platform, sys
from pathlib import Path
import torch
from kernels import get_local_kernel

print("machine", platform.machine())
kernel = get_local_kernel(Path(sys.argv[1]), backend="cpu")
x = torch.randn(1000)
assert torch.equal(kernel.relu(x), torch.relu(x)), "relu op differs from torch.relu"
print("op ok", kernel.__name__)
"""


@pytest.fixture(scope="module")
def built(relu: Path) -> Path:
    done = plain_nix("build", "--json", "--no-link", "-j", "1", "--cores", "2", "--no-write-lock-file",
                     f".#redistributable.{CROSS}", cwd=relu)
    assert done.returncode == 0, done.stderr[-5000:]
    return Path(json.loads(done.stdout)[0]["outputs"]["out"]) / CROSS


def test_the_aarch64_variant_is_an_x86_64_derivation_listed_buildable(relu: Path) -> None:
    shown = json.loads(plain_nix("show-derivation", "--no-write-lock-file", f".#redistributable.{CROSS}", cwd=relu).stdout)
    (drv,) = shown.values()
    assert drv["system"] == "x86_64-linux"
    assert drv["env"]["KERNEL_BUILDER_TARGET_SYSTEM"] == "aarch64-linux"
    table = json.loads(plain_nix("eval", "--json", "--no-write-lock-file", ".#legacyPackages.x86_64-linux.variantTable", cwd=relu).stdout)
    rows = {row["name"]: row for row in table}
    assert rows[CROSS]["buildable"], rows[CROSS]
    assert rows[CUDA]["buildable"], rows[CUDA]
    # aarch64 variants with no pinned cross toolchain stay listed, with the reason
    other = rows["torch213-cxx11-cu126-aarch64-linux"]  # CUDA 12.6: on the PyTorch index only
    assert not other["buildable"] and "aarch64-linux" in other["reason"]


def test_derivation_closure_names_no_host_path(relu: Path) -> None:
    """The variant's closure (the emulated Python's derivation included) names store paths only."""
    shown = json.loads(plain_nix("show-derivation", "-r", "--no-write-lock-file", f".#redistributable.{CROSS}", cwd=relu).stdout)
    assert any(d["env"].get("name") == "kb-emulated-torch2.13-aarch64" for d in shown.values())
    for drv, data in shown.items():
        for value in [data["builder"], *data["args"], *data["env"].values()]:
            match = HOST_PATH.search(value)
            assert match is None, f"{drv} names host path {match.group(1)!r} in {value[:200]!r}"


def test_the_module_is_aarch64_manylinux_clean_and_names_no_store_path(built: Path) -> None:
    (module,) = built.glob("*.abi3.so")
    header = subprocess.run(["readelf", "-h", str(module)], capture_output=True, text=True, check=True).stdout
    assert "AArch64" in header and "ELF64" in header
    assert list(kernel_abi_check.ObjectFile(str(module)).check_manylinux("manylinux_2_28")) == []
    for path in built.rglob("*"):
        if path.is_file():
            assert b"/nix/store/" not in path.read_bytes(), path
    metadata = json.loads((built / "metadata.json").read_text())
    assert metadata["backend"]["type"] == "cpu"


def test_the_import_check_imports_the_module_under_qemu(relu: Path, built: Path) -> None:
    log = build_log(f".#redistributable.{CROSS}", relu)
    assert f"{CROSS}: import check under emulation: aarch64-linux Python /nix/store/" in log, log[-3000:]
    ops_id = json.loads((built / "metadata.json").read_text())["id"]
    assert f"{CROSS}: registered ops: {ops_id}::relu" in log, log[-3000:]


@pytest.mark.timeout(900)
def test_pypi_kernels_loads_the_variant_under_the_emulated_python(relu: Path, built: Path, tmp_path: Path) -> None:
    python = emulated_python(f".#redistributable.{CROSS}", relu)
    repo = tmp_path / "relu"
    shutil.copytree(built, repo / "build" / CROSS)
    done = subprocess.run([python, "-c", KERNELS_LOAD, str(repo)], capture_output=True, text=True, timeout=800, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    ops_id = json.loads((built / "metadata.json").read_text())["id"]
    assert "machine aarch64" in done.stdout
    assert f"op ok {ops_id}" in done.stdout


def _exports(library: Path) -> set[str]:
    """The versioned symbols a shared library defines for others (readelf's dynamic table)."""
    shown = subprocess.run(["readelf", "--dyn-syms", "-W", str(library)], capture_output=True, text=True, check=True).stdout
    return {f"{cols[3]} {cols[7]}" for cols in (line.split() for line in shown.splitlines())
            if len(cols) == 8 and cols[6] not in ("UND", "ABS", "Ndx") and cols[3] in ("FUNC", "OBJECT")}


def test_load_only_libraries_export_exactly_what_the_real_ones_do(relu: Path, tmp_path: Path) -> None:
    """The emulated environment's cuBLASLt, cuFFT, nvJitLink and NVRTC are stand-ins (nothing
    under emulation can call a GPU library) that define every symbol the wheel's library
    exports, with its version: a module asking for one resolves it as it would for real."""
    root = Path(emulated_python(f".#redistributable.{CROSS}", relu)).parent.parent
    site = root / "sysroot" / "usr" / "lib" / "python3" / "dist-packages"
    lock = json.loads((REPO / "nix" / "toolchain-lock.json").read_text())
    load_only = lock["requests"]["targets"]["aarch64-linux"]["emulation"]["loadOnly"]["torch2.13-aarch64"]
    wheels = [key for group in ("env:torch2.13-aarch64", "env:torch2.13-aarch64-emulated") for key in lock["groups"][group]]
    assert len(load_only) == 4
    for soname in load_only:
        (stand_in,) = site.rglob(soname)
        assert stand_in.stat().st_size < 1_000_000, f"{stand_in} is not the stand-in"
        for wheel in wheels:  # the real library, from the pinned wheel that ships it
            stored = next(Path("/nix/store").glob(f"*-{wheel}"), None)  # fetched by `toolchain fetch`
            members = [m for m in zipfile.ZipFile(stored).namelist() if m.endswith("/" + soname)] if stored else []
            if members:
                real = tmp_path / soname
                real.write_bytes(zipfile.ZipFile(stored).read(members[0]))
                break
        else:
            raise AssertionError(f"no pinned wheel ships {soname}")
        assert _exports(stand_in) == _exports(real) != set()


@pytest.mark.timeout(1200)
def test_the_import_check_fails_a_module_that_cannot_load(tmp_path: Path) -> None:
    """A module with an unresolved symbol links (shared objects may) but cannot be imported:
    the emulated import check fails the build, naming the symbol."""
    kernel = copy_kernel("relu", tmp_path / "broken", git=False, salt=True)
    (kernel / "flake.nix").write_text(FLAKE)
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    source.write_text(source.read_text().replace(
        "void relu(at::Tensor &out, at::Tensor const &input) {",
        'extern "C" int kb_nowhere_defined();\nvoid relu(at::Tensor &out, at::Tensor const &input) {\n  if (kb_nowhere_defined()) return;',
    ))
    commit_all(kernel, init=True)
    done = plain_nix("build", "--no-link", "-j", "1", "--cores", "2", "--no-write-lock-file", f".#redistributable.{CROSS}", cwd=kernel)
    assert done.returncode != 0
    log = build_log(f".#redistributable.{CROSS}", kernel)
    assert "import check under emulation" in log
    assert "undefined symbol: kb_nowhere_defined" in log, log[-3000:]


@pytest.mark.timeout(1200)
def test_the_cuda_variant_is_built_by_x86_64_nvcc_for_aarch64(relu: Path) -> None:
    done = plain_nix("build", "--json", "--no-link", "-j", "1", "--cores", "2", "--no-write-lock-file",
                     f".#redistributable.{CUDA}", cwd=relu)
    assert done.returncode == 0, done.stderr[-5000:]
    built = Path(json.loads(done.stdout)[0]["outputs"]["out"]) / CUDA
    (module,) = built.glob("*.abi3.so")
    header = subprocess.run(["readelf", "-h", str(module)], capture_output=True, text=True, check=True).stdout
    assert "AArch64" in header
    needed = subprocess.run(["readelf", "-d", str(module)], capture_output=True, text=True, check=True).stdout
    assert "libcudart.so.13" in needed and "libtorch_cuda.so" in needed
    assert b"/nix/store/" not in module.read_bytes()
    metadata = json.loads((built / "metadata.json").read_text())
    assert metadata["backend"]["archs"]
    # imported under qemu too: a CUDA module loads without a GPU, as on x86_64
    assert f"{CUDA}: registered ops: {metadata['id']}::relu" in build_log(f".#redistributable.{CUDA}", relu)


@pytest.mark.timeout(1200)
def test_rebuild_is_bit_identical(relu: Path, built: Path) -> None:
    done = plain_nix("build", "--rebuild", "--no-link", "-j", "1", "--cores", "2", "--no-write-lock-file",
                     f".#redistributable.{CROSS}", cwd=relu)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "may not be deterministic" not in done.stderr
