"""What a derivation step receives: argv and the environment, read once into one value.

Each entry point a derivation runs (``python -m kernel_builder.driver.plan``, ``.units``,
``.run_variant``) calls ``parse`` first; ``build --local`` makes the same value with
``VariantJob.from_environ``. After that nothing under ``driver/`` or ``tree/`` reads the
environment (``tests/driver/test_variant_job.py`` holds every module to it): each function
gets the job, or the part of it that it needs.

    VariantJob   source, variant, out          argv: --source --variant --out
      .toolchain  ToolchainInputs              --toolchain-python, $toolchainProvider,
                                               $KERNEL_BUILDER_PREFIX_MAPS, the environment
        .target   Target                       $KERNEL_BUILDER_TARGET_SYSTEM, _TARGET_PYTHON
      .options    Options                      the other options; three default to
                                               $KERNEL_BUILDER_{STRICT_MANYLINUX,CUDA_CAPABILITIES,BUILD_LAYOUT}
      .sandbox    Sandbox                      $NIX_BUILD_TOP, $NIX_BUILD_CORES, $sandboxShell
    UnitJob      one step of the per-object build (deps, object, link, merge), its sandbox

The environment as a whole is kept (``ToolchainInputs.environ``) for what is handed on, not
read here: the environment CMake, the compilers, cargo and the import check run in (which
reads ``$KERNEL_BUILDER_IMPORT_PATH`` and ``$KERNEL_BUILDER_KERNEL_DEPS`` itself), and the
mapping in which ``cpp_deps``, ``tvm_ffi`` and ``rust`` find the pinned inputs a toolchain
provides (``$KERNEL_BUILDER_CPP_DEPS``, ``_TVM_FFI``, ``_RUST``; see docs/architecture.md).

One argv parser (``parser``) serves the three entry points. Kept on argparse and attrs, so a
step starts fast and needs nothing beyond the package.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import attrs

from kernel_builder.backends.cuda_archs import split_capabilities
from kernel_builder.errors import BuildError
from kernel_builder.tree.metadata import BUILD_LAYOUTS
from kernel_builder.variants.host import Platform

__all__ = [
    "ENTRY_POINTS", "ENV", "Options", "Sandbox", "Target", "ToolchainInputs", "UnitJob", "VariantJob", "parse", "parser",
]

Entry = Literal["plan", "run_variant", "units"]
ENTRY_POINTS: tuple[Entry, ...] = ("plan", "run_variant", "units")


class ENV:
    """The environment variables the job is made from (set by nix/lib/builders and
    nix/toolchains; ``kernel-builder build`` sets the option defaults)."""

    TARGET_SYSTEM = "KERNEL_BUILDER_TARGET_SYSTEM"  # pinned cross toolchains: the system the module is for
    TARGET_PYTHON = "KERNEL_BUILDER_TARGET_PYTHON"  # ... and the target's Python, under emulation (import check)
    PREFIX_MAPS = "KERNEL_BUILDER_PREFIX_MAPS"  # pinned toolchain: -ffile-prefix-map=... of its store paths
    PROVIDER = "toolchainProvider"  # pinned | host | unavailable (nix/toolchains)
    STRICT_MANYLINUX = "KERNEL_BUILDER_STRICT_MANYLINUX"  # "1": --strict-manylinux
    CUDA_CAPABILITIES = "KERNEL_BUILDER_CUDA_CAPABILITIES"  # default of --cuda-capabilities
    BUILD_LAYOUT = "KERNEL_BUILDER_BUILD_LAYOUT"  # default of --build-layout
    BUILD_TOP = "NIX_BUILD_TOP"  # set by Nix: the build's temporary directory
    BUILD_CORES = "NIX_BUILD_CORES"  # set by Nix: the cores the build may use (0: all)
    SHELL = "sandboxShell"  # the toolchain's shell, for the link's command


def _frozen_env(environ: Mapping[str, str]) -> Mapping[str, str]:
    return types.MappingProxyType(dict(environ))


@attrs.frozen
class Target:
    """The machine a cross toolchain builds for; ``platform`` None: this machine."""

    platform: Platform | None = None
    python: str | None = None  # the target's Python under emulation, for the import check

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Target:
        value = environ.get(ENV.TARGET_SYSTEM, "")
        if not value:
            return cls()
        cpu, _, os_name = value.partition("-")
        if not cpu or not os_name:
            raise BuildError(f"${ENV.TARGET_SYSTEM}={value!r} is not a Nix system", hint="expected e.g. aarch64-linux")
        return cls(Platform(cpu, os_name), environ.get(ENV.TARGET_PYTHON) or None)


@attrs.frozen
class ToolchainInputs:
    """The toolchain a step was given: its Python (with torch, CMake, Ninja), the provider
    that made it, the cross target, the prefix maps that keep its store paths out of the
    module, and the environment its tools run in (handed on whole, never read by the driver)."""

    python: str
    provider: str = "host"
    target: Target = Target()
    prefix_maps: tuple[str, ...] = ()
    environ: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_env, eq=False, repr=False)

    @property
    def pinned(self) -> bool:
        """A redistributable variant: build.toml may ask for nothing host-specific."""
        return self.provider == "pinned"

    @classmethod
    def from_environ(cls, python: str, environ: Mapping[str, str]) -> ToolchainInputs:
        return cls(
            python=python,
            provider=environ.get(ENV.PROVIDER) or "host",
            target=Target.from_environ(environ),
            prefix_maps=tuple(environ.get(ENV.PREFIX_MAPS, "").split()),
            environ=environ,
        )


@attrs.frozen
class Sandbox:
    """Where the step runs: inside a Nix build (``top`` set) or not."""

    top: str | None = None  # $NIX_BUILD_TOP
    cores: int | None = None  # $NIX_BUILD_CORES; None: not given, or 0 (all)
    shell: str = "/bin/sh"  # $sandboxShell, else /bin/sh

    @property
    def in_nix(self) -> bool:
        return bool(self.top)

    @property
    def temp(self) -> str:
        """The step's temporary directory: the build's in Nix, else the system's."""
        return self.top or tempfile.gettempdir()

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Sandbox:
        cores_text = environ.get(ENV.BUILD_CORES) or "0"
        try:
            cores = int(cores_text)
        except ValueError:
            raise BuildError(f"${ENV.BUILD_CORES}={cores_text!r} is not a number of cores",
                             hint="Nix sets it from the cores setting: a whole number, 0 for all") from None
        return cls(top=environ.get(ENV.BUILD_TOP) or None, cores=cores or None,
                   shell=environ.get(ENV.SHELL) or "/bin/sh")


