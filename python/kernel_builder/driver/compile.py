"""Run CMake and Ninja on a generated project; give back the built module.

The only module of the build that starts the compiler. Output goes to a log file in the
scratch directory (and to stderr when ``verbose``). A failure raises ``BuildError`` with
the first error of the whole log (``diagnostics``), not its end, which after a parallel
compile is usually other jobs' warnings. Inside a Nix build the scratch directory vanishes
with the sandbox, so there the whole log is also written to stderr: the derivation's log
(``nix log``, ``kernel-builder build``'s saved copy) then holds every compiler line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kernel_builder.driver.diagnostics import summarize
from kernel_builder.driver.generate import CompilePlan, render
from kernel_builder.pyenv import Toolchain, find_tool, probe_cuda
from kernel_builder.errors import BuildError

__all__ = ["compile_module", "write_project", "configure_args"]

_LOG_TAIL = 40  # lines shown when the log holds no compiler diagnostic (a CMake or ninja failure)


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
        # Cross-building, the build Python's NVRTC is of the wrong machine: the cross
        # toolchain's CMake file names the target's.
        if toolchain.nvrtc and not os.environ.get("KERNEL_BUILDER_TARGET_SYSTEM"):
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
        raise _failure(what, code, cmd, log, streamed=verbose)


def _failure(what: str, code: int, cmd: list[str], log: Path, *, streamed: bool) -> BuildError:
    """The error of a failed step: the first compiler error with its context (or the log's
    last lines when no compiler spoke), the counts, and where the whole log is."""
    lines = log.read_text(errors="replace").splitlines()
    in_nix = bool(os.environ.get("NIX_BUILD_TOP"))
    if in_nix and not streamed:
        sys.stderr.write(f"kernel-builder: the whole output of {what} ({len(lines)} lines):\n")
        sys.stderr.write("".join(f"{line}\n" for line in lines))
        sys.stderr.flush()
    summary = summarize(lines)
    first = summary.first_error
    shown = first.context if first is not None else lines[-_LOG_TAIL:]
    label = f"first error ({summary.errors} error(s), {summary.warnings} warning(s) in all)" if first else "last lines"
    where = "the whole output is above" if in_nix or streamed else f"the whole output is in {log}"
    return BuildError(
        f"{what} failed (exit {code}); command:\n  {' '.join(cmd)}\n{label}:\n"
        + "\n".join(f"  {line}" for line in shown) + f"\n({where})",
        hint="fix the error above" + ("" if in_nix or streamed else f"; {log} has every compiler line"),
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
