"""Why a cache entry was refused: read its ``.narinfo`` (and, in a ``file://`` cache, its NAR).

Nix only says a path "is untrusted". The causes need different fixes: an entry signed by a
key the user does not trust (trust the owner's key), an entry whose NAR no longer matches
the hash the signature covers (the cache was changed after signing: push again), and a
signature that does not verify under the trusted key of the same name (forged, or made by a
different key that reuses the name: never trust it). This module tells them apart for
``file://`` caches, where the files can be read; other caches get the signer names only.
"""

from __future__ import annotations

import bz2
import hashlib
import lzma
from collections.abc import Sequence
from pathlib import Path

__all__ = ["missing_nar", "nix_base32", "read_narinfo", "refusal_reason"]

_BASE32 = "0123456789abcdfghijklmnpqrsvwxyz"  # Nix's alphabet: no e, o, u, t
_DECOMPRESS = {"none": lambda data: data, "": lambda data: data, "xz": lzma.decompress, "bzip2": bz2.decompress}
_NAR_LIMIT = 8 << 30  # a variant's NAR is tens of MB; refuse to hash more than 8 GiB


def nix_base32(digest: bytes) -> str:
    """``digest`` in Nix's base32 (as in ``sha256:…`` of a narinfo's ``NarHash``)."""
    length = (len(digest) * 8 - 1) // 5 + 1
    chars = []
    for n in range(length - 1, -1, -1):
        bit = n * 5
        byte, shift = divmod(bit, 8)
        value = digest[byte] >> shift
        if byte + 1 < len(digest):
            value |= digest[byte + 1] << (8 - shift)
        chars.append(_BASE32[value & 0x1F])
    return "".join(chars)


def read_narinfo(text: str) -> dict[str, list[str]]:
    """``Key: value`` lines; a key may repeat (``Sig``)."""
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            fields.setdefault(key, []).append(value.strip())
    return fields


def refusal_reason(url: str, store_path: str, signers: Sequence[str], trusted_names: Sequence[str]) -> str:
    """One line saying why the cache at ``url`` may not serve ``store_path``."""
    if not signers:
        return "has it unsigned"
    if not set(signers) & set(trusted_names):
        return f"has it signed by {', '.join(signers)}, a key you do not trust"
    named = ", ".join(sorted(set(signers) & set(trusted_names)))
    if url.startswith("file://") and _nar_changed(Path(url[len("file://"):]), store_path):
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


def _nar_changed(cache: Path, store_path: str) -> bool:
    """Whether the NAR file's sha256 differs from the narinfo's ``NarHash`` (False when
    either cannot be read: then nothing is claimed)."""
    hash_part = Path(store_path).name.split("-", 1)[0]
    try:
        info = read_narinfo((cache / f"{hash_part}.narinfo").read_text(errors="replace"))
        nar = cache / info["URL"][0]
        if nar.stat().st_size > _NAR_LIMIT:
            return False
        data = _DECOMPRESS[info.get("Compression", ["xz"])[0]](nar.read_bytes())
        claimed = info["NarHash"][0]
    except (OSError, KeyError, IndexError, ValueError, lzma.LZMAError):
        return False
    algorithm, _, value = claimed.partition(":")
    if algorithm != "sha256":
        return False
    return nix_base32(hashlib.sha256(data).digest()) != value
