"""Variant names: format/parse round-trips, and the reference loader reads our names the same way."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel_builder.config.model import Backend
from kernel_builder.variants import names
from kernel_builder.variants.names import BackendInfo, Kind, PythonTag, Variant
from kernel_builder.variants.system import System

# The reference loader's parser (PyPI kernels==0.19.1; its internals live under _internals): test-only oracle.
from kernels._internals.variants import ArchVariant, MlxNoarch, NoarchVariant, SdkVariant, parse_variant

CPUS = st.sampled_from(["x86_64", "aarch64"])
OSES = st.sampled_from(["linux", "darwin", "windows"])
small = st.integers(min_value=0, max_value=9)
minor = st.integers(min_value=0, max_value=40)
computes = st.one_of(
    st.sampled_from(["cpu", "metal", "neuron", "tpu"]).map(BackendInfo),
    st.builds(lambda b, M, m: BackendInfo(b, (M, m)), st.sampled_from(["cuda", "rocm", "xpu", "cann"]), st.integers(0, 3000), small),
)
arch_variants = st.one_of(
    st.builds(lambda v, c, cpu, os, tag: Variant.torch(v, c, cpu, os, cxx11=tag), st.tuples(small, minor), computes, CPUS, OSES, st.sampled_from([None, True, False])),
    st.builds(Variant.stable_abi, st.tuples(small, minor), computes, CPUS, OSES),
    st.builds(Variant.tvm_ffi, st.tuples(small, minor), computes, CPUS, OSES),
)
noarch_variants = st.from_regex(r"[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,5})?", fullmatch=True).map(Variant.noarch_for)
legacy_variants = st.one_of(arch_variants, noarch_variants)

# New-style names: any version numbers, a Python tag (abi3t from 3.15 on), SDK and MLX.
pythons = st.one_of(
    st.builds(lambda m: PythonTag((3, m), "abi3"), st.integers(0, 30)),
    st.builds(lambda m: PythonTag((3, m), "abi3t"), st.integers(15, 30)),
)
new_computes = st.one_of(
    st.sampled_from(["cpu", "metal", "neuron", "tpu"]).map(BackendInfo),
    st.builds(lambda b, M, m: BackendInfo(b, (M, m)), st.sampled_from(["cuda", "rocm", "xpu", "cann"]), st.integers(0, 3000), minor),
)
new_arch_variants = st.one_of(
    st.builds(lambda v, c, cpu, os, tag, py: Variant.torch(v, c, cpu, os, cxx11=tag, python=py),
              st.tuples(minor, minor), new_computes, CPUS, OSES, st.sampled_from([None, True, False]), pythons),
    st.builds(lambda v, c, cpu, os, py: Variant.stable_abi(v, c, cpu, os, python=py), st.tuples(minor, minor), new_computes, CPUS, OSES, pythons),
    st.builds(lambda v, c, cpu, os, py: Variant.tvm_ffi(v, c, cpu, os, python=py), st.tuples(minor, minor), new_computes, CPUS, OSES, pythons),
)
sdk_variants = st.one_of(
    st.just(Variant.sdk()),
    st.sampled_from(["cpu", "cuda", "rocm", "metal", "xpu"]).map(Variant.sdk),
    st.builds(lambda c, py, cpu, os: Variant.sdk(c, python=py, cpu=cpu, os=os), st.one_of(st.none(), new_computes), pythons, CPUS, OSES),
)
mlx_variants = st.sampled_from(["metal", "cpu", "cuda", "universal"]).map(Variant.mlx_for)
variants = st.one_of(legacy_variants, new_arch_variants, sdk_variants, mlx_variants)


class TestParseFormat:
    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("torch213-cxx11-cu130-x86_64-linux", Variant.torch((2, 13), BackendInfo("cuda", (13, 0)), "x86_64", "linux", cxx11=True)),
            ("torch212-cpu-aarch64-darwin", Variant.torch((2, 12), BackendInfo("cpu"), "aarch64", "darwin")),
            ("torch212-metal-aarch64-darwin", Variant.torch((2, 12), BackendInfo("metal"), "aarch64", "darwin")),
            ("torch212-cxx11-rocm71-x86_64-linux", Variant.torch((2, 12), BackendInfo("rocm", (7, 1)), "x86_64", "linux", cxx11=True)),
            ("torch212-cxx11-xpu20253-x86_64-linux", Variant.torch((2, 12), BackendInfo("xpu", (2025, 3)), "x86_64", "linux", cxx11=True)),
            ("torch29-cxx98-cu118-x86_64-linux", Variant.torch((2, 9), BackendInfo("cuda", (11, 8)), "x86_64", "linux", cxx11=False)),
            ("torch-stable-abi211-cu126-x86_64-linux", Variant.stable_abi((2, 11), BackendInfo("cuda", (12, 6)), "x86_64", "linux")),
            ("tvm-ffi01-cu126-x86_64-linux", Variant.tvm_ffi((0, 1), BackendInfo("cuda", (12, 6)), "x86_64", "linux")),
            ("torch212-cu126-x86_64-windows", Variant.torch((2, 12), BackendInfo("cuda", (12, 6)), "x86_64", "windows")),
            ("torch-cuda", Variant.noarch_for("cuda")),
            ("torch-universal", Variant.noarch_for("universal")),
            ("torch-npu", Variant.noarch_for("npu")),
            ("torch212-cxx11-rocm714-x86_64-linux", Variant.torch((2, 12), BackendInfo("rocm", (7, 14)), "x86_64", "linux", cxx11=True)),
            ("torch-2.13-cxx11-cuda-13.0-cpython-3.9-abi3-x86_64-linux",
             Variant.torch((2, 13), BackendInfo("cuda", (13, 0)), "x86_64", "linux", cxx11=True, python="cpython-3.9-abi3")),
            ("torch-2.13-cpu-cpython-3.15-abi3t-aarch64-linux",
             Variant.torch((2, 13), BackendInfo("cpu"), "aarch64", "linux", python=PythonTag((3, 15), "abi3t"))),
            ("torch-stable-abi-2.11-cuda-12.10-cpython-3.12-abi3-x86_64-linux",
             Variant.stable_abi((2, 11), BackendInfo("cuda", (12, 10)), "x86_64", "linux", python=PythonTag((3, 12)))),
            ("tvm-ffi-0.1-cpu-cpython-3.9-abi3-x86_64-linux", Variant.tvm_ffi((0, 1), "cpu", "x86_64", "linux", python=PythonTag((3, 9)))),
            ("torch-10.1-cpu-cpython-3.9-abi3-x86_64-linux", Variant.torch((10, 1), "cpu", "x86_64", "linux", python=PythonTag((3, 9)))),
            ("mlx-metal", Variant.mlx_for("metal")),
            ("sdk", Variant.sdk()),
            ("sdk-cuda", Variant.sdk("cuda")),
            ("sdk-cpython-3.12-abi3-x86_64-linux", Variant.sdk(python=PythonTag((3, 12)), cpu="x86_64", os="linux")),
            ("sdk-cuda-12.8-cpython-3.12-abi3-x86_64-linux",
             Variant.sdk(BackendInfo("cuda", (12, 8)), python=PythonTag((3, 12)), cpu="x86_64", os="linux")),
        ],
    )
    def test_known_names(self, name: str, expected: Variant) -> None:
        assert names.parse(name) == expected
        assert str(expected) == name
        assert names.format_variant(expected) == name

    def test_views(self) -> None:
        v = names.parse("torch213-cxx11-cu130-x86_64-linux")
        assert (v.kind, v.backend, v.system, v.is_noarch) == (Kind.TORCH, "cuda", "x86_64-linux", False)
        assert (v.is_legacy, v.python, str(v.python_tag)) == (True, None, "cpython-3.9-abi3")
        new = names.parse("torch-2.13-cxx11-cuda-13.0-cpython-3.12-abi3-x86_64-linux")
        assert (new.is_legacy, str(new.python_tag), new.compute.new_str) == (False, "cpython-3.12-abi3", "cuda-13.0")
        sdk = names.parse("sdk-cuda")
        assert (sdk.kind, sdk.backend, sdk.system, sdk.is_noarch) == (Kind.SDK, "cuda", None, True)
        n = names.parse("torch-rocm")
        assert (n.kind, n.backend, n.system, n.is_noarch) == (Kind.NOARCH, "rocm", None, True)

    @pytest.mark.parametrize(
        ("name", "fragment"),
        [
            ("torch213-cpu", "expected <compute>-<cpu>-<os>"),
            ("torch213-cxx11-cpu-x86_64", "expected <compute>-<cpu>-<os>"),
            ("torchX13-cpu-x86_64-linux", "expected torch<M><m>"),
            ("torch213-gpu-x86_64-linux", "unknown compute part 'gpu'"),
            ("torch213-cu1-x86_64-linux", "unknown compute part 'cu1'"),
            ("torch-stable-abi-cpu-x86_64-linux", "torch-stable-abi-<M>.<m>"),
            ("torch-stable-abiX-cpu-x86_64-linux", "torch-stable-abi<M><m>"),
            ("tvm-ffi-cpu-x86_64-linux", "tvm-ffi-<M>.<m>"),
            ("tvm-ffiX-cpu-x86_64-linux", "tvm-ffi<M><m>"),
            ("jax01-cpu-x86_64-linux", "unknown framework"),
            ("torch-2.13-cpu-x86_64-linux", "needs cpython-<major>.<minor>-<abi>"),
            ("torch-2.13-cu130-cpython-3.9-abi3-x86_64-linux", "unknown backend part 'cu130'"),
            ("torch-2.13-cpu-cpython-3.12-abi3t-x86_64-linux", "abi3t needs Python 3.15 or later"),
            ("torch-2.13-cpu-cpython-3-abi3-x86_64-linux", "invalid Python version '3'"),
            ("torch213-cuda-13.0-x86_64-linux", "expected <compute>-<cpu>-<os>"),
            ("sdk-cuda-cpu", "expected sdk, sdk-<backend>"),
            ("torch-", "needs a backend name"),
            ("", "invalid variant name"),
        ],
    )
    def test_invalid(self, name: str, fragment: str) -> None:
        with pytest.raises(ValueError, match="invalid variant name") as info:
            names.parse(name)
        assert fragment in str(info.value)
        assert names.try_parse(name) is None

    @pytest.mark.parametrize(
        "make",
        [
            lambda: Variant.torch((2, 13), BackendInfo("cuda", (12, 10)), "x86_64", "linux"),  # cu1210 would read back as 121.0
            lambda: Variant.torch((2, 13), BackendInfo("cuda"), "x86_64", "linux"),
            lambda: Variant.torch((2, 13), BackendInfo("cpu", (1, 0)), "x86_64", "linux"),
            lambda: BackendInfo("gpu"),
            lambda: Variant.torch((10, 1), "cpu", "x86_64", "linux"),  # torch101 reads back as 1.01
            lambda: Variant.stable_abi((2, 11), "cpu", "x86_64", "linux").__class__(Kind.STABLE_ABI, (2, 11), BackendInfo("cpu"), "x86_64", "linux", True),
            lambda: Variant.torch((2, 13), "cpu", "x86-64", "linux"),
            lambda: Variant(Kind.NOARCH, (2, 13), noarch="cpu"),
        ],
    )
    def test_unrepresentable_values_are_rejected(self, make) -> None:
        with pytest.raises(ValueError):
            make()

    def test_version_inputs(self) -> None:
        from kernel_builder.config.model import Version

        for value in [(2, 13), [2, 13], "2.13", "2.13.1", Version.parse("2.13"), (2, 13, 1)]:
            assert Variant.torch(value, "cpu", "x86_64", "linux").version == (2, 13)
        assert BackendInfo("rocm", (7,)).version == (7, 0)
        assert BackendInfo("cuda", Version.parse("13.0")).variant_str == "cu130"
        assert BackendInfo("xpu", "2025.3.2").variant_str == "xpu20253"
        with pytest.raises(ValueError):
            BackendInfo("cuda", "13.x")

    @given(variants)
    @settings(max_examples=300)
    def test_round_trip(self, variant: Variant) -> None:
        assert names.parse(names.format_variant(variant)) == variant
        assert names.parse(str(variant)).name == variant.name


def _pair(version) -> tuple[int, int] | None:
    return None if version is None else (version.major, version.minor)


def _reference_parts(name: str) -> tuple:
    """What the reference loader sees in a name, as plain values."""
    ref = parse_variant(name)
    if isinstance(ref, NoarchVariant):
        return ("mlx" if isinstance(ref.framework, MlxNoarch) else "noarch", ref.backend.backend_name)
    if isinstance(ref, SdkVariant):
        backend = ref.backend
        noarch = getattr(backend, "backend_name", None)
        compute = None if backend is None or noarch is not None else (backend.name, _pair(getattr(backend, "version", None)))
        python = None if ref.python is None else (_pair(ref.python.version), ref.python.abi)
        system = None if ref.system is None else (ref.system.platform, ref.system.os)
        return ("sdk", noarch, compute, python, system, ref.variant_str)
    assert isinstance(ref, ArchVariant)
    framework = type(ref.framework).__name__
    cxx11 = getattr(ref.framework, "cxx11_abi", None)
    backend = ref.backend
    python = (_pair(ref.python.version), ref.python.abi)
    return (framework, _pair(ref.framework.version), cxx11, backend.name, _pair(getattr(backend, "version", None)),
            python, ref.system.platform, ref.system.os, ref.variant_str)


def _our_parts(variant: Variant) -> tuple:
    if variant.kind in (Kind.NOARCH, Kind.MLX):
        return ("mlx" if variant.kind is Kind.MLX else "noarch", variant.noarch)
    if variant.kind is Kind.SDK:
        compute = None if variant.compute is None else (variant.compute.name.value, variant.compute.version)
        python = None if variant.python is None else (variant.python.version, variant.python.abi)
        system = None if variant.cpu is None else (variant.cpu, variant.os)
        return ("sdk", variant.noarch, compute, python, system, variant.name)
    framework = {Kind.TORCH: "Torch", Kind.STABLE_ABI: "TorchStableAbi", Kind.TVM_FFI: "TvmFfi"}[variant.kind]
    tag = variant.python_tag
    return (
        framework,
        variant.version,
        variant.cxx11,
        variant.compute.name.value,
        variant.compute.version,
        (tag.version, tag.abi),
        variant.cpu,
        variant.os,
        variant.name,
    )


class TestReferenceLoaderReadsOurNames:
    @given(variants)
    @settings(max_examples=800)
    def test_same_parts(self, variant: Variant) -> None:
        assert _reference_parts(variant.name) == _our_parts(variant)

    def test_matrix_names(self, repo_root) -> None:
        """Every name the shipped build sets can produce parses the same in the reference."""
        from kernel_builder.config.model import Backend, Build, General, Kernel, Torch, TorchNoarch, TvmFfi, Version
        from kernel_builder.variants.buildsets import load_build_sets
        from kernel_builder.variants.matrix import matrix

        every = tuple(Backend)
        general = General(name="kern", version=1, license="MIT", backends=every)
        kernels = {b.value: Kernel(b, ("x.cpp",), ()) for b in (Backend.CPU, Backend.CUDA, Backend.METAL, Backend.ROCM, Backend.XPU)}
        builds = [
            Build(general, Torch(), kernels),
            Build(general, Torch(stable_abi=Version.parse("2.11")), kernels),
            Build(general, TorchNoarch()),
            Build(general, TvmFfi(src=("a.cpp",)), kernels),
        ]
        seen = set()
        for build in builds:
            for v in matrix(build, load_build_sets(), "all").variants:
                seen.add(v.name)
                assert _reference_parts(v.name) == _our_parts(names.parse(v.name))
        assert len(seen) > 40


def test_one_backend_type_for_machines_and_names() -> None:
    """A variant's compute part and a machine's backend are one value type (``BackendInfo``)."""
    compute = names.parse("torch213-cxx11-cu130-x86_64-linux").compute
    assert compute == System(backend="cuda 13.0", cpu="x86_64", os="linux").backend
    assert (compute.variant_str, str(compute)) == ("cu130", "cuda 13.0")
    assert BackendInfo.parse("cann80").noarch_name == "cann"  # torch-cann, as kernels 0.19 and names.nix name it


def test_every_backend_has_a_token_rule() -> None:
    """``_check_compute`` relies on each ``Backend`` being versioned or plain in names.py's tables."""
    from_tables = set(names.VERSIONED_COMPUTE) | set(names.PLAIN_COMPUTE)
    assert {b.value for b in Backend} == from_tables
    assert not set(names.VERSIONED_COMPUTE) & set(names.PLAIN_COMPUTE)