@attrs.frozen
class Options:
    """How to build: what ``run_variant``'s options (and ``build --local``) ask for."""

    uid: str | None = None  # ops identifier suffix (default: git short rev, else a hash of build.toml)
    kernel_commit: str | None = None
    kernel_dirty: bool = False
    jobs: int | None = None  # parallel compile jobs (default: the sandbox's cores, else the CPU count)
    verbose: bool = False
    keep_scratch: bool = False
    strict_manylinux: bool = False
    import_check: bool = True
    cuda_capabilities: tuple[str, ...] | None = None  # narrow a CUDA variant's archs
    prebuilt_module: Path | None = attrs.field(default=None, converter=attrs.converters.optional(Path))  # a link output of the per-object build: assemble, compile nothing
    build_layout: str | None = None  # files | zip; None: build.toml's
    work_dir: Path | None = attrs.field(default=None, converter=attrs.converters.optional(Path))  # build --local: compile in the kept work_dir/<variant>
    clean: bool = False  # ... emptied first

    def __attrs_post_init__(self) -> None:
        if self.build_layout is not None and self.build_layout not in BUILD_LAYOUTS:
            raise BuildError(f"unknown build layout {self.build_layout!r}; expected one of {', '.join(BUILD_LAYOUTS)}",
                             hint=f"--build-layout (or ${ENV.BUILD_LAYOUT}) is files or zip")
        if self.kernel_dirty and not self.kernel_commit:
            raise BuildError("--kernel-dirty needs --kernel-commit")


@attrs.frozen
class VariantJob:
    """One variant step: plan it (``driver.plan``) or build it (``driver.run_variant``)."""

    source: Path
    variant: str
    out: Path
    toolchain: ToolchainInputs
    options: Options = Options()
    sandbox: Sandbox = Sandbox()

    @property
    def jobs(self) -> int:
        """Parallel compile jobs: ``--jobs``, else the sandbox's cores, else the CPU count."""
        return self.options.jobs or self.sandbox.cores or os.cpu_count() or 1

    @classmethod
    def from_environ(
        cls, source: str | os.PathLike[str], variant: str, out: str | os.PathLike[str], *, toolchain_python: str,
        options: Options = Options(), environ: Mapping[str, str] | None = None,
    ) -> VariantJob:
        """The job of ``build --local`` (and the entry points): the toolchain and sandbox
        from ``environ`` (this process's environment when None), the options as given."""
        environ = os.environ if environ is None else environ
        return cls(
            source=Path(source).resolve(), variant=variant, out=Path(out).resolve(),
            toolchain=ToolchainInputs.from_environ(toolchain_python, environ),
            options=options, sandbox=Sandbox.from_environ(environ),
        )


