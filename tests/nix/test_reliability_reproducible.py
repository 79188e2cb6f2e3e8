"""Issue 24, finding 3: `__DATE__`/`__TIME__` broke bit-for-bit rebuilds.

Every variant derivation sets ``SOURCE_DATE_EPOCH`` (gcc and nvcc then expand `__DATE__`
and `__TIME__` from it), so `nix build --rebuild` of a kernel that embeds the build time
finds the same bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from nix_support import copy_kernel, kernel_builder

CPU213 = "torch213-cxx11-cpu-x86_64-linux"
STAMP = '\nextern "C" const char *relu_built_at() { return __DATE__ " " __TIME__; }\n'


def test_every_variant_derivation_sets_source_date_epoch(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    prepared = prepare_kernel_flake(kernel, state=tmp_path / "state")
    names = nix.eval_json(prepared.installable("buildableVariants"), flake_args=prepared.flake_args)
    assert isinstance(names, list) and names
    drvs = nix.derivations([prepared.installable(f"redistributable.{n}") for n in names], flake_args=prepared.flake_args)
    assert len(drvs) == len(names)
    for drv in drvs.values():
        assert drv["env"]["SOURCE_DATE_EPOCH"] == "315532800"


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_a_date_stamped_kernel_rebuilds_bit_identically(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False, salt=True)
    cpp = kernel / "relu_cpu" / "relu_cpu.cpp"
    cpp.write_text(cpp.read_text() + STAMP)
    state = tmp_path / "state"
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(state)}
    kernel_builder("build", str(kernel), "--variant", CPU213, "-j", "1", "--cores", "1", env=env)
    module = next((kernel / "build" / CPU213).glob("*.so"))
    assert b"relu_built_at" in module.read_bytes()
    # Same state dir: the same flake input and kernel copy as the build above.
    os.environ["KERNEL_BUILDER_STATE_DIR"] = str(state)
    try:
        prepared = prepare_kernel_flake(kernel, state=state)
    finally:
        del os.environ["KERNEL_BUILDER_STATE_DIR"]
    args = ["build", "--rebuild", "--no-link", "-j", "1", "--cores", "1", "--option", "sandbox", "true",
            *prepared.flake_args, prepared.installable(f"redistributable.{CPU213}")]
    done = nix.run_nix(args)  # raises with nix's "may not be deterministic" when the bytes differ
    assert "not deterministic" not in done.stderr
