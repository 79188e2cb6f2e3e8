"""Issue 44, item 4: `create-pyproject` writes a pip project that builds the kernel without
Nix; `clean-pyproject` removes exactly what it wrote and refuses while a file was edited.

The CLI runs in a subprocess (`python -m kernel_builder`) on a copy of examples/relu; the
slow test builds the wheel with this venv's pip, setuptools, cmake, ninja and torch
(offline: --no-build-isolation --no-index), installs it into a directory and runs the op.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from kernel_builder.config import load
from kernel_builder.driver.generate import CompilePlan
from kernel_builder.errors import ConfigError
from kernel_builder.pyproject.manifest import MANIFEST, Manifest, changed, read_manifest
from kernel_builder.pyenv import find_tool
from kernel_builder.pyproject.project import relocate
from toolchains import torch214_python

RELU = Path(__file__).resolve().parents[2] / "examples" / "relu"
WRITTEN = {
    "pyproject.toml",
    "setup.py",
    "CMakeLists.txt",
    "cmake/CMakeLists.txt",
    "cmake/include/registration.h",
    "cmake/_ops.py",
}


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def _snapshot(root: Path) -> dict[str, str]:
    """Every file (SHA-256) and directory ("dir") under ``root``, by relative path."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        found[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


_NOT_SOURCES = shutil.ignore_patterns("build", "result", "__pycache__", "flake.lock")


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    target = tmp_path / "relu"
    shutil.copytree(RELU, target, ignore=_NOT_SOURCES)
    return target


def test_create_then_clean_leaves_the_tree_as_it_was(kernel: Path) -> None:
    before = _snapshot(kernel)
    done = _cli("create-pyproject", str(kernel))
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) == WRITTEN | {"compile_commands.json"}
    manifest = read_manifest(kernel / MANIFEST)
    assert set(manifest.files) == WRITTEN | {"compile_commands.json"}
    assert manifest.dirs == ("cmake", "cmake/include")
    assert manifest.variant == "torch213-cxx11-cpu-x86_64-linux"
    for rel, digest in manifest.files.items():
        assert hashlib.sha256((kernel / rel).read_bytes()).hexdigest() == digest
    # compile_commands.json: the kernel's sources with the variant's flags, run in the kernel dir
    commands = json.loads((kernel / "compile_commands.json").read_text())
    assert {c["file"] for c in commands} == {
        (kernel / "torch-ext" / "torch_binding.cpp").as_posix(),
        (kernel / "relu_cpu" / "relu_cpu.cpp").as_posix(),
    }
    assert all(c["directory"] == kernel.as_posix() and "-DCPU_KERNEL" in c["command"] for c in commands)
    # the module's project is relocatable: no absolute path of the kernel directory in it
    assert str(kernel) not in (kernel / "cmake" / "CMakeLists.txt").read_text()

    done = _cli("clean-pyproject", str(kernel))
    assert done.returncode == 0, done.stderr
    assert _snapshot(kernel) == before


def test_create_again_rewrites_its_own_files_without_force(kernel: Path) -> None:
    assert _cli("create-pyproject", "--no-compile-commands", str(kernel)).returncode == 0
    first = _snapshot(kernel)
    done = _cli("create-pyproject", "--no-compile-commands", str(kernel))
    assert done.returncode == 0, done.stderr
    assert _snapshot(kernel) == first


def test_create_refuses_to_overwrite_a_user_pyproject(kernel: Path) -> None:
    (kernel / "pyproject.toml").write_text("[project]\nname = 'mine'\n")
    before = _snapshot(kernel)
    done = _cli("create-pyproject", str(kernel))
    assert done.returncode != 0
    assert "pyproject.toml" in done.stderr and "--force" in done.stderr
    assert _snapshot(kernel) == before  # nothing written, not even the manifest

    done = _cli("create-pyproject", "--force", "--no-compile-commands", str(kernel))
    assert done.returncode == 0, done.stderr
    assert "setuptools.build_meta" in (kernel / "pyproject.toml").read_text()


def test_clean_refuses_while_a_written_file_was_edited(kernel: Path) -> None:
    before = _snapshot(kernel)
    assert _cli("create-pyproject", "--no-compile-commands", str(kernel)).returncode == 0
    setup_py = kernel / "setup.py"
    original = setup_py.read_text()
    setup_py.write_text(original + "# my change\n")
    created = _snapshot(kernel)

    done = _cli("clean-pyproject", str(kernel))
    assert done.returncode != 0
    assert "setup.py" in done.stderr and "pyproject.toml" not in done.stderr
    assert _snapshot(kernel) == created  # nothing deleted

    setup_py.write_text(original)  # restored: clean goes ahead
    done = _cli("clean-pyproject", str(kernel))
    assert done.returncode == 0, done.stderr
    assert _snapshot(kernel) == before


