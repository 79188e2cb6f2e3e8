"""resolve(): acceptance, ranking and reasons on hand-written cases (whole ordered lists)."""

from __future__ import annotations

import pytest

from kernel_builder.variants.resolve import VariantAccepted, VariantRejected, format_trace, resolve
from kernel_builder.variants.system import System

LINUX = dict(cpu="x86_64", os="linux", torch_version=(2, 10), cxx11_abi=True)
CUDA_SET = [
    "torch210-cxx11-cu126-x86_64-linux",
    "torch210-cxx11-cu128-x86_64-linux",
    "torch210-cxx11-cu130-x86_64-linux",
    "torch-cuda",
]


def accepted(system: System, names: list[str]) -> list[str]:
    return [a.variant for a in resolve(system, names).accepted]


class TestCuda:
    @pytest.mark.parametrize(
        ("cuda", "best"),
        [
            ("12.8", "torch210-cxx11-cu128-x86_64-linux"),
            ("12.9", "torch210-cxx11-cu128-x86_64-linux"),
            ("12.5", "torch-cuda"),
            ("11.8", "torch-cuda"),
            ("13.2", "torch210-cxx11-cu130-x86_64-linux"),
        ],
    )
    def test_same_major_minor_not_newer(self, cuda: str, best: str) -> None:
        assert resolve(System(backend=f"cuda {cuda}", **LINUX), CUDA_SET).best == best

    def test_whole_order(self) -> None:
        system = System(backend="cuda 12.9", **LINUX)
        assert accepted(system, CUDA_SET) == [
            "torch210-cxx11-cu128-x86_64-linux",
            "torch210-cxx11-cu126-x86_64-linux",
            "torch-cuda",
        ]

    def test_no_noarch_means_nothing(self) -> None:
        system = System(backend="cuda 12.5", **LINUX)
        assert accepted(system, CUDA_SET[:3]) == []

    def test_reason_names_both_versions(self) -> None:
        res = resolve(System(backend="cuda 12.5", **LINUX), ["torch210-cxx11-cu128-x86_64-linux"])
        assert res.rejected == (
            VariantRejected(
                "torch210-cxx11-cu128-x86_64-linux",
                "CUDA version (12.8) is not compatible with system CUDA version (12.5)",
            ),
        )


def test_rocm_needs_exact_minor() -> None:
    system = System(backend="rocm 7.0", **LINUX)
    names = ["torch210-cxx11-rocm70-x86_64-linux", "torch210-cxx11-rocm71-x86_64-linux", "torch-rocm"]
    assert accepted(system, names) == ["torch210-cxx11-rocm70-x86_64-linux", "torch-rocm"]


def test_cpu_arch_before_noarch_before_universal() -> None:
    system = System(backend="cpu", **LINUX)
    names = ["torch-universal", "torch-cpu", "torch210-cxx11-cpu-x86_64-linux", "torch29-cxx11-cpu-x86_64-linux"]
    assert accepted(system, names) == ["torch210-cxx11-cpu-x86_64-linux", "torch-cpu", "torch-universal"]


@pytest.mark.parametrize(("macos", "best"), [((26, 0), "torch210-metal-aarch64-darwin"), ((26, 1), "torch210-metal-aarch64-darwin"), ((15, 7), "torch-metal"), (None, "torch-metal")])
def test_metal_needs_macos_26(macos, best) -> None:
    system = System(backend="metal", cpu="aarch64", os="darwin", torch_version=(2, 10), macos_version=macos)
    res = resolve(system, ["torch210-metal-aarch64-darwin", "torch-metal"])
    assert res.best == best
    if best == "torch-metal":
        assert "require macOS 26.0" in res.rejected[0].reason


def test_darwin_rejects_abi_tagged() -> None:
    system = System(backend="cpu", cpu="aarch64", os="darwin", torch_version=(2, 10), macos_version=(26, 0))
    assert accepted(system, ["torch210-cxx11-cpu-aarch64-darwin", "torch210-cpu-aarch64-darwin"]) == [
        "torch210-cpu-aarch64-darwin"
    ]


def test_noarch_fallback_on_other_cpu() -> None:
    system = System(backend="cuda 12.8", cpu="aarch64", os="linux", torch_version=(2, 10), cxx11_abi=True)
    assert resolve(system, CUDA_SET).best == "torch-cuda"


