"""Generated build files for one arch variant: a compile plan, then CMake text.

``plan_compile`` is a pure function of the build.toml model, the variant and the
toolchain facts; ``render`` turns the plan into the files of a scratch CMake project
(``CMakeLists.txt`` and ``include/registration.h``). Nothing here runs a compiler.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path

import attrs
import jinja2

from kernel_builder.backends import ArchContext, backend_module, compiled_suffixes, cuda_archs, spec
from kernel_builder.backends.base import CMAKE_SWITCHES
from kernel_builder.config.model import Backend, Build, Torch, TvmFfi
from kernel_builder.driver.tvm_ffi import TvmFfi as TvmFfiInstall
from kernel_builder.errors import BuildError

__all__ = [
    "CompilePlan",
    "plan_compile",
    "render",
    "render_ops_py",
    "render_tvm_ffi_ops_py",
    "render_noarch_ops_py",
    "backend_defines",
    "stable_abi_define",
    "template_text",
    "driver_api_symbols",
    "render_driver_stub",
    "DRIVER_STUB_TARGET",
    "DRIVER_STUB_FILE",
]

# The static library of libstdc++ members a tvm-ffi module carries itself (glibcxx_compat.cpp).
COMPAT_TARGET = "kb_glibcxx_compat"
# The CUDA driver's stand-in (libcuda.so.1 by soname) a CUDA module links against, so that
# a module calling the driver API gets NEEDED libcuda.so.1 and the real driver at load.
DRIVER_STUB_TARGET = "kb_cuda_driver_stub"
DRIVER_STUB_FILE = "libcuda.so.1"  # in the CMake build directory
# Rust components: the linker's version script that keeps the Rust standard library's
# (mangled) symbols out of the module's exports, and the glibc stat wrappers its standard
# library needs under manylinux_2_28 (also the one C++ source of an all-Rust module).
RUST_EXPORTS_FILE = "rust_exports.map"
RUST_COMPAT_FILE = "rust_glibc_compat.cpp"
_STUB_LIBRARY_ERROR = 34  # CUDA_ERROR_STUB_LIBRARY: what NVIDIA's own stub answers to every call
# The suffixes of compiled sources: the backend table's (nix/lib/builders/per-object.nix reads the same)
_COMPILED = compiled_suffixes()


@attrs.frozen
class CompilePlan:
    """Everything the generated CMake project needs, as plain values."""

    variant: str
    name: str
    ops_id: str
    backend: str
    cxx_standard: int
    sources: tuple[str, ...]
    defines: tuple[str, ...]
    includes: tuple[str, ...]
    system_includes: tuple[str, ...] = ()
    cxx_flags: tuple[str, ...] = ()
    cuda_flags: tuple[str, ...] = ()
    source_options: tuple[tuple[str, tuple[str, ...]], ...] = ()
    archs: tuple[str, ...] = ()
    cuda_arch_list: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    tvm_ffi: bool = False  # a [tvm-ffi] kernel: a plain shared library linked against link_libraries
    link_libraries: tuple[str, ...] = ()
    # CUDA: every function cuda.h declares (``driver_api_symbols``), defined by the stub
    # library the module links with --as-needed; empty: no stub (other backends).
    driver_symbols: tuple[str, ...] = ()
    # Rust components (edition 6 rust-cpu): cargo's static libraries, linked whole into the
    # tvm-ffi module (driver.rust); empty for C++-only kernels.
    rust_libraries: tuple[str, ...] = ()

    @property
    def generated_targets(self) -> tuple[str, ...]:
        """CMake targets built from the generated project's own sources (not the kernel's):
        the per-object build's plan step builds them, the link uses them."""
        return (COMPAT_TARGET,) * self.tvm_ffi + (DRIVER_STUB_TARGET,) * bool(self.driver_symbols)


def template_text(name: str) -> str:
    return resources.files("kernel_builder.driver").joinpath("templates", name).read_text()


