"""Kernel trees laid out on disk for the layer tests (pure-Python layers, no ops).

Each tree is ``<root>/build/torch-cpu/{__init__.py, layers.py, metadata.json}`` with a
unique ``metadata.id`` so trees never share a ``sys.modules`` entry.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

__all__ = ["make_kernel", "SILU_AND_MUL", "SCALED", "BAD_LAYERS", "kernel_repos", "fresh_mapping"]


def make_kernel(root: Path, name: str, layers_source: str, init_extra: str = "") -> Path:
    """Write a noarch CPU kernel named ``name`` under ``root``; return the repo dir."""
    repo = root / name
    variant = repo / "build" / "torch-cpu"
    variant.mkdir(parents=True)
    digest = hashlib.sha1(str(repo).encode()).hexdigest()[:7]
    ident = f"_{name.replace('-', '_')}_cpu_{digest}"
    (variant / "__init__.py").write_text("from . import layers\n\n" + textwrap.dedent(init_extra))
    (variant / "layers.py").write_text(textwrap.dedent(layers_source))
    (variant / "metadata.json").write_text(
        json.dumps(
            {
                "name": name,
                "id": ident,
                "version": 1,
                "license": "Apache-2.0",
                "python-depends": [],
                "backend": {"type": "cpu"},
            }
        )
    )
    return repo


# A SiLU-and-mul kernel that is numerically the reference op, with a marker so tests can
# tell which forward ran.
SILU_AND_MUL = """
    import torch
    from torch import nn
    from torch.nn import functional as F

    CALLS = []


    class SiluAndMul(nn.Module):
        can_torch_compile = True

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            CALLS.append(__name__)
            d = x.shape[-1] // 2
            return F.silu(x[..., :d]) * x[..., d:]


    class SiluAndMulNoBackward(nn.Module):
        has_backward = False

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            CALLS.append(__name__)
            d = x.shape[-1] // 2
            return F.silu(x[..., :d]) * x[..., d:]


    class SiluAndMulNoCompile(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            CALLS.append(__name__)
            d = x.shape[-1] // 2
            return F.silu(x[..., :d]) * x[..., d:]
"""

# A kernel whose output differs from the model's layer, so a test can see it ran.
SCALED = """
    import torch
    from torch import nn


    class Scale(nn.Module):
        can_torch_compile = True

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * {factor}
"""

# Layers that must fail validation against a layer with forward(self, x).
BAD_LAYERS = """
    import torch
    from torch import nn


    class WithInit(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            return x


    class ExtraMember(nn.Module):
        def helper(self):
            return 1

        def forward(self, x):
            return x


    class TooManyArgs(nn.Module):
        def forward(self, x, y):
            return x


    class KeywordOnly(nn.Module):
        def forward(self, *, x):
            return x


    class NotAModule:
        def forward(self, x):
            return x


    class Fine(nn.Module):
        def forward(self, x):
            return x
"""


# -- pytest fixtures shared by the layer test files (imported by name) -------------------
import pytest  # noqa: E402


def _empty_dir(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def kernel_repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Kernel trees every layer test can map to (written once per session)."""
    root = tmp_path_factory.mktemp("layer-kernels")
    return {
        "act": make_kernel(root, "act", SILU_AND_MUL),
        "double": make_kernel(root, "double", SCALED.format(factor=2.0)),
        "triple": make_kernel(root, "triple", SCALED.format(factor=3.0)),
        "bad": make_kernel(root, "bad", BAD_LAYERS),
        "funcs": make_kernel(root, "funcs", "", init_extra="def quadruple(x):\n    return x * 4\n"),
        "empty": _empty_dir(root / "empty"),
    }


@pytest.fixture(autouse=True)
def fresh_mapping():
    """Every test starts from an empty kernel mapping and gets the old one back after."""
    from kernel_builder.layers import mapping

    token = mapping._MAPPING.set({})
    yield
    mapping._MAPPING.reset(token)
