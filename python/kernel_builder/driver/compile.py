"""Run CMake and Ninja on a generated project; give back the built module.

The only module of the build that starts the compiler. Output goes to a log file in the
scratch directory (and to stderr when ``verbose``); a failure raises ``BuildError`` with
the command and the end of the log so the user sees the compiler's message.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kernel_builder.driver.generate import CompilePlan, render
from kernel_builder.pyenv import Toolchain, find_tool, probe_cuda
from kernel_builder.errors import BuildError

__all__ = ["compile_module", "write_project", "configure_args"]

_LOG_TAIL = 6000


def write_project(plan: CompilePlan, scratch: Path) -> Path:
    """Write the generated files into ``scratch/project``; return that directory."""
    project = scratch / "project"
    for rel, text in render(plan).items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    # registration.h is looked up in scratch/include (the plan's include dir).
    include = scratch / "include"
    include.mkdir(parents=True, exist_ok=True)
    (include / "registration.h").write_text((project / "include" / "registration.h").read_text())
    return project


def configure_args(plan: CompilePlan, toolchain: Toolchain, project: Path, build_dir: Path) -> list[str]:
    cmake = find_tool("cmake", toolchain.python)
    ninja = find_tool("ninja", toolchain.python)
    args = [
        cmake,
        "-S",
        str(project),
        "-B",
        str(build_dir),
        "-G",
        "Ninja",
        f"-DCMAKE_MAKE_PROGRAM={ninja}",
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DPython3_EXECUTABLE={toolchain.python}",
        f"-DCMAKE_PREFIX_PATH={toolchain.cmake_prefix_path}",
        "-Wno-dev",
    ]
    if plan.backend == "cuda":
        cuda = probe_cuda()
        args += [
            f"-DCMAKE_CUDA_COMPILER={cuda.nvcc}",
            f"-DCUDAToolkit_ROOT={cuda.home}",
            f"-DCUDA_TOOLKIT_ROOT_DIR={cuda.home}",
        ]
        if toolchain.nvrtc:
            args.append(f"-DCUDA_nvrtc_LIBRARY={toolchain.nvrtc[0]}")
    return args


def _run(cmd: list[str], *, log: Path, env: dict[str, str], verbose: bool, what: str) -> None:
    with open(log, "ab") as handle:
        handle.write(("$ " + " ".join(cmd) + "\n").encode())
        handle.flush()
        if verbose:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
            assert proc.stdout is not None
            for line in proc.stdout:
                handle.write(line)
                sys.stderr.buffer.write(line)
            code = proc.wait()
        else:
            code = subprocess.run(cmd, stdout=handle, stderr=subprocess.STDOUT, env=env, check=False).returncode
    if code != 0:
        tail = log.read_text(errors="replace")[-_LOG_TAIL:]
        raise BuildError(
            f"{what} failed (exit {code}); command:\n  {' '.join(cmd)}\nlast lines of {log}:\n{tail}",
            hint="fix the error above; rerun with --verbose to see the whole compiler output",
        )


def compile_module(
    plan: CompilePlan, toolchain: Toolchain, scratch: Path, *, jobs: int | None = None, verbose: bool = False
) -> Path:
    """Configure and build ``plan`` in ``scratch``; return the path of the ``.abi3.so``."""
    project = write_project(plan, scratch)
    build_dir = scratch / "cmake-build"
    log = scratch / "build.log"
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if plan.cuda_arch_list:
        # Keeps torch's CMake package from probing for a GPU to pick its own archs.
        env["TORCH_CUDA_ARCH_LIST"] = ";".join(plan.cuda_arch_list)
    _run(configure_args(plan, toolchain, project, build_dir), log=log, env=env, verbose=verbose, what="cmake configure")
    jobs = jobs or int(os.environ.get("NIX_BUILD_CORES") or 0) or os.cpu_count() or 1
    cmake = find_tool("cmake", toolchain.python)
    _run([cmake, "--build", str(build_dir), "-j", str(jobs)], log=log, env=env, verbose=verbose, what="compile")
    built = sorted(build_dir.glob(f"{plan.ops_id}*.so"))
    if len(built) != 1:
        raise BuildError(f"expected one {plan.ops_id}*.so in {build_dir}, found {[p.name for p in built]}")
    return built[0]