def test_clean_skips_a_file_the_user_deleted_and_keeps_user_files(kernel: Path) -> None:
    before = _snapshot(kernel)
    assert _cli("create-pyproject", "--no-compile-commands", str(kernel)).returncode == 0
    (kernel / "setup.py").unlink()
    (kernel / "cmake" / "notes.txt").write_text("mine\n")  # a user file in a directory create made
    done = _cli("clean-pyproject", str(kernel))
    assert done.returncode == 0, done.stderr
    assert "already gone: setup.py" in done.stderr
    after = _snapshot(kernel)
    assert after == {**before, "cmake": "dir", "cmake/notes.txt": after["cmake/notes.txt"]}


@pytest.mark.parametrize(
    ("variant", "said"),
    [
        ("torch-cpu", "not one of this kernel's compiled variants"),  # relu compiles: no noarch variant
        ("torch213-cxx11-cu130-x86_64-linux", "backend (cu130) does not match"),  # this torch is a CPU build
        ("torch212-cxx11-cpu-x86_64-linux", "Torch version (2.12) does not match"),
    ],
)
def test_create_refuses_a_variant_this_kernel_or_torch_cannot_build(kernel: Path, variant: str, said: str) -> None:
    before = _snapshot(kernel)
    done = _cli("create-pyproject", "--variant", variant, str(kernel))
    assert done.returncode == 4
    assert said in done.stderr
    assert _snapshot(kernel) == before


def test_clean_without_a_record_fails_and_names_it(kernel: Path) -> None:
    done = _cli("clean-pyproject", str(kernel))
    assert done.returncode != 0
    assert MANIFEST in done.stderr


def test_a_record_naming_a_path_outside_the_kernel_is_refused(tmp_path: Path) -> None:
    path = tmp_path / MANIFEST
    path.write_text(json.dumps({"format": 1, "variant": "v", "files": {"../victim": "0" * 64}, "dirs": []}))
    with pytest.raises(ConfigError, match=r"files: '\.\./victim' is not a relative path"):
        read_manifest(path)


def test_changed_ignores_gone_files_and_names_edited_ones() -> None:
    manifest = Manifest("v", {"a": "1" * 64, "b": "2" * 64, "c": "3" * 64, "d": "4" * 64})
    states = {"a": "1" * 64, "b": None, "c": "f" * 64, "d": "link"}
    assert changed(manifest, states) == ["c", "d"]


def test_relocate_rewrites_only_the_kernel_directory() -> None:
    plan = CompilePlan(
        variant="v", name="k", ops_id="_k_cpu_1", backend="cpu", cxx_standard=20,
        sources=("/src/k/a.cpp", "/src/kx/b.cpp"),
        defines=("X=1",),
        includes=("/src/k/cmake/include", "/usr/include"),
        cxx_flags=("-ffile-prefix-map=/src/k=/kernel-source",),
        source_options=(("/src/k/a.cpp", ("-O1",)),),
    )
    moved = relocate(plan, Path("/src/k"))
    assert moved.sources == ("${KB_KERNEL_DIR}/a.cpp", "/src/kx/b.cpp")
    assert moved.includes == ("${KB_KERNEL_DIR}/cmake/include", "/usr/include")
    assert moved.cxx_flags == ("-ffile-prefix-map=${KB_KERNEL_DIR}=/kernel-source",)
    assert moved.source_options == (("${KB_KERNEL_DIR}/a.cpp", ("-O1",)),)


def test_a_noarch_kernel_is_refused_with_a_hint(tmp_path: Path) -> None:
    kernel = tmp_path / "noarch"
    kernel.mkdir()
    (kernel / "build.toml").write_text(
        '[general]\nname = "noarch"\nversion = 1\nedition = 5\nlicense = "Apache-2.0"\nbackends = ["cpu"]\n\n[torch-noarch]\n'
    )
    assert load(kernel).is_noarch
    done = _cli("create-pyproject", str(kernel))
    assert done.returncode != 0
    assert "noarch" in done.stderr and "hint:" in done.stderr
    assert sorted(p.name for p in kernel.iterdir()) == ["build.toml"]


