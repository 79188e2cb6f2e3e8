"""``kernel-builder init``: scaffold a kernel that builds and passes its tests as generated.

The kernel name comes from ``--name ORG/REPO`` and becomes the Python package, the Python
function and the op (``_module_problem``); the C++ function is ``<module>_op``, so no C or
C++ name collides with it. A name the kernel-name rule refuses, a Python keyword, or a name
the generated Python itself needs (``torch``, ``ops``, ``name``) is refused before anything
is written. In a directory that already holds files,
only the files init wrote are staged (``git add -- FILES``), never the rest
(``keys/team-1.sec``, ``.env``); the written ``.gitignore`` ignores key and environment files.
"""

from __future__ import annotations

import keyword
import os
import string
import subprocess
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import click

from kernel_builder._files import UnsafeFile, check_inside, write_atomic
from kernel_builder.cli import output
from kernel_builder.config.model import validate_kernel_name
from kernel_builder.errors import ConfigError
from kernel_builder.hub.card import default_template
from kernel_builder.ids import REPO_ID_RULE, RepoId

__all__ = ["init", "kernel_name_for", "scaffold_files", "INIT_BACKENDS"]

# Every backend upstream's init scaffolds. rocm shares the CUDA source (compiled as HIP).
# Only cpu and cuda compile on these machines; `list-variants` says why the others do not.
INIT_BACKENDS = ("cpu", "cuda", "rocm", "xpu", "metal")

# A noarch kernel runs wherever torch does: every backend's torch-<backend> variant.
NOARCH_BACKENDS = ("cpu", "cuda", "rocm", "xpu", "metal")

# The flake input written by default: where kernel-builder is published. `kernel-builder
# build` and `test` always override it with the builder they run (kernel_flake.py), so it
# is only read by plain `nix build` (see docs/cli.md, "kernel-builder init").
DEFAULT_BUILDER_URL = "git+https://github.com/huggingface/kernel-builder"


# Names the generated Python cannot use for its function: the modules and objects its
# __init__.py uses (`torch`, `ops`), and `name`, an attribute of every torch.ops namespace
# (so `ops.name` is not the op). The C++ side names its function `<module>_op`, so no C or
# C++ name (a keyword, `time`, glibc's `timezone` or `alloca` macro) can collide with it.
_PYTHON_TAKEN = {
    "torch": "the generated __init__.py uses torch",
    "ops": "the generated __init__.py calls the op through `ops`",
    "name": "every torch.ops namespace has an attribute `name`, so `ops.name` is not the op",
}


def _module_problem(module: str) -> str | None:
    """Why ``module`` cannot name the scaffold's package and Python function, or ``None``."""
    if keyword.iskeyword(module):
        return f"`{module}` is a Python keyword"
    if module in _PYTHON_TAKEN:
        return f"{_PYTHON_TAKEN[module]}"
    return None


def kernel_name_for(repo_id: str) -> tuple[str, str]:
    """(kernel name, Python module name) that init derives from ``--name ORG/REPO``;
    ``ConfigError`` when they could not build (see the module docstring)."""
    try:
        RepoId.parse(repo_id)
    except ValueError:
        raise ConfigError(f"--name must look like {REPO_ID_RULE}, got {repo_id!r}", hint="e.g. --name my-org/my-kernel") from None
    name = repo_id.split("/", 1)[1].lower().replace("_", "-")
    module = name.replace("-", "_").replace(".", "_")
    hint = "choose another REPO: the kernel name (lower case, `_` -> `-`), its Python package and its function are made from it (e.g. --name my-org/my-kernel)"
    try:
        validate_kernel_name(name)
    except ValueError as exc:
        raise ConfigError(f"--name {repo_id}: {exc}", hint=hint) from None
    problem = _module_problem(module)
    if problem is not None:
        raise ConfigError(
            f"--name {repo_id}: the kernel's Python package and function would be named `{module}`, "
            f"but {problem}, so the scaffold would not work",
            hint=hint,
        )
    return name, module


