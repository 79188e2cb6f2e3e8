"""The command line's one output path (cli/output.py): results on stdout, the library's log
records on stderr, exactly once, and live progress that never collides with a fetch bar."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from kernel_builder.cli import build, output
from kernel_builder.flake.flake_build import VariantRow

REPO = Path(__file__).resolve().parents[2]

V4 = """\
[general]
name = "relu"
version = 1
license = "Apache-2.0"
backends = ["cpu"]

[torch]
src = []
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, timeout=120)


def test_a_library_warning_reaches_stderr_once_and_never_stdout(tmp_path: Path) -> None:
    (tmp_path / "build.toml").write_text(V4)  # config.load logs the v4 upgrade warning
    done = run("list-variants", "--json", "--system", "x86_64-linux", str(tmp_path))
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "legacy v4 format" in warnings[0]
    assert done.stdout.lstrip().startswith("[") and "warning" not in done.stdout


# Modules list-variants must not import (benchmarks/cli_startup.py measures what it costs to
# start): the heavy ones, the writer's (cattrs, tomlkit: only for dumping and update-build),
# tempfile (only _files.write_atomic writes), the dependency registry (only for a kernel
# with python-depends; examples/relu has none) and logging (only when something logs: relu
# reads without a warning).
NOT_FOR_LIST_VARIANTS = (
    "rich", "torch", "huggingface_hub", "cattrs", "tomlkit", "tempfile", "kernel_builder.config.registry", "logging",
)


def test_list_variants_imports_neither_rich_nor_torch_nor_the_hub() -> None:
    probe = (
        "import sys\n"
        "from kernel_builder.cli import main\n"
        f"main(['list-variants', '--json', {str(REPO / 'examples' / 'relu')!r}])\n"
        f"print(sorted(m for m in {NOT_FOR_LIST_VARIANTS!r} if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_live_progress_starts_after_a_fetch_bar_and_notes_land_above_it(monkeypatch) -> None:
    console = Console(stderr=True, force_terminal=True, soft_wrap=True, record=True, width=100)
    monkeypatch.setattr(output, "_console", console)
    bar = output.progress_bar("fetch")
    with build._Progress(["torch-cpu", "torch-cuda"], stream_logs=False) as progress:
        for done in range(1, 4):  # a live bar while the table is open would raise rich's LiveError
            bar("artifact", done, 3)
        row = VariantRow("torch-cpu", status="building", started=time.monotonic())
        progress.changed(row, "building torch-cpu")
        output.warn("cannot build on ssh://b: refused")
        row.status = "built"
        progress.changed(row, "built torch-cpu")
    text = console.export_text()
    assert "warning: cannot build on ssh://b: refused" in text
    assert "torch-cuda" in text and "queued" in text


def test_a_build_log_repeats_no_build_toml_warning(tmp_path: Path) -> None:
    """The front end says the v4 warning once per command; a variant's build log (what
    run_variant prints inside each derivation) does not say it again."""
    kernel = tmp_path / "vk"
    (kernel / "torch-ext" / "vk").mkdir(parents=True)
    (kernel / "torch-ext" / "vk" / "__init__.py").write_text("")
    (kernel / "build.toml").write_text(V4.replace('"relu"', '"vk"'))
    done = subprocess.run(
        [sys.executable, "-m", "kernel_builder.driver.run_variant", "--source", str(kernel), "--variant", "torch-cpu",
         "--out", str(tmp_path / "out"), "--toolchain-python", sys.executable],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "built torch-cpu" in done.stderr and "legacy v4" not in done.stderr
    checked = run("check-config", str(kernel))
    assert checked.returncode == 0, checked.stderr
    assert checked.stderr.count("legacy v4 format") == 1
