"""The CPU backend: C and C++ sources compiled by the host compiler, no architectures,
nothing of its own in the generated CMake project (every answer is ``BackendModule``'s)."""

from __future__ import annotations

from kernel_builder.backends.base import BackendModule

__all__ = ["BACKEND"]

BACKEND = BackendModule("cpu")
