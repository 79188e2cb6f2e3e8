"""Differential test: our ``resolve`` against PyPI ``kernels==0.19.1``.

Random candidate sets are resolved for simulated systems by both implementations; the
accepted variants (hence the best one) must come back in the same order. Names are drawn
so that every system sees a mix of matching, near-miss and foreign variants, in both
spellings: legacy (``torch213-cxx11-cu130-x86_64-linux``) and new-style
(``torch-2.13-cxx11-cuda-13.0-cpython-3.9-abi3-x86_64-linux``, with the Python version and
ABI, abi3t for free-threaded Pythons), plus SDK and MLX variants and broken names.
"""

from __future__ import annotations

import random

import pytest
from kernels._internals import backends as kb  # 0.19.1 keeps its internals under _internals
from kernels._internals import variants as kv
from packaging.version import Version

from kernel_builder.variants.resolve import resolve
from kernel_builder.variants.system import System

CASES = 600
TORCH = [(2, 9), (2, 10), (2, 11), (2, 12), (2, 13), (2, 14)]
CUDA = [(11, 8), (12, 4), (12, 6), (12, 8), (12, 9), (13, 0), (13, 2)]
ROCM = [(6, 3), (7, 0), (7, 1), (7, 2)]
XPU = [(2025, 1), (2025, 2), (2025, 3)]
TVM = [(0, 1), (0, 2), (1, 0)]
CPUS = ["x86_64", "aarch64"]
OSES = ["linux", "darwin", "windows"]
NOARCH = ["cpu", "cuda", "rocm", "xpu", "metal", "npu", "cann", "neuron", "tpu", "universal"]
PYTHONS = [(3, 9), (3, 10), (3, 11), (3, 12), (3, 13), (3, 14), (3, 15), (3, 16)]
BROKEN = [
    "torch213-cpu", "torch-2.13-cpu-x86_64-linux", "torch-2.13-cu130-cpython-3.9-abi3-x86_64-linux",
    "torch-2.13-cpu-cpython-3.9-abi3t-x86_64-linux", "torch-2.13-cpu-cpython-3-abi3-x86_64-linux",
    "torch213-cuda-13.0-x86_64-linux", "sdk-cuda-cpu", "sdk-x86_64-linux-cpython", "tvm-ffi-cpu-x86_64-linux",
    "torch-stable-abi-cpu-x86_64-linux", "jax01-cpu-x86_64-linux", "build",
]


def _token(kind: str, version: tuple[int, int] | None, new: bool = False) -> str:
    prefix = {"cuda": "cu", "rocm": "rocm", "xpu": "xpu", "cann": "cann"}.get(kind)
    if prefix is None:
        return kind
    if new:
        return f"{kind}-{version[0]}.{version[1]}"
    return f"{prefix}{version[0]}{version[1]}"


def _random_system(rng: random.Random) -> dict:
    backend = rng.choice(["cpu", "cuda", "cuda", "rocm", "xpu", "metal", "neuron", "tpu", "cann"])
    version = {"cuda": CUDA, "rocm": ROCM, "xpu": XPU, "cann": [(8, 0), (8, 2)]}.get(backend)
    bver = rng.choice(version) if version else None
    os_name = "darwin" if backend == "metal" else rng.choice(["linux", "linux", "linux", "windows", "darwin"])
    cpu = "aarch64" if os_name == "darwin" else rng.choice(CPUS)
    torch = rng.choice([*TORCH, None]) if rng.random() < 0.9 else None
    cxx11 = rng.choice([True, False]) if os_name == "linux" and torch is not None else None
    macos = rng.choice([None, (15, 7), (26, 0), (26, 1)]) if os_name == "darwin" else None
    tvm = rng.choice([None, None, *TVM])
    python = rng.choice(PYTHONS)
    free_threaded = rng.random() < 0.15
    mlx = rng.random() < 0.3
    return dict(backend=backend, bver=bver, cpu=cpu, os=os_name, torch=torch, cxx11=cxx11, macos=macos, tvm=tvm,
                python=python, free_threaded=free_threaded, mlx=mlx)


def _python_part(rng: random.Random, sysd: dict, near: bool) -> str:
    major, minor = sysd["python"] if near and rng.random() < 0.5 else rng.choice(PYTHONS)
    abi = "abi3t" if (major, minor) >= (3, 15) and rng.random() < 0.5 else "abi3"
    return f"cpython-{major}.{minor}-{abi}"


def _backend_for(rng: random.Random, sysd: dict, near: bool, new: bool) -> str:
    if near and sysd["backend"] in ("cuda", "rocm", "xpu", "cann"):
        pool = {"cuda": CUDA, "rocm": ROCM, "xpu": XPU, "cann": [(8, 0), (8, 2)]}[sysd["backend"]]
        return _token(sysd["backend"], rng.choice(pool), new)
    if near:
        return sysd["backend"]
    b = rng.choice(["cpu", "cuda", "rocm", "xpu", "metal", "neuron", "tpu"])
    pool = {"cuda": CUDA, "rocm": ROCM, "xpu": XPU}.get(b)
    return _token(b, rng.choice(pool) if pool else None, new)


