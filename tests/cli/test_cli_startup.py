"""What the kernel-builder process does for its start-up time (cli/__init__.py): a command's
imports are frozen out of the garbage collector in the program itself, and only there; a
command's --help imports its own module, not the library behind it; and the console handler
for log records waits for logging to be imported (cli/output.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

RELU = str(Path(__file__).resolve().parents[2] / "examples" / "relu")


def probe(body: str) -> tuple[list[dict], list[str]]:
    """Run ``body`` in a fresh interpreter; (the JSON it printed, the last stderr line split)."""
    done = subprocess.run([sys.executable, "-c", "import gc, sys\n" + body], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr.strip().splitlines()[-1].split()


def test_the_program_freezes_its_command_imports_and_keeps_collecting() -> None:
    variants, (frozen, enabled) = probe(
        f"sys.argv = ['kernel-builder', 'list-variants', '--json', {RELU!r}]\n"
        "from kernel_builder.cli import main\n"
        "main()\n"
        "print(gc.get_freeze_count(), gc.isenabled(), file=sys.stderr)\n"
    )
    assert variants and all("name" in v for v in variants)
    assert int(frozen) > 1000 and enabled == "True"  # click, attrs and the command's modules


def test_a_program_calling_main_with_arguments_keeps_its_collector_as_it_was() -> None:
    for setting, expected in (("gc.enable()", "True"), ("gc.disable()", "False")):
        variants, (frozen, enabled) = probe(
            f"{setting}\n"
            "from kernel_builder.cli import main\n"
            f"main(['list-variants', '--json', {RELU!r}])\n"
            "print(gc.get_freeze_count(), gc.isenabled(), file=sys.stderr)\n"
        )
        assert variants and frozen == "0" and enabled == expected


# Commands whose --help needs nothing of the library: their modules import the library inside
# the command functions (cli/__init__.py registers every command by name in COMMANDS).
HELP_ONLY = ("check", "hash", "info", "versions", "lock", "download", "toolchain", "toolchain setup", "test", "cache push")


def test_a_commands_help_imports_only_its_cli_module() -> None:
    from kernel_builder.cli import COMMANDS

    for command in HELP_ONLY:
        module = COMMANDS[command.split()[0]][0]
        done = subprocess.run(
            [sys.executable, "-c", (
                "import sys\n"
                "from kernel_builder.cli import main\n"
                "try:\n"
                f"    main({[*command.split(), '--help']!r})\n"
                "except SystemExit:\n"
                "    pass\n"
                "print(' '.join(sorted(m for m in sys.modules if m.startswith('kernel_builder'))), file=sys.stderr)\n"
            )],
            capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "Usage: kernel-builder" in done.stdout
        loaded = set(done.stderr.split())
        assert loaded == {"kernel_builder", "kernel_builder.cli", "kernel_builder.cli.output", "kernel_builder.errors", module}, command


def test_a_module_that_imports_logging_after_the_command_started_still_reaches_the_console() -> None:
    """install_logging waits for logging's import (cli/output.py); records of a module loaded
    later (a command's lazy library import) come out as warning:/note lines, once."""
    done = subprocess.run(
        [sys.executable, "-c", (
            "import sys\n"
            "from kernel_builder.cli import output\n"
            "output.install_logging()\n"
            "output.install_logging()\n"
            "assert 'logging' not in sys.modules\n"
            "import logging\n"
            "logging.getLogger('kernel_builder.late').warning('late %s', 'warning')\n"
            "logging.getLogger('kernel_builder.late').info('a note')\n"
            "logging.getLogger('kernel_builder.late').debug('not shown')\n"
            "assert logging.__loader__.get_source('logging')\n"
        )],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["warning: late warning", "a note"]
