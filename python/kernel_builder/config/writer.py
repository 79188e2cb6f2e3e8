"""The model back to data: plain dicts (``--json``) and edition-6 TOML text (``dumps``).

A cattrs converter unstructures the attrs classes with kebab-case keys, leaving out
keys that are unset (``None``) or at their empty default, so ``loads(dumps(b)) == b``.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs
import cattrs
import tomlkit
from cattrs.gen import make_dict_unstructure_fn, override

from kernel_builder.config.model import (
    CURRENT_EDITION,
    FRAMEWORK_KEYS,
    Backend,
    Build,
    BuildLayout,
    CppDependency,
    CudaGeneral,
    General,
    GitUrl,
    Hub,
    Kernel,
    KernelDependency,
    Language,
    MlxNoarch,
    NeuronGeneral,
    Torch,
    TorchNoarch,
    TpuGeneral,
    TvmFfi,
    Version,
    XpuGeneral,
)

__all__ = ["converter", "to_dict", "dumps"]

_FRAMEWORK_KEY = {cls: key for key, cls in FRAMEWORK_KEYS.items()}
# The reference parser reads only the snake spellings of these two noarch keys, so
# writing them that way keeps our output readable by both tools.
_SNAKE_KEYS = {(TorchNoarch, "cuda_capabilities"), (TorchNoarch, "rocm_archs")}


def _kebab_hook(conv: cattrs.Converter, cls: type, **extra: Any) -> Any:
    renames = {
        a.name: override(rename=a.name if (cls, a.name) in _SNAKE_KEYS else a.name.replace("_", "-"))
        for a in attrs.fields(cls)
    }
    renames.update(extra)
    return make_dict_unstructure_fn(cls, conv, _cattrs_omit_if_default=True, **renames)


def _version(value: Version) -> str:
    """``major.minor`` (build.toml's form; ``Version`` drops trailing zeros)."""
    if len(value.parts) <= 2:
        return "%d.%d" % value.major_minor()
    return str(value)


def _stable_abi(value: Version | dict[Backend, Version] | None) -> Any:
    if isinstance(value, Version):
        return _version(value)
    return {b.value: _version(v) for b, v in sorted(value.items(), key=lambda kv: kv[0].value)}


@functools.cache
def converter() -> cattrs.Converter:
    """The converter used for ``--json`` and ``dumps``: kebab keys, unset keys left out."""
    conv = cattrs.Converter(unstruct_collection_overrides={tuple: list})
    conv.register_unstructure_hook(Version, _version)
    conv.register_unstructure_hook(GitUrl, str)
    conv.register_unstructure_hook(Backend, lambda b: b.value)
    conv.register_unstructure_hook(CppDependency, lambda d: d.value)
    conv.register_unstructure_hook(Language, lambda d: d.value)
    conv.register_unstructure_hook(BuildLayout, lambda d: d.value)
    for cls in (KernelDependency, Hub, CudaGeneral, NeuronGeneral, TpuGeneral, XpuGeneral, TorchNoarch, TvmFfi, MlxNoarch):
        conv.register_unstructure_hook(cls, _kebab_hook(conv, cls))
    kernel_base = _kebab_hook(conv, Kernel, backend=override(omit=True), language=override(omit=True))

    def kernel(value: Kernel) -> dict[str, Any]:
        """Edition 6: ``language`` first; a C++ component always has ``depends``, Rust none."""
        raw = kernel_base(value)
        out: dict[str, Any] = {"language": value.language.value}
        if not value.is_rust:
            out["depends"] = [d.value for d in value.depends]
        raw.pop("depends", None)
        out.update(raw)
        return out

    conv.register_unstructure_hook(Kernel, kernel)
    torch_base = _kebab_hook(conv, Torch, stable_abi=override(omit=True))

    def torch(value: Torch) -> dict[str, Any]:
        out = torch_base(value)
        if value.stable_abi is not None:
            out["stable-abi"] = _stable_abi(value.stable_abi)
        return out

    conv.register_unstructure_hook(Torch, torch)
    general_base = _kebab_hook(conv, General)

    def general(value: General) -> dict[str, Any]:
        raw = general_base(value)
        out = {k: raw.pop(k) for k in ("name", "version")}
        out["edition"] = CURRENT_EDITION
        out.update(raw)
        return out

    conv.register_unstructure_hook(General, general)

    def build(value: Build) -> dict[str, Any]:
        out = {"general": conv.unstructure(value.general, General)}
        out[_FRAMEWORK_KEY[type(value.framework)]] = conv.unstructure(value.framework, type(value.framework))
        if value.kernels:
            out["kernel"] = {name: conv.unstructure(k, Kernel) for name, k in value.kernels.items()}
        return out

    conv.register_unstructure_hook(Build, build)
    return conv


def to_dict(build: Build) -> dict[str, Any]:
    """The normalised model as plain data, keyed as in an edition-6 build.toml."""
    return converter().unstructure(build, Build)


def _array(values: list[Any]) -> Any:
    array = tomlkit.array()
    for value in values:
        array.append(_inline(value) if isinstance(value, dict) else value)
    if sum(len(str(v)) + 4 for v in values) > 80:
        array.multiline(True)
    return array


def _inline(data: dict[str, Any]) -> Any:
    table = tomlkit.inline_table()
    for key, value in data.items():
        table.append(key, _array(value) if isinstance(value, list) else value)
    return table


def _table(data: dict[str, Any], *, super_table: bool = False) -> Any:
    """A tomlkit table: plain keys first, then sub-tables (so they print as [a.b])."""
    table = tomlkit.table(is_super_table=super_table)
    for key, value in data.items():
        if not isinstance(value, dict):
            table.append(key, _array(value) if isinstance(value, list) else value)
    for key, value in data.items():
        if isinstance(value, dict):
            table.append(key, _table(value))
    return table


def dumps(build: Build) -> str:
    """Edition-6 TOML text for ``build``; ``loads(dumps(b)) == b``."""
    data = to_dict(build)
    doc = tomlkit.document()
    for key, value in data.items():
        doc.append(key, _table(value, super_table=key == "kernel"))
    return tomlkit.dumps(doc)