@attrs.frozen
class UnitJob:
    """One step of the per-object build (``driver.units``); which fields count depends on
    ``step`` (``parser("units")`` says which option each is)."""

    step: str  # deps | object | link | merge
    out: Path
    sandbox: Sandbox
    plan: Path | None = None
    uid: str | None = None  # the kernel's unique id (``-`` as ``_``), for the plan's placeholder
    sources: Path | None = None  # deps
    only: str | None = None  # deps --unit
    unit_file: Path | None = None  # deps --unit-file
    aliases: tuple[tuple[str, str], ...] = ()  # deps --alias
    unit: Path | None = None  # object --unit (a measured unit's deps.json entry)
    files: Path | None = None
    label: str = ""
    source: str | None = None  # object --plan: the unit, its contents --file, the other files --headers
    file: Path | None = None
    headers: Path | None = None
    objects: tuple[Path, ...] = ()  # link
    parts: tuple[Path, ...] = ()  # merge


def _variant_options(p: argparse.ArgumentParser, *, out_help: str, uid_help: str) -> None:
    """The options ``plan`` and ``run_variant`` share."""
    p.add_argument("--source", required=True, help="kernel source directory (holds build.toml)")
    p.add_argument("--variant", required=True, help="variant name, e.g. torch213-cxx11-cpu-x86_64-linux or torch-cpu")
    p.add_argument("--out", required=True, help=out_help)
    p.add_argument("--toolchain-python", required=True, help="Python with the variant's torch, cmake and ninja")
    p.add_argument("--unique-id", help=uid_help)
    p.add_argument(
        "--cuda-capabilities",
        help="comma-separated: build a CUDA variant only for these of its archs (recorded in metadata; "
        f"default: ${ENV.CUDA_CAPABILITIES}, which `kernel-builder build --cuda-capabilities` sets)",
    )


def _run_variant_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kernel-commit", help="kernel source git commit recorded in provenance (40 hex)")
    p.add_argument("--kernel-dirty", action="store_true", help="the kernel source had uncommitted changes")
    p.add_argument("--jobs", type=int, help="parallel compile jobs (default: NIX_BUILD_CORES or CPU count)")
    p.add_argument(
        "--strict-manylinux",
        action="store_true",
        default=None,
        help="fail (not warn) on manylinux_2_28 violations (default with the pinned toolchain, which sets "
        f"{ENV.STRICT_MANYLINUX}=1)",
    )
    p.add_argument(
        "--no-import-check",
        action="store_true",
        help="skip importing the built variant (a kernel flake's doGetKernelCheck = false)",
    )
    p.add_argument(
        "--prebuilt-module",
        metavar="DIR",
        help="assemble the variant from this link output of the per-object build (module + module.json) "
        "instead of compiling (nix/lib/builders/link.nix)",
    )
    p.add_argument(
        "--build-layout",
        choices=BUILD_LAYOUTS,
        help=f"files: the variant directory is the package; zip: the package is <id>.zip in it (default: "
        f"${ENV.BUILD_LAYOUT}, which `kernel-builder build --layout` sets, else build.toml's "
        "[general] build-layout, else files)",
    )
    p.add_argument("--keep-scratch", action="store_true", help="keep the generated CMake project and logs")
    p.add_argument("-v", "--verbose", action="store_true", help="stream compiler output to stderr")


def _units_steps(p: argparse.ArgumentParser) -> None:
    steps = p.add_subparsers(dest="step", required=True)
    deps = steps.add_parser("deps", help="measure what each translation unit reads (deps.json)")
    deps.add_argument("--plan", required=True, type=Path, help="the plan's output (plan.json, tree/)")
    deps.add_argument("--sources", required=True, type=Path, help="the backend's compiled files and headers, laid out as in the kernel")
    deps.add_argument("--out", required=True, type=Path)
    deps.add_argument("--unit", dest="only", help="measure this unit only (its contents: --unit-file)")
    deps.add_argument("--unit-file", type=Path, help="with --unit: the unit's contents")
    deps.add_argument("--alias", action="append", default=[], metavar="HOME=COMPILER",
                      help="a CUDA home and the CUDA compiler made from the same wheels (store paths)")
    obj = steps.add_parser("object", help="compile one translation unit")
    obj.add_argument("--unit", type=Path, help="the unit's deps.json entry (a measured unit: no --plan)")
    obj.add_argument("--files", type=Path, help="with --unit: the kernel files the unit reads, laid out as in the kernel")
    obj.add_argument("--label", default="", help="with --unit: what the unit is compiled for, in messages")
    obj.add_argument("--plan", type=Path, help="the plan's output (plan.json, tree/)")
    obj.add_argument("--source", help="the unit's path relative to the kernel, as in the plan")
    obj.add_argument("--file", type=Path, help="the unit's contents")
    obj.add_argument("--headers", type=Path, help="the backend's other files (headers), laid out as in the kernel")
    obj.add_argument("--unique-id", help="with --plan: the kernel's unique id, where the plan has its placeholder")
    obj.add_argument("--out", required=True, type=Path)
    link = steps.add_parser("link", help="link the objects into the module")
    link.add_argument("--plan", required=True, type=Path)
    link.add_argument("--objects", nargs="*", default=[], type=Path, help="outputs of the object steps")
    link.add_argument("--unique-id", help="the kernel's unique id, where the plan has its placeholder")
    link.add_argument("--out", required=True, type=Path)
    merge = steps.add_parser("merge", help="one deps.json from each unit's")
    merge.add_argument("--parts", nargs="*", default=[], type=Path, help="outputs of the per-unit deps steps")
    merge.add_argument("--out", required=True, type=Path)


