"""Build one variant from the command line: what each Nix derivation executes.

    python -m kernel_builder.driver.run_variant --source SRC --variant NAME --out OUT \\
        --toolchain-python PY [--unique-id ID] [--kernel-commit SHA [--kernel-dirty]] \\
        [--prebuilt-module LINKED] [--build-layout files|zip]

Writes ``OUT/<variant>/`` complete (files, ``metadata.json`` with digest) after the checks
pass; exits 1 with the error on stderr otherwise. Kept on argparse so it starts fast and
needs nothing beyond the package itself.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from kernel_builder.config.loading import read_file
from kernel_builder.config.portability import refuse_host_specific_flags
from kernel_builder.errors import KernelBuilderError
from kernel_builder.driver.cuda_archs import split_capabilities
from kernel_builder.driver.variant import build_variant

__all__ = ["main", "parser"]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m kernel_builder.driver.run_variant",
        description="Build one variant of a kernel into OUT/<variant>/ (generate, compile, lay out, check).",
    )
    p.add_argument("--source", required=True, help="kernel source directory (holds build.toml)")
    p.add_argument("--variant", required=True, help="variant name, e.g. torch213-cxx11-cpu-x86_64-linux or torch-cpu")
    p.add_argument("--out", required=True, help="output directory; the variant is written to OUT/<variant>/")
    p.add_argument("--toolchain-python", required=True, help="Python with the variant's torch, cmake and ninja")
    p.add_argument("--unique-id", help="ops identifier suffix (default: git short rev, else a hash of build.toml)")
    p.add_argument("--kernel-commit", help="kernel source git commit recorded in provenance (40 hex)")
    p.add_argument("--kernel-dirty", action="store_true", help="the kernel source had uncommitted changes")
    p.add_argument("--jobs", type=int, help="parallel compile jobs (default: NIX_BUILD_CORES or CPU count)")
    p.add_argument(
        "--strict-manylinux",
        action="store_true",
        default=os.environ.get("KERNEL_BUILDER_STRICT_MANYLINUX") == "1",
        help="fail (not warn) on manylinux_2_28 violations (default with the pinned toolchain, which sets KERNEL_BUILDER_STRICT_MANYLINUX=1)",
    )
    p.add_argument(
        "--no-import-check",
        action="store_true",
        help="skip importing the built variant (a kernel flake's doGetKernelCheck = false)",
    )
    p.add_argument(
        "--cuda-capabilities",
        default=os.environ.get("KERNEL_BUILDER_CUDA_CAPABILITIES") or None,
        help="comma-separated: build a CUDA variant only for these of its archs (recorded in metadata; "
        "default: $KERNEL_BUILDER_CUDA_CAPABILITIES, which `kernel-builder build --cuda-capabilities` sets)",
    )
    p.add_argument(
        "--prebuilt-module",
        metavar="DIR",
        help="assemble the variant from this link output of the per-object build (module + module.json) "
        "instead of compiling (nix/lib/builders/link.nix)",
    )
    p.add_argument(
        "--build-layout",
        choices=("files", "zip"),
        default=os.environ.get("KERNEL_BUILDER_BUILD_LAYOUT") or None,
        help="files: the variant directory is the package; zip: the package is <id>.zip in it (default: "
        "$KERNEL_BUILDER_BUILD_LAYOUT, which `kernel-builder build --layout` sets, else build.toml's "
        "[general] build-layout, else files)",
    )
    p.add_argument("--keep-scratch", action="store_true", help="keep the generated CMake project and logs")
    p.add_argument("-v", "--verbose", action="store_true", help="stream compiler output to stderr")
    return p


class _Tagged(logging.Formatter):
    """``kernel-builder: [warning: ]message``: the lines the derivation's log shows."""

    def format(self, record: logging.LogRecord) -> str:
        level = "warning: " if record.levelno >= logging.WARNING else ""
        return f"kernel-builder: {level}{record.getMessage()}"


def _not_config_warning(record: logging.LogRecord) -> bool:
    """build.toml's warnings are the front end's to show, once per command; a variant's
    build log (one per variant) repeats none of them."""
    return not (record.name.startswith("kernel_builder.config") and record.levelno == logging.WARNING)


def _show_log() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Tagged())
    handler.addFilter(_not_config_warning)
    logger = logging.getLogger("kernel_builder")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    _show_log()
    if args.kernel_dirty and not args.kernel_commit:
        parser().error("--kernel-dirty needs --kernel-commit")

    try:
        if os.environ.get("toolchainProvider") == "pinned":  # a redistributable variant: nothing host-specific
            build_toml = os.path.join(args.source, "build.toml")
            refuse_host_specific_flags(read_file(build_toml), build_toml)
        result = build_variant(
            args.source,
            args.variant,
            args.out,
            toolchain_python=args.toolchain_python,
            uid=args.unique_id,
            kernel_commit=args.kernel_commit,
            kernel_dirty=args.kernel_dirty,
            jobs=args.jobs,
            verbose=args.verbose,
            keep_scratch=args.keep_scratch,
            strict_manylinux=args.strict_manylinux,
            import_check=not args.no_import_check,
            cuda_capabilities=split_capabilities(args.cuda_capabilities),
            prebuilt_module=args.prebuilt_module,
            build_layout=args.build_layout,
        )
    except KernelBuilderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(result.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
