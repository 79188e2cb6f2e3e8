"""``metadata.json``: what a built variant says about itself.

Every variant directory carries one. The loader reads ``id`` (the module name to import
under), ``python-depends`` and ``digest``; the Hub card and ``info`` read the rest. Keys are
kebab-case and written in a fixed order (name, id, version, kernels-minver, license,
upstream, source, python-depends, kernel-depends, backend, build-layout, digest, provenance)
as 2-space pretty JSON. ``build-layout`` is ``files`` (the default, not written: the package
is the variant directory) or ``zip`` (the package is ``<id>.zip`` in the variant directory,
as PyPI ``kernels`` 0.19 reads it).
Reading ignores unknown keys, as PyPI ``kernels`` 0.19.1 does, so newer files stay
readable; it records them (``unknown_keys``) so that ``check`` can warn about them (a typo,
or a key of a newer builder), and rejects malformed known keys with a message naming the
file and the key. A file over ``METADATA_LIMIT`` bytes is refused by every reader (the
policy is stated in docs/reliability.md).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import attrs

from kernel_builder import __version__
from kernel_builder._files import UnreadableFile, read_text, write_atomic
from kernel_builder._git import GitStatus, git_status, tracks
from kernel_builder._git import oid as _oid
from kernel_builder._jsontext import set_top_level_key
from kernel_builder.config.model import (
    Backend,
    Build,
    GitUrl,
    KernelDependency,
    TorchNoarch,
    validate_kernel_name,
)
from kernel_builder.config.registry import registry
from kernel_builder.tree.digest import Digest
from kernel_builder.errors import CheckError, ConfigError

__all__ = [
    "Metadata",
    "MetadataBackend",
    "Provenance",
    "BuilderProvenance",
    "GitStatus",
    "MetadataError",
    "resolve_python_depends",
    "write_digest",
    "git_status",
    "builder_provenance",
    "current_provenance",
]

_MODE = 0o644  # metadata.json is published with the variant: readable by all


# ``files``: the variant directory is the package; ``zip``: ``<id>.zip`` in it is.
BUILD_LAYOUTS = ("files", "zip")

# A metadata.json holds a digest line per file: 16 MiB is some 100,000 files.
METADATA_LIMIT = 16 << 20
# The top-level keys this builder writes and reads (``Metadata.to_json``'s order).
KNOWN_KEYS = ("name", "id", "version", "kernels-minver", "license", "upstream", "source", "python-depends",
              "kernel-depends", "backend", "build-layout", "digest", "provenance")


class MetadataError(CheckError, ValueError):
    """A metadata.json file is missing, not JSON, or has a malformed known key.

    Also a ``ValueError``: what ``kernels.Metadata.read_from_file`` raises in these cases.
    """


@attrs.frozen
class BuilderProvenance:
    """Which kernel-builder wrote the file; ``git`` is set when it ran from a git checkout."""

    version: str
    git: GitStatus | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"version": self.version}
        if self.git is not None:
            data.update(self.git.to_json())
        return data


@attrs.frozen
class Provenance:
    """Who built the variant from what; ``cuda_capabilities`` is set when the build was
    narrowed with ``--cuda-capabilities`` (a tree ``upload`` refuses without ``--force``)."""

    kernel_builder: BuilderProvenance
    kernel: GitStatus | None = None
    cuda_capabilities: tuple[str, ...] | None = attrs.field(default=None, converter=attrs.converters.optional(tuple))

    @property
    def dirty(self) -> bool:
        """Whether the kernel source had uncommitted changes when it was built."""
        return self.kernel is not None and self.kernel.dirty

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kernel-builder": self.kernel_builder.to_json()}
        if self.kernel is not None:
            data["kernel"] = self.kernel.to_json()
        if self.cuda_capabilities is not None:
            data["cuda-capabilities"] = list(self.cuda_capabilities)
        return data


@attrs.frozen
class MetadataBackend:
    """``{"type": backend, "archs": [...]}``; ``archs`` is ``None`` (omitted) when unknown.

    The ``backend`` object of metadata.json (``kernels_data.BackendInfo`` has the same
    fields); a backend *with a version* (a machine's, or a variant name's compute part) is
    the one ``variants.names.BackendInfo``.
    """

    type: Backend = attrs.field(converter=Backend.parse)
    archs: tuple[str, ...] | None = attrs.field(default=None, converter=attrs.converters.optional(tuple))

    @property
    def backend_type(self) -> Backend:
        """``type`` under the name PyPI ``kernels`` uses."""
        return self.type

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type.value}
        if self.archs is not None:
            data["archs"] = list(self.archs)
        return data


def _kernel_name(_inst: object, _attr: object, value: str) -> None:
    validate_kernel_name(value)


def _check_minver(_inst: object, _attr: object, value: str) -> None:
    if not isinstance(value, str) or not re.fullmatch(r"\d+\.\d+\.\d+", value):
        raise ValueError(f"`kernels-minver` must be a version MAJOR.MINOR.PATCH such as \"0.17.2\", got {value!r}")


@attrs.frozen
class Metadata:
    """The metadata.json of one variant (see the module docstring for the file format)."""

    name: str = attrs.field(validator=_kernel_name)
    id: str
    version: int
    license: str
    backend: MetadataBackend
    kernels_minver: str | None = attrs.field(default=None, validator=attrs.validators.optional(_check_minver))
    upstream: str | None = None
    source: str | None = None
    python_depends: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    kernel_depends: tuple[KernelDependency, ...] = attrs.field(default=(), converter=tuple)
    digest: Digest | None = None
    provenance: Provenance | None = None
    build_layout: str = attrs.field(default="files", validator=attrs.validators.in_(BUILD_LAYOUTS))
    # top-level keys of the file read that are not KNOWN_KEYS: ignored, kept for check's warning
    unknown_keys: tuple[str, ...] = attrs.field(default=(), converter=tuple, eq=False, repr=False)

    # -- building ----------------------------------------------------------------------
    @classmethod
    def for_backend(
        cls,
        build: Build,
        ops_id: str,
        backend: Backend | str,
        *,
        provenance: Provenance | None = None,
    ) -> Metadata:
        """The metadata of ``build``'s variant for ``backend``, before compiling.

        ``backend.archs`` is known up front only for noarch kernels (``[torch-noarch]``
        ``cuda-capabilities`` / ``rocm-archs``, written as given); compiled kernels get
        theirs from the build. ``python-depends`` lists the general names, then the
        backend's; an unknown name raises ``ConfigError``.
        """
        backend = Backend.parse(str(backend))
        general = build.general
        archs: tuple[str, ...] | None = None
        if isinstance(build.framework, TorchNoarch):
            if backend is Backend.CUDA:
                archs = build.framework.cuda_capabilities
            elif backend is Backend.ROCM:
                archs = build.framework.rocm_archs
        return cls(
            name=general.name,
            id=ops_id,
            version=general.version,
            license=general.license,
            upstream=None if general.upstream is None else str(general.upstream),
            source=None if general.source is None else str(general.source),
            python_depends=resolve_python_depends(build, backend),
            kernel_depends=(*general.kernel_depends, *general.backend_kernel_depends(backend)),
            backend=MetadataBackend(backend, archs),
            provenance=provenance,
        )

    def evolve(self, **changes: Any) -> Metadata:
        return attrs.evolve(self, **changes)

    def with_digest(self, digest: Digest | None) -> Metadata:
        return attrs.evolve(self, digest=digest)

    def with_archs(self, archs: list[str] | tuple[str, ...] | None) -> Metadata:
        return attrs.evolve(self, backend=MetadataBackend(self.backend.type, archs))

    # -- JSON --------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """A dict in the file's key order."""
        data: dict[str, Any] = {"name": self.name, "id": self.id, "version": self.version}
        if self.kernels_minver is not None:
            data["kernels-minver"] = self.kernels_minver
        data["license"] = self.license
        if self.upstream is not None:
            data["upstream"] = self.upstream
        if self.source is not None:
            data["source"] = self.source
        data["python-depends"] = list(self.python_depends)
        data["kernel-depends"] = [_kernel_dep_to_json(d) for d in self.kernel_depends]
        data["backend"] = self.backend.to_json()
        if self.build_layout != "files":
            data["build-layout"] = self.build_layout
        if self.digest is not None:
            data["digest"] = self.digest.to_json()
        if self.provenance is not None:
            data["provenance"] = self.provenance.to_json()
        return data

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write atomically, world-readable (it is published with the variant)."""
        write_atomic(Path(path), self.dumps(), mode=_MODE)

    @classmethod
    def from_json(cls, data: object) -> Metadata:
        """Read a parsed metadata.json; ``ValueError`` names the first malformed key."""
        if not isinstance(data, dict):
            raise ValueError("metadata must be a JSON object")
        return cls(
            name=_required(data, "name", str),
            id=_required(data, "id", str),
            version=_required(data, "version", int),
            kernels_minver=_optional(data, "kernels-minver", str),
            license=_required(data, "license", str),
            upstream=_git_url(data, "upstream"),
            source=_git_url(data, "source"),
            python_depends=_str_list(_required(data, "python-depends", list), "python-depends"),
            kernel_depends=[_kernel_dep_from_json(d, i) for i, d in enumerate(_optional(data, "kernel-depends", list) or [])],
            backend=_backend_from_json(_required(data, "backend", dict)),
            digest=_digest_from_json(data.get("digest")),
            provenance=_provenance_from_json(data.get("provenance")),
            build_layout=_build_layout(data),
            unknown_keys=sorted(str(key) for key in data if key not in KNOWN_KEYS),
        )

    @classmethod
    def loads(cls, text: str | bytes) -> Metadata:
        return cls.from_json(json.loads(text))

    # The reference's names (``kernels.Metadata``), for code written against it.
    @staticmethod
    def read_from_file(metadata_path: str | os.PathLike[str]) -> Metadata:
        """``read`` under the name PyPI ``kernels`` uses."""
        return Metadata.read(metadata_path)

    @staticmethod
    def from_bytes(bytes: bytes) -> Metadata:  # noqa: A002 - the reference's parameter name
        """``loads`` under the name PyPI ``kernels`` uses; ``ValueError`` when malformed."""
        return Metadata.loads(bytes)

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Metadata:
        """Read a metadata.json file; ``MetadataError`` names the file and the problem.

        Only a regular file of at most ``METADATA_LIMIT`` bytes is read (a link to
        /dev/zero or a FIFO is refused before any byte is), and JSON nested too deeply to
        parse is an error like any other (issue 45: 8, 20)."""
        path = Path(path)
        try:
            text = read_text(path, limit=METADATA_LIMIT)
        except OSError as exc:
            raise MetadataError(
                f"cannot read {path}: {exc.strerror or exc}",
                hint="every variant directory needs a metadata.json; rebuild the variant",
            ) from None
        except UnreadableFile as exc:
            where = f"{path}:{exc.line}:{exc.column}:" if exc.line else str(path)
            raise MetadataError(f"{where} {exc.reason}", hint="a variant's metadata.json is a small JSON file; rebuild the variant") from None
        try:
            return cls.loads(text)
        except RecursionError:
            raise MetadataError(f"{path} is not valid JSON: nested too deeply", hint="rebuild the variant") from None
        except json.JSONDecodeError as exc:
            raise MetadataError(f"{path} is not valid JSON: {exc}", hint="rebuild the variant") from None
        except (ValueError, TypeError) as exc:
            raise MetadataError(
                f"{path}: {exc}", hint="rebuild the variant with kernel-builder, or fix the key by hand"
            ) from None


def write_digest(path: str | os.PathLike[str], digest: Digest) -> None:
    """Set the ``digest`` of the metadata.json at ``path``, changing nothing else in the file.

    Keys this version does not know (``x-...``, keys of newer formats) and the file's
    formatting are kept byte for byte: metadata.json is a published format, and tools that
    only add a digest must not drop what others wrote. The file is validated first.
    """
    path = Path(path)
    Metadata.read(path)
    text = path.read_bytes().decode("utf-8")
    write_atomic(path, set_top_level_key(text, "digest", digest.to_json(), before=("provenance",)), mode=_MODE)


# -- python-depends ---------------------------------------------------------------------
def resolve_python_depends(build: Build, backend: Backend) -> tuple[str, ...]:
    """General names then ``backend``'s names, each checked against the dependency registry.

    Unlike the reference, ``[general.neuron] python-depends`` is included too: a neuron
    kernel needs those packages at load time like any other backend's.
    """
    general = build.general
    backend_names = general.backend_python_depends(backend)
    scoped = [(name, None) for name in general.python_depends] + [(name, backend) for name in backend_names]
    for name, scope in scoped:
        problem = registry().problem(name, scope)
        if problem is not None:
            table = "[general]" if scope is None else f"[general.{scope.value}]"
            raise ConfigError(
                f"build.toml: {problem}",
                hint=f"fix python-depends in {table}; see docs/metadata.md for the allowed names",
            )
    return (*general.python_depends, *backend_names)


# -- provenance from git ----------------------------------------------------------------
def builder_provenance() -> BuilderProvenance:
    """This kernel-builder: its version, and its commit when it runs from a git checkout."""
    here = Path(__file__).resolve()
    # Only a checkout that tracks this very file says which builder commit runs; an install
    # inside some other repository (a venv in a project) must not borrow its commit.
    return BuilderProvenance(__version__, git_status(here.parent) if tracks(here) else None)


def current_provenance(
    kernel_dir: str | os.PathLike[str] | None = None, *, kernel: GitStatus | None = None
) -> Provenance:
    """Provenance for a build of ``kernel_dir`` (or the given kernel commit)."""
    if kernel is None and kernel_dir is not None:
        kernel = git_status(kernel_dir)
    return Provenance(builder_provenance(), kernel)


# -- JSON helpers -----------------------------------------------------------------------
def _type_name(kind: type) -> str:
    return {str: "a string", int: "an integer", list: "a list", dict: "an object", bool: "a boolean"}[kind]


def _check_type(value: object, kind: type, key: str) -> Any:
    if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"`{key}` must be a non-negative integer, got {value!r}")
    if not isinstance(value, kind):
        raise ValueError(f"`{key}` must be {_type_name(kind)}, got {value!r}")
    return value


def _build_layout(data: dict[str, Any]) -> str:
    layout = _optional(data, "build-layout", str) or "files"
    if layout not in BUILD_LAYOUTS:
        raise ValueError(f"`build-layout` {layout!r} is not one of {', '.join(BUILD_LAYOUTS)}")
    return layout


def _required(data: dict[str, Any], key: str, kind: type) -> Any:
    if key not in data:
        raise ValueError(f"missing key `{key}`")
    return _check_type(data[key], kind, key)


def _optional(data: dict[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    return None if value is None else _check_type(value, kind, key)


def _str_list(values: list[Any], key: str) -> list[str]:
    for value in values:
        _check_type(value, str, f"{key}[]")
    return values


def _git_url(data: dict[str, Any], key: str) -> str | None:
    value = _optional(data, key, str)
    if value is None:
        return None
    try:
        GitUrl.parse(value)
    except ValueError as exc:
        raise ValueError(f"`{key}`: {exc}") from None
    return value


def _kernel_dep_to_json(dep: KernelDependency) -> dict[str, Any]:
    data: dict[str, Any] = {"repo-id": dep.repo_id}
    if dep.version is not None:
        data["version"] = dep.version
    else:
        data["revision"] = dep.revision
    return data


def _kernel_dep_from_json(value: object, index: int) -> KernelDependency:
    key = f"kernel-depends[{index}]"
    _check_type(value, dict, key)
    assert isinstance(value, dict)
    unknown = set(value) - {"repo-id", "version", "revision"}
    if unknown:
        raise ValueError(f"`{key}` has unknown keys {sorted(unknown)}; expected repo-id and version or revision")
    repo_id = _required(value, "repo-id", str)
    version = _optional(value, "version", int)
    revision = _optional(value, "revision", str)
    if (version is None) == (revision is None):
        raise ValueError(f"`{key}` needs exactly one of `version` or `revision`")
    return KernelDependency(repo_id, version, revision)


def _backend_from_json(value: dict[str, Any]) -> MetadataBackend:
    kind = _required(value, "type", str)
    if kind not in {b.value for b in Backend}:
        raise ValueError(f"`backend.type` {kind!r} is not one of {', '.join(b.value for b in Backend)}")
    archs = _optional(value, "archs", list)
    return MetadataBackend(kind, None if archs is None else _str_list(archs, "backend.archs"))


def _digest_from_json(value: object) -> Digest | None:
    return None if value is None else Digest.from_json(value)


def _git_from_json(value: dict[str, Any], key: str, *, required: bool) -> GitStatus | None:
    commit = value.get("commit", value.get("sha"))
    dirty = value.get("dirty")
    if commit is None and dirty is None and not required:
        return None
    if commit is None or dirty is None:
        raise ValueError(f"`{key}` needs both `commit` and `dirty`")
    _check_type(dirty, bool, f"{key}.dirty")
    return GitStatus(_oid(commit, f"{key}.commit"), dirty)


def _provenance_from_json(value: object) -> Provenance | None:
    if value is None:
        return None
    _check_type(value, dict, "provenance")
    assert isinstance(value, dict)
    builder = _required(value, "kernel-builder", dict)
    version = _required(builder, "version", str)
    builder_git = _git_from_json(builder, "provenance.kernel-builder", required=False)
    kernel_value = _optional(value, "kernel", dict)
    kernel = None if kernel_value is None else _git_from_json(kernel_value, "provenance.kernel", required=True)
    narrowed = _optional(value, "cuda-capabilities", list)
    if narrowed is not None:
        narrowed = _str_list(narrowed, "provenance.cuda-capabilities")
    return Provenance(BuilderProvenance(version, builder_git), kernel, narrowed)
