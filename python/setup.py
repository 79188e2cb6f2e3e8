"""Carry kernel-builder's Nix side in the wheel and sdist as package data.

``flake.nix`` and ``nix/`` (the Nix library, ``build-sets.json``, ``toolchain-lock.json``)
live at the checkout root, outside this directory; they are copied into the package as
``kernel_builder/_flake/``, where ``kernel_builder._source`` finds them. An sdist carries
the copy, so a wheel built from it has it too. Editable installs read the checkout.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

CHECKOUT = Path(__file__).resolve().parent.parent
BUNDLED = Path("kernel_builder", "_flake")


def _flake_files() -> list[tuple[Path, Path]]:
    """(path under _flake, source file) from the checkout; empty when building from an sdist."""
    if not (CHECKOUT / "flake.nix").is_file() or not (CHECKOUT / "nix" / "lib").is_dir():
        return []
    files = [(Path("flake.nix"), CHECKOUT / "flake.nix")]
    for path in sorted((CHECKOUT / "nix").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files.append((path.relative_to(CHECKOUT), path))
    return files


def _copy_flake(dest_root: Path) -> None:
    for rel, src in _flake_files():
        dest = dest_root / BUNDLED / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):
            _copy_flake(Path(self.build_lib))


class SDist(sdist):
    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        _copy_flake(Path(base_dir))


setup(cmdclass={"build_py": BuildPy, "sdist": SDist})
