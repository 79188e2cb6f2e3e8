"""``kernel-builder check``: check an existing build tree."""

from __future__ import annotations

import json
import sys

import click

from kernel_builder.cli import output

__all__ = ["check"]


@click.command("check")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--python",
    "python",
    metavar="PY",
    help="Python with torch for the import check (default: the toolchain each variant was built "
    "with: the pinned store Python, else the recorded host one, else this one). Variants its torch cannot load are noted, not failed.",
)
@click.option("--no-import", is_flag=True, help="Skip the import check.")
@click.option("--strict-manylinux", is_flag=True, help="Fail (instead of warn) on manylinux_2_28 symbol violations.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per variant on stdout.")
def check(directory: str, python: str | None, no_import: bool, strict_manylinux: bool, as_json: bool) -> None:
    """Check every variant of a built tree: layout, metadata, digests, ABI, ops, import.

    DIRECTORY is a kernel directory (its result/ or build/ is used) or a build tree;
    it defaults to the current directory. Exits 8 listing every failing check; with
    --json every variant, failing ones too, is one object with "ok" and "errors".

    \b
    Example:
      kernel-builder check examples/relu
    """
    # lazy: the tree checks and the toolchain records are for a check, not for `check --help`
    from kernel_builder.toolchain.host.discover import load_toolchains, python_for_variant
    from kernel_builder.toolchain.pinned.store import pinned_pythons  # lazy: as above
    from kernel_builder.tree.checks import check_tree, failed_tree_error  # lazy: as above

    if no_import:
        interpreter = None
    elif python:
        interpreter = python
    else:
        pinned, record = pinned_pythons(), load_toolchains()
        host = record.pythons() if record else None

        def interpreter(variant: str) -> str:
            return python_for_variant(variant, pinned) or python_for_variant(variant, host) or sys.executable

    reports = check_tree(directory, python=interpreter, strict_manylinux=strict_manylinux)
    for report in reports:
        for warning in report.warnings:
            output.warn(f"{report.variant}: {warning}")
        for note in report.notes:
            output.note(f"note: {report.variant}: {note}")
        if as_json:
            output.result(json.dumps({
                "variant": report.variant, "ok": report.ok, "errors": list(report.errors),
                "warnings": list(report.warnings), "notes": list(report.notes),
            }))
        elif report.ok:
            output.result(f"ok {report.variant}")
        else:
            output.result(f"FAILED {report.variant}")
    error = failed_tree_error(reports)
    if error is not None:
        raise error
