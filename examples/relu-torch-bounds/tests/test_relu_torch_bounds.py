"""relu-torch-bounds builds only for torch 2.12 ([torch] minver = maxver = "2.12").

With torch 2.12 the local build succeeds and the op matches torch.relu; with any other
torch it fails, naming the bound. (A builder fixture: it runs kernel-builder.)
"""

from pathlib import Path

import pytest
import torch
from kernel_builder.flake.local import build_local
from kernel_builder.errors import BuildError

SOURCE = Path(__file__).resolve().parents[1]


def test_local_build_respects_the_torch_bounds(tmp_path):
    version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    if version == (2, 12):
        [result] = build_local(SOURCE, out_dir=tmp_path)
        assert result.variant.startswith("torch212-")
        from kernels import get_local_kernel

        x = torch.randn(100)
        assert torch.equal(get_local_kernel(tmp_path).relu(x), torch.relu(x))
    else:
        bound = "maxver" if version > (2, 12) else "minver"
        with pytest.raises(BuildError, match=rf"\[torch\]\.{bound} 2\.12"):
            build_local(SOURCE, out_dir=tmp_path)
        assert not any(p.name.startswith("torch") for p in tmp_path.iterdir())
