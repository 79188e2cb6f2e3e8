"""The kernel flake Nix sees: a copy of exactly the files a build reads.

A ``path:`` flake copies its whole directory into the world-readable store, and a git flake
copies every tracked file: an old ``build/``, a ``keys/team-1.sec`` signing key or notes
would enter the store (and any store or cache that copies the source). So
``kernel-builder build`` never hands Nix the kernel directory: it hands it a copy, in the
state directory, of build.toml, the flake files, the files build.toml names (``src``,
``include`` directories, the Python package's ``pyext`` files) and the bundle's extras
(``CARD.md``, ``benchmarks/``) and the kernel's ``tests/``, which the kernel-test runs read
(a variant derivation never does, so editing a test rebuilds no variant). The same rule filters each backend's source in Nix
(``nix/lib/pure/inputs.nix``). A secret key among them is refused by name: nothing secret
enters the store. Every file of the set is judged by ``_files.walk_inside``: a symlink whose
target leaves the kernel directory (``tests/hfcache -> ~/.cache/huggingface``,
``torch-ext/relu/token.py -> ~/.cache/huggingface/token``), a FIFO, socket or device and a
symlink loop are refused naming the path, so no host file is copied and nothing blocks;
each file is read with ``_files.read_regular`` (never further than its size).

The copy's flake.nix is the kernel's, less the ``self`` input attributes newer Nix reads
(``inputs.self.submodules = true``, as kernels-community's deep-gemm writes, and
``self.lfs``): they only say what a git source fetches, the copy is a ``path:`` flake that
already holds the checked-out submodules, and Nix 2.8 refuses the whole flake for them.

The copy's flake.lock is the kernel's, less its ``kernel-builder`` input (``lock_for_copy``):
every build overrides that input, so its locked entry is never used, and the entry a Nix
2.26 or later writes for a relative ``path:`` input (no ``narHash``, a ``parent``) makes Nix
2.8 refuse the whole lock ("lockfile contains mutable lock") even beside
``--override-input``. A lock left with no input is not copied at all.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from kernel_builder.config.model import Build
from kernel_builder._files import UnsafeFile, check_inside, content_dir, read_regular, walk_inside
from kernel_builder.errors import ConfigError

if TYPE_CHECKING:
    from kernel_builder.flake.kernel import Kernel

__all__ = ["is_secret_key", "kernel_files", "lock_for_copy", "prepare_kernel_source", "without_self_fetch_attrs"]

_BUILDER_INPUT = "kernel-builder"  # the input every build overrides (kernel_flake.py)
_KEEP = 24  # kernel source copies kept in the state directory
_FLAKE_FILES = ("flake.nix", "flake.lock", "CARD.md")
_EXTRA_DIRS = ("benchmarks", "tests")
_SKIP_DIRS = ("__pycache__", ".git")
_NIX_SECRET = re.compile(rb"^[A-Za-z0-9._+-]+:([A-Za-z0-9+/]{86}==)\s*$")
_PEM_SECRET = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")
# `inputs.self.submodules = true;` at the top level or `self.lfs = false;` inside `inputs = { }`
_SELF_FETCH_ATTR = re.compile(
    rb"(?:(?<![\w.-])inputs\s*\.\s*|(?<![\w.-]))self\s*\.\s*(?:submodules|lfs)\s*=\s*(?:true|false)\s*;"
)


def without_self_fetch_attrs(flake_nix: bytes) -> bytes:
    """``flake_nix`` without its ``self.submodules`` / ``self.lfs`` input attributes, each
    replaced by as many spaces so that Nix's line:column in an error still points at the
    kernel's own file (see the module docstring)."""
    return _SELF_FETCH_ATTR.sub(lambda m: b" " * len(m.group(0)), flake_nix)


def lock_for_copy(flake_lock: bytes) -> bytes | None:
    """``flake_lock`` without the root's ``kernel-builder`` input and the nodes only it
    reached; ``None`` when no input is left (see the module docstring). A lock that is not a
    lock file's JSON is kept as it is: Nix then names what is wrong with it."""
    try:
        lock = json.loads(flake_lock)
        nodes, root = lock["nodes"], lock["root"]
        inputs = nodes[root].get("inputs", {})
    except (ValueError, KeyError, TypeError, AttributeError):
        return flake_lock
    if not isinstance(inputs, dict) or _BUILDER_INPUT not in inputs:
        return flake_lock
    del inputs[_BUILDER_INPUT]
    if not inputs:
        nodes[root].pop("inputs")
    reached, todo = set(), [root]
    while todo:  # nodes named directly; a `follows` path (a list) names no node of its own
        name = todo.pop()
        if name in reached or not isinstance(nodes.get(name), dict):
            continue
        reached.add(name)
        todo += [spec for spec in (nodes[name].get("inputs") or {}).values() if isinstance(spec, str)]
    if reached == {root}:
        return None
    lock["nodes"] = {name: node for name, node in nodes.items() if name in reached}
    return (json.dumps(lock, indent=2) + "\n").encode()


