"""Benchmark: kernelize a model with 500 marked layers, ours vs PyPI `kernels`.

Both libraries kernelize the same model with the same local kernel trees (written to a
temporary directory); kernels are loaded once before timing, so the time measured is
the per-call work: walking the model, resolving mappings, binding forwards.
Prints each library's best-of-N time and, on the last line, `ratio: ours/theirs`.

Run: .venv/bin/python benchmarks/kernelize.py [--layers 500] [--repeat 30]
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

LAYERS = """
    import torch
    from torch import nn
    from torch.nn import functional as F


    class SiluAndMul(nn.Module):
        def forward(self, x):
            d = x.shape[-1] // 2
            return F.silu(x[..., :d]) * x[..., d:]


    class Scale(nn.Module):
        def forward(self, x):
            return x * 2
"""


def write_tree(root: Path, name: str) -> Path:
    variant = root / name / "build" / "torch-cpu"
    variant.mkdir(parents=True)
    (variant / "__init__.py").write_text("from . import layers\n")
    (variant / "layers.py").write_text(textwrap.dedent(LAYERS))
    meta = {"name": name, "id": f"_{name}_cpu_bench01", "version": 1, "license": "Apache-2.0",
            "python-depends": [], "backend": {"type": "cpu"}}
    (variant / "metadata.json").write_text(json.dumps(meta))
    return root / name


def build_model(n_layers: int):
    from kernel_builder.layers import use_kernel_forward_from_hub
    from torch import nn

    @use_kernel_forward_from_hub("SiluAndMul")
    class SiluAndMul(nn.Module):
        def forward(self, x):
            d = x.shape[-1] // 2
            return nn.functional.silu(x[..., :d]) * x[..., d:]

    @use_kernel_forward_from_hub("Scale", condition=lambda m: m.enabled)
    class Scale(nn.Module):
        def __init__(self, enabled: bool) -> None:
            super().__init__()
            self.enabled = enabled

        def forward(self, x):
            return x

    class Block(nn.Module):
        def __init__(self, i: int) -> None:
            super().__init__()
            self.proj = nn.Linear(4, 4)
            self.act = SiluAndMul()
            self.scale = Scale(i % 2 == 0)

    return nn.Sequential(*(Block(i) for i in range(n_layers // 2)))


def time_kernelize(lib, model, repo: Path, repeat: int) -> float:
    mapping = {
        "SiluAndMul": {"cpu": lib.LocalLayerRepository(repo, layer_name="SiluAndMul")},
        "Scale": {
            "cpu": {lib.Mode.INFERENCE: lib.LocalLayerRepository(repo, layer_name="Scale")},
            "cuda": lib.LocalLayerRepository(repo, layer_name="Scale"),
        },
    }
    best = float("inf")
    with lib.use_kernel_mapping(mapping, inherit_mapping=False):
        lib.kernelize(model, mode=lib.Mode.INFERENCE, device="cpu")  # loads the kernels once
        for _ in range(repeat):
            start = time.perf_counter()
            lib.kernelize(model, mode=lib.Mode.INFERENCE, device="cpu")
            best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=500, help="number of marked layers")
    parser.add_argument("--repeat", type=int, default=30, help="timed kernelize calls per library")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)

    import kernel_builder.layers as ours
    import kernels

    with tempfile.TemporaryDirectory() as tmp:
        repo = write_tree(Path(tmp), "benchact")
        model = build_model(args.layers)
        marked = sum(hasattr(type(m), "kernel_layer_name") for m in model.modules())
        # Alternate the libraries so drift in machine load affects both alike.
        ours_t, theirs_t = float("inf"), float("inf")
        for _ in range(3):
            ours_t = min(ours_t, time_kernelize(ours, model, repo, args.repeat))
            theirs_t = min(theirs_t, time_kernelize(kernels, model, repo, args.repeat))
    print(f"marked layers: {marked}")
    print(f"kernel_builder.layers.kernelize: {ours_t * 1e3:.3f} ms")
    print(f"kernels.kernelize (0.17.2):      {theirs_t * 1e3:.3f} ms")
    print(f"ratio: {ours_t / theirs_t:.3f}")


if __name__ == "__main__":
    main()
