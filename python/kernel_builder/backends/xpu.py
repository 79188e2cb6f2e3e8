"""The XPU backend: SYCL sources (``sycl-flags``), linked with ``-fsycl``."""

from __future__ import annotations

from kernel_builder.backends.base import BackendModule

__all__ = ["BACKEND"]

BACKEND = BackendModule("xpu", cmake_switches=frozenset({"xpu"}))
