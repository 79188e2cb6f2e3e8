"""Compiler diagnostics in a build log: the first error, with its context, and the counts.

A failed compile often ends in pages of warnings from the other compile jobs, so the end
of a log rarely holds the error that stopped the build. ``first_error`` reads the whole
log and finds the first error GCC, Clang, nvcc (its EDG front end and its driver), the
linker or CMake reported, with the lines the compiler printed around it (the include chain
before it, the source excerpt and caret after it). Pure functions over lines: the build
front end and the one-variant build both use them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import attrs

__all__ = ["Diagnostic", "LogSummary", "summarize"]

# file:line[:col]: severity: message   (GCC, Clang, nvcc's host compiler)
_GCC = re.compile(
    r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<sev>fatal error|error|warning): (?P<msg>.*)$"
)
# file(line): severity[ #code[-D]]: message   (nvcc's EDG front end, cudafe++)
_EDG = re.compile(
    r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+)\): (?P<sev>catastrophic error|error|warning)(?: #[\w-]+)?: (?P<msg>.*)$"
)
# located-less errors that stop a build: nvcc's driver, the linker, CMake
_PLAIN = re.compile(
    r"^(?:nvcc (?P<nvcc>fatal|error)\s*: (?P<nmsg>.*)"
    r"|(?P<ld>\S*ld(?:\.\w+)?): (?P<lmsg>.*(?:undefined reference|cannot find|multiple definition).*)"
    r"|(?:\S+\.o: )?(?P<undef>.*undefined reference to .*)"
    r"|CMake Error(?: at (?P<cfile>[^:]+):(?P<cline>\d+))?.*)$"
)
_CHAIN = re.compile(r"^(?:In file included from |\s+from )\S+:\d+[,:]$|^In function |^.*: In (?:member )?function .*:$|^.*: In instantiation of ")
# lines that end a diagnostic's own block: the next diagnostic, ninja's and make's progress
_BOUNDARY = re.compile(r"^(?:\[\d+/\d+\] |FAILED: |ninja: |make(?:\[\d+\])?: |kernel-builder: |\S+ error: |error: )")
_CONTEXT_LINES = 8


@attrs.frozen
class Diagnostic:
    """One compiler message: where (``file``/``line``/``column`` when the tool says), what,
    and ``context``, the lines the compiler printed with it (include chain, excerpt, caret)."""

    severity: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    context: tuple[str, ...] = ()

    @property
    def location(self) -> str:
        """``file:line[:column]``, or ``""`` for an unlocated message."""
        if self.file is None:
            return ""
        return ":".join(str(part) for part in (self.file, self.line, self.column) if part is not None)


@attrs.frozen
class LogSummary:
    """What a build log says: its first error (``None``: no compiler error in it), how many
    errors and warnings the compilers reported."""

    first_error: Diagnostic | None
    errors: int
    warnings: int


def _match(line: str) -> Diagnostic | None:
    for pattern in (_GCC, _EDG):
        found = pattern.match(line)
        if found:
            sev = found["sev"].replace("catastrophic error", "fatal error")
            col = found.groupdict().get("col")
            return Diagnostic(sev, found["msg"].strip(), found["file"].strip(), int(found["line"]), int(col) if col else None)
    found = _PLAIN.match(line)
    if found is None:
        return None
    if found["nvcc"]:
        return Diagnostic("fatal error" if found["nvcc"] == "fatal" else "error", found["nmsg"].strip())
    if found["ld"]:
        return Diagnostic("error", f"{found['ld']}: {found['lmsg'].strip()}")
    if found["undef"]:
        return Diagnostic("error", found["undef"].strip())
    if found["cline"]:
        return Diagnostic("error", line.strip(), found["cfile"], int(found["cline"]))
    return Diagnostic("error", line.strip())


def _context(lines: Sequence[str], index: int) -> tuple[str, ...]:
    """The include chain just before ``lines[index]`` and the excerpt after it."""
    start = index
    while start > 0 and _CHAIN.match(lines[start - 1]) and index - start < _CONTEXT_LINES:
        start -= 1
    after = []
    for line in lines[index + 1 : index + 1 + _CONTEXT_LINES]:
        if not line.strip() or _match(line) is not None or _BOUNDARY.match(line) or _CHAIN.match(line):
            break
        after.append(line)
    return (*lines[start:index], lines[index], *after)


def summarize(lines: Iterable[str]) -> LogSummary:
    """Read a whole build log: the first error with its context, and the error/warning counts."""
    lines = [line.rstrip("\n") for line in lines]
    first: Diagnostic | None = None
    errors = warnings = 0
    for index, line in enumerate(lines):
        found = _match(line)
        if found is None:
            continue
        if found.severity == "warning":
            warnings += 1
            continue
        errors += 1
        if first is None:
            first = attrs.evolve(found, context=_context(lines, index))
    return LogSummary(first, errors, warnings)