def _random_names(rng: random.Random, sysd: dict) -> list[str]:
    """A unique candidate set; about half the names are built around the system."""
    names: set[str] = set()
    for _ in range(rng.randint(1, 16)):
        near = rng.random() < 0.6
        new = rng.random() < 0.5
        kind = rng.choice(["torch", "torch", "stable", "tvm", "noarch", "mlx", "sdk", "broken"])
        if kind == "noarch":
            names.add("torch-" + rng.choice(NOARCH))
            continue
        if kind == "mlx":
            names.add("mlx-" + rng.choice(NOARCH))
            continue
        if kind == "broken":
            names.add(rng.choice(BROKEN))
            continue
        cpu = sysd["cpu"] if near else rng.choice(CPUS)
        os_name = sysd["os"] if near else rng.choice(OSES)
        if kind == "sdk":
            form = rng.randrange(4)
            if form == 0:
                names.add("sdk")
            elif form == 1:
                names.add("sdk-" + rng.choice(NOARCH[:-1]))
            elif form == 2:
                names.add(f"sdk-{_python_part(rng, sysd, near)}-{cpu}-{os_name}")
            else:
                names.add(f"sdk-{_backend_for(rng, sysd, near, True)}-{_python_part(rng, sysd, near)}-{cpu}-{os_name}")
            continue
        backend = _backend_for(rng, sysd, near, new)
        python = f"-{_python_part(rng, sysd, near)}" if new else ""
        arch = f"{backend}{python}-{cpu}-{os_name}"
        if kind == "torch":
            major, minor = sysd["torch"] if near and sysd["torch"] else rng.choice(TORCH)
            tag = rng.choice(["", "", "-cxx11", "-cxx98"])
            names.add(f"torch-{major}.{minor}{tag}-{arch}" if new else f"torch{major}{minor}{tag}-{arch}")
        elif kind == "stable":
            major, minor = rng.choice(TORCH)
            names.add(f"torch-stable-abi-{major}.{minor}-{arch}" if new else f"torch-stable-abi{major}{minor}-{arch}")
        else:
            major, minor = sysd["tvm"] if near and sysd["tvm"] else rng.choice(TVM)
            names.add(f"tvm-ffi-{major}.{minor}-{arch}" if new else f"tvm-ffi{major}{minor}-{arch}")
    out = sorted(names)
    rng.shuffle(out)
    return out


def _reference_backend(sysd: dict):
    b, v = sysd["backend"], sysd["bver"]
    if b == "cpu":
        return kb.CPU()
    if b == "metal":
        return kb.Metal()
    if b == "neuron":
        return kb.Neuron()
    if b == "tpu":
        return kb.TPU()
    cls = {"cuda": kb.CUDA, "rocm": kb.ROCm, "xpu": kb.XPU, "cann": kb.CANN}[b]
    return cls(version=Version(f"{v[0]}.{v[1]}"))


def _reference_parse(name: str):
    try:
        return kv.parse_variant(name)
    except ValueError:
        return None  # the reference loader skips names it cannot read


def _reference(sysd: dict, names: list[str]) -> list[str]:
    variants = [v for v in map(_reference_parse, names) if v is not None]
    accepted, _ = kv._resolve_variant_for_system(
        variants=variants,
        selected_backend=_reference_backend(sysd),
        cpu=sysd["cpu"],
        os=sysd["os"],
        torch_version=Version("%d.%d" % sysd["torch"]) if sysd["torch"] else None,
        torch_cxx11_abi=sysd["cxx11"],
        tvm_ffi_version=Version("%d.%d" % sysd["tvm"]) if sysd["tvm"] else None,
        macos_version=Version(".".join(map(str, sysd["macos"]))) if sysd["macos"] else None,
        python_version=Version("%d.%d" % sysd["python"]),
        free_threaded=sysd["free_threaded"],
        has_mlx=sysd["mlx"],
    )
    return [v.variant_str for v in accepted]


def _ours(sysd: dict, names: list[str]):
    system = System(
        backend=f"{sysd['backend']} {sysd['bver'][0]}.{sysd['bver'][1]}" if sysd["bver"] else sysd["backend"],
        cpu=sysd["cpu"],
        os=sysd["os"],
        torch_version=sysd["torch"],
        cxx11_abi=sysd["cxx11"],
        tvm_ffi_version=sysd["tvm"],
        macos_version=sysd["macos"],
        python_version=sysd["python"],
        free_threaded=sysd["free_threaded"],
        mlx=sysd["mlx"],
    )
    return resolve(system, names)


