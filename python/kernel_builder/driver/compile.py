"""Run CMake and Ninja on a generated project; give back the built module.

The only module of the build that starts the compiler. Output goes to a log file in the
scratch directory (and to stderr when ``verbose``). A failure raises ``BuildError`` with
the first error of the whole log (``diagnostics``), not its end, which after a parallel
compile is usually other jobs' warnings. Inside a Nix build the scratch directory vanishes
with the sandbox, so there the whole log is also written to stderr: the derivation's log
(``nix log``, ``kernel-builder build``'s saved copy) then holds every compiler line.

A scratch directory may be kept between builds (``build --local``: ``scratch.build_dir``).
Its CMake build directory is then reused, and Ninja rebuilds only what changed, as long as
it was made by the same toolchain for the same ops identifier: a stamp written after each
successful configure records both, and the compilers CMake found. A directory without a
valid stamp, with another toolchain, compiler or ops identifier, or whose CMakeCache.txt
belongs to another project or Python, is wiped, never reused. CMake's configure runs again
only when the generated project changed (or the directory is new).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from kernel_builder._files import write_atomic

from kernel_builder.backends import backend_module
from kernel_builder.driver.diagnostics import summarize
from kernel_builder.driver.generate import CompilePlan, render
from kernel_builder.driver.job import VariantJob
from kernel_builder.pyenv import Toolchain, find_tool
from kernel_builder.errors import BuildError

__all__ = ["STAMP", "build_env", "compile_module", "write_project", "configure_args", "stale_reason"]

log = logging.getLogger(__name__)

STAMP = "kernel-builder-configure.json"  # in the CMake build directory, written after a successful configure
# Environment variables that choose or steer the compilers CMake finds: a change wipes a kept build directory.
_TOOLCHAIN_ENV = ("CC", "CXX", "CUDAHOSTCXX", "CFLAGS", "CXXFLAGS", "CUDAFLAGS", "LDFLAGS", "KERNEL_BUILDER_PREFIX_MAPS")
_CACHED_TOOLS = ("CMAKE_C_COMPILER", "CMAKE_CXX_COMPILER", "CMAKE_CUDA_COMPILER", "CMAKE_LINKER", "CMAKE_AR")

_LOG_TAIL = 40  # lines shown when the log holds no compiler diagnostic (a CMake or ninja failure)


def write_project(plan: CompilePlan, scratch: Path) -> Path:
    """Write the generated files into ``scratch/project``; return that directory."""
    """Write the generated files into ``scratch/project``; return that directory.

    A file whose text is already there is left alone (its modification time tells Ninja
    nothing changed), and a file the plan no longer generates is removed."""
    project = scratch / "project"
    files = render(plan)
    for rel, text in files.items():
        _write_if_changed(project / rel, text)
    for path in sorted(project.rglob("*"), reverse=True) if project.is_dir() else ():
        if path.is_file() and path.relative_to(project).as_posix() not in files:
            path.unlink()
    # registration.h is looked up in scratch/include (the plan's include dir).
    _write_if_changed(scratch / "include" / "registration.h", files["include/registration.h"])
    return project


def _write_if_changed(path: Path, text: str) -> None:
    if path.is_file() and not path.is_symlink() and path.read_text() == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def configure_args(plan: CompilePlan, toolchain: Toolchain, project: Path, build_dir: Path, *, cross: bool = False) -> list[str]:
    """CMake's configure command; ``cross``: the module is for another machine (the job's target)."""
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
    args += backend_module(plan.backend).configure_args(toolchain, cross=cross)  # the backend's toolkit (CUDA's nvcc)
    return args


def build_env(plan: CompilePlan, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment CMake and the compilers run in (also ``driver.plan``'s configure):
    ``environ`` (the job's, handed on whole) without PYTHONPATH, with the plan's archs."""
    env = dict(environ)
    env.pop("PYTHONPATH", None)
    if plan.cuda_arch_list:
        # Keeps torch's CMake package from probing for a GPU to pick its own archs.
        env["TORCH_CUDA_ARCH_LIST"] = ";".join(plan.cuda_arch_list)
    return env


def stale_reason(build_dir: Path, fingerprint: str, project: Path, python: str) -> str | None:
    """Why the kept CMake build directory ``build_dir`` must not be reused (``None``: it
    may be). ``fingerprint`` is the current toolchain's (``_fingerprint``)."""
    stamp = _read_stamp(build_dir)
    if not stamp:
        return "it has no valid configure stamp: an interrupted configure, or made by another kernel-builder"
    if stamp.get("toolchain") != fingerprint:
        return "the toolchain, its settings or the ops identifier changed"
    cache = _cmake_cache(build_dir)
    home = cache.get("CMAKE_HOME_DIRECTORY")
    if home is None or Path(home) != project:
        return f"its CMakeCache.txt belongs to the project {home!r}, not {str(project)!r}"
    if cache.get("Python3_EXECUTABLE") != python:
        return f"its CMakeCache.txt was made for the Python {cache.get('Python3_EXECUTABLE')!r}, not {python!r}"
    if stamp.get("tools") != _tool_states(cache):
        return "a compiler or tool CMake found changed since it was configured"
    if not (build_dir / "build.ninja").is_file():
        return "it has no build.ninja"
    return None


