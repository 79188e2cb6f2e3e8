"""The rules that make a kept `build --local` directory safe to reuse, without compiling:
`compile.stale_reason` refuses every damaged or foreign build directory, `scratch.build_dir`
rewrites only changed sources (and removes dropped ones), `write_project` leaves unchanged
generated files alone. The real compiles are in tests/flake/test_local_incremental.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from kernel_files import add_sources

from kernel_builder.config import load
from kernel_builder.driver import compile as compile_mod
from kernel_builder.driver.compile import STAMP, stale_reason
from kernel_builder.driver.scratch import build_dir

PYTHON = "/opt/toolchain/bin/python"


def _configured(tmp_path: Path, *, fingerprint: str = "fp") -> tuple[Path, Path, Path]:
    """A build directory as a successful configure leaves it, with one cached compiler."""
    project, build = tmp_path / "project", tmp_path / "cmake-build"
    project.mkdir()
    build.mkdir()
    compiler = tmp_path / "c++"
    compiler.write_text("#!/bin/sh\n")
    (build / "CMakeCache.txt").write_text(
        f"# comment\n//help\nCMAKE_HOME_DIRECTORY:INTERNAL={project}\nPython3_EXECUTABLE:UNINITIALIZED={PYTHON}\n"
        f"CMAKE_CXX_COMPILER:FILEPATH={compiler}\n"
    )
    (build / "build.ninja").write_text("")
    tools = compile_mod._tool_states(compile_mod._cmake_cache(build))
    (build / STAMP).write_text(json.dumps({"toolchain": fingerprint, "project": "h", "tools": tools}))
    return project, build, compiler


def test_a_build_directory_as_configured_is_reusable(tmp_path: Path) -> None:
    project, build, _ = _configured(tmp_path)
    assert stale_reason(build, "fp", project, PYTHON) is None


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda b, p, c: (b / STAMP).unlink(), "no valid configure stamp"),
        (lambda b, p, c: (b / STAMP).write_text("{half"), "no valid configure stamp"),
        (lambda b, p, c: (b / STAMP).write_text("[1]"), "no valid configure stamp"),
        (lambda b, p, c: (b / "CMakeCache.txt").unlink(), "belongs to the project None"),
        (lambda b, p, c: (b / "build.ninja").unlink(), "no build.ninja"),
        (lambda b, p, c: os.utime(c, ns=(1, 1)), "a compiler or tool CMake found changed"),
        (lambda b, p, c: c.write_text("#!/bin/sh\n# a newer compiler\n"), "a compiler or tool CMake found changed"),
    ],
)
def test_a_damaged_build_directory_is_not_reused(tmp_path: Path, damage, reason: str) -> None:
    project, build, compiler = _configured(tmp_path)
    damage(build, project, compiler)
    assert reason in (stale_reason(build, "fp", project, PYTHON) or "")


def test_another_toolchain_project_or_python_is_not_reused(tmp_path: Path) -> None:
    project, build, _ = _configured(tmp_path)
    assert "toolchain" in stale_reason(build, "another", project, PYTHON)
    assert "belongs to the project" in stale_reason(build, "fp", tmp_path / "elsewhere", PYTHON)
    assert f"made for the Python {PYTHON!r}, not '/other/python'" in stale_reason(build, "fp", project, "/other/python")


def _kernel(tmp_path: Path) -> Path:
    kernel = tmp_path / "kernel"
    kernel.mkdir()
    (kernel / "build.toml").write_text(
        '[general]\nname = "kk"\nversion = 1\nedition = 5\nlicense = "Apache-2.0"\nbackends = ["cpu"]\n\n'
        '[torch]\nsrc = ["torch-ext/torch_binding.cpp"]\n\n'
        '[kernel.kk]\nbackend = "cpu"\ndepends = ["torch"]\nsrc = ["csrc/a.cpp", "csrc/b.cpp"]\ninclude = ["inc"]\n'
    )
    add_sources(kernel)
    (kernel / "csrc" / "a.cpp").write_text("int a() { return 1; }\n")
    (kernel / "inc" / "shared.h").write_text("#pragma once\n")
    return kernel


def test_the_kept_sources_change_only_where_the_kernel_changed(tmp_path: Path) -> None:
    kernel, work = _kernel(tmp_path), tmp_path / "work" / "variant"
    with build_dir(load(kernel), kernel, work) as scratch:
        assert scratch.keep and (scratch.src / "csrc" / "a.cpp").read_text() == "int a() { return 1; }\n"
    src = work / "src"
    old = {rel: (src / rel).stat().st_mtime_ns for rel in ("csrc/a.cpp", "csrc/b.cpp", "inc/shared.h")}
    for rel in old:
        os.utime(src / rel, ns=(1, 1))  # so a rewrite shows whatever the clock's resolution
    (kernel / "csrc" / "b.cpp").write_text("int b() { return 2; }\n")
    (kernel / "inc" / "shared.h").unlink()
    (kernel / "inc" / "new.h").write_text("#pragma once\n")
    (src / "stray.txt").write_text("left by someone")
    target = tmp_path / "outside.cpp"
    target.write_text("not ours")
    (src / "csrc" / "a.cpp").unlink()
    (src / "csrc" / "a.cpp").symlink_to(target)
    with build_dir(load(kernel), kernel, work):
        pass
    assert (src / "csrc" / "b.cpp").read_text() == "int b() { return 2; }\n" and (src / "csrc" / "b.cpp").stat().st_mtime_ns != 1
    assert not (src / "csrc" / "a.cpp").is_symlink() and (src / "csrc" / "a.cpp").read_text() == "int a() { return 1; }\n"
    assert target.read_text() == "not ours", "a symlink in the kept tree is replaced, not written through"
    assert not (src / "inc" / "shared.h").exists() and (src / "inc" / "new.h").is_file() and not (src / "stray.txt").exists()
    (kernel / "csrc" / "b.cpp").write_text("int b() { return 2; }\n")  # same bytes: left alone
    os.utime(src / "csrc" / "b.cpp", ns=(1, 1))
    with build_dir(load(kernel), kernel, work, clean=False):
        pass
    assert (src / "csrc" / "b.cpp").stat().st_mtime_ns == 1
    with build_dir(load(kernel), kernel, work, clean=True):
        assert (src / "csrc" / "b.cpp").stat().st_mtime_ns != 1, "--clean starts from an empty directory"