def is_secret_key(path: Path) -> bool:
    """Whether ``path`` is a signing key: named ``*.sec``, a Nix secret key (``name:`` and 64
    base64 bytes) or a PEM private key. Only the first 4 kB are read."""
    if path.name.endswith(".sec"):
        return True
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    match = _NIX_SECRET.match(head)
    if match and len(base64.b64decode(match.group(1))) == 64:
        return True
    return bool(_PEM_SECRET.search(head))


def _walk(root: Path, rel: str, keep: tuple[str, ...] | None) -> Iterator[str]:
    """Files under ``root/rel`` (``keep``: only these extensions), each judged by ``walk_inside``."""
    for inner, _, _ in walk_inside(root / rel, root, skip_dir=lambda name: name in _SKIP_DIRS):
        if keep is None or inner.rsplit(".", 1)[-1] in keep:
            yield f"{rel}/{inner}"


def _unsafe(exc: UnsafeFile) -> ConfigError:
    return ConfigError(
        f"{exc.path} {exc.reason}",
        hint="a build copies the kernel's sources, tests/ and benchmarks/ into the Nix store, which every user "
        "of the machine can read: a symlink may point only inside the kernel directory (copy the file in instead), "
        "and FIFOs, sockets and devices do not belong there",
    )


def kernel_files(kernel_dir: Path, build: Build | None) -> list[str]:
    """The kernel files a Nix build reads, relative to ``kernel_dir``, sorted (just build.toml
    and the flake files when build.toml does not parse: Nix then reports the error).
    ``ConfigError`` names the first file ``_files.walk_inside`` refuses."""
    try:
        return _kernel_files(kernel_dir, build)
    except UnsafeFile as exc:
        raise _unsafe(exc) from None


def _present(path: Path, boundary: Path) -> bool:
    """Whether ``path`` exists; ``UnsafeFile`` when it may not be read (a link out, a FIFO)."""
    if not os.path.lexists(path):
        return False
    check_inside(path, boundary)
    return True


def _kernel_files(kernel_dir: Path, build: Build | None) -> list[str]:
    found: set[str] = set()
    for name in ("build.toml", *_FLAKE_FILES):
        if _present(kernel_dir / name, kernel_dir) and (kernel_dir / name).is_file():
            found.add(name)
    for extra in _EXTRA_DIRS:
        if _present(kernel_dir / extra, kernel_dir) and (kernel_dir / extra).is_dir():
            found.update(_walk(kernel_dir, extra, None))
    if build is not None:
        for rel in build.input_paths():
            path = kernel_dir / rel
            if not _present(path, kernel_dir):
                continue
            if path.is_file():
                found.add(rel)
            elif path.is_dir():
                found.update(_walk(kernel_dir, rel, tuple(build.pyext) if rel == build.ext_dir else None))
    return sorted(os.path.normpath(rel) for rel in found)


def _refuse_secrets(kernel_dir: Path, files: list[str]) -> None:
    secrets = [rel for rel in files if is_secret_key(kernel_dir / rel)]
    if secrets:
        raise ConfigError(
            f"{kernel_dir / 'build.toml'}: the build would copy {', '.join(secrets)} into the Nix store, "
            "which every user of the machine can read, but it is a secret key",
            hint="keep signing keys outside the kernel directory (for example ~/.config/kernel-builder/keys/) "
            "and do not name them in src, include or the Python package",
        )


def prepare_kernel_source(kernel: Kernel | Path, state: Path) -> Path:
    """Copy the files a build reads (``Kernel.files``) into ``state/kernel-sources/<digest>``
    (reused when the content is the same) and return that directory; refuses secret keys.
    A bare path is read as ``Kernel.lenient``."""
    from kernel_builder.flake.kernel import as_kernel  # lazy: kernel.py imports this module

    kernel = as_kernel(kernel)
    kernel_dir = kernel.directory.resolve()
    files = list(kernel.files)
    _refuse_secrets(kernel_dir, files)
    try:
        data = [(rel, read_regular(kernel_dir / rel)) for rel in files]
    except UnsafeFile as exc:  # swapped for a FIFO (or grown) since the walk
        raise _unsafe(exc) from None
    copied: list[tuple[str, bytes]] = []
    for rel, content in data:
        if rel == "flake.nix":
            content = without_self_fetch_attrs(content)
        elif rel == "flake.lock":
            kept = lock_for_copy(content)
            if kept is None:
                continue
            content = kept
        copied.append((rel, content))
    return content_dir(state / "kernel-sources", copied, keep=_KEEP)
