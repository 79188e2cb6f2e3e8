"""A generated corpus of build.toml documents for the Nix-vs-Python matrix comparison.

Deterministic (seeded) so a failure names a document that can be regenerated. Each
document is plain edition-5 TOML whose shape is easy to read in a failure message.
"""

from __future__ import annotations

import random

BACKENDS = ["cpu", "cuda", "metal", "rocm", "xpu", "tpu", "neuron"]
KERNEL_BACKENDS = ["cpu", "cuda", "metal", "rocm", "xpu"]
TORCH_VERSIONS = ["2.11", "2.12", "2.13", "2.14", "2.0", "2.9", "3.0"]
CUDA_VERSIONS = ["12.6", "12.8", "13.0", "13.2", "11.8", "12.0"]


def _list(values: list[str]) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def _bounds(rnd: random.Random, versions: list[str], p_min: float, p_max: float) -> list[str]:
    """``minver``/``maxver`` lines (min <= max), each present with its probability."""
    lo, hi = sorted(rnd.sample(versions, 2), key=lambda v: tuple(int(p) for p in v.split(".")))
    lines = []
    if rnd.random() < p_min:
        lines.append(f'minver = "{lo}"')
    if rnd.random() < p_max:
        lines.append(f'maxver = "{hi}"')
    return lines


def document(seed: int) -> str:
    rnd = random.Random(seed)
    backends = rnd.sample(BACKENDS, rnd.randint(1, 4))
    framework = rnd.choice(["torch", "torch", "torch", "torch-noarch", "tvm-ffi"])
    lines = [
        "[general]",
        f'name = "kernel-{seed}"',
        "version = 1",
        "edition = 5",
        'license = "Apache-2.0"',
        f"backends = {_list(backends)}",
    ]
    if "cuda" in backends and rnd.random() < 0.5:
        lines.append("")
        lines.append("[general.cuda]")
        lines += _bounds(rnd, CUDA_VERSIONS, 0.7, 0.7)
    lines.append("")
    if framework == "torch":
        lines.append("[torch]")
        lines.append('src = ["torch-ext/torch_binding.cpp"]')
        lines += _bounds(rnd, TORCH_VERSIONS, 0.4, 0.3)
        choice = rnd.random()
        if choice < 0.2:
            lines.append(f'stable-abi = "{rnd.choice(["2.10", "2.11", "2.12"])}"')
        elif choice < 0.5:
            lines.append("")
            lines.append("[torch.stable-abi]")
            for b in rnd.sample(KERNEL_BACKENDS, rnd.randint(1, 3)):  # may name backends not in general.backends
                lines.append(f'{b} = "{rnd.choice(["2.10", "2.11", "2.12"])}"')
    elif framework == "torch-noarch":
        lines.append("[torch-noarch]")
        if rnd.random() < 0.5:
            lines.append('cuda-capabilities = ["9.0", "10.0"]')
    else:
        lines.append("[tvm-ffi]")
        lines.append('src = ["tvm-ffi-ext/binding.cpp"]')
    if framework != "torch-noarch":
        with_kernels = [b for b in backends if b in KERNEL_BACKENDS and rnd.random() < 0.75]
        for b in with_kernels:
            lines += ["", f"[kernel.{b}_impl]", f'backend = "{b}"', 'depends = ["torch"]', f'src = ["{b}/k.cpp"]']
    return "\n".join(lines) + "\n"


def corpus(count: int = 70) -> list[str]:
    return [document(seed) for seed in range(count)]
