"""``kernel-builder hash``: write digests into every variant's metadata.json."""

from __future__ import annotations

from pathlib import Path

import click

from kernel_builder.cli import output

__all__ = ["hash_cmd"]


@click.command("hash")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
def hash_cmd(directory: Path) -> None:
    """Hash every built variant of DIRECTORY and store the digest in its metadata.json.

    Variants are looked up in DIRECTORY/result, DIRECTORY/build, then DIRECTORY itself
    (the first holding sub-directories with a metadata.json). Each file of a variant is
    hashed with SHA-256 except metadata.json, metadata.json.sigstore, __pycache__ and
    *.pyc; the digest is written atomically. The loader checks it before importing.

    \b
    Example:
      kernel-builder hash examples/relu      # hashes examples/relu/build/*/
    """
    from kernel_builder.tree.layout import hash_tree  # lazy: the tree modules are for hashing, not for `hash --help`

    variants = hash_tree(directory)
    for variant in variants:
        output.result(str(variant))
    output.note(f"hashed {len(variants)} variant(s)")
