"""The ``kernel-builder`` command line.

Commands are registered by name and imported only when they run, so ``--help`` and
``--version`` never import torch or huggingface_hub. Each command lives in its own module
under ``kernel_builder.cli`` and stays thin: it parses options and calls library code.
"""

from __future__ import annotations

import errno
import gc
import importlib
import os
import sys
from types import ModuleType

import click

from kernel_builder import __version__
from kernel_builder.cli import output
from kernel_builder.errors import KernelBuilderError

__all__ = ["main", "cli"]

# name -> (module, attribute, one-line help shown in the command list)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "check-config": ("kernel_builder.cli.config", "check_config", "Validate build.toml and print a summary."),
    "update-build": ("kernel_builder.cli.config", "update_build", "Rewrite build.toml as edition 5, keeping comments."),
    "list-variants": ("kernel_builder.cli.variants", "list_variants", "List the build variants of a kernel."),
    "hash": ("kernel_builder.cli.hash", "hash_cmd", "Write digests into every variant's metadata.json."),
    "check": ("kernel_builder.cli.check", "check", "Check a built tree: layout, metadata, digests, ABI."),
    "build": ("kernel_builder.cli.build", "build", "Build variants with Nix (or --local) into DIR/build."),
    "build-and-upload": ("kernel_builder.cli.build_and_upload", "build_and_upload", "Build the variants, then upload them (build + upload)."),
    "devshell": ("kernel_builder.cli.shell", "devshell", "Enter a variant's build toolchain (nix develop)."),
    "testshell": ("kernel_builder.cli.shell", "testshell", "Enter a shell with a built variant importable and pytest."),
    "test": ("kernel_builder.cli.test", "test", "Run the kernel's tests/ against its variants in the Nix sandbox."),
    "cache": ("kernel_builder.cli.cache", "cache", "Sign and push built variants to a Nix binary cache."),
    "init": ("kernel_builder.cli.init", "init", "Scaffold a new kernel project."),
    "create-pyproject": ("kernel_builder.cli.pyproject", "create_pyproject", "Write pyproject.toml + CMake project: build the kernel with pip, no Nix."),
    "clean-pyproject": ("kernel_builder.cli.pyproject", "clean_pyproject", "Delete exactly the files create-pyproject wrote."),
    "toolchain": ("kernel_builder.cli.toolchain", "toolchain", "Fetch or lock the pinned toolchains; discover or set up host ones."),
    "upload": ("kernel_builder.cli.upload", "upload", "Publish built variants to the Hugging Face Hub."),
    "info": ("kernel_builder.cli.loader", "info", "Show a kernel's metadata (Hub repo or local path)."),
    "describe-api": ("kernel_builder.cli.loader", "describe_api", "List a kernel's public functions and layers (symbols.json)."),
    "variants": ("kernel_builder.cli.loader", "variants", "List a kernel's build variants and which ones this machine loads."),
    "versions": ("kernel_builder.cli.loader", "versions", "List a repo's versions and which variant this machine loads."),
    "lock": ("kernel_builder.cli.loader", "lock", "Write kernels.lock for a project's kernel dependencies."),
    "download": ("kernel_builder.cli.loader", "download", "Download the locked kernels of a project."),
    "downloads": ("kernel_builder.cli.downloads", "downloads", "Inspect the kernels downloaded from the Hub (kernels' `cache ls`)."),
    "lock-kernel-deps": ("kernel_builder.cli.kernel_deps", "lock_kernel_deps", "Lock build.toml's kernel-depends (commits + Nix hashes) into kernels.lock."),
    "benchmark": ("kernel_builder.cli.benchmark", "benchmark", "Time a kernel's benchmarks/ scripts on this machine (submits nowhere)."),
    "verify-signature": ("kernel_builder.cli.signature", "verify_signature_cmd", "Verify a kernel's Sigstore signature and its files' digest."),
}


_PLACE_ERRORS = {
    errno.EROFS: "the file system is read-only: choose a writable place (a copy of the directory, another --out; KERNEL_BUILDER_STATE_DIR for kernel-builder's state)",
    errno.EACCES: "permission denied: make the directory writable for this user, or work on a copy",
    errno.EPERM: "operation not permitted: make the directory writable for this user, or work on a copy",
    errno.ENOSPC: "the disk is full: free space (for example `nix-store --gc`) and run again",
    errno.EDQUOT: "the disk quota is exceeded: free space and run again",
}

# Set by ``main()`` when this process is the kernel-builder program itself (see _import_command).
_freeze_imports = False


def _import_command(module: str) -> ModuleType:
    """Import a command's module. The import makes thousands of objects that live as long as
    the process (classes, functions) and next to no garbage, so the cyclic collector is paused
    during it. In the kernel-builder process everything made so far is then frozen
    (``gc.freeze``): no later collection walks it again, those at exit included, which would
    take longer than ``list-variants`` itself. A program that runs the group in-process keeps
    its collector as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        loaded = importlib.import_module(module)
    finally:
        if enabled:
            gc.enable()
    if _freeze_imports:
        gc.freeze()
    return loaded


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        module, attr, _ = entry
        return getattr(_import_command(module), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kernel-builder")
@click.option("--traceback", is_flag=True, envvar="KERNEL_BUILDER_TRACEBACK", help="Show the full traceback on errors.")
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """Build, check, publish and load PyTorch compute kernels.

    A kernel is described by build.toml. kernel-builder validates it, computes every
    torch x backend x ABI variant, builds each in a Nix derivation into build/<variant>/,
    publishes the tree to the Hugging Face Hub and loads the right variant for a machine.
    """
    ctx.ensure_object(dict)
    ctx.obj["traceback"] = traceback
    output.install_logging()


def _traceback_wanted(argv: list[str]) -> bool:
    """``--traceback`` before the command, or ``$KERNEL_BUILDER_TRACEBACK`` set to a true value
    (the values Click accepts for the flag)."""
    env = os.environ.get("KERNEL_BUILDER_TRACEBACK", "").strip().lower()
    return "--traceback" in argv or env in ("1", "true", "t", "yes", "y", "on")


def main(argv: list[str] | None = None) -> None:
    """Console entry point: the one place user-facing errors are caught. Without ``argv`` it
    runs as the kernel-builder program (arguments from ``sys.argv``)."""
    global _freeze_imports
    _freeze_imports = argv is None
    try:
        cli.main(args=argv, prog_name="kernel-builder", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KernelBuilderError as exc:
        if _traceback_wanted(argv if argv is not None else sys.argv[1:]):
            raise
        output.error(str(exc))
        sys.exit(exc.exit_code)
    except OSError as exc:
        # A place that cannot be written (read-only mount, permissions, full disk) that no
        # command checked first: name it, no traceback.
        if exc.errno not in _PLACE_ERRORS or _traceback_wanted(argv if argv is not None else sys.argv[1:]):
            raise
        where = exc.filename or "a file"
        output.error(f"cannot write {where}: {exc.strerror}\nhint: {_PLACE_ERRORS[exc.errno]}")
        sys.exit(1)
