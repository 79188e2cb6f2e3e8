"""``create-pyproject`` / ``clean-pyproject``: a pip project for a kernel, without Nix.

``create_pyproject`` writes pyproject.toml, setup.py, a CMake project and
compile_commands.json into the kernel directory, for the one variant the toolchain
Python's torch builds (as ``build --local`` picks it), so that ``pip wheel .`` or
``pip install -e .`` builds the kernel with that torch and an IDE sees the compile flags.
It records each file's SHA-256 in ``MANIFEST``; ``clean_pyproject`` deletes exactly those
files (and the directories create made, when empty), and refuses while any of them was
changed since.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import attrs

from kernel_builder._files import write_atomic
from kernel_builder.config.model import Backend, Build
from kernel_builder.driver.compile import build_env
from kernel_builder.driver.ops_id import ops_identifier
from kernel_builder.errors import BuildError, ConfigError
from kernel_builder.flake.kernel import Kernel
from kernel_builder.flake.local import local_variants
from kernel_builder.pyenv import Toolchain, find_tool, probe_toolchain
from kernel_builder.pyproject.manifest import MANIFEST, Manifest, changed, file_state, read_manifest, sha256, write_manifest
from kernel_builder.pyproject.project import ProjectFiles, project_files
from kernel_builder.variants.compat import compilable_here
from kernel_builder.variants.names import Kind, parse

__all__ = ["MANIFEST", "CleanResult", "CreateResult", "choose_variant", "clean_pyproject", "create_pyproject"]

log = logging.getLogger(__name__)

COMPILE_COMMANDS = "compile_commands.json"


@attrs.frozen
class CreateResult:
    variant: str
    written: tuple[str, ...]


@attrs.frozen
class CleanResult:
    removed: tuple[str, ...]
    missing: tuple[str, ...]
    dirs: tuple[str, ...]


def choose_variant(build: Build, toolchain: Toolchain, backends: tuple[str, ...] | None) -> str:
    """The variant a pip build with ``toolchain``'s torch makes: of those ``build --local``
    would build, a GPU backend's before CPU (a CUDA torch builds the CUDA variant)."""
    names, skipped = local_variants(build, toolchain, backends or None)
    if not names:
        reasons = "\n  ".join(skipped) or "the kernel lists no variant for this machine"
        raise BuildError(
            f"the torch {toolchain.torch_version} of {toolchain.python} builds none of this kernel's variants:\n  {reasons}",
            hint="pass --toolchain-python with a Python whose torch fits one (`kernel-builder list-variants`), or --variant NAME",
        )
    return sorted(names, key=lambda name: parse(name).backend == "cpu")[0]


def _refuse_unsupported(build: Build, kernel_dir: Path) -> None:
    if build.is_tvm_ffi or build.is_mlx:
        raise BuildError(
            f"{kernel_dir / 'build.toml'}: create-pyproject writes a project for [torch] kernels; this kernel is "
            f"{'[tvm-ffi]' if build.is_tvm_ffi else '[mlx-noarch]'}",
            hint="build it with `kernel-builder build` (or `build --local`)",
        )
    if build.is_noarch:
        raise BuildError(
            f"{kernel_dir / 'build.toml'}: a noarch kernel compiles nothing, so there is no CMake project to write",
            hint="build it with `kernel-builder build --local`, or install torch-ext/ as a plain Python package",
        )


def _conflicts(kernel_dir: Path, wanted: dict[str, bytes], previous: Manifest | None) -> list[str]:
    """The files ``create`` would replace that it did not write, or that changed since it did."""
    own = previous.files if previous is not None else {}
    found = []
    for rel in sorted(wanted):
        state = file_state(kernel_dir / rel)
        if state is not None and state != own.get(rel):
            found.append(rel)
    return found


def _new_dirs(kernel_dir: Path, rels: list[str]) -> list[str]:
    """The parent directories of ``rels`` (inside ``kernel_dir``) that do not exist yet."""
    missing: set[str] = set()
    for rel in rels:
        parent = Path(rel).parent
        while parent != Path(".") and not (kernel_dir / parent).exists():
            missing.add(parent.as_posix())
            parent = parent.parent
    return sorted(missing)