def _cases():
    rng = random.Random(20261205)
    for i in range(CASES):
        sysd = _random_system(rng)
        yield pytest.param(sysd, _random_names(rng, sysd), id=f"case{i:03d}-{sysd['backend']}-{sysd['cpu']}")


@pytest.mark.parametrize(("sysd", "names"), list(_cases()))
def test_same_accepted_order_as_reference(sysd: dict, names: list[str]) -> None:
    ours = _ours(sysd, names)
    expected = _reference(sysd, names)
    assert [a.variant for a in ours.accepted] == expected
    assert ours.best == (expected[0] if expected else None)
    # Every candidate gets exactly one decision.
    decided = [d.variant for d in ours.decisions]
    assert sorted(decided) == sorted(names)


def _reference_reasons(sysd: dict, names: list[str]) -> dict[str, str]:
    trace = kv._resolve_variant_for_system(
        variants=[v for v in map(_reference_parse, names) if v is not None],
        selected_backend=_reference_backend(sysd), cpu=sysd["cpu"], os=sysd["os"],
        torch_version=Version("%d.%d" % sysd["torch"]) if sysd["torch"] else None, torch_cxx11_abi=sysd["cxx11"],
        tvm_ffi_version=Version("%d.%d" % sysd["tvm"]) if sysd["tvm"] else None,
        macos_version=Version(".".join(map(str, sysd["macos"]))) if sysd["macos"] else None,
        python_version=Version("%d.%d" % sysd["python"]), free_threaded=sysd["free_threaded"], has_mlx=sysd["mlx"],
    )[1]
    return {d.variant.variant_str: d.reason for d in trace if isinstance(d, kv.VariantRejected)}


def test_same_rejection_reasons_as_reference() -> None:
    """Every rejected candidate is rejected for the reason 0.19.1 gives, word for word (what
    `variants` prints beside `kernels variants`); over the whole corpus, thousands of them."""
    compared = 0
    for case in _cases():
        sysd, names = case.values
        theirs = _reference_reasons(sysd, names)
        ours = {d.variant: d.reason for d in _ours(sysd, names).rejected}
        for name, reason in theirs.items():
            assert ours.get(name) == reason, (sysd, name)
        compared += len(theirs)
    assert compared >= 3000


def test_corpus_has_teeth() -> None:
    """The generated corpus must exercise acceptance, rejection and real ranking choices, in
    both spellings, with Python versions, ABIs, SDKs and MLX taking part."""
    cases = [c.values for c in _cases()]
    results = [_reference(sysd, names) for sysd, names in cases]
    assert sum(1 for r in results if len(r) >= 2) >= 100
    assert sum(1 for r in results if not r) >= 20
    assert len({sysd["backend"] for sysd, _ in cases}) >= 7
    accepted = [n for r in results for n in r]
    assert sum(1 for n in accepted if "-cpython-" in n and not n.startswith("sdk")) >= 50  # new-style arch names
    assert sum(1 for n in accepted if "-abi3t-" in n) >= 10
    assert sum(1 for n in accepted if n.startswith("sdk")) >= 30
    assert sum(1 for n in accepted if n.startswith("mlx-")) >= 5
    assert sum(1 for n in accepted if n[:5] == "torch" and n[5:6].isdigit()) >= 50  # legacy arch names
    # Python version and ABI decide: some candidates are rejected only for them.
    rejected_for_python = 0
    for sysd, names in cases:
        trace = kv._resolve_variant_for_system(
            variants=[v for v in map(_reference_parse, names) if v is not None],
            selected_backend=_reference_backend(sysd), cpu=sysd["cpu"], os=sysd["os"],
            torch_version=Version("%d.%d" % sysd["torch"]) if sysd["torch"] else None, torch_cxx11_abi=sysd["cxx11"],
            tvm_ffi_version=Version("%d.%d" % sysd["tvm"]) if sysd["tvm"] else None,
            python_version=Version("%d.%d" % sysd["python"]), free_threaded=sysd["free_threaded"], has_mlx=sysd["mlx"],
        )[1]
        rejected_for_python += sum(1 for d in trace if isinstance(d, kv.VariantRejected) and ("Python" in d.reason or "abi3" in d.reason))
    assert rejected_for_python >= 50


def test_same_names_parse() -> None:
    """Every corpus name is a variant for both loaders, or for neither; the parts agree."""
    from kernel_builder.variants.names import try_parse

    seen: set[str] = set()
    for case in _cases():
        seen.update(case.values[1])
    seen.update(BROKEN)
    for name in sorted(seen):
        ours, ref = try_parse(name), _reference_parse(name)
        assert (ours is None) == (ref is None), name
        if ours is not None:
            assert ours.name == ref.variant_str == name
    assert len(seen) >= 600
