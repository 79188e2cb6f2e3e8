"""What the kernel-builder process does for its start-up time (cli/__init__.py): a command's
imports are frozen out of the garbage collector in the program itself, and only there."""

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