def _compile_commands(kernel_dir: Path, project: ProjectFiles, toolchain: Toolchain) -> bytes:
    """compile_commands.json from configuring the written project in a temporary directory
    (the same configure setup.py runs); its entries run in ``kernel_dir``."""
    cmake = find_tool("cmake", toolchain.python)
    ninja = find_tool("ninja", toolchain.python)
    with tempfile.TemporaryDirectory(prefix="kernel-builder-pyproject-") as work:
        args = [cmake, "-S", str(kernel_dir), "-B", work, "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}",
                f"-DPython3_EXECUTABLE={toolchain.python}", "-DCMAKE_BUILD_TYPE=Release", "-Wno-dev"]
        done = subprocess.run(args, env=build_env(project.plan, os.environ), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
            raise BuildError(
                f"cmake could not configure the written project in {kernel_dir} (for {COMPILE_COMMANDS}):\n{tail}",
                hint="fix what CMake says, or pass --no-compile-commands; `kernel-builder clean-pyproject` removes the files",
            )
        entries = json.loads((Path(work) / COMPILE_COMMANDS).read_text())
    for entry in entries:
        entry["directory"] = kernel_dir.as_posix()  # the build directory was temporary
    return (json.dumps(entries, indent=2) + "\n").encode()


def create_pyproject(
    kernel: Kernel | str | os.PathLike[str],
    *,
    toolchain_python: str | None = None,
    variant: str | None = None,
    backends: tuple[str, ...] = (),
    force: bool = False,
    compile_commands: bool = True,
) -> CreateResult:
    """Write the pip project of ``kernel`` (the command's ``flake.kernel.Kernel``, or a kernel
    directory, read here) for ``variant`` (default: ``choose_variant``).

    Refuses (``BuildError``, nothing written) when a file it would write exists and is not
    one an earlier run wrote and nobody changed since, unless ``force``."""
    if not isinstance(kernel, Kernel):
        kernel = Kernel.read(Path(kernel).resolve())
    kernel_dir, build = kernel.directory.resolve(), kernel.build
    _refuse_unsupported(build, kernel_dir)
    toolchain = probe_toolchain(toolchain_python or sys.executable)
    name = variant or choose_variant(build, toolchain, backends)
    try:
        chosen = parse(name)
    except ValueError as exc:
        raise BuildError(str(exc), hint="run `kernel-builder list-variants` to see valid names") from None
    backend = Backend(chosen.backend)
    if chosen.kind not in (Kind.TORCH, Kind.STABLE_ABI) or backend not in build.general.backends or not build.is_arch_for(backend):
        raise BuildError(
            f"variant {chosen} is not one of this kernel's compiled variants",
            hint="pick an arch variant of one of its backends (`kernel-builder list-variants`)",
        )
    if not compilable_here(chosen):
        raise BuildError(
            f"variant {chosen}: no toolchain for {chosen.backend} exists on this machine",
            hint="pick a cpu or cuda variant (`kernel-builder list-variants`)",
        )
    ops_id = ops_identifier(build.python_name, chosen.backend, kernel.identity.unique_id)
    manifest_path = kernel_dir / MANIFEST
    previous = read_manifest(manifest_path) if manifest_path.exists() else None
    project = project_files(build, kernel_dir, chosen, ops_id, toolchain)
    wanted = {rel: text.encode() for rel, text in project.files.items()}
    targets = [*wanted, *([COMPILE_COMMANDS] if compile_commands else [])]
    conflicts = _conflicts(kernel_dir, dict.fromkeys(targets, b""), previous)
    if conflicts and not force:
        raise BuildError(
            f"create-pyproject would overwrite files in {kernel_dir} that it did not write (or that were changed "
            f"since): {', '.join(conflicts)}",
            hint="move them away (or commit your edits elsewhere), or pass --force to overwrite them",
        )
    dirs = sorted({*_new_dirs(kernel_dir, targets), *(previous.dirs if previous else ())})
    recorded = dict(previous.files) if previous else {}
    recorded.update({rel: sha256(data) for rel, data in wanted.items()})
    # Recorded before anything is written: whatever stops this run (a failed CMake configure
    # included), clean-pyproject has a record of every file it may have written. A file not
    # replaced yet differs from its record, so clean refuses it rather than guess.
    write_manifest(kernel_dir, Manifest(chosen.name, recorded, tuple(dirs)))
    for rel, data in wanted.items():
        (kernel_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(kernel_dir / rel, data)
    if compile_commands:
        data = _compile_commands(kernel_dir, project, toolchain)
        write_atomic(kernel_dir / COMPILE_COMMANDS, data)
        recorded[COMPILE_COMMANDS] = sha256(data)
    stale = sorted(set(recorded) - set(targets))
    for rel in stale:  # written by an earlier run with other options (compile_commands.json)
        if file_state(kernel_dir / rel) in (recorded[rel], None):
            (kernel_dir / rel).unlink(missing_ok=True)
            del recorded[rel]
    write_manifest(kernel_dir, Manifest(chosen.name, recorded, tuple(dirs)))
    return CreateResult(chosen.name, tuple(sorted(set(targets))))


def clean_pyproject(kernel_dir: str | os.PathLike[str], *, dry_run: bool = False) -> CleanResult:
    """Delete the files ``MANIFEST`` records, the directories create made (when empty) and
    the manifest. Refuses (``BuildError``, nothing deleted) while a recorded file differs
    from what create wrote."""
    kernel_dir = Path(kernel_dir).resolve()
    manifest_path = kernel_dir / MANIFEST
    if not manifest_path.exists():
        raise ConfigError(
            f"{kernel_dir}: no {MANIFEST}: create-pyproject wrote nothing here (or its record was deleted)",
            hint="run clean-pyproject in the directory create-pyproject was run in; without the record, delete the files yourself",
        )
    manifest = read_manifest(manifest_path)
    states = {rel: file_state(kernel_dir / rel) for rel in manifest.files}
    edited = changed(manifest, states)
    if edited:
        raise BuildError(
            f"clean-pyproject deletes only files exactly as create-pyproject wrote them; changed since: {', '.join(edited)}",
            hint="keep your edits elsewhere and delete (or restore) these files yourself, then run clean-pyproject again",
        )
    present = tuple(sorted(rel for rel, state in states.items() if state is not None))
    missing = tuple(sorted(rel for rel, state in states.items() if state is None))
    dirs = tuple(d for d in sorted(manifest.dirs, key=lambda d: d.count("/"), reverse=True))
    if dry_run:
        return CleanResult(present, missing, dirs)
    for rel in present:
        (kernel_dir / rel).unlink()
    removed_dirs = []
    for rel in dirs:
        path = kernel_dir / rel
        if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()
            removed_dirs.append(rel)
    manifest_path.unlink()
    return CleanResult(present, missing, tuple(removed_dirs))