def _fingerprint(configure: list[str], env: Mapping[str, str], ops_id: str, toolchain: Toolchain) -> str:
    """What a kept build directory must have been configured with to be reused."""
    on_path = {name: shutil.which(name, path=env.get("PATH")) for name in ("cc", "c++")}
    found = {name: os.path.realpath(path) if path else None for name, path in on_path.items()}
    facts = {
        "configure": configure,
        "env": {name: env.get(name) for name in (*_TOOLCHAIN_ENV, "TORCH_CUDA_ARCH_LIST")},
        "on-path": found,
        "ops-id": ops_id,
        "python": os.path.realpath(toolchain.python),
        "torch": toolchain.torch_version,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def _tree_hash(root: Path) -> str:
    hasher = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            hasher.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return hasher.hexdigest()


def _read_stamp(build_dir: Path) -> dict[str, object]:
    try:
        stamp = json.loads((build_dir / STAMP).read_text())
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def _cmake_cache(build_dir: Path) -> dict[str, str]:
    """``NAME:TYPE=VALUE`` entries of ``build_dir/CMakeCache.txt`` (empty when unreadable)."""
    try:
        text = (build_dir / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return {}
    entries = {}
    for line in text.splitlines():
        if line and not line.startswith(("#", "//")) and "=" in line:
            key, _, value = line.partition("=")
            entries[key.split(":", 1)[0]] = value
    return entries


def _tool_states(cache: Mapping[str, str]) -> dict[str, list[object]]:
    """The compilers and tools CMake cached, each as (real path, size, mtime): a replaced
    compiler (a package upgrade) changes it."""
    states: dict[str, list[object]] = {}
    for name in _CACHED_TOOLS:
        value = cache.get(name)
        if not value:
            continue
        real = os.path.realpath(value)
        try:
            info = os.stat(real)
        except OSError:
            states[name] = [real, None, None]
            continue
        states[name] = [real, info.st_size, info.st_mtime_ns]
    return states


def _run(cmd: list[str], *, log: Path, env: dict[str, str], verbose: bool, what: str, in_nix: bool) -> None:
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
        raise _failure(what, code, cmd, log, streamed=verbose, in_nix=in_nix)


def _failure(what: str, code: int, cmd: list[str], log: Path, *, streamed: bool, in_nix: bool) -> BuildError:
    """The error of a failed step: the first compiler error with its context (or the log's
    last lines when no compiler spoke), the counts, and where the whole log is (inside a
    Nix build, ``in_nix``, the scratch directory goes with the sandbox: the log goes to stderr)."""
    lines = log.read_text(errors="replace").splitlines()
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


def compile_module(plan: CompilePlan, toolchain: Toolchain, scratch: Path, job: VariantJob) -> Path:
    """Configure and build ``plan`` in ``scratch``; return the path of the ``.abi3.so``.
    ``job`` says how many compile jobs, whether to stream the output, the environment the
    tools run in and whether this is a Nix build.

    A ``scratch/cmake-build`` left by an earlier build is reused when ``stale_reason``
    finds nothing wrong with it (else wiped), and configured again only when the project
    changed; ``scratch/build.log`` holds this build's output only."""
    project = write_project(plan, scratch)
    build_dir = scratch / "cmake-build"
    build_log = scratch / "build.log"
    build_log.write_bytes(b"")
    verbose, in_nix = job.options.verbose, job.sandbox.in_nix
    env = build_env(plan, job.toolchain.environ)
    configure = configure_args(plan, toolchain, project, build_dir, cross=job.toolchain.target.platform is not None)
    fingerprint = _fingerprint(configure, env, plan.ops_id, toolchain)
    project_hash = _tree_hash(project)
    configured = False
    if build_dir.exists():
        reason = stale_reason(build_dir, fingerprint, project, toolchain.python)
        if reason is not None:
            log.info(f"starting a fresh build directory ({reason})")
            shutil.rmtree(build_dir)
        else:
            configured = _read_stamp(build_dir).get("project") == project_hash
            log.info("reusing the build directory " + ("(project unchanged)" if configured else "(project changed: configuring again)"))
    if not configured:
        (build_dir / STAMP).unlink(missing_ok=True)  # an interrupted configure leaves no stamp: the next build wipes
        _run(configure, log=build_log, env=env, verbose=verbose, what="cmake configure", in_nix=in_nix)
        stamp = {"toolchain": fingerprint, "project": project_hash, "tools": _tool_states(_cmake_cache(build_dir))}
        write_atomic(build_dir / STAMP, json.dumps(stamp, indent=1, sort_keys=True))
    cmake = find_tool("cmake", toolchain.python)
    _run([cmake, "--build", str(build_dir), "-j", str(job.jobs)], log=build_log, env=env, verbose=verbose, what="compile",
         in_nix=in_nix)
    built = sorted(build_dir.glob(f"{plan.ops_id}*.so"))
    if len(built) != 1:
        raise BuildError(f"expected one {plan.ops_id}*.so in {build_dir}, found {[p.name for p in built]}")
    return built[0]
