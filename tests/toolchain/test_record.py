"""toolchains.json as a typed record: kebab-case on disk (as nix/toolchains/host.nix reads
it), attrs in Python, and a located error for a record that is not one."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from kernel_builder.errors import ConfigError
from kernel_builder.toolchain.host.discover import load_toolchains, toolchains_path, write_toolchains
from kernel_builder.toolchain.host.record import (
    CompilerRecord,
    CudaRecord,
    DriverRecord,
    Environment,
    ToolchainsRecord,
    from_json,
    to_json,
)


def _record() -> ToolchainsRecord:
    env = Environment(
        python="/envs/t/bin/python", env_bin="/envs/t/bin", python_version="3.11.7", torch_version="2.14.1",
        torch_cuda="13.0", torch_record_hash="a" * 64, torch_wheel_hash="sha256=b", cmake_version="cmake 4",
        ninja_version="ninja 1", torch_record_path="/envs/t/RECORD", stamp="1,2",
    )
    return ToolchainsRecord(
        system="x86_64-linux",
        driver=DriverRecord(python="/venv/bin/python", bin="/venv/bin", kernel_builder_version="0.1.0"),
        compiler=CompilerRecord(cxx="/usr/bin/c++", version="c++ 12", stamp="3"),
        cuda=CudaRecord(nvcc="/cuda/bin/nvcc", home="/cuda", version="13.0", stamp="4"),
        environments=(env,),
        build_sets={"torch2.14-cpu": env, "torch2.14-cuda13.0": env},
    )


def test_round_trip_with_the_keys_nix_reads(tmp_path: Path) -> None:
    record = _record()
    path = write_toolchains(record, state=tmp_path)
    data = json.loads(path.read_text())
    assert data["format"] == 1 and data["provider"] == "host" and data["hermetic"] is False
    assert data["driver"]["kernel-builder-version"] == "0.1.0"
    entry = data["build-sets"]["torch2.14-cuda13.0"]
    assert entry["env-bin"] == "/envs/t/bin" and entry["torch-record-hash"] == "a" * 64
    assert load_toolchains(state=tmp_path) == record
    assert record.pythons() == {"torch2.14-cpu": "/envs/t/bin/python", "torch2.14-cuda13.0": "/envs/t/bin/python"}


def test_no_cuda_is_null() -> None:
    record = attrs.evolve(_record(), cuda=None)
    data = to_json(record)
    assert data["cuda"] is None
    assert from_json(data, Path("t.json")) == record


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d.update(format=2), "has format 2, expected 1"),
        (lambda d: d.pop("driver"), "driver"),
        (lambda d: d["build-sets"]["torch2.14-cpu"].pop("python"), "python"),
        (lambda d: d.update(environments="oops"), "environments"),
    ],
)
def test_a_broken_record_is_a_located_error(tmp_path: Path, edit, expected: str) -> None:
    data = to_json(_record())
    edit(data)
    path = toolchains_path(tmp_path)
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=expected) as info:
        load_toolchains(state=tmp_path)
    assert str(path) in str(info.value) and "toolchain discover" in info.value.hint


def test_not_an_object(tmp_path: Path) -> None:
    toolchains_path(tmp_path).write_text("[1, 2]")
    with pytest.raises(ConfigError, match="expected a JSON object, found list"):
        load_toolchains(state=tmp_path)
