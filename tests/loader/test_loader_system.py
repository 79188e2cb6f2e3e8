"""detect_system(): probes, overrides, and detection without a GPU."""

from __future__ import annotations

import importlib.machinery
import platform
import sys
import types

import pytest

from kernel_builder.errors import LoadError
from kernel_builder.variants import system as sysmod
from kernel_builder.variants.system import BackendInfo, System, detect_system, select_backend


@pytest.fixture
def fresh_probes():
    for name in dir(sysmod):
        fn = getattr(sysmod, name)
        if name.startswith("_probe") and hasattr(fn, "cache_clear"):
            fn.cache_clear()
    yield
    for name in dir(sysmod):
        fn = getattr(sysmod, name)
        if name.startswith("_probe") and hasattr(fn, "cache_clear"):
            fn.cache_clear()


def test_this_machine() -> None:
    import torch

    s = detect_system()
    assert s.torch_version == tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    assert s.cpu == platform.machine() and s.os == platform.system().lower()
    assert s.cxx11_abi == (torch.compiled_with_cxx11_abi() if s.os == "linux" else None)
    expected = "cuda" if torch.version.cuda else "cpu"
    assert s.backend.name.value == expected


def test_all_facts_given_means_no_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> None:
        raise AssertionError("probed")

    for name in ("_probe_platform", "_probe_torch", "_probe_torch_backend", "_probe_cudart", "_probe_tvm_ffi",
                 "_probe_free_threaded", "_probe_mlx"):
        monkeypatch.setattr(sysmod, name, boom)
    s = detect_system(
        backend="cu128", cpu="aarch64", os="linux", torch_version="2.12.1", cxx11_abi=False,
        tvm_ffi_version=None, macos_version=None, free_threaded=False, python_version=(3, 12), mlx=False,
    )
    assert s == System(backend=BackendInfo("cuda", (12, 8)), cpu="aarch64", os="linux", torch_version=(2, 12), cxx11_abi=False,
                       python_version=(3, 12))
    assert s.backend.variant_str == "cu128"


def _fake_torch(**version) -> types.ModuleType:
    torch = types.ModuleType("torch")
    torch.__spec__ = importlib.machinery.ModuleSpec("torch", None)
    torch.__version__ = "2.12.1+test"
    torch.version = types.SimpleNamespace(**{"cuda": None, "hip": None, "xpu": None, **version})
    torch.backends = types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: False))
    torch._C = types.SimpleNamespace(_get_privateuse1_backend_name=lambda: "privateuseone")
    torch.compiled_with_cxx11_abi = lambda: True
    return torch


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ({"cuda": "12.8"}, BackendInfo("cuda", (12, 8))),
        ({"hip": "7.1.25424-abc"}, BackendInfo("rocm", (7, 1))),
        ({"xpu": "20250201"}, BackendInfo("xpu", (2025, 2))),
        ({}, BackendInfo("cpu")),
    ],
)
def test_backend_from_torch_build_without_gpu(fresh_probes, monkeypatch, version, expected) -> None:
    """A CUDA/ROCm/XPU build of torch on a machine with no device still names its backend."""
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(**version))
    s = detect_system(cpu="x86_64", os="linux", tvm_ffi_version=None, free_threaded=False)
    assert s.backend == expected and s.torch_version == (2, 12) and s.cxx11_abi is True


