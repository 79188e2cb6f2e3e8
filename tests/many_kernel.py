"""A generated CPU kernel with many translation units and one shared header.

``many`` has ``UNITS`` sources ``many/f00.cpp`` ... each adding ``(k + 1) * kScale * x`` to
its output, ``many/common.h`` (declarations and ``kScale``) included by all of them, and the
binding: ``many(x)`` is ``kScale * UNITS * (UNITS + 1) / 2 * x``. The per-object build's
tests and benchmarks edit one source, the header, or nothing, and count what Nix rebuilds.
"""

from __future__ import annotations

from pathlib import Path

UNITS = 16
CPU_VARIANT = "torch213-cxx11-cpu-x86_64-linux"

_BUILD_TOML = """[general]
name = "many"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu"]

[torch]
src = ["torch-ext/torch_binding.cpp"]

[kernel.many]
backend = "cpu"
depends = ["torch"]
src = ["many/common.h", {sources}]
"""

_HEADER = """#pragma once
#include <ATen/core/Tensor.h>

constexpr float kScale = {scale};

{declarations}
"""

_SOURCE = """#include "common.h"

#include <c10/util/Exception.h>

void many_{k:02d}(at::Tensor &out, at::Tensor const &x) {{
  TORCH_CHECK(x.is_contiguous() && out.is_contiguous(), "many: tensors must be contiguous");
  float *o = out.data_ptr<float>();
  float const *in = x.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {{
    o[i] += {factor}.0f * kScale * in[i];
  }}
}}
"""

_BINDING = """#include <torch/library.h>

#include "registration.h"
#include "../many/common.h"

void many(at::Tensor &out, at::Tensor const &x) {{
{calls}
}}

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {{
  ops.def("many(Tensor! out, Tensor x) -> ()");
  ops.impl("many", c10::kCPU, &many);
}}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
"""

_INIT = '''"""Sum of UNITS scaled copies of x, one per translation unit."""

import torch

from ._ops import ops


def many(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    ops.many(out, x)
    return out


__all__ = ["many"]
'''


def source_name(k: int) -> str:
    return f"many/f{k:02d}.cpp"


def write_many(root: Path, *, flake: str | None = None, scale: str = "1.0f") -> Path:
    """Write the kernel into ``root`` (a flake.nix too when ``flake`` is given); return it."""
    sources = ", ".join(f'"{source_name(k)}"' for k in range(UNITS))
    files = {
        "build.toml": _BUILD_TOML.format(sources=sources),
        "many/common.h": header_text(scale),
        "torch-ext/torch_binding.cpp": _BINDING.format(
            calls="\n".join(f"  many_{k:02d}(out, x);" for k in range(UNITS))),
        "torch-ext/many/__init__.py": _INIT,
    }
    for k in range(UNITS):
        files[source_name(k)] = _SOURCE.format(k=k, factor=k + 1)
    if flake is not None:
        files["flake.nix"] = flake
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def header_text(scale: str) -> str:
    declarations = "\n".join(f"void many_{k:02d}(at::Tensor &out, at::Tensor const &x);" for k in range(UNITS))
    return _HEADER.format(scale=scale.removesuffix("f") + "f", declarations=declarations)


def expected_factor(scale: float = 1.0) -> float:
    """``many(x) / x``."""
    return scale * UNITS * (UNITS + 1) / 2
