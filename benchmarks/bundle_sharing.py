"""Adding torch versions to a bundle costs only the units that read torch (issue 46).

1. A generated CUDA kernel (salted: nothing of it is in the store): six heavy torch-free
   units (`heavy/heavy_K.cu`, twelve instantiations of a 512-step unrolled kernel, only
   `cuda_runtime.h`) and the torch binding; one architecture (`cuda-capabilities = ["9.0"]`).
   Its torch 2.13 cu130 variant is built through Nix (evaluation included: the plan and deps
   steps are built while it is evaluated), then its torch 2.12 and 2.14 cu130 variants in one
   `nix build`. Their six heavy objects are the 2.13 variant's (one derivation: the same
   compile), so the second build compiles only the two bindings. Printed: both wall times,
   what the second build compiled, and `ratio: second / first` on the last line
   (goal: <= 0.9; about 2.0 when every unit compiled per torch version).
2. With `--flash` (on by default): the object derivations of a flash-attn2-like kernel's three
   cu130 torch variants, counted from `nix build --dry-run`. kernels-community's flash-attn2
   cannot be fetched here, so the stand-in has its shape: 73 torch-free CUDA units that
   include only CUDA and the kernel's own headers (`flash.h` -> `namespace_config.h`,
   `philox_unpack.cuh`), and `flash_api.cpp`, which includes torch. Expected: 73 + 3 (one
   `flash_api.cpp` per torch version), not 3 x 74.

    .venv/bin/python benchmarks/bundle_sharing.py [--no-flash | --flash-only] [--jobs N]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

from _per_object_bench import _FLAKE, builder

from kernel_builder import nix

SYSTEM = "x86_64-linux"
FIRST = "torch213-cxx11-cu130-x86_64-linux"
MORE = ("torch212-cxx11-cu130-x86_64-linux", "torch214-cxx11-cu130-x86_64-linux")
HEAVY = 6
_BUILDING = re.compile(r"building '/nix/store/[a-z0-9]{32}-([^']+)\.drv'")
_WILL_BUILD = re.compile(r"^\s+/nix/store/[a-z0-9]{32}-([^\s]+)\.drv$", re.M)

_TOML = """[general]
name = "{name}"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cuda"]

[torch]
src = ["torch-ext/torch_binding.cpp"]

[kernel.{name}]
backend = "cuda"
depends = ["torch"]
cuda-capabilities = ["9.0"]
src = [{sources}]
"""
_HEAVY = """#include <cuda_runtime.h>

template <int N, int M>
__global__ void heavy_kernel_{k}(float *x, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
#pragma unroll
  for (int k = 0; k < N; ++k) {{
    v = v * 1.0001f + (float)(k % M);
    v = v > 0.0f ? sqrtf(v) + {k}.0f : -v;
  }}
  x[i] = v;
}}

void heavy_{k}(float *x, int n) {{
{launches}
}}
"""
_BINDING = """#include <torch/library.h>

#include "registration.h"

{declarations}

void run(at::Tensor &x) {{
  float *p = x.data_ptr<float>();
  int n = static_cast<int>(x.numel());
{calls}
}}

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {{
  ops.def("run(Tensor! x) -> ()");
  ops.impl("run", c10::kCUDA, &run);
}}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
"""
_INIT = """from ._ops import ops

