"""The in-memory build.toml model.

One model for every edition kernel-builder reads: the reader converts editions 4, 5 and 6
into it (v3 is only migrated, by ``update-build``) and the edition-6 writer serialises it back.
A component of an older edition gets the language its backend implies (``cpp-<backend>``),
so an edition-5 file and its edition-6 twin give equal models. Classes are frozen attrs values; value
types (``Version``, ``Backend``, kernel names) validate themselves at construction, so a
``Build`` that exists is well formed.
"""

from __future__ import annotations

import enum
import re
from typing import Union

import attrs

from kernel_builder._eq import fields_eq, fields_hash
from kernel_builder._repr import fields_repr
from kernel_builder.backends import Backend, kernel_backends, languages
from kernel_builder.versions import Version

__all__ = [
    "Backend",
    "Version",
    "GitUrl",
    "KernelDependency",
    "CppDependency",
    "Hub",
    "CudaGeneral",
    "NeuronGeneral",
    "TpuGeneral",
    "XpuGeneral",
    "General",
    "Torch",
    "TorchNoarch",
    "TvmFfi",
    "MlxNoarch",
    "Framework",
    "Language",
    "BuildLayout",
    "RUST_MIN_TILEIRAS",
    "FRAMEWORK_KEYS",
    "Kernel",
    "Build",
    "KERNEL_BACKENDS",
    "CURRENT_EDITION",
    "KEYED_EDITIONS",
    "validate_kernel_name",
    "validate_branch_name",
]

CURRENT_EDITION = 6
# Editions with an ``edition`` key that this kernel-builder reads (4 and 3 have no key).
KEYED_EDITIONS = (5, 6)


# Backends a compiled ``[kernel.NAME]`` component may target (the table's ``kernel`` column).
KERNEL_BACKENDS = kernel_backends()


_GIT_SCHEMES = ("https", "http", "git", "ssh", "git+ssh", "git+https", "git+http")
# Patterns as text: re compiles one on first use (and caches it), not at every start-up.
_SCP_LIKE = r"^(?P<user>[^@/:\s]+)@(?P<host>[^:/\s]+):(?P<path>[^/\s].*)$"
_URL = r"^(?P<scheme>[a-z+]+)://(?P<rest>\S+)$"


@attrs.frozen(slots=False)
class GitUrl:
    """A git URL (scheme URL or SCP-like ``user@host:path``); the original text is kept."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    original: str

    @classmethod
    def parse(cls, text: str) -> GitUrl:
        if not isinstance(text, str):
            raise ValueError(f"git URL must be a string, got {text!r}")
        match = re.match(_URL, text)
        if match:
            if match["scheme"] not in _GIT_SCHEMES:
                raise ValueError(
                    f"unsupported git URL scheme {match['scheme']!r} in {text!r}; "
                    f"expected one of {', '.join(_GIT_SCHEMES)}"
                )
            return cls(text)
        if re.match(_SCP_LIKE, text):
            return cls(text)
        raise ValueError(f"not a git URL: {text!r} (expected https://host/path or user@host:path)")

    def __str__(self) -> str:
        return self.original


_KERNEL_NAME = re.compile(r"[a-z][-a-z0-9]*[a-z0-9]")


MAX_NAME_LENGTH = 128  # the name becomes a Python module, file and directory names


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 60 else f"{text[:40]!r}... ({len(text)} characters)"


def validate_kernel_name(name: str) -> str:
    if not isinstance(name, str) or not _KERNEL_NAME.fullmatch(name):
        raise ValueError(
            f"invalid kernel name {_shown(name) if isinstance(name, str) else repr(name)}: use lowercase letters, digits and dashes, "
            "starting with a letter and not ending with a dash (at least 2 characters)"
        )
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(f"kernel name {_shown(name)} is too long: at most {MAX_NAME_LENGTH} characters")
    return name


_BAD_REF = r"[\x00-\x20\x7f~^:?*\[\\]"


def validate_branch_name(name: str) -> str:
    """A Hub branch name by git's ref rules: one more guard before it reaches a URL."""
    bad = (
        not name
        or len(name) > 255
        or re.search(_BAD_REF, name)
        or ".." in name
        or "@{" in name
        or "//" in name
        or name.startswith(("/", "-"))
        or name.endswith(("/", ".", ".lock"))
        or any(part.startswith(".") for part in name.split("/"))
        or name == "@"
    )
    if bad:
        raise ValueError(
            f"invalid branch name {_shown(name)}: use letters, digits, '.', '_', '-' and '/' between parts; "
            "no '..', no part starting with '.', no leading or trailing '/'"
        )
    return name