def _template(name: str) -> string.Template:
    text = resources.files("kernel_builder.cli").joinpath(f"templates/init/{name}").read_text(encoding="utf-8")
    return string.Template(text)


def scaffold_files(
    repo_id: str, backends: Sequence[str], license: str, builder_url: str, *, noarch: bool = False
) -> dict[str, str]:
    """Relative path -> content of every file of a new kernel (pure; no I/O but templates).
    ``noarch``: a pure PyTorch kernel ([torch-noarch], no sources to compile)."""
    name, module = kernel_name_for(repo_id)
    unknown = [b for b in backends if b not in (NOARCH_BACKENDS if noarch else INIT_BACKENDS)]
    if unknown or not backends:
        raise ConfigError(
            f"init cannot scaffold backend(s) {', '.join(unknown) or '(none)'}",
            hint=f"choose from {', '.join(NOARCH_BACKENDS if noarch else INIT_BACKENDS)} (add others to build.toml by hand)",
        )
    values = {
        "name": name,
        "module": module,
        "repo_id": repo_id,
        "license": license,
        "builder_url": builder_url,
        "backends_list": ", ".join(f'"{b}"' for b in backends),
    }
    common = {
        "flake.nix": _template("flake.nix.tmpl").substitute(values),
        ".gitignore": _template("gitignore.tmpl").substitute(values),
        "CARD.md": default_template(),
        f"tests/test_{module}.py": _template("test_kernel.py.tmpl").substitute(values),
        f"benchmarks/benchmark_{module}.py": _template("benchmark.py.tmpl").substitute(values),
        ".github/workflows/kernel.yml": _template("kernel.yml.tmpl").substitute(values),
    }
    if noarch:
        return {
            "build.toml": _template("build-noarch.toml.tmpl").substitute(values),
            f"torch-ext/{module}/__init__.py": _template("__init__noarch.py.tmpl").substitute(values),
            **common,
        }
    values["kernel_tables"] = "".join(_template(f"kernel-{b}.toml.tmpl").substitute(values) for b in backends)
    files = {
        "build.toml": _template("build.toml.tmpl").substitute(values),
        "torch-ext/torch_binding.h": _template("torch_binding.h.tmpl").substitute(values),
        "torch-ext/torch_binding.cpp": _template("torch_binding.cpp.tmpl").substitute(values),
        f"torch-ext/{module}/__init__.py": _template("__init__.py.tmpl").substitute(values),
        **common,
    }
    if "cpu" in backends:
        files[f"{module}_cpu/{module}_cpu.cpp"] = _template("kernel_cpu.cpp.tmpl").substitute(values)
    if "cuda" in backends or "rocm" in backends:
        files[f"{module}_cuda/{module}_cuda.cu"] = _template("kernel_cuda.cu.tmpl").substitute(values)
    if "xpu" in backends:
        files[f"{module}_xpu/{module}_xpu.cpp"] = _template("kernel_xpu.cpp.tmpl").substitute(values)
    if "metal" in backends:
        files[f"{module}_metal/{module}_metal.mm"] = _template("kernel_metal.mm.tmpl").substitute(values)
    return files


def _refuse_writes_outside(directory: Path, files: Sequence[str]) -> None:
    """Each scaffold path, and every directory on the way to it, that already exists must be
    the kernel directory's own (the file-set rule, ``_files.check_inside``): a link out
    (``CARD.md -> ~/notes.md``, even a dangling one, or ``tests -> /elsewhere``) would make
    init write outside ``directory``, and a FIFO would block it."""
    for rel in files:
        parts = Path(rel).parts
        for depth in range(1, len(parts) + 1):
            path = directory.joinpath(*parts[:depth])
            if not os.path.lexists(path):
                break
            try:
                check_inside(path, directory)
            except UnsafeFile as exc:
                raise ConfigError(
                    f"{exc.path} {exc.reason}; init would write {rel} there",
                    hint="remove it or replace the link with a real file or directory, or choose another directory",
                ) from None


