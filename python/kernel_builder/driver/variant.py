"""Build one variant: generate → compile → lay out → metadata + digest → check → publish.

This is what each Nix derivation runs (through ``run_variant``) and what
``kernel-builder build --local`` runs per variant. Its input is one ``driver.job.VariantJob``
(the kernel source, the variant name, the toolchain, the options, the sandbox); the output
is ``OUT/<variant>/``, complete or absent.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

import attrs

from kernel_builder.backends import backend_module
from kernel_builder.config import load
from kernel_builder.config.loading import emit_warnings, read_file
from kernel_builder.config.portability import refuse_host_specific_flags
from kernel_builder.config.model import Backend, Build
from kernel_builder.tree.digest import compute_digest
from kernel_builder.errors import BuildError
from kernel_builder._files import write_atomic
from kernel_builder.tree.layout import clean_stale_staging, publish, staging_dir
from kernel_builder.tree.metadata import BUILD_LAYOUTS, GitStatus, Metadata, Provenance, current_provenance
from kernel_builder.driver import cpp_deps, generate, rust, tvm_ffi
from kernel_builder.driver.assemble import copy_python_files, strip_runpath
from kernel_builder.tree import symbols as symbols_json
from kernel_builder.tree import ziplayout
from kernel_builder.tree.checks import MANYLINUX, check_variant, manylinux_violations, objects_using, start_import_check
from kernel_builder.driver.compile import compile_module, write_project
from kernel_builder.driver.generate import CompilePlan
from kernel_builder.backends.cuda_archs import supported_from_nvcc
from kernel_builder.driver.job import ToolchainInputs, VariantJob
from kernel_builder.driver.ops_id import ops_identifier, unique_id
from kernel_builder.driver.scratch import Scratch, build_dir, scratch_dir
from kernel_builder.pyenv import Toolchain, probe_cuda, probe_toolchain
from kernel_builder.variants.compat import buildable, compilable_here
from kernel_builder.variants.names import Kind, Variant, parse
from kernel_builder.variants.system import toolchain_system

__all__ = [
    "VariantResult", "build_variant", "make_plan", "read_build"]

log = logging.getLogger(__name__)



@attrs.frozen
class VariantResult:
    """A finished variant: where it is, its ops id and archs, check warnings/notes, the time."""

    variant: str
    path: Path
    ops_id: str
    archs: tuple[str, ...] | None
    warnings: tuple[str, ...]
    seconds: float
    notes: tuple[str, ...] = ()


def _check_toolchain(
    variant: Variant, toolchain: Toolchain, given: ToolchainInputs, tvm: tvm_ffi.TvmFfi | None = None,
) -> None:
    """Refuse a toolchain that cannot build ``variant`` (``variants.compat.buildable``);
    a cross toolchain builds for its target (``given.target``), with the build Python's
    torch. A tvm-ffi variant must also match the tvm-ffi it compiles against (``tvm``)."""
    system = toolchain_system(toolchain, given.target.platform)
    if tvm is not None:
        system = attrs.evolve(system, tvm_ffi_version=tvm.major_minor)
    fit = buildable(variant, system)
    if not fit:
        raise BuildError(
            f"variant {variant} cannot be built with the toolchain Python {toolchain.python} "
            f"(torch {toolchain.torch_version}{'' if toolchain.cuda is None else ', CUDA ' + toolchain.cuda}): {fit.reason}",
            hint="pass --toolchain-python with a torch that fits the variant, or build the variant that matches it "
            "(`kernel-builder list-variants`)",
        )


def _provenance(source: Path, kernel_commit: str | None, kernel_dirty: bool) -> Provenance:
    if kernel_commit:
        try:
            return current_provenance(kernel=GitStatus(kernel_commit, kernel_dirty))
        except ValueError as exc:
            raise BuildError(f"--kernel-commit: {exc}", hint="pass the full 40-hex commit id") from None
    return current_provenance(source)


@attrs.frozen
class _Subject:
    """What one build makes: the kernel's build.toml, the variant, its ids and layout."""

    build: Build
    variant: Variant
    ops_id: str
    uid: str
    is_arch: bool
    layout: str  # files | zip