class _LanguageBase(str, enum.Enum):
    """Edition 6's ``[kernel.NAME] language``: the source language and, with it, the backend."""

    def __str__(self) -> str:
        return self.value

    @property
    def backend(self) -> Backend:
        return _LANGUAGE_BACKEND[self]

    @property
    def is_rust(self) -> bool:
        return self.value.startswith("rust-")

    @classmethod
    def cpp_for(cls, backend: Backend) -> Language:
        """The language of an edition 3-5 component: C++ for its backend."""
        return cls(f"cpp-{backend.value}")


# The languages are the backend table's (kernel_builder.backends.languages): ``cpp-<backend>``
# for each backend a component may target (Language.CPP_CUDA), then the Rust rows
# (Language.RUST_CPU, RUST_CUDA_OXIDE, RUST_CUTILE), in table order.
Language = _LanguageBase(  # type: ignore[call-overload]
    "Language", [(name.upper().replace("-", "_"), name) for name in languages()], module=__name__, qualname="Language"
)
_LANGUAGE_BACKEND = {Language(name): backend for name, backend in languages().items()}

# cuTile (rust-cutile) first shipped with CUDA 13.2: ``tileiras-minver`` may not be lower.
RUST_MIN_TILEIRAS = Version((13, 2))


class BuildLayout(str, enum.Enum):
    """Edition 6's ``[general] build-layout``: a variant's package as files or as one zip."""

    FILES = "files"
    ZIP = "zip"

    def __str__(self) -> str:
        return self.value


class CppDependency(str, enum.Enum):
    CUTLASS_2_10 = "cutlass_2_10"
    CUTLASS_3_5 = "cutlass_3_5"
    CUTLASS_3_6 = "cutlass_3_6"
    CUTLASS_3_8 = "cutlass_3_8"
    CUTLASS_3_9 = "cutlass_3_9"
    CUTLASS_4_0 = "cutlass_4_0"
    CUTLASS_4_4 = "cutlass_4_4"
    CUTLASS_4_5 = "cutlass_4_5"
    SYCL_TLA = "sycl_tla"
    METAL_CPP = "metal-cpp"
    TORCH = "torch"
    TORCH_STABLE_ABI_SHIM = "torch-stable-abi-shim"

    def __str__(self) -> str:
        return self.value


