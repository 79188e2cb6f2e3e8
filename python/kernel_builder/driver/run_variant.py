"""Build one variant from the command line: what each Nix derivation executes.

    python -m kernel_builder.driver.run_variant --source SRC --variant NAME --out OUT \\
        --toolchain-python PY [--unique-id ID] [--kernel-commit SHA [--kernel-dirty]] \\
        [--prebuilt-module LINKED] [--build-layout files|zip]

Writes ``OUT/<variant>/`` complete (files, ``metadata.json`` with digest) after the checks
pass; exits 1 with the error on stderr otherwise. Kept on argparse so it starts fast and
needs nothing beyond the package itself. The options and the environment variables it reads
are ``driver.job``'s: it makes the ``VariantJob`` and hands it to ``build_variant``.
"""

from __future__ import annotations

import logging
import sys

from kernel_builder.errors import KernelBuilderError
from kernel_builder.driver.job import VariantJob, parse
from kernel_builder.driver.variant import build_variant, read_build

__all__ = ["main"]


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
    try:
        job = parse("run_variant", argv)
        assert isinstance(job, VariantJob)
        _show_log()
        result = build_variant(job, build=read_build(job))
    except KernelBuilderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(result.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
