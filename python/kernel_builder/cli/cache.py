"""``kernel-builder cache``: signing keys and pushing built variants to a Nix binary cache."""

from __future__ import annotations

import time
from pathlib import Path

import click

from kernel_builder.cli import output
from kernel_builder.errors import BuildError

__all__ = ["cache"]


@click.group("cache")
def cache() -> None:
    """Share built variants through a signed Nix binary cache (see docs/scale-out.md).

    \b
    `key` makes a signing key pair, `push` signs and uploads built variants and the
    toolchain they were built with; `kernel-builder build --cache URL --trusted-key
    NAME.pub` then fetches what the cache has and builds only the rest. Caches are Nix
    store URLs: file:///DIR (offline), s3://BUCKET?region=R, ssh://HOST; an https://
    cache is read-only (serve a file:// or s3:// cache over HTTP).
    """


@cache.command("key")
@click.argument("name")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=".", show_default=True,
              help="Directory for NAME.sec (secret, mode 600) and NAME.pub.")
def key_cmd(name: str, out_dir: Path) -> None:
    """Make a signing key pair NAME: OUT/NAME.sec signs pushes, OUT/NAME.pub verifies.

    \b
    Keep NAME.sec secret (a CI secret); give NAME.pub to everyone who builds with the
    cache. Put a number in NAME so that keys can be rotated (team-cache-1, then
    team-cache-2). Existing files are never overwritten.
    Examples:
      kernel-builder cache key team-cache-1 --out keys
      kernel-builder build . --cache file:///srv/cache --trusted-key keys/team-cache-1.pub
    """
    from kernel_builder.flake.cache import make_key_pair  # lazy: as in push

    secret, public = make_key_pair(name, out_dir)
    output.note(f"secret key: {secret}")
    output.note(f"public key: {public}")
    output.result(public.read_text().strip())


@cache.command("push")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--to", "url", required=True, metavar="URL", help="The cache: file:///DIR (or a directory), s3://BUCKET?region=R, ssh://HOST.")
@click.option("--secret-key", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path), help="NAME.sec from `kernel-builder cache key`.")
@click.option("--variant", "variants", multiple=True, metavar="NAME", help="Push only this variant (repeatable).")
@click.option("--backend", "backends", multiple=True, metavar="NAME", help="Push only variants of this backend (repeatable).")
@click.option("--variants-only", is_flag=True, help="Push the variant outputs without their toolchain closure (enough for machines that only fetch, not for ones that build).")
@click.option("--objects", is_flag=True, help="Also push each variant's per-object parts (plan, one object per source, link), "
              "so a store that trusts the key rebuilds only the objects of the sources a change touched.")
@click.option("--json", "as_json", is_flag=True, help="Print what was pushed as JSON on stdout.")
def push_cmd(directory: Path, url: str, secret_key: Path, variants: tuple[str, ...], backends: tuple[str, ...],
             variants_only: bool, objects: bool, as_json: bool) -> None:
    """Sign and push the built variants of the kernel in DIRECTORY, with their toolchain.

    \b
    Pushes each selected variant's output from this machine's Nix store (build it first
    with `kernel-builder build`), and the closure of everything its derivation is built
    from: the pinned toolchain (runtime, compiler, Python, torch environment) and the
    sources. A store that trusts the key then fetches an unchanged variant instead of
    building it, and builds a changed one without building a toolchain. Paths already in
    the cache are skipped, so pushing again is cheap. With --objects, a variant built per
    translation unit also pushes its plan, objects and link (those this store holds):
    then a one-file change fetches the other objects and compiles one.
    Examples:
      kernel-builder cache push examples/relu --to file:///srv/cache --secret-key keys/team-cache-1.sec
      kernel-builder cache push . --to 's3://kernels-cache?region=eu-west-1' --secret-key $CACHE_KEY_FILE
      kernel-builder cache push . --to /srv/cache --secret-key keys/team-cache-1.sec --variant torch213-cxx11-cpu-x86_64-linux
      kernel-builder cache push . --to /srv/cache --secret-key keys/team-cache-1.sec --objects
    """
    from kernel_builder import nix  # lazy: the nix driver and flake modules are cache-only
    from kernel_builder.flake.cache import cache_url, secret_key_name  # lazy: as nix
    from kernel_builder.flake.kernel import Kernel  # lazy: as nix
    from kernel_builder.flake.flake_build import open_kernel_flake  # lazy: as nix
    from kernel_builder.flake.selection import select_variants  # lazy: as nix

    kernel = Kernel.read(directory.resolve())  # the one read of build.toml
    target = cache_url(url)
    key_name = secret_key_name(secret_key)
    flake = open_kernel_flake(kernel)
    selected, _ = select_variants(flake.table, variants, backends)
    drvs = nix.derivations(list(flake.installables(selected).values()), flake_args=flake.prepared.flake_args)
    outputs = {d["env"]["variant"]: (drv, d["outputs"]["out"]["path"]) for drv, d in drvs.items() if "variant" in d.get("env", {})}
    absent = set(nix.invalid_paths([out for _, out in outputs.values()]))
    missing = sorted(v for v, (_, out) in outputs.items() if out in absent)
    ready = {v: item for v, item in outputs.items() if v not in missing}
    for name in missing:
        output.note(f"skip {name}: not built on this machine")
    if not ready:
        raise BuildError(
            "none of the selected variants is built on this machine",
            hint=f"run `kernel-builder build {directory}` first (the cache gets what this store holds)",
        )
    outs = {out for _, out in ready.values()}
    parts = _held_parts([drv for drv, _ in ready.values()], sorted(ready)) if objects else []
    closure = set() if variants_only else set(nix.input_closure({drv: drvs[drv] for drv, _ in ready.values()}))
    others = closure - outs - set(parts)
    paths = sorted(outs | set(parts) | others)
    output.note(f"pushing {len(ready)} variant(s), {len(parts)} per-object part(s) and {len(others)} "
                f"toolchain/source path(s) to {target}, signed with {key_name}")
    start = time.monotonic()
    nix.copy_to_cache(target, paths, secret_key.resolve())
    seconds = time.monotonic() - start
    if as_json:
        output.result_json({"cache": target, "key": key_name, "variants": {v: out for v, (_, out) in sorted(ready.items())},
                            "skipped": missing, "parts": parts, "paths": len(paths), "seconds": round(seconds, 2)})
    output.note(f"pushed {', '.join(sorted(ready))} ({len(paths)} store paths, {seconds:.1f}s)")


def _held_parts(drvs: list[str], variants: list[str]) -> list[str]:
    """Outputs of the variants' plans, objects and links that this store holds (a variant
    fetched from a cache, or built monolithically, has none here; nothing to push then)."""
    from kernel_builder import nix  # lazy: as in push

    outputs = nix.derivation_outputs(nix.per_object_parts(drvs, variants))
    absent = set(nix.invalid_paths(outputs))
    return sorted(out for out in outputs if out not in absent)