def backend_defines(backend: str) -> tuple[str, ...]:
    """The macros a kernel's sources see for their backend (the source contract; the
    backend table in ``kernel_builder.backends``)."""
    return spec(backend).defines


def stable_abi_define(version: tuple[int, int]) -> str:
    """``TORCH_TARGET_VERSION`` = ``(major << 56) | (minor << 48)`` as a hex literal."""
    return f"TORCH_TARGET_VERSION=0x{(version[0] << 56) | (version[1] << 48):016x}"


def _abs(source_dir: Path, rel: str) -> str:
    return (source_dir / rel).as_posix()


def plan_compile(
    build: Build,
    *,
    variant: str,
    backend: str,
    ops_id: str,
    source_dir: Path,
    scratch_dir: Path,
    torch_version: tuple[int, int],
    stable_abi: tuple[int, int] | None = None,
    cuda_version: tuple[int, int] | None = None,
    cuda_supported: frozenset[cuda_archs.CudaArch] | None = None,
    extra_system_includes: tuple[str, ...] = (),
    toolchain_prefix_maps: tuple[str, ...] = (),
    dependency_includes: tuple[str, ...] = (),
    dependency_defines: tuple[str, ...] = (),
    narrow_cuda: tuple[str, ...] | None = None,
    tvm_ffi: TvmFfiInstall | None = None,
    driver_symbols: tuple[str, ...] = (),
    rust_libraries: tuple[Path, ...] = (),
) -> CompilePlan:
    """Sources, macros, include dirs and flags for ``backend``'s components of ``build``.

    ``dependency_*`` are the declared C++ dependencies' include dirs and macros
    (``driver.cpp_deps``); their prefix maps come with ``toolchain_prefix_maps``.
    ``narrow_cuda`` (``--cuda-capabilities``) keeps only those of each component's archs.
    ``tvm_ffi`` is the apache-tvm-ffi a ``[tvm-ffi]`` kernel compiles and links against
    (``driver.tvm_ffi``); its prefix map comes with ``toolchain_prefix_maps`` too.
    ``driver_symbols`` (CUDA) are the driver API's functions (``driver_api_symbols`` of the
    toolkit's cuda.h): the module links against a stub libcuda.so.1 that defines them.
    ``rust_libraries`` are the static libraries cargo built for the backend's Rust
    components (``driver.rust.build_components``), linked whole into the module."""
    framework = build.framework
    if not isinstance(framework, (Torch, TvmFfi)):
        raise BuildError(f"{variant}: only [torch] and [tvm-ffi] kernels are compiled; this kernel has {type(framework).__name__}")
    is_tvm_ffi = isinstance(framework, TvmFfi)
    if is_tvm_ffi and tvm_ffi is None:
        raise BuildError(f"{variant}: a [tvm-ffi] kernel needs the apache-tvm-ffi it compiles against (none was found)")
    components = build.kernels_for(Backend(backend))
    if not components:
        raise BuildError(
            f"{variant}: build.toml has no [kernel.*] component with backend = \"{backend}\"",
            hint=f"add a [kernel.NAME] table with backend = \"{backend}\" or build the torch-{backend} noarch variant",
        )
    sources: list[str] = []
    options: dict[str, tuple[str, ...]] = {}
    includes: list[str] = [(scratch_dir / "include").as_posix()]
    if (source_dir / "csrc").is_dir():  # the reference builder puts csrc/ on every source's path
        includes.append((source_dir / "csrc").as_posix())
    for rel in framework.src:
        if rel.endswith(_COMPILED):
            sources.append(_abs(source_dir, rel))
            if framework.cxx_flags:
                options[_abs(source_dir, rel)] = tuple(framework.cxx_flags)
    for inc in framework.include or ():
        includes.append(_abs(source_dir, inc))
    # The backend's module answers its questions (kernel_builder.backends): architectures,
    # per-source flags, the device compiler's flags.
    module = backend_module(backend)
    context = ArchContext(cuda_version=cuda_version, cuda_supported=cuda_supported, narrow_cuda=narrow_cuda)
    all_archs: set[object] = set()
    # Each .cu file is compiled for its own component's archs, as upstream's
    # set_gencode_flags_for_srcs does: an sm_100-only component must not meet sm_80.
    source_archs: dict[str, set[object]] = {}
    warnings: list[str] = []
    for kname, kernel in sorted(components.items()):
        for inc in kernel.include or ():
            includes.append(_abs(source_dir, inc))
        choice = module.component_archs(kname, kernel, context)
        all_archs.update(choice.archs)
        warnings.extend(choice.warnings)
        for rel in kernel.src:
            if not rel.endswith(_COMPILED):
                continue
            path = _abs(source_dir, rel)
            sources.append(path)
            if rel.endswith((".cu", ".hip")):
                flags = tuple(kernel.cuda_flags or ()) + tuple(kernel.hip_flags or ()) + module.device_source_flags(rel)
                if module.tracks_source_archs:
                    source_archs.setdefault(path, set()).update(choice.archs)
            else:
                flags = tuple(kernel.cxx_flags or ()) + tuple(kernel.sycl_flags or ())
            if flags:
                options[path] = flags
    for path, extra in module.source_options(sources, source_archs, all_archs).items():
        options[path] = (*options.get(path, ()), *extra)
    includes.extend(dependency_includes)
    # tvm-ffi's TVM_FFI_DLL_EXPORT_* macros read TVM_FFI_EXTENSION_NAME, as upstream's builder sets it
    extension = "TVM_FFI_EXTENSION_NAME" if is_tvm_ffi else "TORCH_EXTENSION_NAME"
    defines = [f"{extension}={ops_id}", *backend_defines(backend), *dependency_defines]
    if stable_abi is not None:
        defines.append(stable_abi_define(stable_abi))
    prefix_maps = (
        f"-ffile-prefix-map={source_dir.as_posix()}=/kernel-source",
        f"-ffile-prefix-map={scratch_dir.as_posix()}=/kernel-build",
        *toolchain_prefix_maps,
    )
    cxx_flags = ("-fno-gnu-unique", *prefix_maps)
    cuda_flags = module.device_compiler_flags(prefix_maps)
    system_includes = tuple(extra_system_includes)
    link_libraries: tuple[str, ...] = ()
    if tvm_ffi is not None and is_tvm_ffi:
        system_includes += (tvm_ffi.include.as_posix(),)
        link_libraries = (tvm_ffi.library.as_posix(),)
    return CompilePlan(
        variant=variant,
        name=build.name,
        ops_id=ops_id,
        backend=backend,
        # tvm-ffi's headers need C++17 (its CMake package asks for cxx_std_17, upstream builds with it)
        cxx_standard=17 if is_tvm_ffi or torch_version < (2, 12) else 20,
        sources=tuple(dict.fromkeys(sources)),
        defines=tuple(defines),
        includes=tuple(dict.fromkeys(includes)),
        system_includes=system_includes,
        cxx_flags=cxx_flags,
        cuda_flags=cuda_flags,
        source_options=tuple(sorted(options.items())),
        archs=module.metadata_archs(all_archs),
        cuda_arch_list=module.arch_list(all_archs),
        warnings=tuple(warnings),
        tvm_ffi=is_tvm_ffi,
        link_libraries=link_libraries,
        driver_symbols=tuple(sorted(set(driver_symbols))) if module.links_driver_stub else (),
        rust_libraries=tuple(p.as_posix() for p in rust_libraries),
    )


