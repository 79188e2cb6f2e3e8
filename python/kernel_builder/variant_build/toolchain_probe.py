"""What a toolchain Python offers: its torch, CUDA and the build tools beside it.

The build runs with the driver Python (this package) but compiles against the *toolchain
Python*: a venv holding the build set's torch. One subprocess asks it for everything the
build needs; the answer is a frozen value so the rest of the build stays pure.
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

__all__ = ["Toolchain", "probe_toolchain", "find_tool", "CudaToolkit", "probe_cuda"]

# Reads torch/version.py instead of importing torch (which takes seconds): the build only
# needs versions and paths.
_PROBE = r"""
import glob, importlib.util, json, os, runpy, sys
spec = importlib.util.find_spec("torch")
if spec is None or not spec.origin:
    sys.exit("No module named 'torch'")
torch_dir = os.path.dirname(spec.origin)
version = runpy.run_path(os.path.join(torch_dir, "version.py"))
site = os.path.dirname(torch_dir)
config = os.path.join(torch_dir, "share", "cmake", "Torch", "TorchConfig.cmake")
config_text = open(config).read() if os.path.exists(config) else ""
print(json.dumps({
    "python": sys.executable,
    "python_version": list(sys.version_info[:2]),
    "torch_version": version["__version__"].split("+")[0],
    "cuda": version.get("cuda"),
    "hip": version.get("hip"),
    "xpu": version.get("xpu"),
    "cxx11_abi": "_GLIBCXX_USE_CXX11_ABI=0" not in config_text,
    "cmake_prefix_path": os.path.join(torch_dir, "share", "cmake"),
    "site_packages": site,
    "nvidia_includes": sorted(glob.glob(os.path.join(site, "nvidia", "*", "include"))),
    "nvrtc": sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", "libnvrtc.so*"))),
}))
"""


@attrs.frozen
class Toolchain:
    """The facts about one toolchain Python (see ``probe_toolchain``)."""

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
    def torch_major_minor(self) -> tuple[int, int]:
        parts = [int(p) for p in self.torch_version.split(".")[:2]]
        return parts[0], parts[1]

    @property
    def cuda_major_minor(self) -> tuple[int, int] | None:
        if not self.cuda:
            return None
        parts = [int(p) for p in self.cuda.split(".")[:2]] + [0]
        return parts[0], parts[1]


@functools.lru_cache(maxsize=16)
def probe_toolchain(python: str) -> Toolchain:
    """Ask ``python`` about its torch (without importing it); ``BuildError`` when it has none."""
    try:
        done = subprocess.run(
            [python, "-c", _PROBE], capture_output=True, text=True, timeout=300, env=_clean_env(), check=False
        )
    except OSError as exc:
        raise BuildError(
            f"cannot run the toolchain Python {python}: {exc}",
            hint="pass --toolchain-python with a Python that has torch installed",
        ) from None
    if done.returncode != 0:
        raise BuildError(
            f"the toolchain Python {python} has no usable torch:\n{done.stderr.strip()[-2000:]}",
            hint="install the build set's torch into that environment (pip install torch==X.Y)",
        )
    data = json.loads(done.stdout.strip().splitlines()[-1])
    data["python_version"] = tuple(data["python_version"])
    data["nvidia_includes"] = tuple(data["nvidia_includes"])
    data["nvrtc"] = tuple(data["nvrtc"])
    return Toolchain(**data)


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