@pytest.mark.slow
def test_pip_wheel_builds_a_wheel_whose_op_runs(kernel: Path, tmp_path: Path) -> None:
    before = _snapshot(kernel)
    done = _cli("create-pyproject", "--no-compile-commands", str(kernel))
    assert done.returncode == 0, done.stderr
    dist = tmp_path / "dist"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", str(dist), "."],
        cwd=kernel, capture_output=True, text=True, timeout=900, env=env,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    wheels = list(dist.glob("relu-1-*.whl"))
    assert len(wheels) == 1, list(dist.iterdir())
    assert wheels[0].name.endswith("-abi3-linux_x86_64.whl")
    assert not (kernel / "build").exists()  # kernel-builder's build/ is left to kernel-builder

    target = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(target), str(wheels[0])],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert installed.returncode == 0, installed.stderr
    script = (
        "import torch, relu\n"
        "x = torch.randn(1000)\n"
        "assert torch.equal(relu.relu(x), torch.relu(x))\n"
        "assert relu.__file__.startswith(%r)\n"
        "print(relu.ops)\n" % str(target)
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], cwd=dist, capture_output=True, text=True, timeout=300,
        env={**env, "PYTHONPATH": str(target)},
    )
    assert ran.returncode == 0, ran.stderr
    assert "_relu_cpu_" in ran.stdout

    # both paths agree: the same CMake project and flags as `build --local`, the same bytes
    other = tmp_path / "other" / "relu"
    shutil.copytree(RELU, other, ignore=_NOT_SOURCES)
    local = subprocess.run(
        [sys.executable, "-m", "kernel_builder", "build", "--local", str(other)], capture_output=True, text=True,
        timeout=900, env={**env, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")},
    )
    assert local.returncode == 0, local.stderr[-4000:]
    (variant,) = (other / "build").iterdir()
    (module,) = variant.glob("_relu_cpu_*.abi3.so")
    (wheel_module,) = (target / "relu").glob("_relu_cpu_*.abi3.so")
    assert wheel_module.name == module.name
    assert wheel_module.read_bytes() == module.read_bytes()

    # pip's build directory is pip's; everything create-pyproject wrote goes again
    done = _cli("clean-pyproject", str(kernel))
    assert done.returncode == 0, done.stderr
    shutil.rmtree(kernel / ".pyproject-build")
    assert _snapshot(kernel) == before


@pytest.mark.slow
def test_pip_install_editable_imports_from_the_kernel_sources(kernel: Path, tmp_path: Path) -> None:
    before = _snapshot(kernel)
    assert _cli("create-pyproject", "--no-compile-commands", str(kernel)).returncode == 0
    prefix = tmp_path / "prefix"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-e", ".", "--no-build-isolation", "--no-deps", "--no-index",
         "--prefix", str(prefix)],
        cwd=kernel, capture_output=True, text=True, timeout=900, env=env,
    )
    assert installed.returncode == 0, installed.stdout[-4000:] + installed.stderr[-4000:]
    site = next(prefix.glob("lib/python*/site-packages"))
    package = kernel / "torch-ext" / "relu"
    script = (
        "import site; site.addsitedir(%r)\n"
        "import torch, relu\n"
        "x = torch.randn(1000)\n"
        "assert torch.equal(relu.relu(x), torch.relu(x))\n"
        "print(relu.__file__)\n" % str(site)
    )
    elsewhere = tmp_path / "elsewhere"  # not tmp_path: its relu/ (the kernel) would be a namespace package
    elsewhere.mkdir()
    ran = subprocess.run([sys.executable, "-c", script], cwd=elsewhere, capture_output=True, text=True, timeout=300, env=env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == str(package / "__init__.py")

    # the editable install's module and _ops.py are pip's products: clean leaves them
    assert _cli("clean-pyproject", str(kernel)).returncode == 0
    after = _snapshot(kernel)
    made_by_pip = {rel for rel in after if rel.startswith(".pyproject-build")}
    made_by_pip |= {"torch-ext/relu/_ops.py"} | {rel for rel in after if rel.startswith("torch-ext/relu/_relu_cpu_")}
    assert {rel: after[rel] for rel in after if rel not in made_by_pip} == before
    assert len(made_by_pip - {rel for rel in made_by_pip if rel.startswith(".pyproject-build")}) == 2


def test_cmake_stops_when_the_torch_is_not_the_one_the_project_was_written_for(kernel: Path, tmp_path: Path) -> None:
    assert _cli("create-pyproject", "--no-compile-commands", str(kernel)).returncode == 0
    fake = tmp_path / "fake" / "torch"  # a torch 2.99 that only answers the project's question
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("__version__ = '2.99.0'\n\nclass version:\n    cuda = None\n")
    (fake / "utils.py").write_text("cmake_prefix_path = '/nonexistent'\n")
    cmake = find_tool("cmake", sys.executable)
    done = subprocess.run(
        [cmake, "-S", str(kernel), "-B", str(tmp_path / "b"), f"-DPython3_EXECUTABLE={sys.executable}"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(fake.parent)},
    )
    assert done.returncode != 0
    said = " ".join((done.stdout + done.stderr).split())
    assert "written for torch213-cxx11-cpu-x86_64-linux (torch 2.13)" in said
    assert "has torch 2.99.0" in said and "kernel-builder create-pyproject --toolchain-python" in said


CUDA_VARIANT = "torch214-cxx11-cu130-x86_64-linux"


@pytest.fixture(scope="module")
def cuda_wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """relu's pip project for torch 2.14.1 + CUDA 13.0, built (no GPU needed) and installed."""
    python = torch214_python()
    root = tmp_path_factory.mktemp("cuda-pyproject")
    kernel = root / "relu"
    shutil.copytree(RELU, kernel, ignore=_NOT_SOURCES)
    done = _cli("create-pyproject", "--toolchain-python", python, str(kernel))
    assert done.returncode == 0, done.stderr
    assert read_manifest(kernel / MANIFEST).variant == CUDA_VARIANT
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    built = subprocess.run(
        [python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", str(root / "dist"), "."],
        cwd=kernel, capture_output=True, text=True, timeout=1200, env=env,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    (wheel,) = (root / "dist").glob("relu-1-*.whl")
    target = root / "site"
    installed = subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert installed.returncode == 0, installed.stderr
    return python, target


def _cuobjdump(python: str) -> str:
    """PyPI nvidia-cuda-cuobjdump (the test extra, or the toolchain's), else PATH."""
    sites = [sysconfig.get_paths()["purelib"]]
    sites.append(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                capture_output=True, text=True, check=True).stdout.strip())
    for site in sites:
        for candidate in sorted(Path(site, "nvidia").glob("*/bin/cuobjdump")):
            return str(candidate)
    found = shutil.which("cuobjdump")
    if found is None:
        pytest.fail("cuobjdump not found: pip install nvidia-cuda-cuobjdump (it is in the test extra)")
    return found


@pytest.mark.slow
def test_cuda_wheel_has_the_kernels_archs_and_registers_its_op_for_cuda(cuda_wheel: tuple[str, Path]) -> None:
    python, target = cuda_wheel
    (module,) = (target / "relu").glob("_relu_cuda_*.abi3.so")
    listing = subprocess.run([_cuobjdump(python), "--list-elf", str(module)], capture_output=True, text=True, check=True).stdout
    assert sorted(set(re.findall(r"\.sm_(\d+[af]?)\.cubin", listing))) == ["80", "90"]  # cuda-capabilities 8.0, 9.0
    ops_id = module.name.removesuffix(".abi3.so")
    script = (
        "import torch, relu\n"
        f"print(torch._C._dispatch_has_kernel_for_dispatch_key('{ops_id}::relu', 'CUDA'))\n"
    )
    ran = subprocess.run([python, "-c", script], cwd=target.parent, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(target)})
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split()[-1] == "True"


@pytest.mark.slow
def test_cuda_wheel_op_matches_torch_on_a_gpu(cuda_wheel: tuple[str, Path]) -> None:
    python, target = cuda_wheel
    env = {**os.environ, "PYTHONPATH": str(target)}
    probe = subprocess.run([python, "-c", "import torch; print(torch.cuda.is_available())"],
                           capture_output=True, text=True, timeout=300, env=env)
    if probe.stdout.strip() != "True":
        pytest.skip("needs an NVIDIA GPU to run the CUDA relu op; this machine has none")
    script = (
        "import torch, relu\n"
        "x = torch.randn(4096, device='cuda')\n"
        "assert torch.equal(relu.relu(x), torch.relu(x))\n"
    )
    ran = subprocess.run([python, "-c", script], cwd=target.parent, capture_output=True, text=True, timeout=300, env=env)
    assert ran.returncode == 0, ran.stderr