def render(plan: CompilePlan) -> dict[str, str]:
    """The scratch project's files, relative path → text."""
    env = jinja2.Environment(keep_trailing_newline=True, undefined=jinja2.StrictUndefined, autoescape=False)
    cmake = env.from_string(template_text("CMakeLists.txt.j2")).render(
        variant=plan.variant,
        name=plan.name,
        ops_id=plan.ops_id,
        **{switch: switch in backend_module(plan.backend).cmake_switches for switch in CMAKE_SWITCHES},
        archs=plan.archs,
        cxx_standard=plan.cxx_standard,
        sources=plan.sources,
        defines=plan.defines,
        includes=plan.includes,
        system_includes=plan.system_includes,
        cxx_flags=plan.cxx_flags,
        cuda_flags=plan.cuda_flags,
        source_options=plan.source_options,
        tvm_ffi=plan.tvm_ffi,
        link_libraries=plan.link_libraries,
        compat_target=COMPAT_TARGET,
        driver_stub=DRIVER_STUB_TARGET if plan.driver_symbols else None,
        rust_libraries=plan.rust_libraries,
        rust_compat=RUST_COMPAT_FILE if plan.rust_libraries else None,
    )
    files = {"CMakeLists.txt": cmake, os.path.join("include", "registration.h"): template_text("registration.h")}
    if plan.tvm_ffi:
        files["glibcxx_compat.cpp"] = template_text("glibcxx_compat.cpp")
    if plan.driver_symbols:
        files["cuda_driver_stub.cpp"] = render_driver_stub(plan.driver_symbols)
    if plan.rust_libraries:
        files[RUST_EXPORTS_FILE] = template_text(RUST_EXPORTS_FILE)
        files[RUST_COMPAT_FILE] = template_text(RUST_COMPAT_FILE)
    return files


