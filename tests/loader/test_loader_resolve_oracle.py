"""Differential test: our ``resolve`` against PyPI ``kernels==0.17.2``.

Random candidate sets are resolved for simulated systems by both implementations; the
accepted variants (hence the best one) must come back in the same order. Names are drawn
so that every system sees a mix of matching, near-miss and foreign variants.
"""

from __future__ import annotations

import random

import pytest
from kernels import backends as kb
from kernels import variants as kv
from packaging.version import Version

from kernel_builder.variants.resolve import resolve
from kernel_builder.variants.system import System

CASES = 400
TORCH = [(2, 9), (2, 10), (2, 11), (2, 12), (2, 13), (2, 14)]
CUDA = [(11, 8), (12, 4), (12, 6), (12, 8), (12, 9), (13, 0), (13, 2)]
ROCM = [(6, 3), (7, 0), (7, 1), (7, 2)]
XPU = [(2025, 1), (2025, 2), (2025, 3)]
TVM = [(0, 1), (0, 2), (1, 0)]
CPUS = ["x86_64", "aarch64"]
OSES = ["linux", "darwin", "windows"]
NOARCH = ["cpu", "cuda", "rocm", "xpu", "metal", "npu", "neuron", "tpu", "universal"]


def _token(kind: str, version: tuple[int, int] | None) -> str:
    prefix = {"cuda": "cu", "rocm": "rocm", "xpu": "xpu", "cann": "cann"}.get(kind)
    return kind if prefix is None else f"{prefix}{version[0]}{version[1]}"


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
    return dict(backend=backend, bver=bver, cpu=cpu, os=os_name, torch=torch, cxx11=cxx11, macos=macos, tvm=tvm)


def _random_names(rng: random.Random, sysd: dict) -> list[str]:
    """A unique candidate set; about half the names are built around the system."""
    names: set[str] = set()
    for _ in range(rng.randint(1, 14)):
        near = rng.random() < 0.6
        kind = rng.choice(["torch", "torch", "stable", "tvm", "noarch"])
        if kind == "noarch":
            names.add("torch-" + rng.choice(NOARCH))
            continue
        if near and sysd["backend"] in ("cuda", "rocm", "xpu", "cann"):
            pool = {"cuda": CUDA, "rocm": ROCM, "xpu": XPU, "cann": [(8, 0), (8, 2)]}[sysd["backend"]]
            backend = _token(sysd["backend"], rng.choice(pool))
        elif near:
            backend = sysd["backend"]
        else:
            b = rng.choice(["cpu", "cuda", "rocm", "xpu", "metal", "neuron", "tpu"])
            pool = {"cuda": CUDA, "rocm": ROCM, "xpu": XPU}.get(b)
            backend = _token(b, rng.choice(pool) if pool else None)
        cpu = sysd["cpu"] if near else rng.choice(CPUS)
        os_name = sysd["os"] if near else rng.choice(OSES)
        arch = f"{backend}-{cpu}-{os_name}"
        if kind == "torch":
            major, minor = sysd["torch"] if near and sysd["torch"] else rng.choice(TORCH)
            tag = rng.choice(["", "", "-cxx11", "-cxx98"])
            names.add(f"torch{major}{minor}{tag}-{arch}")
        elif kind == "stable":
            major, minor = rng.choice(TORCH)
            names.add(f"torch-stable-abi{major}{minor}-{arch}")
        else:
            major, minor = sysd["tvm"] if near and sysd["tvm"] else rng.choice(TVM)
            names.add(f"tvm-ffi{major}{minor}-{arch}")
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


def _reference(sysd: dict, names: list[str]) -> list[str]:
    variants = [kv.parse_variant(n) for n in names]
    accepted, _ = kv._resolve_variant_for_system(
        variants=variants,
        selected_backend=_reference_backend(sysd),
        cpu=sysd["cpu"],
        os=sysd["os"],
        torch_version=Version("%d.%d" % sysd["torch"]) if sysd["torch"] else None,
        torch_cxx11_abi=sysd["cxx11"],
        tvm_ffi_version=Version("%d.%d" % sysd["tvm"]) if sysd["tvm"] else None,
        macos_version=Version(".".join(map(str, sysd["macos"]))) if sysd["macos"] else None,
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
    )
    return resolve(system, names)


def _cases():
    rng = random.Random(20260701)
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


def test_corpus_has_teeth() -> None:
    """The generated corpus must exercise acceptance, rejection and real ranking choices."""
    cases = [c.values for c in _cases()]
    results = [_reference(sysd, names) for sysd, names in cases]
    assert sum(1 for r in results if len(r) >= 2) >= 60
    assert sum(1 for r in results if not r) >= 20
    assert len({sysd["backend"] for sysd, _ in cases}) >= 7
    bests = {r[0].split("-")[0] for r in results if r}
    assert {"torch", "tvm"} <= bests or len(bests) >= 3
