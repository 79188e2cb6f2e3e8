"""The Metal backend: Objective-C++ (``.mm``) sources and ``.metal`` shaders, compiled by
the Metal toolchain on macOS."""

from __future__ import annotations

from kernel_builder.backends.base import BackendModule

__all__ = ["BACKEND"]

BACKEND = BackendModule("metal", cmake_switches=frozenset({"metal"}))
