"""``kernel-builder devshell`` and ``testshell``: ``nix develop`` on a kernel flake's shells.

``devshell`` enters a variant's build environment (its toolchain: compiler, nvcc, the
toolchain Python), ``testshell`` its test shell (the built variant importable, pytest on
PATH). Both pass the arguments that select this builder and toolchain, so they behave like
``build`` and ``test``; ``--command`` runs one command instead of an interactive shell.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

from kernel_builder.cli import output
from kernel_builder.errors import ConfigError

__all__ = ["devshell", "testshell"]


def _shell(directory: Path, variant: str | None, kind: str, command: str | None) -> None:
    from kernel_builder.flake.kernel import Kernel  # lazy: config reader and nix are not needed for --help
    from kernel_builder import nix
    from kernel_builder.flake import flake_build  # lazy: as Kernel
    from kernel_builder.flake.selection import select_variants  # lazy: as Kernel
    from kernel_builder.variants.buildsets import current_system  # lazy: as Kernel

    kernel_dir = directory.resolve()
    kernel = Kernel.read(kernel_dir)  # the one read of build.toml
    if not (kernel_dir / "flake.nix").is_file():
        raise ConfigError(f"{kernel_dir / 'flake.nix'} does not exist", hint="`kernel-builder init` writes one")
    flake = flake_build.open_kernel_flake(kernel)
    if variant is not None:
        select_variants(flake.table, [variant], [])  # unknown or unbuildable: a clear error
    system_name = current_system()
    if kind == "dev":
        attr = f"devShells.{system_name}.{variant or 'default'}"
    else:
        attr = f"testShells.{variant}" if variant else f"devShells.{system_name}.test"
    argv = nix.nix_argv("develop", *flake.prepared.flake_args, flake.prepared.installable(attr))
    if command:
        argv += ["--command", "bash", "-c", command]
    output.note(f"nix develop {flake.prepared.installable(attr)}")
    done = subprocess.run(argv, cwd=kernel_dir, env=nix.nix_env(sandbox=True), check=False)
    if done.returncode != 0:
        sys.exit(done.returncode)


_ARGS = [
    click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path)),
    click.option("--variant", metavar="NAME", help="The variant (default: the first buildable one)."),
    click.option("--command", "-c", "command", metavar="CMD", help="Run CMD (a bash command line) in the shell instead of an interactive shell."),
]


def _with_args(fn):
    for decorator in reversed(_ARGS):
        fn = decorator(fn)
    return fn


@click.command("devshell")
@_with_args
def devshell(directory: Path, variant: str | None, command: str | None) -> None:
    """A shell with a variant's build toolchain (nix develop on devShells.<sys>.<variant>).

    \b
    Examples:
      kernel-builder devshell
      kernel-builder devshell . --variant torch214-cxx11-cu130-x86_64-linux -c "nvcc --version"
    """
    _shell(directory, variant, "dev", command)


@click.command("testshell")
@_with_args
def testshell(directory: Path, variant: str | None, command: str | None) -> None:
    """A shell with a built variant importable and pytest on PATH (devShells.<sys>.test).

    \b
    Examples:
      kernel-builder testshell
      kernel-builder testshell . --variant torch214-cxx11-cpu-x86_64-linux -c "pytest tests"
    """
    _shell(directory, variant, "test", command)
