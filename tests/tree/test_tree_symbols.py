"""symbols.json: what the import check saves of a kernel's public API, and that PyPI
``kernels`` 0.19.1 (the oracle) reads it as we write it."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest
from buildtest_helpers import EXAMPLES
from kernel_builder.driver.job import Options, VariantJob
from kernel_builder.driver.variant import build_variant
from kernel_builder.errors import CheckError
from kernel_builder.tree import symbols
from kernel_builder.tree.checks import check_variant
from kernel_builder.tree.digest import compute_digest, validate_digest
from kernel_builder.tree.metadata import Metadata, MetadataBackend
from kernels._internals.cli import describe_api as oracle

INIT = '''
"""Fake kernel."""
from typing import Optional

import torch

from . import layers
from ._ops import ops

_SENTINEL = object()


def relu(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """max(x, 0).

    Second paragraph, not saved.
    """
    return x


def scaled(x, scale=_SENTINEL):
    return x


def load(name, where=__file__.rsplit("/", 1)[0]):
    return name


def _private(x):
    return x


CONSTANT = 3
__all__ = ["relu", "scaled", "load", "layers", "CONSTANT"]
'''

LAYERS = '''
import torch
from torch import nn


class ReLU(nn.Module):
    """A ReLU layer."""

    can_torch_compile = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class NoGrad(nn.Module):
    has_backward = False
    can_torch_compile = "yes"  # not a bool: unknown

    def forward(self, x):
        return x
'''


def _package(root: Path, name: str = "fakekern", init: str = INIT, layers: str = LAYERS) -> Path:
    package = root / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(init)
    (package / "layers.py").write_text(layers)
    (package / "_ops.py").write_text("ops = None\ndef add_op_namespace_prefix(n):\n    return 'x::' + n\n")
    return package


def _import(package: Path):
    spec = importlib.util.spec_from_file_location(
        package.name, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[package.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def described(tmp_path):
    package = _package(tmp_path)
    try:
        yield symbols.describe(_import(package))
    finally:
        for name in [n for n in sys.modules if n == "fakekern" or n.startswith("fakekern.")]:
            del sys.modules[name]


def test_the_public_functions_and_the_layers_with_their_signatures(described):
    assert described == {
        "schema_version": 1,
        "functions": [
            # the kernel's own directory (a staging path in the build) is not saved
            {"name": "load", "signature": "(name, where='<kernel>')", "doc": None},
            {
                "name": "relu",
                "signature": "(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor",
                "doc": "max(x, 0).",
            },
            # the sentinel's address would differ on every run: it is left out
            {"name": "scaled", "signature": "(x, scale=<object object>)", "doc": None},
        ],
        "layers": [
            {
                "name": "NoGrad",
                "signature": "(self, x)",
                "doc": None,
                "attributes": {"has_backward": False, "can_torch_compile": None},
            },
            {
                "name": "ReLU",
                "signature": "(self, x: torch.Tensor) -> torch.Tensor",
                "doc": "A ReLU layer.",
                "attributes": {"has_backward": None, "can_torch_compile": True},
            },
        ],
    }


def test_without_all_public_names_count_and_imported_classes_are_no_layers(tmp_path):
    init = INIT.replace('__all__ = ["relu", "scaled", "load", "layers", "CONSTANT"]', "")
    package = _package(tmp_path, name="fakekern2", init=init)
    try:
        document = symbols.describe(_import(package))
    finally:
        for name in [n for n in sys.modules if n.startswith("fakekern2")]:
            del sys.modules[name]
    assert [f["name"] for f in document["functions"]] == ["load", "relu", "scaled"]
    # `nn` and `torch` are modules, nn.Module is only imported by layers.py
    assert [layer["name"] for layer in document["layers"]] == ["NoGrad", "ReLU"]


def test_what_we_write_is_what_kernels_0_19_1_reads_and_prints(described, tmp_path, capsys):
    path = tmp_path / "symbols.json"
    path.write_text(symbols.dumps(described))
    assert oracle._read_symbols(path) == described
    oracle._print_human({**described, "path": "x", "variant": "torch-cpu"})
    printed = capsys.readouterr().out
    assert "  relu\n" in printed
    assert "  NoGrad  has_backward=False  can_torch_compile=unknown" in printed
    assert symbols.read_symbols(path) == described


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"schema_version": 2, "functions": [], "layers": []},
        {"schema_version": 1, "layers": []},
        {"schema_version": 1, "functions": [{"signature": "()"}], "layers": []},
        {"schema_version": 1, "functions": ["relu"], "layers": []},
        {"schema_version": 1, "functions": [], "layers": [{"name": "L"}]},
        {"schema_version": 1, "functions": [], "layers": [{"name": "L", "attributes": {"has_backward": "no"}}]},
    ],
)
def test_a_document_kernels_0_19_1_refuses_we_refuse_too(document, tmp_path):
    path = tmp_path / "symbols.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError):
        oracle._read_symbols(path)
    assert symbols.problems(document)
    with pytest.raises(CheckError, match="not a schema-1 symbols.json"):
        symbols.read_symbols(path)


def test_a_broken_file_is_located(tmp_path):
    path = tmp_path / "symbols.json"
    path.write_text('{"schema_version": 1,\n  "functions": [,]}')
    with pytest.raises(CheckError, match=r"symbols.json:2:17: not JSON"):
        symbols.read_symbols(path)


def test_the_text_lists_signatures_and_attributes(described):
    lines = symbols.text_lines(described)
    assert lines[:4] == [
        "Functions:",
        "  load(name, where='<kernel>')",
        "  relu(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor",
        "  scaled(x, scale=<object object>)",
    ]
    assert "  NoGrad  has_backward=False  can_torch_compile=unknown" in lines
    assert symbols.text_lines({"functions": [], "layers": []}) == ["Functions:", "  (none)", "", "Layers:", "  (none)"]


def _variant(root: Path, *, extra: dict[str, str] | None = None) -> Path:
    variant = root / "torch-cpu"
    _package(root, name="torch-cpu")
    (variant / "_ops.py").write_text(
        "import torch\nops = torch.ops._fk_cpu_abc\n"
        "def add_op_namespace_prefix(name):\n    return '_fk_cpu_abc::' + name\n"
    )
    for name, text in (extra or {}).items():
        (variant / name).write_text(text)
    metadata = Metadata(name="fk", id="_fk_cpu_abc", version=1, license="MIT", backend=MetadataBackend("cpu"))
    metadata.with_digest(compute_digest(variant)).write(variant / "metadata.json")
    return variant


def test_the_import_check_gives_the_document(tmp_path):
    """The check's interpreter loads symbols.py by its path and describes the imported variant."""
    report = check_variant(_variant(tmp_path), python=sys.executable)
    assert report.ok
    assert report.symbols is not None
    assert [f["name"] for f in report.symbols["functions"]] == ["load", "relu", "scaled"]
    assert [layer["name"] for layer in report.symbols["layers"]] == ["NoGrad", "ReLU"]


