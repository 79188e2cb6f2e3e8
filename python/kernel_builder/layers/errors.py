"""Errors raised by the layer API.

They are ``KernelBuilderError``s (so the CLI can report them with a hint) and also the
builtin type a caller of the reference API would catch (``ValueError`` for mapping and
kernelize problems, ``TypeError`` for a kernel layer that fails validation).
"""

from __future__ import annotations

from kernel_builder.errors import KernelBuilderError, LoadError

__all__ = ["LayerError", "ModeError", "SelectorError", "LayerValidationError", "MarkingError"]


class LayerError(LoadError, ValueError):
    """A mapping, device or kernelize request cannot be satisfied."""


class ModeError(LayerError):
    """An invalid ``Mode`` combination, or a mode ``kernelize`` does not accept."""


class SelectorError(LayerError):
    """A layer selector raised or returned something other than ``(repository, Mode)`` or ``None``."""


class LayerValidationError(LoadError, TypeError):
    """A kernel layer cannot stand in for the layer it should replace."""


class MarkingError(KernelBuilderError, TypeError):
    """``use_kernel_forward_from_hub`` was applied to something that is neither class nor function."""
