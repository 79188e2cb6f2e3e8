"""Differential tests against PyPI ``kernels==0.19.1`` (test-only oracle).

The same scenario runs once with our layer API and once with the reference's, on
identical fresh models and the same local kernel trees; both must end with the same
forward bound on every marked module (same function, from the same file), the same
outputs, or raise the same kind of error. The trees hold no compiled ops, so both
libraries can live in one process (no torch.ops namespace can clash).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import SimpleNamespace

import kernel_builder.layers as ours
import kernels as theirs  # the pinned test oracle (python/pyproject.toml test extra)
import pytest
import torch
from kernel_builder.errors import KernelBuilderError
from kernel_builder.layers import capability
from layers_trees import fresh_mapping, kernel_repos  # noqa: F401  (fixtures)
from torch import nn
from torch.nn import functional as F


pytestmark = pytest.mark.filterwarnings("ignore:.*has no digest", "ignore::UserWarning")

LIBS = {"ours": ours, "theirs": theirs}
X = torch.randn(4, 16)


@ours.use_kernel_forward_from_hub("SiluAndMul")
class SiluAndMul(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        return F.silu(x[..., :d]) * x[..., d:]


@ours.use_kernel_forward_from_hub("Scale")
class Identity(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


@ours.use_kernel_forward_from_hub("SiluAndMul", condition=lambda m: m.config.hidden_act == "silu")
class GatedAct(nn.Module):
    def __init__(self, hidden_act: str) -> None:
        super().__init__()
        self.config = SimpleNamespace(hidden_act=hidden_act)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        act = F.silu if self.config.hidden_act == "silu" else F.gelu
        return act(x[..., :d]) * x[..., d:]


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)
        self.act = SiluAndMul()
        self.scale = Identity()
        self.gated = nn.ModuleList(GatedAct(a) for a in ["silu", "gelu", "silu", "gelu"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.scale(self.act(self.proj(x)))
        return torch.cat([h, *(g(self.proj(x)) for g in self.gated)], dim=-1)


def fresh_model() -> Model:
    torch.manual_seed(0)
    return Model()


def forwards(model: nn.Module) -> list[tuple[str, str, str]]:
    out = []
    for name, module in model.named_modules():
        if hasattr(type(module), "kernel_layer_name"):
            fn = module.forward.__func__
            out.append((name, fn.__qualname__, fn.__code__.co_filename))
    return out


def error_kind(exc: BaseException) -> type:
    from huggingface_hub.errors import StrictDataclassError

    # The reference validates Device/properties with huggingface_hub strict dataclasses,
    # whose errors are plain Exceptions in huggingface_hub 2.x; ours are ValueErrors.
    if isinstance(exc, StrictDataclassError):
        return ValueError
    for kind in (FileNotFoundError, TypeError, ValueError):
        if isinstance(exc, kind):
            return kind
    return type(exc)


Scenario = Callable[[SimpleNamespace, dict], object]


def outcome(lib_name: str, scenario: Scenario, repos: dict):
    lib = LIBS[lib_name]
    before = set(sys.modules)
    try:
        result = scenario(lib, repos)
    except Exception as exc:  # noqa: BLE001  (the error kind is the outcome)
        if lib_name == "ours" and isinstance(exc, (ValueError, TypeError)) and not isinstance(exc, FileNotFoundError):
            assert isinstance(exc, KernelBuilderError), f"our error is not a KernelBuilderError: {exc!r}"
        return ("raises", error_kind(exc))
    finally:
        # Both libraries import the same trees under the same module ids; 0.19.1 reuses a
        # module already in sys.modules that it did not import itself only after asserting
        # it recorded it, so each side starts without the other's kernel modules.
        for name in set(sys.modules) - before:
            if name.startswith("_"):
                del sys.modules[name]
    if isinstance(result, nn.Module):
        with torch.no_grad():
            return ("model", forwards(result), result(X))
    return ("value", result)


def assert_same(scenario: Scenario, repos: dict) -> tuple:
    mine, ref = outcome("ours", scenario, repos), outcome("theirs", scenario, repos)
    assert mine[0] == ref[0], (mine, ref)
    if mine[0] == "model":
        assert mine[1] == ref[1]
        torch.testing.assert_close(mine[2], ref[2])
    elif isinstance(mine[1], tuple) and any(isinstance(v, torch.Tensor) for v in mine[1]):
        torch.testing.assert_close(mine[1], ref[1])
    else:
        assert mine[1] == ref[1]
    return mine


def repo(lib, repos, tree: str, layer: str):
    return lib.LocalLayerRepository(repos[tree], layer_name=layer)


def kernelize_with(mapping_fn, *, mode="INFERENCE", device="cpu", use_fallback=True, model=fresh_model):
    def scenario(lib, repos):
        m = model()
        mode_value = _mode(lib, mode)
        with lib.use_kernel_mapping(mapping_fn(lib, repos), inherit_mapping=False):
            return lib.kernelize(m, mode=mode_value, device=device, use_fallback=use_fallback)

    return scenario


def _mode(lib, spec: str):
    value = None
    for part in spec.split("|"):
        member = getattr(lib.Mode, part)
        value = member if value is None else value | member
    return value


BASIC = lambda lib, r: {  # noqa: E731
    "SiluAndMul": {"cpu": repo(lib, r, "act", "SiluAndMul")},
    "Scale": {"cpu": repo(lib, r, "double", "Scale")},
}


@pytest.mark.parametrize("mode", ["INFERENCE", "TRAINING", "INFERENCE|TORCH_COMPILE", "TRAINING|TORCH_COMPILE"])
@pytest.mark.parametrize("use_fallback", [True, False])
def test_basic_mapping(kernel_repos, mode, use_fallback):
    result = assert_same(kernelize_with(BASIC, mode=mode, use_fallback=use_fallback), kernel_repos)
    assert result[0] in {"model", "raises"}


def test_conditions_agree(kernel_repos):
    kind, fwd, _ = assert_same(kernelize_with(BASIC), kernel_repos)
    gated = [f for f in fwd if f[0].startswith("gated.")]
    assert [f[1] for f in gated] == ["SiluAndMul.forward", "GatedAct.forward"] * 2


MODE_TABLES = [
    {"INFERENCE": "double", "TRAINING": "triple"},
    {"TRAINING": "triple", "FALLBACK": "double"},
    {"INFERENCE|TORCH_COMPILE": "triple", "FALLBACK": "double"},
    {"TRAINING|TORCH_COMPILE": "triple", "INFERENCE": "double"},
    {"INFERENCE": "double"},
    {"TORCH_COMPILE": "double"},
]


@pytest.mark.parametrize("table", MODE_TABLES, ids=lambda t: ",".join(t))
@pytest.mark.parametrize("mode", ["INFERENCE", "TRAINING", "INFERENCE|TORCH_COMPILE", "TRAINING|TORCH_COMPILE"])
@pytest.mark.parametrize("use_fallback", [True, False])
def test_mode_fallback_tables(kernel_repos, table, mode, use_fallback):
    def mapping_fn(lib, r):
        return {"Scale": {"cpu": {_mode(lib, m): repo(lib, r, t, "Scale") for m, t in table.items()}}}

    assert_same(kernelize_with(mapping_fn, mode=mode, use_fallback=use_fallback,
                               model=lambda: nn.Sequential(Identity())), kernel_repos)


@pytest.mark.parametrize("cap", [70, 75, 80, 85, 86, 89, 90, 120])
@pytest.mark.parametrize("use_fallback", [True, False])
@pytest.mark.parametrize("device", ["cuda", "rocm"])
def test_capability_ranges(kernel_repos, monkeypatch, cap, use_fallback, device):
    monkeypatch.setattr(capability, "current_capability", lambda: cap)
    monkeypatch.setattr(sys.modules["kernels._internals.layer.repos"], "_find_capability", lambda *a: cap)

    def mapping_fn(lib, r):
        props = lib.CUDAProperties if device == "cuda" else lib.ROCMProperties
        return {"Scale": {
            lib.Device(device, props(min_capability=80, max_capability=89)): repo(lib, r, "double", "Scale"),
            lib.Device(device, props(min_capability=86, max_capability=89)): repo(lib, r, "triple", "Scale"),
            lib.Device(device, props(min_capability=75, max_capability=120)): repo(lib, r, "bad", "Fine"),
        }}

    assert_same(kernelize_with(mapping_fn, device=device, use_fallback=use_fallback,
                               model=lambda: nn.Sequential(Identity())), kernel_repos)


@pytest.mark.parametrize("layer", ["WithInit", "ExtraMember", "TooManyArgs", "KeywordOnly", "NotAModule", "Fine", "Nope"])
def test_layer_validation(kernel_repos, layer):
    mapping_fn = lambda lib, r: {"Scale": {"cpu": repo(lib, r, "bad", layer)}}  # noqa: E731
    assert_same(kernelize_with(mapping_fn, model=lambda: nn.Sequential(Identity())), kernel_repos)


@pytest.mark.parametrize(
    ("layer", "registered", "mode"),
    [
        ("SiluAndMulNoBackward", "TRAINING", "INFERENCE"),
        ("SiluAndMulNoBackward", "FALLBACK", "TRAINING"),
        ("SiluAndMulNoCompile", "INFERENCE|TORCH_COMPILE", "INFERENCE|TORCH_COMPILE"),
        ("SiluAndMulNoCompile", "FALLBACK", "INFERENCE|TORCH_COMPILE"),
        ("SiluAndMul", "TRAINING|TORCH_COMPILE", "TRAINING|TORCH_COMPILE"),
    ],
)
@pytest.mark.parametrize("use_fallback", [True, False])
def test_layer_mode_support(kernel_repos, layer, registered, mode, use_fallback):
    def mapping_fn(lib, r):
        return {"SiluAndMul": {"cpu": {_mode(lib, registered): repo(lib, r, "act", layer)}}}

    assert_same(kernelize_with(mapping_fn, mode=mode, use_fallback=use_fallback,
                               model=lambda: nn.Sequential(SiluAndMul())), kernel_repos)


@pytest.mark.parametrize("use_fallback", [True, False, "ALL"])
@pytest.mark.parametrize("case", ["no-layer", "no-device", "missing-tree"])
def test_missing_pieces(kernel_repos, case, use_fallback):
    def mapping_fn(lib, r):
        if case == "no-layer":
            return {}
        if case == "no-device":
            return {"Scale": {"cuda": repo(lib, r, "double", "Scale")}}
        return {"Scale": {"cpu": repo(lib, r, "empty", "Scale")}}

    def scenario(lib, repos):
        fallback = lib.KernelizeFallback.ALL if use_fallback == "ALL" else use_fallback
        return kernelize_with(mapping_fn, use_fallback=fallback, model=lambda: nn.Sequential(Identity()))(lib, repos)

    assert_same(scenario, kernel_repos)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.Mode.INFERENCE | lib.Mode.TRAINING,
        lambda lib: lib.Mode.FALLBACK | lib.Mode.TORCH_COMPILE,
        lambda lib: lib.Mode.TRAINING | lib.Mode.FALLBACK,
        lambda lib: lib.Mode.INFERENCE | lib.Mode.TORCH_COMPILE,
        lambda lib: lib.kernelize(fresh_model(), mode=lib.Mode.FALLBACK),
        lambda lib: lib.kernelize(fresh_model(), mode=lib.Mode.TORCH_COMPILE),
        lambda lib: lib.kernelize(Identity(), mode=lib.Mode.INFERENCE),
        lambda lib: lib.kernelize(fresh_model(), mode=lib.Mode.INFERENCE, device="gpu"),
        lambda lib: lib.LayerRepository("org/k", layer_name="L"),
        lambda lib: lib.LayerRepository("org/k", layer_name="L", version=1, revision="main"),
        lambda lib: lib.CUDAProperties(min_capability=90, max_capability=80),
        lambda lib: lib.Device("cpu", lib.CUDAProperties(min_capability=80, max_capability=90)),
        lambda lib: lib.Device("cuda", lib.ROCMProperties(min_capability=80, max_capability=90)),
        lambda lib: lib.register_kernel_mapping({"Scale": {"gpu": None}}),
        lambda lib: lib.use_kernel_forward_from_hub("X")(3),
    ],
)
def test_bad_inputs(make):
    def scenario(lib, repos):
        value = make(lib)
        return str(value) if isinstance(value, (lib.Mode, lib.LayerRepository)) else None

    def ignore_mapping(lib, repos):
        with lib.use_kernel_mapping({}, inherit_mapping=False):
            return scenario(lib, repos)

    assert_same(ignore_mapping, {})


def test_nested_mapping_contexts(kernel_repos):
    def scenario(lib, r):
        results = []
        with lib.use_kernel_mapping({"Scale": {"cpu": repo(lib, r, "double", "Scale")}}, inherit_mapping=False):
            with lib.use_kernel_mapping({"SiluAndMul": {"cpu": repo(lib, r, "act", "SiluAndMul")}}):
                with lib.use_kernel_mapping({"Scale": {"cpu": repo(lib, r, "triple", "Scale")}}):
                    results.append(forwards(lib.kernelize(fresh_model(), mode=lib.Mode.INFERENCE)))
                    with lib.use_kernel_mapping({"Scale": {"cpu": repo(lib, r, "bad", "Fine")}},
                                                inherit_mapping=False):
                        results.append(forwards(lib.kernelize(fresh_model(), mode=lib.Mode.INFERENCE)))
                results.append(forwards(lib.kernelize(fresh_model(), mode=lib.Mode.INFERENCE)))
            results.append(forwards(lib.kernelize(fresh_model(), mode=lib.Mode.INFERENCE)))
        return results

    kind, value = assert_same(scenario, kernel_repos)
    assert len({str(v) for v in value}) == 4  # each level really differs


def test_classes_marked_by_the_reference_work_with_ours(kernel_repos):
    @theirs.use_kernel_forward_from_hub("SiluAndMul", condition=lambda m: m.config.hidden_act == "silu")
    class TheirGated(GatedAct):
        pass

    def scenario(lib, r):
        model = nn.ModuleList([TheirGated("silu"), TheirGated("gelu")])
        with lib.use_kernel_mapping({"SiluAndMul": {"cpu": repo(lib, r, "act", "SiluAndMul")}}, inherit_mapping=False):
            lib.kernelize(model, mode=lib.Mode.INFERENCE, device="cpu")
        return forwards(model)

    kind, value = assert_same(scenario, kernel_repos)
    assert [v[1] for v in value] == ["SiluAndMul.forward", "GatedAct.forward"]


def test_condition_given_positionally(kernel_repos):
    """``use_kernel_forward_from_hub("X", condition)``: the reference takes the condition positionally."""

    def scenario(lib, r):
        @lib.use_kernel_forward_from_hub("SiluAndMul", lambda m: m.config.hidden_act == "silu")
        class Positional(GatedAct):
            pass

        model = nn.ModuleList([Positional("silu"), Positional("gelu")])
        with lib.use_kernel_mapping({"SiluAndMul": {"cpu": repo(lib, r, "act", "SiluAndMul")}}, inherit_mapping=False):
            lib.kernelize(model, mode=lib.Mode.INFERENCE, device="cpu")
        return forwards(model)

    kind, value = assert_same(scenario, kernel_repos)
    assert [v[1] for v in value] == ["SiluAndMul.forward", "GatedAct.forward"]


DEVICE_SPECS = {
    "cpu": "cpu", "cuda": "cuda", "rocm": "rocm", "mps": "mps", "xpu": "xpu", "npu": "npu", "neuron": "neuron",
    "tpu": "tpu", "torch-cuda": torch.device("cuda"), "torch-cpu": torch.device("cpu"), "params": None,
}


@pytest.mark.parametrize("hip", [False, True], ids=["cuda-torch", "rocm-torch"])
@pytest.mark.parametrize("spec", sorted(DEVICE_SPECS))
def test_selector_device_type_names_the_device_the_reference_dispatches_on(monkeypatch, spec, hip):
    """A selector's ``device_type.type`` is the type the reference looks up in its mapping for the
    same ``kernelize`` call (its ``Device.type``), for every device spelling."""
    import sys

    ref_kernelize = sys.modules["kernels._internals.layer.kernelize"]  # 0.19.1 moved its internals under _internals
    device = DEVICE_SPECS[spec]
    monkeypatch.setattr(torch.version, "hip", "7.0" if hip else None)
    dispatched: list[str] = []
    monkeypatch.setattr(ref_kernelize, "kernelize_layer", lambda module, *, device_type, **kw: dispatched.append(device_type.type))
    theirs.kernelize(nn.Sequential(nn.Linear(2, 2), SiluAndMul()), mode=theirs.Mode.INFERENCE, device=device)

    seen = []
    with ours.use_kernel_mapping({"SiluAndMul": lambda module, *, device_type, mode: seen.append(device_type)}, inherit_mapping=False):
        ours.kernelize(nn.Sequential(nn.Linear(2, 2), SiluAndMul()), mode=ours.Mode.INFERENCE, device=device)
    (device_type,) = seen
    assert [device_type.type] == dispatched
    # the seed-003 selector idiom works for every type
    assert (device_type.type != "cuda") == (dispatched != ["cuda"])
    if isinstance(device, torch.device) and dispatched[0] == device.type:
        assert device_type is device
    elif dispatched[0] in ("cpu", "cuda", "mps", "xpu"):
        assert isinstance(device_type, torch.device)
    else:
        assert isinstance(device_type, ours.DeviceType) and str(device_type) == dispatched[0]


def test_selector_tells_rocm_from_cuda(monkeypatch):
    """On a ROCm torch a GPU parameter is ``cuda`` to torch; selectors see ``rocm``, as the mapping does."""
    monkeypatch.setattr(torch.version, "hip", "7.0")
    seen = []
    model = nn.Sequential(nn.Linear(2, 2), SiluAndMul())
    with ours.use_kernel_mapping({"SiluAndMul": lambda module, *, device_type, mode: seen.append(device_type)}, inherit_mapping=False):
        ours.kernelize(model, mode=ours.Mode.INFERENCE, device="rocm")
        ours.kernelize(model, mode=ours.Mode.INFERENCE, device="cuda")
    assert [d.type for d in seen] == ["rocm", "cuda"]


def test_kernelized_func_condition_is_honoured_unlike_the_reference(kernel_repos):
    """Documented difference (docs/layers.md): a false condition on a decorated function keeps
    the function; the reference never consults conditions of functions attached with
    ``use_kernelized_func`` and kernelizes them anyway."""

    def scenario(lib, r):
        @lib.use_kernel_forward_from_hub("SiluAndMul", condition=lambda func_module: False)
        def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
            d = x.shape[-1] // 2
            return F.silu(x[..., :d]) * x[..., d:]

        @lib.use_kernelized_func(silu_and_mul)
        class UsesFunc(nn.Module):
            def forward(self, x):
                return silu_and_mul(x)

        model = UsesFunc()
        with lib.use_kernel_mapping({"SiluAndMul": {"cpu": repo(lib, r, "act", "SiluAndMul")}}, inherit_mapping=False):
            lib.kernelize(model, mode=lib.Mode.INFERENCE, device="cpu")
        # 0.19.1 kernelizes a per-model copy of the function module, kept in _kernel_funcs.
        (func,) = model.__dict__["_kernel_funcs"].values()
        return func.forward.__func__.__qualname__

    assert outcome("ours", scenario, kernel_repos) == ("value", "func_module.<locals>.Func.forward")
    assert outcome("theirs", scenario, kernel_repos) == ("value", "SiluAndMul.forward")


@pytest.mark.parametrize("use_fallback", [True, False])
def test_get_kernelized_layers_agrees(kernel_repos, use_fallback):
    """Which modules run a kernel, and from which repository, as 0.19.1 reports it; a second
    kernelize that keeps the original forwards clears the record."""

    def scenario(lib, r):
        @lib.use_kernel_forward_from_hub("SiluAndMul")
        def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
            d = x.shape[-1] // 2
            return F.silu(x[..., :d]) * x[..., d:]

        @lib.use_kernelized_func(silu_and_mul)
        class UsesFunc(nn.Module):
            def forward(self, x):
                return silu_and_mul(x)

        model = nn.ModuleDict({"m": fresh_model(), "f": UsesFunc()})
        with lib.use_kernel_mapping(BASIC(lib, r), inherit_mapping=False):
            lib.kernelize(model, mode=lib.Mode.INFERENCE, device="cpu", use_fallback=use_fallback)
        found = lib.get_kernelized_layers(model)
        first = (
            sorted((name, type(k.repo).__name__, k.repo.layer_name, k.module is model.get_submodule(name))
                   for name, k in found.layers.items()),
            sorted((key, type(k.repo).__name__, k.repo.layer_name) for key, k in found.funcs.items()),
        )
        with lib.use_kernel_mapping({}, inherit_mapping=False):
            lib.kernelize(model, mode=lib.Mode.INFERENCE, device="cpu", use_fallback=True)
        after = lib.get_kernelized_layers(model)
        return first, (dict(after.layers), dict(after.funcs))

    kind, value = assert_same(scenario, kernel_repos)
    if kind == "value":
        (layers, funcs), cleared = value
        assert [name for name, *_ in layers] == ["m.act", "m.gated.0", "m.gated.2", "m.scale"]
        assert all(same for *_, same in layers)
        assert funcs == [(("f", "SiluAndMul"), "LocalLayerRepository", "SiluAndMul")]
        assert cleared == ({}, {})


def test_each_model_has_its_own_copy_of_a_kernelized_function(kernel_repos):
    """0.19.1: kernelizing one model that uses a function never changes another model's."""

    def scenario(lib, r):
        @lib.use_kernel_forward_from_hub("SiluAndMul")
        def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
            return x[..., : x.shape[-1] // 2] * 0  # not the kernel: tells the two apart

        @lib.use_kernelized_func(silu_and_mul)
        class UsesFunc(nn.Module):
            def forward(self, x):
                return silu_and_mul(x)

        first, second = UsesFunc(), UsesFunc()
        with lib.use_kernel_mapping({"SiluAndMul": {"cpu": repo(lib, r, "act", "SiluAndMul")}}, inherit_mapping=False):
            lib.kernelize(first, mode=lib.Mode.INFERENCE, device="cpu")
        with torch.no_grad():
            return (first(X), second(X), silu_and_mul(X))

    kind, (kernelized, plain, direct) = assert_same(scenario, kernel_repos)
    torch.testing.assert_close(kernelized, F.silu(X[..., :8]) * X[..., 8:])
    assert not plain.any() and not direct.any()
