"""Where the tests find the torch 2.14.1 (CUDA 13.0) toolchain.

`.ci/setup` creates it with `kernel-builder toolchain setup` and records it in
toolchains.json; `KERNEL_BUILDER_TORCH214_PYTHON` overrides. A missing toolchain fails the
test loudly: the CUDA compile needs no GPU, so it is never skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernel_builder.toolchain.host.discover import build_set_key, load_toolchains
from kernel_builder.state import state_dir

ENV_VAR = "KERNEL_BUILDER_TORCH214_PYTHON"


def torch214_python() -> str:
    explicit = os.environ.get(ENV_VAR)
    if explicit and Path(explicit).is_file():
        return explicit
    # Tests often point KERNEL_BUILDER_STATE_DIR at a temporary state; the toolchain that
    # `.ci/setup` made lives in the default one.
    default_state = Path.home() / ".local" / "state" / "kernel-builder"
    for state in (state_dir(), default_state):
        record = load_toolchains(state=state)
        recorded = record.pythons().get(build_set_key("2.14", "cuda", "13.0")) if record else None
        for candidate in (recorded, str(state / "envs" / "torch214" / "bin" / "python")):
            if candidate and Path(candidate).is_file():
                return candidate
    pytest.fail(
        "no torch 2.14.1 toolchain: run `bash .ci/setup` (it runs `kernel-builder toolchain setup`), "
        f"or point {ENV_VAR} at a Python with torch==2.14.1, cmake>=3.26 and ninja",
        pytrace=False,
    )
