"""The command line's one output path.

Results go to stdout (``result``, ``result_json``), so that they can be piped; everything
a person reads goes to stderr: lines through ``note``, ``warn`` and ``error``, live
progress and tables through the one rich ``console()``. Lines are plain click output until
a command makes the console (so one that only prints lines never imports rich), and go
through the console after that, so that they land above a live display. Library code does not print: it logs to ``kernel_builder.*`` loggers, and
``install_logging`` routes those records here (info as notes, warnings as warnings), so a
message looks the same whichever module says it, and a program using the library gets
plain ``logging`` records instead.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import click

__all__ = ["console", "error", "install_logging", "note", "progress_bar", "result", "result_json", "warn"]

_console: Any = None


def console() -> Any:
    """The stderr console (a ``rich.console.Console``), made on first use."""
    global _console
    if _console is None:
        from rich.console import Console  # lazy: rich costs start-up time that --help and --version never need

        _console = Console(stderr=True, soft_wrap=True)
    return _console


def _line(text: str, color: str | None = None) -> None:
    """One stderr line: through the console once a command made one (so that it lands above
    a live display), else plain click output."""
    if _console is not None:
        from rich.text import Text  # lazy: rich is loaded already, with the console

        _console.print(Text(text, style=color or ""))  # styled text, not a print style: a live display repaints after it
    else:
        click.secho(text, fg=color, err=True)


def note(text: str) -> None:
    """A line for the person at the terminal (stderr), printed as is."""
    _line(text)


def warn(text: str) -> None:
    """``warning: text`` in yellow on stderr."""
    _line(f"warning: {text}", "yellow")


def error(text: str) -> None:
    """``error: text`` in red on stderr (a failure the command goes on after)."""
    _line(f"error: {text}", "red")


def result(text: str = "", *, nl: bool = True) -> None:
    """A line of the command's result (stdout); ``nl=False`` for text that ends itself."""
    click.echo(text, nl=nl)


def result_json(value: Any) -> None:
    """The command's result as indented JSON (stdout)."""
    click.echo(json.dumps(value, indent=2))


class _ConsoleHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a malformed log call must not end the command
            self.handleError(record)
            return
        if record.levelno >= logging.ERROR:
            error(text)
        elif record.levelno >= logging.WARNING:
            warn(text)
        else:
            note(text)


def install_logging() -> None:
    """Show the library's info and warning records on the console (once per process)."""
    logger = logging.getLogger("kernel_builder")
    if not any(isinstance(h, _ConsoleHandler) for h in logger.handlers):
        logger.addHandler(_ConsoleHandler())
    logger.setLevel(logging.INFO)


def progress_bar(label: str) -> Callable[[str, int, int], None]:
    """An ``on_progress(name, done, total)`` callback drawing a transient bar on the console."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # lazy: as console()

    bar = Progress(TextColumn(f"{label} [progress.description]{{task.description}}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console(), transient=True)
    task: list[Any] = []

    def on_progress(name: str, done: int, total: int) -> None:
        if not task:
            if total == 0:
                return
            bar.start()
            task.append(bar.add_task("", total=total))
        bar.update(task[0], completed=done, description=name[:60])
        if done >= total:
            bar.stop()

    return on_progress
