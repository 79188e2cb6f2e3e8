"""Reading build.toml text into a ``Build``: TOML syntax, edition detection, readers.

Detection follows the reference tool: ``general.edition = 5`` or ``6`` is read as that
edition; another integer is an unsupported edition; without ``edition`` the file is tried
as the strict v4 format, then as v3. v4 is upgraded in memory with a warning; v3 is
refused unless the caller migrates it (``update-build``). Files older than v3 (a
``universal`` flag, kernels without ``backend``) are recognised and refused with what to
write instead.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

import attrs

from kernel_builder import _files
from kernel_builder._repr import fields_repr
from kernel_builder.config.model import CURRENT_EDITION, KEYED_EDITIONS, Build
from kernel_builder.config.positions import Positions, scan
from kernel_builder.config.problems import BuildTomlError, Problem, Problems, describe
from kernel_builder.config.reader import ReadOptions, read_build

__all__ = ["Parsed", "parse", "load", "loads", "build_toml_path", "UPDATE_HINT"]

UPDATE_HINT = f"run `kernel-builder update-build` in the kernel directory to rewrite build.toml as edition {CURRENT_EDITION}"
DOCS = "docs/build-toml.md"
MAX_DEPTH = 32  # the schema needs 4; the readers and the position scanner recurse
# Patterns as text: re compiles one on first use (and caches it), not at every start-up.
_TOML_POSITION = r"\s*\(at line (\d+), column (\d+)\)$"


@attrs.frozen(eq=False, slots=False)
class Parsed:
    """A read build.toml: the model, the edition the file is written in, and warnings."""
    __repr__ = fields_repr

    build: Build
    edition: int
    warnings: tuple[Problem, ...]
    document: dict[str, Any] = attrs.field(repr=False)
    positions: Positions = attrs.field(repr=False)


def _syntax_error(file: str, exc: tomllib.TOMLDecodeError) -> BuildTomlError:
    message = str(exc)
    match = re.search(_TOML_POSITION, message)
    line = column = None
    if match:
        line, column = int(match[1]), int(match[2])
        message = message[: match.start()]
    problem = Problem(file, (), f"invalid TOML: {message}", line, column)
    return BuildTomlError(file, [problem], hint="fix the TOML syntax (see https://toml.io)")


def _too_deep(doc: dict[str, Any]) -> tuple[Any, ...] | None:
    """The key path of the first value nested deeper than ``MAX_DEPTH``, else ``None``.

    Iterative, so that the check itself cannot exhaust the stack.
    """
    stack: list[tuple[tuple[Any, ...], Any]] = [((), doc)]
    while stack:
        path, value = stack.pop()
        if len(path) > MAX_DEPTH:
            return path[:MAX_DEPTH]
        if isinstance(value, dict):
            stack.extend((path + (k,), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((path + (i,), v) for i, v in enumerate(value))
    return None


def _attempt(doc: dict[str, Any], file: str, positions: Positions, options: ReadOptions) -> tuple[Build | None, Problems, Problems]:
    problems, warnings = Problems(file, positions), Problems(file, positions)
    build = read_build(doc, options, problems, warnings)
    return build, problems, warnings


def parse(
    text: str,
    *,
    path: str = "build.toml",
    allow_legacy: bool = False,
    check_registry: bool = True,
    root: Path | None = None,
) -> Parsed:
    """Read build.toml text; raise ``BuildTomlError`` listing every problem.

    ``allow_legacy`` lets a v3 file through (for ``update-build``); ``check_registry``
    checks ``python-depends`` names against the registry; ``root`` is the kernel
    directory, against which source paths are checked when it is given.
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(path, exc) from None
    except RecursionError:
        problem = Problem(path, (), f"arrays or inline tables are nested too deeply (build.toml allows {MAX_DEPTH} levels)")
        raise BuildTomlError(path, [problem], hint="a build.toml needs at most a few levels; remove the extra brackets") from None
    positions = scan(text)
    deep = _too_deep(doc)
    if deep is not None:
        problems = Problems(path, positions)
        problems.add(deep, f"nested deeper than {MAX_DEPTH} levels")
        raise BuildTomlError(path, problems.items, hint="a build.toml needs at most a few levels; remove the extra brackets")
    general = doc.get("general")
    edition: Any = general.get("edition") if isinstance(general, dict) else None

    if edition is not None:
        if type(edition) is not int or edition < 0:
            problems = Problems(path, positions)
            problems.add(("general", "edition"), f"expected an integer edition ({CURRENT_EDITION}), got {describe(edition)}")
            raise BuildTomlError(path, problems.items, hint=f"write edition = {CURRENT_EDITION} (see {DOCS})")
        if edition not in KEYED_EDITIONS:
            problems = Problems(path, positions)
            problems.add(("general", "edition"), f"unsupported build edition {edition}; {_EDITIONS_READ}")
            raise BuildTomlError(path, problems.items, hint=_edition_hint(edition))
        return _finish(doc, path, positions, edition, check_registry, (), root=root)

    legacy = _older_than_v3(doc)
    if legacy is not None:
        problem = Problem(path, (), f"build.toml is older than edition 3 ({legacy}); kernel-builder reads editions 3 to {CURRENT_EDITION}")
        raise BuildTomlError(path, [problem], hint=PRE_V3_HINT)
    # No edition: the strict v4 schema first, then v3 (like the reference).
    build4, problems4, _ = _attempt(doc, path, positions, ReadOptions(4, check_registry=False, root=root))
    if build4 is not None:
        note = Problem(
            path,
            (),
            f"build.toml uses the legacy v4 format (no `general.edition`); it was upgraded to edition {CURRENT_EDITION} in memory. "
            "Run `kernel-builder update-build` to persist the upgrade.",
        )
        return _finish(doc, path, positions, 4, check_registry, (note,), root=root)
    build3, problems3, _ = _attempt(doc, path, positions, ReadOptions(3, check_registry=False, migrate=allow_legacy, root=root))
    if build3 is not None:
        if not allow_legacy:
            problem = Problem(path, (), "build.toml uses the legacy v3 format, which kernel-builder no longer reads")
            raise BuildTomlError(path, [problem], hint=UPDATE_HINT)
        return _finish(doc, path, positions, 3, check_registry, (), migrate=True, root=root)
    # Neither: report the edition the file is closer to. update-build (allow_legacy) is
    # already running, so its hints never send the author back to it.
    then = "" if allow_legacy else f"; {UPDATE_HINT}"
    if len(problems3) < len(problems4):
        note = "no `general.edition`, read as legacy v3"
        raise BuildTomlError(path, problems3.items, note=note, hint=f"fix the keys above{then}, or write the file as edition {CURRENT_EDITION} (see {DOCS})")
    note = "no `general.edition`, read as legacy v4"
    raise BuildTomlError(path, problems4.items, note=note, hint=f"fix the keys above{then}, or add edition = {CURRENT_EDITION} to [general] and use its keys (see {DOCS})")


