"""Differential tests against PyPI ``kernels`` (the version in ``compat.KERNELS_VERSION``).

Both loaders run in this process on the same local trees (through ``LOCAL_KERNELS``, the
one path where the reference needs no Hub): the GPU arch check with ``torch.cuda``
patched to pretend a device, ``kernels-minver``, ``kernel-depends`` with
``get_kernel_dep``, and the public API's names and signatures.
"""

from __future__ import annotations

import inspect
import itertools
import json
from pathlib import Path
from types import SimpleNamespace

import kernels
from kernels._internals import archs as ref_archs  # 0.19.1 keeps its internals under _internals
import pytest
import torch
from loader_trees import write_variant

import kernel_builder
from kernel_builder.tree.layout import hash_tree
from kernel_builder.loader import compat
from kernel_builder.loader.compat import DeviceArch, IncompatibleDevice, LoaderTooOld, arch_problem
from kernel_builder.tree.metadata import Metadata
from kernel_builder.variants.system import detect_system

P = inspect.Parameter


def _with(vdir: Path, **keys: object) -> Path:
    """Add keys to ``vdir``'s metadata.json (the digest does not cover metadata.json)."""
    path = vdir / "metadata.json"
    data = json.loads(path.read_text())
    data.update(keys)
    path.write_text(json.dumps(data, indent=2))
    return vdir


def _outcome(call) -> str:
    """``ok`` or the kind of error. Kernel modules the call imported are forgotten after it:
    both loaders import the same trees under the same ids, and 0.19.1 asserts that a kernel
    module already in sys.modules is one it imported itself."""
    import sys

    before = set(sys.modules)
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the kind of failure is what we compare
        return "RuntimeError" if isinstance(exc, RuntimeError) else type(exc).__name__
    finally:
        for name in set(sys.modules) - before:
            if name.startswith("_") and not name.startswith("__"):
                sys.modules.pop(name, None)
    return "ok"


# -- API surface -----------------------------------------------------------------------
def test_exports_match_reference() -> None:
    assert sorted(kernel_builder.__all__) == sorted(kernels.__all__)
    assert kernels.__version__ == compat.KERNELS_VERSION, "the oracle must be the version we implement"


def _shape(p: inspect.Parameter) -> tuple:
    """Name, kind and default; a default made by a factory (a dataclass's ``<factory>``, an
    attrs class's ``NOTHING``) counts as the same default."""
    factory = repr(p.default) in ("<factory>", "NOTHING")
    return (p.name, p.kind, "<factory>" if factory else p.default)


def _params(obj: object) -> list[inspect.Parameter]:
    return list(inspect.signature(obj).parameters.values())


@pytest.mark.parametrize("name", sorted(n for n in kernels.__all__ if n not in ("__version__", "Metadata")))
def test_signature_matches_reference(name: str) -> None:
    """Each reference parameter in order, with its kind and default; our extras keyword-only with defaults."""
    ref, ours = _params(getattr(kernels, name)), _params(getattr(kernel_builder, name))
    assert [_shape(p) for p in ours[: len(ref)]] == [_shape(p) for p in ref]
    extras = ours[len(ref) :]
    assert all(p.kind is P.KEYWORD_ONLY and p.default is not P.empty for p in extras), extras


def test_metadata_members_match_reference() -> None:
    """``kernels.Metadata`` is a Rust class without a constructor signature: compare its members."""
    public = {n for n in dir(kernels.Metadata) if not n.startswith("_")}
    assert public <= set(dir(kernel_builder.Metadata))
    for name in ("read_from_file", "from_bytes"):
        ref = [p.name for p in _params(getattr(kernels.Metadata, name))]
        assert [p.name for p in _params(getattr(kernel_builder.Metadata, name))] == ref


def test_benchmark_members_match_reference() -> None:
    ref, ours = kernels.Benchmark(), kernel_builder.Benchmark()
    assert vars(ref) == vars(ours) and (ref.seed, ref.device) == (ours.seed, ours.device)


