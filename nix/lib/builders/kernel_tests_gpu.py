"""pytest plugin for kernel tests run where no GPU is (the Nix sandbox, a CPU machine).

A test that needs a GPU is reported skipped with the reason, never passed and never failed
for want of hardware: tests parametrized with a GPU device ("cuda", "cuda:0", "xpu",
torch.device("cuda"), ...) or marked ``cuda``/``gpu`` are skipped at collection, and a test
that fails because the GPU runtime is missing (torch's "Found no NVIDIA driver", "Torch not
compiled with CUDA enabled", ...) is turned into a skip that quotes the error. Where a GPU
is present nothing is changed.

A CPU variant is tested with the torch environment that serves its torch version, which may
be a CUDA build of torch (one PyPI build serves both). PyPI ``kernels`` picks the variants of
torch's build, so it would look for CUDA variants only; for a CPU variant's run its backend
probe says CPU, as it does under a CPU build of torch.
"""

from __future__ import annotations

import functools
import os

import pytest

GPU_DEVICE_TYPES = ("cuda", "xpu", "mps", "hip")
GPU_MARKERS = ("cuda", "gpu")
NO_GPU_ERRORS = (
    "Found no NVIDIA driver",
    "No CUDA GPUs are available",
    "Torch not compiled with CUDA enabled",
    "CUDA driver initialization failed",
    "no CUDA-capable device",
    "libcuda.so",
    "Torch not compiled with XPU enabled",
    "XPU device count is zero",
    "The MPS backend is supported",
    "MPS backend is not available",
)
REASON = "needs a GPU (none here)"


@functools.lru_cache(maxsize=1)
def gpu_present() -> bool:
    """Whether torch sees any GPU (CUDA/ROCm, XPU or MPS)."""
    try:
        import torch  # lazy: only when the plugin asks, after pytest started
    except ImportError:
        return False
    if torch.cuda.is_available():
        return True
    xpu = getattr(torch, "xpu", None)
    if xpu is not None and xpu.is_available():
        return True
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def is_gpu_device(value: object) -> bool:
    """A parameter value naming a GPU device: "cuda", "cuda:1", torch.device("xpu")."""
    kind = getattr(value, "type", value)
    return isinstance(kind, str) and kind.split(":", 1)[0].lower() in GPU_DEVICE_TYPES


def is_cpu_variant(variant: str) -> bool:
    """A CPU variant's name: ``torch213-cxx11-cpu-x86_64-linux``, ``torch-cpu`` (this plugin
    runs without kernel-builder importable, so it reads the name itself)."""
    return "-cpu-" in variant or variant.endswith("-cpu")


def pytest_configure(config: pytest.Config) -> None:
    if not is_cpu_variant(os.environ.get("KERNEL_BUILDER_TEST_VARIANT", "")):
        return
    try:
        from kernels import backends  # lazy: only kernels' own probe is changed, when it is there
    except ImportError:
        return
    if hasattr(backends, "_backend") and hasattr(backends, "CPU"):
        backends._backend = backends.CPU


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if gpu_present():
        return
    for item in items:
        callspec = getattr(item, "callspec", None)
        params = callspec.params.values() if callspec is not None else ()
        marked = [m for m in GPU_MARKERS if item.get_closest_marker(m) is not None]
        if marked or any(is_gpu_device(v) for v in params):
            item.add_marker(pytest.mark.skip(reason=REASON))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None and not gpu_present():
        message = str(call.excinfo.value)
        hit = next((e for e in NO_GPU_ERRORS if e in message), None)
        if hit is not None:
            report.outcome = "skipped"
            first = message.strip().splitlines()[0] if message.strip() else hit
            report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {REASON}: {first}")
    return None
