"""Hostile build.toml files and source paths, through the real CLI in a subprocess.

Every case must end with exit 1, one located error, no traceback, and the file (and
anything next to it) exactly as it was.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_files import add_sources

from kernel_builder.driver.scratch import _copy_sources
from kernel_builder.config import BuildTomlError, load
from kernel_builder.errors import BuildError

COMMANDS = ("check-config", "list-variants", "update-build")

GOOD = """\
[general]
name = "relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu"]

[torch]
src = ["torch-ext/binding.cpp"]

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu/relu.cpp"]
include = ["relu_cpu"]
"""


def run(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def refused(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root``: file bytes, link targets, and directories."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                out[rel] = path.read_bytes()
            else:
                out[rel] = "dir" if path.is_dir() else "special"
    return out


def kernel(tmp_path: Path, text: str = GOOD) -> Path:
    d = tmp_path / "kernel"
    d.mkdir()
    (d / "build.toml").write_text(GOOD)
    add_sources(d)
    (d / "build.toml").write_text(text)
    return d


# ---------------------------------------------------------------- src / include paths


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        ('"relu_cpu/relu.cpp"', '"../outside.cpp"', 'kernel.relu_cpu.src[0]: string "../outside.cpp" leads outside the kernel directory'),
        ('"relu_cpu/relu.cpp"', '"relu_cpu/../../x.cpp"', "leads outside the kernel directory"),
        ('"relu_cpu/relu.cpp"', '"/etc/passwd"', 'kernel.relu_cpu.src[0]: string "/etc/passwd" is an absolute path'),
        ('"relu_cpu/relu.cpp"', '"missing.cpp"', 'kernel.relu_cpu.src[0]: string "missing.cpp" does not exist'),
        ('"relu_cpu/relu.cpp"', '"relu_cpu"', 'kernel.relu_cpu.src[0]: string "relu_cpu" is a directory, expected a file'),
        ('include = ["relu_cpu"]', 'include = ["../../../"]', 'kernel.relu_cpu.include[0]: string "../../../" leads outside'),
        ('include = ["relu_cpu"]', 'include = ["/tmp"]', "is an absolute path"),
        ('include = ["relu_cpu"]', 'include = ["nope"]', 'kernel.relu_cpu.include[0]: string "nope" does not exist'),
        ('include = ["relu_cpu"]', 'include = ["relu_cpu/relu.cpp"]', "is not a directory"),
        ('"torch-ext/binding.cpp"', '"~/x.cpp"', "torch.src[0]: string \"~/x.cpp\" is an absolute path"),
    ],
)
def test_source_paths_must_stay_inside_the_kernel(tmp_path: Path, old: str, new: str, fragment: str) -> None:
    d = kernel(tmp_path, GOOD.replace(old, new))
    before = snapshot(tmp_path)
    # Form (absolute, `..`) is checked by every reader; existence and kind by the commands that compile.
    lexical = "outside" in fragment or "absolute" in fragment
    commands = [("check-config",), ("build", "--local")] + ([("list-variants",)] if lexical else [])
    for command in commands:
        result = run(*command, str(d))
        refused(result, fragment)
        assert f"{d / 'build.toml'}:" in result.stderr  # file:line:col
    assert snapshot(tmp_path) == before


def test_a_symlink_out_of_the_kernel_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.cpp").write_text("int x;")
    d = kernel(tmp_path, GOOD.replace('"relu_cpu/relu.cpp"', '"link/secret.cpp"'))
    (d / "link").symlink_to(outside)
    result = run("check-config", str(d))
    refused(result, "kernel.relu_cpu.src[0]", f"resolves to {outside / 'secret.cpp'}, outside the kernel directory")
    assert f"{d / 'build.toml'}:14:8:" in result.stderr


def test_line_and_column_point_at_the_bad_value(tmp_path: Path) -> None:
    d = kernel(tmp_path, GOOD.replace('"relu_cpu/relu.cpp"', '"relu_cpu/relu.cpp", "../x.cpp"'))
    refused(run("check-config", str(d)), f"{d / 'build.toml'}:14:29: kernel.relu_cpu.src[1]")


def test_the_library_refuses_too(tmp_path: Path) -> None:
    d = kernel(tmp_path, GOOD.replace('"relu_cpu/relu.cpp"', '"../x.cpp"'))
    with pytest.raises(BuildTomlError, match=r"leads outside the kernel directory"):
        load(d)


def test_the_scratch_copy_never_writes_outside_its_root(tmp_path: Path) -> None:
    source, dest = tmp_path / "k" / "src", tmp_path / "scratch" / "a" / "src"
    source.mkdir(parents=True)
    (tmp_path / "k" / "evil.cpp").write_text("int x;")
    for files, includes in ((["../evil.cpp"], []), (["/etc/hostname"], []), ([], ["../../"])):
        with pytest.raises(BuildError, match="leads outside"):
            _copy_sources(source, dest, files, includes)
    assert not (tmp_path / "scratch" / "a" / "evil.cpp").exists()
    assert not (tmp_path / "scratch" / "evil.cpp").exists()


def test_a_valid_kernel_still_passes(tmp_path: Path) -> None:
    d = kernel(tmp_path)
    result = run("check-config", str(d))
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- the file itself


def _planted(tmp_path: Path, kind: str) -> Path:
    d = tmp_path / "kernel"
    d.mkdir()
    path = d / "build.toml"
    if kind == "invalid-utf8":
        path.write_bytes(GOOD.encode().replace(b'"relu"', b'"r\xffelu"'))
    elif kind == "binary":
        path.write_bytes(bytes(range(256)) * 4)
    elif kind == "directory":
        path.mkdir()
    elif kind == "symlink-loop":
        path.symlink_to("build.toml")
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "deep-array":
        path.write_text(GOOD.replace('license = "Apache-2.0"', "license = " + "[" * 20000 + "]" * 20000))
    elif kind == "deep-inline-table":
        path.write_text(GOOD.replace('license = "Apache-2.0"', "license = " + "{a = " * 5000 + "1" + "}" * 5000))
    elif kind == "moderately-deep":
        path.write_text(GOOD.replace('license = "Apache-2.0"', "license = " + "[" * 200 + "]" * 200))
    elif kind == "too-big":
        path.write_text(GOOD.replace('name = "relu"', 'name = "' + "a" * 10_000_000 + '"'))
    elif kind == "long-name":
        path.write_text(GOOD.replace('name = "relu"', 'name = "' + "a" * 500_000 + '"'))
    return d


HOSTILE = {
    "invalid-utf8": "build.toml:2:10: is not UTF-8 text: byte 0xff cannot be decoded",
    "binary": "build.toml:2:118: is not UTF-8 text: byte 0x80",
    "directory": "build.toml: is a directory, expected a regular file",
    "symlink-loop": "build.toml: cannot read: Too many levels of symbolic links",
    "dev-zero": "build.toml: is a character device, expected a regular file",
    "fifo": "build.toml: is a FIFO (named pipe), expected a regular file",
    "deep-array": "nested too deeply",
    "deep-inline-table": "nested too deeply",
    "moderately-deep": "general.license[0][0][0]",
    "too-big": "the limit is 1048576 bytes",
    "long-name": "general.name: kernel name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'... (500000 characters) is too long",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_build_toml_gives_one_clear_error(tmp_path: Path, kind: str) -> None:
    d = _planted(tmp_path, kind)
    before = snapshot(tmp_path)
    for command in COMMANDS:
        result = run(command, str(d), timeout=30)
        refused(result, HOSTILE[kind])
        assert len(result.stderr) < 2000, result.stderr[:2000]
        assert snapshot(tmp_path) == before, command


def test_a_huge_kernel_name_stops_build_local_before_anything(tmp_path: Path) -> None:
    d = _planted(tmp_path, "long-name")
    before = snapshot(tmp_path)
    refused(run("build", "--local", str(d), timeout=30), "is too long: at most 128 characters")
    assert snapshot(tmp_path) == before


def test_update_build_writes_through_a_symlink(tmp_path: Path) -> None:
    shared = tmp_path / "shared.toml"
    shared.write_text(GOOD.replace("edition = 5\n", ""))
    d = tmp_path / "kernel"
    d.mkdir()
    (d / "build.toml").symlink_to(shared)
    result = run("update-build", str(d))
    assert result.returncode == 0, result.stderr
    assert (d / "build.toml").is_symlink()
    assert "edition = 6" in shared.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kernel", "shared.toml"]  # no temporary file left


def test_a_hub_branch_that_is_a_path_is_refused(tmp_path: Path) -> None:
    d = kernel(tmp_path, GOOD + '\n[general.hub]\nrepo-id = "org/relu"\nbranch = "../../x"\n')
    d.joinpath("build.toml").write_text(GOOD.replace('backends = ["cpu"]', 'backends = ["cpu"]\nhub = { repo-id = "org/relu", branch = "../../x" }'))
    refused(run("check-config", str(d)), "general.hub.branch: invalid branch name '../../x'")
