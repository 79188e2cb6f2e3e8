"""The machine a kernel is loaded on, as a value.

``System`` holds every fact variant resolution needs: torch version and C++11 ABI flag,
the compute backend and its version, CPU architecture, OS, macOS version, tvm-ffi
version, the Python version, whether Python is free-threaded and whether MLX is installed. ``detect_system()`` fills the facts it is
not given from cached ``_probe_*`` functions, so tests and ``--system`` style overrides
pass values in and never touch the machine. No probe needs a GPU: a CPU-only machine
(or one whose GPU is absent) still gets a complete answer.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import importlib.metadata
import importlib.util
import platform
import re
import sys
import sysconfig
import warnings
from typing import Any

import attrs

from kernel_builder.backends import Backend, from_torch_versions
from kernel_builder.errors import LoadError
from kernel_builder.pyenv import Toolchain
from kernel_builder.variants.host import Platform, host_platform
from kernel_builder.variants.names import BackendInfo
from kernel_builder.versions import major_minor, optional_major_minor

__all__ = ["System", "BackendInfo", "InvalidBackend", "detect_system", "toolchain_system", "select_backend", "UNSET"]

class InvalidBackend(LoadError, ValueError):
    """``backend=`` names a backend this machine cannot run (a ``ValueError`` too, like PyPI kernels)."""


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
"""Marker for "probe this fact"; ``None`` is a real answer (e.g. no torch installed)."""


def _opt_pair(value: Any) -> tuple[int, int] | None:
    return optional_major_minor(value)


def _opt_tuple(value: Any) -> tuple[int, ...] | None:
    """macOS versions keep every component (``"15.7.1"`` -> ``(15, 7, 1)``)."""
    if value is None or isinstance(value, tuple):
        return value
    parts = re.findall(r"\d+", str(value))
    return tuple(int(p) for p in parts) if parts else None


def _backend_converter(value: Any) -> BackendInfo:
    if isinstance(value, BackendInfo):
        return value
    if isinstance(value, str):
        return _parse_backend_text(value)
    raise TypeError(f"backend must be a BackendInfo or text like 'cuda 12.8', got {value!r}")


def _parse_backend_text(text: str) -> BackendInfo:
    """``"cuda 12.8"``, ``"cuda12.8"``, ``"cu128"``, ``"cpu"`` -> ``BackendInfo``."""
    t = text.strip().lower()
    try:
        return BackendInfo.parse(t)  # a variant name's token: cu128, rocm71, cpu
    except ValueError:
        pass
    m = re.fullmatch(r"([a-z]+)[\s-]*(\d+(?:\.\d+)?)?", t)
    if not m:
        raise ValueError(f"cannot read a backend from {text!r}; expected e.g. 'cpu', 'cuda 12.8' or 'cu128'")
    return BackendInfo(m.group(1), m.group(2))


@attrs.frozen
class System:
    """Everything variant resolution needs to know about a machine.

    ``torch_version`` is ``(major, minor)`` or ``None`` without torch; ``cxx11_abi`` is only
    known on Linux (``None`` elsewhere); ``macos_version`` only on macOS. ``python_version``
    ``None`` means "not known": no variant is refused for the Python version it names.
    ``free_threaded`` is a Python built without the GIL (it loads only ``abi3t`` variants).
    """

    backend: BackendInfo = attrs.field(converter=_backend_converter)
    cpu: str
    os: str
    torch_version: tuple[int, int] | None = attrs.field(default=None, converter=_opt_pair)
    cxx11_abi: bool | None = None
    tvm_ffi_version: tuple[int, int] | None = attrs.field(default=None, converter=_opt_pair)
    macos_version: tuple[int, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    free_threaded: bool = False
    python_version: tuple[int, int] | None = attrs.field(default=None, converter=_opt_pair)
    mlx: bool = False

    @property
    def supported_backends(self) -> dict[str, BackendInfo]:
        """Backends a caller may pick with ``backend=``: ``cpu`` and the detected one."""
        return {"cpu": BackendInfo(Backend.CPU), self.backend.name.value: self.backend}

    @property
    def platform(self) -> str:
        return f"{self.cpu}-{self.os}"

    def describe(self) -> str:
        """One line for logs and ``versions`` output."""
        torch = "none" if self.torch_version is None else "%d.%d" % self.torch_version
        abi = "" if self.cxx11_abi is None else (" cxx11" if self.cxx11_abi else " cxx98")
        return f"torch {torch}{abi}, backend {self.backend}, {self.cpu}-{self.os}"


def toolchain_system(toolchain: Toolchain, host: Platform | None = None) -> System:
    """The machine a toolchain Python describes: its torch (version, C++11 ABI, the backend
    it was built for) on ``host`` (default: this machine). What ``build`` and ``check``
    hold a variant against (``variants.compat``)."""
    host = host or host_platform()
    backend, version = from_torch_versions({"cuda": toolchain.cuda, "hip": toolchain.hip, "xpu": toolchain.xpu})
    return System(
        backend=BackendInfo(backend, None if version is None else major_minor(version)),
        cpu=host.cpu,
        os=host.os,
        torch_version=major_minor(toolchain.torch_version),
        cxx11_abi=toolchain.cxx11_abi if host.os == "linux" else None,
        python_version=toolchain.python_version,
    )


def select_backend(system: System, backend: str | None) -> System:
    """Apply a ``backend=`` argument: only ``cpu`` or the detected backend are allowed."""
    if backend is None:
        return system
    supported = system.supported_backends
    chosen = supported.get(str(backend).lower())
    if chosen is None:
        names = ", ".join(sorted(supported))
        raise InvalidBackend(
            f"Invalid backend '{backend}', system supported backends: {names}",
            hint="pass backend=None to use the detected backend, or 'cpu'",
        )
    return attrs.evolve(system, backend=chosen)


# ---------------------------------------------------------------- probes (cached)


@functools.lru_cache(maxsize=None)
def _probe_platform() -> tuple[str, str, str | None]:
    """(cpu, os, macOS version); cpu and os from the one host probe."""
    host = host_platform()
    mac = (platform.mac_ver()[0] or None) if host.os == "darwin" else None
    return host.cpu, host.os, mac


@functools.lru_cache(maxsize=None)
def _probe_has_torch() -> bool:
    return importlib.util.find_spec("torch") is not None


@functools.lru_cache(maxsize=None)
def _probe_torch() -> tuple[str, bool] | None:
    """(torch.__version__, compiled_with_cxx11_abi) or ``None`` when torch is absent."""
    if not _probe_has_torch():
        return None
    import torch  # lazy: torch loads on first use, never with import kernel_builder or the CLI

    return str(torch.__version__), bool(torch.compiled_with_cxx11_abi())


@functools.lru_cache(maxsize=None)
def _probe_torch_backend() -> BackendInfo:
    """The backend torch was built for; the first match wins, no device needed."""
    import torch  # lazy: torch loads on first use, never with import kernel_builder or the CLI

    if hasattr(torch.backends, "tpu"):
        return BackendInfo(Backend.TPU)
    if hasattr(torch, "neuron"):
        return BackendInfo(Backend.NEURON)
    if torch.version.cuda is not None:
        return BackendInfo(Backend.CUDA, torch.version.cuda)
    hip = getattr(torch.version, "hip", None)
    if hip is not None:
        return BackendInfo(Backend.ROCM, hip.split("-")[0])
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return BackendInfo(Backend.METAL)
    xpu = getattr(torch.version, "xpu", None)
    if xpu is not None:
        return BackendInfo(Backend.XPU, f"{xpu[0:4]}.{xpu[5:6]}")
    name_fn = getattr(torch._C, "_get_privateuse1_backend_name", None)
    if name_fn is not None and name_fn() == "npu":  # pragma: no cover - needs torch_npu
        from torch_npu.utils.collect_env import get_cann_version  # lazy: optional: Ascend's torch_npu

        v = get_cann_version()
        return BackendInfo(Backend.CANN, f"{v[0]}.{v[2]}")
    return BackendInfo(Backend.CPU)


@functools.lru_cache(maxsize=None)
def _probe_cudart() -> BackendInfo | None:
    """Without torch: the CUDA runtime's version through ``cudaRuntimeGetVersion``."""
    lib = ctypes.util.find_library("cudart")
    if lib is None:
        return None
    try:
        cudart = ctypes.CDLL(lib)
        value = ctypes.c_int(0)
        status = cudart.cudaRuntimeGetVersion(ctypes.byref(value))
    except (OSError, AttributeError):
        return None
    if status != 0:
        warnings.warn("the CUDA runtime is present but reports no version; assuming cpu", stacklevel=3)
        return None
    return BackendInfo(Backend.CUDA, (value.value // 1000, (value.value % 1000) // 10))


@functools.lru_cache(maxsize=None)
def _probe_tvm_ffi() -> str | None:
    if importlib.util.find_spec("tvm_ffi") is None:
        return None
    try:
        return importlib.metadata.version("apache-tvm-ffi")
    except importlib.metadata.PackageNotFoundError:
        import tvm_ffi  # lazy: optional: tvm-ffi

        return str(tvm_ffi.__version__)


def _probe_free_threaded() -> bool:
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


@functools.lru_cache(maxsize=None)
def _probe_mlx() -> bool:
    return importlib.util.find_spec("mlx") is not None


def detect_system(
    *,
    backend: Any = UNSET,
    cpu: Any = UNSET,
    os: Any = UNSET,
    torch_version: Any = UNSET,
    cxx11_abi: Any = UNSET,
    tvm_ffi_version: Any = UNSET,
    macos_version: Any = UNSET,
    free_threaded: Any = UNSET,
    python_version: Any = UNSET,
    mlx: Any = UNSET,
) -> System:
    """Describe this machine; every fact given as an argument replaces its probe.

    ``backend`` accepts a ``BackendInfo`` or text (``"cpu"``, ``"cuda 12.8"``, ``"cu128"``).
    Facts passed explicitly as ``None`` mean "absent" (e.g. ``torch_version=None``).
    """
    p_cpu, p_os, p_mac = _probe_platform() if UNSET in (cpu, os, macos_version) else (None, None, None)
    cpu = p_cpu if cpu is UNSET else cpu
    os = p_os if os is UNSET else os
    macos_version = (p_mac if os == "darwin" else None) if macos_version is UNSET else macos_version

    torch_info = _probe_torch() if UNSET in (torch_version, cxx11_abi) or backend is UNSET else None
    if torch_version is UNSET:
        torch_version = None if torch_info is None else torch_info[0]
    if cxx11_abi is UNSET:
        cxx11_abi = torch_info[1] if torch_info is not None and os == "linux" else None
    if backend is UNSET:
        if torch_info is not None:
            backend = _probe_torch_backend()
        else:
            backend = _probe_cudart() or BackendInfo(Backend.CPU)
    if tvm_ffi_version is UNSET:
        tvm_ffi_version = _probe_tvm_ffi()
    if free_threaded is UNSET:
        free_threaded = _probe_free_threaded()
    if python_version is UNSET:
        python_version = sys.version_info[:2]
    if mlx is UNSET:
        mlx = _probe_mlx()
    return System(
        backend=backend,
        cpu=cpu,
        os=os,
        torch_version=torch_version,
        cxx11_abi=cxx11_abi,
        tvm_ffi_version=tvm_ffi_version,
        macos_version=macos_version,
        free_threaded=free_threaded,
        python_version=python_version,
        mlx=mlx,
    )
