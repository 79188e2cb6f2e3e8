"""The package's layers as data, for tests/test_boundaries.py and the Nix source tests.

``VARIANT_BUILD_DIRS`` is the Python half of ``variantBuildDirs`` in
``nix/lib/builders/context.nix``: the packages a variant derivation ships, beside the
top-level (core) modules of ``variantBuildModules``. ``DRIVER_ENTRY_POINTS`` are the modules
the derivations run (``python -m ...``); ``driver_closure`` is what they may load.
``imports_of`` reads a module's kernel_builder imports, function-local ones included,
without importing it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PYTHON = Path(__file__).resolve().parent.parent / "python"
PACKAGE = PYTHON / "kernel_builder"
CONTEXT_NIX = PACKAGE.parent.parent / "nix" / "lib" / "builders" / "context.nix"

VARIANT_BUILD_DIRS = ("backends", "config", "data", "driver", "tree", "variants")
# Sub-packages that are core (one fact each, used everywhere): kernel_builder.backends.
CORE_PACKAGES = ("backends",)
DRIVER_ENTRY_POINTS = ("kernel_builder.driver.plan", "kernel_builder.driver.run_variant", "kernel_builder.driver.units")


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
    if len(parts) > 1 and parts[1] in CORE_PACKAGES:
        return "core"
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


def driver_closure() -> set[str]:
    """Files (relative to python/) that the plan, object, link and variant steps may load."""
    return set().union(*(closure(entry) for entry in DRIVER_ENTRY_POINTS))


def _context_nix_list(name: str) -> tuple[str, ...]:
    match = re.search(name + r" = \[([^\]]*)\]", CONTEXT_NIX.read_text(encoding="utf-8"))
    assert match, f"{name} not found in context.nix"
    return tuple(re.findall(r'"([^"]+)"', match.group(1)))


def context_nix_dirs() -> tuple[str, ...]:
    return _context_nix_list("variantBuildDirs")


def context_nix_modules() -> tuple[str, ...]:
    return _context_nix_list("variantBuildModules")
