"""Find this machine's toolchains and record them in ``toolchains.json``.

A toolchain Python is any Python with a torch installed (a venv made by ``toolchain
setup``, the driver's own, or one named with ``--python``). Each is probed in a
subprocess *without importing torch* (its version file and dist-info are enough; the one
probe is ``pyenv.probe_python``), so discovery takes well under a
second per environment. A torch X.Y serves the build set
``torchX.Y-cpu``; a CUDA build of torch also serves ``torchX.Y-cudaM.N`` when this
machine's nvcc is CUDA M.N.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from kernel_builder import __version__
from kernel_builder._files import write_atomic
from kernel_builder.errors import BuildError, ConfigError
from kernel_builder.pyenv import PythonProbeError, probe_cuda, probe_python
from kernel_builder.toolchain.host.record import (
    CompilerRecord,
    CudaRecord,
    DriverRecord,
    Environment,
    ToolchainsRecord,
    from_json,
    to_json,
)
from kernel_builder.state import state_dir
from kernel_builder.variants.buildsets import build_set_key
from kernel_builder.variants.host import host_platform
from kernel_builder.variants.names import Kind, try_parse
from kernel_builder.versions import format_major_minor, major_minor

__all__ = [
    "build_set_key",
    "discover",
    "load_toolchains",
    "python_for_variant",
    "is_stale",
    "driver_python",
    "probe_environment",
    "toolchains_path",
    "write_toolchains",
]

def python_for_variant(variant_name: str, pythons: Mapping[str, str] | None) -> str | None:
    """The toolchain Python (from build-set key -> Python) that builds ``variant_name`` (a
    torch arch variant), if any.

    Used by ``kernel-builder check`` to import each variant with the torch it was built for.
    """
    variant = try_parse(variant_name)
    if pythons is None or variant is None or variant.kind is not Kind.TORCH or variant.compute is None:
        return None
    torch = "{}.{}".format(*variant.version)
    compute = variant.compute
    version = "{}.{}".format(*compute.version) if compute.version else None
    return pythons.get(build_set_key(torch, variant.backend, version))


def toolchains_path(state: Path | None = None) -> Path:
    return (state or state_dir()) / "toolchains.json"


def _tool_version(name: str, search: Sequence[str]) -> str:
    found = shutil.which(name, path=os.pathsep.join(search))
    if found is None:
        return ""
    done = subprocess.run([found, "--version"], capture_output=True, text=True, check=False)
    first = (done.stdout or done.stderr).strip().splitlines()
    return f"{found}: {first[0] if first else '?'}"


def _search_path(python: str) -> list[str]:
    """The PATH a variant derivation gets (nix/toolchains/host.nix), minus CUDA."""
    return [str(Path(python).parent), str(Path(driver_python()).parent), "/usr/local/bin", "/usr/bin", "/bin"]


def probe_environment(python: str) -> Environment | None:
    """Probe one Python (the one cached probe, ``probe_python``); ``None`` when it has no
    installed torch. ``ConfigError`` when it cannot run."""
    path = str(Path(python).absolute())
    try:
        facts = probe_python(path)
    except PythonProbeError as exc:
        if not exc.started:
            raise ConfigError(f"cannot run toolchain Python {path}: {exc.detail}", hint="pass the path of a python executable") from None
        raise ConfigError(f"toolchain Python {path} failed to start:\n{exc.detail[-1000:]}") from None
    torch = facts.torch
    if torch is None or torch.dist_version is None:
        return None
    search = _search_path(path)
    return Environment(
        python=path,
        env_bin=str(Path(path).parent),
        python_version=".".join(map(str, facts.python_version)),
        torch_version=torch.dist_version,
        torch_cuda=torch.cuda or "",
        torch_record_hash=torch.record_hash or "",
        torch_wheel_hash=torch.wheel_hash or "",
        cmake_version=_tool_version("cmake", search),
        ninja_version=_tool_version("ninja", search),
        torch_record_path=torch.record_path or "",
        stamp=_stamp([path, torch.record_path or ""]),
    )


def driver_python() -> str:
    """The Python running kernel-builder (see ``canonical_python``)."""
    return canonical_python(sys.executable)


def canonical_python(path: str) -> str:
    """A Python spelled one way (``bin/python`` when it is the same file as ``bin/python3``),
    so records do not depend on how an interpreter was named or started."""
    exe = Path(path).absolute()
    plain = exe.parent / "python"
    try:
        if plain != exe and plain.exists() and plain.resolve() == exe.resolve():
            return str(plain)
    except OSError:
        pass
    return str(exe)


def _compiler() -> CompilerRecord:
    cxx = shutil.which("c++", path="/usr/local/bin:/usr/bin:/bin") or shutil.which("g++") or ""
    version = ""
    if cxx:
        done = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False)
        version = (done.stdout.strip().splitlines() or [""])[0]
    return CompilerRecord(cxx=cxx, version=version, stamp=_stamp([cxx]))


def _cuda() -> CudaRecord | None:
    try:
        found = probe_cuda()
    except BuildError:
        return None
    return CudaRecord(nvcc=found.nvcc, home=found.home, version=format_major_minor(found.version), stamp=_stamp([found.nvcc]))


def _stamp(paths: Iterable[str]) -> str:
    """Modification times of files whose change means the record is out of date."""
    parts = []
    for path in paths:
        try:
            parts.append(str(os.stat(path).st_mtime_ns))
        except OSError:
            parts.append("missing")
    return ",".join(parts)


def is_stale(record: ToolchainsRecord) -> bool:
    """Whether a recorded toolchain changed on disk since discovery (cheap: stat only)."""
    if record.driver.python != driver_python():
        return True
    if any(_stamp([env.python, env.torch_record_path]) != env.stamp for env in record.environments):
        return True
    if _stamp([record.compiler.cxx]) != record.compiler.stamp:
        return True
    return record.cuda is not None and _stamp([record.cuda.nvcc]) != record.cuda.stamp


def _candidates(extra: Iterable[str], state: Path) -> list[str]:
    found = [canonical_python(p) for p in extra]
    envs = state / "envs"
    if envs.is_dir():
        found += [str(p / "bin" / "python") for p in sorted(envs.iterdir()) if (p / "bin" / "python").exists()]
    found.append(driver_python())
    unique: list[str] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def discover(extra_pythons: Iterable[str] = (), *, state: Path | None = None) -> ToolchainsRecord:
    """Probe every candidate environment and the host tools; return the toolchains record.

    Candidates, first wins for a build set: ``extra_pythons`` in order, the environments
    under ``<state>/envs/``, then the driver Python (the one running kernel-builder).
    """
    state = state or state_dir()
    cuda = _cuda()
    environments: list[Environment] = []
    for python in _candidates(extra_pythons, state):
        explicit = python in [canonical_python(p) for p in extra_pythons]
        if not Path(python).exists():
            if explicit:
                raise ConfigError(f"toolchain Python {python} does not exist", hint="pass an existing python executable")
            continue
        env = probe_environment(python)
        if env is None:
            if explicit:
                raise ConfigError(f"{python} has no torch installed", hint="pip install torch into that environment")
            continue
        environments.append(env)
    build_sets: dict[str, Environment] = {}
    for env in environments:
        keys = [build_set_key(env.torch_major_minor, "cpu")]
        if env.torch_cuda and cuda is not None and format_major_minor(major_minor(env.torch_cuda)) == cuda.version:
            keys.append(build_set_key(env.torch_major_minor, "cuda", cuda.version))
        for key in keys:
            build_sets.setdefault(key, env)
    driver = driver_python()
    return ToolchainsRecord(
        system=host_platform().system,
        driver=DriverRecord(python=driver, bin=str(Path(driver).parent), kernel_builder_version=__version__),
        compiler=_compiler(),
        cuda=cuda,
        environments=environments,
        build_sets=build_sets,
    )


def write_toolchains(record: ToolchainsRecord, *, state: Path | None = None) -> Path:
    """Write the record atomically to ``<state>/toolchains.json``."""
    path = toolchains_path(state)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(to_json(record), indent=2, sort_keys=True) + "\n")
    return path


def load_toolchains(*, state: Path | None = None) -> ToolchainsRecord | None:
    """The recorded toolchains, or ``None`` when discovery never ran."""
    path = toolchains_path(state)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}", hint="run `kernel-builder toolchain discover`") from None
    return from_json(data, path)