def test_check_refuses_a_symbols_json_kernels_cannot_read(tmp_path):
    variant = _variant(tmp_path, extra={"symbols.json": '{"schema_version": 1, "functions": []}'})
    report = check_variant(variant, raise_errors=False)
    assert any(e.startswith("symbols: ") and "layers: expected a list" in e for e in report.errors), report.errors


def test_a_valid_symbols_json_passes_the_layout_rule_with_pyext(tmp_path):
    document = symbols.dumps({"schema_version": 1, "functions": [], "layers": []})
    report = check_variant(_variant(tmp_path, extra={"symbols.json": document}), pyext=["py"], raise_errors=False)
    assert report.ok, report.errors


def test_the_build_writes_it_under_the_digest_and_none_without_the_import_check(tmp_path):
    """A noarch variant (silu-and-mul's torch-cpu, nothing to compile) built twice: with the
    import check symbols.json is there and the digest covers it; without it there is none."""

    source = tmp_path / "silu-and-mul"
    shutil.copytree(EXAMPLES / "silu-and-mul", source, ignore=shutil.ignore_patterns("build"))
    checked = build_variant(VariantJob.from_environ(source, "torch-cpu", tmp_path / "checked", toolchain_python=sys.executable,
                                                    options=Options(uid="abc1234")))
    document = symbols.read_symbols(checked.path / "symbols.json")
    assert [f["name"] for f in document["functions"]] == ["silu_and_mul"]
    assert document["functions"][0]["signature"] == "(x: torch.Tensor) -> torch.Tensor"
    assert [layer["name"] for layer in document["layers"]] == ["SiluAndMul"]
    metadata = Metadata.read(checked.path / "metadata.json")
    assert "symbols.json" in metadata.digest.files and validate_digest(checked.path, metadata.digest) == []

    unchecked = build_variant(VariantJob.from_environ(
        source, "torch-cpu", tmp_path / "unchecked", toolchain_python=sys.executable,
        options=Options(uid="abc1234", import_check=False),
    ))
    assert not (unchecked.path / "symbols.json").exists()
    metadata = Metadata.read(unchecked.path / "metadata.json")
    assert "symbols.json" not in metadata.digest.files and validate_digest(unchecked.path, metadata.digest) == []


def test_check_warns_when_the_saved_api_is_not_what_the_import_finds(tmp_path):
    variant = _variant(tmp_path)
    found = check_variant(variant, python=sys.executable).symbols
    (variant / "symbols.json").write_text(symbols.dumps(found))
    metadata = Metadata.read(variant / "metadata.json")
    metadata.with_digest(compute_digest(variant)).write(variant / "metadata.json")
    report = check_variant(variant, python=sys.executable)
    assert report.ok and not [w for w in report.warnings if w.startswith("symbols:")]

    stale = {**found, "functions": found["functions"][:1]}
    (variant / "symbols.json").write_text(symbols.dumps(stale))
    metadata.with_digest(compute_digest(variant)).write(variant / "metadata.json")
    report = check_variant(variant, python=sys.executable)
    assert report.ok
    assert [w for w in report.warnings if w.startswith("symbols:")] == [
        "symbols: symbols.json is not what importing the variant here finds (its functions are not the module's); "
        "the build's torch saw another API (rebuild, or check with the build's toolchain)"
    ]