def test_without_torch_uses_cudart_or_cpu(fresh_probes, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # importlib finds no torch
    monkeypatch.setattr(sysmod, "_probe_cudart", lambda: None)
    s = detect_system(cpu="x86_64", os="linux")
    assert s.torch_version is None and s.cxx11_abi is None and s.backend == BackendInfo("cpu")
    monkeypatch.setattr(sysmod, "_probe_cudart", lambda: BackendInfo("cuda", (13, 0)))
    assert detect_system(cpu="x86_64", os="linux").backend.variant_str == "cu130"


def test_cxx11_only_on_linux(fresh_probes, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", _fake_torch())
    assert detect_system(cpu="x86_64", os="windows").cxx11_abi is None


def test_backend_text_forms() -> None:
    assert BackendInfo("cuda", "12.8") == System(backend="cu128", cpu="x", os="linux").backend
    assert System(backend="cuda 13.0", cpu="x", os="linux").backend.variant_str == "cu130"
    assert System(backend="xpu20253", cpu="x", os="linux").backend.version == (2025, 3)
    assert System(backend="cann 8.0", cpu="x", os="linux").backend.noarch_name == "cann"  # torch-cann, as kernels 0.19 names it
    with pytest.raises(ValueError):
        System(backend="gpu", cpu="x", os="linux")


def test_select_backend() -> None:
    s = System(backend="cuda 12.8", cpu="x86_64", os="linux", torch_version=(2, 12))
    assert select_backend(s, None) is s
    assert select_backend(s, "cpu").backend == BackendInfo("cpu")
    assert select_backend(s, "cuda").backend.version == (12, 8)
    with pytest.raises(LoadError, match="Invalid backend 'xpu', system supported backends: cpu, cuda"):
        select_backend(s, "xpu")


def _this_machine_candidates() -> list[str]:
    """Names around this machine: its torch (±1 minor), both ABIs, stable ABI, other CPUs/backends, noarch."""
    s = detect_system()
    major, minor = s.torch_version or (2, 13)
    arch = f"cpu-{s.cpu}-{s.os}"
    names = {"torch-cpu", "torch-universal", "torch-cuda", "torch-rocm", "torch-xpu"}
    for m in (minor - 1, minor, minor + 1):
        names |= {f"torch{major}{m}-cxx11-{arch}", f"torch{major}{m}-cxx98-{arch}", f"torch{major}{m}-{arch}"}
        names |= {f"torch-stable-abi{major}{m}-{arch}", f"torch{major}{m}-cxx11-cu130-{s.cpu}-{s.os}"}
    other_cpu = "aarch64" if s.cpu == "x86_64" else "x86_64"
    names |= {f"torch{major}{minor}-cxx11-cpu-{other_cpu}-{s.os}", f"torch{major}{minor}-cpu-{s.cpu}-windows"}
    # New-style names: this Python's version and its neighbours, both ABIs, SDKs, MLX.
    py_major, py_minor = s.python_version
    for p in (py_minor - 1, py_minor, py_minor + 1):
        names |= {f"torch-{major}.{minor}-cxx11-cpu-cpython-{py_major}.{p}-abi3-{s.cpu}-{s.os}",
                  f"torch-stable-abi-{major}.{minor - 1}-cpu-cpython-{py_major}.{p}-abi3-{s.cpu}-{s.os}",
                  f"sdk-cpython-{py_major}.{p}-abi3-{s.cpu}-{s.os}"}
    names |= {f"torch-{major}.{minor}-cpu-cpython-3.15-abi3t-{s.cpu}-{s.os}", "sdk", "sdk-cpu", "mlx-cpu"}
    return sorted(names)


@pytest.mark.parametrize("backend", [None, "cpu"])
def test_detection_agrees_with_reference_on_this_machine(backend: str | None) -> None:
    """The reference's public ``resolve_variants`` probes this machine itself; so do we.

    Same candidate subsets, same accepted order: our detected system (torch version, cxx11
    ABI, backend, CPU, OS) is the one the reference detects.
    """
    import random

    from kernels._internals import variants as kv  # 0.19.1 keeps its internals under _internals

    from kernel_builder.variants.resolve import resolve

    ours_system = select_backend(detect_system(), backend)
    pool = _this_machine_candidates()
    rng = random.Random(7)
    subsets = [pool] + [rng.sample(pool, rng.randint(1, len(pool))) for _ in range(60)]
    accepted_somewhere = 0
    for names in subsets:
        theirs, _ = kv.resolve_variants([kv.parse_variant(n) for n in names], backend)
        ours = resolve(ours_system, names)
        assert [a.variant for a in ours.accepted] == [v.variant_str for v in theirs], names
        accepted_somewhere += bool(theirs)
    assert accepted_somewhere >= 30  # the pool really matches this machine