def test_no_torch_only_noarch() -> None:
    system = System(backend="cpu", cpu="x86_64", os="linux", torch_version=None)
    assert accepted(system, ["torch210-cpu-x86_64-linux", "torch-stable-abi29-cpu-x86_64-linux", "torch-cpu"]) == ["torch-cpu"]


class TestStableAbi:
    NAMES = [
        "torch210-cxx11-cu128-x86_64-linux",
        "torch-stable-abi29-cu128-x86_64-linux",
        "torch-stable-abi210-cu126-x86_64-linux",
        "torch-stable-abi211-cu128-x86_64-linux",
    ]

    def test_newest_compatible_first_then_torch(self) -> None:
        system = System(backend="cuda 12.8", **LINUX)
        assert accepted(system, self.NAMES) == [
            "torch-stable-abi210-cu126-x86_64-linux",
            "torch-stable-abi29-cu128-x86_64-linux",
            "torch210-cxx11-cu128-x86_64-linux",
        ]
        too_new = [r for r in resolve(system, self.NAMES).rejected if r.variant.startswith("torch-stable-abi211")]
        assert "too new" in too_new[0].reason

    def test_accepted_on_newer_torch(self) -> None:
        system = System(backend="cuda 12.8", cpu="x86_64", os="linux", torch_version=(2, 13), cxx11_abi=True)
        assert resolve(system, self.NAMES).best == "torch-stable-abi211-cu128-x86_64-linux"


def test_tagless_beats_tagged_even_with_older_cuda() -> None:
    system = System(backend="cuda 12.8", **LINUX)
    names = ["torch210-cxx11-cu128-x86_64-linux", "torch210-cu126-x86_64-linux"]
    assert accepted(system, names) == ["torch210-cu126-x86_64-linux", "torch210-cxx11-cu128-x86_64-linux"]


def test_cxx98_rejected_on_cxx11_torch() -> None:
    res = resolve(System(backend="cpu", **LINUX), ["torch210-cxx98-cpu-x86_64-linux"])
    assert res.accepted == () and "CXX11 ABI (False)" in res.rejected[0].reason


def test_tvm_ffi_version_must_match() -> None:
    system = System(backend="cpu", tvm_ffi_version=(0, 1), **LINUX)
    assert accepted(system, ["tvm-ffi01-cpu-x86_64-linux", "tvm-ffi02-cpu-x86_64-linux"]) == ["tvm-ffi01-cpu-x86_64-linux"]


def test_free_threaded_rejects_arch() -> None:
    system = System(backend="cpu", free_threaded=True, **LINUX)
    res = resolve(system, ["torch210-cxx11-cpu-x86_64-linux", "torch-cpu"])
    assert res.best == "torch-cpu" and "free-threaded" in res.rejected[0].reason


def test_cann_noarch_is_the_backend_name() -> None:
    """kernels 0.19.1 matches a noarch name against the backend's name (cann), not npu."""
    system = System(backend="cann 8.0", **LINUX)
    assert accepted(system, ["torch-npu", "torch-cann", "torch-universal"]) == ["torch-cann", "torch-universal"]


NEW_CPU = "torch-2.13-cxx11-cpu-cpython-3.9-abi3-x86_64-linux"


def test_new_style_names_resolve_like_legacy_ones() -> None:
    system = System(backend="cpu", torch_version=(2, 13), cxx11_abi=True, cpu="x86_64", os="linux", python_version=(3, 11))
    names = [NEW_CPU, "torch213-cxx11-cpu-x86_64-linux", "torch-stable-abi-2.11-cpu-cpython-3.9-abi3-x86_64-linux",
             "torch-2.13-cpu-cpython-3.12-abi3-x86_64-linux"]
    assert accepted(system, names) == [
        "torch-stable-abi-2.11-cpu-cpython-3.9-abi3-x86_64-linux",
        NEW_CPU,
        "torch213-cxx11-cpu-x86_64-linux",
    ]
    rejected = {r.variant: r.reason for r in resolve(system, names).rejected}
    assert "Python 3.12 or later is required, system Python version is 3.11" in rejected["torch-2.13-cpu-cpython-3.12-abi3-x86_64-linux"]


