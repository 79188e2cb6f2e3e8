"""Signed binary caches: key pairs, cache URLs, and which variants a cache may serve.

Nix does the work (``nix copy`` signs, a build substitutes); this module holds the rules
kernel-builder adds on top: keys are files named after the key, a plain directory is a
``file://`` cache, and a variant a cache holds without a trusted signature is refused
before anything is built, instead of being silently rebuilt.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from kernel_builder import _files
from kernel_builder import nix
from kernel_builder.flake.narinfo import missing_nar, refusal_reason
from kernel_builder.errors import BuildError, ConfigError

__all__ = ["CacheCheck", "cache_url", "check_cache", "key_files", "make_key_pair", "query_caches", "read_public_key", "refusal", "secret_key_name", "cache_settings"]

log = logging.getLogger(__name__)

_KEY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_PUBLIC_KEY = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*):([A-Za-z0-9+/]{43}=)")
_SECRET_KEY = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*):([A-Za-z0-9+/]{86}==)")
_KEY_FILE_LIMIT = 4096  # a key file is about 100 bytes
_KEY_HINT = "pass a key file written by `kernel-builder cache key NAME --out DIR` (NAME.pub to trust, NAME.sec to sign)"
_SCHEMES = ("file://", "https://", "http://", "s3://", "ssh://", "ssh-ng://")


def key_files(name: str, out_dir: Path) -> tuple[Path, Path]:
    """``(DIR/NAME.sec, DIR/NAME.pub)``; ``ConfigError`` for a name Nix cannot use."""
    if not _KEY_NAME.fullmatch(name):
        raise ConfigError(
            f"invalid key name {name!r}",
            hint="use letters, digits, '.', '_' and '-', e.g. my-team-cache-1 (the number lets you rotate keys)",
        )
    return out_dir / f"{name}.sec", out_dir / f"{name}.pub"


def make_key_pair(name: str, out_dir: Path) -> tuple[Path, Path]:
    """Write a new signing key pair; never overwrites one (a lost secret key cannot be recovered)."""
    secret, public = key_files(name, out_dir)
    existing = [p for p in (secret, public) if os.path.lexists(p)]  # a dangling link too: nix would write through it
    if existing:
        what = f"is a symlink to {os.readlink(existing[0])}" if existing[0].is_symlink() else "already exists"
        raise ConfigError(
            f"{existing[0]} {what}",
            hint="choose a new name (rotate keys by bumping the number: NAME-2) or remove the old files",
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    nix.generate_cache_key(name, secret, public)
    secret.chmod(0o600)
    return secret, public


def _read_key_file(path: Path, what: str) -> str:
    """The text of a key file through the bounded reader: a binary file, ``/dev/zero``, a
    FIFO or a huge file is an error naming the file, never a traceback or a hang."""
    try:
        return _files.read_text(path, limit=_KEY_FILE_LIMIT).strip()
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} does not exist", hint=_KEY_HINT) from None
    except _files.UnreadableFile as exc:
        raise ConfigError(f"{what} {path} {exc.reason}", hint=_KEY_HINT) from None


def _shown(value: str) -> str:
    """How a ``--trusted-key`` value appears in a message: a path as given, key material
    never (only its name before the colon)."""
    if ":" in value and not Path(value).exists():
        return f"the key {value.split(':', 1)[0][:40]!r}:... (given literally)"
    return repr(value[:200])


def read_public_key(value: str) -> str:
    """A trusted key as Nix wants it (``NAME:base64``), given literally or as a ``.pub`` file.

    Messages name the file or the key's name, never the key itself: a secret key passed by
    mistake must not end up in a terminal, a CI log or a bug report."""
    text = value.strip()
    source = None
    if _PUBLIC_KEY.fullmatch(text) is None and _SECRET_KEY.fullmatch(text) is None and (Path(value).exists() or Path(value).is_symlink()):
        source = Path(value)
        text = _read_key_file(source, "--trusted-key")
    if _SECRET_KEY.fullmatch(text):
        where = str(source) if source else f"the --trusted-key value (key {text.split(':', 1)[0]!r})"
        raise ConfigError(f"{where} is a secret key", hint="pass the .pub file; the .sec file only signs (cache push --secret-key); "
                          "if the secret key was shown to anyone, make a new key pair")
    if _PUBLIC_KEY.fullmatch(text) is None:
        where = str(source) if source else _shown(value)
        raise ConfigError(
            f"{where} is not a public key",
            hint="pass NAME.pub as written by `kernel-builder cache key`, or its contents (NAME:base64)",
        )
    return text


def cache_url(value: str, *, must_exist: bool = False) -> str:
    """A Nix store URL; a bare directory path becomes ``file://`` + its absolute path.

    ``must_exist`` (reading, as `build --cache` does): a ``file://`` cache must be a directory
    that `cache push` wrote, since Nix would silently create an empty one (a typo then reads
    as "nothing cached"). Pushing creates it."""
    if "://" in value and not value.startswith(_SCHEMES):
        raise ConfigError(
            f"unsupported cache URL {value!r}",
            hint="use file:///DIR, https://HOST (read-only), s3://BUCKET?region=R or ssh://HOST",
        )
    url = value if value.startswith(_SCHEMES) else "file://" + str(Path(value).resolve())
    if must_exist and url.startswith("file://"):
        directory = Path(url[len("file://"):].split("?", 1)[0])
        if not (directory / "nix-cache-info").is_file():
            what = "does not exist" if not directory.exists() else "is not a binary cache (no nix-cache-info)"
            raise ConfigError(
                f"--cache {value}: {directory} {what}",
                hint="check the path; a file:// cache is a directory `kernel-builder cache push --to DIR` wrote",
            )
    return url


@attrs.frozen
class CacheCheck:
    """What the caches hold for the selected variants, before a build."""

    fetchable: dict[str, str]  # variant -> cache URL that has it, trusted
    refused: dict[str, tuple[str, tuple[str, ...], str]]  # variant -> (cache URL, key names it is signed with, out path)
    modified: frozenset[str] = frozenset()  # refused paths whose NAR does not match their narinfo


def check_cache(
    found: Mapping[str, Mapping[str, Sequence[str]]],
    untrusted: Mapping[str, Sequence[str]],
    outputs: Mapping[str, str],
) -> CacheCheck:
    """Sort variants by what the caches hold: ``found`` is URL -> {path: signing key names}
    (``nix.cache_path_info``), ``untrusted`` URL -> paths without a trusted signature
    (``nix.untrusted_paths``), ``outputs`` variant -> out path. A variant one cache serves
    trusted is fetchable even if another holds it untrusted."""
    fetchable: dict[str, str] = {}
    refused: dict[str, tuple[str, tuple[str, ...], str]] = {}
    for variant, path in outputs.items():
        for url, paths in found.items():
            if path not in paths:
                continue
            if path in untrusted.get(url, ()):
                refused.setdefault(variant, (url, tuple(paths[path]), path))
            else:
                fetchable.setdefault(variant, url)
    return CacheCheck(fetchable, {v: r for v, r in refused.items() if v not in fetchable})


def refusal(check: CacheCheck, trusted_keys: Sequence[str]) -> BuildError:
    """The error for variants a cache holds without a trusted signature, each with its cause
    (unsigned, an untrusted key, an entry changed after signing, a signature that does not
    verify: see ``narinfo.refusal_reason``)."""
    trusted = _key_names(trusted_keys)
    lines = [f"  {variant}: {url} {refusal_reason(signers, trusted, modified=path in check.modified)}"
             for variant, (url, signers, path) in sorted(check.refused.items())]
    return BuildError(
        f"refusing cached variant(s) without a trusted signature (trusted keys: {', '.join(trusted) or 'none'}):\n"
        + "\n".join(lines),
        hint="a key you do not trust: pass the cache's public key with --trusted-key NAME.pub if you got it from "
        "the cache's owner; a changed or unsigned entry: push it again with `kernel-builder cache push --secret-key`; "
        "a signature that does not verify: do not use that cache entry",
    )


def _key_names(keys: Sequence[str]) -> list[str]:
    """The names of ``NAME:base64`` public keys, as narinfo signatures carry them."""
    return [key.split(":", 1)[0] for key in keys]


def secret_key_name(path: Path) -> str:
    """The key name in a secret key file; ``ConfigError`` (naming the file, never its
    content) when the file is not one."""
    text = _read_key_file(path, "--secret-key")
    if _SECRET_KEY.fullmatch(text) is None:
        raise ConfigError(
            f"{path} is not a secret signing key",
            hint="pass NAME.sec as written by `kernel-builder cache key NAME --out DIR` (the .pub file only verifies)",
        )
    return text.split(":", 1)[0]


def query_caches(
    installables: Sequence[str], flake_args: Sequence[str], urls: Sequence[str], keys: Sequence[str]
) -> tuple[CacheCheck, bool]:
    """Ask the caches about the variants' outputs before a build: ``(check, toolchain_cached)``;
    the flag says whether every toolchain output of the variants left to build is in this
    store or, trusted, in a cache (then no pinned artifact needs fetching)."""
    drvs = nix.derivations(installables, flake_args=flake_args)
    outputs = {d["env"]["variant"]: d["outputs"]["out"]["path"] for d in drvs.values() if "variant" in d.get("env", {})}
    found = {url: nix.cache_path_info(url, sorted(outputs.values())) for url in urls}
    untrusted = {url: nix.untrusted_paths(url, sorted(paths), keys) for url, paths in found.items()}
    check = check_cache(found, untrusted, outputs)
    fetchable = {}
    for variant, url in check.fetchable.items():
        nar = missing_nar(url, outputs[variant])
        if nar is None:
            fetchable[variant] = url
        else:
            log.warning(f"{url} lists {outputs[variant]} ({variant}) but its NAR {nar} is missing: building it instead; "
                        "push the variant again with `kernel-builder cache push`")
    trusted = set(_key_names(keys))
    suspect: dict[str, list[str]] = {}  # signed by a trusted name yet untrusted: changed, or forged?
    for url, signers, path in check.refused.values():
        if trusted & set(signers):
            suspect.setdefault(url, []).append(path)
    modified = frozenset(p for url, paths in suspect.items() for p in nix.modified_paths(url, paths))
    check = attrs.evolve(check, fetchable=fetchable, modified=modified)
    left = [d for d in drvs.values() if d.get("env", {}).get("variant") not in check.fetchable]
    inputs = sorted({i for d in left for i in d.get("inputDrvs", {})})
    missing = set(nix.invalid_paths(nix.derivation_outputs(inputs)))
    for url in urls:
        if not missing:
            break
        held = nix.cache_path_info(url, sorted(missing))
        missing -= set(held) - set(nix.untrusted_paths(url, sorted(held), keys))
    return check, not missing


def cache_settings(caches: Sequence[str], trusted_keys: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(cache URLs, public keys)`` from ``--cache``/``--trusted-key``; a cache without a key is
    an error, since Nix would refuse every path in it."""
    if caches and not trusted_keys:
        raise ConfigError(
            "--cache needs --trusted-key: Nix only substitutes paths signed by a trusted key",
            hint="pass the cache's public key, e.g. --trusted-key keys/team-cache-1.pub (from `kernel-builder cache key`)",
        )
    return tuple(cache_url(c, must_exist=True) for c in caches), tuple(read_public_key(k) for k in trusted_keys)