_DECLARED = re.compile(r"\bCUDAAPI\s+(cu[A-Za-z0-9_]+)\s*\(")
_RENAMED = re.compile(r"^\s*#\s*define\s+cu[A-Za-z0-9_]+\s+(cu[A-Za-z0-9_]+)\s*$", re.MULTILINE)
_PER_THREAD = re.compile(r"__CUDA_API_PT(DS|SZ)\(\s*(cu[A-Za-z0-9_]+)\s*\)")


def driver_api_symbols(cuda_h: str) -> tuple[str, ...]:
    """The names the driver library exports for what ``cuda.h`` declares: each declared
    function, the versioned name a ``#define`` maps it to (``cuMemAlloc`` -> ``cuMemAlloc_v2``)
    and the per-thread-stream twins (``_ptds``/``_ptsz``). Extra names cost nothing: the
    stub only needs every name a module may reference."""
    names = set(_DECLARED.findall(cuda_h)) | set(_RENAMED.findall(cuda_h))
    for kind, name in _PER_THREAD.findall(cuda_h):
        names.update((name, f"{name}_pt{kind.lower()}"))
    return tuple(sorted(names))


def render_driver_stub(symbols: tuple[str, ...]) -> str:
    """C++ source of the stub libcuda.so.1: every symbol a function that answers
    CUDA_ERROR_STUB_LIBRARY, as NVIDIA's stub does. Linking against it gives a module that
    uses one of them NEEDED libcuda.so.1 (the real driver at load); the import check loads
    it where no driver exists."""
    lines = [
        "// Generated by kernel-builder: a stand-in for the CUDA driver (libcuda.so.1), linked",
        "// against and never shipped. Every function answers CUDA_ERROR_STUB_LIBRARY.",
        'extern "C" {',
        *(f"__attribute__((visibility(\"default\"))) int {name}() {{ return {_STUB_LIBRARY_ERROR}; }}" for name in symbols),
        "}",
    ]
    return "\n".join(lines) + "\n"


def render_ops_py(*, name: str, backend: str, ops_id: str) -> str:
    env = jinja2.Environment(keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    return env.from_string(template_text("_ops.py.j2")).render(name=name, backend=backend, ops_id=ops_id)


def render_tvm_ffi_ops_py(*, name: str, backend: str, ops_id: str) -> str:
    env = jinja2.Environment(keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    return env.from_string(template_text("_ops_tvm_ffi.py.j2")).render(name=name, backend=backend, ops_id=ops_id)


def render_noarch_ops_py(*, name: str, python_name: str, uid: str) -> str:
    env = jinja2.Environment(keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    return env.from_string(template_text("_ops_noarch.py.j2")).render(name=name, python_name=python_name, uid=uid)
