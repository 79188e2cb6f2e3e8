"""What a toolchain Python offers: its torch, CUDA and the build tools beside it.

The build runs with the driver Python (this package) but compiles against the *toolchain
Python*: a venv holding the build set's torch. One subprocess asks it for everything the
build (and ``toolchain discover``) needs; the answer is a frozen value so the rest of the
build stays pure.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import attrs

from kernel_builder.errors import BuildError
from kernel_builder.versions import MajorMinor, major_minor

__all__ = [
    "Toolchain",
    "probe_toolchain",
    "PythonFacts",
    "TorchFacts",
    "PythonProbeError",
    "probe_python",
    "find_tool",
    "CudaToolkit",
    "probe_cuda",
]

# Reads torch/version.py and torch's dist-info instead of importing torch (which takes
# seconds): the build and ``toolchain discover`` only need versions, paths and hashes.
_PROBE = r"""
import glob, hashlib, importlib.metadata as md, importlib.util, json, os, runpy, sys
out = {"python": sys.executable, "python_version": list(sys.version_info[:3]), "torch": None}
spec = importlib.util.find_spec("torch")
if spec is not None and spec.origin:
    torch_dir = os.path.dirname(spec.origin)
    try:
        version = runpy.run_path(os.path.join(torch_dir, "version.py"))
    except OSError:
        version = {}
    site = os.path.dirname(torch_dir)
    config = os.path.join(torch_dir, "share", "cmake", "Torch", "TorchConfig.cmake")
    config_text = open(config).read() if os.path.exists(config) else ""
    try:
        dist = md.distribution("torch")
    except md.PackageNotFoundError:
        dist = None
    record = wheel = record_path = None
    if dist is not None:
        record = hashlib.sha256((dist.read_text("RECORD") or "").encode()).hexdigest()
        record_path = str(dist.locate_file(str(dist._path.name) + "/RECORD")) if hasattr(dist, "_path") else ""
        wheel = ""
        direct = dist.read_text("direct_url.json")
        if direct:
            info = json.loads(direct).get("archive_info", {})
            wheel = info.get("hash") or ("sha256=" + info.get("hashes", {}).get("sha256", "") if info.get("hashes") else "")
    out["torch"] = {
        "version": version.get("__version__"),
        "cuda": version.get("cuda"),
        "hip": version.get("hip"),
        "xpu": version.get("xpu"),
        "cxx11_abi": "_GLIBCXX_USE_CXX11_ABI=0" not in config_text,
        "cmake_prefix_path": os.path.join(torch_dir, "share", "cmake"),
        "site_packages": site,
        "nvidia_includes": sorted(glob.glob(os.path.join(site, "nvidia", "*", "include"))),
        "nvrtc": sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", "libnvrtc.so*"))),
        "dist_version": None if dist is None else dist.version,
        "record_hash": record,
        "record_path": record_path,
        "wheel_hash": wheel,
    }
