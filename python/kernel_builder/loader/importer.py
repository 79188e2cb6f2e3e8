"""Import a variant directory as a package named after its metadata ``id``.

An ``id`` names one build: a second variant directory with the ``id`` of a kernel this
loader imported is the same module when it is the same build (equal digests) and a
``KernelConflict`` when not, as in PyPI ``kernels`` 0.19 (a second build executed under the
same id would register its torch ops twice).

A ``files``-layout variant is its own package directory; a ``zip``-layout one (metadata.json
``"build-layout": "zip"``) keeps the package in ``<id>.zip`` beside metadata.json, imported
from the archive as PyPI ``kernels`` 0.19 does. Either way the digest is checked first.

The module name is the build's unique ``id`` (for example ``_relu_cpu_0a1b2c3``), not the
kernel name, so two versions or builds of one kernel live side by side in a process. A
registry keyed by variant path makes repeated loads return the same module object and
backs ``get_loaded_kernels()``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import threading
import warnings
import zipimport
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

import attrs

from kernel_builder.loader.errors import KernelConflict, KernelNotFound
from kernel_builder.loader.kernel_deps import providing
from kernel_builder.loader.safe_import import check_module_id, spec_for, zip_spec_for
from kernel_builder.loader.verify import verify_variant
from kernel_builder.loader.metadata import read_metadata
from kernel_builder.tree.digest import Digest
from kernel_builder.tree.metadata import Metadata

__all__ = ["RepoInfo", "LoadedKernel", "import_variant", "loaded_kernels"]


@attrs.frozen
class RepoInfo:
    """Where a kernel loaded with ``get_kernel`` came from."""

    repo_id: str
    revision: str


@attrs.frozen
class LoadedKernel:
    """A kernel imported into this process; ``repo_info`` is set only by ``get_kernel``."""

    metadata: Metadata
    module: ModuleType
    repo_info: RepoInfo | None


_registry: dict[str, LoadedKernel] = {}
_lock = threading.RLock()


def loaded_kernels() -> list[LoadedKernel]:
    """A new list of every kernel imported so far (changing it changes nothing)."""
    with _lock:
        return list(_registry.values())


def _key(variant_dir: Path) -> str:
    return os.path.abspath(variant_dir)


def _warn_if_dirty(metadata: Metadata, variant_dir: Path) -> None:
    prov = metadata.provenance
    if prov is None:
        return
    sides = []
    if prov.kernel is not None and prov.kernel.dirty:
        sides.append("kernel source")
    builder_git = getattr(prov.kernel_builder, "git", None)
    if builder_git is not None and builder_git.dirty:
        sides.append("kernel-builder")
    if sides:
        warnings.warn(
            f"kernel '{metadata.name}' variant '{variant_dir.name}' was built from a dirty git tree "
            f"({' and '.join(sides)}); it may not match any commit",
            UserWarning,
            stacklevel=4,
        )


def _same_build(variant_dir: Path, metadata: Metadata) -> LoadedKernel | None:
    """The imported kernel with ``metadata.id`` when ``variant_dir`` is the same build, ``None``
    when no kernel of ours has that id; ``KernelConflict`` when it is another build."""
    module = sys.modules.get(metadata.id)
    loaded = next((k for k in _registry.values() if k.module is module), None) if module is not None else None
    if loaded is None:
        return None
    theirs, ours = loaded.metadata.digest, metadata.digest
    if theirs is None and ours is None:
        return loaded  # nothing to compare; the id is the build's promise
    conflict = (
        f"Kernel '{metadata.name}' at `{variant_dir}` has the same id '{metadata.id}' as a kernel that is already "
        "loaded, but it is a different build"
    )
    hint = "was the kernel modified without rebuilding it with kernel-builder? (a rebuild gets a new id)"
    if theirs is None or ours is None:
        side = "this build has a digest, the loaded one does not" if theirs is None else "the loaded build has a digest, this one does not"
        raise KernelConflict(f"{conflict}: {side}.", hint=hint)
    differences = _differences(theirs, ours)
    if differences:
        listing = "\n".join(f"  {d}" for d in differences)
        raise KernelConflict(f"{conflict}. Differences with the loaded build:\n{listing}", hint=hint)
    return loaded


def _differences(loaded: Digest, this: Digest) -> list[str]:
    """How ``this`` build's digest differs from the ``loaded`` one's, file by file."""
    if loaded.algorithm != this.algorithm:
        return [f"digest algorithm {this.algorithm}, the loaded build's is {loaded.algorithm}"]
    out = []
    for rel in sorted(set(loaded.files) | set(this.files)):
        mine, theirs = this.files.get(rel), loaded.files.get(rel)
        if theirs is None:
            out.append(f"{rel}: only in this build")
        elif mine is None:
            out.append(f"{rel}: only in the loaded build")
        elif mine != theirs:
            out.append(f"{rel}: different contents")
    return out


def _entry_point(variant_dir: Path, metadata: Metadata) -> Path:
    for entry in (variant_dir / "__init__.py", variant_dir / metadata.name.replace("-", "_") / "__init__.py"):
        if entry.is_file():
            return entry
    raise KernelNotFound(
        f"No kernel module found at: `{variant_dir}`",
        hint="a variant needs __init__.py (or <name>/__init__.py for pre-flattening builds)",
    )


def _spec(variant_dir: Path, metadata: Metadata) -> importlib.machinery.ModuleSpec | None:
    """How to import the variant: its ``__init__.py`` (``files`` layout) or ``<id>.zip`` (``zip``)."""
    if metadata.build_layout != "zip":
        return spec_for(metadata.id, _entry_point(variant_dir, metadata))  # source only: a planted .pyc never runs
    archive = variant_dir / f"{metadata.id}.zip"
    if not archive.is_file():
        raise KernelNotFound(
            f"No kernel archive found at: `{archive}`",
            hint='metadata.json says "build-layout": "zip", so the package must be <id>.zip in the variant directory',
        )
    try:
        return zip_spec_for(metadata.id, variant_dir, archive)
    except zipimport.ZipImportError as exc:
        raise KernelNotFound(f"{archive} is not a readable ZIP archive: {exc}", hint="rebuild the variant") from None


def import_variant(
    variant_dir: Path,
    *,
    repo_info: RepoInfo | None = None,
    verify_digest: bool | None = None,
    metadata: Metadata | None = None,
    deps: Mapping[str, ModuleType] | None = None,
) -> ModuleType:
    """Verify and import ``variant_dir`` (once per process; later calls return the module).

    ``deps`` are the loaded ``kernel-depends`` modules, which ``get_kernel_dep`` returns
    while the kernel is imported.
    """
    key = _key(variant_dir)
    with _lock:
        hit = _registry.get(key)
        if hit is not None:
            return hit.module
        if metadata is None:
            metadata = read_metadata(variant_dir / "metadata.json")
        verify_variant(variant_dir, metadata, verify_digest=verify_digest)
        same = _same_build(variant_dir, metadata)
        if same is not None:
            _registry[key] = LoadedKernel(metadata=metadata, module=same.module, repo_info=repo_info)
            return same.module
        _warn_if_dirty(metadata, variant_dir)
        where = f"variant '{variant_dir.name}' of {repo_info.repo_id} (revision {repo_info.revision})" if repo_info else str(variant_dir)
        check_module_id(metadata.id, where=where, ours=[k.module for k in _registry.values()])
        spec = _spec(variant_dir, metadata)
        if spec is None or spec.loader is None:  # pragma: no cover - only for odd file systems
            raise KernelNotFound(f"cannot create an import spec for {variant_dir}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[metadata.id] = module
        try:
            with providing(deps or {}):
                spec.loader.exec_module(module)
        except BaseException as exc:
            sys.modules.pop(metadata.id, None)
            origin = f" ({repo_info.repo_id}, revision {repo_info.revision})" if repo_info else ""
            if hasattr(exc, "add_note"):  # Python >= 3.11
                exc.add_note(f"while importing kernel '{metadata.name}', variant '{variant_dir.name}'{origin}")
            raise
        _registry[key] = LoadedKernel(metadata=metadata, module=module, repo_info=repo_info)
        return module
