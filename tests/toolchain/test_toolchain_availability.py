"""The one sentence `list-variants` and `build` print for a variant the pinned toolchains
cannot build: what is missing, where it is published, and only a hint that can work."""

from __future__ import annotations

import pytest

from kernel_builder.toolchain.pinned.availability import torch_index, unpinned_python_depends, unpinned_reason

PYPI_CUDA = {"2.12": "13.0", "2.13": "13.0", "2.14": "13.0"}


def reason(torch: str, backend: str, version: str | None, system: str = "x86_64-linux") -> str:
    return unpinned_reason(torch, backend, version, system, lock_system="x86_64-linux", pypi_cuda=PYPI_CUDA)


def test_a_cuda_build_pypi_does_not_carry_names_the_pytorch_index_and_pypis_cuda() -> None:
    assert reason("2.13", "cuda", "12.6") == (
        "torch 2.13 + CUDA 12.6 is published on the PyTorch index (https://download.pytorch.org/whl/cu126), "
        "not on PyPI (whose torch 2.13 is the CUDA 13.0 build), and is not in the toolchain lock: pin it with "
        "`kernel-builder toolchain lock` on a machine whose pip reaches that index (docs/nix.md, Adding a build set)"
    )
    assert "https://download.pytorch.org/whl/cu132" in reason("2.12", "cuda", "13.2")


def test_an_unknown_torchs_cuda_build_claims_nothing_about_pypi() -> None:
    text = reason("2.15", "cuda", "12.6")
    assert "PyPI" not in text and "https://download.pytorch.org/whl/cu126" in text


@pytest.mark.parametrize(
    ("backend", "version", "index"),
    [("rocm", "7.1", "https://download.pytorch.org/whl/rocm7.1"), ("xpu", "2025.3.2", "https://download.pytorch.org/whl/xpu")],
)
def test_rocm_and_xpu_are_on_the_pytorch_index(backend: str, version: str, index: str) -> None:
    text = reason("2.12", backend, version)
    assert f"published on the PyTorch index ({index})" in text and "PyPI" not in text


def test_a_cpu_set_is_on_pypi() -> None:
    text = reason("2.11", "cpu", None)
    assert text.startswith("torch 2.11 (cpu) is not in the toolchain lock; torch 2.11 is published on PyPI")
    assert "reaches that index" not in text  # PyPI: nothing special to reach


def test_another_system_is_the_locks_system_not_a_missing_wheel() -> None:
    assert reason("2.12", "metal", None, "aarch64-darwin") == (
        "no pinned toolchain for aarch64-darwin: the toolchain lock (nix/toolchain-lock.json) pins x86_64-linux "
        "toolchains only, so aarch64-darwin variants are not built from this lock"
    )


def test_a_backend_pytorch_publishes_no_wheel_for() -> None:
    assert torch_index("tpu", None) is None
    assert reason("2.11", "tpu", None) == "torch 2.11 (tpu): the pinned toolchains provide no tpu backend"


@pytest.mark.parametrize(
    ("torch", "backend", "version", "system"),
    [("2.12", "cuda", "12.6", "x86_64-linux"), ("2.13", "cuda", "13.2", "x86_64-linux"), ("2.12", "rocm", "7.2", "x86_64-linux"),
     ("2.12", "cuda", "12.6", "aarch64-linux"), ("2.11", "cpu", None, "x86_64-linux")],
)
def test_no_hint_that_cannot_work(torch: str, backend: str, version: str | None, system: str) -> None:
    """Not in the lock: neither the host toolchain nor a remote builder can build it here."""
    text = reason(torch, backend, version, system)
    assert "--toolchain host" not in text and "remote builder" not in text and "\n" not in text


def test_an_unreadable_lock_says_so() -> None:
    text = unpinned_reason("2.13", "cuda", "12.6", "x86_64-linux", lock_system="", pypi_cuda={})
    assert "cannot be read" in text


def test_python_depends_name_only_what_the_import_check_lacks() -> None:
    assert unpinned_python_depends(["einops", "tvm-ffi"], {"einops", "tvm-ffi"}) is None
    assert unpinned_python_depends([], set()) is None
    assert unpinned_python_depends(["tvm-ffi", "nvidia-cutlass-dsl", "tvm-ffi"], {"tvm-ffi", "einops"}) == (
        "build.toml python-depends nvidia-cutlass-dsl: not pinned for the import check "
        "(requests.python.importCheck of the toolchain lock pins: einops, tvm-ffi)"
    )


def test_a_torch_version_no_build_set_has_is_not_said_to_be_published() -> None:
    """issue 45 #22: a kernel flake's torchVersions may name torch 2.99; nothing is known of it."""
    text = unpinned_reason("2.99", "cpu", None, "x86_64-linux", lock_system="x86_64-linux", pypi_cuda=PYPI_CUDA,
                           known_torch={"2.13", "2.9", "2.15"})
    assert text.startswith("torch 2.99 is not a torch version kernel-builder knows (build-sets.json has 2.9, 2.13, 2.15;")
    assert "published" not in text
    known = unpinned_reason("2.13", "cpu", None, "x86_64-linux", lock_system="x86_64-linux", pypi_cuda=PYPI_CUDA,
                            known_torch={"2.13"})
    assert "published on PyPI" in known  # a real release keeps where it is published
