"""The ordinary clients the pinned toolchains are made with: apt, pip, dpkg-deb, nix-hash.

``toolchain lock`` resolves with them and ``toolchain fetch`` downloads with them; both go
through ``run_tool`` (one error shape) and the same pip platform tags, and both take the
Debian seed out of its .deb the same way.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from kernel_builder import _children
from kernel_builder.errors import ConfigError

__all__ = ["apt_arch_args", "extract_seed", "nar_sha256", "pip_env", "pip_platform_args", "run_tool", "seed_nar_hash", "wheel_machine"]


def _manylinux(machine: str) -> list[str]:
    """manylinux_2_28 and older: what the pinned sysroot's glibc promise allows a wheel to need."""
    legacy = ["manylinux2014"] + (["manylinux2010", "manylinux1"] if machine == "x86_64" else [])
    return [f"manylinux_2_{v}_{machine}" for v in range(28, 4 if machine == "x86_64" else 16, -1)] + [f"{t}_{machine}" for t in legacy]


def pip_platform_args(python: str = "3.11", machine: str = "x86_64") -> list[str]:
    """pip's options for CPython ``python`` wheels on manylinux_2_28 ``machine`` (x86_64,
    or aarch64 for the cross targets' environments)."""
    args = ["--only-binary=:all:", "--python-version", python, "--implementation", "cp"]
    for tag in _manylinux(machine):
        args += ["--platform", tag]
    return args


def pip_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of the lock's and fetch's pip: ``environ`` (default: this process's)
    with every setting kept (index, certificates, timeouts) but constraints. A machine may cap
    a package in its pip configuration (a ``constraint =`` line: ``torch<=2.14.1`` where only
    those wheels lie on its disk); the lock pins what the public index serves and fetch
    downloads exactly that, so both see only their own constraints. An environment variable
    outranks every configuration file and ``os.devnull`` is an empty constraints file: no
    machine file is read or touched."""
    return {**(os.environ if environ is None else environ), "PIP_CONSTRAINT": os.devnull}


def wheel_machine(file: str) -> str:
    """The machine a wheel file is for: ``aarch64`` when its platform tag says so, else x86_64
    (pure-Python wheels fit both)."""
    return "aarch64" if file.endswith("_aarch64.whl") else "x86_64"


def apt_arch_args(names: list[str]) -> list[str]:
    """apt options that make the foreign architectures of ``names`` (``libc6:arm64``) known
    for this one call, without adding them to dpkg's configuration; their package lists come
    from ``apt-get update`` with the same options (see docs/nix.md)."""
    foreign = sorted({n.split(":", 1)[1].split("=", 1)[0] for n in names if ":" in n})
    if not foreign:
        return []
    return ["-o", "APT::Architectures::=amd64", *(arg for arch in foreign for arg in ("-o", f"APT::Architectures::={arch}"))]


def run_tool(argv: list[str], what: str, *, cwd: Path | None = None, hint: str | None = None,
             env: dict[str, str] | None = None) -> str:
    """Run one of the ordinary clients (apt, pip, dpkg-deb, nix-hash); its stdout, or a
    ``ConfigError`` with the command and the end of its stderr."""
    try:
        done = _children.run(argv, cwd=cwd, env=env)  # own process group: SIGINT/SIGTERM stop it and are waited for
    except OSError as exc:
        raise ConfigError(f"cannot run {argv[0]}: {exc.strerror}", hint=f"{what} needs {argv[0]} on PATH") from None
    if done.returncode != 0:
        raise ConfigError(
            f"{what} failed: `{' '.join(argv[:6])} ...` exited {done.returncode}:\n{done.stderr.strip()[-2500:]}", hint=hint
        )
    return done.stdout


def nar_sha256(path: Path) -> str:
    """The sha256 of the NAR serialisation of ``path`` (what a recursive fixed output pins)."""
    return run_tool(["nix-hash", "--type", "sha256", str(path)], "nix-hash").strip()


def seed_nar_hash(deb: Path, member: str, name: str) -> str:
    """Extract ``member`` of ``deb`` into a directory holding it as ``name``; its NAR sha256."""
    with tempfile.TemporaryDirectory(prefix="kb-seed-") as tmp:
        seed_dir = extract_seed(deb, member, name, Path(tmp))
        return nar_sha256(seed_dir)


def extract_seed(deb: Path, member: str, name: str, work: Path) -> Path:
    """``work/<name>/<basename of member>`` taken out of ``deb`` (no dpkg needed: ar + tar)."""
    unpacked = work / "unpacked"
    unpacked.mkdir(parents=True, exist_ok=True)
    run_tool(["dpkg-deb", "-x", str(deb), str(unpacked)], "dpkg-deb -x")
    seed_dir = work / name
    seed_dir.mkdir()
    target = seed_dir / Path(member).name
    shutil.copyfile(unpacked / member, target)
    target.chmod(0o555)
    seed_dir.chmod(0o555)
    return seed_dir