__all__ = ["ops"]
"""


def write(root: Path, builder_dir: Path, name: str, files: dict[str, str]) -> Path:
    salt = f"// salt {time.time_ns()}\n"
    for rel, text in {**files, "flake.nix": _FLAKE % builder_dir, f"torch-ext/{name}/__init__.py": _INIT}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + (salt if rel.endswith((".cu", ".cpp", ".h", ".cuh")) else "")
                        + (f"# {salt[3:]}" if rel == "build.toml" else ""))
    return root


def heavy_kernel(root: Path, builder_dir: Path) -> Path:
    files = {}
    for k in range(HEAVY):
        launches = "\n".join(f"  heavy_kernel_{k}<512, {m}><<<(n + 255) / 256, 256>>>(x, n);" for m in range(1, 13))
        files[f"heavy/heavy_{k}.cu"] = _HEAVY.format(k=k, launches=launches)
    sources = ", ".join(f'"heavy/heavy_{k}.cu"' for k in range(HEAVY))
    files["build.toml"] = _TOML.format(name="bundle", sources=sources)
    files["torch-ext/torch_binding.cpp"] = _BINDING.format(
        declarations="\n".join(f"void heavy_{k}(float *x, int n);" for k in range(HEAVY)),
        calls="\n".join(f"  heavy_{k}(p, n);" for k in range(HEAVY)))
    return write(root, builder_dir, "bundle", files)


def flash_like(root: Path, builder_dir: Path, units: int = 73) -> Path:
    """flash-attn2's shape: kernel instantiation files that read only CUDA and the kernel's
    own headers, and flash_api.cpp, which reads torch."""
    files = {
        "csrc/namespace_config.h": "#pragma once\n#define FLASH_NAMESPACE flash\n",
        "csrc/philox_unpack.cuh": "#pragma once\n#include <cuda.h>\n#include <cstdint>\n",
        "csrc/flash.h": '#pragma once\n#include <cuda.h>\n#include "namespace_config.h"\n#include "philox_unpack.cuh"\n'
                        "namespace FLASH_NAMESPACE {\nstruct Flash_fwd_params { void *q; int h; };\n"
                        "template <int D> void run_mha_fwd(Flash_fwd_params &p, CUstream s);\n}\n",
    }
    names = []
    for k in range(units):
        rel = f"csrc/flash_fwd_hdim{32 * (1 + k % 8)}_{k:02d}_sm80.cu"
        names.append(rel)
        files[rel] = ('#include "flash.h"\n\nnamespace FLASH_NAMESPACE {\n'
                      f"template <> void run_mha_fwd<{k}>(Flash_fwd_params &p, CUstream s) {{ (void)p; (void)s; }}\n}}\n")
    files["torch-ext/torch_binding.cpp"] = _BINDING.format(declarations='#include "../csrc/flash.h"', calls="  (void)p; (void)n;")
    files["build.toml"] = _TOML.format(name="flash", sources=", ".join(f'"{n}"' for n in ["csrc/flash.h", "csrc/namespace_config.h",
                                                                                      "csrc/philox_unpack.cuh", *names]))
    return write(root, builder_dir, "flash", files)


def attr(variant: str) -> str:
    return f".#legacyPackages.{SYSTEM}.redistributable.{variant}"


def timed(kernel: Path, variants: tuple[str, ...], jobs: int) -> tuple[float, list[str]]:
    """Wall seconds of one `nix build` of ``variants``, evaluation (plan, deps) included."""
    start = time.perf_counter()
    done = nix.run_nix(["build", "-L", "--no-link", "-j", str(jobs), "--cores", "1", *map(attr, variants)], cwd=kernel)
    return time.perf_counter() - start, _BUILDING.findall(done.stderr)


def flash_count(tmp: Path, builder_dir: Path) -> None:
    kernel = flash_like(tmp / "flash", builder_dir)
    variants = (FIRST, *MORE)
    start = time.perf_counter()
    done = nix.run_nix(["build", "--dry-run", "--no-link", *map(attr, variants)], cwd=kernel)
    pending = _WILL_BUILD.findall(done.stderr.split("will be fetched")[0])
    objects = sorted(n for n in pending if n.startswith("0-obj-"))
    shared = [n for n in objects if "-cxx11-cu130-x86_64-linux-" in n and not n.startswith("0-obj-flash-torch")]
    print(f"flash-attn2-like stand-in (73 torch-free units + flash_api.cpp; kernels-community is not reachable here): "
          f"nix build --dry-run of its 3 cu130 torch variants: {len(objects)} object derivation(s), "
          f"{len(shared)} shared by the 3, {len(objects) - len(shared)} per torch version (3 x 74 = 222 before); "
          f"evaluation built the plans and deps in {time.perf_counter() - start:.0f}s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-flash", action="store_true", help="skip the dry-run count of the flash-attn2-like kernel")
    parser.add_argument("--flash-only", action="store_true", help="only the dry-run count (no ratio line)")
    parser.add_argument("--jobs", type=int, default=1, help="nix build -j (default 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kb-bundle-") as tmp_name:
        tmp = Path(tmp_name)
        builder_dir = builder(tmp)
        if not args.no_flash:
            flash_count(tmp, builder_dir)
        if args.flash_only:
            return
        kernel = heavy_kernel(tmp / "bundle", builder_dir)
        first, built = timed(kernel, (FIRST,), args.jobs)
        objects = [n for n in built if n.startswith("0-obj-")]
        print(f"{FIRST}: {first:.1f}s, {len(objects)} object(s) compiled")
        second, built = timed(kernel, MORE, args.jobs)
        objects = sorted(n for n in built if n.startswith("0-obj-"))
        print(f"{' + '.join(MORE)}: {second:.1f}s, compiled {', '.join(objects) or 'no object'}")
        if any("heavy" in n for n in objects):
            sys.exit("a heavy torch-free unit compiled again for another torch version")
    print(f"ratio: {second / first:.3f}")


if __name__ == "__main__":
    main()