_EDITIONS_READ = f"this kernel-builder reads editions 3 and 4 (no `edition` key), {' and '.join(map(str, KEYED_EDITIONS))}"
PRE_V3_HINT = (
    f"write it as edition {CURRENT_EDITION} by hand: [general] needs version = 1, edition = {CURRENT_EDITION}, a license "
    "and backends (those of the [kernel.*] tables; `universal = true` meant all of cann, cpu, cuda, metal, neuron, "
    "rocm and xpu); cuda-minver / cuda-maxver move to [general.cuda] as minver / maxver; each [kernel.NAME] "
    f'gets language = "cpp-<backend>" (see "Files older than edition 3" in {DOCS})'
)


def _edition_hint(edition: int) -> str:
    """What to do about an edition this kernel-builder does not read; never a command that
    cannot help (no kernel-builder reads a newer edition, update-build reads none of these)."""
    if edition > CURRENT_EDITION:
        return (
            f"edition {edition} is newer than any edition this kernel-builder knows; write the file as edition "
            f"{CURRENT_EDITION} (every key is in {DOCS})"
        )
    return (
        f"editions 3 and 4 are written without an `edition` key; write the file as edition {CURRENT_EDITION} "
        f'(see "What changed" in {DOCS}), or delete the edition line so that it is read as legacy v4'
    )


