"""Issue 42 item 4: `[tvm-ffi]` kernels build (examples/add-tvm-ffi).

The module is a plain shared library named ``<ops id>.so`` that the generated ``_ops.py``
opens with ``tvm_ffi.load_module``; it compiles against the pinned apache-tvm-ffi wheel
(``$KERNEL_BUILDER_TVM_FFI`` in Nix, the toolchain Python's own ``tvm_ffi`` otherwise), is
manylinux_2_28 clean although tvm-ffi's headers use a GLIBCXX_3.4.26 constructor
(glibcxx_compat.cpp), and PyPI ``kernels`` 0.19.1 loads and runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import kernel_abi_check
import pytest

from kernel_builder.config import load
from kernel_builder.driver import generate, tvm_ffi
from kernel_builder.errors import BuildError
from kernel_builder.variants.buildsets import load_build_sets
from kernel_builder.variants.matrix import matrix
from nix_support import EXAMPLES, PYTHON, copy_kernel, kernel_builder, pinned_tvm_ffi_site

REPO = Path(__file__).resolve().parents[2]
VARIANT = "tvm-ffi01-cpu-x86_64-linux"
CUDA_VARIANT = "tvm-ffi01-cu130-x86_64-linux"
EXAMPLE = EXAMPLES / "add-tvm-ffi"



def test_the_example_is_named_as_kernels_names_tvm_ffi_variants() -> None:
    from kernels._internals.variants import TvmFfi, parse_variant

    names = matrix(load(EXAMPLE), load_build_sets(), "x86_64-linux").names
    assert names == [VARIANT, "tvm-ffi01-cu126-x86_64-linux", CUDA_VARIANT, "tvm-ffi01-cu132-x86_64-linux"]
    for name in names:
        parsed = parse_variant(name)
        assert isinstance(parsed.framework, TvmFfi) and str(parsed.framework.version) == "0.1"


def test_the_plan_compiles_against_tvm_ffi_not_torch(tmp_path: Path) -> None:
    build = load(EXAMPLE)
    site = pinned_tvm_ffi_site()
    found = tvm_ffi.from_site(site, origin="test")
    assert found.version == "0.1.15.post2" and found.major_minor == (0, 1)
    plan = generate.plan_compile(
        build, variant=VARIANT, backend="cpu", ops_id="_add_tvm_ffi_cpu_abc1234", source_dir=EXAMPLE,
        scratch_dir=tmp_path, torch_version=(2, 12), tvm_ffi=found,
    )
    assert "TVM_FFI_EXTENSION_NAME=_add_tvm_ffi_cpu_abc1234" in plan.defines and "CPU_KERNEL" in plan.defines
    assert not any(d.startswith("TORCH_EXTENSION_NAME") for d in plan.defines)
    assert plan.system_includes == (str(site / "tvm_ffi" / "include"),)
    assert plan.link_libraries == (str(site / "tvm_ffi" / "lib" / "libtvm_ffi.so"),)
    assert plan.cxx_standard == 17 and plan.generated_targets == (generate.COMPAT_TARGET,)
    files = generate.render(plan)
    cmake = files["CMakeLists.txt"]
    assert "find_package(Torch" not in cmake and "Python3_add_library" not in cmake
    assert 'PREFIX "" SUFFIX ".so"' in cmake and "--exclude-libs,libkb_glibcxx_compat.a" in cmake
    assert "basic_ostringstream" in files["glibcxx_compat.cpp"]
    # a torch kernel's project is what it was: no compat library, no tvm-ffi
    relu = generate.plan_compile(
        load(EXAMPLES / "relu"), variant="torch213-cxx11-cpu-x86_64-linux", backend="cpu", ops_id="_relu_cpu_x",
        source_dir=EXAMPLES / "relu", scratch_dir=tmp_path, torch_version=(2, 13),
    )
    assert relu.generated_targets == () and set(generate.render(relu)) == {"CMakeLists.txt", "include/registration.h"}


def test_a_tvm_ffi_kernel_without_tvm_ffi_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(BuildError) as caught:
        tvm_ffi.locate(PYTHON, {tvm_ffi.ENV_VAR: str(tmp_path)})
    assert f"${tvm_ffi.ENV_VAR}: {tmp_path} holds no apache-tvm-ffi" in caught.value.message
    assert "pip install apache-tvm-ffi" in (caught.value.hint or "")
    with pytest.raises(BuildError) as caught:
        generate.plan_compile(
            load(EXAMPLE), variant=VARIANT, backend="cpu", ops_id="_x", source_dir=EXAMPLE, scratch_dir=tmp_path,
            torch_version=(2, 12),
        )
    assert "needs the apache-tvm-ffi" in caught.value.message


def _run_with_kernels(site: Path, code: str) -> str:
    """PyPI kernels 0.19.1 (this venv) with the pinned tvm_ffi importable."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME",)}
    env["PYTHONPATH"] = str(site)
    done = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_example_builds_hermetically_and_kernels_runs_it(tmp_path: Path) -> None:
    kernel = copy_kernel("add-tvm-ffi", tmp_path / "add-tvm-ffi", git=False, salt=True)
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    done = kernel_builder("build", str(kernel), "--variant", VARIANT, "-j", "1", "--cores", "2", "-L", env=env)
    variant = kernel / "build" / VARIANT
    metadata = json.loads((variant / "metadata.json").read_text())
    ops_id = metadata["id"]
    assert ops_id.startswith("_add_tvm_ffi_cpu_") and metadata["backend"] == {"type": "cpu"}
    # symbols.json: the public API the import check found (written for every variant)
    assert sorted(p.name for p in variant.iterdir()) == sorted(
        ["__init__.py", "_ops.py", "metadata.json", "symbols.json", f"{ops_id}.so"])
    assert set(metadata["digest"]["files"]) == {"__init__.py", "_ops.py", "symbols.json", f"{ops_id}.so"}
    assert "add" in (variant / "symbols.json").read_text()
    # the import check opened it through tvm_ffi and found its exported function
    assert f"{VARIANT}: registered ops: add_cpu" in done.stderr, done.stderr[-3000:]
    module = variant / f"{ops_id}.so"
    assert list(kernel_abi_check.ObjectFile(str(module)).check_manylinux("manylinux_2_28")) == []
    needed = subprocess.run(["readelf", "-d", str(module)], capture_output=True, text=True, check=True).stdout
    assert "[libtvm_ffi.so]" in needed and "libtorch" not in needed and "RUNPATH" not in needed
    for path in variant.rglob("*"):
        assert b"/nix/store/" not in path.read_bytes(), path
    # `check` imports it again, with this venv's Python, which has no tvm_ffi: said plainly
    refused = kernel_builder("check", str(kernel / "build"), env=env, check=False)
    assert refused.returncode != 0
    assert "is a tvm-ffi kernel and" in refused.stdout + refused.stderr and "cannot import tvm_ffi" in refused.stdout + refused.stderr
    site = pinned_tvm_ffi_site()
    # with tvm_ffi on the import path it passes
    check = kernel_builder("check", str(kernel / "build"), env={**env, "KERNEL_BUILDER_IMPORT_PATH": str(site)})
    assert check.returncode == 0
    out = _run_with_kernels(site, (
        "import json, torch, numpy as np\n"
        "from pathlib import Path\n"
        "from kernels import get_local_kernel\n"
        f"k = get_local_kernel(Path({str(kernel / 'build')!r}))\n"
        "a = torch.arange(-4, 4, dtype=torch.float32); out = torch.empty_like(a)\n"
        "k.add(a, torch.ones(8), out)\n"
        "x = np.full(3, 2.5, dtype=np.float32); y = np.empty_like(x); k.add(x, x, y)\n"
        "print(json.dumps([out.tolist(), y.tolist(), k.__file__]))\n"
    ))
    added, doubled, where = json.loads(out.strip().splitlines()[-1])
    assert added == [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0] and doubled == [5.0, 5.0, 5.0]
    assert VARIANT in where
    # and the example's own tests pass against the built tree
    tests = subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(kernel / "tests")],
        capture_output=True, text=True, check=False, cwd=kernel,
        env={**os.environ, "PYTHONPATH": str(site), "KERNEL_BUILD_DIR": str(kernel / "build")},
    )
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_build_local_uses_the_given_tvm_ffi(tmp_path: Path) -> None:
    """Without Nix: the tvm-ffi that $KERNEL_BUILDER_TVM_FFI names; the host toolchain's
    newer libstdc++ is kept out of the module by the compat library too."""
    kernel = copy_kernel("add-tvm-ffi", tmp_path / "add-tvm-ffi", git=False)
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state"),
           tvm_ffi.ENV_VAR: str(pinned_tvm_ffi_site())}
    done = kernel_builder("build", "--local", str(kernel), "--variant", VARIANT, env=env)
    assert f"{VARIANT}: registered ops: add_cpu" in done.stderr
    assert "GLIBCXX_3.4.26" not in done.stderr
    (module,) = (kernel / "build" / VARIANT).glob("*.so")
    assert module.name.endswith(".so") and not module.name.endswith(".abi3.so")


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_cuda_variant_builds_hermetically_and_loads_through_tvm_ffi(tmp_path: Path) -> None:
    """The CUDA runtime is linked statically (CMake's default for the CUDA language), so the
    module needs neither torch nor a CUDA wheel to load; running it needs a GPU, which the
    import check does not: it only opens the library and looks its functions up."""
    kernel = copy_kernel("add-tvm-ffi", tmp_path / "add-tvm-ffi", git=False, salt=True)
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    done = kernel_builder("build", str(kernel), "--variant", CUDA_VARIANT, "-j", "1", "--cores", "2", "-L", env=env)
    assert f"{CUDA_VARIANT}: registered ops: add_cuda" in done.stderr, done.stderr[-3000:]
    variant = kernel / "build" / CUDA_VARIANT
    metadata = json.loads((variant / "metadata.json").read_text())
    assert metadata["backend"] == {"type": "cuda", "archs": ["8.0", "9.0"]}
    module = variant / f"{metadata['id']}.so"
    assert list(kernel_abi_check.ObjectFile(str(module)).check_manylinux("manylinux_2_28")) == []
    needed = subprocess.run(["readelf", "-d", str(module)], capture_output=True, text=True, check=True).stdout
    assert "[libtvm_ffi.so]" in needed and "libcudart" not in needed and "libtorch" not in needed
    assert b"/nix/store/" not in module.read_bytes()
    out = _run_with_kernels(pinned_tvm_ffi_site(), (
        "import sys, importlib.util, tvm_ffi, torch\n"
        f"path = {str(variant)!r}\n"
        "spec = importlib.util.spec_from_file_location('add_cuda_build', path + '/__init__.py', submodule_search_locations=[path])\n"
        "mod = importlib.util.module_from_spec(spec); sys.modules['add_cuda_build'] = mod; spec.loader.exec_module(mod)\n"
        "from add_cuda_build._ops import ops\n"
        "print(ops.implements_function('add_cuda'), ops.implements_function('add_cpu'))\n"
        "try:\n"
        "    mod.add(torch.ones(2), torch.ones(2), torch.empty(2))\n"
        "except NotImplementedError as exc:\n"
        "    print(exc)\n"
    ))
    assert out.splitlines() == ["True False", "this build of add-tvm-ffi has no cpu implementation"]
