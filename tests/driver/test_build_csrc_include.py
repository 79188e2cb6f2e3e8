"""``csrc/`` is on every source's include path, as in the reference builder: megablocks'
``torch-ext/torch_binding.cpp`` includes ``"cumsum.h"`` and ``"grouped_gemm/grouped_gemm.h"``,
headers under ``csrc/`` that build.toml lists but no ``include`` declares."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from buildtest_helpers import CPU_PYTHON, CPU_VARIANT, copy_example, run_variant

pytestmark = pytest.mark.timeout(600)


def test_a_binding_includes_a_csrc_header_without_an_include_key(tmp_path):
    kernel = copy_example("relu", tmp_path)
    (kernel / "csrc" / "ops").mkdir(parents=True)
    (kernel / "relu_cpu" / "relu_cpu.cpp").rename(kernel / "csrc" / "relu_cpu.cpp")
    (kernel / "relu_cpu").rmdir()
    (kernel / "csrc" / "ops" / "relu_signature.h").write_text(
        "#pragma once\n#include <ATen/core/Tensor.h>\nvoid relu(at::Tensor &out, at::Tensor const &input);\n"
    )
    binding = kernel / "torch-ext" / "torch_binding.cpp"
    binding.write_text(binding.read_text().replace('#include "torch_binding.h"', '#include "ops/relu_signature.h"'))
    toml = kernel / "build.toml"
    toml.write_text(
        toml.read_text().replace(
            'src = ["relu_cpu/relu_cpu.cpp"]', 'src = ["csrc/relu_cpu.cpp", "csrc/ops/relu_signature.h"]'
        )
    )
    assert "include" not in toml.read_text().split("[kernel.relu_cpu]")[1].split("[kernel.relu_cuda]")[0]

    out = tmp_path / "out"
    done = run_variant(kernel, CPU_VARIANT, out, CPU_PYTHON)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    spec = importlib.util.spec_from_file_location("relu", out / CPU_VARIANT / "__init__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["relu"] = module
    try:
        spec.loader.exec_module(module)
        import torch

        x = torch.tensor([-1.0, 2.0, -3.0])
        assert module.relu(x).tolist() == [0.0, 2.0, 0.0]
    finally:
        sys.modules.pop("relu", None)
