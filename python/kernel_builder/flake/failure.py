"""Why a variant's derivation failed, read from its whole build log.

``explain`` turns the log of a failed variant into what a kernel author acts on: the first
compiler error with its context (``driver.diagnostics``), or the module a failed import
check could not find with how to declare it, or the driver's own error message; the
warnings are counted, not shown. ``nothing_buildable`` is the command's error when no
variant of a kernel can be built on this machine: what each variant lacks here, and which
build sets would build the kernel, on which systems. Pure: the command line prints the results.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence

import attrs

from kernel_builder.backends import spec
from kernel_builder.config.registry import registry
from kernel_builder.driver.diagnostics import summarize
from kernel_builder.errors import BuildError
from kernel_builder.flake.variant_table import VariantEntry
from kernel_builder.tree.checks import missing_module
from kernel_builder.variants.matrix import MatrixVariant

__all__ = ["Failure", "FailureKind", "explain", "nothing_buildable", "python_depends_hint"]

_TAIL = 25
_DRIVER_ERROR = re.compile(r"^error: ")


class FailureKind(str, enum.Enum):
    COMPILE = "compile error"
    IMPORT = "import check"
    DRIVER = "build error"
    UNKNOWN = "failed"

    def __str__(self) -> str:
        return self.value


@attrs.frozen
class Failure:
    """What went wrong: ``kind``, the lines to show, a hint, and the log's counts."""

    kind: FailureKind
    lines: tuple[str, ...]
    hint: str | None = None
    errors: int = 0
    warnings: int = 0
    module: str | None = None  # the module an import could not find


def _driver_error(log: Sequence[str]) -> tuple[str, ...]:
    """The driver's last ``error: ...`` message (``run_variant`` prints it last), without
    its ``hint:`` line (the caller gives a hint that fits)."""
    starts = [i for i, line in enumerate(log) if _DRIVER_ERROR.match(line)]
    if not starts:
        return ()
    block = [line for line in log[starts[-1]:] if not line.startswith("hint: ")]
    return tuple(block[:_TAIL])


# The copy of the kernel's sources a variant build compiles (driver.scratch): paths in
# compiler messages are shown relative to the kernel directory instead.
_SCRATCH_SRC = re.compile(r"/\S*?/kernel-builder/[^/\s]+-[0-9a-f]{8,}/src/")
# A traceback frame in the variant being imported (its staging directory, or its final one).
_FRAME = re.compile(r'^\s*File "[^"]*?/(?:\.[^/"]+\.tmp|torch[^/"]*)/(?P<file>[^"]+)", line (?P<line>\d+)')


def _import_site(log: Sequence[str]) -> tuple[str, ...]:
    """Where in the variant's Python files the failed import is: ``  at FILE:LINE: CODE``."""
    for index in range(len(log) - 1, -1, -1):
        found = _FRAME.match(log[index])
        if found:
            code = log[index + 1].strip() if index + 1 < len(log) else ""
            return (f"  at {found['file']}:{found['line']}: {code}",)
    return ()


def python_depends_hint(module: str) -> str:
    """How to declare the Python package that provides ``module`` (``python-depends``)."""
    reg = registry()
    scopes = [(None, reg.general)] + [(backend, names) for backend, names in reg.backends.items()]
    for backend, names in scopes:
        for name, dependency in names.items():
            if any(package.import_name == module for package in dependency.python):
                table = "[general]" if backend is None else f"[general.{backend.value}]"
                return f'declare it in build.toml: python-depends = ["{name}"] in {table} (docs/build-toml.md)'
    return (
        f"if {module!r} is a Python package, declare it in build.toml's python-depends (docs/build-toml.md; "
        f"only packages in kernel_builder/data/python_dependencies.json can be declared); if it is part of "
        "the kernel, check that its file is listed in the kernel's Python sources"
    )


def explain(log: Sequence[str]) -> Failure:
    """Read a failed variant's whole log."""
    summary = summarize(log)
    if summary.first_error is not None:
        lines = tuple(_SCRATCH_SRC.sub("", line) for line in summary.first_error.context)
        return Failure(FailureKind.COMPILE, lines, "fix the first error; the others often follow from it",
                       summary.errors, summary.warnings)
    driver = _driver_error(log)
    module = missing_module(driver or log)
    if module is not None:
        last = next((line.strip() for line in reversed(driver or log) if "No module named" in line), "")
        lines = (f"the variant imports module {module!r}, which the toolchain Python does not have", *_import_site(driver or log), f"  {last}")
        return Failure(FailureKind.IMPORT, lines, python_depends_hint(module), module=module, warnings=summary.warnings)
    if driver:
        return Failure(FailureKind.DRIVER, driver, warnings=summary.warnings)
    return Failure(FailureKind.UNKNOWN, tuple(log[-_TAIL:]), warnings=summary.warnings)


def nothing_buildable(
    kernel: str, system: str, table: Sequence[VariantEntry], elsewhere: Sequence[MatrixVariant]
) -> BuildError:
    """The error of a build with nothing to build on ``system``: each of the kernel's variants
    here with the reason it cannot be built (the variant table's), and ``elsewhere``, the
    kernel's variants on other systems with their build sets. Nothing was attempted, so no
    hint sends the author to another toolchain here."""
    lines = [f"nothing of kernel {kernel} can be built on {system}; nothing was built"]
    if table:
        lines.append(f"its variants for {system}:")
        lines += [f"  {entry.name} (build set {entry.build_set}): {entry.reason or 'not buildable here'}" for entry in table]
    else:
        lines.append(f"no build set in build-sets.json makes a variant of it for {system}")
    by_system: dict[str, list[MatrixVariant]] = {}
    for variant in elsewhere:
        by_system.setdefault(variant.build_set.system, []).append(variant)
    if by_system:
        lines.append("build sets that would build it:")
        lines += [
            f"  on {other}: " + ", ".join(f"{v.name} (build set {v.build_set.key})" for v in variants)
            for other, variants in sorted(by_system.items())
        ]
        hint = "build it on " + " or ".join(f"an {other} machine" for other in sorted(by_system)) + " with `kernel-builder build`"
    else:
        hint = "no build set builds this kernel anywhere: check [general] backends and the torch bounds in build.toml (`kernel-builder list-variants --explain --system all`)"
    if any(spec(entry.backend).compilable_here for entry in table):
        hint += ("; the variants above that only lack a pinned toolchain build with this machine's own "
                 "(`kernel-builder toolchain setup`, then `build --toolchain host`; not hermetic)")
    return BuildError("\n".join(lines), hint=hint)
