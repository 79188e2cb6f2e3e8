"""kernel_builder.backends: the backend table (data/backends.json) as Python sees it, the
module of each compiled backend, the languages, the shared source suffixes (Nix reads the
same file: nix/lib/tests/test_backends.nix), and $KERNEL_BUILDER_EXTRA_BACKENDS's errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_builder import backends
from kernel_builder.backends import Backend, backend_module, compiled_suffixes, languages, spec
from kernel_builder.config.model import KERNEL_BACKENDS, Language
from kernel_builder.driver import generate

REPO = Path(__file__).resolve().parent.parent


def test_the_table_keeps_what_backends_py_said() -> None:
    assert [b.value for b in Backend] == ["cann", "cpu", "cuda", "metal", "neuron", "rocm", "tpu", "xpu"]
    assert [b.value for b in backends.BACKENDS] == ["cpu", "cuda", "rocm", "xpu", "metal", "cann", "neuron", "tpu"]
    assert {b.value: spec(b).token for b in backends.versioned()} == {"cuda": "cu", "rocm": "rocm", "xpu": "xpu", "cann": "cann"}
    assert spec("cuda").defines == ("CUDA_KERNEL", "USE_CUDA=1") and spec("cpu").defines == ("CPU_KERNEL",)
    assert spec("rocm").arch_key == "rocm-archs" and spec("cuda").arch_key == "cuda-capabilities"
    assert {b.value for b, s in backends.BACKENDS.items() if s.compilable_here} == {"cpu", "cuda"}
    assert KERNEL_BACKENDS == {Backend.CPU, Backend.CUDA, Backend.METAL, Backend.ROCM, Backend.XPU}
    assert backends.build_set_backends() == KERNEL_BACKENDS | {Backend.TPU}
    assert backends.from_torch_versions({"hip": "7.1.0"}) == (Backend.ROCM, "7.1.0")


def test_each_compiled_backend_has_its_module() -> None:
    for name in ("cpu", "cuda", "rocm", "xpu", "metal"):
        assert backend_module(name).name == name
    assert backend_module("cuda").cmake_switches == {"cuda"} and backend_module("rocm").cmake_switches == {"hip"}
    assert backend_module("cpu").cmake_switches == frozenset() and backend_module("tpu").name == "tpu"


def test_languages_are_cpp_per_kernel_backend_and_the_rust_rows() -> None:
    assert [str(lang) for lang in Language] == [
        "cpp-cpu", "cpp-cuda", "cpp-rocm", "cpp-xpu", "cpp-metal", "rust-cpu", "rust-cuda-oxide", "rust-cutile"
    ]
    assert Language.RUST_CUTILE.backend is Backend.CUDA and languages()["cpp-metal"] is Backend.METAL


def test_the_compiled_suffixes_are_one_list_for_python_and_nix() -> None:
    """generate.py compiles what the table lists, .metal included (per-object.nix omitted it
    before the list was shared); the Nix side reads the same rows (test_backends.nix)."""
    assert compiled_suffixes() == (".c", ".cc", ".cpp", ".cxx", ".cu", ".hip", ".mm", ".metal")
    assert generate._COMPILED == compiled_suffixes()
    per_object = (REPO / "nix" / "lib" / "builders" / "per-object.nix").read_text()
    assert "inherit (pure.backends) isCompiled;" in per_object and "cu|hip" not in per_object


def test_pytorch_index_from_the_table() -> None:
    base = "https://download.pytorch.org/whl"
    assert backends.torch_index("cuda", "13.0", base) == f"{base}/cu130"
    assert backends.torch_index("rocm", "7.1", base) == f"{base}/rocm7.1"
    assert backends.torch_index("cuda", None, base) is None and backends.torch_index("metal", None, base) is None


def _import_with(extra: str, tmp_path: Path) -> subprocess.CompletedProcess:
    path = tmp_path / "extra.json"
    path.write_text(extra)
    env = {**os.environ, backends.EXTRA_BACKENDS_ENV: str(path)}
    return subprocess.run([sys.executable, "-c", "import kernel_builder.backends"], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


@pytest.mark.parametrize(("extra", "message"), [
    ("{", "cannot be read as JSON"),
    (json.dumps({"rows": []}), 'expected {"backends"'),
    (json.dumps({"backends": [{"name": "cuda"}]}), "names backends the table has: cuda"),
    (json.dumps({"backends": [{"name": "new", "tokn": "n"}]}), "backends[0] (new) has unknown keys ['tokn']"),
])
def test_a_bad_extra_backends_file_is_an_error_naming_it(extra: str, message: str, tmp_path: Path) -> None:
    done = _import_with(extra, tmp_path)
    assert done.returncode != 0
    assert message in done.stderr and "extra.json" in done.stderr
