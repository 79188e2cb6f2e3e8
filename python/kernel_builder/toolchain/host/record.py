"""``toolchains.json``: the typed record of this machine's host toolchains.

``toolchain discover`` writes it, the host-toolchain flake reads it (as JSON, in
``nix/toolchains/host.nix``), and ``check`` reads it to import each variant with the torch it
was built for. Keys are kebab-case on disk, as Nix reads them; in Python the record is a
tree of frozen attrs classes, converted by one cattrs converter in both directions, so a
field added here is written, read and validated in one place.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from kernel_builder.errors import ConfigError
from kernel_builder.versions import format_major_minor, major_minor

__all__ = ["FORMAT", "CompilerRecord", "CudaRecord", "DriverRecord", "Environment", "ToolchainsRecord", "from_json", "to_json"]

FORMAT = 1


@attrs.frozen
class Environment:
    """One toolchain Python and the identity of what it holds (``stamp``: the mtimes whose
    change makes the record stale)."""

    python: str
    env_bin: str
    python_version: str
    torch_version: str
    torch_cuda: str  # "" for a CPU-only torch
    torch_record_hash: str
    torch_wheel_hash: str
    cmake_version: str
    ninja_version: str
    torch_record_path: str = ""
    stamp: str = ""

    @property
    def torch_major_minor(self) -> str:
        return format_major_minor(major_minor(self.torch_version))


@attrs.frozen
class DriverRecord:
    """The Python running kernel-builder when the record was made."""

    python: str
    bin: str
    kernel_builder_version: str


@attrs.frozen
class CompilerRecord:
    """The host C++ compiler (``cxx`` empty when none was found)."""

    cxx: str
    version: str
    stamp: str


@attrs.frozen
class CudaRecord:
    """The host nvcc and its CUDA version (major.minor)."""

    nvcc: str
    home: str
    version: str
    stamp: str


@attrs.frozen
class ToolchainsRecord:
    """Everything ``toolchain discover`` found; ``build_sets`` maps a build-set key
    (``torch2.13-cpu``) to the environment that serves it, first candidate winning."""

    system: str
    driver: DriverRecord
    compiler: CompilerRecord
    cuda: CudaRecord | None
    environments: tuple[Environment, ...] = attrs.field(converter=tuple)
    build_sets: dict[str, Environment]
    format: int = FORMAT
    provider: str = "host"
    hermetic: bool = False

    def pythons(self) -> dict[str, str]:
        """Build-set key -> the Python that builds it."""
        return {key: env.python for key, env in self.build_sets.items()}


def _kebab(name: str) -> str:
    return name.replace("_", "-")


@functools.cache
def _converter() -> cattrs.Converter:
    conv = cattrs.Converter(unstruct_collection_overrides={tuple: list})
    conv.register_unstructure_hook_factory(
        attrs.has,
        lambda cls: make_dict_unstructure_fn(cls, conv, **{a.name: override(rename=_kebab(a.name)) for a in attrs.fields(cls)}),
    )
    conv.register_structure_hook_factory(
        attrs.has,
        lambda cls: make_dict_structure_fn(
            cls, conv, _cattrs_forbid_extra_keys=False, **{a.name: override(rename=_kebab(a.name)) for a in attrs.fields(cls)}
        ),
    )
    return conv


def to_json(record: ToolchainsRecord) -> dict[str, Any]:
    """The record as the JSON object written to ``toolchains.json``."""
    return _converter().unstructure(record)


def from_json(data: Any, path: Path) -> ToolchainsRecord:
    """Read a record loaded from ``path``; ``ConfigError`` naming the file and the first bad
    key when it is not a record of this format."""
    rerun = "run `kernel-builder toolchain discover` to write it again"
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object, found {type(data).__name__}", hint=rerun)
    if data.get("format") != FORMAT:
        raise ConfigError(f"{path} has format {data.get('format')!r}, expected {FORMAT}", hint=rerun)
    try:
        return _converter().structure(data, ToolchainsRecord)
    except Exception as exc:  # cattrs reports a group of errors; name the first path
        raise ConfigError(f"{path} is not a toolchains record: {_first_error(exc)}", hint=rerun) from None


def _first_error(exc: Exception) -> str:
    """cattrs' first error message, its key path spelled as the file spells it (kebab-case)."""
    first = cattrs.transform_error(exc)[0]
    return re.sub(r"\.([A-Za-z_]\w*)", lambda m: "." + _kebab(m.group(1)), first)
