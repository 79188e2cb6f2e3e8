"""Where the tvm-ffi a ``[tvm-ffi]`` kernel compiles against is: headers, library, version.

A tvm-ffi kernel's module is a plain shared library (no Python extension) that includes
``<tvm/ffi/...>`` and links ``libtvm_ffi.so``; the ``apache-tvm-ffi`` wheel ships both.
A Nix build gives the pinned wheel's site-packages (the toolchain lock's
``check:tvm-ffi`` set) in ``$KERNEL_BUILDER_TVM_FFI``; without it (``build --local``,
the host toolchain) the toolchain Python's own ``tvm_ffi`` serves, and its absence is an
error that says what to install.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import attrs

from kernel_builder.errors import BuildError

__all__ = ["ENV_VAR", "TvmFfi", "locate", "from_site"]

ENV_VAR = "KERNEL_BUILDER_TVM_FFI"
_DIST = "apache_tvm_ffi-"


@attrs.frozen
class TvmFfi:
    """One tvm-ffi installation: the directory that holds its ``tvm_ffi`` package."""

    site: Path
    version: str  # the distribution's version, e.g. 0.1.15.post2

    @property
    def include(self) -> Path:
        """``<tvm/ffi/...>`` and ``<dlpack/dlpack.h>`` both live here."""
        return self.site / "tvm_ffi" / "include"

    @property
    def library(self) -> Path:
        return self.site / "tvm_ffi" / "lib" / "libtvm_ffi.so"

    @property
    def major_minor(self) -> tuple[int, int]:
        parts = self.version.split(".")
        return int(parts[0]), int(parts[1])


def from_site(site: Path, *, origin: str) -> TvmFfi:
    """The tvm-ffi installed in ``site`` (a site-packages directory); ``origin`` names where
    that directory came from, for the error."""
    dists = sorted(site.glob(f"{_DIST}*.dist-info"))
    if not dists or not (site / "tvm_ffi" / "include" / "tvm" / "ffi").is_dir():
        raise BuildError(
            f"{origin}: {site} holds no apache-tvm-ffi installation (tvm_ffi/include and its dist-info)",
            hint="tvm-ffi kernels compile against the apache-tvm-ffi wheel: install it (`pip install apache-tvm-ffi`)",
        )
    version = dists[-1].name[len(_DIST) : -len(".dist-info")]
    found = TvmFfi(site, version)
    if not found.library.is_file():
        raise BuildError(f"{origin}: {found.library} is missing (a broken apache-tvm-ffi installation)",
                         hint="reinstall apache-tvm-ffi")
    return found


def locate(python: str, environ: dict[str, str]) -> TvmFfi:
    """``$KERNEL_BUILDER_TVM_FFI`` if set, else the ``tvm_ffi`` that ``python`` imports."""
    given = environ.get(ENV_VAR, "")
    if given:
        return from_site(Path(given), origin=f"${ENV_VAR}")
    code = "import os, tvm_ffi; print(os.path.dirname(os.path.dirname(os.path.abspath(tvm_ffi.__file__))))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BuildError(
            f"this is a tvm-ffi kernel, and the toolchain Python {python} cannot import tvm_ffi",
            hint=f"install it: `{python} -m pip install apache-tvm-ffi` (or build with Nix, which uses the pinned wheel)",
        )
    return from_site(Path(done.stdout.strip()), origin=f"{python}'s tvm_ffi")
