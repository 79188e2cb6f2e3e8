"""Issue 45, findings 1, 4, 7 and 19: the files a build or a kernel test copies never carry a
host file out of the kernel directory, and never block.

The Nix build and ``kernel-builder test`` read the copy ``prepare_kernel_source`` makes (the
kernel's sources, Python package, ``tests/``, ``benchmarks/``, flake files); ``build --local``
reads the kernel directory itself. Each planted link or special file below must be refused
by name before anything is copied, and nothing of the planted secret may reach the copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kernel_builder.errors import ConfigError
from kernel_builder.flake.kernel_source import prepare_kernel_source

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SECRET = "hf_SECRETTOKEN0123456789"


def _kernel(tmp_path: Path) -> Path:
    kernel = tmp_path / "relu"
    shutil.copytree(EXAMPLES / "relu", kernel, ignore=shutil.ignore_patterns("build", "__pycache__", "result*"))
    (kernel / "benchmarks").mkdir()
    (kernel / "benchmarks" / "benchmark_relu.py").write_text("print('bench')\n")
    return kernel


def _secret(tmp_path: Path) -> Path:
    """A token file outside the kernel, like ~/.cache/huggingface/token."""
    home = tmp_path / "home" / ".cache" / "huggingface"
    home.mkdir(parents=True, exist_ok=True)
    (home / "token").write_text(SECRET)
    (home / "token").chmod(0o600)
    return home / "token"


def _package_token(kernel: Path, secret: Path) -> tuple[str, str]:
    (kernel / "torch-ext" / "relu" / "token.py").symlink_to(secret)
    return "torch-ext/relu/token.py", f"which resolves to {secret}, outside the kernel directory"


def _tests_dir_link(kernel: Path, secret: Path) -> tuple[str, str]:
    (kernel / "tests" / "hfcache").symlink_to(secret.parent)
    return "tests/hfcache", "outside the kernel directory"


def _benchmark_file_link(kernel: Path, secret: Path) -> tuple[str, str]:
    (kernel / "benchmarks" / "notes.txt").symlink_to(secret)
    return "benchmarks/notes.txt", "outside the kernel directory"


def _tests_dir_is_a_link(kernel: Path, secret: Path) -> tuple[str, str]:
    shutil.rmtree(kernel / "tests")
    (kernel / "tests").symlink_to(secret.parent)
    return "tests", "outside the kernel directory"


def _card_link(kernel: Path, secret: Path) -> tuple[str, str]:
    (kernel / "CARD.md").symlink_to(secret)
    return "CARD.md", "outside the kernel directory"


def _src_dir_relative_link(kernel: Path, secret: Path) -> tuple[str, str]:
    # A relative link that climbs out: ../../../home/... from torch-ext/relu/
    rel = os.path.relpath(secret, kernel / "torch-ext" / "relu")
    (kernel / "torch-ext" / "relu" / "secret.py").symlink_to(rel)
    return "torch-ext/relu/secret.py", "outside the kernel directory"


def _fifo_in_tests(kernel: Path, secret: Path) -> tuple[str, str]:
    os.mkfifo(kernel / "tests" / "pipe")
    return "tests/pipe", "is a FIFO (named pipe), expected a regular file or a directory"


def _fifo_in_benchmarks(kernel: Path, secret: Path) -> tuple[str, str]:
    os.mkfifo(kernel / "benchmarks" / "pipe.py")
    return "benchmarks/pipe.py", "is a FIFO (named pipe)"


def _fifo_in_package(kernel: Path, secret: Path) -> tuple[str, str]:
    os.mkfifo(kernel / "torch-ext" / "relu" / "pipe.py")
    return "torch-ext/relu/pipe.py", "is a FIFO (named pipe)"


def _loop_up(kernel: Path, secret: Path) -> tuple[str, str]:
    (kernel / "tests" / "up").symlink_to("..")
    return "tests/up", "a directory above it (a symlink loop)"


def _self_link(kernel: Path, secret: Path) -> tuple[str, str]:
    (kernel / "tests" / "self").symlink_to("self")
    return "tests/self", "cannot be read: Too many levels of symbolic links"


def _dangling(kernel: Path, secret: Path) -> tuple[str, str]:
    (kernel / "tests" / "gone.py").symlink_to("nowhere.py")
    return "tests/gone.py", "which does not exist (a dangling link)"


PLANTS: list[Callable[[Path, Path], tuple[str, str]]] = [
    _package_token,
    _tests_dir_link,
    _benchmark_file_link,
    _tests_dir_is_a_link,
    _card_link,
    _src_dir_relative_link,
    _fifo_in_tests,
    _fifo_in_benchmarks,
    _fifo_in_package,
    _loop_up,
    _self_link,
    _dangling,
]


def _all_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.mark.parametrize("plant", PLANTS, ids=lambda f: f.__name__.lstrip("_"))
def test_the_kernel_source_copy_refuses_links_out_and_special_files(tmp_path: Path, plant) -> None:
    kernel = _kernel(tmp_path)
    rel, fragment = plant(kernel, _secret(tmp_path))
    state = tmp_path / "state"
    with pytest.raises(ConfigError) as caught:
        prepare_kernel_source(kernel, state)
    assert str(caught.value).startswith(f"{kernel / rel} "), caught.value
    assert fragment in str(caught.value), caught.value
    assert "Nix store" in caught.value.hint
    assert not (state / "kernel-sources").exists() or SECRET.encode() not in _all_bytes(state / "kernel-sources")


def test_links_inside_the_kernel_are_copied_as_files(tmp_path: Path) -> None:
    kernel = _kernel(tmp_path)
    (kernel / "tests" / "data").mkdir()
    (kernel / "tests" / "data" / "x.txt").write_text("inside\n")
    (kernel / "tests" / "alias").symlink_to("data")  # a directory link inside
    (kernel / "benchmarks" / "same.py").symlink_to("benchmark_relu.py")  # a file link inside
    copy = prepare_kernel_source(kernel, tmp_path / "state")
    assert (copy / "tests" / "alias" / "x.txt").read_text() == "inside\n"
    assert (copy / "benchmarks" / "same.py").read_text() == "print('bench')\n"
    assert not any(p.is_symlink() for p in copy.rglob("*"))


def _cli(*args: str, state: Path, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("command", [["build"], ["test"], ["build", "--local"]])
def test_build_and_test_refuse_a_token_link_and_a_fifo_without_hanging(tmp_path: Path, command: list[str]) -> None:
    kernel = _kernel(tmp_path)
    secret = _secret(tmp_path)
    _package_token(kernel, secret)
    state = tmp_path / "state"
    done = _cli(*command, str(kernel), state=state)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{kernel / 'torch-ext/relu/token.py'} is a symlink to {secret}" in done.stderr, done.stderr
    assert not (kernel / "build").exists()
    assert not state.exists() or SECRET.encode() not in _all_bytes(state)
    (kernel / "torch-ext" / "relu" / "token.py").unlink()
    os.mkfifo(kernel / "tests" / "pipe")
    done = _cli(*command, str(kernel), state=state, timeout=60)  # a hang is a TimeoutExpired
    assert done.returncode == 3, done.stderr
    assert f"{kernel / 'tests/pipe'} is a FIFO (named pipe)" in done.stderr, done.stderr


@pytest.mark.parametrize("kind", ["link-out", "fifo"])
def test_kernel_builders_own_source_follows_the_same_rule(tmp_path: Path, kind: str) -> None:
    """The builder's flake input (flake.nix, nix/, the package) is the other file set every
    build copies into the store; found trying the rule on it: a link out was copied, a FIFO hung."""
    from kernel_builder._source import BuilderSource

    root = tmp_path / "builder"
    (root / "nix" / "lib").mkdir(parents=True)
    (root / "python" / "kernel_builder").mkdir(parents=True)
    (root / "flake.nix").write_text("{ }\n")
    (root / "nix" / "lib" / "default.nix").write_text("{ }\n")
    (root / "python" / "kernel_builder" / "__init__.py").write_text("")
    source = BuilderSource(root, root / "python" / "kernel_builder", "env")
    assert [rel for rel, _ in source.files()] == ["flake.nix", "nix/lib/default.nix", "python/kernel_builder/__init__.py"]
    planted = root / "nix" / "lib" / "token.nix"
    if kind == "link-out":
        planted.symlink_to(_secret(tmp_path))
        fragment = "outside kernel-builder's source directory"
    else:
        os.mkfifo(planted)
        fragment = "is a FIFO (named pipe)"
    with pytest.raises(ConfigError) as caught:
        source.files()
    assert str(caught.value).startswith(f"{planted} ") and fragment in str(caught.value)


@pytest.mark.parametrize("command", [["build", "--local"], ["build"]])
def test_a_build_never_writes_through_a_build_link_out_of_the_kernel(tmp_path: Path, command: list[str]) -> None:
    """Found trying the rule on what a build writes: `build -> /elsewhere` in a kernel made
    `build --local` put its variants there (and a Nix build would have installed them there)."""
    kernel = _kernel(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (kernel / "build").symlink_to(outside)
    done = _cli(*command, str(kernel), state=tmp_path / "state", timeout=600)
    assert done.returncode == 4, done.stderr
    assert f"{kernel / 'build'} is a symlink to {outside}, which resolves to {outside}, outside the kernel directory {kernel}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert list(outside.iterdir()) == []
