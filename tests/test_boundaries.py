"""The layers of the package: what may import what.

``variants/`` is the pure knowledge of names, build sets and compatibility; ``tree/`` what
a built tree is; ``driver/`` what runs inside a variant derivation. A variant derivation
ships those (and ``config/``, ``data/``, the core modules) by directory, so none of them may
reach into the front end (``nix/``, ``toolchain/``, ``hub/``, ``loader/``, ``layers/``,
``flake/``, ``pyproject/``, ``cli/``): an edit there must rebuild no variant.

The front end is layered too, in ``LAYERS`` order: each layer imports only the layers
before it, so there is no circle and no arrow back up (``nix/`` runs nix for everyone above
it and imports only core; ``hub/`` publishes, ``loader/`` consumes what ``hub/`` fetches).
"""

from __future__ import annotations

import re

import pytest

from boundaries import (
    CORE_PACKAGES,
    DRIVER_ENTRY_POINTS,
    PACKAGE,
    VARIANT_BUILD_DIRS,
    closure,
    context_nix_dirs,
    context_nix_modules,
    driver_closure,
    imports_of,
    layer,
    module_name,
)

# Every layer, lowest first; the first five are what a variant derivation ships.
LAYERS = (
    "core", "config", "variants", "tree", "driver",
    "nix", "toolchain", "hub", "loader", "layers", "flake", "pyproject", "cli",
)
# layer -> the layers it may import (besides itself): those before it
ALLOWED = {name: set(LAYERS[:i]) for i, name in enumerate(LAYERS)}


def _modules() -> list[str]:
    return sorted(module_name(p) for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts and "_flake" not in p.parts)


@pytest.mark.parametrize("module", [m for m in _modules() if layer(m) in ALLOWED])
def test_lower_layers_import_nothing_above_them(module: str) -> None:
    from boundaries import module_path

    path = module_path(module)
    assert path is not None
    outside = sorted(name for name in imports_of(path) if layer(name) not in ALLOWED[layer(module)] | {layer(module)})
    assert outside == [], f"{module} ({layer(module)}) imports {outside}; allowed: {sorted(ALLOWED[layer(module)])}"


def test_the_rule_sees_an_upward_import(tmp_path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from kernel_builder.flake.flake_build import build_variants  # lazy: x\n")
    assert {layer(n) for n in imports_of(source)} == {"flake"}


def test_the_derivation_ships_what_the_driver_imports() -> None:
    """context.nix's directory list is this file's, and the whole import closure of the
    derivations' entry points lies inside it (the Nix test checks the store copy holds
    exactly these files)."""
    assert context_nix_dirs() == VARIANT_BUILD_DIRS
    outside = sorted(f for f in driver_closure() if f.count("/") > 1 and f.split("/")[1] not in VARIANT_BUILD_DIRS)
    assert outside == []


def test_the_derivation_ships_exactly_the_core_modules_the_driver_imports() -> None:
    """variantBuildModules is the closure's top-level modules, no more (a core module the
    driver does not load, e.g. _children.py, would rebuild every object when edited) and no
    fewer (the derivations could not import it)."""
    core = sorted(f.split("/")[1] for f in driver_closure() if f.count("/") == 1)
    assert sorted(context_nix_modules()) == core
    assert "_children.py" not in core and "__main__.py" not in core


def test_the_entry_points_are_what_the_builder_scripts_run() -> None:
    """DRIVER_ENTRY_POINTS are the modules that the scripts of the derivations given the
    trimmed source (per-object.nix's plan/object/link, variant.nix) run with `python -m`
    (check.nix runs the whole CLI from the full source)."""
    builders = PACKAGE.parent.parent / "nix" / "lib" / "builders"
    scripts = (builders / "units-builder.sh", builders / "variant-builder.sh")
    run = {m for script in scripts for m in re.findall(r"-m (kernel_builder[\w.]*)", script.read_text(encoding="utf-8"))}
    assert run == set(DRIVER_ENTRY_POINTS)


def test_the_closure_follows_imports_into_core_modules() -> None:
    assert "kernel_builder/pyenv.py" in closure("kernel_builder.driver.run_variant")
    assert "kernel_builder/_children.py" not in driver_closure()


def test_the_layers_cover_the_package() -> None:
    """Every sub-package is a layer this file knows (a new one must be placed on purpose)."""
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__" and not p.name.endswith("egg-info")}
    assert packages <= set(LAYERS) | set(CORE_PACKAGES) | {"data", "_flake"}, packages - set(LAYERS)


def test_the_front_end_rule_sees_a_circle(tmp_path) -> None:
    """hub/ importing loader/ (it once did, for the signature bundle's name) breaks the order."""
    source = tmp_path / "m.py"
    source.write_text("from kernel_builder.loader.signature import verify_signature\n")
    found = {layer(n) for n in imports_of(source)}
    assert found == {"loader"} and not found <= ALLOWED["hub"]