def _older_than_v3(doc: dict[str, Any]) -> str | None:
    """Why a file without ``edition`` is one of the formats before v3, else ``None``.

    v2 had ``[general] universal`` and ``cuda-minver``/``cuda-maxver``; v1 had ``[torch]
    universal`` and components tagged with ``language`` (cuda, cuda-hipify, metal). Both
    derived the backends from the components, so they have no ``backends`` key."""
    general = doc.get("general")
    if not isinstance(general, dict) or "backends" in general:
        return None
    torch = doc.get("torch")
    kernels = doc.get("kernel")
    if "universal" in general or any(k in general for k in ("cuda-minver", "cuda-maxver")):
        return "v2: `universal` or `cuda-minver` in [general], no `backends`"
    if isinstance(torch, dict) and "universal" in torch:
        return "v1: `universal` in [torch], no `backends`"
    if isinstance(kernels, dict) and any(isinstance(k, dict) and "language" in k and "backend" not in k for k in kernels.values()):
        return "v1: components tagged with `language`, no `backends`"
    written_v2 = not any(k in general for k in ("version", "license", "upstream", "source"))
    if written_v2 and isinstance(torch, dict) and isinstance(kernels, dict) and kernels and all(isinstance(k, dict) and "backend" in k for k in kernels.values()):
        return "v2: no `backends`; they followed from the components"
    return None


def _finish(
    doc: dict[str, Any],
    path: str,
    positions: Positions,
    edition: int,
    check_registry: bool,
    notes: tuple[Problem, ...],
    migrate: bool = False,
    root: Path | None = None,
) -> Parsed:
    build, problems, warnings = _attempt(doc, path, positions, ReadOptions(edition, check_registry, migrate, root))
    if build is None:
        raise BuildTomlError(path, problems.items)
    return Parsed(build, edition, notes + tuple(warnings.items), doc, positions)


def build_toml_path(path: str | os.PathLike[str]) -> Path:
    """``path/build.toml`` if ``path`` is a directory, else ``path`` itself."""
    candidate = Path(path)
    return candidate / "build.toml" if candidate.is_dir() else candidate


def read_text(file: Path, *, hint: str = "run this in a kernel directory that has a build.toml, or pass its path") -> str:
    """The text of a build.toml; anything that is not a small UTF-8 regular file is refused."""
    try:
        return _files.read_text(file)
    except FileNotFoundError:
        raise BuildTomlError(str(file), [Problem(str(file), (), "file not found")], hint=hint) from None
    except _files.UnreadableFile as exc:
        problem = Problem(str(file), (), exc.reason, exc.line, exc.column)
        raise BuildTomlError(str(file), [problem], hint="build.toml must be a UTF-8 text file of at most 1 MiB") from None


def read_file(path: str | os.PathLike[str], *, check_sources: bool = False, **kwargs: Any) -> Parsed:
    """Parse the build.toml at ``path`` (a kernel directory or the file itself).

    ``check_sources``: every ``src`` file and ``include`` directory must exist inside the
    directory of the file (what ``check-config`` and ``build`` need; listing variants or
    uploading a built tree does not).
    """
    file = build_toml_path(path)
    if check_sources:
        kwargs["root"] = file.parent
    return parse(read_text(file), path=str(file), **kwargs)


_emitted: set[str] = set()


def emit_warnings(warnings: tuple[Problem, ...]) -> None:
    """Log each warning (the command line shows them as ``warning: ...``), once per process:
    a command that reads build.toml twice still says each thing once."""
    for warning in warnings:
        text = str(warning)
        if text not in _emitted:
            _emitted.add(text)
            import logging  # lazy: most reads warn of nothing, and a command that logs nothing skips importing logging

            logging.getLogger(__name__).warning("%s", text)


def load(path: str | os.PathLike[str], *, check_sources: bool = False) -> Build:
    """The ``Build`` of a kernel directory (or a build.toml path); warnings are logged."""
    parsed = read_file(path, check_sources=check_sources)
    emit_warnings(parsed.warnings)
    return parsed.build


def loads(text: str, *, path: str = "build.toml") -> Build:
    """The ``Build`` of build.toml text; ``path`` names the file in messages."""
    parsed = parse(text, path=path)
    emit_warnings(parsed.warnings)
    return parsed.build
