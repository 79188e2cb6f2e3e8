"""Pure parts of the build: CUDA archs, ops identifier, ops lint, compile plan, layout rules."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from buildtest_helpers import EXAMPLES
from kernel_builder.config import load
from kernel_builder.errors import BuildError
from kernel_builder.backends import cuda_archs
from kernel_builder.tree.checks import check_layout
from kernel_builder.driver.generate import (
    backend_defines,
    plan_compile,
    render,
    render_noarch_ops_py,
    render_ops_py,
    template_text,
)
from kernel_builder.driver.ops_id import ops_identifier, unique_id
from kernel_builder.tree.opslint import lint_source
from kernel_builder.variants.names import parse

A = cuda_archs.CudaArch.parse


def _strs(archs):
    return [str(a) for a in archs]


class TestCudaArchs:
    def test_defaults_by_toolkit(self):
        assert _strs(cuda_archs.default_archs((13, 0)))[-1] == "12.1+PTX"
        assert "7.0" not in _strs(cuda_archs.default_archs((13, 0)))
        assert _strs(cuda_archs.default_archs((12, 8)))[-1] == "12.0+PTX"
        assert _strs(cuda_archs.default_archs((12, 6)))[-1] == "9.0+PTX"

    @pytest.mark.parametrize(
        ("requested", "expected"),
        [
            (["8.0", "9.0"], ["8.0", "9.0"]),
            (["5.0", "7.5", "8.0", "9.0"], ["7.5", "8.0", "9.0"]),  # 5.0: no 5.x toolkit arch
            (["8.0"], ["8.0"]),  # 8.0 also serves 8.6/8.7/8.9
            (["9.0a", "10.0f"], ["10.0f", "9.0a"]),
            (["8.0+PTX"], ["8.0+PTX"]),  # PTX may serve later majors too
            (["12.5"], []),
            (["99999.0"], []),
        ],
    )
    def test_loose_intersection(self, requested, expected):
        result = cuda_archs.intersect([A(r) for r in requested], cuda_archs.default_archs((13, 0)))
        assert sorted(_strs(result)) == sorted(expected)

    def test_select_without_capabilities_is_the_supported_default(self):
        supported = cuda_archs.supported_from_nvcc("sm_75 sm_80 sm_86 sm_87 sm_88 sm_89 sm_90 sm_100 sm_110 sm_120")
        result = cuda_archs.select_archs(None, cuda_version=(13, 0), supported=supported)
        assert "12.1+PTX" not in _strs(result) and "12.0" in _strs(result)

    def test_empty_intersection_message(self):
        with pytest.raises(BuildError, match=r"\[kernel.k\]: empty set of capabilities after intersection"):
            cuda_archs.select_archs(["3.0"], cuda_version=(13, 0), kernel="k")

    def test_bad_capability_text(self):
        with pytest.raises(BuildError, match="invalid CUDA capability 'sm80'"):
            cuda_archs.select_archs(["sm80"], cuda_version=(13, 0), kernel="k")

    # Every capability upstream's table names, each CUDA row, and the a/f family suffixes.
    @pytest.mark.parametrize("cuda", [(13, 0), (12, 9), (12, 8), (12, 6)])
    def test_every_table_token_round_trips(self, cuda):
        for arch in cuda_archs.default_archs(cuda):
            for text in (str(arch.base), f"{arch.base}a", f"{arch.base}f"):
                parsed = A(text)
                assert str(parsed) == text
                chosen = cuda_archs.select_archs([text], cuda_version=cuda)
                assert text in _strs(chosen) and cuda_archs.dropped([text], chosen) == []

    def test_10_3a_and_12_1_are_built_from_cuda_12_9(self):
        requested = ["9.0", "10.3a", "12.1"]
        chosen = cuda_archs.select_archs(requested, cuda_version=(13, 0))
        assert _strs(chosen) == ["9.0", "10.3a", "12.1"]
        assert "10.3" in _strs(cuda_archs.default_archs((12, 9)))
        assert "10.3" not in _strs(cuda_archs.default_archs((12, 8)))

    def test_a_capability_the_toolkit_cannot_build_is_named(self):
        requested = ["9.0", "10.3a", "12.1"]
        chosen = cuda_archs.select_archs(requested, cuda_version=(12, 8))
        assert _strs(chosen) == ["9.0"]
        assert cuda_archs.dropped(requested, chosen) == ["10.3a", "12.1"]

    def test_the_plan_warns_for_a_dropped_capability(self, tmp_path):
        build = load(EXAMPLES / "relu")
        kernel = build.kernels["relu_cuda"]
        build = attrs.evolve(build, kernels={**build.kernels, "relu_cuda": attrs.evolve(kernel, cuda_capabilities=("9.0", "10.3a"))})
        plan = plan_compile(
            build, variant="torch214-cxx11-cu128-x86_64-linux", backend="cuda", ops_id="_relu_cuda_x",
            source_dir=tmp_path, scratch_dir=tmp_path, torch_version=(2, 14), cuda_version=(12, 8),
        )
        assert plan.archs == ("9.0",)
        assert plan.warnings == ("[kernel.relu_cuda]: CUDA 12.8 cannot build cuda-capabilities 10.3a; building 9.0",)

    def test_narrowing_keeps_the_named_capabilities_and_their_suffixed_forms(self):
        chosen = [A("8.0"), A("9.0a"), A("10.0")]
        assert _strs(cuda_archs.narrow(chosen, ["9.0"], kernel="k")) == ["9.0a"]
        assert _strs(cuda_archs.narrow(chosen, ["8.0", "10.0"], kernel="k")) == ["8.0", "10.0"]
        with pytest.raises(BuildError, match=r"--cuda-capabilities 7.5 leaves nothing of \[kernel.k\]'s archs \(8.0, 9.0a, 10.0\)"):
            cuda_archs.narrow(chosen, ["7.5"], kernel="k")
        with pytest.raises(BuildError, match="invalid CUDA capability 'sm90'"):
            cuda_archs.narrow(chosen, ["sm90"], kernel="k")

    def test_archs_for_a_variant_unites_the_components(self):
        caps = {"a": ["8.0", "9.0"], "b": ["9.0a"]}
        assert _strs(cuda_archs.archs_for(caps, (13, 0))) == ["8.0", "9.0", "9.0a"]
        assert _strs(cuda_archs.archs_for(caps, (13, 0), ["9.0"])) == ["9.0", "9.0a"]

    def test_the_plan_narrows(self, tmp_path):
        plan = plan_compile(
            load(EXAMPLES / "relu"), variant="torch214-cxx11-cu130-x86_64-linux", backend="cuda", ops_id="_relu_cuda_x",
            source_dir=tmp_path, scratch_dir=tmp_path, torch_version=(2, 14), cuda_version=(13, 0), narrow_cuda=("9.0",),
        )
        [(_, options)] = plan.source_options
        assert plan.archs == ("9.0",) and options[-1] == "-gencode=arch=compute_90,code=sm_90"
        assert not any("compute_80" in f for f in (*plan.cuda_flags, *options))

    def test_gencode_and_metadata(self):
        archs = [A("9.0a"), A("8.0"), A("12.1+PTX"), A("10.0")]
        assert cuda_archs.gencode_flags(archs) == [
            "-gencode=arch=compute_80,code=sm_80",
            "-gencode=arch=compute_90a,code=sm_90a",
            "-gencode=arch=compute_100,code=sm_100",
            "-gencode=arch=compute_121,code=[sm_121,compute_121]",
        ]
        assert cuda_archs.metadata_archs(archs) == ["10.0", "12.1+PTX", "8.0", "9.0a"]  # string sort


class TestOpsId:
    def test_identifier(self):
        assert ops_identifier("relu", "cuda", "abc1234_dirty") == "_relu_cuda_abc1234_dirty"
        with pytest.raises(ValueError):
            ops_identifier("relu", "cuda", "abc-123")

    def test_override_wins(self, tmp_path):
        assert unique_id(tmp_path, override="abc1234-dirty") == "abc1234_dirty"

    def test_git_short_revision(self, tmp_path):
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        (tmp_path / "build.toml").write_text("x\n")
        git = ["git", "-C", str(tmp_path), "-c", "user.email=t@t", "-c", "user.name=t"]
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-qm", "init"], check=True)
        head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout
        assert unique_id(tmp_path) == head[:7]
        (tmp_path / "build.toml").write_text("y\n")
        assert unique_id(tmp_path) == head[:7] + "_dirty"

    def test_outside_git_the_build_toml_hash_is_location_independent(self, tmp_path):
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "build.toml").write_text("same\n")
        (tmp_path / "b" / "kernel.cu").write_text("// sources do not count\n")
        ids = {unique_id(tmp_path / n) for n in ("a", "b")}
        assert len(ids) == 1 and re.fullmatch(r"[0-9a-f]{7}", ids.pop())
        (tmp_path / "b" / "build.toml").write_text("changed\n")
        assert unique_id(tmp_path / "a") != unique_id(tmp_path / "b")


class TestOpsLint:
    def test_prefixed_names_pass(self):
        source = (
            "import torch\nfrom ._ops import add_op_namespace_prefix\n"
            "@torch.library.custom_op(add_op_namespace_prefix('f'), mutates_args=())\ndef f(x): return x\n"
            "@torch.library.register_fake(add_op_namespace_prefix('f'))\ndef g(x): return x\n"
            "@f.register_fake\ndef h(x): return x\n"
        )
        assert lint_source(source) == []

    @pytest.mark.parametrize(
        "decorator",
        [
            "@torch.library.custom_op('ns::f', mutates_args=())",
            "@custom_op(name)",
            "@triton_op(f'{NS}::f', mutates_args=())",
            "@torch.library.register_kernel('ns::f', 'cpu')",
            "@register_vmap('ns::f')",
            "@torch.library.register_torch_dispatch('ns::f', T)",
            "@torch.library.register_fake(prefix('f'))",
        ],
    )
    def test_literal_or_other_names_fail(self, decorator):
        [violation] = lint_source(f"{decorator}\ndef f(x):\n    return x\n", "k.py")
        assert violation.line == 1 and violation.target == "f" and str(violation).startswith("k.py:1: @")

    def test_classes_are_linted_and_nested_defs_are_not(self):
        source = "@custom_op('a::b')\nclass C: pass\ndef outer():\n    @custom_op('a::c')\n    def inner(): pass\n"
        assert [v.target for v in lint_source(source)] == ["C"]


class TestPlan:
    def _plan(self, tmp_path, example, backend, **kw):
        return plan_compile(
            load(EXAMPLES / example),
            variant="v",
            backend=backend,
            ops_id=f"_relu_{backend}_abc",
            source_dir=EXAMPLES / example,
            scratch_dir=tmp_path,
            torch_version=kw.pop("torch_version", (2, 13)),
            **kw,
        )

    def test_cpu_plan_compiles_only_cpu_components(self, tmp_path):
        plan = self._plan(tmp_path, "relu", "cpu")
        assert [Path(s).name for s in plan.sources] == ["torch_binding.cpp", "relu_cpu.cpp"]
        assert plan.defines == ("TORCH_EXTENSION_NAME=_relu_cpu_abc", "CPU_KERNEL")
        assert plan.cxx_standard == 20 and plan.archs == ()
        assert "-fno-gnu-unique" in plan.cxx_flags

    def test_cuda_plan(self, tmp_path):
        plan = self._plan(tmp_path, "relu", "cuda", cuda_version=(13, 0), torch_version=(2, 11))
        assert [Path(s).name for s in plan.sources] == ["torch_binding.cpp", "relu.cu"]
        assert plan.defines[1:] == ("CUDA_KERNEL", "USE_CUDA=1")
        assert plan.archs == ("8.0", "9.0") and plan.cxx_standard == 17
        cmake = render(plan)["CMakeLists.txt"]
        assert "-gencode=arch=compute_80,code=sm_80" in cmake and "LANGUAGES CXX CUDA" in cmake
        assert "Python3_add_library(_relu_cuda_abc MODULE USE_SABI 3 WITH_SOABI" in cmake

    @pytest.mark.parametrize(
        ("backend", "expected"),
        [
            ("cpu", ("CPU_KERNEL",)),
            ("cuda", ("CUDA_KERNEL", "USE_CUDA=1")),
            ("rocm", ("ROCM_KERNEL", "USE_ROCM=1")),
            ("xpu", ("XPU_KERNEL", "USE_XPU")),
            ("metal", ("METAL_KERNEL",)),
        ],
    )
    def test_backend_macros_of_the_source_contract(self, backend, expected):
        assert backend_defines(backend) == expected

    def test_registration_header_has_every_macro_of_the_contract(self):
        header = template_text("registration.h")
        for macro in (
            "TORCH_LIBRARY_EXPAND(NAME, MODULE)",
            "TORCH_LIBRARY_IMPL_EXPAND(NAME, DEVICE, MODULE)",
            "STABLE_TORCH_LIBRARY_EXPAND(NAME, MODULE)",
            "STABLE_TORCH_LIBRARY_IMPL_EXPAND(NAME, DEVICE, MODULE)",
            "REGISTER_EXTENSION(NAME)",
        ):
            assert f"#define {macro}" in header
        assert "KB_CONCAT(PyInit_, NAME)" in header

    def test_stable_abi_define_in_plan(self, tmp_path):
        plan = self._plan(tmp_path, "relu-stable-abi", "cpu", stable_abi=(2, 11))
        assert "TORCH_TARGET_VERSION=0x020b000000000000" in plan.defines

    def test_flags_reach_their_sources(self, tmp_path):
        source = tmp_path / "k"
        import shutil

        shutil.copytree(EXAMPLES / "relu", source)
        toml = source / "build.toml"
        text = toml.read_text().replace('src = ["relu_cuda/relu.cu"]', 'src = ["relu_cuda/relu.cu"]\ncuda-flags = ["-lineinfo"]')
        text = text.replace('src = ["relu_cpu/relu_cpu.cpp"]', 'src = ["relu_cpu/relu_cpu.cpp"]\ncxx-flags = ["-DFAST"]\ninclude = ["relu_cpu"]')
        toml.write_text(text)
        build = load(source)
        cuda = plan_compile(build, variant="v", backend="cuda", ops_id="_r_cuda_a", source_dir=source, scratch_dir=tmp_path, torch_version=(2, 13), cuda_version=(13, 0))
        [(path, options)] = cuda.source_options
        assert path == (source / "relu_cuda/relu.cu").as_posix()
        assert options[0] == "-lineinfo" and re.fullmatch(r"-frandom-seed=0x[0-9a-f]{8}", options[1])
        cpu = plan_compile(build, variant="v", backend="cpu", ops_id="_r_cpu_a", source_dir=source, scratch_dir=tmp_path, torch_version=(2, 13))
        assert dict(cpu.source_options) == {(source / "relu_cpu/relu_cpu.cpp").as_posix(): ("-DFAST",)}
        assert (source / "relu_cpu").as_posix() in cpu.includes

    def test_each_cu_file_is_compiled_for_its_own_components_archs(self, tmp_path):
        """As upstream (set_gencode_flags_for_srcs): sage-attention's sm_100-only component
        failed in ptxas when its api.cu was compiled for every component's archs (sm_80)."""
        source = tmp_path / "k"
        import shutil

        shutil.copytree(EXAMPLES / "relu", source)
        (source / "relu_cuda" / "sm100.cu").write_text("// sm_100 only\n")
        (source / "torch-ext" / "extra.cu").write_text("// a [torch] source\n")
        toml = source / "build.toml"
        text = toml.read_text().replace('"torch-ext/torch_binding.cpp"', '"torch-ext/torch_binding.cpp", "torch-ext/extra.cu"', 1)
        assert 'cuda-capabilities = ["8.0", "9.0"]' in text  # relu_cuda's
        text += '\n[kernel.sm100]\nbackend = "cuda"\ndepends = ["torch"]\ncuda-capabilities = ["10.0a"]\nsrc = ["relu_cuda/sm100.cu"]\n'
        toml.write_text(text)
        plan = plan_compile(load(source), variant="v", backend="cuda", ops_id="_r_cuda_a", source_dir=source,
                            scratch_dir=tmp_path, torch_version=(2, 13), cuda_version=(13, 0))
        gencode = {Path(path).name: [o for o in options if o.startswith("-gencode")] for path, options in plan.source_options}
        assert gencode == {
            "relu.cu": ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90"],
            "sm100.cu": ["-gencode=arch=compute_100a,code=sm_100a"],
            "extra.cu": ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90",
                         "-gencode=arch=compute_100a,code=sm_100a"],
        }
        assert not any(f.startswith("-gencode") for f in plan.cuda_flags)
        assert plan.archs == ("10.0a", "8.0", "9.0")  # metadata: every arch the variant builds

    def test_ops_py_templates(self):
        text = render_ops_py(name="relu", backend="cpu", ops_id="_relu_cpu_abc")
        assert "from . import _relu_cpu_abc" in text
        noarch = render_noarch_ops_py(name="s", python_name="s", uid="abc")
        assert '_OPS_NAMESPACE = f"_s_{_backend()}_abc"' in noarch
        compile(noarch, "_ops.py", "exec")
        compile(text, "_ops.py", "exec")


