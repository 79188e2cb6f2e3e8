"""kernelize with table mappings: devices, capability ranges, modes, validation, scoping."""

from __future__ import annotations

import json
import logging

import kernel_builder
import pytest
import torch
from kernel_builder.layers import (
    CUDAProperties,
    Device,
    FuncRepository,
    KernelizeFallback,
    LayerRepository,
    LocalFuncRepository,
    LocalLayerRepository,
    LockedLayerRepository,
    Mode,
    ROCMProperties,
    capability,
    kernelize,
    mapping,
    register_kernel_mapping,
    use_kernel_forward_from_hub,
    use_kernel_mapping,
    use_kernelized_func,
)
from kernel_builder.layers.errors import LayerError, LayerValidationError
from layers_trees import fresh_mapping, kernel_repos  # noqa: F401  (fixtures)
from torch import nn
from torch.nn import functional as F

pytestmark = pytest.mark.filterwarnings("ignore:.*has no digest")


@use_kernel_forward_from_hub("SiluAndMul")
class SiluAndMul(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        return F.silu(x[..., :d]) * x[..., d:]


@use_kernel_forward_from_hub("Scale")
class Identity(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.act = SiluAndMul()
        self.scale = Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scale(self.act(self.linear(x)))


def kernel_module(module: nn.Module) -> str:
    """The module the bound forward was defined in (`layers` of a kernel, or this file)."""
    return module.forward.__func__.__module__


def owner(module: nn.Module) -> str:
    return module.forward.__func__.__qualname__.split(".")[0]


def local(repos, name: str, layer: str) -> LocalLayerRepository:
    return LocalLayerRepository(repos[name], layer_name=layer)


X = torch.randn(4, 8)


class TestTableKernelize:
    @pytest.mark.parametrize("mode", [Mode.INFERENCE, Mode.TRAINING, Mode.INFERENCE | Mode.TORCH_COMPILE])
    def test_forward_replaced_and_output_matches(self, kernel_repos, mode):
        model = Model()
        expected = model(X)
        with use_kernel_mapping({"SiluAndMul": {"cpu": local(kernel_repos, "act", "SiluAndMul")}}):
            assert kernelize(model, mode=mode, device="cpu") is model
        assert kernel_module(model.act).endswith(".layers") and owner(model.act) == "SiluAndMul"
        assert owner(model.scale) == "Identity"  # no mapping: original
        torch.testing.assert_close(model(X), expected)
        assert "forward" not in type(model.act).__dict__ or type(model.act).forward is SiluAndMul.forward

    def test_output_changes_with_kernel(self, kernel_repos):
        model = Model()
        with use_kernel_mapping({"Scale": {Device("cpu"): local(kernel_repos, "double", "Scale")}}):
            kernelize(model, mode=Mode.INFERENCE)
        torch.testing.assert_close(model.scale(X), X * 2)

    def test_rekernelize_reverts(self, kernel_repos):
        model = Model()
        with use_kernel_mapping({"Scale": {"cpu": local(kernel_repos, "double", "Scale")}}):
            kernelize(model, mode=Mode.INFERENCE)
        kernelize(model, mode=Mode.INFERENCE)
        torch.testing.assert_close(model.scale(X), X)

    def test_device_from_parameters_and_errors(self, kernel_repos):
        with pytest.raises(ValueError, match="Cannot determine model device"):
            kernelize(Identity(), mode=Mode.INFERENCE)
        with pytest.raises(ValueError, match="Unsupported device type 'cuda:0'. Supported device types are: cpu, cuda"):
            kernelize(Model(), mode=Mode.INFERENCE, device="cuda:0")
        model = Model()
        with use_kernel_mapping({"Scale": {"cpu": local(kernel_repos, "double", "Scale")}}):
            kernelize(model, mode=Mode.INFERENCE, device=torch.device("cpu"))
        assert owner(model.scale) == "Scale"

    def test_kernelize_rejects_mapping_only_modes(self):
        with pytest.raises(ValueError, match="can only be used to register"):
            kernelize(Model(), mode=Mode.FALLBACK)
        with pytest.raises(ValueError, match="must contain Mode.INFERENCE or Mode.TRAINING"):
            kernelize(Model(), mode=Mode.TORCH_COMPILE)

    def test_no_mapping(self, caplog):
        model = Model()
        with caplog.at_level(logging.WARNING, logger="kernel_builder.layers"):
            kernelize(model, mode=Mode.INFERENCE)
        assert "No kernel mapping found for layer `SiluAndMul`" in caplog.text
        with pytest.raises(LayerError, match="No layer mapping for `SiluAndMul`") as info:
            kernelize(Model(), mode=Mode.INFERENCE, use_fallback=False)
        assert info.value.hint

    def test_no_device_entry(self, kernel_repos):
        mapping_ = {"SiluAndMul": {"cuda": local(kernel_repos, "act", "SiluAndMul")},
                    "Scale": {"cuda": local(kernel_repos, "double", "Scale")}}
        with use_kernel_mapping(mapping_):
            model = kernelize(Model(), mode=Mode.INFERENCE)
            assert owner(model.act) == "SiluAndMul" and not kernel_module(model.act).endswith(".layers")
            with pytest.raises(ValueError, match="No layer mapping for `SiluAndMul` with device type"):
                kernelize(Model(), mode=Mode.INFERENCE, use_fallback=False)

    def test_missing_layer_in_kernel(self, kernel_repos):
        with use_kernel_mapping({"Scale": {"cpu": local(kernel_repos, "double", "NoSuchLayer")}}):
            with pytest.raises(ValueError, match="Layer `NoSuchLayer` not found in kernel repo `.*double`"):
                kernelize(Model(), mode=Mode.INFERENCE)

    def test_kernel_without_variant(self, kernel_repos):
        with use_kernel_mapping({"Scale": {"cpu": local(kernel_repos, "empty", "Scale")}}):
            with pytest.raises(FileNotFoundError):
                kernelize(Model(), mode=Mode.INFERENCE)
            model = kernelize(Model(), mode=Mode.INFERENCE, use_fallback=KernelizeFallback.ALL)
        assert owner(model.scale) == "Identity"


class TestCapabilityRanges:
    def _mapping(self, repos, device="cuda", props=CUDAProperties):
        return {
            "Scale": {
                Device(device, props(80, 89)): local(repos, "double", "Scale"),
                Device(device, props(86, 89)): local(repos, "triple", "Scale"),
            }
        }

    @pytest.mark.parametrize(
        ("cap", "factor"), [(86, 3.0), (89, 3.0), (80, 2.0), (85, 2.0)]
    )
    def test_narrowest_range_wins(self, kernel_repos, monkeypatch, cap, factor):
        monkeypatch.setattr(capability, "current_capability", lambda: cap)
        with use_kernel_mapping(self._mapping(kernel_repos)):
            model = kernelize(Model(), mode=Mode.INFERENCE, device="cuda")
        torch.testing.assert_close(model.scale(X), X * factor)

    @pytest.mark.parametrize("cap", [75, 90])
    def test_outside_every_range(self, kernel_repos, monkeypatch, cap):
        monkeypatch.setattr(capability, "current_capability", lambda: cap)
        with use_kernel_mapping(self._mapping(kernel_repos)):
            model = kernelize(Model(), mode=Mode.INFERENCE, device="cuda")
            assert owner(model.scale) == "Identity"
            with pytest.raises(ValueError, match="with the right properties"):
                kernelize(Identity(), mode=Mode.INFERENCE, device="cuda", use_fallback=False)

    def test_unbounded_entry_is_widest(self, kernel_repos, monkeypatch):
        monkeypatch.setattr(capability, "current_capability", lambda: 86)
        mapping_ = {"Scale": {"cuda": local(kernel_repos, "double", "Scale"),
                              Device("cuda", CUDAProperties(75, 90)): local(kernel_repos, "triple", "Scale")}}
        with use_kernel_mapping(mapping_):
            model = kernelize(Model(), mode=Mode.INFERENCE, device="cuda")
        torch.testing.assert_close(model.scale(X), X * 3)

    def test_rocm_ranges(self, kernel_repos, monkeypatch):
        monkeypatch.setattr(capability, "current_capability", lambda: 87)
        with use_kernel_mapping(self._mapping(kernel_repos, "rocm", ROCMProperties)):
            model = kernelize(Model(), mode=Mode.INFERENCE, device="rocm")
        torch.testing.assert_close(model.scale(X), X * 3)

    def test_properties_only_on_cuda_and_rocm(self, kernel_repos):
        with pytest.raises(ValueError, match="only supported for 'cuda'"):
            Device("cpu", CUDAProperties(1, 2))


class TestModes:
    def _kernelize(self, repos, registered, mode, **kw):
        options = {m: local(repos, name, "Scale") for m, name in registered.items()}
        with use_kernel_mapping({"Scale": {"cpu": options}}):
            return kernelize(Identity(), mode=mode, device="cpu", **kw)(X)

    @pytest.mark.parametrize(
        ("registered", "mode", "factor"),
        [
            ({Mode.INFERENCE: "double", Mode.TRAINING: "triple"}, Mode.INFERENCE, 2.0),
            ({Mode.INFERENCE: "double", Mode.TRAINING: "triple"}, Mode.TRAINING, 3.0),
            ({Mode.TRAINING: "triple", Mode.FALLBACK: "double"}, Mode.INFERENCE, 3.0),
            ({Mode.INFERENCE | Mode.TORCH_COMPILE: "triple", Mode.FALLBACK: "double"}, Mode.INFERENCE, 3.0),
            ({Mode.INFERENCE | Mode.TORCH_COMPILE: "triple", Mode.FALLBACK: "double"}, Mode.TRAINING, 2.0),
            ({Mode.TRAINING | Mode.TORCH_COMPILE: "triple", Mode.INFERENCE: "double"},
             Mode.INFERENCE | Mode.TORCH_COMPILE, 3.0),
            ({Mode.FALLBACK: "double"}, Mode.TRAINING | Mode.TORCH_COMPILE, 2.0),
            ({Mode.INFERENCE: "double"}, Mode.TRAINING, 1.0),  # nothing usable: original
            ({Mode.TORCH_COMPILE: "double"}, Mode.INFERENCE, 1.0),  # stored, never selected
        ],
    )
    def test_fallback_order(self, kernel_repos, registered, mode, factor):
        torch.testing.assert_close(self._kernelize(kernel_repos, registered, mode), X * factor)

    def test_no_repository_for_mode(self, kernel_repos):
        with pytest.raises(ValueError, match=r"No repository for `Scale` for configuration mode=Mode.TRAINING"):
            self._kernelize(kernel_repos, {Mode.INFERENCE: "double"}, Mode.TRAINING, use_fallback=False)

    def test_registered_for_training_without_backward_serves_inference(self, kernel_repos):
        """0.19.1 holds only the requested mode against the layer, not the registered one."""
        repo = local(kernel_repos, "act", "SiluAndMulNoBackward")
        with use_kernel_mapping({"SiluAndMul": {"cpu": {Mode.TRAINING: repo}}}):
            model = kernelize(Model(), mode=Mode.INFERENCE)
        assert owner(model.act) == "SiluAndMulNoBackward" and kernel_module(model.act).endswith(".layers")

    def test_registered_for_compile_without_compile(self, kernel_repos):
        repo = local(kernel_repos, "act", "SiluAndMulNoCompile")
        with use_kernel_mapping({"SiluAndMul": {"cpu": {Mode.INFERENCE | Mode.TORCH_COMPILE: repo}}}):
            model = kernelize(Model(), mode=Mode.INFERENCE | Mode.TORCH_COMPILE)
            assert owner(model.act) == "SiluAndMul" and not kernel_module(model.act).endswith(".layers")
            with pytest.raises(ValueError, match="does not support torch.compile, needed for mode"):
                kernelize(Model(), mode=Mode.INFERENCE | Mode.TORCH_COMPILE, use_fallback=False)

    @pytest.mark.parametrize(
        ("layer", "mode"),
        [("SiluAndMulNoCompile", Mode.INFERENCE | Mode.TORCH_COMPILE), ("SiluAndMulNoBackward", Mode.TRAINING)],
    )
    def test_requested_mode_unsupported(self, kernel_repos, layer, mode):
        with use_kernel_mapping({"SiluAndMul": {"cpu": local(kernel_repos, "act", layer)}}):
            model = kernelize(Model(), mode=mode)
            assert owner(model.act) == "SiluAndMul" and not kernel_module(model.act).endswith(".layers")
            with pytest.raises(ValueError, match="Available kernel does not support mode"):
                kernelize(Model(), mode=mode, use_fallback=False)

    def test_compiled_kernel_runs(self, kernel_repos):
        model = Model()
        expected = model(X)
        with use_kernel_mapping({"SiluAndMul": {"cpu": local(kernel_repos, "act", "SiluAndMul")}}):
            kernelize(model, mode=Mode.INFERENCE | Mode.TORCH_COMPILE)
        assert kernel_module(model.act).endswith(".layers")
        torch.testing.assert_close(model(X), expected)


class TestValidation:
    @pytest.mark.parametrize(
        ("layer", "message"),
        [
            ("WithInit", "must not override nn.Module constructor"),
            ("ExtraMember", r"must not contain additional members compared to `Identity` \(helper\)"),
            ("TooManyArgs", "different number of arguments"),
            ("KeywordOnly", "different kind of arguments"),
            ("NotAModule", "Layer `NotAModule` is not a Torch layer"),
        ],
    )
    def test_bad_layers(self, kernel_repos, layer, message):
        with use_kernel_mapping({"Scale": {"cpu": local(kernel_repos, "bad", layer)}}):
            with pytest.raises(LayerValidationError, match=message) as info:
                kernelize(Model(), mode=Mode.INFERENCE)
        assert isinstance(info.value, TypeError)
        if layer != "NotAModule":
            assert f"(layer `{layer}`)" in str(info.value) and "bad" in str(info.value)

    def test_good_layer_passes(self, kernel_repos):
        with use_kernel_mapping({"Scale": {"cpu": local(kernel_repos, "bad", "Fine")}}):
            model = kernelize(Model(), mode=Mode.INFERENCE)
        assert owner(model.scale) == "Fine"


class TestMappingScopes:
    def test_nested_contexts(self, kernel_repos):
        double = local(kernel_repos, "double", "Scale")
        triple = local(kernel_repos, "triple", "Scale")
        act = local(kernel_repos, "act", "SiluAndMul")
        register_kernel_mapping({"Scale": {"cpu": double}})
        with use_kernel_mapping({"SiluAndMul": {"cpu": act}}):
            assert set(mapping.current_mapping()) == {"Scale", "SiluAndMul"}
            with use_kernel_mapping({"Scale": {"cpu": triple}}):
                assert set(mapping.current_mapping()) == {"Scale", "SiluAndMul"}
                torch.testing.assert_close(kernelize(Model(), mode=Mode.INFERENCE).scale(X), X * 3)
                with use_kernel_mapping({"SiluAndMul": {"cpu": act}}, inherit_mapping=False):
                    assert set(mapping.current_mapping()) == {"SiluAndMul"}
                    torch.testing.assert_close(kernelize(Model(), mode=Mode.INFERENCE).scale(X), X)
                torch.testing.assert_close(kernelize(Model(), mode=Mode.INFERENCE).scale(X), X * 3)
            torch.testing.assert_close(kernelize(Model(), mode=Mode.INFERENCE).scale(X), X * 2)
            register_kernel_mapping({"Scale": {"cpu": triple}})  # lost when the context ends
        assert set(mapping.current_mapping()) == {"Scale"}
        torch.testing.assert_close(kernelize(Model(), mode=Mode.INFERENCE).scale(X), X * 2)

    def test_register_without_inherit_replaces(self, kernel_repos):
        register_kernel_mapping({"Scale": {"cpu": local(kernel_repos, "double", "Scale")}})
        register_kernel_mapping({"SiluAndMul": {"cpu": local(kernel_repos, "act", "SiluAndMul")}},
                                inherit_mapping=False)
        assert set(mapping.current_mapping()) == {"SiluAndMul"}

    def test_device_reregistration_replaces_modes(self, kernel_repos):
        register_kernel_mapping({"Scale": {"cpu": {Mode.TRAINING: local(kernel_repos, "triple", "Scale")}}})
        register_kernel_mapping({"Scale": {"cpu": {Mode.INFERENCE: local(kernel_repos, "double", "Scale")}}})
        torch.testing.assert_close(kernelize(Model(), mode=Mode.TRAINING).scale(X), X)

    def test_cuda_ranges_merge_across_registrations(self, kernel_repos, monkeypatch):
        monkeypatch.setattr(capability, "current_capability", lambda: 86)
        register_kernel_mapping({"Scale": {"cuda": local(kernel_repos, "double", "Scale")}})
        with use_kernel_mapping({"Scale": {Device("cuda", CUDAProperties(86, 86)): local(kernel_repos, "triple", "Scale")}}):
            torch.testing.assert_close(kernelize(Model(), mode=Mode.INFERENCE, device="cuda").scale(X), X * 3)
        torch.testing.assert_close(kernelize(Model(), mode=Mode.INFERENCE, device="cuda").scale(X), X * 2)

    @pytest.mark.parametrize(
        ("bad", "message"),
        [
            ({"Scale": {"gpu": "x"}}, "Unknown device type: gpu"),
            ({"Scale": {3: "x"}}, "is not a str or Device"),
            ({"Scale": {"cpu": {"inference": None}}}, "is not a Mode"),
            ({"Scale": {"cpu": "not a repo"}}, "is not a repository"),
            ({"Scale": 42}, "must be a dict of device -> repository or a selector function"),
        ],
    )
    def test_bad_mappings(self, bad, message):
        with pytest.raises(LayerError, match=message):
            register_kernel_mapping(bad)
        with pytest.raises(LayerError, match=message):
            with use_kernel_mapping(bad):
                pass
        assert mapping.current_mapping() == {}

    def test_disabled_mapping(self, kernel_repos, monkeypatch):
        monkeypatch.setattr(mapping, "_DISABLED", True)
        with use_kernel_mapping({"Scale": {"cpu": local(kernel_repos, "double", "Scale")}}):
            torch.testing.assert_close(kernelize(Model(), mode=Mode.INFERENCE).scale(X), X)


@use_kernel_forward_from_hub("Quadruple")
def times_one(x: torch.Tensor) -> torch.Tensor:
    return x


@use_kernelized_func(times_one)
class UsesFunc(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return times_one(x)


class TestDecoratorsAndRepos:
    def test_function_layer(self, kernel_repos):
        assert isinstance(times_one, nn.Module)
        torch.testing.assert_close(times_one(X), X)
        model = UsesFunc()
        assert "times_one" not in dict(model.named_children())
        with pytest.warns(DeprecationWarning, match="LocalFuncRepository is deprecated"):
            repo = LocalFuncRepository(kernel_repos["funcs"], func_name="quadruple")
        with use_kernel_mapping({"Quadruple": {"cpu": repo}}):
            kernelize(model, mode=Mode.INFERENCE)
        torch.testing.assert_close(model(X), X * 4)
        kernelize(model, mode=Mode.INFERENCE)  # unmapped: back to the function
        torch.testing.assert_close(model(X), X)

    def test_decorator_misuse(self):
        with pytest.raises(TypeError, match="only be applied to classes or functions"):
            use_kernel_forward_from_hub("X")(42)
        with pytest.raises(ValueError, match="is not decorated with @use_kernel_forward_from_hub"):
            use_kernelized_func(lambda x: x)

    def test_hub_repository_arguments(self):
        with pytest.raises(ValueError, match="Only one of `revision` or `version` must be specified"):
            LayerRepository("org/k", layer_name="L", revision="main", version=1)
        with pytest.raises(ValueError, match="A kernel version or revision must be specified"):
            LayerRepository("org/k", layer_name="L")
        a = LayerRepository("org/k", layer_name="L", version=1, trust_remote_code=["org/k"])
        assert a == LayerRepository("org/k", layer_name="L", version=1, trust_remote_code=["org/k"])
        assert hash(a) and a != LayerRepository("org/k", layer_name="L", version=2)
        assert str(a) == "`org/k` (version: 1), layer `L`"
        with pytest.warns(DeprecationWarning):
            FuncRepository("org/k", func_name="f", version=1)

    def test_locked_repository(self, tmp_path):
        lock = tmp_path / "kernels.lock"
        lock.write_text(json.dumps([{"dependency": {"repo-id": "org/k", "version": 1}, "lock": {"commit": "a" * 40}}]))
        repo = LockedLayerRepository("org/k", lockfile=lock, layer_name="L")
        assert repo.sha == "a" * 40 and str(repo) == f"`org/k` (revision: {'a' * 40}), layer `L`"
        with pytest.raises(ValueError, match="Kernel `org/other` is not locked"):
            LockedLayerRepository("org/other", lockfile=lock, layer_name="L")
        with pytest.raises(ValueError, match="Kernel `org/k` is not locked"):
            LockedLayerRepository("org/k", layer_name="L")  # this test's package ships no lock file

    def test_top_level_exports(self):
        for name in ("kernelize", "Mode", "use_kernel_mapping", "LocalLayerRepository", "CUDAProperties"):
            assert getattr(kernel_builder, name) is getattr(kernel_builder.layers, name)


def test_kernelized_function_runs_under_torch_compile(tmp_path):
    """A model's copy of a kernelized function is called from a compiled graph (fullgraph:
    no graph break) and gives what the eager model gives. (A tree of its own: dynamo marks
    the classes it traces, which the shared trees' layer validation would then see.)"""
    from layers_trees import SILU_AND_MUL, make_kernel

    repo = LocalLayerRepository(make_kernel(tmp_path, "act-compiled", SILU_AND_MUL), layer_name="SiluAndMul")

    @use_kernel_forward_from_hub("SiluAndMul")
    def gated(x: torch.Tensor) -> torch.Tensor:
        return x[..., : x.shape[-1] // 2]

    @use_kernelized_func(gated)
    class Gate(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return gated(x) + 1

    x = torch.randn(4, 16)
    model = Gate()
    with use_kernel_mapping({"SiluAndMul": {"cpu": repo}}):
        kernelize(model, mode=Mode.INFERENCE | Mode.TORCH_COMPILE, device="cpu")
    expected = F.silu(x[..., :8]) * x[..., 8:] + 1
    torch.testing.assert_close(model(x), expected)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(x), expected)
    torch.testing.assert_close(Gate()(x), x[..., :8] + 1)  # another instance: not kernelized
