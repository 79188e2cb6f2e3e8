"""``kernel-builder create-pyproject`` / ``clean-pyproject``: a pip project for a kernel, no Nix."""

from __future__ import annotations

from pathlib import Path

import click

from kernel_builder.cli import output

__all__ = ["create_pyproject", "clean_pyproject"]


@click.command("create-pyproject")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--toolchain-python", metavar="PATH", help="The Python whose torch the project is written for and that builds it (default: this one).")
@click.option("--variant", metavar="NAME", help="Write the project for this variant (default: the one the torch builds, a GPU one before cpu).")
@click.option("--backend", "backends", multiple=True, metavar="NAME", help="Choose the variant among this backend's (repeatable).")
@click.option("--force", is_flag=True, help="Overwrite files that create-pyproject did not write, or that were changed since it did.")
@click.option("--no-compile-commands", "no_compile_commands", is_flag=True, help="Do not run CMake to write compile_commands.json.")
def create_pyproject(
    directory: Path,
    toolchain_python: str | None,
    variant: str | None,
    backends: tuple[str, ...],
    force: bool,
    no_compile_commands: bool,
) -> None:
    """Write a pip project into the kernel in DIRECTORY: build it with pip, without Nix.

    For the variant the torch of --toolchain-python builds (as `build --local` picks it),
    writes pyproject.toml, setup.py, CMakeLists.txt and cmake/ (the CMake project that
    `kernel-builder build` generates for the variant, registration.h and _ops.py), and
    compile_commands.json for IDEs (from a CMake configure). `pip wheel .` then builds a
    wheel of torch-ext/<python name> with the compiled module, against the torch installed
    where pip runs; CMake stops with a message when that torch is not the one the project
    was written for. Build with --no-build-isolation to use the torch you have.

    Every file's SHA-256 is recorded in .kernel-builder-pyproject.json, for clean-pyproject.
    A file that exists and was not written by create-pyproject (or was edited since) is
    not overwritten: the command fails naming it, unless --force. Running it again (after
    a torch upgrade) rewrites its own unchanged files.

    \b
    Example (docs/pyproject.md has the whole walk-through):
      kernel-builder create-pyproject my-kernel
      (cd my-kernel && pip wheel --no-build-isolation --no-deps -w dist .)
      (cd my-kernel && pip install --no-build-isolation -e .)   # or editable
      kernel-builder clean-pyproject my-kernel
    """
    from kernel_builder.flake.kernel import Kernel  # lazy: as create
    from kernel_builder.pyproject import create_pyproject as create  # lazy: torch probes and CMake are not for --help

    result = create(
        Kernel.read(directory.resolve()),  # the one read of build.toml
        toolchain_python=toolchain_python,
        variant=variant,
        backends=backends,
        force=force,
        compile_commands=not no_compile_commands,
    )
    for rel in result.written:
        output.result(rel)
    output.note(f"wrote {len(result.written)} file(s) for {result.variant} in {directory}; build with `pip wheel --no-build-isolation .`")


@click.command("clean-pyproject")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="List what would be deleted; delete nothing.")
def clean_pyproject(directory: Path, dry_run: bool) -> None:
    """Delete the files create-pyproject wrote into DIRECTORY, and nothing else.

    Deletes exactly the files recorded in .kernel-builder-pyproject.json, the directories
    create-pyproject made (when empty now) and the record itself. If any recorded file was
    changed since it was written, nothing is deleted and the command fails naming those
    files: keep your edits elsewhere and delete or restore them yourself. What pip made
    (.pyproject-build/, an editable install's module and _ops.py in torch-ext/) is not
    create-pyproject's and stays.

    \b
    Example:
      kernel-builder clean-pyproject --dry-run my-kernel
      kernel-builder clean-pyproject my-kernel
    """
    from kernel_builder.pyproject import clean_pyproject as clean  # lazy: keeps --help to this module

    result = clean(directory, dry_run=dry_run)
    verb = "would delete" if dry_run else "deleted"
    for rel in result.removed:
        output.result(rel)
    for rel in result.missing:
        output.note(f"already gone: {rel}")
    output.note(f"{verb} {len(result.removed)} file(s) and {len(result.dirs)} directory(ies) in {directory}")
