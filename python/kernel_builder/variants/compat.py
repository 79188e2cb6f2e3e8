"""Does a variant fit a machine: the one compatibility rule.

``fits(variant, system)`` is the loader's rule (that of PyPI ``kernels``): can a Python on
``system`` load ``variant``. Everything else that asks "does this torch fit this variant"
is this rule with the question narrowed:

- ``importable``: can the checking torch import it (``check``, the import check): any
  backend that torch can run counts (a CUDA torch imports CPU variants), and noarch
  variants are pure Python, so they always import;
- ``buildable``: can a toolchain with this torch build it (``build --local``, the driver):
  it must fit, and a versioned backend (CUDA ...) must be the toolchain's exact version,
  since the name records the version it was built with.

Each answer is a ``Fit`` carrying the reason when it is no, worded as PyPI ``kernels``
0.19.1 words its rejections (values in parentheses, ``None`` for an unknown one, a backend
spelled as in the variant's name), so ``variants`` prints the same lines as ``kernels
variants``. Pure: the callers probe.
"""

from __future__ import annotations

import attrs

from kernel_builder.backends import Backend, spec, torch_backend
from kernel_builder.variants.names import Kind, Variant
from kernel_builder.variants.system import System, select_backend
from kernel_builder.versions import format_major_minor as _fmt

__all__ = ["Fit", "FITS", "fits", "importable", "buildable", "compilable_here", "METAL_MIN_MACOS"]

# Metal arch builds use -std=metal4.0, which needs macOS 26 at run time.
METAL_MIN_MACOS = (26, 0)


@attrs.frozen
class Fit:
    """Yes, or no with the reason (a sentence fragment naming both sides)."""

    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None

    def __bool__(self) -> bool:
        return self.ok


FITS = Fit()


def fits(variant: Variant, system: System) -> Fit:
    """Whether ``system`` can load ``variant`` (the loader's acceptance rule)."""
    if variant.kind in (Kind.NOARCH, Kind.MLX):
        if variant.kind is Kind.MLX and not system.mlx:
            return Fit("MLX is not installed in the environment")
        wanted = system.backend.name.value
        if variant.noarch in (wanted, "universal"):
            return FITS
        return Fit(f"backend ({variant.noarch}) does not match system backend ({wanted}) and is not universal")
    if variant.kind is Kind.SDK:
        return _first(variant, system, _python, _platform, _sdk_backend)
    return _first(variant, system, _python, _platform, _framework, _compute)


def _v(value: tuple[int, int] | None) -> str:
    """A version in a reason: ``2.13``, or ``None`` when unknown (as kernels 0.19.1 writes it)."""
    return "None" if value is None else _fmt(value)


def _first(variant: Variant, system: System, *checks) -> Fit:
    """The first check that says no, else ``FITS`` (a check returns ``None`` for yes)."""
    for check in checks:
        fit = check(variant, system)
        if fit is not None:
            return fit
    return FITS


def _python(variant: Variant, system: System) -> Fit | None:
    """A free-threaded Python loads only abi3t; any Python needs the version named (3.9 for
    a legacy name)."""
    tag = variant.python_tag
    if tag is None:
        return None
    if tag.abi == "abi3" and system.free_threaded:
        return Fit("abi3 is not supported on free-threaded Python, abi3t is required")
    if system.python_version is not None and system.python_version < tag.version:
        return Fit(f"Python {_v(tag.version)} or later is required, system Python version is {_v(system.python_version)}")
    return None


def _platform(variant: Variant, system: System) -> Fit | None:
    if variant.cpu is None:
        return None
    if variant.cpu != system.cpu:
        return Fit(f"CPU ({variant.cpu}) does not match system CPU ({system.cpu})")
    if variant.os != system.os:
        return Fit(f"OS ({variant.os}) does not match system OS ({system.os})")
    return None


def _sdk_backend(variant: Variant, system: System) -> Fit | None:
    if variant.compute is not None:
        return _compute(variant, system)
    wanted = system.backend.name.value
    if variant.noarch is not None and variant.noarch != wanted:
        return Fit(f"backend ({variant.noarch}) does not match system backend ({wanted})")
    return None