def test_python_version_and_abi_rank() -> None:
    """abi3 before abi3t on a GIL Python, then the newest Python version first."""
    system = System(backend="cpu", torch_version=(2, 13), cpu="x86_64", os="linux", python_version=(3, 15))
    names = ["torch-2.13-cpu-cpython-3.15-abi3t-x86_64-linux", "torch-2.13-cpu-cpython-3.10-abi3-x86_64-linux",
             "torch-2.13-cpu-cpython-3.13-abi3-x86_64-linux"]
    assert accepted(system, names) == [names[2], names[1], names[0]]


def test_free_threaded_python_loads_only_abi3t() -> None:
    names = ["torch-2.13-cpu-cpython-3.15-abi3t-x86_64-linux", "torch-2.13-cpu-cpython-3.9-abi3-x86_64-linux", "torch213-cpu-x86_64-linux"]
    ft = dict(backend="cpu", torch_version=(2, 13), cpu="x86_64", os="linux", free_threaded=True)
    assert accepted(System(python_version=(3, 15), **ft), names) == [names[0]]
    assert accepted(System(python_version=(3, 14), **ft), names) == []
    reasons = {r.variant: r.reason for r in resolve(System(python_version=(3, 14), **ft), names).rejected}
    assert "abi3t is required" in reasons["torch213-cpu-x86_64-linux"]
    assert "Python 3.15 or later is required" in reasons[names[0]]


def test_sdk_and_mlx_variants() -> None:
    system = System(backend="cuda 12.8", torch_version=(2, 13), cpu="x86_64", os="linux", python_version=(3, 12))
    names = ["sdk", "sdk-cuda", "sdk-rocm", "sdk-cpython-3.12-abi3-x86_64-linux", "sdk-cuda-12.6-cpython-3.9-abi3-x86_64-linux",
             "mlx-cuda", "torch-cuda"]
    assert accepted(system, names) == [
        "sdk-cuda-12.6-cpython-3.9-abi3-x86_64-linux", "sdk-cpython-3.12-abi3-x86_64-linux", "torch-cuda", "sdk-cuda", "sdk",
    ]
    assert "MLX is not installed" in {r.variant: r.reason for r in resolve(system, names).rejected}["mlx-cuda"]
    with_mlx = System(backend="metal", cpu="aarch64", os="darwin", mlx=True)
    assert accepted(with_mlx, ["mlx-metal", "mlx-cuda"]) == ["mlx-metal"]


def test_rocm_minor_versions_are_compatible() -> None:
    """0.19.1 treats ROCm like CUDA: same major, minor no newer than the system's."""
    system = System(backend="rocm 7.2", torch_version=(2, 13), cxx11_abi=True, **{k: v for k, v in LINUX.items() if k not in ("torch_version", "cxx11_abi")})
    names = ["torch213-cxx11-rocm70-x86_64-linux", "torch213-cxx11-rocm72-x86_64-linux", "torch213-cxx11-rocm73-x86_64-linux",
             "torch-2.13-cxx11-rocm-7.14-cpython-3.9-abi3-x86_64-linux"]
    assert accepted(system, names) == [names[1], names[0]]


def test_unparsable_names_rejected_last_with_reason() -> None:
    res = resolve(System(backend="cpu", **LINUX), ["build", "torch-cpu", "torch210-cpu"])
    assert res.accepted == (VariantAccepted("torch-cpu"),)
    assert [r.variant for r in res.rejected] == ["build", "torch210-cpu"]
    assert all(r.reason.startswith("not a variant name") for r in res.rejected)


def test_every_candidate_decided_once() -> None:
    names = [*CUDA_SET, "torch-cpu", "torch-universal", "junk"]
    res = resolve(System(backend="cuda 12.6", **LINUX), names)
    assert sorted(d.variant for d in res.decisions) == sorted(names)


def test_trace_format() -> None:
    res = resolve(System(backend="cuda 12.6", **LINUX), CUDA_SET)
    assert format_trace(res).splitlines() == [
        "torch210-cxx11-cu126-x86_64-linux compatible, preferred ✅",
        "torch-cuda compatible ✅",
        "torch210-cxx11-cu128-x86_64-linux: CUDA version (12.8) is not compatible with system CUDA version (12.6)",
        "torch210-cxx11-cu130-x86_64-linux: CUDA version (13.0) is not compatible with system CUDA version (12.6)",
    ]
    assert format_trace(resolve(System(backend="cpu", **LINUX), [])) == ""
