"""Test helper: create the source files and include directories a build.toml lists.

build.toml readers check that `src` files and `include` directories exist inside the
kernel directory, so a test that writes a build.toml by hand adds them with this.
"""

from __future__ import annotations

import tomllib
from pathlib import Path


def add_sources(kernel_dir: Path) -> Path:
    """Touch every `src` file and make every `include` directory of ``kernel_dir/build.toml``."""
    doc = tomllib.loads((kernel_dir / "build.toml").read_text())
    tables = [doc.get(k, {}) for k in ("torch", "tvm-ffi")] + list(doc.get("kernel", {}).values())
    for table in tables:
        if not isinstance(table, dict):
            continue
        for rel in table.get("src", []):
            path = kernel_dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        for rel in table.get("include", None) or []:
            (kernel_dir / rel).mkdir(parents=True, exist_ok=True)
    return kernel_dir
