"""The import check of a variant sees what the kernel may import at load time: its
python-depends (pinned wheels) and what the `kernels` loader always brings (packaging,
huggingface_hub, requests, ...), and nothing else."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from nix_support import commit_all, kernel_builder

pytestmark = pytest.mark.slow

FLAKE = """{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
""" % Path(__file__).resolve().parents[2]


def _noarch(root: Path, name: str, python_depends: str, body: str) -> Path:
    kernel = root / name
    package = kernel / "torch-ext" / name.replace("-", "_")
    package.mkdir(parents=True)
    (kernel / "build.toml").write_text(textwrap.dedent(f"""\
        [general]
        name = "{name}"
        version = 1
        edition = 5
        license = "MIT"
        backends = ["cpu"]
        python-depends = {python_depends}

        [torch-noarch]
        """))
    (package / "__init__.py").write_text(textwrap.dedent(body))
    (kernel / "flake.nix").write_text(FLAKE)
    commit_all(kernel, init=True)
    return kernel


def _build(kernel: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNEL_BUILDER_")}
    return kernel_builder("build", str(kernel), "--variant", "torch-cpu", "-j", "1", "--cores", "1", "-L",
                          env=env, check=False)


@pytest.mark.timeout(1200)
def test_python_depends_and_the_loaders_packages_pass_the_import_check(tmp_path: Path) -> None:
    einops_kernel = _noarch(tmp_path, "uses-einops", '["einops"]', """\
        import einops
        import torch

        def transpose(x: torch.Tensor) -> torch.Tensor:
            return einops.rearrange(x, "a b -> b a")
        """)
    done = _build(einops_kernel)
    assert done.returncode == 0, done.stderr[-4000:]
    assert (einops_kernel / "build" / "torch-cpu" / "metadata.json").is_file()

    loader_kernel = _noarch(tmp_path, "uses-loader-deps", "[]", """\
        import huggingface_hub
        import packaging.version
        import requests

        MIN = packaging.version.Version("1.0")
        """)
    done = _build(loader_kernel)
    assert done.returncode == 0, done.stderr[-4000:]


@pytest.mark.timeout(1200)
def test_an_undeclared_import_fails_the_import_check(tmp_path: Path) -> None:
    kernel = _noarch(tmp_path, "undeclared-einops", "[]", """\
        import einops
        """)
    done = _build(kernel)
    assert done.returncode != 0
    assert "No module named 'einops'" in done.stderr


def _build_with_cute_dsl(root: Path, name: str, body: str):
    """A CUDA noarch kernel with python-depends nvidia-cutlass-dsl, built (torch-cuda)."""
    kernel = _noarch(root, name, "[]", body)
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["cpu"]', 'backends = ["cuda"]').replace(
        "[torch-noarch]", '[general.cuda]\npython-depends = ["nvidia-cutlass-dsl"]\n\n[torch-noarch]'))
    commit_all(kernel)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNEL_BUILDER_")}
    done = kernel_builder("build", str(kernel), "--variant", "torch-cuda", "-j", "1", "--cores", "1", "-L", env=env, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    assert (kernel / "build" / "torch-cuda" / "metadata.json").is_file()
    return done


@pytest.mark.timeout(1200)
def test_a_pinned_wheel_importable_only_through_its_pth_passes_the_import_check(tmp_path: Path) -> None:
    """nvidia-cutlass-dsl puts `cutlass` on the path with a .pth file: the import check
    reads the pinned sets as site directories, as an installed environment does."""
    _build_with_cute_dsl(tmp_path, "uses-cute-dsl", """\
        import cutlass
        import cutlass.cute as cute

        THR_MMA = cute.core.ThrMma
        """)


@pytest.mark.timeout(1200)
def test_wheels_sharing_a_file_install_as_a_resolving_pip_does(tmp_path: Path) -> None:
    """nvidia-cutlass-dsl-libs-base ships a stub of cutlass.cute.experimental that raises;
    -libs-cu13, which requires it, ships the module. The pinned set installs them in pip's
    dependency order (toolchains/pinned/lib.sh wheel_layers), so -libs-cu13's file wins, as
    in a user's `pip install nvidia-cutlass-dsl[cu13]` (sonic-moe imports the module)."""
    done = _build_with_cute_dsl(tmp_path, "uses-cute-experimental", """\
        import cutlass.cute.experimental.memory
        """)
    assert "only supported on Cuda toolkit 13.1" not in done.stderr
