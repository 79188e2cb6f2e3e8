"""Builds that must fail, each with the message a user needs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from buildtest_helpers import (
    CPU_PYTHON,
    CUDA_VARIANT,
    EXAMPLES,
    copy_example,
    run_example_tests,
    run_variant,
    torch214_python,
)

from kernel_builder.flake.local import build_local
from kernel_builder.errors import BuildError

pytestmark = pytest.mark.timeout(300)


def test_invalid_cuda_capability(tmp_path):
    done = run_variant(EXAMPLES / "relu-invalid-capability", CUDA_VARIANT, tmp_path, torch214_python())
    assert done.returncode == 1
    assert "[kernel.relu_cuda]: empty set of capabilities after intersection" in done.stderr
    assert "['99999.0']" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_invalid_rocm_arch(tmp_path):
    done = run_variant(EXAMPLES / "relu-invalid-capability", "torch213-cxx11-rocm71-x86_64-linux", tmp_path, CPU_PYTHON)
    assert done.returncode == 1
    assert "[kernel.relu_rocm]: empty set of architectures after intersection" in done.stderr


def test_torch_bounds_exclude_the_local_torch(tmp_path):
    with pytest.raises(BuildError, match=r"torch 2\.13 > \[torch\]\.maxver 2\.12"):
        build_local(EXAMPLES / "relu-torch-bounds", out_dir=tmp_path, toolchain=CPU_PYTHON)


def test_variant_torch_must_match_the_toolchain(tmp_path):
    done = run_variant(EXAMPLES / "relu-torch-bounds", "torch212-cxx11-cpu-x86_64-linux", tmp_path, CPU_PYTHON)
    assert done.returncode == 1
    assert "cannot be built with the toolchain Python" in done.stderr
    assert "Torch version (2.12) does not match environment Torch version (2.13)" in done.stderr


def test_stable_abi_newer_than_torch(tmp_path):
    source = copy_example("relu-stable-abi", tmp_path)
    toml = source / "build.toml"
    toml.write_text(toml.read_text().replace('cpu = "2.11"', 'cpu = "2.14"'))
    done = run_variant(source, "torch-stable-abi214-cpu-x86_64-linux", tmp_path / "out", CPU_PYTHON)
    assert done.returncode == 1
    assert "Torch stable ABI version (2.14) is too new for environment Torch version (2.13)" in done.stderr


def test_invalid_variant_name_refused_before_anything_is_announced(tmp_path):
    """``build --local --variant ''``: every name is checked first, so nothing says
    "variant(s) selected" and nothing is built."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "kernel_builder", "build", str(EXAMPLES / "relu"), "--local", "--variant", "torch-cpu", "--variant", ""],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 4
    assert done.stderr.splitlines() == ["error: invalid variant name ''", "hint: run `kernel-builder list-variants` to see valid names"]
    with pytest.raises(BuildError, match="invalid variant name 'torch213'"):
        build_local(EXAMPLES / "relu", variants=["torch-cpu", "torch213"], out_dir=tmp_path, toolchain=CPU_PYTHON)
    assert list(tmp_path.iterdir()) == []


_EXTRA_KERNELS = {
    "rocm": ("torch213-cxx11-rocm71-x86_64-linux", 'rocm-archs = ["gfx942"]', "relu_cuda/relu.cu", "ROCM_KERNEL", 'set(CMAKE_HIP_ARCHITECTURES "gfx942")'),
    "xpu": ("torch213-cxx11-xpu20253-x86_64-linux", "", "relu_cpu/relu_cpu.cpp", "XPU_KERNEL", "-fsycl"),
    "metal": ("torch213-metal-aarch64-darwin", "", "relu_cpu/relu_cpu.cpp", "METAL_KERNEL", "LANGUAGES CXX OBJCXX"),
}


@pytest.mark.parametrize("backend", sorted(_EXTRA_KERNELS))
def test_backends_without_a_toolchain_here_generate_then_fail(tmp_path, backend):
    variant, extra, src, macro, language = _EXTRA_KERNELS[backend]
    source = copy_example("relu", tmp_path)
    toml = source / "build.toml"
    text = toml.read_text().replace('backends = ["cpu", "cuda"]', f'backends = ["cpu", "cuda", "{backend}"]')
    text += f'\n[kernel.relu_{backend}]\nbackend = "{backend}"\ndepends = ["torch"]\n{extra}\nsrc = ["{src}"]\n'
    toml.write_text(text)
    done = run_variant(source, variant, tmp_path / "out", CPU_PYTHON)
    assert done.returncode == 1
    assert f"toolchain for {backend} is not available on this machine" in done.stderr
    match = re.search(r"the generated build files are in (\S+)$", done.stderr, re.MULTILINE)
    assert match, done.stderr
    project = Path(match[1])
    try:
        cmake = (project / "CMakeLists.txt").read_text()
        assert macro in cmake and f"TORCH_EXTENSION_NAME=_relu_{backend}_" in cmake and language in cmake
        assert src in cmake and "torch-ext/torch_binding.cpp" in cmake
        assert (project / "include" / "registration.h").is_file()
    finally:
        shutil.rmtree(project.parent, ignore_errors=True)


@pytest.mark.parametrize("name", ["relu-torch-bounds", "relu-invalid-capability", "silu-and-mul-bad-registration"])
def test_failing_examples_own_tests(name):
    assert " passed" in run_example_tests(name)


def test_a_local_compile_failure_names_its_first_error_and_keeps_the_whole_log(tmp_path):
    """`build --local`: the error is the first compiler error of the whole log (not its
    end), located, with the counts; the log it names is kept."""
    source = copy_example("relu", tmp_path)
    toml = source / "build.toml"
    toml.write_text(toml.read_text().replace('src = ["relu_cpu/relu_cpu.cpp"]', 'src = ["relu_cpu/relu_cpu.cpp", "relu_cpu/noise.cpp"]'))
    (source / "relu_cpu" / "noise.cpp").write_text("".join(f"#warning noise {i}\n" for i in range(30)) + "int noise() { return 0; }\n")
    relu = source / "relu_cpu" / "relu_cpu.cpp"
    relu.write_text('#include "no_such_header.h"\n' + relu.read_text())
    with pytest.raises(BuildError) as caught:
        build_local(source, variants=["torch213-cxx11-cpu-x86_64-linux"], out_dir=tmp_path / "out", toolchain=CPU_PYTHON, cores=2)
    message = caught.value.message
    assert re.search(r"first error \(1 error\(s\), \d+ warning\(s\) in all\):\n  \S+/relu_cpu/relu_cpu\.cpp:1:10: fatal error: "
                     r"no_such_header\.h: No such file or directory\n", message), message
    assert "#warning noise" not in message and "--verbose" not in str(caught.value)
    log = Path(re.search(r"the whole output is in (\S+build\.log)\)", message).group(1))
    assert "no_such_header.h: No such file or directory" in log.read_text()
    shutil.rmtree(log.parent, ignore_errors=True)