@attrs.frozen(slots=False)
class KernelDependency:
    """Another Hub kernel this one needs: exactly one of ``version`` or ``revision``."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    repo_id: str
    version: int | None = None
    revision: str | None = None

    def __attrs_post_init__(self) -> None:
        if (self.version is None) == (self.revision is None):
            raise ValueError("a kernel dependency needs exactly one of `version` or `revision`")


@attrs.frozen(slots=False)
class Hub:
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    repo_id: str | None = None
    branch: str | None = None


@attrs.frozen(slots=False)
class CudaGeneral:
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    minver: Version | None = None
    maxver: Version | None = None
    kernel_depends: tuple[KernelDependency, ...] = ()
    python_depends: tuple[str, ...] = ()


@attrs.frozen(slots=False)
class NeuronGeneral:
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    kernel_depends: tuple[KernelDependency, ...] = ()
    python_depends: tuple[str, ...] = ()


@attrs.frozen(slots=False)
class TpuGeneral:
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    python_depends: tuple[str, ...] = ()


@attrs.frozen(slots=False)
class XpuGeneral:
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    kernel_depends: tuple[KernelDependency, ...] = ()
    python_depends: tuple[str, ...] = ()


@attrs.frozen(slots=False)
class General:
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    name: str = attrs.field(validator=lambda _i, _a, v: validate_kernel_name(v))
    version: int
    license: str
    backends: tuple[Backend, ...]
    upstream: GitUrl | None = None
    source: GitUrl | None = None
    python_depends: tuple[str, ...] = ()
    kernel_depends: tuple[KernelDependency, ...] = ()
    hub: Hub | None = None
    cuda: CudaGeneral | None = None
    neuron: NeuronGeneral | None = None
    tpu: TpuGeneral | None = None
    xpu: XpuGeneral | None = None
    build_layout: BuildLayout | None = None  # edition 6; None reads as files

    @property
    def python_name(self) -> str:
        return self.name.replace("-", "_")

    def backend_python_depends(self, backend: Backend) -> tuple[str, ...]:
        table = {Backend.CUDA: self.cuda, Backend.NEURON: self.neuron, Backend.TPU: self.tpu, Backend.XPU: self.xpu}
        section = table.get(backend)
        return section.python_depends if section is not None else ()

    def backend_kernel_depends(self, backend: Backend) -> tuple[KernelDependency, ...]:
        table = {Backend.CUDA: self.cuda, Backend.NEURON: self.neuron, Backend.XPU: self.xpu}
        section = table.get(backend)
        return section.kernel_depends if section is not None else ()


@attrs.frozen(slots=False)
class Torch:
    """``[torch]``: an ahead-of-time compiled Torch extension."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    src: tuple[str, ...] = ()
    include: tuple[str, ...] | None = None
    pyext: tuple[str, ...] | None = None
    minver: Version | None = None
    maxver: Version | None = None
    cxx_flags: tuple[str, ...] | None = None
    # A single Version (all backends) or a per-backend mapping.
    stable_abi: Version | dict[Backend, Version] | None = attrs.field(default=None, hash=False)

    def stable_abi_for(self, backend: Backend) -> Version | None:
        if self.stable_abi is None or isinstance(self.stable_abi, Version):
            return self.stable_abi
        return self.stable_abi.get(backend)


@attrs.frozen(slots=False)
class TorchNoarch:
    """``[torch-noarch]``: a pure Python (Triton/JIT) kernel, one variant per backend."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    pyext: tuple[str, ...] | None = None
    cuda_capabilities: tuple[str, ...] | None = None
    rocm_archs: tuple[str, ...] | None = None


@attrs.frozen(slots=False)
class TvmFfi:
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    src: tuple[str, ...]
    include: tuple[str, ...] | None = None
    pyext: tuple[str, ...] | None = None
    cxx_flags: tuple[str, ...] | None = None


@attrs.frozen(slots=False)
class MlxNoarch:
    """``[mlx-noarch]`` (edition 6): a pure Python MLX kernel; its only backend is metal."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    pyext: tuple[str, ...] | None = None


Framework = Union[Torch, TorchNoarch, TvmFfi, MlxNoarch]

# The build.toml table of each framework: the reader picks the class by it, the writer the key.
FRAMEWORK_KEYS: dict[str, type[Framework]] = {
    "torch": Torch,
    "torch-noarch": TorchNoarch,
    "tvm-ffi": TvmFfi,
    "mlx-noarch": MlxNoarch,
}


@attrs.frozen(slots=False)
class Kernel:
    """``[kernel.NAME]``: one compiled component for one backend, in one language.

    Backend- and language-specific keys are ``None`` when absent; the readers reject keys
    that do not belong to the component's language. ``language`` defaults to C++ for the
    backend (editions 3-5 have no other); a Rust component has no ``depends`` and names its
    crate with ``cargo_manifest`` (its ``src`` may list directories).
    """
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    backend: Backend
    src: tuple[str, ...]
    depends: tuple[CppDependency, ...] = ()
    include: tuple[str, ...] | None = None
    cxx_flags: tuple[str, ...] | None = None
    cuda_capabilities: tuple[str, ...] | None = None
    cuda_flags: tuple[str, ...] | None = None
    cuda_minver: Version | None = None
    rocm_archs: tuple[str, ...] | None = None
    hip_flags: tuple[str, ...] | None = None
    sycl_flags: tuple[str, ...] | None = None
    cargo_manifest: str | None = None
    tileiras_minver: Version | None = None
    language: Language = attrs.field(default=attrs.Factory(lambda self: Language.cpp_for(self.backend), takes_self=True))

    def __attrs_post_init__(self) -> None:
        if self.language.backend is not self.backend:
            raise ValueError(f"language {self.language.value} builds for {self.language.backend.value}, not {self.backend.value}")

    @property
    def is_rust(self) -> bool:
        return self.language.is_rust


