"""``build --local``'s selection: what ``list-variants`` lists, where the toolchain torch fits.

``select_local_variants`` is pure (matrix and toolchain passed in); ``local_variants`` reads
the build sets and this machine, and must agree with ``list-variants`` for every example.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_builder.config import load, loads
from kernel_builder.errors import ConfigError
from kernel_builder.flake.local import local_variants
from kernel_builder.flake.selection import select_local_variants
from kernel_builder.pyenv import Toolchain
from kernel_builder.variants.buildsets import BuildSet, DefaultBounds, load_build_sets
from kernel_builder.variants.compat import buildable, compilable_here
from kernel_builder.variants.host import Platform
from kernel_builder.variants.matrix import matrix
from kernel_builder.variants.names import parse
from kernel_builder.variants.system import toolchain_system
from kernel_builder.versions import Version
from kernel_builder.backends import Backend

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "build.toml").is_file())
LINUX = Platform("x86_64", "linux")
MAC = Platform("aarch64", "darwin")
NOARCH = loads(
    '[general]\nname = "na"\nversion = 1\nedition = 5\nlicense = "MIT"\nbackends = ["cpu", "metal", "cuda"]\n[torch-noarch]\n',
    path=Path("build.toml"),
)


def _toolchain(version: str = "2.13.0", cuda: str | None = None) -> Toolchain:
    return Toolchain("py", (3, 11), version, cuda, None, None, True, "/x", "/x")


def _select(build, toolchain, backends=None, *, host=LINUX, system="x86_64-linux", sets=None, bounds=None):
    listed = matrix(build, sets if sets is not None else load_build_sets(), system, bounds=bounds)
    return select_local_variants(build, listed, toolchain_system(toolchain, host), backends)


def test_the_listed_variants_the_torch_can_build() -> None:
    relu = load(EXAMPLES / "relu")
    names, skipped = _select(relu, _toolchain("2.14.1", "13.0"))
    assert names == ["torch214-cxx11-cpu-x86_64-linux", "torch214-cxx11-cu130-x86_64-linux"]
    assert "torch213-cxx11-cpu-x86_64-linux: Torch version (2.13) does not match environment Torch version (2.14)" in skipped
    names, skipped = _select(relu, _toolchain(), host=MAC, system="aarch64-darwin")
    assert names == []  # no toolchain compiles for macOS on these machines
    assert "torch213-cpu-aarch64-darwin: no toolchain for cpu on aarch64-darwin exists on these machines" in skipped


def test_a_cuda_variant_needs_the_toolchains_exact_cuda() -> None:
    sets = (
        BuildSet("2.14", Backend.CUDA, "x86_64-linux", "12.6"),
        BuildSet("2.14", Backend.CUDA, "x86_64-linux", "13.0"),
        BuildSet("2.14", Backend.CUDA, "x86_64-linux", "13.2"),
    )
    names, skipped = _select(load(EXAMPLES / "relu"), _toolchain("2.14.1", "13.0"), sets=sets, bounds=DefaultBounds())
    assert names == ["torch214-cxx11-cu130-x86_64-linux"]
    assert skipped == [
        "torch214-cxx11-cu126-x86_64-linux: CUDA version (12.6) is not compatible with system CUDA version (13.0)",
        "torch214-cxx11-cu132-x86_64-linux: CUDA version (13.2) is not compatible with system CUDA version (13.0)",
    ]


def test_default_bounds_hold_for_local_builds() -> None:
    """A torch outside build-sets.json's defaultBounds is not built, and the note says why."""
    relu = load(EXAMPLES / "relu")
    sets = (BuildSet("2.13", Backend.CPU, "x86_64-linux"),)
    assert _select(relu, _toolchain(), sets=sets, bounds=DefaultBounds())[0] == ["torch213-cxx11-cpu-x86_64-linux"]
    names, skipped = _select(relu, _toolchain(), sets=sets, bounds=DefaultBounds(torch_max=Version.parse("2.12")))
    assert names == []
    assert skipped == ["torch 2.13 cpu x86_64-linux: torch 2.13 > [torch].maxver 2.12"]


def test_stable_abi_names_the_abi_version() -> None:
    names, _ = _select(load(EXAMPLES / "relu-stable-abi"), _toolchain("2.13.0"))
    assert names[0].startswith("torch-stable-abi") and names[0].endswith("-cpu-x86_64-linux")


def test_noarch_only_where_the_matrix_lists_it() -> None:
    sets = (BuildSet("2.13", Backend.CPU, "x86_64-linux"), BuildSet("2.13", Backend.CUDA, "x86_64-linux", "13.0"))
    names, skipped = _select(NOARCH, _toolchain(), sets=sets, bounds=DefaultBounds())
    assert names == ["torch-cpu", "torch-cuda"] and skipped == []
    with pytest.raises(ConfigError, match="no variant of backend metal is listed for this machine"):
        _select(NOARCH, _toolchain(), ["metal"], sets=sets, bounds=DefaultBounds())


def test_named_backends_are_checked() -> None:
    relu = load(EXAMPLES / "relu")
    assert _select(relu, _toolchain(), ["cuda"])[0] == []
    with pytest.raises(ConfigError, match=r"--backend metal is not in \[general\] backends \['cpu', 'cuda'\]"):
        _select(relu, _toolchain(), ["metal"])
    assert _select(relu, _toolchain(), ["cpu"])[0] == ["torch213-cxx11-cpu-x86_64-linux"]


def test_a_backend_without_a_toolchain_here_is_skipped() -> None:
    build = load(EXAMPLES / "relu")
    sets = (BuildSet("2.13", Backend.CPU, "aarch64-darwin"),)
    names, skipped = _select(build, _toolchain(), sets=sets, bounds=DefaultBounds(), host=MAC, system="aarch64-darwin")
    assert names == [] and skipped == ["torch213-cpu-aarch64-darwin: no toolchain for cpu on aarch64-darwin exists on these machines"]
    # the driver still accepts it by name (it writes the build files, then says so)
    assert buildable(parse("torch213-cxx11-rocm71-x86_64-linux"), toolchain_system(_toolchain(), LINUX)).ok


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_local_and_list_variants_agree(example: str) -> None:
    """Every variant ``build --local`` picks for the test torch is one ``list-variants``
    lists for this machine, and every listed variant that torch can build is picked."""
    python = sys.executable
    done = subprocess.run(
        [python, "-m", "kernel_builder", "list-variants", "--json", str(EXAMPLES / example)],
        capture_output=True, text=True, timeout=120, check=True,
    )
    listed = [row["name"] for row in json.loads(done.stdout)]
    from kernel_builder.pyenv import probe_toolchain

    toolchain = probe_toolchain(python)
    names, _ = local_variants(load(EXAMPLES / example), toolchain)
    system = toolchain_system(toolchain)
    fitting = [n for n in listed if buildable(parse(n), system) and compilable_here(parse(n))]
    assert names == fitting
