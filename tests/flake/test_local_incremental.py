"""`build --local` is incremental: real CMake/Ninja builds of a copy of examples/relu with
three extra plain C++ sources (two include a shared header), through the CLI with -L so
that Ninja's lines say which objects were compiled. A no-change build compiles nothing,
a source edit recompiles that object, a header edit its dependents, a build.toml edit
configures again; the incremental module is byte-identical to a --clean build's; another
toolchain Python or a damaged build directory is wiped, never reused."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from buildtest_helpers import CPU_PYTHON, CPU_VARIANT, copy_example, run_python

from kernel_builder.driver.compile import STAMP

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

_COMPILED = re.compile(r"Building CXX object \S+?/src/(\S+)\.o$")


def _kernel(tmp_path: Path) -> Path:
    source = copy_example("relu", tmp_path)
    toml = source / "build.toml"
    toml.write_text(toml.read_text().replace(
        'src = ["relu_cpu/relu_cpu.cpp"]',
        'src = ["relu_cpu/relu_cpu.cpp", "relu_cpu/common.h", "relu_cpu/a.cpp", "relu_cpu/b.cpp", "relu_cpu/c.cpp"]',
    ))
    (source / "relu_cpu" / "common.h").write_text("#pragma once\nconstexpr int kScale = 2;\n")
    (source / "relu_cpu" / "a.cpp").write_text('#include "common.h"\nint relu_extra_a(int x) { return x * kScale; }\n')
    (source / "relu_cpu" / "b.cpp").write_text('#include "common.h"\nint relu_extra_b(int x) { return x + kScale; }\n')
    (source / "relu_cpu" / "c.cpp").write_text("int relu_extra_c(int x) { return x - 1; }\n")
    # In git and dirty from the start, as while one edits a kernel: its unique id (so its ops
    # identifier) then stays the same across the edits below.
    git = ["git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "kernel"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    toml.write_text(toml.read_text() + "# edited\n")
    return source


class Build:
    """What one `kernel-builder build --local -L` printed."""

    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        assert done.returncode == 0, done.stdout + done.stderr
        self.text = done.stderr
        self.compiled = sorted(m.group(1) for line in done.stderr.splitlines() if (m := _COMPILED.search(line)))
        self.configured = "-- Configuring done" in done.stderr
        self.linked = "Linking CXX shared module" in done.stderr


def _build(source: Path, state: Path, *extra: str, python: str = CPU_PYTHON) -> Build:
    env = dict(os.environ, KERNEL_BUILDER_STATE_DIR=str(state))
    cmd = [sys.executable, "-m", "kernel_builder", "build", str(source), "--local", "--variant", CPU_VARIANT,
           "--toolchain-python", python, "--cores", "1", "-L", *extra]
    return Build(subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False))


_RELU = r"""
import importlib.util, sys, torch
path = sys.argv[1]
spec = importlib.util.spec_from_file_location("relu_under_test", path + "/__init__.py", submodule_search_locations=[path])
mod = importlib.util.module_from_spec(spec); sys.modules["relu_under_test"] = mod; spec.loader.exec_module(mod)
print(mod.relu(torch.tensor([-1.0, 2.0])).tolist())
"""


def _relu_output(source: Path) -> str:
    """What the built variant's ``relu`` gives for [-1, 2], loaded by path in a fresh interpreter."""
    return run_python(_RELU, str(source / "build" / CPU_VARIANT)).strip()


def _module(source: Path) -> Path:
    (found,) = (source / "build" / CPU_VARIANT).glob("*.abi3.so")
    return found


def test_rebuilds_compile_only_what_changed_and_match_a_clean_build(tmp_path: Path) -> None:
    source, state = _kernel(tmp_path), tmp_path / "state"
    every = sorted(["torch-ext/torch_binding.cpp", "relu_cpu/relu_cpu.cpp", "relu_cpu/a.cpp", "relu_cpu/b.cpp", "relu_cpu/c.cpp"])

    cold = _build(source, state)
    assert cold.compiled == every and cold.configured and cold.linked

    same = _build(source, state)
    assert same.compiled == [] and not same.configured and not same.linked, same.text
    assert "ninja: no work to do." in same.text

    (source / "relu_cpu" / "c.cpp").write_text("int relu_extra_c(int x) { return x - 2; }\n")
    one = _build(source, state)
    assert one.compiled == ["relu_cpu/c.cpp"] and one.linked and not one.configured, one.text

    (source / "relu_cpu" / "common.h").write_text("#pragma once\nconstexpr int kScale = 3;\n")
    header = _build(source, state)
    assert header.compiled == ["relu_cpu/a.cpp", "relu_cpu/b.cpp"], header.text

    toml = source / "build.toml"
    (source / "relu_cpu" / "d.cpp").write_text("int relu_extra_d(int x) { return -x; }\n")
    toml.write_text(toml.read_text().replace('"relu_cpu/c.cpp"]', '"relu_cpu/c.cpp", "relu_cpu/d.cpp"]'))
    added = _build(source, state)
    assert added.configured and added.compiled == ["relu_cpu/d.cpp"], added.text

    incremental = _module(source).read_bytes()
    assert _relu_output(source) == "[0.0, 2.0]"

    clean = _build(source, state, "--clean")
    assert clean.compiled == sorted([*every, "relu_cpu/d.cpp"]) and clean.configured
    assert _module(source).read_bytes() == incremental, "the incremental module differs from a clean build's"


def test_another_toolchain_python_or_a_damaged_build_directory_is_wiped(tmp_path: Path) -> None:
    source, state = _kernel(tmp_path), tmp_path / "state"
    every = sorted(["torch-ext/torch_binding.cpp", "relu_cpu/relu_cpu.cpp", "relu_cpu/a.cpp", "relu_cpu/b.cpp", "relu_cpu/c.cpp"])
    assert _build(source, state).compiled == every

    # Another environment with the same torch: the same variant, another toolchain Python.
    other = tmp_path / "other-env"
    venv.create(other, with_pip=False)
    site = run_python("import sysconfig; print(sysconfig.get_paths()['purelib'])", python=str(other / "bin" / "python")).strip()
    ours = run_python("import sysconfig; print(sysconfig.get_paths()['purelib'])").strip()
    Path(site, "kb_torch_env.pth").write_text(ours + "\n")
    switched = _build(source, state, python=str(other / "bin" / "python"))
    assert "starting a fresh build directory (the toolchain" in switched.text, switched.text
    assert switched.compiled == every and switched.configured
    work = next((state / "local-builds").iterdir()) / CPU_VARIANT / "cmake-build"
    assert re.search(rf"(?m)^Python3_EXECUTABLE:\w+={re.escape(str(other / 'bin' / 'python'))}$", (work / "CMakeCache.txt").read_text())

    # A CMakeCache.txt made for another Python (the stamp still matches): wiped.
    cache = work / "CMakeCache.txt"
    cache.write_text(re.sub(r"(?m)^Python3_EXECUTABLE:(\w+)=.*$", r"Python3_EXECUTABLE:\1=/elsewhere/python", cache.read_text()))
    foreign = _build(source, state, python=str(other / "bin" / "python"))
    assert "was made for the Python '/elsewhere/python'" in foreign.text and foreign.compiled == every, foreign.text

    # A stamp that is not JSON (a damaged directory): wiped, and the module still loads.
    (work / STAMP).write_text("{not json")
    damaged = _build(source, state, python=str(other / "bin" / "python"))
    assert "no valid configure stamp" in damaged.text and damaged.compiled == every, damaged.text
    assert json.loads((work / STAMP).read_text())["project"]
    assert _relu_output(source) == "[0.0, 2.0]"
