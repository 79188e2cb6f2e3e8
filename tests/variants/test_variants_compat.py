"""The one compatibility rule (``variants.compat``): loading, importing and building.

``fits`` is the loader's rule (resolution's acceptance; the oracle tests compare it with
PyPI ``kernels``); ``importable`` and ``buildable`` narrow it for the import check and the
build. One table of cases, each with the three answers.
"""

from __future__ import annotations

import pytest

from kernel_builder.variants.compat import buildable, compilable_here, fits, importable
from kernel_builder.variants.names import parse
from kernel_builder.variants.resolve import resolve
from kernel_builder.variants.system import System

CUDA_TORCH = System(backend="cuda 13.0", cpu="x86_64", os="linux", torch_version=(2, 14), cxx11_abi=True)
CPU_TORCH = System(backend="cpu", cpu="x86_64", os="linux", torch_version=(2, 13), cxx11_abi=True)

# (variant, system, fits, importable, buildable): None = yes, else a fragment of the reason
CASES = [
    ("torch214-cxx11-cu130-x86_64-linux", CUDA_TORCH, None, None, None),
    ("torch214-cxx11-cpu-x86_64-linux", CUDA_TORCH, "backend (cpu) does not match selected backend (cu130)", None, None),
    ("torch214-cxx11-cu126-x86_64-linux", CUDA_TORCH, "CUDA version (12.6) is not compatible", "CUDA version (12.6) is not compatible", "CUDA version (12.6)"),
    ("torch214-cxx11-cu132-x86_64-linux", CUDA_TORCH, "CUDA version (13.2) is not compatible", "CUDA version (13.2)", "CUDA version (13.2)"),
    ("torch213-cxx11-cu130-x86_64-linux", CUDA_TORCH, "Torch version (2.13)", "Torch version (2.13)", "Torch version (2.13)"),
    ("torch213-cxx11-cu130-x86_64-linux", CPU_TORCH, "backend (cu130) does not match selected backend (cpu)", "backend (cu130)", "backend (cu130)"),
    ("torch-stable-abi211-cpu-x86_64-linux", CPU_TORCH, None, None, None),
    ("torch-stable-abi214-cpu-x86_64-linux", CPU_TORCH, "Torch stable ABI version (2.14) is too new", "too new", "too new"),
    ("torch213-cxx98-cpu-x86_64-linux", CPU_TORCH, "CXX11 ABI", "CXX11 ABI", "CXX11 ABI"),
    ("torch213-cxx11-cpu-aarch64-linux", CPU_TORCH, "CPU (aarch64)", "CPU (aarch64)", "CPU (aarch64)"),
    # no toolchain compiles ROCm here: the build only needs the framework to fit (and then
    # writes the build files and says the toolchain is missing)
    ("torch213-cxx11-rocm71-x86_64-linux", CPU_TORCH, "backend (rocm71)", "backend (rocm71)", None),
    ("torch-cpu", CPU_TORCH, None, None, None),
    ("torch-cuda", CPU_TORCH, "backend (cuda) does not match system backend (cpu)", None, None),
    ("torch-universal", CUDA_TORCH, None, None, None),
]


@pytest.mark.parametrize(("name", "system", "fit", "imports", "builds"), CASES)
def test_one_rule_three_questions(name, system, fit, imports, builds) -> None:
    variant = parse(name)
    for answer, expected in ((fits(variant, system), fit), (importable(variant, system), imports), (buildable(variant, system), builds)):
        if expected is None:
            assert answer.ok, answer.reason
        else:
            assert not answer.ok and expected in (answer.reason or ""), answer.reason


def test_resolution_accepts_exactly_what_fits() -> None:
    names = [name for name, *_ in CASES]
    for system in (CUDA_TORCH, CPU_TORCH):
        accepted = {a.variant for a in resolve(system, names).accepted}
        assert accepted == {n for n in names if fits(parse(n), system)}


def test_a_torch_without_torch_imports_only_noarch() -> None:
    bare = System(backend="cpu", cpu="x86_64", os="linux")
    assert not importable(parse("torch213-cxx11-cpu-x86_64-linux"), bare)
    assert importable(parse("torch-cpu"), bare)


def test_compilable_here_is_linux_cpu_and_cuda() -> None:
    assert compilable_here(parse("torch213-cxx11-cu130-x86_64-linux"))
    assert compilable_here(parse("torch-metal"))  # noarch compiles nothing
    assert not compilable_here(parse("torch213-cxx11-rocm71-x86_64-linux"))
    assert not compilable_here(parse("torch213-cpu-aarch64-darwin"))
