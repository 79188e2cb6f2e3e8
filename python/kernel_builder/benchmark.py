"""``Benchmark``: the base class of a kernel's ``benchmarks/benchmark*.py`` scripts.

``kernel-builder upload`` publishes those scripts next to the kernel, and runners such as
PyPI ``kernels benchmark`` import them and subclass this class; the names below are the
contract between a script and a runner. A subclass sets up its inputs in ``setup``,
defines ``benchmark_<name>`` methods to time and, optionally, ``verify_<name>`` methods
that return the expected output, which the runner compares with ``self.out``. The runner
fills in ``kernel`` (the loaded kernel module) and ``device`` before calling ``setup``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Benchmark"]


class Benchmark:
    """Subclass per benchmark script; see the module docstring for the methods a runner calls."""

    #: Seed the runner applies before ``setup`` (``None``: do not seed).
    seed: int | None = None
    #: Device type the runner benchmarks on; set by the runner.
    device: str = "cpu"

    def __init__(self) -> None:
        self.kernel: Any = None
        self.out: Any = None

    def setup(self) -> None:
        """Create the inputs (and ``self.out``) as attributes; the default does nothing."""
