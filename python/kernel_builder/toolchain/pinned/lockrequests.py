"""What the toolchain lock asks for, read cheaply: which build sets the pinned toolchains
serve on which system, and the torch of each environment.

``list-variants`` (``local``) and ``toolchain setup`` need only these few ``requests``
fields of ``nix/toolchain-lock.json``; ``lockfile.load_lock`` validates the whole lock for
fetching and building. This module imports nothing heavy, for CLI start-up.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from kernel_builder._source import nix_data_file

__all__ = ["ENV_VAR", "cross_build_sets", "import_check_names", "pins_rust", "lock_facts", "lock_path", "served_build_sets", "check_package_name", "check_packages", "torch_environments"]

ENV_VAR = "KERNEL_BUILDER_TOOLCHAIN_LOCK"
# The version of an exact torch pin: `torch==2.14.1`, `torch==2.13.0,!=2.13.0+cpu` (the
# PyPI build, never the local mirror's +cpu one), `torch===2.13.0`.
_TORCH_PIN = re.compile(r"torch\s*===?\s*([^,;\s]+)")


def lock_path() -> Path:
    """``$KERNEL_BUILDER_TOOLCHAIN_LOCK``, else kernel-builder's ``nix/toolchain-lock.json``
    (the checkout's, or the copy an installed wheel carries)."""
    return nix_data_file("toolchain-lock.json", ENV_VAR)


@functools.lru_cache(maxsize=4)
def _requests(path: str) -> tuple[str, dict[str, Any]]:
    """(system, requests) of the lock, without validating its artifacts (cheap: for list-variants)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ("", {})
    if not isinstance(data, dict) or not isinstance(data.get("requests"), dict):
        return ("", {})
    return (str(data.get("system", "x86_64-linux")), data["requests"])


def served_build_sets(path: Path | None = None) -> frozenset[tuple[str, str]]:
    """(system, build-set key) pairs the pinned toolchains can build: what ``list-variants``
    calls ``local``, cross targets' pairs included (``("aarch64-linux", "torch2.13-cpu")``).
    Empty when the lock cannot be read."""
    system, requests = _requests(str(path or lock_path()))
    native = frozenset((system, key) for key in requests.get("buildSets") or {})
    # A cross target's build set is built here too, with the native environment of the
    # same key running CMake (nix/toolchains/pinned.nix): both must be pinned.
    cross = frozenset(
        (target, key)
        for target, spec in (requests.get("targets") or {}).items() if isinstance(spec, dict)
        for key in spec.get("buildSets") or {} if (system, key) in native
    )
    return native | cross


def cross_build_sets(path: Path | None = None) -> dict[str, list[str]]:
    """Target system -> the build-set keys the lock cross-builds for it (``requests.targets``)."""
    _, requests = _requests(str(path or lock_path()))
    return {system: sorted(spec.get("buildSets") or {}) for system, spec in (requests.get("targets") or {}).items()
            if isinstance(spec, dict)}


def torch_environments(path: Path | None = None) -> list[tuple[str, str, tuple[str, ...]]]:
    """(environment, torch pin, build-set keys it serves) for every torch environment of the
    lock, in lock order: ``("torch2.14", "2.14.1", ("torch2.14-cpu", "torch2.14-cuda13.0"))``.
    The pin keeps a local label (``2.13.0+cpu``); extra specifiers after it are dropped."""
    _, requests = _requests(str(path or lock_path()))
    serves: dict[str, list[str]] = {}
    for key, env in (requests.get("buildSets") or {}).items():
        serves.setdefault(env, []).append(key)
    out = []
    for env, specs in ((requests.get("python") or {}).get("environments") or {}).items():
        pins = [m.group(1) for m in map(_TORCH_PIN.match, specs) if m]
        if pins and env in serves:
            out.append((env, pins[0], tuple(serves[env])))
    return out


def check_package_name(requirement: str) -> str:
    """The name a kernel flake's ``pythonCheckInputs`` uses for a test request: the
    requirement's project name, normalized as PyPI does (``Huggingface_Hub>=1`` ->
    ``huggingface-hub``). nix/toolchains/pinned/parts.nix reads the groups by it."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if not match:
        raise ValueError(f"not a requirement: {requirement!r}")
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def check_packages(path: Path | None = None) -> list[str]:
    """The names of the pinned kernel-test packages (``requests.python.test``), sorted."""
    _, requests = _requests(str(path or lock_path()))
    return sorted(check_package_name(r) for r in (requests.get("python") or {}).get("test") or [])


def import_check_names(path: Path | None = None) -> frozenset[str]:
    """The ``python-depends`` names the lock pins for the import check (the keys of
    ``requests.python.importCheck`` but ``loader``, which every variant gets)."""
    _, requests = _requests(str(path or lock_path()))
    return frozenset((requests.get("python") or {}).get("importCheck") or {}) - {"loader"}


def lock_facts(path: Path | None = None) -> tuple[str, dict[str, str]]:
    """(system the lock pins, torch major.minor -> CUDA version of its pinned build) for the
    messages about build sets the lock does not serve. ``("", {})`` when it cannot be read."""
    system, requests = _requests(str(path or lock_path()))
    cuda = requests.get("cuda") or {}
    pypi_cuda = {}
    for env, pin, _serves in torch_environments(path):
        if env in cuda:
            pypi_cuda[".".join(pin.split("+")[0].split(".")[:2])] = str(cuda[env])
    return system, pypi_cuda


def pins_rust(path: Path | None = None) -> bool:
    """Whether the lock pins a Rust toolchain (``requests.debian.groups.rust``: the
    compiler of rust-cpu components, nix/toolchains/pinned/parts.nix ``rust``)."""
    _, requests = _requests(str(path or lock_path()))
    return bool(((requests.get("debian") or {}).get("groups") or {}).get("rust"))