def _framework(variant: Variant, system: System) -> Fit | None:
    if variant.kind is Kind.TORCH:
        if variant.version != system.torch_version:
            return Fit(
                f"Torch version ({_v(variant.version)}) does not match environment Torch version ({_v(system.torch_version)})"
            )
        if variant.cxx11 is not None and variant.cxx11 != system.cxx11_abi:
            return Fit(f"Torch CXX11 ABI ({variant.cxx11}) does not match environment Torch CXX11 ABI ({system.cxx11_abi})")
    elif variant.kind is Kind.STABLE_ABI:
        if system.torch_version is None or (variant.version or (0, 0)) > system.torch_version:
            return Fit(
                f"Torch stable ABI version ({_v(variant.version)}) is too new for environment Torch version "
                f"({_v(system.torch_version)})"
            )
    elif variant.kind is Kind.TVM_FFI and variant.version != system.tvm_ffi_version:
        return Fit(
            f"tvm-ffi version ({_v(variant.version)}) does not match environment tvm-ffi version ({_v(system.tvm_ffi_version)})"
        )
    return None


def _compute(variant: Variant, system: System) -> Fit | None:
    theirs, mine = variant.compute, system.backend
    assert theirs is not None
    # the torch the variant runs on: its backend's, or another's (the table's ``torch``)
    runs_on = torch_backend(theirs.name)
    # A minorCompatible backend's variants run on any system version with the same major and
    # a minor no newer than the system's (CUDA 12.6 kernels on CUDA 12.8); others need the exact version.
    if runs_on is mine.name and spec(runs_on).minor_compatible:
        theirs_v, mine_v = theirs.version or (0, 0), mine.version or (0, 0)
        if theirs_v[0] != mine_v[0] or theirs_v[1] > mine_v[1]:
            name = spec(runs_on).label or runs_on.value
            return Fit(f"{name} version ({_v(theirs_v)}) is not compatible with system {name} version ({_v(mine_v)})")
        return None
    if (runs_on, theirs.version) != (mine.name, mine.version):
        # the variant's backend as its name spells it (cu128, or cuda-12.8 in a new-style name)
        spelled = theirs.variant_str if variant.is_legacy else theirs.new_str
        return Fit(f"backend ({spelled}) does not match selected backend ({mine.variant_str})")
    if theirs.name is Backend.METAL and (system.macos_version is None or system.macos_version < METAL_MIN_MACOS):
        return Fit(
            f"Metal kernels require macOS {_fmt(METAL_MIN_MACOS)} or later, system macOS version is "
            + ("None" if system.macos_version is None else ".".join(map(str, system.macos_version)))
        )
    return None


def _fits_some_backend(variant: Variant, system: System) -> Fit:
    """``fits`` for the backend the variant asks for, when ``system`` supports it (a CUDA
    torch also runs CPU variants); else the answer for the system's own backend."""
    wanted = torch_backend(variant.compute.name).value if variant.compute is not None else None
    if wanted is not None and wanted in system.supported_backends:
        return fits(variant, select_backend(system, wanted))
    return fits(variant, system)


def importable(variant: Variant, system: System) -> Fit:
    """Whether the torch ``system`` describes can import ``variant`` (for the import check)."""
    if variant.is_noarch:
        return FITS
    if system.torch_version is None:
        return Fit("the checking Python has no importable torch")
    return _fits_some_backend(variant, system)


def buildable(variant: Variant, system: System) -> Fit:
    """Whether a toolchain whose torch ``system`` describes can build ``variant``.

    For a backend no toolchain here compiles (ROCm, XPU, Metal ...) only the framework
    must fit: the driver then writes the build files and says the toolchain is missing."""
    if variant.is_noarch:
        return FITS
    if variant.compute is None:
        return Fit("a backend-agnostic SDK variant is not built by kernel-builder")
    backend = variant.compute.name
    if not spec(backend).compilable_here:
        return _first(variant, system, _framework)
    fit = _fits_some_backend(variant, system)
    if fit and spec(backend).versioned and variant.compute.version != system.backend.version:
        return Fit(f"{backend.value} {_fmt(variant.compute.version)} is not the toolchain torch's {system.backend}")
    return fit


def compilable_here(variant: Variant) -> bool:
    """Whether a toolchain for ``variant``'s backend and platform exists on these machines
    (Linux, CPU or CUDA); noarch variants compile nothing."""
    if variant.is_noarch:
        return True
    if variant.compute is None:
        return False
    return spec(variant.compute.name).compilable_here and variant.os == "linux"