def _git_init(directory: Path, files: Sequence[str]) -> bool:
    """Make DIR a git repository with the scaffold's ``files`` staged, so Nix sees them, and
    nothing else that DIR held before (a key, an ``.env``); False when DIR is already inside
    a work tree or git is missing."""
    try:
        inside = subprocess.run(["git", "-C", str(directory), "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True)
        if inside.returncode == 0:
            return False
        subprocess.run(["git", "init", "-q", str(directory)], check=True, capture_output=True)
        subprocess.run(["git", "-C", str(directory), "add", "--", *sorted(files)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--name", "repo_id", required=True, metavar="ORG/REPO", help="Hub repository of the kernel; REPO names the kernel.")
@click.option("--backends", default="cpu,cuda", show_default=True, metavar="LIST", help="Comma-separated backends to scaffold: cpu, cuda, rocm, xpu, metal, or all.")
@click.option("--license", "license_", default="Apache-2.0", show_default=True, help="License of the kernel (SPDX id).")
@click.option("--builder-url", metavar="URL", help=f"Flake URL of kernel-builder written into flake.nix (default: {DEFAULT_BUILDER_URL}; `build` and `test` override it with the builder they run).")
@click.option("--noarch", is_flag=True, help="A pure PyTorch kernel ([torch-noarch]: one torch-<backend> variant per backend, nothing to compile).")
@click.option("--overwrite", is_flag=True, help="Replace files that already exist.")
@click.option("--no-git", is_flag=True, help="Do not run `git init` + `git add` in DIRECTORY.")
def init(
    directory: Path, repo_id: str, backends: str, license_: str, builder_url: str | None, noarch: bool, overwrite: bool, no_git: bool
) -> None:
    """Scaffold a kernel in DIRECTORY: build.toml (edition 6), flake.nix, sources, tests.

    \b
    Writes build.toml (edition 6, the current edition, as upstream's init writes it: each
    [kernel.<module>_<backend>] has language = "cpp-<backend>") with [general.hub] repo-id, flake.nix calling
    kernel-builder.lib.genKernelFlakeOutputs, torch-ext/ (binding and Python package with
    __all__), one source per backend, CARD.md (card template), tests/ (compares the kernel
    with torch), benchmarks/, .github/workflows/kernel.yml (build, test, cache, upload on
    tags) and .gitignore (which also ignores key and .env files); then `git init` and
    stages the files it wrote, nothing else (Nix only sees tracked files). Nothing is
    written if any file exists, unless --overwrite. REPO must give a kernel name whose
    Python package and functions compile (not `torch`, `class`, `123abc`).
    Example:
      kernel-builder init my-kernel --name my-org/my-kernel --backends cpu
      kernel-builder test my-kernel
    """
    chosen = [b.strip() for b in backends.split(",") if b.strip()]
    if chosen == ["all"]:
        chosen = list(NOARCH_BACKENDS if noarch else INIT_BACKENDS)
    files = scaffold_files(repo_id, chosen, license_, builder_url or DEFAULT_BUILDER_URL, noarch=noarch)
    _refuse_writes_outside(directory, files)
    existing = [rel for rel in files if os.path.lexists(directory / rel)]
    if existing and not overwrite:
        raise ConfigError(
            f"{directory} already has: {', '.join(sorted(existing))}",
            hint="choose an empty directory or pass --overwrite",
        )
    for rel, content in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, content)
    staged = False if no_git else _git_init(directory, list(files))
    for rel in sorted(files):
        output.result(str(directory / rel))
    output.note(
        f"created kernel {files['build.toml'].split(chr(34))[1]} in {directory}"
        + (" (git repository initialised, files staged)" if staged else "")
    )
