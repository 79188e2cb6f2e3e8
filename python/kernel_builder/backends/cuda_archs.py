"""Which CUDA architectures a kernel is compiled for.

A kernel lists ``cuda-capabilities`` such as ``["8.0", "9.0a", "9.0+PTX"]``; the toolkit
has a default set and supports a set of ``sm_XX`` codes. The build compiles the
*loose intersection*: for every toolkit arch, the highest requested arch of the same major
at or below it (an arch requested with ``+PTX`` may serve later majors too, since its PTX is
JIT-compiled forward). Archs with an ``a``/``f`` suffix are kept when their base is a
toolkit arch; ``+PTX`` is re-applied to what survives. An empty result is an error: the
kernel asked for nothing this toolkit can build; a requested arch that does not survive is
a warning naming it (``dropped``), never silent.

The default (target) table follows upstream's current one: capabilities 10.3 and 12.1 are
built from CUDA 12.9 on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import attrs

from kernel_builder.errors import BuildError

__all__ = [
    "CudaArch",
    "default_archs",
    "supported_from_nvcc",
    "intersect",
    "select_archs",
    "dropped",
    "unbuilt_by_version",
    "narrow",
    "archs_for",
    "gencode_flags",
    "metadata_archs",
    "split_capabilities",
    "checked_capabilities",
]

_ARCH = re.compile(r"^(\d+)\.(\d+)([af]?)(\+PTX)?$")


def split_capabilities(text: str | None) -> tuple[str, ...] | None:
    """A ``--cuda-capabilities`` value, ``"9.0,10.0"`` or space-separated, as ``("9.0", "10.0")``;
    ``None`` when empty."""
    return tuple(p for p in (text or "").replace(",", " ").split() if p) or None


def checked_capabilities(text: str | None) -> tuple[str, ...] | None:
    """A ``--cuda-capabilities`` value as the user gave it: ``split_capabilities``, each one a
    valid arch (``ValueError`` naming the first that is not); ``None`` only when the option is
    absent. An empty value or entry (``""``, ``","``, ``"9.0,,10.0"``) is a ``ValueError``,
    never "no narrowing": the user asked for a narrowing and named no capability."""
    if text is None:
        return None
    example = "give capabilities such as 9.0,10.0, or leave the option out to build every capability"
    for i, chunk in enumerate(text.split(",")):
        if not chunk.strip():
            what = "is empty" if not text.strip() else ("has only commas" if not text.replace(",", "").strip() else f"has an empty entry (number {i + 1})")
            raise ValueError(f"{text!r} {what}; {example}")
    parts = split_capabilities(text) or ()
    for part in parts:
        CudaArch.parse(part)
    return parts


@attrs.frozen(order=True)
class CudaArch:
    """One capability, e.g. ``9.0a+PTX`` → major 9, minor 0, suffix ``a``, ptx True."""

    major: int
    minor: int
    suffix: str = ""
    ptx: bool = False

    @classmethod
    def parse(cls, text: str) -> CudaArch:
        match = _ARCH.match(text.strip())
        if match is None:
            raise ValueError(f"invalid CUDA capability {text!r} (expected e.g. 8.0, 9.0a, 10.0f or 9.0+PTX)")
        return cls(int(match[1]), int(match[2]), match[3], bool(match[4]))

    @property
    def base(self) -> CudaArch:
        return CudaArch(self.major, self.minor)

    @property
    def code(self) -> str:
        """``sm`` digits: ``9.0a`` → ``90a``."""
        return f"{self.major}{self.minor}{self.suffix}"

    def with_ptx(self, ptx: bool) -> CudaArch:
        return attrs.evolve(self, ptx=ptx)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}{self.suffix}{'+PTX' if self.ptx else ''}"


# (first CUDA version, archs built when a kernel names none), newest first.
DEFAULT_TABLE: tuple[tuple[tuple[int, int], str], ...] = (
    ((13, 0), "7.5 8.0 8.6 8.7 8.9 9.0 10.0 10.3 11.0 12.0 12.1+PTX"),
    ((12, 9), "7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 10.0 10.1 10.3 12.0 12.1+PTX"),
    ((12, 8), "7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 10.0 10.1 12.0+PTX"),
    ((0, 0), "7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0+PTX"),
)


def default_archs(cuda_version: tuple[int, int]) -> list[CudaArch]:
    """The archs built when a kernel names none, by toolkit version."""
    text = next(archs for first, archs in DEFAULT_TABLE if cuda_version >= first)
    return [CudaArch.parse(a) for a in text.split()]


def supported_from_nvcc(list_gpu_code: str) -> frozenset[CudaArch]:
    """Parse ``nvcc --list-gpu-code`` output (``sm_75 sm_80 …``) into base archs."""
    found = set()
    for match in re.finditer(r"sm_(\d+)(\d)\b", list_gpu_code):
        found.add(CudaArch(int(match[1]), int(match[2])))
    return frozenset(found)


def intersect(requested: Sequence[CudaArch], targets: Iterable[CudaArch]) -> list[CudaArch]:
    """Loose intersection of requested archs with toolkit target archs (see module doc)."""
    target_bases = sorted({t.base for t in targets})
    ptx_bases = {r.base for r in requested if r.ptx}
    plain = sorted({r.base for r in requested if not r.suffix})
    chosen: set[CudaArch] = set()
    for target in target_bases:
        fits = [r for r in plain if r <= target and (r.major == target.major or r in ptx_bases)]
        if fits:
            chosen.add(fits[-1])
    for arch in requested:
        if arch.suffix and arch.base in target_bases:
            chosen.add(attrs.evolve(arch, ptx=False))
    return sorted(a.with_ptx(a.base in ptx_bases and not a.suffix) for a in chosen)


def select_archs(
    requested: Sequence[str] | None,
    *,
    cuda_version: tuple[int, int],
    supported: frozenset[CudaArch] | None = None,
    kernel: str = "",
) -> list[CudaArch]:
    """The archs one ``[kernel.NAME]`` compiles for; ``BuildError`` when none is left.

    ``supported`` (from nvcc) trims the default set to what this toolkit can emit, and the
    requested archs too: the loose intersection would otherwise pick a requested arch the
    toolkit dropped (``7.0`` for target ``7.5`` with CUDA 13, which has no ``sm_70``) and
    nvcc would fail on it; left out, it is one of ``dropped``'s warnings.
    """
    targets = default_archs(cuda_version)
    if supported is not None:
        targets = [t for t in targets if t.base in supported]
    if requested is None:
        return sorted(targets)
    try:
        wanted = [CudaArch.parse(r) for r in requested]
    except ValueError as exc:
        raise BuildError(f"build.toml: [kernel.{kernel}] cuda-capabilities: {exc}") from None
    if supported is not None:
        wanted = [w for w in wanted if w.base in supported]
    result = intersect(wanted, targets)
    if not result:
        have = " ".join(str(t) for t in sorted(targets))
        raise BuildError(
            f"[kernel.{kernel}]: empty set of capabilities after intersection: cuda-capabilities "
            f"{list(requested)} and CUDA {cuda_version[0]}.{cuda_version[1]} supported archs ({have}) "
            "have nothing in common",
            hint="list capabilities this toolkit supports in cuda-capabilities, or remove the key to build the defaults",
        )
    return result


def dropped(requested: Sequence[str] | None, chosen: Iterable[CudaArch]) -> list[str]:
    """The requested capabilities (as written) that ``chosen`` does not build: each is a
    warning, since a GPU of that capability would get no code (or only another arch's)."""
    if requested is None:
        return []
    kept = {attrs.evolve(a, ptx=False) for a in chosen}
    return [text for text in requested if attrs.evolve(CudaArch.parse(text), ptx=False) not in kept]


def narrow(chosen: Sequence[CudaArch], only: Sequence[str], *, kernel: str = "") -> list[CudaArch]:
    """``chosen`` cut down to the capabilities of ``--cuda-capabilities`` (``9.0`` keeps
    ``9.0`` and ``9.0a``); ``BuildError`` when nothing is left."""
    try:
        wanted = {CudaArch.parse(text).with_ptx(False) for text in only}
    except ValueError as exc:
        raise BuildError(f"--cuda-capabilities: {exc}") from None
    kept = [a for a in chosen if a.with_ptx(False) in wanted or a.base in wanted]
    if not kept:
        have = ", ".join(str(a) for a in chosen)
        raise BuildError(
            f"--cuda-capabilities {','.join(only)} leaves nothing of [kernel.{kernel}]'s archs ({have})",
            hint=f"narrow to one of {have}",
        )
    return kept


def archs_for(
    capabilities: dict[str, Sequence[str] | None], cuda_version: tuple[int, int], only: Sequence[str] | None = None
) -> list[CudaArch]:
    """The archs a CUDA variant builds: each component's (``name`` → its cuda-capabilities)
    selection for ``cuda_version``, narrowed to ``only`` when given; ``BuildError`` as
    ``select_archs`` and ``narrow``."""
    out: set[CudaArch] = set()
    for name, requested in sorted(capabilities.items()):
        chosen = select_archs(requested, cuda_version=cuda_version, kernel=name)
        out.update(narrow(chosen, only, kernel=name) if only else chosen)
    return sorted(out)


def unbuilt_by_version(
    requested: Sequence[str], cuda_versions: Iterable[tuple[int, int]]
) -> dict[str, list[tuple[int, int]]]:
    """Requested capability → the CUDA versions (of ``cuda_versions``) that cannot build it
    (for ``check-config``: the arch is dropped from those variants)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for version in sorted(set(cuda_versions)):
        try:
            chosen = select_archs(requested, cuda_version=version)
        except BuildError:
            chosen = []
        for text in dropped(requested, chosen):
            out.setdefault(text, []).append(version)
    return out


def gencode_flags(archs: Iterable[CudaArch]) -> list[str]:
    """One nvcc ``-gencode`` flag per arch (``+PTX`` also embeds the PTX)."""
    flags = []
    for arch in sorted(set(archs)):
        code = f"sm_{arch.code}"
        if arch.ptx:
            code = f"[sm_{arch.code},compute_{arch.code}]"
        flags.append(f"-gencode=arch=compute_{arch.code},code={code}")
    return flags


def metadata_archs(archs: Iterable[CudaArch]) -> list[str]:
    """``backend.archs`` as the reference writes them: a sorted set of strings."""
    return sorted({str(a) for a in archs})
