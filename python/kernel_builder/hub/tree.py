"""The local side of an upload: the built tree, its checks, the target and the card.

``read_tree`` finds the variants (``layout.discover_variants``) and reads their metadata
and, for a kernel source, build.toml; ``choose_target`` settles the repo id (with
``card.card_repo_id``, the rule the bundle's card follows too) and branch;
``render_tree_card`` renders the card, or takes the pre-rendered one when its stamp names
the repository. The checks are ``tree.checks.check_tree``'s.
Nothing here talks to the Hub.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from kernel_builder._files import UnsafeFile, check_inside
from kernel_builder.config import load
from kernel_builder.config.model import validate_branch_name
from kernel_builder.errors import CheckError, ConfigError
from kernel_builder.hub import card as cardlib
from kernel_builder.hub.plan import LocalFile, local_file
from kernel_builder.ids import REPO_ID_RULE, RepoId
from kernel_builder.tree.layout import discover_variants
from kernel_builder.tree.metadata import Metadata

if TYPE_CHECKING:
    from kernel_builder.config.model import Build

__all__ = [
    "LocalTree",
    "read_tree",
    "dirty_variants",
    "choose_target",
    "benchmark_files",
    "render_tree_card",
]


@attrs.frozen
class LocalTree:
    """A built tree on disk: where it is, its variants and (for a kernel source) build.toml."""

    kernel_dir: Path
    build_dir: Path
    variants: dict[str, Path]
    metadata: dict[str, Metadata]
    build: Build | None = None


def read_tree(directory: Path) -> LocalTree:
    """Find the variants under ``directory`` and read every metadata.json."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckError(f"{directory} is not a directory", hint="pass the kernel directory or a build tree")
    build_dir, variant_dirs = discover_variants(directory)
    build = None
    if (directory / "build.toml").is_file():
        build = load(directory)
    metadata = {v.name: Metadata.read(v / "metadata.json") for v in variant_dirs}
    return LocalTree(directory, build_dir, {v.name: v for v in variant_dirs}, metadata, build)


def dirty_variants(tree: LocalTree) -> list[str]:
    return [n for n, m in tree.metadata.items() if m.provenance is not None and m.provenance.dirty]


def narrowed_variants(tree: LocalTree) -> dict[str, tuple[str, ...]]:
    """Variants built with ``--cuda-capabilities`` (fewer archs than build.toml asks), with
    the capabilities they were narrowed to."""
    return {
        n: m.provenance.cuda_capabilities
        for n, m in tree.metadata.items()
        if m.provenance is not None and m.provenance.cuda_capabilities is not None
    }


def choose_target(tree: LocalTree, repo_id: str | None, branch: str | None) -> tuple[str, str, int]:
    """``(repo_id, branch, version)`` from the options, build.toml and the variants' metadata."""
    hub = tree.build.general.hub if tree.build is not None else None
    repo_id = cardlib.card_repo_id(tree.build, repo_id)
    if not repo_id:
        raise ConfigError(
            "no repository to upload to",
            hint="pass --repo-id ORG/NAME or set `repo-id` under [general.hub] in build.toml",
        )
    try:
        RepoId.parse(repo_id)
    except ValueError:
        raise ConfigError(f"repository id {repo_id!r} must look like {REPO_ID_RULE}", hint="for example --repo-id my-org/relu") from None
    versions = {m.version for m in tree.metadata.values()}
    if len(versions) != 1:
        listing = ", ".join(f"{n}: v{m.version}" for n, m in sorted(tree.metadata.items()))
        raise CheckError(
            f"the variants in {tree.build_dir} disagree on the version ({listing})",
            hint="rebuild all variants from one build.toml, or remove the stale ones",
        )
    version = versions.pop()
    branch = branch or (hub.branch if hub is not None else None) or f"v{version}"
    try:
        validate_branch_name(branch)
    except ValueError as exc:
        raise ConfigError(str(exc), hint="pass --branch NAME, e.g. v1 or release") from None
    return repo_id, branch, version


def _own_file(path: Path, boundary: Path, what: str) -> bool:
    """Whether ``path`` exists; a ``CheckError`` naming it when an upload may not read it: a
    symlink out of ``boundary`` (``benchmarks/benchmark_x.py -> ~/.cache/huggingface/token``,
    which would be published), a FIFO or a device (the file-set rule, ``_files.walk_inside``)."""
    if not os.path.lexists(path):
        return False
    try:
        check_inside(path, boundary, what=what)
    except UnsafeFile as exc:
        raise CheckError(
            str(exc),
            hint="an upload publishes the kernel's own files: a symlink may point only inside its directory "
            "(copy the file in instead), and FIFOs, sockets and devices do not belong there",
        ) from None
    return True


def benchmark_files(tree: LocalTree) -> list[LocalFile]:
    for folder, boundary, what in (
        (tree.kernel_dir / "benchmarks", tree.kernel_dir, "the kernel directory"),
        (tree.build_dir / "benchmarks", tree.build_dir, "the build directory"),
    ):
        if _own_file(folder, boundary, what) and folder.is_dir():
            found = sorted(p for p in folder.iterdir() if fnmatch.fnmatch(p.name, "benchmark*.py"))
            return [local_file(f"benchmarks/{p.name}", p) for p in found if _own_file(p, boundary, what) and p.is_file()]
    return []


def render_tree_card(tree: LocalTree, repo_id: str, version: int) -> str:
    """The card text for ``repo_id``: the kernel's CARD.md template rendered; else the
    pre-rendered build/CARD.md when its stamp names ``repo_id``; else the card rendered again
    (with the default template, which a bare tree can only do when the stamp says it made
    the card); else the default card."""
    own = tree.kernel_dir / "CARD.md" if tree.build is not None else None
    if own is not None and not _own_file(own, tree.kernel_dir, "the kernel directory"):
        own = None
    prerendered = tree.build_dir / "CARD.md"
    if own is None and _own_file(prerendered, tree.build_dir, "the build directory") and prerendered.is_file():
        text = prerendered.read_text(encoding="utf-8")
        stamp = cardlib.CardStamp.read(text)
        if stamp is not None and stamp.repo_id == repo_id:
            return text
        if tree.build is None and (stamp is None or not stamp.default_template):
            raise _cannot_rerender(prerendered, stamp, repo_id)
    template, template_path = cardlib.template_for(own)
    names = sorted(tree.variants)
    context = cardlib.tree_context(
        tree.kernel_dir,
        [tree.variants[n] for n in names],
        repo_id=repo_id,
        version=version,
        build=tree.build,
        metadata=tree.metadata[names[0]],
        extra_dirs=(tree.build_dir,),
    )
    return cardlib.render_card(template, context, template_path=template_path)


def _cannot_rerender(card: Path, stamp: cardlib.CardStamp | None, repo_id: str) -> ConfigError:
    if stamp is None:
        what = "does not say which repository it names (it has no kernel-builder stamp)"
        fix = "or delete it to upload the default card"
    else:
        named = f"for {stamp.repo_id}" if stamp.repo_id else "without a repo id"
        what = f"was rendered {named} from the kernel's own CARD.md template, which this tree does not hold"
        fix = f'or set repo-id = "{repo_id}" under [general.hub] in build.toml and build again'
    return ConfigError(
        f"{card} {what}; uploading it would publish a card that does not name {repo_id}",
        hint=f"upload from the kernel's directory (build.toml and CARD.md render the card for {repo_id}), {fix}",
    )
