"""Create the Python environments this machine can build with (``toolchain setup``).

Each environment is a venv under ``<state>/envs/<name>`` holding one torch plus cmake
(>= 3.26, for abi3 modules) and ninja. Wheels come from pip's configured indexes and
find-links (local on these machines). An existing environment with the right torch is
kept; an environment elsewhere with that torch (for example the driver's own) can be
reused instead of installing another copy.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs

from kernel_builder.errors import BuildError
from kernel_builder.toolchain.discover import Environment, probe_environment
from kernel_builder.toolchain.state import state_dir

__all__ = ["EnvSpec", "DEFAULT_ENVS", "plan", "create_env"]


@attrs.frozen
class EnvSpec:
    """One environment to set up: its directory name and what pip installs into it."""

    name: str
    torch: str  # pip requirement pin, e.g. "2.14.1"
    serves: tuple[str, ...]  # build-set keys it is meant for

    def requirements(self) -> list[str]:
        return [f"torch=={self.torch}", "cmake>=3.26", "ninja"]


DEFAULT_ENVS: tuple[EnvSpec, ...] = (
    EnvSpec("torch213-cpu", "2.13.0", ("torch2.13-cpu",)),
    EnvSpec("torch214", "2.14.1", ("torch2.14-cpu", "torch2.14-cuda13.0")),
)


def _matches(env: Environment | None, spec: EnvSpec) -> bool:
    return env is not None and env.torch_version.split("+")[0] == spec.torch


def plan(
    specs: Sequence[EnvSpec], *, reuse: Sequence[str] = (), state: Path | None = None
) -> list[tuple[EnvSpec, str, str]]:
    """``(spec, action, python)`` per spec: ``keep`` an env in place, ``reuse`` one of
    ``reuse`` (its torch matches), or ``create`` a new venv."""
    state = state or state_dir()
    steps = []
    probed = {p: probe_environment(p) for p in reuse if Path(p).exists()}
    for spec in specs:
        python = state / "envs" / spec.name / "bin" / "python"
        if python.exists() and _matches(probe_environment(str(python)), spec):
            steps.append((spec, "keep", str(python)))
            continue
        reused = next((p for p, env in probed.items() if _matches(env, spec)), None)
        if reused is not None:
            steps.append((spec, "reuse", reused))
        else:
            steps.append((spec, "create", str(python)))
    return steps


def create_env(spec: EnvSpec, *, state: Path | None = None, base_python: str | None = None) -> str:
    """Create ``<state>/envs/<name>`` and pip-install the spec; returns its python."""
    state = state or state_dir()
    root = state / "envs" / spec.name
    base = base_python or getattr(sys, "_base_executable", sys.executable)
    for argv in (
        [base, "-m", "venv", "--clear", str(root)],
        [str(root / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", *spec.requirements()],
    ):
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise BuildError(
                f"`{' '.join(argv)}` failed (exit {done.returncode}):\n{done.stderr.strip()[-3000:]}",
                hint="check that pip can reach a wheel for this torch version (pip config list)",
            )
    return str(root / "bin" / "python")
