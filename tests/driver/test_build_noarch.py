"""Noarch kernels: examples/silu-and-mul (all five backends) and silu-and-mul-bad-registration."""

from __future__ import annotations

import pytest
from buildtest_helpers import (
    CPU_PYTHON,
    EXAMPLES,
    kernels_path_for_other_torch,
    run_example_tests,
    run_python,
    run_variant,
    torch214_python,
)

from kernel_builder.flake.local import build_local
from kernel_builder.tree.digest import validate_digest
from kernel_builder.errors import CheckError
from kernel_builder.tree.metadata import Metadata

pytestmark = pytest.mark.timeout(600)

BACKENDS = ["cpu", "cuda", "metal", "rocm", "xpu"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("silu") / "build"
    # Named variants: metal has no build set on Linux, so only an explicit request builds it here.
    results = build_local(EXAMPLES / "silu-and-mul", out_dir=out, toolchain=CPU_PYTHON, variants=[f"torch-{b}" for b in BACKENDS])
    return out, results


def test_one_torch_backend_variant_per_backend(built):
    out, results = built
    assert [r.variant for r in results] == [f"torch-{b}" for b in BACKENDS]
    assert sorted(p.name for p in out.iterdir()) == sorted(f"torch-{b}" for b in BACKENDS)
    for backend in BACKENDS:
        assert sorted(p.name for p in (out / f"torch-{backend}").iterdir()) == [
            "__init__.py",
            "_ops.py",
            "layers.py",
            "metadata.json",
            "symbols.json",  # every noarch variant imports with any torch: the import check ran
        ]


def test_for_backend_metadata_with_noarch_archs(built):
    out, _ = built
    uids = set()
    for backend in BACKENDS:
        metadata = Metadata.read(out / f"torch-{backend}" / "metadata.json")
        assert metadata.backend.type.value == backend
        assert metadata.id.startswith(f"_silu_and_mul_{backend}_")
        uids.add(metadata.id.rsplit(f"_{backend}_", 1)[1])
        assert metadata.license == "apache-2.0"
        assert metadata.digest is not None and validate_digest(out / f"torch-{backend}", metadata.digest) == []
        expected = ("9.0", "10.0") if backend == "cuda" else None
        assert metadata.backend.archs == expected
    assert len(uids) == 1, "every backend shares one uid"


def test_noarch_ops_picks_the_backend_at_import(built):
    out, _ = built
    text = (out / "torch-cuda" / "_ops.py").read_text()
    assert text == (out / "torch-cpu" / "_ops.py").read_text(), "one _ops.py serves every backend"
    stdout = run_python(
        "import sys, importlib.util as u, torch\n"
        "p = sys.argv[1]\n"
        "s = u.spec_from_file_location('k', p + '/_ops.py')\n"
        "m = u.module_from_spec(s); s.loader.exec_module(m)\n"
        "print(m.add_op_namespace_prefix('silu_and_mul'))",
        str(out / "torch-cuda"),
    )
    uid = Metadata.read(out / "torch-cpu" / "metadata.json").id.rsplit("_cpu_", 1)[1]
    assert stdout.strip() == f"_silu_and_mul_cpu_{uid}::silu_and_mul"  # the test torch is a CPU build


def test_interop_get_local_kernel_and_kernelize(built):
    out, _ = built
    script = r"""
import sys
from pathlib import Path
import torch
from kernels import LocalLayerRepository, Mode, get_local_kernel, kernelize, use_kernel_forward_from_hub, use_kernel_mapping

repo = Path(sys.argv[1])
kernel = get_local_kernel(repo)
x = torch.randn(8, 64)
ref = torch.nn.functional.silu(x[..., :32]) * x[..., 32:]
assert torch.allclose(kernel.silu_and_mul(x), ref)


@use_kernel_forward_from_hub("SiluAndMul")
class SiluAndMul(torch.nn.Module):
    def forward(self, x):
        d = x.shape[-1] // 2
        return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


model = torch.nn.Sequential(SiluAndMul())
with use_kernel_mapping({"SiluAndMul": {"cpu": LocalLayerRepository(repo_path=repo, layer_name="SiluAndMul")}}):
    model = kernelize(model, mode=Mode.INFERENCE, device="cpu")
assert torch.allclose(model(x), ref)
print(kernel.__name__, model[0].forward.__func__.__module__)
"""
    stdout = run_python(script, str(out))
    module, layer_module = stdout.split()
    assert module.startswith("_silu_and_mul_cpu_") and layer_module == f"{module}.layers"


def test_bad_registration_fails_the_ops_lint(tmp_path):
    done = run_variant(EXAMPLES / "silu-and-mul-bad-registration", "torch-cpu", tmp_path, CPU_PYTHON)
    assert done.returncode == 1
    assert "ops lint: __init__.py:6: @custom_op on 'silu_and_mul' does not name the op with add_op_namespace_prefix" in done.stderr
    assert list(tmp_path.iterdir()) == [], "a failed build leaves no variant directory behind"


def test_bad_registration_via_build_local_raises_check_error(tmp_path):
    with pytest.raises(CheckError, match="add_op_namespace_prefix"):
        build_local(EXAMPLES / "silu-and-mul-bad-registration", out_dir=tmp_path, toolchain=CPU_PYTHON, backends=["cpu"])


def test_example_own_tests_pass_on_the_build(built):
    out, _ = built
    assert " passed" in run_example_tests("silu-and-mul", out)


def test_interop_torch_cuda_variant_with_a_cuda_torch(built, tmp_path):
    """On a CUDA torch (2.14.1) the loader picks torch-cuda and _ops.py names the cuda namespace."""
    out, _ = built
    script = r"""
import sys
from pathlib import Path
import torch
from kernels import get_local_kernel
kernel = get_local_kernel(Path(sys.argv[1]))
x = torch.randn(4, 32)  # CPU tensors: the custom op is device-generic, and there is no GPU here
assert torch.allclose(kernel.silu_and_mul(x), torch.nn.functional.silu(x[..., :16]) * x[..., 16:])
print(kernel.__name__)
"""
    env = {"PYTHONPATH": kernels_path_for_other_torch(tmp_path)}
    stdout = run_python(script, str(out), python=torch214_python(), env=env)
    assert stdout.split()[0].startswith("_silu_and_mul_cuda_")


def test_run_variant_records_unique_id_and_kernel_commit(tmp_path):
    """What Nix passes: the flake's short rev as uid and the kernel commit for provenance."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    args = ("--unique-id", "abc1234-dirty", "--kernel-commit", commit, "--kernel-dirty")
    done = run_variant(EXAMPLES / "silu-and-mul", "torch-cpu", tmp_path, CPU_PYTHON, *args)
    assert done.returncode == 0, done.stderr
    metadata = Metadata.read(tmp_path / "torch-cpu" / "metadata.json")
    assert metadata.id == "_silu_and_mul_cpu_abc1234_dirty"
    assert metadata.provenance.kernel.commit == commit and metadata.provenance.kernel.dirty is True
    bad = run_variant(EXAMPLES / "silu-and-mul", "torch-cpu", tmp_path / "bad", CPU_PYTHON, "--kernel-commit", "abc")
    assert bad.returncode == 1 and "--kernel-commit: `commit` must be a git object id" in bad.stderr
