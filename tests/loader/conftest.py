"""Every loader test starts without the kernel modules earlier tests imported.

The trees of ``loader_trees`` derive a kernel's ``id`` from its name, variant and version,
so tests write the same ids into different directories. An ``id`` names one build: loaded
twice in one process, the second tree is the module already imported (or a conflict), as
in PyPI ``kernels``. Each test here stands for a fresh process instead.
"""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(autouse=True)
def _forget_kernel_modules():
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("_") and not name.startswith("__"):
            sys.modules.pop(name, None)
