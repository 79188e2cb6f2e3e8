"""`kernel-builder build`'s output for variants that fail, read as a kernel author reads it:
real builds (pinned toolchains, Nix sandbox) of a small kernel written to fail a different
way per variant, and of a kernel with nothing buildable here.

The relu copy fails three ways at once: torch 2.13 hits a missing header (cutlass) in a
translation unit that first floods its log with warnings; torch 2.14 compiles (with the same
warnings) and then fails its import check on a Python module nobody declared; the noarch
`torch-cuda` variant builds. One `kernel-builder build` shows all three. Each translation
unit is its own derivation, so the failed one's log (and `nix log` of it) holds the error.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from nix_support import copy_kernel, kernel_builder, snapshot_builder

REPO = Path(__file__).resolve().parents[2]
CPU213 = "torch213-cxx11-cpu-x86_64-linux"
CPU214 = "torch214-cxx11-cpu-x86_64-linux"
WARNINGS = 40

NOISE_H = "#pragma once\n" + "".join(f"#warning noisy warning {i} of the noise header\n" for i in range(WARNINGS))
# Slow enough (a constant-evaluated loop) to still run when the failing job stops the build,
# so that its warnings land in the log after the error.
SLOW_NOISE = """#include "noise.h"
constexpr long spin() { long s = 0; for (long i = 0; i < 1500; ++i) for (long j = 0; j < 1000; ++j) s += (i ^ j) % 7; return s; }
static_assert(spin() > 0, "spin");
int noise_b() { return 1; }
"""
MISSING_HEADER = """#include "../relu_cpu/noise.h"
#include <torch/version.h>
#if TORCH_VERSION_MINOR == 13
#include <cutlass/cutlass.h>
#endif
"""
UNDECLARED_IMPORT = """
import pathlib as _pathlib
import torch as _torch
if _torch.__version__.startswith("2.14") and any(p.suffix == ".so" for p in _pathlib.Path(__file__).parent.iterdir()):
    import kb_undeclared_dependency  # noqa: F401
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    state = tmp_path_factory.mktemp("kb-state")
    builder = snapshot_builder(tmp_path_factory.mktemp("builder"))
    environ = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(state), "KERNEL_BUILDER_ROOT": str(builder)}
    environ["PYTHONPATH"] = str(REPO / "python")  # this checkout's CLI (a worktree's, when run from one)
    return environ


