"""``symbols.json``: a variant's public API, saved by the import check.

PyPI ``kernels`` (0.19+) prints it with ``kernels describe-api`` without importing the
kernel. Schema 1 is a JSON object::

    {"schema_version": 1,
     "functions": [{"name": ..., "signature": ..., "doc": ...}],
     "layers": [{"name": ..., "signature": ..., "doc": ...,
                 "attributes": {"has_backward": true|false|null, "can_torch_compile": ...}}]}

``name`` is required; ``signature`` is ``inspect``'s text (a layer's is its ``forward``'s),
``doc`` the docstring's first paragraph, either ``null`` when there is none. A layer
attribute is ``null`` when the class does not set it (``kernels`` then applies its default).

The import check's interpreter (the variant's torch, which has no kernel_builder on its
path) loads this file by its path and calls ``describe``; so the module imports only the
standard library at its top, and its data is plain JSON values rather than attrs classes.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import types
from pathlib import Path
from typing import Any

__all__ = ["FILE_NAME", "SCHEMA_VERSION", "LAYER_ATTRIBUTES", "describe", "dumps", "problems", "read_symbols", "text_lines"]

FILE_NAME = "symbols.json"
SCHEMA_VERSION = 1
LAYER_ATTRIBUTES = ("has_backward", "can_torch_compile")
# ``<object object at 0x7f...>`` in a default value: an address differs on every run, and
# symbols.json is part of a reproducible variant.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _public(module: types.ModuleType, package: str) -> list[tuple[str, Any]]:
    """The module's public members, by name: those ``__all__`` lists when it has one
    (upstream's rule for a kernel's public API), else every name without a leading
    underscore whose value the kernel's ``package`` defines (not ``Optional``, ``nn.Module``
    or a module it only imports)."""
    listed = getattr(module, "__all__", None)
    if listed is not None:
        return [(name, getattr(module, name, None)) for name in sorted({str(n) for n in listed})]
    return [
        (name, value) for name, value in sorted(vars(module).items())
        if not name.startswith("_") and _defined_in(value, package)
    ]


def _signature(obj: Any, root: str | None = None) -> str | None:
    """``inspect``'s text of ``obj``'s signature; ``root`` (the kernel's directory, a
    staging path inside the build) reads ``<kernel>`` where a default value names it."""
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        # A torch op (``torch.ops.ns.name``) has no Python signature but a schema.
        schema = getattr(getattr(obj, "default", None), "_schema", None)
        if schema is None:
            return None
        text = str(schema)
    if root:
        text = text.replace(root, "<kernel>")
    return _ADDRESS.sub("", text)


def _doc(obj: Any) -> str | None:
    doc = inspect.getdoc(obj)
    if not doc:
        return None
    return " ".join(doc.strip().split("\n\n")[0].split())


def _defined_in(value: Any, package: str) -> bool:
    return (getattr(value, "__module__", "") or "").split(".")[0] == package


def _layer(name: str, cls: type, root: str | None) -> dict[str, Any]:
    attributes = {}
    for attribute in LAYER_ATTRIBUTES:
        value = getattr(cls, attribute, None)
        attributes[attribute] = value if isinstance(value, bool) else None
    forward = getattr(cls, "forward", None)
    return {
        "name": name,
        "signature": _signature(forward, root) if forward is not None else None,
        "doc": _doc(cls) if cls.__doc__ else None,
        "attributes": attributes,
    }


def describe(module: types.ModuleType) -> dict[str, Any]:
    """The schema-1 document of an imported kernel package: its public functions (callables
    that are neither classes nor modules) and the classes of its ``layers`` submodule."""
    package = module.__name__.split(".")[0]
    init = getattr(module, "__file__", None)
    root = os.path.dirname(init) if init else None
    functions = []
    for name, obj in _public(module, package):
        if obj is None or isinstance(obj, types.ModuleType) or inspect.isclass(obj) or not callable(obj):
            continue
        functions.append({"name": name, "signature": _signature(obj, root), "doc": _doc(obj)})
    layers = []
    layers_module = getattr(module, "layers", None)
    if isinstance(layers_module, types.ModuleType):
        layers = [_layer(name, cls, root) for name, cls in _public(layers_module, package) if inspect.isclass(cls)]
    return {"schema_version": SCHEMA_VERSION, "functions": functions, "layers": layers}


def dumps(document: dict[str, Any]) -> str:
    """The file's text: indented, keys in schema order, a final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def problems(document: object) -> list[str]:
    """What makes ``document`` not a schema-1 symbols.json (empty: it is one), each with its
    key path; the rules PyPI ``kernels`` 0.19 applies when it reads the file, and ours."""
    if not isinstance(document, dict):
        return [f"the top level must be a JSON object, not {type(document).__name__}"]
    if document.get("schema_version") != SCHEMA_VERSION:
        return [f"schema_version: expected {SCHEMA_VERSION}, found {document.get('schema_version')!r}"]
    found = []
    for group in ("functions", "layers"):
        entries = document.get(group)
        if not isinstance(entries, list):
            found.append(f"{group}: expected a list of symbols, found {type(entries).__name__}")
            continue
        for i, entry in enumerate(entries):
            where = f"{group}[{i}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                found.append(f"{where}: expected an object with a string \"name\"")
                continue
            for key in ("signature", "doc"):
                if entry.get(key) is not None and not isinstance(entry[key], str):
                    found.append(f"{where}.{key}: expected a string or null")
            if group == "layers":
                attributes = entry.get("attributes")
                if not isinstance(attributes, dict):
                    found.append(f"{where}.attributes: expected an object of booleans or nulls")
                    continue
                for key, value in attributes.items():
                    if value is not None and not isinstance(value, bool):
                        found.append(f"{where}.attributes.{key}: expected true, false or null, found {value!r}")
    return found


def read_symbols(path: str | Path) -> dict[str, Any]:
    """Read and validate a variant's symbols.json; ``CheckError`` says what is wrong and where."""
    from kernel_builder.errors import CheckError  # lazy: the import check loads this file alone, without kernel_builder

    path = Path(path)
    hint = "rebuild the variant with kernel-builder (its import check writes symbols.json)"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CheckError(f"{path}: no symbols.json", hint=hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckError(f"{path}: cannot read: {exc}", hint=hint) from None
    try:
        document = json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        column = getattr(exc, "colno", None)
        where = f"{path}:{line}:{column}" if line is not None else str(path)
        raise CheckError(f"{where}: not JSON: {getattr(exc, 'msg', exc)}", hint=hint) from None
    found = problems(document)
    if found:
        raise CheckError(f"{path}: not a schema-{SCHEMA_VERSION} symbols.json: " + "; ".join(found), hint=hint)
    return document


def text_lines(document: dict[str, Any]) -> list[str]:
    """The ``Functions:`` and ``Layers:`` sections of ``describe-api``'s text output
    (each symbol with its signature; layers with their attributes, ``unknown`` for null)."""
    lines = ["Functions:"]
    for function in document["functions"]:
        lines.append(f"  {function['name']}{function.get('signature') or ''}")
    if not document["functions"]:
        lines.append("  (none)")
    lines += ["", "Layers:"]
    for layer in document["layers"]:
        attributes = layer.get("attributes") or {}
        flags = "  ".join(
            f"{key}={'unknown' if attributes.get(key) is None else attributes[key]}" for key in LAYER_ATTRIBUTES
        )
        lines.append(f"  {layer['name']}  {flags}")
    if not document["layers"]:
        lines.append("  (none)")
    return lines
