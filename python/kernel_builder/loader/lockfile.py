"""``kernels.lock``: pin each kernel dependency of a project to a commit.

The file is the one PyPI ``kernels`` writes and reads: a JSON list of
``{"dependency": {"repo-id": R, "version": N | "revision": S}, "lock": {"commit": C}}``.
Dependencies come from ``[tool.kernels.dependencies]`` in ``pyproject.toml``
(``"org/name" = N`` for version N, or a string for a revision).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attrs

from kernel_builder._files import UnreadableFile, read_text
from kernel_builder.errors import ConfigError
from kernel_builder.loader.errors import InvalidRequest

__all__ = ["Dependency", "Lock", "read_dependencies", "read_lockfile", "parse_lockfile", "dumps_lockfile", "find_lock", "LOCKFILE"]

LOCKFILE = "kernels.lock"
_COMMIT = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")  # the reference accepts either case


@attrs.frozen
class Dependency:
    """A kernel a project needs: exactly one of ``version`` and ``revision``."""

    repo_id: str
    version: int | None = None
    revision: str | None = None

    def to_json(self) -> dict[str, object]:
        key, value = ("version", self.version) if self.version is not None else ("revision", self.revision)
        return {"repo-id": self.repo_id, key: value}


@attrs.frozen
class Lock:
    dependency: Dependency
    commit: str

    def to_json(self) -> dict[str, object]:
        return {"dependency": self.dependency.to_json(), "lock": {"commit": self.commit}}


def _load_toml(text: str) -> dict[str, Any]:
    try:
        import tomllib  # lazy: stdlib from Python 3.11 on
    except ModuleNotFoundError:  # Python 3.10: tomlkit is a dependency anyway
        import tomlkit  # lazy: the Python 3.10 fallback

        data: dict[str, Any] = tomlkit.loads(text).unwrap()
        return data
    return tomllib.loads(text)


def read_dependencies(project_dir: Path) -> list[Dependency]:
    """``[tool.kernels.dependencies]`` of ``project_dir/pyproject.toml``, in file order."""
    path = Path(project_dir) / "pyproject.toml"
    try:
        data = _load_toml(read_text(path))
    except FileNotFoundError:
        raise ConfigError(f"cannot read {path}: no such file", hint="pass the project directory") from None
    except UnreadableFile as exc:
        raise ConfigError(f"{_where(path, exc)}: {exc.reason}", hint="pass the project directory") from None
    except ValueError as exc:  # tomllib.TOMLDecodeError and tomlkit's parse errors are ValueErrors
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path} is not valid TOML: arrays or tables nested too deeply") from None
    tool = data.get("tool")
    kernels = tool.get("kernels") if isinstance(tool, dict) else None
    table = kernels.get("dependencies") if isinstance(kernels, dict) else None
    if not isinstance(table, dict) or not table:
        raise ConfigError(
            f"{path} has no [tool.kernels.dependencies] table",
            hint='add e.g.\n[tool.kernels.dependencies]\n"kernels-community/relu" = 1',
        )
    deps = []
    for repo_id, spec in table.items():
        if isinstance(spec, bool) or not isinstance(spec, (int, str)):
            raise ConfigError(
                f"{path}: tool.kernels.dependencies.{repo_id!r} must be a version number or a revision string, got {spec!r}"
            )
        deps.append(Dependency(repo_id, version=spec) if isinstance(spec, int) else Dependency(repo_id, revision=spec))
    return deps


def dumps_lockfile(locks: list[Lock]) -> str:
    return json.dumps([lock.to_json() for lock in locks], indent=2)


def read_lockfile(path: Path) -> list[Lock]:
    """Parse a lock file; a malformed entry raises ``InvalidRequest`` naming it."""
    try:
        text = read_text(Path(path))
    except FileNotFoundError:
        raise InvalidRequest(f"cannot read lock file {path}: no such file", hint="run `kernel-builder lock PROJECT`") from None
    except UnreadableFile as exc:
        raise InvalidRequest(f"lock file {_where(path, exc)}: {exc.reason}", hint="regenerate it with `kernel-builder lock PROJECT`") from None
    return parse_lockfile(text, str(path))


def _where(path: str | Path, exc: UnreadableFile) -> str:
    return f"{path}:{exc.line}:{exc.column}" if exc.line is not None else str(path)


def parse_lockfile(text: str, path: str) -> list[Lock]:
    """Parse lock-file text (``path`` names it in errors)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"lock file {path}:{exc.lineno}:{exc.colno} is not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise InvalidRequest(f"lock file {path} is not a lock file: its JSON is nested too deeply", hint="regenerate it with `kernel-builder lock PROJECT`") from None
    if not isinstance(data, list):
        raise InvalidRequest(f"lock file {path} must hold a JSON list")
    locks = []
    for i, entry in enumerate(data):
        try:
            dep, commit = entry["dependency"], entry["lock"]["commit"]
            repo_id = dep["repo-id"]
            version, revision = dep.get("version"), dep.get("revision")
            if (version is None) == (revision is None) or not isinstance(commit, str) or not _COMMIT.fullmatch(commit):
                raise KeyError
            if not isinstance(repo_id, str) or not _valid_spec(version, revision):
                raise TypeError
        except (KeyError, TypeError, AttributeError):
            raise InvalidRequest(
                f"lock file {path}: entry {i} is not {{dependency: {{repo-id, version|revision}}, lock: {{commit}}}}",
                hint="regenerate it with `kernel-builder lock PROJECT`",
            ) from None
        locks.append(Lock(Dependency(repo_id, version=version, revision=revision), str(commit).lower()))
    return locks


def _valid_spec(version: object, revision: object) -> bool:
    if version is not None:
        return isinstance(version, int) and not isinstance(version, bool) and version >= 0
    return isinstance(revision, str) and bool(revision)


def find_lock(locks: list[Lock], repo_id: str) -> Lock:
    for lock in locks:
        if lock.dependency.repo_id == repo_id:
            return lock
    raise InvalidRequest(
        f"Kernel `{repo_id}` is not locked. Please lock it with `kernel-builder lock <project>` and then reinstall the project.",
        hint="add it to [tool.kernels.dependencies] and run `kernel-builder lock PROJECT`",
    )
