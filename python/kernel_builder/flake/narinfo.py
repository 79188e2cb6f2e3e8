"""Why a cache entry was refused, and whether a ``file://`` cache's entry lost its NAR.

Nix only says a path "is untrusted". The causes need different fixes: an entry signed by a
key the user does not trust (trust the owner's key), an entry whose NAR does not match the
hash in its narinfo (the cache was changed after signing: push again; ``nix store verify``
without ``--no-contents`` finds it, see ``nix.modified_paths``), and a signature that does
not verify under the trusted key of the same name (forged, or made by a different key that
reuses the name: never trust it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["missing_nar", "read_narinfo", "refusal_reason"]



def read_narinfo(text: str) -> dict[str, list[str]]:
    """``Key: value`` lines; a key may repeat (``Sig``)."""
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            fields.setdefault(key, []).append(value.strip())
    return fields


def refusal_reason(signers: Sequence[str], trusted_names: Sequence[str], *, modified: bool = False) -> str:
    """Why a cache may not serve a path signed by ``signers`` (key names); ``modified``:
    its NAR does not match its narinfo's NarHash."""
    if not signers:
        return "has it unsigned"
    if not set(signers) & set(trusted_names):
        return f"has it signed by {', '.join(signers)}, a key you do not trust"
    named = ", ".join(sorted(set(signers) & set(trusted_names)))
    if modified:
        return f"has it signed by {named}, but its NAR does not match the narinfo's NarHash (the entry changed after signing)"
    return (f"has a signature named {named} that does not verify with your {named} key "
            "(forged, or made by a different key that reuses the name)")


def missing_nar(url: str, store_path: str) -> Path | None:
    """The NAR file a ``file://`` cache's narinfo for ``store_path`` names, when that file is
    missing (Nix would then quietly build the path instead of fetching it)."""
    if not url.startswith("file://"):
        return None
    cache = Path(url[len("file://"):])
    try:
        info = read_narinfo((cache / f"{Path(store_path).name.split('-', 1)[0]}.narinfo").read_text(errors="replace"))
        nar = cache / info["URL"][0]
    except (OSError, KeyError, IndexError):
        return None
    return None if nar.exists() else nar
