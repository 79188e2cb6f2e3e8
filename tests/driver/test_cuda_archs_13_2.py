"""CUDA 13.2 (torch 2.15's PyPI build): the architectures its nvcc accepts, and what happens
to a requested architecture it dropped.

``NVCC_13_2_GPU_CODE`` is what ``nvcc --list-gpu-code`` of the pinned
``nvidia-cuda-nvcc==13.2.86`` wheel prints; the pinned relu cu132 build (tests/nix) runs
that nvcc for real.
"""

from __future__ import annotations

import pytest

from kernel_builder.backends.cuda_archs import dropped, select_archs, supported_from_nvcc
from kernel_builder.errors import BuildError

NVCC_13_2_GPU_CODE = "sm_75\nsm_80\nsm_86\nsm_87\nsm_88\nsm_89\nsm_90\nsm_100\nsm_110\nsm_103\nsm_120\nsm_121\n"
SUPPORTED = supported_from_nvcc(NVCC_13_2_GPU_CODE)


def names(archs) -> list[str]:
    return [str(a) for a in archs]


def test_the_default_set_is_upstreams_cuda_13_set():
    assert names(select_archs(None, cuda_version=(13, 2), supported=SUPPORTED)) == [
        "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1+PTX",
    ]


def test_sm_88_is_new_in_13_2_and_builds_when_asked_for():
    assert "8.8" in names(SUPPORTED)
    chosen = select_archs(["8.8", "9.0a"], cuda_version=(13, 2), supported=SUPPORTED)
    assert names(chosen) == ["8.8", "9.0a"]
    assert dropped(["8.8", "9.0a"], chosen) == []


def test_a_dropped_architecture_is_a_warning_not_an_nvcc_error():
    # sm_70 left CUDA 13: the loose intersection alone would pick 7.0 for target 7.5.
    chosen = select_archs(["7.0", "8.0"], cuda_version=(13, 2), supported=SUPPORTED)
    assert names(chosen) == ["8.0"]
    assert dropped(["7.0", "8.0"], chosen) == ["7.0"]


def test_only_dropped_architectures_is_an_error_naming_them():
    with pytest.raises(BuildError, match=r"cuda-capabilities \['7.0'\] and CUDA 13.2"):
        select_archs(["7.0"], cuda_version=(13, 2), supported=SUPPORTED, kernel="relu")
