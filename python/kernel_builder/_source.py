"""Where kernel-builder's own files are: ``flake.nix``, the Nix library under ``nix/``
(with ``build-sets.json`` and ``toolchain-lock.json``) and this Python package.

Three layouts, checked in this order:

- ``$KERNEL_BUILDER_ROOT``: a checkout (or snapshot of one) named explicitly;
- an installed wheel: ``setup.py`` copies ``flake.nix`` and ``nix/`` into the package as
  ``kernel_builder/_flake/``;
- a checkout this package is imported from (``pip install -e python/``): ``<root>/python/kernel_builder``.

Everything that reads one of these files asks this module, so a wheel works without a checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["BuilderSource", "ROOT_ENV_VAR", "builder_source", "nix_data_file", "nix_dir"]

ROOT_ENV_VAR = "KERNEL_BUILDER_ROOT"
PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED = "_flake"  # the package-data folder holding flake.nix and nix/ in a wheel


class BuilderSource:
    """The directory holding ``flake.nix`` + ``nix/``, and the ``kernel_builder`` package dir."""

    __slots__ = ("flake_dir", "package_dir", "kind")

    def __init__(self, flake_dir: Path, package_dir: Path, kind: str) -> None:
        self.flake_dir = flake_dir
        self.package_dir = package_dir
        self.kind = kind  # "env", "installed" or "checkout"

    def __repr__(self) -> str:
        return f"BuilderSource({str(self.flake_dir)!r}, {str(self.package_dir)!r}, {self.kind!r})"

    @property
    def complete(self) -> bool:
        return (self.flake_dir / "flake.nix").is_file() and (self.flake_dir / "nix" / "lib").is_dir()

    def files(self) -> list[tuple[str, Path]]:
        """(path in a checkout layout, file) for flake.nix, nix/ and python/kernel_builder/:
        what a flake input made from this source holds, the same for every layout."""
        files = [("flake.nix", self.flake_dir / "flake.nix")]
        files += _walk(self.flake_dir / "nix", "nix")
        files += _walk(self.package_dir, "python/kernel_builder", skip_top=(BUNDLED,))
        return files


def _walk(base: Path, prefix: str, skip_top: tuple[str, ...] = ()) -> list[tuple[str, Path]]:
    """The files under ``base`` a flake input copies, by the file-set rule
    (``_files.walk_inside``): a link out of ``base``, a FIFO or a link loop is a ``ConfigError``
    naming it, since the copy would carry a host file into the store (or block)."""
    from kernel_builder._files import UnsafeFile, walk_inside  # lazy: only a build copies the source
    from kernel_builder.errors import ConfigError  # lazy: as above

    def skip(name: str) -> bool:
        return name == "__pycache__" or name.endswith(".egg-info")

    out: list[tuple[str, Path]] = []
    try:
        for rel, path, _ in walk_inside(base, base, what="kernel-builder's source directory", skip_dir=skip):
            top, _, rest = rel.partition("/")
            if (rest and top in skip_top) or path.name.endswith((".pyc", ".tmp")):
                continue
            out.append((f"{prefix}/{rel}", path))
    except UnsafeFile as exc:
        raise ConfigError(
            f"{exc.path} {exc.reason}",
            hint="kernel-builder's own source is copied into the Nix store for every build: remove the link or special file",
        ) from None
    return out


def builder_source() -> BuilderSource:
    """The source of this kernel-builder (see the module docstring for the order)."""
    explicit = os.environ.get(ROOT_ENV_VAR)
    if explicit:
        root = Path(explicit).absolute()
        return BuilderSource(root, root / "python" / "kernel_builder", "env")
    bundled = PACKAGE_DIR / BUNDLED
    if (bundled / "flake.nix").is_file():
        return BuilderSource(bundled, PACKAGE_DIR, "installed")
    return BuilderSource(PACKAGE_DIR.parents[1], PACKAGE_DIR, "checkout")


def nix_dir() -> Path:
    """kernel-builder's ``nix/`` directory (build sets, toolchain lock, Nix library)."""
    return builder_source().flake_dir / "nix"


def nix_data_file(name: str, env_var: str) -> Path:
    """``$env_var`` when set, else ``nix/<name>`` of this kernel-builder (build-sets.json,
    toolchain-lock.json)."""
    override = os.environ.get(env_var)
    return Path(override) if override else nix_dir() / name
