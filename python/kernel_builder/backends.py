"""Compute backends: the ``Backend`` names and one table of what each one is.

Every other module asks this table instead of branching on a backend's name: how the
backend is written in a variant name (``cu130``, ``rocm71``, ``cpu``), whether that name
carries a version, the macros a kernel's sources see, which build.toml key selects its
architectures, which ``torch.version`` attribute reveals it, and whether a toolchain for it
exists on these machines (pinned or host: Linux with CPU or CUDA only).
"""

from __future__ import annotations

import enum

import attrs

from kernel_builder._repr import fields_repr

__all__ = ["Backend", "BackendSpec", "BACKENDS", "spec", "versioned", "by_token", "from_torch_versions"]


class Backend(str, enum.Enum):
    """A compute backend. The value is the lowercase name used in TOML, JSON and names."""

    CANN = "cann"
    CPU = "cpu"
    CUDA = "cuda"
    METAL = "metal"
    NEURON = "neuron"
    ROCM = "rocm"
    TPU = "tpu"
    XPU = "xpu"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, text: str) -> Backend:
        """Parse a backend name (case-insensitive); ``ValueError`` lists the valid names."""
        try:
            return cls(text.lower())
        except (ValueError, AttributeError):
            valid = ", ".join(b.value for b in cls)
            raise ValueError(f"unknown backend {text!r}; expected one of {valid}") from None


@attrs.frozen(eq=False, slots=False)  # one instance per backend (BACKENDS): identity is equality
class BackendSpec:
    """What one backend is, for names, builds and probes."""
    __repr__ = fields_repr

    backend: Backend
    token: str  # in a variant name: the prefix of a versioned backend (``cu``), else the name
    versioned: bool  # the variant name carries the backend version (``cu130``)
    noarch_name: str  # a noarch variant is ``torch-<noarch_name>``
    defines: tuple[str, ...] = ()  # macros the kernel's sources see (the source contract)
    arch_key: str | None = None  # the build.toml key that lists architectures
    torch_version_attr: str | None = None  # ``torch.version.<attr>`` holds its version
    compilable_here: bool = False  # a toolchain (pinned or host) can compile it on these machines


BACKENDS: dict[Backend, BackendSpec] = {
    s.backend: s
    for s in (
        BackendSpec(Backend.CPU, "cpu", False, "cpu", ("CPU_KERNEL",), compilable_here=True),
        BackendSpec(Backend.CUDA, "cu", True, "cuda", ("CUDA_KERNEL", "USE_CUDA=1"), "cuda-capabilities", "cuda", True),
        BackendSpec(Backend.ROCM, "rocm", True, "rocm", ("ROCM_KERNEL", "USE_ROCM=1"), "rocm-archs", "hip"),
        BackendSpec(Backend.XPU, "xpu", True, "xpu", ("XPU_KERNEL", "USE_XPU"), None, "xpu"),
        BackendSpec(Backend.METAL, "metal", False, "metal", ("METAL_KERNEL",)),
        BackendSpec(Backend.CANN, "cann", True, "cann"),
        BackendSpec(Backend.NEURON, "neuron", False, "neuron"),
        BackendSpec(Backend.TPU, "tpu", False, "tpu"),
    )
}


def spec(backend: Backend | str) -> BackendSpec:
    return BACKENDS[backend if isinstance(backend, Backend) else Backend.parse(backend)]


def versioned() -> tuple[Backend, ...]:
    """The backends whose variant names carry a version, in table order."""
    return tuple(b for b, s in BACKENDS.items() if s.versioned)


def by_token(token: str) -> Backend | None:
    """The versioned backend written with ``token`` in names (``cu`` -> cuda)."""
    return next((b for b, s in BACKENDS.items() if s.versioned and s.token == token), None)


def from_torch_versions(versions: dict[str, str | None]) -> tuple[Backend, str | None]:
    """The backend a torch was built for, from its ``torch.version`` attributes (``cuda``,
    ``hip``, ``xpu``), and that backend's version text; CPU when none is set. The first
    set attribute in table order wins (a torch is built for one of them)."""
    for backend, s in BACKENDS.items():
        value = versions.get(s.torch_version_attr) if s.torch_version_attr else None
        if value:
            return backend, value
    return Backend.CPU, None
