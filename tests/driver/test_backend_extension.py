"""Adding a backend is one module plus one data row (docs/backends.md): a backend defined only
here, ``kbtest`` (a module under tmp_path and a row in a ``$KERNEL_BUILDER_EXTRA_BACKENDS``
file; it compiles with the CPU torch, the table's ``torch`` key), goes through
``list-variants``, the compile plan and a CPU build (``build --local``) with nothing in
kernel_builder naming it. Real subprocesses, a real compile of examples/relu's CPU source."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from buildtest_helpers import EXAMPLES, REPO_ROOT

pytestmark = pytest.mark.timeout(600)

VARIANT = "torch213-cxx11-kbtest-x86_64-linux"

# The module: a backend with nothing of its own but a CMake block-free CPU-like compile;
# it says so by subclassing the protocol (a real backend overrides the architecture hooks).
MODULE = '''
import attrs
from kernel_builder.backends.base import BackendModule


@attrs.frozen
class KbTestBackend(BackendModule):
    def device_compiler_flags(self, prefix_maps):
        return ()


BACKEND = KbTestBackend("kbtest")
'''

# The row: its name in variant names, the macro its sources see, that it compiles here and
# runs on the CPU torch, and that build.toml's [kernel.*] and build sets may name it.
ROW = {
    "name": "kbtest", "token": "kbtest", "versioned": False, "noarch": "kbtest", "label": None,
    "defines": ["KBTEST_KERNEL"], "archKey": None, "torchVersionAttr": None, "compilableHere": True,
    "kernel": True, "buildSet": True, "minorCompatible": False, "torchIndex": None, "sources": [],
    "torch": "cpu", "module": "kbtest_backend",
}


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("kbtest")
    (root / "mods").mkdir()
    (root / "mods" / "kbtest_backend.py").write_text(MODULE)
    (root / "backends.json").write_text(json.dumps({"backends": [ROW]}))
    # build-sets.json plus one build set of the new backend (torch 2.13, the test venv's)
    sets = json.loads((REPO_ROOT / "nix" / "build-sets.json").read_text())
    sets["buildSets"].append({"torch": "2.13", "backend": "kbtest", "systems": ["x86_64-linux"], "bundle": False, "cxx11": True})
    (root / "build-sets.json").write_text(json.dumps(sets))
    # examples/relu with its CPU component moved to the new backend; the binding registers
    # the CPU implementation when the new backend's macro is defined, and only then.
    kernel = root / "relu"
    shutil.copytree(EXAMPLES / "relu", kernel, ignore=shutil.ignore_patterns("build", "relu_cuda", "tests", "flake.nix"))
    (kernel / "build.toml").write_text(
        '[general]\nname = "relu"\nversion = 1\nedition = 5\nlicense = "Apache-2.0"\nbackends = ["kbtest"]\n\n'
        '[torch]\nsrc = ["torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h"]\n\n'
        '[kernel.relu_kbtest]\nbackend = "kbtest"\ndepends = ["torch"]\nsrc = ["relu_cpu/relu_cpu.cpp"]\n'
    )
    binding = kernel / "torch-ext" / "torch_binding.cpp"
    text = binding.read_text()
    binding.write_text(
        "#ifndef KBTEST_KERNEL\n#error the kbtest row's define did not reach the compile\n#endif\n"
        + text.replace("#if defined(CPU_KERNEL)", "#if defined(KBTEST_KERNEL)")
    )
    env = {
        **os.environ,
        "KERNEL_BUILDER_EXTRA_BACKENDS": str(root / "backends.json"),
        "KERNEL_BUILDER_BUILD_SETS": str(root / "build-sets.json"),
        "KERNEL_BUILDER_STATE_DIR": str(root / "state"),
        "PYTHONPATH": os.pathsep.join([str(root / "mods"), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return kernel, env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=600, check=False)


def test_list_variants_lists_the_new_backend(setup) -> None:
    kernel, env = setup
    done = _run(["-m", "kernel_builder", "list-variants", str(kernel), "--json"], env)
    assert done.returncode == 0, done.stderr
    assert VARIANT in done.stdout
    without = _run(["-m", "kernel_builder", "list-variants", str(kernel)], {**env, "KERNEL_BUILDER_EXTRA_BACKENDS": ""})
    assert without.returncode != 0 and "kbtest" in without.stderr  # without its row the backend is unknown


def test_the_plan_has_the_rows_define_and_the_modules_answers(setup) -> None:
    kernel, env = setup
    script = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "from kernel_builder.config import load\n"
        "from kernel_builder.backends import backend_module, spec\n"
        "from kernel_builder.driver.generate import plan_compile, render\n"
        "k = Path(sys.argv[1])\n"
        f"plan = plan_compile(load(k / 'build.toml'), variant={VARIANT!r}, backend='kbtest', ops_id='_relu_kbtest_x',\n"
        "    source_dir=k, scratch_dir=k / 'scratch', torch_version=(2, 13))\n"
        "print(json.dumps({'defines': plan.defines, 'sources': plan.sources, 'archs': plan.archs,\n"
        "    'module': type(backend_module('kbtest')).__name__, 'cmake': render(plan)['CMakeLists.txt']}))\n"
    )
    done = _run(["-c", script, str(kernel)], env)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert "KBTEST_KERNEL" in plan["defines"] and "CPU_KERNEL" not in plan["defines"]
    assert [Path(s).name for s in plan["sources"]] == ["torch_binding.cpp", "relu_cpu.cpp"]
    assert plan["archs"] == [] and plan["module"] == "KbTestBackend"
    assert "LANGUAGES CXX)" in plan["cmake"]  # no backend block of CMakeLists.txt.j2 turned on


def test_build_local_compiles_loads_and_records_the_new_backend(setup) -> None:
    kernel, env = setup
    done = _run(["-m", "kernel_builder", "build", str(kernel), "--local", "--variant", VARIANT], env)
    assert done.returncode == 0, done.stdout + done.stderr
    variant = kernel / "build" / VARIANT
    metadata = json.loads((variant / "metadata.json").read_text())
    assert metadata["backend"]["type"] == "kbtest"
    # the import check loaded it; run the op with the CPU torch
    run = _run(["-c", (
        "import sys, importlib.util, torch\n"
        "spec = importlib.util.spec_from_file_location('relu', sys.argv[1] + '/__init__.py', submodule_search_locations=[sys.argv[1]])\n"
        "m = importlib.util.module_from_spec(spec); sys.modules['relu'] = m; spec.loader.exec_module(m)\n"
        "print(m.relu(torch.tensor([-1.0, 2.0])).tolist())\n"
    ), str(variant)], env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[0.0, 2.0]"