DEFAULT_PYEXT = ("py", "pyi")


def _relative_dir(path: str) -> str:
    """An include directory as a path under the kernel directory ("" for the directory itself)."""
    return "" if path in (".", "./") else path.replace("./", "")


@attrs.frozen(slots=False)
class Build:
    """A whole build.toml: general settings, one framework, and compiled components."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    general: General
    framework: Torch | TorchNoarch | TvmFfi | MlxNoarch
    kernels: dict[str, Kernel] = attrs.field(factory=dict, hash=False)

    @property
    def name(self) -> str:
        return self.general.name

    @property
    def python_name(self) -> str:
        return self.general.python_name

    @property
    def is_noarch(self) -> bool:
        """A pure Python kernel: ``[torch-noarch]`` (``[mlx-noarch]`` is ``is_mlx``)."""
        return isinstance(self.framework, TorchNoarch)

    @property
    def is_mlx(self) -> bool:
        return isinstance(self.framework, MlxNoarch)

    @property
    def build_layout(self) -> BuildLayout:
        return self.general.build_layout or BuildLayout.FILES

    @property
    def is_tvm_ffi(self) -> bool:
        return isinstance(self.framework, TvmFfi)

    @property
    def ext_dir(self) -> str:
        """The directory holding the Python package: ``torch-ext`` or ``tvm-ffi-ext``."""
        return "tvm-ffi-ext" if self.is_tvm_ffi else "torch-ext"

    @property
    def pyext(self) -> tuple[str, ...]:
        return self.framework.pyext or DEFAULT_PYEXT

    def kernel_backends(self) -> frozenset[Backend]:
        """Backends that have at least one compiled component."""
        return frozenset(k.backend for k in self.kernels.values())

    def kernels_for(self, backend: Backend) -> dict[str, Kernel]:
        return {name: k for name, k in self.kernels.items() if k.backend == backend}

    def is_arch_for(self, backend: Backend) -> bool:
        """Whether ``backend`` compiles native code (else it is a noarch ``torch-<b>`` build)."""
        if self.is_tvm_ffi:
            return True
        return isinstance(self.framework, Torch) and backend in self.kernel_backends()

    def stable_abi_for(self, backend: Backend) -> Version | None:
        if isinstance(self.framework, Torch):
            return self.framework.stable_abi_for(backend)
        return None

    def input_paths(self, backend: Backend | None = None) -> tuple[str, ...]:
        """The kernel files and directories a build reads, relative to the kernel directory:
        build.toml, the framework's and the components' ``src`` files, the Python package
        directory (``ext_dir``; only its ``pyext`` files are read) and the ``include``
        directories (framework and components), for one backend or (``None``) all of them.

        ``nix/lib/pure/inputs.nix`` (``inputPaths``) states the same rule for the Nix source
        filter; a test compares the two.
        """
        kernels = [k for k in self.kernels.values() if backend is None or k.backend == backend]
        framework_src = getattr(self.framework, "src", ())
        framework_include = getattr(self.framework, "include", None) or ()
        manifests = [k.cargo_manifest for k in kernels if k.cargo_manifest]
        files = ["build.toml", *framework_src, *(f for k in kernels for f in k.src), *manifests]
        dirs = [_relative_dir(d) for d in (*framework_include, *(d for k in kernels for d in k.include or ()))]
        out: list[str] = []
        for path in (*files, self.ext_dir, *(d for d in dirs if d)):
            if path not in out:
                out.append(path)
        return tuple(out)