def read_build(job: VariantJob) -> Build:
    """The kernel's build.toml, read once per derivation step: its warnings logged, and for
    a redistributable (pinned) variant every host-specific flag refused."""
    parsed = read_file(job.source)
    emit_warnings(parsed.warnings)
    if job.toolchain.pinned:
        refuse_host_specific_flags(parsed, str(job.source / "build.toml"))
    return parsed.build


def build_variant(job: VariantJob, *, build: Build | None = None) -> VariantResult:
    """Build ``job.variant`` of the kernel in ``job.source`` into ``job.out/<variant>``.

    ``build`` is the kernel's parsed build.toml when the caller holds it already.
    ``job.options`` (``driver.job.Options``): ``import_check=False`` skips importing it
    (upstream's ``doGetKernelCheck = false``); ``cuda_capabilities`` narrows a CUDA
    variant's archs (``--cuda-capabilities``, for a faster local iteration); the metadata
    records it, and ``upload`` refuses such a tree. ``work_dir`` (``build --local``):
    compile in the kept ``work_dir/<variant>`` (an incremental build, ``scratch.build_dir``)
    instead of a fresh scratch directory; ``clean`` empties it first.
    ``prebuilt_module`` is a link output of the per-object build (``driver.units``: the
    module and its ``module.json``): the variant is assembled from it, nothing is compiled.
    ``build_layout`` (``files`` or ``zip``, ``build --layout``) overrides build.toml's
    ``[general] build-layout``: with ``zip`` the package goes into ``<id>.zip``
    (``tree.ziplayout``), and the import check loads it from there."""
    started = time.monotonic()
    source, out, options = job.source, job.out, job.options
    build = build or load(source)
    try:
        variant = parse(job.variant)
    except ValueError as exc:
        raise BuildError(str(exc), hint="run `kernel-builder list-variants` to see valid names") from None
    backend = variant.backend
    if backend not in {b.value for b in build.general.backends}:
        raise BuildError(
            f"variant {variant}: backend {backend} is not in [general] backends {[b.value for b in build.general.backends]}"
        )
    if (variant.kind is Kind.TVM_FFI) != build.is_tvm_ffi:
        expected = "a tvm-ffi name (tvm-ffi<MM>-…)" if build.is_tvm_ffi else "a torch name"
        raise BuildError(
            f"variant {variant} does not match build.toml: this kernel's variants have {expected}",
            hint="run `kernel-builder list-variants` to see this kernel's variants",
        )
    is_arch = build.is_arch_for(Backend(backend))
    if is_arch == (variant.kind is Kind.NOARCH):
        expected = "an arch name (torch<MM>-…)" if is_arch else f"torch-{backend}"
        raise BuildError(
            f"variant {variant} does not match build.toml: for backend {backend} the variant is {expected}",
            hint="run `kernel-builder list-variants` to see this kernel's variants",
        )
    layout = options.build_layout or build.build_layout.value
    if layout not in BUILD_LAYOUTS:
        raise BuildError(f"unknown build layout {layout!r}; expected one of {', '.join(BUILD_LAYOUTS)}")
    uid = unique_id(source, override=options.uid)
    ops_id = ops_identifier(build.python_name, backend, uid)
    subject = _Subject(build, variant, ops_id, uid, is_arch, layout)
    log.info(f"building {variant} ({ops_id})")
    clean_stale_staging(out)  # left by a killed build
    staged = staging_dir(out, variant.name)
    importer = None
    # The stub libcuda.so.1 of a CUDA build (generate.DRIVER_STUB_FILE), kept past the
    # scratch directory for the import check: a module that calls the driver API loads here.
    stub_dir = Path(tempfile.mkdtemp(prefix="kb-driver-stub-"))
    target = job.toolchain.target.platform
    import_check = options.import_check
    import_python = job.toolchain.python
    if target is not None and import_check:
        # This machine's Python cannot load a module of another machine; the target's, under
        # emulation, can.
        import_python = job.toolchain.target.python or ""
        if not import_python:
            log.warning(f"{variant}: no import check: the module is for {target.system} (cross-built) "
                        "and the toolchain has no emulated Python for it")
            import_check = False
        else:
            log.info(f"{variant}: import check under emulation: {target.system} Python {import_python}")
    try:
        if import_check:
            # a tvm-ffi variant loads through the tvm_ffi it was built against
            extra = (str(tvm_ffi.locate(job.toolchain.python, dict(job.toolchain.environ)).site),) if build.is_tvm_ffi else ()
            importer = start_import_check(import_python, extra_paths=extra, environ=job.toolchain.environ)  # imports torch while we compile
        # Noarch variants compile nothing and need no scratch directory.
        scratch_context = (
            contextlib.nullcontext() if not is_arch or options.prebuilt_module is not None
            else build_dir(build, source, options.work_dir / variant.name, clean=options.clean) if options.work_dir is not None
            else scratch_dir(build, source, variant.name, ops_id, keep=options.keep_scratch)
        )
        with scratch_context as scratch:
            metadata = _assemble(subject, job, staged, scratch, stub_dir)
            if options.keep_scratch and scratch is not None and options.work_dir is None:
                log.info(f"scratch kept at {scratch.path}")
        report = check_variant(
            staged,
            python=import_python if import_check else None,
            python_platform=target,
            pyext=build.pyext,
            python_name=build.python_name,
            strict_manylinux=options.strict_manylinux,
            variant_name=variant.name,
            import_process=importer,
            driver_stub=_kept_stub(stub_dir),
        )
        for warning in report.warnings:
            log.warning("%s", warning)
        for note in report.notes:
            log.info(f"{variant}: {note}")
        metadata = _save_symbols(staged, metadata, report.symbols, variant)
        final_dir = out / variant.name
        publish(staged, final_dir)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        if importer is not None and importer.poll() is None:
            importer.kill()
            importer.communicate()
        raise
    finally:
        shutil.rmtree(stub_dir, ignore_errors=True)
    seconds = time.monotonic() - started
    log.info(f"built {variant} in {seconds:.1f}s -> {final_dir}")
    return VariantResult(
        variant.name, final_dir, ops_id, metadata.backend.archs, report.warnings, seconds, report.notes
    )