_DESCRIPTIONS = {
    "plan": "Write OUT/plan.json (one compile command per translation unit, the link) and OUT/tree/.",
    "run_variant": "Build one variant of a kernel into OUT/<variant>/ (generate, compile, lay out, check).",
    "units": "Compile one translation unit, or link the objects, of a per-object build (driver.plan).",
}


def parser(entry: Entry) -> argparse.ArgumentParser:
    """The argv parser of ``python -m kernel_builder.driver.<entry>``."""
    if entry not in ENTRY_POINTS:
        raise ValueError(f"no driver entry point {entry!r}; expected one of {', '.join(ENTRY_POINTS)}")
    p = argparse.ArgumentParser(prog=f"python -m kernel_builder.driver.{entry}", description=_DESCRIPTIONS[entry])
    if entry == "plan":
        _variant_options(p, out_help="output directory (plan.json, tree/)", uid_help="ops identifier suffix (as the variant's)")
    elif entry == "run_variant":
        _variant_options(p, out_help="output directory; the variant is written to OUT/<variant>/",
                         uid_help="ops identifier suffix (default: git short rev, else a hash of build.toml)")
        _run_variant_options(p)
    else:
        _units_steps(p)
    return p


def parse(
    entry: Entry, argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None,
) -> VariantJob | UnitJob:
    """The job of one entry point from ``argv`` (default ``sys.argv[1:]``) and ``environ``
    (default this process's environment). Bad argv exits 2 (argparse); a bad environment
    value, or a bad combination, is a ``BuildError`` that names it."""
    environ = os.environ if environ is None else environ
    p = parser(entry)
    args = p.parse_args(argv)
    if entry == "units":
        return _unit_job(args, environ)
    if entry == "run_variant" and args.kernel_dirty and not args.kernel_commit:
        p.error("--kernel-dirty needs --kernel-commit")
    capabilities = args.cuda_capabilities if args.cuda_capabilities is not None else environ.get(ENV.CUDA_CAPABILITIES)
    if entry == "plan":
        options = Options(uid=args.unique_id, cuda_capabilities=split_capabilities(capabilities))
    else:
        strict = args.strict_manylinux if args.strict_manylinux is not None else environ.get(ENV.STRICT_MANYLINUX) == "1"
        options = Options(
            uid=args.unique_id,
            kernel_commit=args.kernel_commit,
            kernel_dirty=args.kernel_dirty,
            jobs=args.jobs,
            verbose=args.verbose,
            keep_scratch=args.keep_scratch,
            strict_manylinux=strict,
            import_check=not args.no_import_check,
            cuda_capabilities=split_capabilities(capabilities),
            prebuilt_module=args.prebuilt_module,
            build_layout=args.build_layout or environ.get(ENV.BUILD_LAYOUT) or None,
        )
    return VariantJob.from_environ(args.source, args.variant, args.out, toolchain_python=args.toolchain_python,
                                   options=options, environ=environ)


def _unit_job(args: argparse.Namespace, environ: Mapping[str, str]) -> UnitJob:
    get = vars(args).get
    uid = (get("unique_id") or "").replace("-", "_") or None
    if args.step == "object" and args.unit is None and (args.plan is None or args.source is None or args.file is None):
        raise BuildError("object: --unit, or --plan, --source and --file, are required")
    aliases = tuple((a.split("=", 1)[0], a.split("=", 1)[1]) for a in get("alias") or [] if "=" in a)
    return UnitJob(
        step=args.step, out=args.out, sandbox=Sandbox.from_environ(environ), plan=get("plan"), uid=uid,
        sources=get("sources"), only=get("only"), unit_file=get("unit_file"), aliases=aliases,
        unit=get("unit"), files=get("files"), label=get("label") or "", source=get("source"), file=get("file"),
        headers=get("headers"), objects=tuple(get("objects") or ()), parts=tuple(get("parts") or ()),
    )

