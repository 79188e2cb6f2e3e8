"""Conditions on use_kernel_forward_from_hub, and layer selectors as mapping values."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from kernel_builder.layers import (
    LocalLayerRepository,
    Mode,
    kernelize,
    use_kernel_forward_from_hub,
    use_kernel_mapping,
)
from kernel_builder.layers.errors import LayerValidationError, SelectorError
from layers_trees import fresh_mapping, kernel_repos  # noqa: F401  (fixtures)
from torch import nn
from torch.nn import functional as F

pytestmark = pytest.mark.filterwarnings("ignore:.*has no digest")

X = torch.randn(3, 16)


def is_kernel(module: nn.Module) -> bool:
    return module.forward.__func__.__module__.endswith(".layers")


@use_kernel_forward_from_hub("SiluAndMul", condition=lambda module: module.config.hidden_act == "silu")
class GatedAct(nn.Module):
    def __init__(self, config: SimpleNamespace) -> None:
        super().__init__()
        self.config = config

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        act = F.silu if self.config.hidden_act == "silu" else F.gelu
        return act(x[..., :d]) * x[..., d:]


class ActModel(nn.Module):
    def __init__(self, acts: list[str]) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)
        self.acts = nn.ModuleList(GatedAct(SimpleNamespace(hidden_act=a)) for a in acts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([act(self.proj(x)) for act in self.acts], dim=-1)


class TestConditions:
    ACTS = ["silu", "gelu", "silu", "gelu", "gelu", "silu"]

    def test_only_silu_instances_kernelized(self, kernel_repos):
        model = ActModel(self.ACTS)
        expected = model(X)
        repo = LocalLayerRepository(kernel_repos["act"], layer_name="SiluAndMul")
        with use_kernel_mapping({"SiluAndMul": {"cpu": repo}}):
            kernelize(model, mode=Mode.INFERENCE)
        assert [is_kernel(a) for a in model.acts] == [a == "silu" for a in self.ACTS]
        for act in model.acts:
            if act.config.hidden_act == "gelu":
                assert act.forward.__func__ is GatedAct.forward
        torch.testing.assert_close(model(X), expected)

    def test_condition_reevaluated_per_kernelize(self, kernel_repos):
        model = ActModel(["silu", "gelu"])
        repo = LocalLayerRepository(kernel_repos["act"], layer_name="SiluAndMul")
        with use_kernel_mapping({"SiluAndMul": {"cpu": repo}}):
            kernelize(model, mode=Mode.INFERENCE)
            model.acts[0].config.hidden_act = "gelu"
            model.acts[1].config.hidden_act = "silu"
            kernelize(model, mode=Mode.INFERENCE)
        assert [is_kernel(a) for a in model.acts] == [False, True]

    def test_no_condition_means_always(self, kernel_repos):
        @use_kernel_forward_from_hub("SiluAndMul")
        class Plain(GatedAct):
            pass

        model = nn.Sequential(Plain(SimpleNamespace(hidden_act="gelu")), nn.Linear(8, 8))
        repo = LocalLayerRepository(kernel_repos["act"], layer_name="SiluAndMul")
        with use_kernel_mapping({"SiluAndMul": {"cpu": repo}}):
            kernelize(model, mode=Mode.INFERENCE)
        assert is_kernel(model[0])

    def test_condition_that_raises(self):
        def needs_config(module):
            return module.config.hidden_act == "silu"

        @use_kernel_forward_from_hub("SiluAndMul", condition=needs_config)
        class NoConfig(nn.Module):
            def forward(self, x):
                return x

        with pytest.raises(ValueError, match=r"Condition `.*needs_config` for layer `SiluAndMul` raised AttributeError") as info:
            kernelize(nn.Sequential(NoConfig()), mode=Mode.INFERENCE, device="cpu")
        assert isinstance(info.value.__cause__, AttributeError)

    def test_false_condition_skips_mapping_lookup(self):
        model = ActModel(["gelu", "gelu"])
        kernelize(model, mode=Mode.INFERENCE, use_fallback=False)  # no mapping, yet no error
        assert not any(is_kernel(a) for a in model.acts)


@use_kernel_forward_from_hub("Scale")
class Scale(nn.Module):
    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.norm = nn.LayerNorm(hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def scale_model(sizes: list[int]) -> nn.ModuleList:
    return nn.ModuleList(Scale(h) for h in sizes)


class Recorder:
    """A selector by hidden size that records every call."""

    def __init__(self, repos: dict) -> None:
        self.small = LocalLayerRepository(repos["double"], layer_name="Scale")
        self.large = LocalLayerRepository(repos["triple"], layer_name="Scale")
        self.calls: list[tuple[nn.Module, object, Mode]] = []

    def __call__(self, module: nn.Module, *, device_type, mode: Mode):
        self.calls.append((module, device_type, mode))
        if module.hidden_size >= 1024:
            return None
        return (self.small if module.hidden_size <= 64 else self.large), Mode.INFERENCE


class TestSelectors:
    SIZES = [32, 128, 64, 1024, 256]

    def test_picks_kernel_by_hidden_size(self, kernel_repos):
        select = Recorder(kernel_repos)
        model = scale_model(self.SIZES)
        with use_kernel_mapping({"Scale": select}):
            kernelize(model, mode=Mode.INFERENCE, device="cpu")
        factors = [2.0, 3.0, 2.0, 1.0, 3.0]
        for layer, factor in zip(model, factors):
            torch.testing.assert_close(layer(X), X * factor)
        # Exactly once per instance, with the device and the mode of the kernelize call.
        assert [call[0] for call in select.calls] == list(model)
        assert all(call[1] == torch.device("cpu") and isinstance(call[1], torch.device) for call in select.calls)
        assert all(call[2] is Mode.INFERENCE for call in select.calls)

    def test_called_once_per_instance_even_when_shared(self, kernel_repos):
        select = Recorder(kernel_repos)
        shared = Scale(32)
        model = nn.Sequential(shared, nn.Sequential(shared, Scale(128)))
        with use_kernel_mapping({"Scale": select}):
            kernelize(model, mode=Mode.INFERENCE | Mode.TORCH_COMPILE, device="cpu")
        assert [call[0] for call in select.calls] == [shared, model[1][1]]
        assert select.calls[0][2] == Mode.INFERENCE | Mode.TORCH_COMPILE

    def test_none_keeps_original(self, kernel_repos):
        model = scale_model([16, 16])
        with use_kernel_mapping({"Scale": lambda module, *, device_type, mode: None}):
            kernelize(model, mode=Mode.INFERENCE, device="cpu", use_fallback=False)
        assert all(layer.forward.__func__ is Scale.forward for layer in model)

    def test_selector_that_raises(self):
        def pick_by_memory(module, *, device_type, mode):
            raise RuntimeError("out of memory probing")

        with use_kernel_mapping({"Scale": pick_by_memory}):
            with pytest.raises(SelectorError) as info:
                kernelize(scale_model([8]), mode=Mode.INFERENCE, device="cpu")
        message = str(info.value)
        assert "pick_by_memory" in message and "`Scale`" in message and "out of memory probing" in message
        assert isinstance(info.value.__cause__, RuntimeError) and isinstance(info.value, ValueError)

    @pytest.mark.parametrize(
        "bad",
        ["double", ("repo",), (None, Mode.INFERENCE), ("REPO", "inference"), ["REPO", Mode.INFERENCE],
         ("REPO", Mode.INFERENCE, 1)],
    )
    def test_bad_return_value(self, kernel_repos, bad):
        repo = LocalLayerRepository(kernel_repos["double"], layer_name="Scale")
        value = tuple(repo if v == "REPO" else v for v in bad) if isinstance(bad, tuple) else bad
        if isinstance(bad, list):
            value = [repo, Mode.INFERENCE]

        def broken_select(module, *, device_type, mode):
            return value

        with use_kernel_mapping({"Scale": broken_select}):
            with pytest.raises(SelectorError, match=r"broken_select.*`Scale`.*expected a \(repository, Mode\) tuple or None"):
                kernelize(scale_model([8]), mode=Mode.INFERENCE, device="cpu")

    def test_mode_that_cannot_serve_request(self, kernel_repos):
        repo = LocalLayerRepository(kernel_repos["double"], layer_name="Scale")
        with use_kernel_mapping({"Scale": lambda module, *, device_type, mode: (repo, Mode.INFERENCE)}):
            model = kernelize(scale_model([8]), mode=Mode.TRAINING, device="cpu")
            assert model[0].forward.__func__ is Scale.forward
            with pytest.raises(ValueError, match="cannot serve mode=Mode.TRAINING"):
                kernelize(scale_model([8]), mode=Mode.TRAINING, device="cpu", use_fallback=False)

    def test_selected_layer_is_validated(self, kernel_repos):
        repo = LocalLayerRepository(kernel_repos["bad"], layer_name="ExtraMember")
        with use_kernel_mapping({"Scale": lambda module, *, device_type, mode: (repo, Mode.FALLBACK)}):
            with pytest.raises(LayerValidationError, match="must not contain additional members"):
                kernelize(scale_model([8]), mode=Mode.INFERENCE, device="cpu")

    def test_selector_scoping(self, kernel_repos):
        select = Recorder(kernel_repos)
        table = {"cpu": LocalLayerRepository(kernel_repos["triple"], layer_name="Scale")}
        with use_kernel_mapping({"Scale": select}):
            with use_kernel_mapping({"Scale": table}):
                torch.testing.assert_close(kernelize(scale_model([8]), mode=Mode.INFERENCE)[0](X), X * 3)
            assert select.calls == []
            torch.testing.assert_close(kernelize(scale_model([8]), mode=Mode.INFERENCE)[0](X), X * 2)
        assert len(select.calls) == 1

    def test_condition_checked_before_selector(self, kernel_repos):
        @use_kernel_forward_from_hub("Scale", condition=lambda m: m.hidden_size > 100)
        class Conditional(Scale):
            pass

        select = Recorder(kernel_repos)
        model = nn.ModuleList([Conditional(8), Conditional(128)])
        with use_kernel_mapping({"Scale": select}):
            kernelize(model, mode=Mode.INFERENCE, device="cpu")
        assert [call[0] for call in select.calls] == [model[1]]
        torch.testing.assert_close(model[1](X), X * 3)
        torch.testing.assert_close(model[0](X), X)
