"""Store and binary-cache queries: derivations and their closures, which paths a store or a
cache holds, and copying to a signed cache."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kernel_builder import _children
from kernel_builder.nix.events import _ANSI
from kernel_builder.nix.runner import nix_argv, nix_env, run_nix
from kernel_builder.nix.steps import part_owner

__all__ = [
    "cache_path_info",
    "copy_to_cache",
    "derivation_outputs",
    "derivations",
    "generate_cache_key",
    "input_closure",
    "invalid_paths",
    "modified_paths",
    "per_object_parts",
    "untrusted_paths",
]


def generate_cache_key(name: str, secret: Path, public: Path) -> None:
    """``nix-store --generate-binary-cache-key``: an ed25519 pair, the public half is ``NAME:base64``."""
    run_nix(["--generate-binary-cache-key", name, str(secret), str(public)], program="nix-store")


def derivations(installables: Sequence[str], *, flake_args: Sequence[str] = (), cwd: str | None = None) -> dict[str, Any]:
    """``nix show-derivation`` of the installables: drv path -> its JSON (outputs, inputs, env)."""
    done = run_nix(["show-derivation", *flake_args, *installables], cwd=cwd)
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    return data


def input_closure(drvs: dict[str, Any]) -> list[str]:
    """Everything a store needs to build these derivations without building anything else:
    the closure of their input sources and of their input derivations' outputs (the
    toolchain). It is what Nix copies to a remote builder; the fetched artifacts the
    toolchain was made from are not part of it. Inputs this store lacks (a variant that
    was fetched, not built, here) are left out."""
    roots = sorted({src for d in drvs.values() for src in d.get("inputSrcs", [])})
    inputs = sorted({drv for d in drvs.values() for drv in d.get("inputDrvs", {})})
    roots += derivation_outputs(inputs)
    absent = set(invalid_paths(roots))
    roots = [root for root in roots if root not in absent]
    if not roots:
        return []
    return sorted(set(run_nix(["-qR", *roots], program="nix-store").stdout.split()))


def per_object_parts(drvs: Sequence[str], keys: Sequence[str]) -> list[str]:
    """The .drv files of the plan, objects and link of these variant derivations (of the
    variants named by ``keys``; see ``part_owner``), from their derivation closure: what
    `cache push --objects` pushes the outputs of. A monolithic variant has none."""
    if not drvs:
        return []
    closure = run_nix(["-qR", *drvs], program="nix-store").stdout.split()
    return sorted(p for p in closure if p.endswith(".drv") and part_owner(p, keys))


def derivation_outputs(drvs: Sequence[str]) -> list[str]:
    """The output paths of these .drv files (``nix-store -q --outputs``), valid or not."""
    if not drvs:
        return []
    return run_nix(["-q", "--outputs", *drvs], program="nix-store").stdout.split()


def copy_to_cache(url: str, paths: Sequence[str], secret_key: Path) -> subprocess.CompletedProcess[str]:
    """``nix copy`` the paths (with their closures) to a binary cache, signing each with the key."""
    sep = "&" if "?" in url else "?"
    target = f"{url}{sep}secret-key={quote(str(secret_key), safe='/')}"  # Nix percent-decodes query values
    if url.startswith("file://") and "compression=" not in url:
        target += "&compression=zstd"
    return run_nix(
        ["copy", "--to", target, *paths],
        hint="check the cache URL (file:///DIR, s3://BUCKET?region=..., ssh://HOST) and that the secret key file is readable",
    )


def cache_path_info(url: str, paths: Sequence[str]) -> dict[str, list[str]]:
    """Which of the paths the cache has, with the names of the keys they are signed with:
    ``{path: [key name, ...]}`` (an unsigned path maps to ``[]``; missing ones are absent)."""
    if not paths:
        return {}
    done = run_nix(["path-info", "--json", "--store", url, *paths],
                   hint="check the cache URL; a file:// cache is a directory `cache push` wrote")
    found: dict[str, list[str]] = {}
    for item in json.loads(done.stdout):
        if item.get("valid", True):
            found[item["path"]] = sorted({sig.split(":", 1)[0] for sig in item.get("signatures", [])})
    return found


def untrusted_paths(url: str, paths: Sequence[str], trusted_keys: Sequence[str]) -> list[str]:
    """The paths (all in the cache) that carry no valid signature by any of ``trusted_keys``."""
    if not paths:
        return []
    argv = nix_argv("store", "verify", "--no-contents", "--store", url,
                    "--option", "trusted-public-keys", " ".join(trusted_keys), *paths)
    done = _children.run(argv, env=nix_env())
    return sorted(set(re.findall(r"path '(/nix/store/[^']+)' is untrusted", _ANSI.sub("", done.stderr))))


def modified_paths(url: str, paths: Sequence[str]) -> list[str]:
    """The paths (all in the cache) whose NAR does not match the NarHash of their narinfo
    (``nix store verify`` of the contents, signatures left out)."""
    if not paths:
        return []
    done = _children.run(nix_argv("store", "verify", "--no-trust", "--store", url, *paths), env=nix_env())
    return sorted(set(re.findall(r"path '(/nix/store/[^']+)' was modified!", _ANSI.sub("", done.stderr))))


def invalid_paths(paths: Sequence[str]) -> list[str]:
    """The paths this store does not hold (``nix-store --check-validity --print-invalid``)."""
    if not paths:
        return []
    return run_nix(["--check-validity", "--print-invalid", *paths], program="nix-store").stdout.split()