# -- 1. GPU archs ------------------------------------------------------------------------
ARCH_LISTS = [
    ["9.0", "10.0"], ["8.0"], ["8.6"], ["9.0a"], ["10.0f"], ["9.0+PTX"], ["8.0", "9.0a+PTX"],
    ["10.0f+PTX"], ["7.5", "sm_90"], ["sm_90"], ["12.0a", "12.1"], ["9"],
]
CAPABILITIES = [(7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (10, 3), (12, 0), (12, 1)]


@pytest.mark.parametrize("archs", ARCH_LISTS, ids=lambda a: ",".join(a))
def test_cuda_arch_rules_match_reference(archs: list[str]) -> None:
    for capability in CAPABILITIES:
        ours = arch_problem(archs, DeviceArch("cuda", capability=capability)) is None
        assert ours == ref_archs._supports_cuda_capability(archs, capability), capability


@pytest.fixture
def cuda_device(monkeypatch: pytest.MonkeyPatch):
    """Pretend a CUDA 13.0 torch with one GPU; set ``.capability`` to choose the GPU."""
    device = SimpleNamespace(capability=(9, 0))
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setattr(torch.version, "hip", None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device_=None: device.capability)
    return device


@pytest.fixture
def rocm_device(monkeypatch: pytest.MonkeyPatch):
    """Pretend a ROCm 7.0 torch with one GPU; set ``.gfx`` to choose it."""
    device = SimpleNamespace(gfx="gfx942:sramecc+:xnack-")
    monkeypatch.setattr(torch.version, "cuda", None)
    monkeypatch.setattr(torch.version, "hip", "7.0.51831-1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index=None: SimpleNamespace(gcnArchName=device.gfx))
    return device


def _both(monkeypatch, repo: str, path: Path, system, **kwargs) -> dict[str, str]:
    """get_kernel / has_kernel outcomes of both loaders for ``repo`` redirected to ``path``."""
    monkeypatch.setenv("LOCAL_KERNELS", f"{repo}={path}")
    return {
        "ours": _outcome(lambda: kernel_builder.get_kernel(repo, version=1, system=system, **kwargs)),
        "ref": _outcome(lambda: kernels.get_kernel(repo, version=1, **kwargs)),
        "ours_has": str(kernel_builder.has_kernel(repo, version=1, system=system, **kwargs)),
        "ref_has": str(kernels.has_kernel(repo, version=1, **kwargs)),
    }


@pytest.mark.parametrize(("capability", "loads"), [((8, 0), False), ((9, 0), True), ((10, 3), True), ((12, 0), False)])
def test_cuda_arch_checked_at_load(tmp_path, monkeypatch, cuda_device, capability, loads) -> None:
    cuda_device.capability = capability
    tree = tmp_path / f"sm{capability[0]}{capability[1]}"
    _with(write_variant(tree / "build", "torch-cuda", name="arch-check", backend="cuda"), backend={"type": "cuda", "archs": ["9.0", "10.0"]})
    system = detect_system(backend="cu130")
    got = _both(monkeypatch, "acme/arch-check", tree, system)
    want = "ok" if loads else "RuntimeError"
    assert got == {"ours": want, "ref": want, "ours_has": str(loads), "ref_has": str(loads)}
    if not loads:
        with pytest.raises(IncompatibleDevice, match=r"CUDA capability %d\.%d .*9\.0, 10\.0.*\nhint: .*check_arch=False" % capability):
            kernel_builder.get_kernel("acme/arch-check", version=1, system=system)
        # check_arch=False opts out in both
        opt_out = _both(monkeypatch, "acme/arch-check", tree, system, check_arch=False)
        assert opt_out == {"ours": "ok", "ref": "ok", "ours_has": "True", "ref_has": "True"}


def test_cuda_arch_not_checked_without_a_gpu(tmp_path, monkeypatch, cuda_device) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    tree = tmp_path / "nogpu"
    _with(write_variant(tree / "build", "torch-cuda", name="arch-nogpu", backend="cuda"), backend={"type": "cuda", "archs": ["9.0"]})
    got = _both(monkeypatch, "acme/arch-nogpu", tree, detect_system(backend="cu130"))
    assert got == {"ours": "ok", "ref": "ok", "ours_has": "True", "ref_has": "True"}


@pytest.mark.parametrize(("gfx", "loads"), [("gfx942:sramecc+:xnack-", True), ("gfx90a:sramecc+:xnack-", False), ("gfx1100", False)])
def test_rocm_arch_checked_at_load(tmp_path, monkeypatch, rocm_device, gfx, loads) -> None:
    rocm_device.gfx = gfx
    tree = tmp_path / gfx.split(":")[0]
    _with(write_variant(tree / "build", "torch-rocm", name="arch-rocm", backend="rocm"), backend={"type": "rocm", "archs": ["gfx942", "gfx950"]})
    system = detect_system(backend="rocm70")
    want = "ok" if loads else "RuntimeError"
    got = _both(monkeypatch, "acme/arch-rocm", tree, system)
    assert got == {"ours": want, "ref": want, "ours_has": str(loads), "ref_has": str(loads)}
    if not loads:
        with pytest.raises(IncompatibleDevice, match=f"ROCm arch {gfx.split(':')[0]} "):
            kernel_builder.get_kernel("acme/arch-rocm", version=1, system=system)


def test_local_kernel_checks_arch(tmp_path, monkeypatch, cuda_device) -> None:
    """Since kernels 0.19, get_local_kernel checks the declared archs too (check_arch=False skips it)."""
    cuda_device.capability = (8, 0)
    tree = tmp_path / "local"
    _with(write_variant(tree / "build", "torch-cuda", name="arch-local", backend="cuda"), backend={"type": "cuda", "archs": ["9.0"]})
    system = detect_system(backend="cu130")
    assert _outcome(lambda: kernels.get_local_kernel(tree)) == "RuntimeError"
    assert _outcome(lambda: kernel_builder.get_local_kernel(tree, system=system)) == "RuntimeError"
    assert _outcome(lambda: kernels.get_local_kernel(tree, check_arch=False)) == "ok"
    assert _outcome(lambda: kernel_builder.get_local_kernel(tree, system=system, check_arch=False)) == "ok"
    # A layer repository loads through get_local_kernel without a system: probe a CUDA one
    # (the backend probe is cached for the process, so the pretend torch is not seen).
    from kernel_builder.loader import api

    monkeypatch.setattr(api, "detect_system", lambda: system)
    with pytest.raises(IncompatibleDevice, match=r"CUDA capability 8\.0"):
        kernel_builder.LocalLayerRepository(tree, layer_name="X").load()


# -- 3. kernels-minver -------------------------------------------------------------------
@pytest.mark.parametrize(("minver", "loads"), [("0.17.0", True), (compat.KERNELS_VERSION, True), ("0.19.2", False), ("1.0.0", False)])
def test_kernels_minver(tmp_path, monkeypatch, minver: str, loads: bool) -> None:
    tree = tmp_path / minver.replace(".", "_")
    _with(write_variant(tree / "build", "torch-cpu", name="minver"), **{"kernels-minver": minver})
    cpu = detect_system(backend="cpu")
    want = "ok" if loads else "RuntimeError"
    assert _outcome(lambda: kernels.get_local_kernel(tree)) == want
    assert _outcome(lambda: kernel_builder.get_local_kernel(tree, system=cpu)) == want
    monkeypatch.setenv("LOCAL_KERNELS", f"acme/minver={tree}")
    assert _outcome(lambda: kernels.get_kernel("acme/minver", version=1)) == want
    assert _outcome(lambda: kernel_builder.get_kernel("acme/minver", version=1, system=cpu)) == want
    if not loads:
        with pytest.raises(LoaderTooOld, match=rf"requires kernels>={minver}, .* implements kernels {compat.KERNELS_VERSION}"):
            kernel_builder.get_local_kernel(tree, system=cpu)


def test_kernels_minver_is_read_and_kept(tmp_path) -> None:
    vdir = _with(write_variant(tmp_path / "build", "torch-cpu", name="minver-read"), **{"kernels-minver": "0.17.1"})
    ours = Metadata.read(vdir / "metadata.json")
    ref = kernels.Metadata.read_from_file(vdir / "metadata.json")
    assert ours.kernels_minver == str(ref.kernels_minver) == "0.17.1"
    assert ours.to_json()["kernels-minver"] == "0.17.1"


@pytest.mark.parametrize("bad", ["0.17", "0.17.x", "v0.17.0"])
def test_malformed_kernels_minver_refused_like_reference(tmp_path, bad: str) -> None:
    vdir = _with(write_variant(tmp_path / "build", "torch-cpu", name="minver-bad"), **{"kernels-minver": bad})
    with pytest.raises(ValueError):
        kernels.Metadata.read_from_file(vdir / "metadata.json")
    with pytest.raises(ValueError, match="kernels-minver"):
        Metadata.read(vdir / "metadata.json")


# -- 7. kernel-depends and get_kernel_dep ------------------------------------------------
DEPENDENT_INIT = """\
from kernel_builder import get_kernel_dep as ours
from kernels import get_kernel_dep as ref

get_kernel_dep = {which}
base = get_kernel_dep("acme/base")
try:
    get_kernel_dep("acme/undeclared")
except RuntimeError as exc:
    UNDECLARED = str(exc)
VALUE = base.relu([-1, 2])
"""


@pytest.mark.parametrize(("loader", "which"), [("ours", "ours"), ("ref", "ref"), ("ours", "ref")])
def test_get_kernel_dep(tmp_path, monkeypatch, loader: str, which: str) -> None:
    """A kernel reaches its kernel-depends with get_kernel_dep; ours also serves kernels
    written against PyPI ``kernels`` (``from kernels import get_kernel_dep``)."""
    base = tmp_path / which / "base"
    write_variant(base / "build", "torch-cpu", name="base")
    top = tmp_path / which / "top"
    vdir = write_variant(top / "build", "torch-cpu", name=f"top-{loader}-{which}", digest=False)
    (vdir / "__init__.py").write_text(DEPENDENT_INIT.format(which=which))
    _with(vdir, **{"kernel-depends": [{"repo-id": "acme/base", "version": 1}]})
    hash_tree(top)
    monkeypatch.setenv("LOCAL_KERNELS", f"acme/base={base}")
    if loader == "ours":
        module = kernel_builder.get_local_kernel(top, system=detect_system(backend="cpu"))
    else:
        module = kernels.get_local_kernel(top)
    assert module.VALUE == [0, 2]
    assert "Dependency 'acme/undeclared' not found in kernel dependencies" in module.UNDECLARED
    for get_kernel_dep in (kernel_builder.get_kernel_dep, kernels.get_kernel_dep):
        with pytest.raises(RuntimeError, match="only works during kernel loading"):
            get_kernel_dep("acme/base")


def test_cyclic_kernel_depends_refused(tmp_path, monkeypatch) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _with(write_variant(a / "build", "torch-cpu", name="cycle-a"), **{"kernel-depends": [{"repo-id": "acme/b", "version": 1}]})
    _with(write_variant(b / "build", "torch-cpu", name="cycle-b"), **{"kernel-depends": [{"repo-id": "acme/a", "version": 1}]})
    monkeypatch.setenv("LOCAL_KERNELS", f"acme/a={a}:acme/b={b}")
    with pytest.raises(ValueError, match=r"Cyclic kernel dependency detected: acme/a \(acme/a -> acme/b -> acme/a\)"):
        kernel_builder.get_kernel("acme/a", version=1, system=detect_system(backend="cpu"))
    with pytest.raises(ValueError, match="Cyclic kernel dependency detected: acme/a"):
        kernels.get_kernel("acme/a", version=1)


def test_arch_lists_cover_every_rule() -> None:
    """The tables above exercise every kind of arch string (guards against a weakened table)."""
    kinds = {("a" in a, "f" in a, "+PTX" in a, compat.cuda_arch_supports(a, (9, 0)) is None) for a in itertools.chain(*ARCH_LISTS)}
    assert {(True, False, False, False), (False, True, False, False), (False, False, True, False), (False, False, False, True)} <= kinds


def test_arch_checked_before_download_from_the_hub(hub_server, tmp_path, cuda_device) -> None:
    """From the Hub, only metadata.json is fetched for a variant that cannot run on the GPU."""
    from hub_fixture import publish

    build = tmp_path / "build"
    vdir = write_variant(build, "torch-cuda", name="arch-hub", backend="cuda", digest=False)
    _with(vdir, backend={"type": "cuda", "archs": ["9.0", "10.0"]})
    hash_tree(tmp_path)
    publish(hub_server, "acme/arch-hub", build, version=1)
    system = detect_system(backend="cu130")
    cuda_device.capability = (12, 0)
    assert not kernel_builder.has_kernel("acme/arch-hub", version=1, system=system)
    with pytest.raises(IncompatibleDevice, match=r"CUDA capability 12\.0"):
        kernel_builder.get_kernel("acme/arch-hub", version=1, system=system)
    fetched = {r.path.rsplit("/", 1)[-1] for r in hub_server.requests if r.endpoint == "resolve" and r.method == "GET"}
    assert fetched == {"metadata.json"}
    assert kernel_builder.has_kernel("acme/arch-hub", version=1, system=system, check_arch=False)
    assert kernel_builder.get_kernel("acme/arch-hub", version=1, system=system, check_arch=False).VARIANT == "torch-cuda"
    cuda_device.capability = (10, 3)
    assert kernel_builder.has_kernel("acme/arch-hub", version=1, system=system)


def test_kernel_depends_loaded_from_the_hub(hub_server, tmp_path) -> None:
    """From the Hub the dependency is resolved like any kernel: its own version, its own download."""
    from hub_fixture import publish

    write_variant(tmp_path / "base" / "build", "torch-cpu", name="hub-base", version=2)
    publish(hub_server, "acme/base", tmp_path / "base" / "build", version=2)
    top = tmp_path / "top"
    vdir = write_variant(top / "build", "torch-cpu", name="hub-top", digest=False)
    (vdir / "__init__.py").write_text(
        "from kernel_builder import get_kernel_dep\nbase = get_kernel_dep('acme/base')\nVARIANT = 'torch-cpu'\n"
    )
    _with(vdir, **{"kernel-depends": [{"repo-id": "acme/base", "version": 2}]})
    hash_tree(top)
    publish(hub_server, "acme/top", top / "build", version=1)
    module = kernel_builder.get_kernel("acme/top", version=1, system=detect_system(backend="cpu"))
    assert module.base.VERSION == 2 and module.base.relu([-3, 3]) == [0, 3]
    loaded = {k.repo_info.repo_id for k in kernel_builder.get_loaded_kernels() if k.repo_info}
    assert {"acme/base", "acme/top"} <= loaded
