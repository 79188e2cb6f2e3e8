"""Issue 45, findings 5 and 15: `init` stages only what it wrote, and every name it accepts
gives a scaffold that compiles and passes `check-config`.

Runs the CLI (`python -m kernel_builder init`) in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from kernel_builder.cli.init import scaffold_files

TORCH_INCLUDE = Path(sysconfig.get_paths()["purelib"]) / "torch" / "include"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def _git(directory: Path, *args: str) -> list[str]:
    done = subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True, check=True)
    return sorted(done.stdout.split())


def test_init_into_an_existing_directory_stages_only_its_own_files(tmp_path: Path) -> None:
    kernel = tmp_path / "existing"
    (kernel / "keys").mkdir(parents=True)
    (kernel / "keys" / "team-1.sec").write_text("team-1:" + "A" * 86 + "==\n")
    (kernel / ".env").write_text("HF_TOKEN=hf_secret\n")
    (kernel / ".env.local").write_text("HF_TOKEN=hf_secret\n")
    (kernel / "notes.md").write_text("private notes\n")
    done = _cli("init", str(kernel), "--name", "org/existing", "--backends", "cpu")
    assert done.returncode == 0, done.stderr
    written = sorted(scaffold_files("org/existing", ["cpu"], "Apache-2.0", "x"))
    assert _git(kernel, "diff", "--cached", "--name-only") == written
    # The written .gitignore keeps a later `git add -A` from staging the keys and environment files.
    assert _git(kernel, "check-ignore", "keys/team-1.sec", ".env", ".env.local") == sorted(["keys/team-1.sec", ".env", ".env.local"])
    subprocess.run(["git", "-C", str(kernel), "add", "-A"], check=True)
    staged = _git(kernel, "diff", "--cached", "--name-only")
    assert "keys/team-1.sec" not in staged and ".env" not in staged and ".env.local" not in staged
    assert "notes.md" in staged  # the rest is the user's to decide


@pytest.mark.parametrize(
    ("repo", "fragment"),
    [
        ("org/torch", "`torch`, but the generated __init__.py uses torch"),
        ("org/ops", "`ops`, but the generated __init__.py calls the op through `ops`"),
        ("org/name", "`name`, but every torch.ops namespace has an attribute `name`"),
        ("org/class", "`class`, but `class` is a Python keyword"),
        ("org/import", "`import`, but `import` is a Python keyword"),
        ("org/123abc", "invalid kernel name '123abc'"),
        ("org/a.b", "invalid kernel name 'a.b'"),
        ("org/relu-", "invalid kernel name 'relu-'"),
    ],
)
def test_a_name_whose_scaffold_would_not_compile_is_refused_before_anything_is_written(tmp_path: Path, repo: str, fragment: str) -> None:
    target = tmp_path / "k"
    done = _cli("init", str(target), "--name", repo, "--backends", "cpu")
    assert done.returncode == 3, done.stderr
    assert f"error: --name {repo}: " in done.stderr and fragment in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not target.exists()


# C and C++ names: keywords, glibc's variables (`timezone`, `stdin`) and macros (`alloca`),
# functions whose overloads made `&time` ambiguous, the scaffold's own parameter names.
CXX_NAMES = ["org/int", "org/namespace", "org/timezone", "org/alloca", "org/stdin", "org/time", "org/exp", "org/input"]


@pytest.mark.parametrize("repo", ["org/relu", "Org/Fancy_Op", "org/match", "org/type", *CXX_NAMES])
def test_every_accepted_name_gives_a_scaffold_that_checks_and_compiles(tmp_path: Path, repo: str) -> None:
    target = tmp_path / "k"
    done = _cli("init", str(target), "--name", repo, "--backends", "cpu", "--no-git")
    assert done.returncode == 0, done.stderr
    for path in target.rglob("*.py"):
        compile(path.read_text(), str(path), "exec")  # a SyntaxError fails the test
    checked = _cli("check-config", str(target))
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("repo", CXX_NAMES)
def test_the_cpp_of_names_that_are_c_or_cpp_names_compiles(tmp_path: Path, repo: str) -> None:
    """The C++ function is `<module>_op`, so these names, which broke the scaffold's compile
    when it was `<module>`, are accepted and compile (binding and CPU kernel, one TU)."""
    files = scaffold_files(repo, ["cpu"], "Apache-2.0", "x")
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    module = repo.split("/")[1]
    (tmp_path / "torch-ext" / "registration.h").write_text(
        "#pragma once\n#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)\n#define REGISTER_EXTENSION(NAME)\n"
    )
    unit = tmp_path / "unit.cpp"
    unit.write_text(f'#include "torch-ext/torch_binding.cpp"\n#include "{module}_cpu/{module}_cpu.cpp"\n')
    done = subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", "-DCPU_KERNEL", "-DTORCH_EXTENSION_NAME=_k_cpu", f"-I{tmp_path}", f"-I{tmp_path / 'torch-ext'}",
         f"-I{TORCH_INCLUDE}", f"-I{TORCH_INCLUDE / 'torch/csrc/api/include'}", str(unit)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "LC_ALL": "C"},
    )
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("kind", ["dangling-file-link", "file-link-with-overwrite", "dir-link", "fifo-with-overwrite"])
def test_init_never_writes_through_a_link_out_of_the_directory(tmp_path: Path, kind: str) -> None:
    """Found trying the file-set rule on init's own writes: a dangling `CARD.md` link was not
    "existing", and init created its target outside the directory."""
    kernel = tmp_path / "k"
    kernel.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    args = ["init", str(kernel), "--name", "org/my-kernel", "--backends", "cpu", "--no-git"]
    if kind == "dangling-file-link":
        (kernel / "CARD.md").symlink_to(outside / "card.md")
        planted, fragment = kernel / "CARD.md", "outside the kernel directory"
    elif kind == "file-link-with-overwrite":
        (outside / "notes.md").write_text("mine\n")
        (kernel / "CARD.md").symlink_to(outside / "notes.md")
        planted, fragment = kernel / "CARD.md", "outside the kernel directory"
        args.append("--overwrite")
    elif kind == "dir-link":
        (kernel / "tests").symlink_to(outside)
        planted, fragment = kernel / "tests", "outside the kernel directory"
    else:
        os.mkfifo(kernel / "CARD.md")
        planted, fragment = kernel / "CARD.md", "is a FIFO (named pipe)"
        args.append("--overwrite")
    done = _cli(*args)
    assert done.returncode == 3, done.stderr
    assert f"error: {planted} " in done.stderr and fragment in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert sorted(p.name for p in outside.iterdir()) == (["notes.md"] if kind == "file-link-with-overwrite" else [])
    if kind == "file-link-with-overwrite":
        assert (outside / "notes.md").read_text() == "mine\n"
    assert sorted(p.name for p in kernel.iterdir()) == [planted.name]  # nothing else was written
