"""The package's layers as data, for tests/test_boundaries.py and the Nix source tests.

``VARIANT_BUILD_DIRS`` is the Python half of ``variantBuildDirs`` in
``nix/lib/builders/context.nix``: the packages a variant derivation ships, beside the
package's top-level (core) modules. ``imports_of`` reads a module's kernel_builder imports,
function-local ones included, without importing it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PYTHON = Path(__file__).resolve().parent.parent / "python"
PACKAGE = PYTHON / "kernel_builder"
CONTEXT_NIX = PACKAGE.parent.parent / "nix" / "lib" / "builders" / "context.nix"

VARIANT_BUILD_DIRS = ("config", "data", "driver", "tree", "variants")


def module_name(path: Path) -> str:
    parts = path.relative_to(PYTHON).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_path(name: str) -> Path | None:
    base = PYTHON.joinpath(*name.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.exists():
            return path
    return None


def imports_of(path: Path) -> set[str]:
    """Every kernel_builder module ``path`` imports (``from X import y``: X, and X.y when
    that is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("kernel_builder")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kernel_builder"):
            module = node.module or ""
            found.add(module)
            found |= {f"{module}.{a.name}" for a in node.names if module_path(f"{module}.{a.name}")}
    return {name for name in found if module_path(name)}


def layer(module: str) -> str:
    """``core`` for a top-level module, else the sub-package's name (``driver``, ``cli``...);
    ``python -m kernel_builder`` is the CLI's."""
    parts = module.split(".")
    if module == "kernel_builder.__main__":
        return "cli"
    return "core" if len(parts) <= 2 and not (PACKAGE / parts[-1]).is_dir() else parts[1]


def closure(start: str) -> set[str]:
    """Files (relative to python/) that importing ``start`` may load, parents included."""
    seen: dict[str, Path] = {}
    stack = [start]
    while stack:
        name = stack.pop()
        path = module_path(name)
        if name in seen or path is None:
            continue
        seen[name] = path
        parts = name.split(".")
        stack += [".".join(parts[:i]) for i in range(1, len(parts))]
        stack += sorted(imports_of(path))
    return {p.relative_to(PYTHON).as_posix() for p in seen.values()}


def run_variant_closure() -> set[str]:
    return closure("kernel_builder.driver.run_variant")


def context_nix_dirs() -> tuple[str, ...]:
    match = re.search(r"variantBuildDirs = \[([^\]]*)\]", CONTEXT_NIX.read_text(encoding="utf-8"))
    assert match, "variantBuildDirs not found in context.nix"
    return tuple(re.findall(r'"([^"]+)"', match.group(1)))
