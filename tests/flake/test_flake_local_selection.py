"""``build --local``'s selection as a pure function: host, build sets and toolchain passed in."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_builder.config import load, loads
from kernel_builder.config.model import Backend
from kernel_builder.errors import BuildError
from kernel_builder.pyenv import Toolchain
from kernel_builder.variants.host import Platform
from kernel_builder.flake.selection import select_local_variants

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LINUX = Platform("x86_64", "linux")
MAC = Platform("aarch64", "darwin")
NOARCH = loads(
    '[general]\nname = "na"\nversion = 1\nedition = 5\nlicense = "MIT"\nbackends = ["cpu", "metal", "cuda"]\n[torch-noarch]\n',
    path=Path("build.toml"),
)


def _toolchain(version: str = "2.13.0", cuda: str | None = None) -> Toolchain:
    return Toolchain("py", (3, 11), version, cuda, None, None, True, "/x", "/x")


def _select(build, toolchain, backends=None, *, host=LINUX, system="x86_64-linux", listed=()):
    return select_local_variants(build, toolchain, backends, host=host, system=system, listed_noarch=set(listed))


def test_arch_names_follow_the_host_and_the_torch() -> None:
    relu = load(EXAMPLES / "relu")
    assert _select(relu, _toolchain("2.14.1", "13.0")) == (
        ["torch214-cxx11-cpu-x86_64-linux", "torch214-cxx11-cu130-x86_64-linux"],
        [],
    )
    names, skipped = _select(relu, _toolchain(), host=MAC, system="aarch64-darwin")
    assert names == ["torch213-cpu-aarch64-darwin"]  # no cxx11 tag off Linux
    assert skipped == ["cuda: the toolchain torch 2.13.0 cannot build it"]


def test_stable_abi_names_the_abi_version() -> None:
    names, _ = _select(load(EXAMPLES / "relu-stable-abi"), _toolchain("2.13.0"))
    assert names[0].startswith("torch-stable-abi") and names[0].endswith("-cpu-x86_64-linux")


def test_noarch_only_where_a_build_set_lists_it() -> None:
    names, skipped = _select(NOARCH, _toolchain(), listed=[Backend.CPU, Backend.CUDA])
    assert names == ["torch-cpu", "torch-cuda"]
    assert skipped == ["torch-metal: no build set for x86_64-linux (pass --backend metal to build it anyway)"]
    assert _select(NOARCH, _toolchain(), ["metal"])[0] == ["torch-metal"]


def test_named_backends_are_checked() -> None:
    relu = load(EXAMPLES / "relu")
    with pytest.raises(BuildError, match="toolchain for cuda is not available: torch 2.13.0 at py has no CUDA"):
        _select(relu, _toolchain(), ["cuda"])
    with pytest.raises(BuildError, match=r"--backend metal is not in \[general\] backends \['cpu', 'cuda'\]"):
        _select(relu, _toolchain(), ["metal"])
    assert _select(relu, _toolchain(), ["cpu"]) == (["torch213-cxx11-cpu-x86_64-linux"], [])