def _failing_relu(dest: Path) -> Path:
    kernel = copy_kernel("relu", dest, git=False, salt=True)
    toml = (kernel / "build.toml").read_text().split("[kernel.relu_cuda]")[0]  # cuda becomes noarch: builds quickly
    toml = toml.replace('src = ["relu_cpu/relu_cpu.cpp"]', 'src = ["relu_cpu/relu_cpu.cpp", "relu_cpu/noise_b.cpp", "relu_cpu/noise.h"]')
    (kernel / "build.toml").write_text(toml)
    (kernel / "relu_cpu" / "noise.h").write_text(NOISE_H)
    (kernel / "relu_cpu" / "noise_b.cpp").write_text(SLOW_NOISE)
    relu = kernel / "relu_cpu" / "relu_cpu.cpp"
    relu.write_text(relu.read_text() + '\n#include "noise.h"\n')
    binding = kernel / "torch-ext" / "torch_binding.cpp"
    binding.write_text(MISSING_HEADER + binding.read_text())
    init = kernel / "torch-ext" / "relu" / "__init__.py"
    init.write_text(init.read_text() + UNDECLARED_IMPORT)
    return kernel


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_each_failed_variant_shows_its_first_real_error_and_commands_that_work(tmp_path: Path, env: dict[str, str]) -> None:
    kernel = _failing_relu(tmp_path / "relu")
    done = kernel_builder(
        "build", str(kernel), "--variant", CPU213, "--variant", CPU214, "--variant", "torch-cuda", "-j", "1", "--cores", "2",
        "--json", env=env, check=False,
    )
    err = done.stderr
    (tmp_path / "stderr.txt").write_text(err)  # kept by pytest for a look after a failure
    assert done.returncode == 4, err
    rows = {row["variant"]: row for row in json.loads(done.stdout)}
    assert {name: row["status"] for name, row in rows.items()} == {CPU213: "failed", CPU214: "failed", "torch-cuda": "built"}

    # 1. the first compiler error, located, with the compiler's excerpt; warnings only counted
    assert re.search(r"error: " + CPU213 + r": compile error \(1 error\(s\), \d+ warning\(s\) in its log\)", err), err
    assert "\n  torch-ext/torch_binding.cpp:4:10: fatal error: cutlass/cutlass.h: No such file or directory\n" in err  # the kernel's path
    assert "#include <cutlass/cutlass.h>" in err
    assert "#warning noisy" not in err and "noisy warning" not in err
    assert "-L streams every log line" in err

    # 2. the import check names the module and how a Python package is declared
    assert f"error: {CPU214}: import check" in err
    assert "the variant imports module 'kb_undeclared_dependency', which the toolchain Python does not have" in err
    assert "  at __init__.py:" in err and ": import kb_undeclared_dependency" in err
    assert "python-depends" in err and "REGISTER_EXTENSION" not in err

    # 3. progress: nothing said `built` before it was, each variant started once, one nix run
    progress = [line for line in err.splitlines() if line.startswith(("building ", "built ", "FAILED ")) or ": compiling 0/" in line]
    assert not any(line.startswith(f"built {name}") for line in progress for name in (CPU213, CPU214)), progress
    assert progress.count("building torch-cuda") == 1, progress
    for name in (CPU213, CPU214):  # built per object: a variant starts with its objects
        assert sum(line.startswith(f"{name}: compiling 0/") for line in progress) == 1, progress
    assert sum(line.startswith("built torch-cuda in") for line in progress) == 1
    assert any(line.startswith(f"FAILED {CPU213} after") for line in progress), progress
    assert f"3 variant(s): 1 built, 2 failed; results in {kernel / 'build'}\n" in err

    # 4. the whole log is kept, and the printed `nix log` command works as pasted
    saved = re.search(rf"whole log \((\d+) lines\): (\S+0-obj-relu-{CPU213}-torch-ext-torch_binding\.cpp\.log)", err)  # the failed object's
    assert saved, err
    text = Path(saved.group(2)).read_text()
    assert text.count("noisy warning 0 of") >= 1 and "cutlass/cutlass.h: No such file or directory" in text
    command = re.search(rf"or: (nix --extra-experimental-features nix-command log /nix/store/\S+-0-obj-relu-{CPU213}-torch-ext-torch_binding\.cpp\.drv)", err)
    assert command, err
    plain = {k: v for k, v in env.items() if k != "NIX_CONFIG"}
    shown = subprocess.run(["bash", "-c", command.group(1)], capture_output=True, text=True, env=plain, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "cutlass/cutlass.h: No such file or directory" in shown.stdout + shown.stderr

    # 5. no build.toml warning inside any build log, nor a hint naming a flag build lacks
    assert "--verbose" not in err and "--toolchain host" not in err


def test_a_kernel_with_nothing_buildable_here_says_where_it_builds(tmp_path: Path, env: dict[str, str]) -> None:
    kernel = copy_kernel("relu", tmp_path / "mk", git=False)
    (kernel / "build.toml").write_text(
        '[general]\nname = "mk"\nversion = 1\nedition = 5\nlicense = "Apache-2.0"\nbackends = ["metal"]\n\n'
        '[torch]\nsrc = ["torch-ext/torch_binding.cpp"]\n\n'
        '[kernel.k]\nbackend = "metal"\ndepends = ["torch"]\nsrc = ["relu_cpu/relu_cpu.cpp"]\n'
    )
    (kernel / "torch-ext" / "relu").rename(kernel / "torch-ext" / "mk")
    done = kernel_builder("build", str(kernel), env=env, check=False)
    assert done.returncode == 4, done.stderr
    assert "nothing of kernel mk can be built on x86_64-linux; nothing was built" in done.stderr
    assert "build sets that would build it:\n  on aarch64-darwin: " in done.stderr
    assert "torch213-metal-aarch64-darwin (build set torch2.13-metal)" in done.stderr
    assert "hint: build it on an aarch64-darwin machine" in done.stderr
    assert "--toolchain host" not in done.stderr and not (kernel / "build").exists()