def _narrowed(subject: _Subject, capabilities: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The CUDA archs ``--cuda-capabilities`` narrows an arch CUDA variant to (else None)."""
    narrows = backend_module(subject.variant.backend).narrows_capabilities
    return capabilities if narrows and subject.is_arch and capabilities else None


def _assemble(subject: _Subject, job: VariantJob, staged: Path, scratch: Scratch | None, stub_dir: Path | None) -> Metadata:
    """Fill ``staged`` with the package files, ``_ops.py``, the module and metadata + digest;
    a CUDA build's stub libcuda.so.1 goes to ``stub_dir`` (for the import check). With the
    ``zip`` layout the package files (``_ops.py`` included) are packed into ``<id>.zip``."""
    build, backend, ops_id, options = subject.build, subject.variant.backend, subject.ops_id, job.options
    provenance = _provenance(job.source, options.kernel_commit, options.kernel_dirty)
    narrowed = _narrowed(subject, options.cuda_capabilities)
    if narrowed:
        provenance = attrs.evolve(provenance, cuda_capabilities=narrowed)
    prebuilt = options.prebuilt_module if subject.is_arch else None
    copy_python_files(job.source / build.ext_dir / build.python_name, staged, build.pyext)
    metadata = Metadata.for_backend(build, ops_id, backend, provenance=provenance)
    if prebuilt is not None:
        archs = _install_prebuilt(prebuilt, ops_id, staged / module_name(build, ops_id), options.strict_manylinux)
        _keep_stub(prebuilt, stub_dir)
        if archs:
            metadata = metadata.with_archs(list(archs))
        ops_py = _render_ops_py(build, backend, ops_id)
    elif scratch is not None:
        toolchain = probe_toolchain(job.toolchain.python)
        archs = _compile(subject, job, scratch, toolchain, staged)
        _keep_stub(scratch.path / "cmake-build", stub_dir)
        if archs:
            metadata = metadata.with_archs(list(archs))
        ops_py = _render_ops_py(build, backend, ops_id)
    else:
        ops_py = generate.render_noarch_ops_py(name=build.name, python_name=build.python_name, uid=subject.uid)
    (staged / "_ops.py").write_text(ops_py)
    shutil.rmtree(staged / "__pycache__", ignore_errors=True)
    if subject.layout == "zip":
        ziplayout.pack(staged, ops_id)
        metadata = attrs.evolve(metadata, build_layout="zip")
    metadata = metadata.with_digest(compute_digest(staged))
    metadata.write(staged / "metadata.json")
    return metadata


def _save_symbols(staged: Path, metadata: Metadata, api: dict | None, variant: Variant) -> Metadata:
    """Write the import check's symbols.json (docs/metadata.md) into the variant, then the
    digest again, which now covers it. Without an import check there is none to write."""
    if api is None:
        log.info(f"{variant}: no {symbols_json.FILE_NAME}: the import check did not run")
        return metadata
    write_atomic(staged / symbols_json.FILE_NAME, symbols_json.dumps(api))
    metadata = metadata.with_digest(compute_digest(staged))
    metadata.write(staged / "metadata.json")
    return metadata


def _keep_stub(directory: Path, stub_dir: Path | None) -> None:
    stub = directory / generate.DRIVER_STUB_FILE
    if stub_dir is not None and stub.is_file():
        shutil.copyfile(stub, stub_dir / generate.DRIVER_STUB_FILE)


def _kept_stub(stub_dir: Path) -> Path | None:
    stub = stub_dir / generate.DRIVER_STUB_FILE
    return stub if stub.is_file() else None


def _render_ops_py(build: Build, backend: str, ops_id: str) -> str:
    render = generate.render_tvm_ffi_ops_py if build.is_tvm_ffi else generate.render_ops_py
    return render(name=build.name, backend=backend, ops_id=ops_id)


def module_name(build: Build, ops_id: str) -> str:
    """The compiled module's file name in the variant: a Python extension (``.abi3.so``),
    or for a tvm-ffi kernel the plain library ``tvm_ffi.load_module`` opens (``.so``)."""
    return f"{ops_id}.so" if build.is_tvm_ffi else f"{ops_id}.abi3.so"


def make_plan(
    build: Build,
    variant: Variant,
    ops_id: str,
    scratch: Scratch,
    toolchain: Toolchain,
    *,
    given: ToolchainInputs,
    narrow_cuda: tuple[str, ...] | None = None,
) -> CompilePlan:
    """The compile plan of ``variant`` in ``scratch``: what the one-variant build compiles
    and what ``driver.plan`` splits into one command per translation unit. ``toolchain``
    is the probed toolchain Python, ``given`` what the job says of the toolchain (its
    cross target, prefix maps, and the environment the pinned inputs are found in)."""
    tvm = tvm_ffi.locate(toolchain.python, dict(given.environ)) if build.is_tvm_ffi else None
    _check_toolchain(variant, toolchain, given, tvm)
    backend = variant.backend
    stable = variant.version if variant.kind is Kind.STABLE_ABI else None
    cuda_version = None
    supported = None
    driver_symbols: tuple[str, ...] = ()
    if backend == "cuda":
        toolkit = probe_cuda()
        cuda_version = toolkit.version
        cuda_h = Path(toolkit.home) / "include" / "cuda.h"
        if cuda_h.is_file():  # the driver API's declarations: the stub libcuda.so.1 defines them
            driver_symbols = generate.driver_api_symbols(cuda_h.read_text(errors="replace"))

        supported = supported_from_nvcc(toolkit.list_gpu_code)
    deps = cpp_deps.resolve(build, backend, python=toolchain.python, site_packages=toolchain.site_packages,
                            environ=given.environ)
    prefix_maps = (
        *given.prefix_maps, *deps.prefix_maps,
        *(() if tvm is None else (f"-ffile-prefix-map={tvm.site.as_posix()}=/tvm-ffi",)),
    )
    # Rust components: cargo builds each crate (vendored crates only, offline) before CMake
    # links the module; their static libraries are linked whole.
    rust_libraries = rust.build_components(
        build, backend, scratch.src, scratch.path / "cargo", environ=given.environ,
        prefix_maps=tuple(tuple(m.removeprefix("-ffile-prefix-map=").split("=", 1)) for m in prefix_maps
                          if m.startswith("-ffile-prefix-map=") and "=" in m.removeprefix("-ffile-prefix-map=")),
    )
    plan = generate.plan_compile(
        build,
        variant=variant.name,
        backend=backend,
        ops_id=ops_id,
        source_dir=scratch.src,
        scratch_dir=scratch.path,
        torch_version=toolchain.torch_major_minor,
        stable_abi=stable,
        cuda_version=cuda_version or toolchain.cuda_major_minor,
        cuda_supported=supported,
        extra_system_includes=backend_module(backend).toolchain_includes(toolchain),
        # Set by the pinned toolchain: its store paths must not end up in the module.
        toolchain_prefix_maps=prefix_maps,
        dependency_includes=deps.includes,
        dependency_defines=deps.defines,
        tvm_ffi=tvm,
        narrow_cuda=narrow_cuda,
        driver_symbols=driver_symbols,
        rust_libraries=rust_libraries,
    )
    for warning in plan.warnings:
        log.warning("%s", warning)
    if not compilable_here(variant):
        project = write_project(plan, scratch.path)
        scratch.keep = True  # the generated build files are the useful output here
        raise BuildError(
            f"toolchain for {backend} is not available on this machine (variant {variant}); "
            f"the generated build files are in {project}",
            hint=f"build the {backend} variants on a machine with the {backend} toolchain, or pick --backend cpu/cuda",
        )
    return plan


def _compile(subject: _Subject, job: VariantJob, scratch: Scratch, toolchain: Toolchain, staged: Path) -> tuple[str, ...]:
    build, ops_id = subject.build, subject.ops_id
    plan = make_plan(build, subject.variant, ops_id, scratch, toolchain, given=job.toolchain,
                     narrow_cuda=_narrowed(subject, job.options.cuda_capabilities))
    try:
        library = compile_module(plan, toolchain, scratch.path, job)
    except BuildError:
        scratch.keep = True  # the error names its build.log (outside Nix; inside, the sandbox goes anyway)
        raise
    if job.options.strict_manylinux:
        _refuse_new_glibc_symbols(library, scratch.path)
    _install_module(library, staged / module_name(build, ops_id))
    return plan.archs


def _install_prebuilt(linked: Path, ops_id: str, target: Path, strict_manylinux: bool) -> tuple[str, ...]:
    """Install the module of a per-object build's link output as ``target``; give back its archs."""
    try:
        facts = json.loads((linked / "module.json").read_text())
    except (OSError, ValueError) as exc:
        raise BuildError(f"--prebuilt-module {linked}: no readable module.json ({exc})",
                         hint="pass the output of the link derivation (nix/lib/builders/link.nix)") from None
    if facts.get("ops_id") != ops_id:
        raise BuildError(
            f"--prebuilt-module {linked} was linked as {facts.get('ops_id')!r}, but this variant's ops id is {ops_id!r}",
            hint="plan, objects and link must get the same --unique-id as the variant",
        )
    library = linked / facts["module"]
    if strict_manylinux:
        _refuse_new_glibc_symbols(library, linked)
    _install_module(library, target)
    return tuple(facts.get("archs") or ())


def _install_module(library: Path, target: Path) -> None:
    shutil.copyfile(library, target)
    os.chmod(target, 0o755)
    strip_runpath(target)


def _refuse_new_glibc_symbols(library: Path, build_dir: Path) -> None:
    """With the pinned (manylinux_2_28) toolchain, symbols newer than 2.28 are a build error
    that names each symbol and the objects that use it (the build tree is still here)."""
    symbols = manylinux_violations(library)
    if not symbols:
        return
    users = objects_using(build_dir, symbols)
    lines = [f"  {s}: used by {', '.join(users[s]) or 'an object of the link (not found by nm)'}" for s in symbols]
    raise BuildError(
        f"{library.name} needs glibc/libstdc++ symbols newer than {MANYLINUX} allows:\n" + "\n".join(lines),
        hint="use an API glibc 2.28 already has in the objects named above (e.g. pthread_* and dlopen moved "
        "into libc in glibc 2.34 and got new versions there)",
    )
