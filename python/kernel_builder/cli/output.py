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

import importlib.util
import json
import sys
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


def install_logging() -> None:
    """Show the library's info and warning records on the console (once per process).

    Importing logging costs a small command a fifth of its start-up, and most commands log
    nothing: until something imports logging, an import hook waits for it and adds the
    handler right after logging has loaded, before any module can log through it."""
    if "logging" in sys.modules:
        _add_handler()
    elif not any(isinstance(finder, _AfterLoggingLoads) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterLoggingLoads())


def _add_handler() -> None:
    from kernel_builder.cli import logrecords  # lazy: it imports logging (see install_logging)

    logrecords.install()


class _AfterLoggingLoads:
    """Import hook (``sys.meta_path``) for ``logging`` alone: the ordinary finders find it,
    and its loader is wrapped so that the console handler is added once it has run."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "logging":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenAddHandler(spec.loader)
        return spec


class _ThenAddHandler:
    """A module loader that runs ``loader`` and then adds the console handler."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:  # get_source and the rest: the real loader's
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        _add_handler()


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
