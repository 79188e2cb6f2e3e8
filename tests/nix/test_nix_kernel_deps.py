"""kernel-depends at build time: `lock-kernel-deps` locks a dependency served by the local
Hub into kernels.lock (upstream's format), the build fetches the locked tree into the store
as a fixed-output path, and the import check resolves the kernel's `get_kernel_dep` from it;
an unlocked or stale dependency stops the build with the fix."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from hub_fixture import publish
from nix_support import commit_all, kernel_builder

pytestmark = pytest.mark.slow

FLAKE = """{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
""" % Path(__file__).resolve().parents[2]

DEP = "acme/scaler"


def _dependency_tree(root: Path, factor: int) -> Path:
    """A published noarch kernel: build/torch-cpu with FACTOR and scale()."""
    variant = root / "build" / "torch-cpu"
    variant.mkdir(parents=True)
    (variant / "__init__.py").write_text(f"FACTOR = {factor}\n\ndef scale(x):\n    return x * FACTOR\n")
    (variant / "metadata.json").write_text(json.dumps({
        "name": "scaler", "id": "_scaler_cpu_0a1b2c3", "version": 1, "license": "MIT",
        "python-depends": [], "kernel-depends": [], "backend": {"type": "cpu"},
    }, indent=2) + "\n")
    return root / "build"


def _kernel(root: Path) -> Path:
    """A noarch CPU kernel whose import calls get_kernel_dep (as kernels-community's do)."""
    kernel = root / "uses-scaler"
    package = kernel / "torch-ext" / "uses_scaler"
    package.mkdir(parents=True)
    (kernel / "build.toml").write_text(textwrap.dedent(f"""\
        [general]
        name = "uses-scaler"
        version = 1
        edition = 5
        license = "MIT"
        backends = ["cpu"]
        kernel-depends = [{{ repo-id = "{DEP}", version = 1 }}]

        [general.hub]
        repo-id = "acme/uses-scaler"

        [torch-noarch]
        """))
    (kernel / "tests").mkdir()
    (kernel / "tests" / "test_uses_scaler.py").write_text(textwrap.dedent("""\
        from kernels import get_kernel


        def test_triple_goes_through_the_dependency():
            kernel = get_kernel("acme/uses-scaler", version=1)  # LOCAL_KERNELS: the built tree and its dependency
            assert kernel.triple(2) == 6
        """))
    (package / "__init__.py").write_text(textwrap.dedent(f"""\
        from kernels import get_kernel_dep

        _scaler = get_kernel_dep("{DEP}")
        assert _scaler.FACTOR == 3, _scaler.FACTOR

        def triple(x):
            return _scaler.scale(x)
        """))
    (kernel / "flake.nix").write_text(FLAKE)
    commit_all(kernel, init=True)
    return kernel


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KERNEL_BUILDER_")}


def _build(kernel: Path) -> subprocess.CompletedProcess[str]:
    return kernel_builder("build", str(kernel), "--variant", "torch-cpu", "-j", "1", "--cores", "1", "-L",
                          env=_env(), check=False)


@pytest.mark.timeout(1800)
def test_a_locked_kernel_dependency_is_fetched_and_resolved_by_the_import_check(hub_server, tmp_path: Path) -> None:
    commit = publish(hub_server, DEP, _dependency_tree(tmp_path / "dep", 3), version=1)
    kernel = _kernel(tmp_path)

    # Not locked yet: a located error with the fix, before Nix runs.
    done = _build(kernel)
    assert done.returncode != 0
    assert f"{kernel / 'build.toml'}: kernel-depends" in done.stderr and "kernel-builder lock-kernel-deps" in done.stderr

    kernel_builder("lock-kernel-deps", str(kernel), env=_env())
    text = (kernel / "kernels.lock").read_text()
    entries = json.loads(text)
    assert [e["dependency"] for e in entries] == [{"repo-id": DEP, "version": 1}]
    assert entries[0]["lock"]["commit"] == commit
    # The hash is Nix's for the fetched build/ tree (a recursive fixed-output path).
    fetched = tmp_path / "fetched"
    _dependency_tree(fetched, 3)
    hex_hash = subprocess.run(["nix-hash", "--type", "sha256", str(fetched)], capture_output=True, text=True,
                              check=True).stdout.strip()
    import base64
    assert entries[0]["lock"]["hash"] == "sha256-" + base64.b64encode(bytes.fromhex(hex_hash)).decode()
    # Upstream's parser (PyPI kernels' NixKernelLocks) reads it and writes the same.
    from kernels._rust import NixKernelLocks
    assert json.loads(NixKernelLocks.from_json(text).to_json()) == entries

    commit_all(kernel)
    done = _build(kernel)
    assert done.returncode == 0, done.stderr[-6000:]
    assert (kernel / "build" / "torch-cpu" / "metadata.json").is_file()
    # The kernel's own tests load it with PyPI kernels' get_kernel, which resolves the
    # dependency from the store (LOCAL_KERNELS), offline in the sandbox.
    done = kernel_builder("test", str(kernel), "--variant", "torch-cpu", env=_env(), check=False)
    assert done.returncode == 0, done.stderr[-6000:]
    assert "torch-cpu: 1 passed" in done.stderr

    # A new v1 on the Hub does not change what the lock fetches, but a lock whose hash is not
    # the commit's tree (edited, or a rewritten repo) stops the build with the fix.
    entries[0]["lock"]["hash"] = "sha256-" + base64.b64encode(b"\0" * 32).decode()
    (kernel / "kernels.lock").write_text(json.dumps(entries, indent=2) + "\n")
    commit_all(kernel)
    done = _build(kernel)
    assert done.returncode != 0
    assert "kernels.lock" in done.stderr and "kernel-builder lock-kernel-deps" in done.stderr