class TestLayoutRules:
    def test_missing_init_nested_package_and_stray_files(self, tmp_path):
        (tmp_path / "relu").mkdir()
        (tmp_path / "relu" / "x.py").write_text("")
        (tmp_path / "notes.txt").write_text("")
        (tmp_path / "other.so").write_bytes(b"")
        errors = check_layout(tmp_path, None, "relu", ("py", "pyi"))
        assert any("__init__.py is missing" in e for e in errors)
        assert any("nested relu/" in e for e in errors)
        assert any("unexpected file notes.txt" in e for e in errors)
        assert any("unexpected shared library other.so" in e for e in errors)


class TestCheckVariantOnSyntheticTrees:
    """check_variant on small hand-made trees: each broken one names its problem."""

    def _tree(self, root: Path, init: str = "from ._ops import ops\n", backend: str = "cpu", digest: bool = True) -> Path:
        from kernel_builder.tree.digest import compute_digest
        from kernel_builder.tree.metadata import Metadata, MetadataBackend
        from kernel_builder.driver.generate import render_noarch_ops_py

        variant = root / "torch-cpu"
        variant.mkdir(parents=True)
        (variant / "__init__.py").write_text(init)
        (variant / "_ops.py").write_text(render_noarch_ops_py(name="kk", python_name="kk", uid="abc"))
        metadata = Metadata(name="kk", id="_kk_cpu_abc", version=1, license="MIT", backend=MetadataBackend(backend))
        if digest:
            metadata = metadata.with_digest(compute_digest(variant))
        metadata.write(variant / "metadata.json")
        return variant

    def test_a_good_tree_passes_with_the_import_check(self, tmp_path):
        import sys

        from kernel_builder.tree.checks import check_variant

        report = check_variant(self._tree(tmp_path), python=sys.executable)
        assert report.ok and report.errors == ()

    def test_the_import_check_interpreter_runs_without_transparent_huge_pages(self):
        """qemu-user madvises its translated code for huge pages; the import check turns
        them off for its interpreter (the kernel says so in /proc/PID/status)."""
        from kernel_builder.tree.checks import start_import_check

        proc = start_import_check(sys.executable)
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
        finally:
            proc.kill()
            proc.communicate()
        assert "THP_enabled:\t0" in status

    def test_the_import_path_is_read_as_site_directories(self, tmp_path, monkeypatch):
        """A python-depends wheel whose module is reachable only through its .pth file
        (as nvidia-cutlass-dsl's `cutlass` is) imports, after the toolchain's own path."""
        import sys

        from kernel_builder.errors import CheckError
        from kernel_builder.tree.checks import check_variant

        site_dir = tmp_path / "site"
        (site_dir / "vendor_packages" / "deepmod").mkdir(parents=True)
        (site_dir / "vendor_packages" / "deepmod" / "__init__.py").write_text("VALUE = 7\n")
        init = "import deepmod\nassert deepmod.VALUE == 7\nfrom ._ops import ops\n"
        tree = self._tree(tmp_path / "t", init=init)
        monkeypatch.setenv("KERNEL_BUILDER_IMPORT_PATH", str(site_dir))
        with pytest.raises(CheckError, match="imports module 'deepmod'"):
            check_variant(tree, python=sys.executable)
        (site_dir / "vendor.pth").write_text("vendor_packages\n")
        report = check_variant(tree, python=sys.executable)
        assert report.ok and report.errors == ()

    def test_import_failure_missing_digest_and_backend_mismatch(self, tmp_path):
        import sys

        from kernel_builder.errors import CheckError
        from kernel_builder.tree.checks import check_variant

        bad = self._tree(tmp_path, init="raise ImportError('boom from the kernel')\n", digest=False)
        with pytest.raises(CheckError, match="boom from the kernel") as info:
            check_variant(bad, python=sys.executable, require_digest=False)
        assert "import: importing the variant" in str(info.value)
        other = self._tree(tmp_path / "b", backend="cuda", digest=False)
        with pytest.raises(CheckError) as info:
            check_variant(other)
        assert "metadata: backend.type is cuda but the variant is cpu" in str(info.value)
        assert "digest: metadata.json has no digest" in str(info.value)

    def test_runpath_is_reported(self, tmp_path):
        from kernel_builder.tree.checks import check_runpath

        src = tmp_path / "x.c"
        src.write_text("int f(void) { return 1; }\n")
        so = tmp_path / "x.so"
        subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-rpath,/opt/somewhere", "-o", str(so), str(src)], check=True)
        [problem] = check_runpath(so)
        assert "/opt/somewhere" in problem and problem.startswith("runpath: x.so")
