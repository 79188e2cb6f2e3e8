"""Per-object builds (per-object.nix): real Nix builds of a generated 16-source CPU kernel.

In order on one kernel copy: a cold build builds the plan, one deps step per unit (what it
reads) and their merge, one object per translation unit, the link and the variant; the variant loads with PyPI `kernels` and computes what the
monolithic build computes; editing one source rebuilds its object, the link and the variant,
and nothing else; editing the shared header rebuilds every object (never fewer); editing
nothing builds nothing; a broken source names itself and the compiler's message; and
`nix-store --check` rebuilds an object and the variant bit for bit.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from kernel_builder.errors import KernelBuilderError
from kernel_builder import nix
from many_kernel import CPU_VARIANT, UNITS, expected_factor, header_text, source_name, write_many
from nix_support import run_with_kernels, snapshot_builder

pytestmark = pytest.mark.slow

SYSTEM = "x86_64-linux"
_BUILDING = re.compile(r"building '/nix/store/[a-z0-9]{32}-([^']+)\.drv'")

LOAD = """
import json, pathlib, torch
from kernels import get_local_kernel
kernel = get_local_kernel(pathlib.Path({path!r}))
x = torch.arange(-8, 9, dtype=torch.float32)
print(json.dumps(kernel.many(x).tolist()))
"""


def _flake(builder: Path) -> str:
    return """{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
""" % builder


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    builder = snapshot_builder(tmp_path_factory.mktemp("builder"))
    root = write_many(tmp_path_factory.mktemp("many") / "many", flake=_flake(builder))
    _salt(root)  # never built before: every test below sees what this run builds
    return root


def _salt(root: Path) -> None:
    """build.toml too: the plan sees only it and the sources' names, so salting sources
    alone would find an earlier run's plan in the store."""
    salt = f"salt {time.time_ns()}\n"
    for path in [root / "many" / "common.h", root / "torch-ext" / "torch_binding.cpp",
                 *(root / source_name(k) for k in range(UNITS))]:
        path.write_text(path.read_text() + "// " + salt)
    (root / "build.toml").write_text((root / "build.toml").read_text() + "# " + salt)


def _attr(what: str) -> str:
    return f".#legacyPackages.{SYSTEM}.{what}.{CPU_VARIANT}"


def build(kernel: Path, what: str = "redistributable") -> list[str]:
    """Build the variant; the names of the derivations Nix built, in its order."""
    done = nix.run_nix(["build", "-L", "--no-link", "-j", "1", "--cores", "1", _attr(what)], cwd=kernel)
    return _BUILDING.findall(done.stderr)


def out_path(kernel: Path, what: str = "redistributable") -> Path:
    done = nix.run_nix(["eval", "--raw", _attr(what) + ".outPath"], cwd=kernel)
    return Path(done.stdout) / CPU_VARIANT


def objects(names: list[str]) -> list[str]:
    prefix = f"0-obj-many-{CPU_VARIANT}-"
    return sorted(n.removeprefix(prefix) for n in names if n.startswith(prefix))


def others(names: list[str]) -> list[str]:
    # the kernel's own derivations only: a toolchain part (the driver's Python after an edit
    # of kernel_builder) may build in the same run; the units' measurements: scans()
    return sorted(n.removeprefix(f"many-{CPU_VARIANT}") or "<variant>" for n in names
                  if n.startswith(f"many-{CPU_VARIANT}") and not n.startswith(f"many-{CPU_VARIANT}-deps-"))


def scans(names: list[str]) -> list[str]:
    """The units whose deps step (what the unit reads) ran."""
    prefix = f"many-{CPU_VARIANT}-deps-"
    return sorted(n.removeprefix(prefix) for n in names if n.startswith(prefix))


ALL_OBJECTS = sorted([*(source_name(k).replace("/", "-") for k in range(UNITS)), "torch-ext-torch_binding.cpp"])


def _python(kernel: Path) -> str:
    table = nix.eval_json(f".#legacyPackages.{SYSTEM}.variantTable", cwd=str(kernel))
    return next(row["toolchainPython"] for row in table if row["name"] == CPU_VARIANT)


def _results(kernel: Path, tree: Path) -> list[float]:
    return json.loads(run_with_kernels(_python(kernel), LOAD.format(path=str(tree))))


@pytest.mark.timeout(1800)
def test_cold_build_is_a_plan_one_object_per_unit_a_link_and_the_variant(kernel: Path) -> None:
    built = build(kernel)
    assert objects(built) == ALL_OBJECTS
    assert others(built) == ["-deps", "-link", "-plan", "<variant>"]
    assert scans(built) == ALL_OBJECTS
    assert built.index(f"many-{CPU_VARIANT}-plan") < built.index(f"many-{CPU_VARIANT}-link")


@pytest.mark.timeout(1800)
def test_the_variant_loads_with_kernels_and_matches_the_monolithic_build(kernel: Path) -> None:
    build(kernel)
    monolithic_built = build(kernel, "monolithic")
    assert not objects(monolithic_built)  # one derivation: it compiles everything itself
    per_object = _results(kernel, out_path(kernel))
    monolithic = _results(kernel, out_path(kernel, "monolithic"))
    assert per_object == monolithic
    assert per_object == [expected_factor() * x for x in range(-8, 9)]
    names = sorted(p.name for p in out_path(kernel).iterdir())
    assert names == sorted(p.name for p in out_path(kernel, "monolithic").iterdir())


@pytest.mark.timeout(1800)
def test_editing_one_source_rebuilds_its_object_the_link_and_the_variant(kernel: Path) -> None:
    build(kernel)
    path = kernel / source_name(3)
    path.write_text(path.read_text() + "// an edit\n")
    built = build(kernel)
    assert objects(built) == [source_name(3).replace("/", "-")]
    # no re-plan (the plan never sees contents); that unit is measured again (deps), and
    # every other object keeps its derivation
    assert others(built) == ["-deps", "-link", "<variant>"]
    assert scans(built) == [source_name(3).replace("/", "-")]


@pytest.mark.timeout(1800)
def test_editing_the_shared_header_rebuilds_every_object(kernel: Path) -> None:
    build(kernel)
    (kernel / "many" / "common.h").write_text(header_text("2.0f"))
    built = build(kernel)
    assert objects(built) == ALL_OBJECTS
    assert others(built) == ["-deps", "-link", "<variant>"]
    assert scans(built) == ALL_OBJECTS  # every unit reads the header: every unit is measured again
    assert _results(kernel, out_path(kernel)) == [expected_factor(2.0) * x for x in range(-8, 9)]


@pytest.mark.timeout(1800)
def test_editing_nothing_builds_nothing(kernel: Path) -> None:
    build(kernel)
    assert build(kernel) == []


@pytest.mark.timeout(1800)
def test_a_broken_source_names_itself_and_shows_the_compiler_message(kernel: Path) -> None:
    path = kernel / source_name(5)
    good = path.read_text()
    path.write_text(good + "int broken = undeclared_name_here;\n")
    try:
        with pytest.raises(KernelBuilderError) as failed:
            build(kernel)
    finally:
        path.write_text(good)
    message = str(failed.value)
    assert f"compiling {source_name(5)} for {CPU_VARIANT} failed" in message
    assert "undeclared_name_here" in message and "was not declared" in message


@pytest.mark.timeout(1800)
def test_an_object_and_the_variant_rebuild_bit_for_bit(kernel: Path) -> None:
    build(kernel)
    first = nix.run_nix(
        ["eval", "--raw", _attr("redistributable"), "--apply", "v: (builtins.head v.objects).drvPath"], cwd=kernel
    ).stdout
    variant = nix.run_nix(["eval", "--raw", _attr("redistributable") + ".drvPath"], cwd=kernel).stdout
    for drv in (first, variant):
        # --check builds again and fails when the output differs from the stored one
        nix.run_nix(["--realise", "--check", drv], program="nix-store")
