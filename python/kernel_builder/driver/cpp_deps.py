"""Where a variant's C++ dependencies are, as include directories, macros and prefix maps.

A Nix build gives the unpacked pinned wheels as store paths in ``$KERNEL_BUILDER_CPP_DEPS``
(JSON: provider name → path; only variants whose components declare a dependency get
it). Without it (``build --local``) the wheel installed in the toolchain Python's
environment serves, and a missing one is an error that says what to install.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

import attrs

from kernel_builder.config import cpp_deps
from kernel_builder.config.model import Build
from kernel_builder.errors import BuildError

__all__ = ["ENV_VAR", "ResolvedDeps", "resolve"]

ENV_VAR = "KERNEL_BUILDER_CPP_DEPS"

log = logging.getLogger(__name__)


@attrs.frozen
class ResolvedDeps:
    includes: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    prefix_maps: tuple[str, ...] = ()


def _installed_version(site_packages: Path, package: str) -> str | None:
    """The version of ``package`` installed in ``site_packages`` (from its dist-info name)."""
    prefix = package.replace("-", "_") + "-"
    for entry in sorted(site_packages.glob(f"{prefix}*.dist-info")):
        return entry.name[len(prefix) : -len(".dist-info")]
    return None


def _root_from_env(provider: cpp_deps.Provider, site_packages: str | None, python: str) -> Path:
    """The toolchain environment's copy of ``provider``'s wheel (``build --local``)."""
    install = f"{python} -m pip install --no-deps {provider.wheel}"
    found = _installed_version(Path(site_packages), provider.package) if site_packages else None
    if found is None:
        raise BuildError(
            f"this kernel needs {provider.package} {provider.version} (for its C++ headers), "
            f"and the toolchain Python {python} does not have it",
            hint=f"install it: `{install}` (or build with Nix, which uses the pinned wheel)",
        )
    if found != provider.version:
        log.warning(
            f"using {provider.package} {found} from the toolchain Python's environment; "
            f"the pinned one is {provider.version} (`{install}`)"
        )
    return Path(site_packages)


def resolve(
    build: Build,
    backend: str,
    *,
    python: str,
    site_packages: str | None,
    environ: Mapping[str, str],
) -> ResolvedDeps:
    """Include dirs, macros and prefix maps for ``backend``'s declared dependencies;
    ``BuildError`` when one is not provided here. ``environ`` is the job's environment
    (``driver.job.ToolchainInputs.environ``), where ``$KERNEL_BUILDER_CPP_DEPS`` is looked up."""
    reason = cpp_deps.unbuildable_reason(build, backend)
    if reason:
        raise BuildError(f"cannot build the {backend} variants here: {reason}",
                         hint="see docs/dependencies.md for the dependencies kernel-builder provides")
    given = json.loads(environ.get(ENV_VAR) or "{}")
    includes: list[str] = []
    defines: list[str] = []
    maps: list[str] = []
    for item in cpp_deps.declared(build, backend):
        provider = item.dep.provider
        assert provider is not None  # unbuildable_reason refused the others
        if provider.name in given:  # a store path: mapped, so that it is no reference of the module
            root = Path(given[provider.name])
            maps.append(f"-ffile-prefix-map={root.as_posix()}=/kernel-builder/deps/{provider.name}")
        else:
            root = _root_from_env(provider, site_packages, python)
        for rel in provider.includes:
            path = root / rel
            if not path.is_dir():
                raise BuildError(
                    f"{item.dep.name}: {path} is missing (expected the include directory {rel} of {provider.wheel})",
                    hint="reinstall the wheel, or run `kernel-builder toolchain fetch` for the pinned one",
                )
            includes.append(path.as_posix())
        defines.extend(item.dep.defines)
    return ResolvedDeps(tuple(dict.fromkeys(includes)), tuple(dict.fromkeys(defines)), tuple(dict.fromkeys(maps)))
