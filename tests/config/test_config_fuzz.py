"""Fuzzing the build.toml reader: random bytes, random TOML, mutated files, deep nesting.

The rule: reading ends in a model or in a ``BuildTomlError`` (which the CLI prints and
exits 1 with), never in another exception. Every path a command takes is exercised:
``read_file`` with source checks (check-config, build), without (list-variants, upload),
``plan_update`` (update-build) and, on success, the JSON summary. A sample of the same
inputs also goes through the real CLI.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernel_builder.config import BuildTomlError, read_file, to_dict
from kernel_builder.config.update import plan_update
from kernel_builder.errors import KernelBuilderError

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
REPO = Path(__file__).resolve().parents[2]
RELU = (REPO / "examples" / "relu" / "build.toml").read_text()


def read_every_way(kernel: Path) -> None:
    """What each command does with build.toml; only ``BuildTomlError`` may come out."""
    for check_sources in (True, False):
        try:
            parsed = read_file(kernel, check_sources=check_sources)
        except BuildTomlError as exc:
            assert exc.problems and str(exc)  # a located, printable error
        else:
            to_dict(parsed.build)
    try:
        plan = plan_update(kernel)
    except BuildTomlError as exc:
        assert exc.problems and str(exc)
    else:
        plan.diff()


def kernel_with(tmp_path: Path, data: bytes) -> Path:
    kernel = tmp_path / "kernel"
    kernel.mkdir(exist_ok=True)
    (kernel / "build.toml").write_bytes(data)
    return kernel


@FUZZ
@given(data=st.binary(max_size=2048))
def test_random_bytes(tmp_path: Path, data: bytes) -> None:
    read_every_way(kernel_with(tmp_path, data))


scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**70), 2**70).filter(lambda i: -(2**63) <= i < 2**63),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["cpu", "cuda", "torch", "2.12", "5", "6", "relu_cpu/relu_cpu.cpp", "..", "/etc/passwd", "../x",
                     "cpp-cuda", "rust-cpu", "rust-cutile", "13.2", "zip", "crate/Cargo.toml"]),
)
keys = st.one_of(
    st.sampled_from(
        ["general", "name", "version", "edition", "license", "backends", "torch", "torch-noarch", "tvm-ffi", "kernel",
         "src", "include", "depends", "backend", "hub", "repo-id", "branch", "cuda", "stable-abi", "minver", "maxver",
         "python-depends", "kernel-depends", "cuda-capabilities", "pyext", "cxx-flags", "language", "cargo-manifest",
         "tileiras-minver", "build-layout", "mlx-noarch", "universal"]
    ),
    st.text(min_size=1, max_size=8),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=20)
documents = st.dictionaries(keys, st.dictionaries(keys, values, max_size=6) | values, max_size=6)


@FUZZ
@given(doc=documents)
def test_random_toml_documents(tmp_path: Path, doc: dict) -> None:
    read_every_way(kernel_with(tmp_path, tomlkit.dumps(doc).encode()))


def _paths(doc: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _paths(value, prefix + (key,))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out += _paths(value, prefix + (index,))
    return out


RELU_PATHS = _paths(tomllib.loads(RELU))


@FUZZ
@given(path=st.sampled_from(RELU_PATHS), value=values, extra=st.none() | st.tuples(keys, values))
def test_relu_with_one_value_replaced(tmp_path: Path, path: tuple, value: object, extra: tuple | None) -> None:
    """Valid everywhere but one key: reaches every reader deep in the schema."""
    doc = tomllib.loads(RELU)
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    if extra is not None and isinstance(parent, dict):
        parent[extra[0]] = extra[1]
    kernel = kernel_with(tmp_path, tomlkit.dumps(doc).encode())
    for rel in ("torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h", "relu_cpu/relu_cpu.cpp", "relu_cuda/relu.cu"):
        (kernel / rel).parent.mkdir(parents=True, exist_ok=True)
        (kernel / rel).touch()
    read_every_way(kernel)


RUST6 = """\
[general]
name = "relu-rust"
version = 1
edition = 6
license = "Apache-2.0"
backends = ["cpu", "cuda"]
build-layout = "zip"

[tvm-ffi]

[kernel.rs]
language = "rust-cpu"
src = ["crate/src"]
cargo-manifest = "crate/Cargo.toml"

[kernel.tile]
language = "rust-cutile"
src = ["crate/src"]
cargo-manifest = "crate/Cargo.toml"
tileiras-minver = "13.2"
"""
RUST6_PATHS = _paths(tomllib.loads(RUST6))


@FUZZ
@given(path=st.sampled_from(RUST6_PATHS), value=values, extra=st.none() | st.tuples(keys, values))
def test_edition_6_rust_with_one_value_replaced(tmp_path: Path, path: tuple, value: object, extra: tuple | None) -> None:
    doc = tomllib.loads(RUST6)
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    if extra is not None and isinstance(parent, dict):
        parent[extra[0]] = extra[1]
    kernel = kernel_with(tmp_path, tomlkit.dumps(doc).encode())
    (kernel / "crate" / "src").mkdir(parents=True, exist_ok=True)
    (kernel / "crate" / "Cargo.toml").touch()
    read_every_way(kernel)


@FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, len(RELU)), st.integers(0, 8), st.text(max_size=6)), min_size=1, max_size=5))
def test_mutated_relu_build_toml(tmp_path: Path, edits: list[tuple[int, int, str]]) -> None:
    text = RELU
    for at, cut, insert in edits:
        text = text[:at] + insert + text[at + cut :]
    kernel = kernel_with(tmp_path, text.encode())
    for rel in ("torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h", "relu_cpu/relu_cpu.cpp", "relu_cuda/relu.cu"):
        (kernel / rel).parent.mkdir(parents=True, exist_ok=True)
        (kernel / rel).touch()
    read_every_way(kernel)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depth=st.integers(1, 30_000), opener=st.sampled_from(["[", "{a = "]), key=st.sampled_from(["license", "src", "name"]))
def test_deep_nesting(tmp_path: Path, depth: int, opener: str, key: str) -> None:
    closer = "]" if opener == "[" else "}"
    value = opener * depth + ("1" if opener != "[" else "") + closer * depth
    text = RELU.replace('license = "Apache-2.0"', f"{key} = {value}", 1)
    read_every_way(kernel_with(tmp_path, text.encode()))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=512), documents.map(lambda d: tomlkit.dumps(d).encode())))
def test_the_cli_exits_0_or_3_without_a_traceback(tmp_path: Path, data: bytes) -> None:
    kernel = kernel_with(tmp_path, data)
    for command in ("check-config", "list-variants", "update-build"):
        done = subprocess.run(
            [sys.executable, "-m", "kernel_builder", command, str(kernel)], capture_output=True, text=True, timeout=60
        )
        assert done.returncode in (0, 3), done.stderr  # 3: a configuration error
        assert "Traceback" not in done.stderr, done.stderr
        if done.returncode == 3:
            assert done.stderr.startswith("error: "), done.stderr


def test_the_reader_raises_only_kernel_builder_errors() -> None:
    """``BuildTomlError`` is the CLI's ``KernelBuilderError``: exit 3 (configuration), no traceback."""
    assert issubclass(BuildTomlError, KernelBuilderError)
