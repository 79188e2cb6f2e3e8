"""driver.plan's pure part: CMake's compile commands and Ninja's command list -> a plan
that names no directory of the build that made it (``TOP`` instead)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_builder.driver.plan import split_commands
from kernel_builder.driver.planfile import TOP, Plan
from kernel_builder.errors import BuildError

TOPDIR = Path("/tmp/nix-build-relu-plan.drv-0")
SCRATCH = TOPDIR / "kernel-builder" / "v-0123"
BUILD = SCRATCH / "cmake-build"


def _entry(rel: str) -> dict[str, str]:
    source = SCRATCH / "src" / rel
    output = f"CMakeFiles/_ops.dir{source}.o"
    return {
        "directory": str(BUILD),
        "command": f"/store/g++ -I{SCRATCH}/include -ffile-prefix-map={SCRATCH}=/kernel-build -o {output} -c {source}",
        "file": str(source),
        "output": output,
    }


LINK = f": && /store/g++ -shared -o _ops.abi3.so CMakeFiles/_ops.dir{SCRATCH}/src/a.cpp.o && :"


def test_units_are_sorted_by_source_and_hold_no_build_directory() -> None:
    units, link, link_dir, module = split_commands(
        [_entry("z/b.cpp"), _entry("a.cpp")], ["/store/g++ -c x", LINK], scratch=SCRATCH, top=TOPDIR, ops_id="_ops"
    )
    assert [u.source for u in units] == ["a.cpp", "z/b.cpp"]
    assert module == "_ops.abi3.so"
    assert link_dir == f"{TOP}/kernel-builder/v-0123/cmake-build"
    for text in [link, link_dir, *(a for u in units for a in (*u.command, u.object, u.directory))]:
        assert str(TOPDIR) not in text
    assert units[0].object == f"cmake-build/CMakeFiles/_ops.dir{TOP}/kernel-builder/v-0123/src/a.cpp.o"
    assert units[0].command[-2:] == ("-c", f"{TOP}/kernel-builder/v-0123/src/a.cpp")
    assert link.startswith(": && /store/g++") and TOP in link


def test_a_plan_survives_its_json() -> None:
    units, link, link_dir, module = split_commands([_entry("a.cpp")], [LINK], scratch=SCRATCH, top=TOPDIR, ops_id="_ops")
    plan = Plan(variant="v", ops_id="_ops", archs=("8.0",), scratch=f"{TOP}/kernel-builder/v-0123", units=units,
                link_command=link, link_directory=link_dir, module=module)
    assert Plan.from_json(plan.to_json()) == plan


def test_a_link_that_writes_no_module_is_refused() -> None:
    with pytest.raises(BuildError, match="does not write _ops"):
        split_commands([_entry("a.cpp")], ["/store/g++ -c x"], scratch=SCRATCH, top=TOPDIR, ops_id="_ops")


def test_a_command_for_a_file_outside_the_sources_is_refused() -> None:
    entry = {**_entry("a.cpp"), "file": "/elsewhere/a.cpp"}
    with pytest.raises(BuildError, match="outside the plan's sources"):
        split_commands([entry], [LINK], scratch=SCRATCH, top=TOPDIR, ops_id="_ops")
