"""The console handler for the library's log records (``output.install_logging`` adds it).

A module of its own, since defining a ``logging.Handler`` imports logging, which a command
that logs nothing never needs.
"""

from __future__ import annotations

import logging

from kernel_builder.cli import output

__all__ = ["install"]


class _ConsoleHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a malformed log call must not end the command
            self.handleError(record)
            return
        if record.levelno >= logging.ERROR:
            output.error(text)
        elif record.levelno >= logging.WARNING:
            output.warn(text)
        else:
            output.note(text)


def install() -> None:
    """Route ``kernel_builder.*`` records at info and above to the console, once per process."""
    logger = logging.getLogger("kernel_builder")
    if not any(isinstance(h, _ConsoleHandler) for h in logger.handlers):
        logger.addHandler(_ConsoleHandler())
    logger.setLevel(logging.INFO)
