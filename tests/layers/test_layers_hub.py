"""Hub repositories (LayerRepository, LockedLayerRepository) through the loader, against
the local Hub test server."""

from __future__ import annotations

import json

import pytest
import torch
from hub_fixture import publish
from kernel_builder.layers import (
    LayerRepository,
    LockedLayerRepository,
    Mode,
    kernelize,
    use_kernel_forward_from_hub,
    use_kernel_mapping,
)
from layers_trees import SCALED, fresh_mapping, make_kernel  # noqa: F401  (fixture)
from torch import nn

pytestmark = pytest.mark.filterwarnings("ignore:.*has no digest")

REPO = "acme/scale"
X = torch.randn(2, 4)


@use_kernel_forward_from_hub("Scale")
class Identity(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


@pytest.fixture(autouse=True)
def forget_loaded_layers(monkeypatch):
    """Loaded layers are memoised per process; each test here has its own Hub."""
    import importlib

    monkeypatch.setattr(importlib.import_module("kernel_builder.layers.kernelize"), "_LOADED", {})


@pytest.fixture
def hub(hub_server, tmp_path):
    commits = {}
    for version, factor in ((1, 2.0), (2, 3.0)):
        tree = make_kernel(tmp_path / f"v{version}", "scale", SCALED.format(factor=factor))
        commits[version] = publish(hub_server, REPO, tree / "build", version=version)
    hub_server.commits = commits
    return hub_server


def run(repo) -> torch.Tensor:
    with use_kernel_mapping({"Scale": {"cpu": repo}}):
        model = kernelize(nn.Sequential(Identity()), mode=Mode.INFERENCE, device="cpu", use_fallback=False)
    return model(X)


def test_versions_and_revisions(hub):
    torch.testing.assert_close(run(LayerRepository(REPO, layer_name="Scale", version=1)), X * 2)
    torch.testing.assert_close(run(LayerRepository(REPO, layer_name="Scale", version=2)), X * 3)
    torch.testing.assert_close(run(LayerRepository(REPO, layer_name="Scale", revision="v1")), X * 2)


def test_missing_version_names_available_ones(hub):
    with pytest.raises(ValueError, match="1, 2"):
        run(LayerRepository(REPO, layer_name="Scale", version=3))


def test_missing_layer_names_repository(hub):
    with pytest.raises(ValueError, match=r"Layer `Nope` not found in kernel repo `acme/scale` \(version: 2\)"):
        run(LayerRepository(REPO, layer_name="Nope", version=2))


def test_untrusted_publisher(hub):
    hub.trust_org("acme", trusted=False)
    with pytest.raises(ValueError, match="trust"):
        run(LayerRepository(REPO, layer_name="Scale", version=1))
    repo = LayerRepository(REPO, layer_name="Scale", version=1, trust_remote_code=True)
    torch.testing.assert_close(run(repo), X * 2)


def test_locked_repository(hub, tmp_path):
    lock = tmp_path / "kernels.lock"
    entry = {"dependency": {"repo-id": REPO, "version": 1}, "lock": {"commit": hub.commits[1]}}
    lock.write_text(json.dumps([entry]))
    repo = LockedLayerRepository(REPO, lockfile=lock, layer_name="Scale")
    assert repo.sha == hub.commits[1]
    torch.testing.assert_close(run(repo), X * 2)