print(json.dumps(out))
"""


class PythonProbeError(Exception):
    """The probe could not run ``python`` (``started`` False) or it failed (``detail``: its stderr)."""

    def __init__(self, detail: str, *, started: bool) -> None:
        super().__init__(detail)
        self.detail = detail
        self.started = started


@attrs.frozen
class TorchFacts:
    """A torch as its files describe it; ``dist_version`` etc. are ``None`` without a dist-info."""

    version: str | None  # torch/version.py's __version__ ("2.13.0+cpu"); None without version.py
    cuda: str | None
    hip: str | None
    xpu: str | None
    cxx11_abi: bool
    cmake_prefix_path: str
    site_packages: str
    nvidia_includes: tuple[str, ...] = attrs.field(converter=tuple)
    nvrtc: tuple[str, ...] = attrs.field(converter=tuple)
    dist_version: str | None = None
    record_hash: str | None = None
    record_path: str | None = None
    wheel_hash: str | None = None


@attrs.frozen
class PythonFacts:
    """What one toolchain Python reports: itself, and its torch if it has one."""

    python: str  # sys.executable as the interpreter sees itself
    python_version: tuple[int, int, int] = attrs.field(converter=tuple)
    torch: TorchFacts | None


def probe_python(python: str) -> PythonFacts:
    """Run ``python`` once to describe it and its torch, without importing torch.

    Cached per interpreter path; the path's own inode and mtime are part of the key, so an
    environment replaced in place (``toolchain setup``) is probed again. ``PythonProbeError``
    when it cannot run or fails.
    """
    try:
        st = os.lstat(python)
        stamp: tuple[int, int] | None = (st.st_ino, st.st_mtime_ns)
    except OSError:
        stamp = None
    return _probe_python(python, stamp)


@functools.cache
def _probe_python(python: str, stamp: tuple[int, int] | None) -> PythonFacts:
    try:
        done = subprocess.run(
            [python, "-c", _PROBE], capture_output=True, text=True, timeout=300, env=_clean_env(), check=False
        )
    except OSError as exc:
        raise PythonProbeError(str(exc), started=False) from None
    if done.returncode != 0:
        raise PythonProbeError(done.stderr.strip(), started=True)
    data = json.loads(done.stdout.strip().splitlines()[-1])
    torch = data.pop("torch")
    return PythonFacts(**data, torch=None if torch is None else TorchFacts(**torch))


@attrs.frozen
class Toolchain:
    """The facts about one toolchain Python (see ``probe_toolchain``).

    The build's checked view of a probe: the same fields as ``TorchFacts``, but torch is
    required and its version has no local tag, so the build never handles a missing torch;
    ``TorchFacts`` keeps what a probe found, unset fields included, for ``toolchain discover``.
    """

    python: str
    python_version: tuple[int, int]
    torch_version: str
    cuda: str | None
    hip: str | None
    xpu: str | None
    cxx11_abi: bool
    cmake_prefix_path: str
    site_packages: str
    nvidia_includes: tuple[str, ...] = ()
    nvrtc: tuple[str, ...] = ()

    @property
    def torch_major_minor(self) -> MajorMinor:
        return major_minor(self.torch_version)

    @property
    def cuda_major_minor(self) -> MajorMinor | None:
        return major_minor(self.cuda) if self.cuda else None


def probe_toolchain(python: str) -> Toolchain:
    """``python``'s torch as the build needs it (see ``probe_python``); ``BuildError`` when it has none."""
    try:
        facts = probe_python(python)
    except PythonProbeError as exc:
        if not exc.started:
            raise BuildError(
                f"cannot run the toolchain Python {python}: {exc.detail}",
                hint="pass --toolchain-python with a Python that has torch installed",
            ) from None
        detail = exc.detail
    else:
        torch = facts.torch
        if torch is not None and torch.version is not None:
            return Toolchain(
                python=facts.python,
                python_version=facts.python_version[:2],
                torch_version=torch.version.split("+")[0],
                cuda=torch.cuda,
                hip=torch.hip,
                xpu=torch.xpu,
                cxx11_abi=torch.cxx11_abi,
                cmake_prefix_path=torch.cmake_prefix_path,
                site_packages=torch.site_packages,
                nvidia_includes=torch.nvidia_includes,
                nvrtc=torch.nvrtc,
            )
        detail = "No module named 'torch'"
    raise BuildError(
        f"the toolchain Python {python} has no usable torch:\n{detail[-2000:]}",
        hint="install the build set's torch into that environment (pip install torch==X.Y)",
    )


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONHOME", None)
    return env


def find_tool(name: str, toolchain_python: str) -> str:
    """``cmake``/``ninja``: beside the toolchain Python, then the driver Python, then PATH."""
    for directory in (Path(toolchain_python).parent, Path(sys.executable).parent):
        candidate = directory / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise BuildError(
            f"{name} was not found beside {toolchain_python}, beside {sys.executable} or on PATH",
            hint='pip install "cmake>=3.26" ninja into the toolchain environment',
        )
    return found


@attrs.frozen
class CudaToolkit:
    nvcc: str
    home: str
    version: tuple[int, int]
    list_gpu_code: str


@functools.lru_cache(maxsize=4)
def probe_cuda() -> CudaToolkit:
    """Find nvcc (``$CUDA_HOME/bin``, then PATH) and its home, version and arch list."""
    home_env = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    candidates = [Path(home_env) / "bin" / "nvcc"] if home_env else []
    on_path = shutil.which("nvcc")
    if on_path:
        candidates.append(Path(on_path))
    candidates.append(Path("/usr/local/cuda/bin/nvcc"))
    nvcc = next((c for c in candidates if c.is_file()), None)
    if nvcc is None:
        raise BuildError(
            "toolchain for cuda is not available on this machine: nvcc was not found",
            hint="install the CUDA toolkit and set CUDA_HOME, or build only the other backends (--backend cpu)",
        )
    home = _cuda_home(nvcc, home_env)
    real_nvcc = str(Path(home) / "bin" / "nvcc")
    version_text = subprocess.run([real_nvcc, "--version"], capture_output=True, text=True, check=False).stdout
    match = re.search(r"release (\d+)\.(\d+)", version_text)
    if match is None:
        raise BuildError(f"cannot read the CUDA version from `{real_nvcc} --version`:\n{version_text}")
    codes = subprocess.run([real_nvcc, "--list-gpu-code"], capture_output=True, text=True, check=False).stdout
    return CudaToolkit(real_nvcc, home, (int(match[1]), int(match[2])), codes)


def _cuda_home(nvcc: Path, home_env: str | None) -> str:
    if home_env and (Path(home_env) / "include" / "cuda_runtime.h").is_file():
        return home_env
    real = nvcc.resolve()
    for home in (real.parent.parent, Path("/usr/local/cuda")):
        if (home / "include" / "cuda_runtime.h").is_file() and (home / "bin" / "nvcc").is_file():
            return str(home.resolve())
    raise BuildError(
        f"cannot find the CUDA home of {nvcc} (no include/cuda_runtime.h beside it)",
        hint="set CUDA_HOME to the toolkit directory",
    )
