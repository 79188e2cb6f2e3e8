"""``kernel-builder toolchain``: discover and set up the host toolchains Nix builds use."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kernel_builder.cli import output
from kernel_builder.errors import ConfigError

__all__ = ["toolchain"]


@click.group("toolchain")
def toolchain() -> None:
    """Manage the toolchains that Nix variant builds use.

    \b
    Pinned (the default for builds): every Debian package and wheel of the pinned build
    sets is listed with its sha256 in nix/toolchain-lock.json; `fetch` puts them into the
    Nix store, `lock` regenerates the file. Builds then run in the Nix sandbox.
    Host (`build --toolchain host`): this machine's compilers and Python environments,
    found by `discover` (or created by `setup`) and recorded with their identities in
    toolchains.json in the state directory ($KERNEL_BUILDER_STATE_DIR, default
    ~/.local/state/kernel-builder). Not hermetic.
    """


@toolchain.command("fetch")
@click.option("--build-set", "build_sets", multiple=True, metavar="KEY", help="Fetch only what this pinned build set needs (e.g. torch2.13-cpu); repeatable. Default: every pinned build set.")
@click.option("--system", metavar="SYSTEM", help="Fetch the toolchains of this Nix system: the lock's own (x86_64-linux) or a "
              "native host of requests.hosts (aarch64-linux). Default: this machine's, where the lock pins it natively.")
@click.option("--json", "as_json", is_flag=True, help="Print what was added and what was already there as JSON on stdout.")
def fetch_cmd(build_sets: tuple[str, ...], system: str | None, as_json: bool) -> None:
    """Seed the Nix store with the pinned toolchain artifacts (offline-capable).

    \b
    Each .deb is downloaded with `apt-get download`, each wheel with `pip download`,
    checked against the sha256 in nix/toolchain-lock.json, and added with
    `nix-store --add-fixed sha256`: the same store path the lock's fixed-output
    derivation (builtin:fetchurl of its public URL) has, so Nix never downloads it.
    Artifacts already in the store are skipped; a hash mismatch is refused and nothing
    is added for that artifact.
    Examples:
      kernel-builder toolchain fetch
      kernel-builder toolchain fetch --build-set torch2.13-cpu
      kernel-builder toolchain fetch --system aarch64-linux --build-set torch2.13-cpu
    A wheel that several environments use is one artifact, fetched and stored once.
    On an aarch64-linux machine the default is its native toolchains (arm64 .debs and
    aarch64 wheels); `--system` fetches another machine's, e.g. to build them under
    emulation or to serve them from a binary cache.
    """
    from kernel_builder.toolchain.pinned.fetch import fetch  # lazy: for the work, not for --help
    from kernel_builder.toolchain.pinned.lockfile import load_lock  # lazy: as above
    from kernel_builder.state import writable_state_dir  # lazy: as above

    writable_state_dir()  # temporary downloads and the fetch lock live there
    from kernel_builder.variants.buildsets import current_system  # lazy: as above

    lock = load_lock()
    system = system or lock.native_system(current_system())
    lock.artifacts_for(list(build_sets) or None, system)  # unknown systems and build sets fail before anything is downloaded
    report = fetch(lock, list(build_sets) or None, on_progress=output.progress_bar("fetch"), system=system)
    if as_json:
        output.result_json({"added": list(report.added), "added_bytes": report.added_bytes, "present": list(report.present),
                            "seconds": round(report.seconds, 2)})
    output.note(f"{len(report.added)} artifact(s) added ({report.added_bytes / 1e9:.2f} GB downloaded), "
                f"{len(report.present)} already in the store ({report.seconds:.1f}s)")


@toolchain.command("gc")
@click.option("--dry-run", is_flag=True, help="Only list the roots that would be released.")
def gc_cmd(dry_run: bool) -> None:
    """Release the GC roots of toolchain artifacts that the current lock does not reference.

    \b
    `toolchain fetch` roots every artifact it puts into the Nix store (so `nix-store --gc`
    keeps them and offline builds keep working), in roots directories in the state
    directory. This releases each root whose artifact the current toolchain lock
    (nix/toolchain-lock.json, or $KERNEL_BUILDER_TOOLCHAIN_LOCK) does not reference, and
    removes the directories left empty; `nix-store --gc` then frees those artifacts. A root
    of an artifact the current lock uses is never released, and a missing or invalid lock
    is an error before anything is removed.
    Example:
      kernel-builder toolchain gc && nix-store --gc
    """
    from kernel_builder.toolchain.pinned.lockrequests import lock_path  # lazy: only gc needs them
    from kernel_builder.toolchain.pinned.roots import release, stale_roots  # lazy: as above

    stale = stale_roots(lock_path())
    verb = "would release" if dry_run else "released"
    for directory in stale.directories:
        output.note(f"{'would remove' if dry_run else 'removed'} {directory}")
    for link in stale.links:
        output.note(f"{verb} {link}")
    if not dry_run:
        release(stale)
    count = len(stale.directories) + len(stale.links)
    output.note(
        f"{len(stale.links)} root(s) and {len(stale.directories)} roots director{'y' if len(stale.directories) == 1 else 'ies'} "
        f"of artifacts the current lock does not reference; {stale.kept} root(s) of artifacts it references kept"
        + ("" if dry_run or not count else "; run `nix-store --gc` to free the released artifacts")
    )


@toolchain.command("lock")
@click.option("--lock-file", type=click.Path(dir_okay=False, path_type=Path), help="The lock to regenerate (default: kernel-builder's nix/toolchain-lock.json).")
@click.option("--upgrade-debs", is_flag=True, help="Take each Debian package's current candidate instead of the version the lock pins.")
@click.option("--upgrade-wheels", is_flag=True, help="Take the newest wheels the requests allow instead of keeping the versions the lock pins.")
@click.option("--group", "only_groups", multiple=True, metavar="NAME",
              help="Resolve only this group of the lock (a Debian group such as rust, env:torch2.15, check:tvm-ffi, "
              "test:pytest, cpp:cutlass-4.2; a native host's as aarch64-linux/runtime, aarch64-linux/env:torch2.13) "
              "and keep every other group as it is; repeatable.")
def lock_cmd(lock_file: Path | None, upgrade_debs: bool, upgrade_wheels: bool, only_groups: tuple[str, ...]) -> None:
    """Regenerate the toolchain lock from its requests (for maintainers).

    \b
    Resolves the `requests` of the lock with the ordinary clients: `apt-cache show` and
    `apt-get download --print-uris` for the Debian packages (run `apt-get update` first),
    `pip install --dry-run --report` for each Python environment (CPython 3.11,
    manylinux_2_28 x86_64 wheels), and rewrites every artifact's version, file, sha256
    and public URL. A native host of `requests.hosts` (aarch64-linux) is resolved for its
    machine (arm64 .debs, aarch64 wheels) into `<system>/<group>` groups. Debian packages keep the version the lock pins unless
    `--upgrade-debs` (an upgrade rebuilds every toolchain). Wheels keep the version the
    lock pins too where the requests allow it (a new environment takes the versions the
    lock already has), unless `--upgrade-wheels`: adding one environment, or a new PyPI
    release of a dependency, rebuilds no other toolchain. `--group NAME` resolves only
    the named groups (seconds for a Debian group, where a whole relock takes many minutes)
    and keeps the others as the lock has them. Then run `toolchain fetch`.
    Examples:
      kernel-builder toolchain lock && git diff --stat nix/toolchain-lock.json
      kernel-builder toolchain lock --group rust    # after adding requests.debian.groups.rust
      kernel-builder toolchain lock --group aarch64-linux/env:torch2.15   # a host's environment
    """
    from kernel_builder.toolchain.pinned.locking import relock  # lazy: for the work, not for --help

    data = relock(lock_file, upgrade_debs=upgrade_debs, upgrade_wheels=upgrade_wheels, only_groups=only_groups)
    output.note(f"locked {len(data['artifacts'])} artifact(s) in {len(data['groups'])} group(s)")


@toolchain.command("discover")
@click.option("--python", "pythons", multiple=True, metavar="PATH", help="Also probe this Python (a venv with torch); repeatable, first wins.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole record as JSON on stdout.")
def discover_cmd(pythons: tuple[str, ...], as_json: bool) -> None:
    """Find torch environments, nvcc and the compiler, and record them.

    \b
    Candidates: --python paths, environments under <state>/envs/, and the Python that
    runs kernel-builder. A torch X.Y serves build set torchX.Y-cpu; a CUDA torch also
    serves torchX.Y-cudaM.N when nvcc is CUDA M.N.
    Example:
      kernel-builder toolchain discover --python /work/toolchains/torch214/bin/python
    """
    from kernel_builder.toolchain.host.discover import discover, load_toolchains, write_toolchains  # lazy: for the work, not for --help
    from kernel_builder.toolchain.host.record import to_json  # lazy: as above

    previous = load_toolchains()
    known = previous.environments if previous else ()
    record = discover([*pythons, *[env.python for env in known if Path(env.python).exists()]])
    path = write_toolchains(record)
    if as_json:
        output.result(json.dumps(to_json(record), indent=2, sort_keys=True))
    for key, entry in sorted(record.build_sets.items()):
        output.note(f"{key}: {entry.python} (torch {entry.torch_version})")
    cuda = record.cuda
    output.note(f"nvcc: {cuda.nvcc} (CUDA {cuda.version})" if cuda else "nvcc: not found")
    output.note(f"compiler: {record.compiler.version or 'not found'}")
    output.note(f"recorded {len(record.build_sets)} build set(s) in {path} (host toolchain, not hermetic)")


@toolchain.command("setup")
@click.option("--only", "only", multiple=True, metavar="NAME", help="Set up only this environment (torch212 ... torch215: one per torch pin of the lock); repeatable.")
@click.option("--reuse", "reuse", multiple=True, metavar="PATH", help="Use this existing Python instead of creating an env with the same torch.")
@click.option("--dry-run", is_flag=True, help="Print what would be done and change nothing.")
def setup_cmd(only: tuple[str, ...], reuse: tuple[str, ...], dry_run: bool) -> None:
    """Create the Python environments for the build sets this machine can build.

    \b
    One per torch pin of the toolchain lock, e.g.
    torch212:     torch 2.12.1 (CUDA 13.0 wheel, ~5.4 GB) for torch2.12-cpu and torch2.12-cuda13.0
    torch214:     torch 2.14.1 (CUDA 13.0 wheel, ~5.4 GB) for torch2.14-cpu and torch2.14-cuda13.0
    torch215:     torch 2.15.0 (CUDA 13.2 wheel) for torch2.15-cpu and torch2.15-cuda13.2
    Each gets cmake>=3.26 and ninja. Environments live in <state>/envs/ and are recorded
    by a discovery run at the end.
    Example:
      kernel-builder toolchain setup --reuse .venv/bin/python
    """
    from kernel_builder.toolchain.host.discover import discover, write_toolchains  # lazy: for the work, not for --help
    from kernel_builder.toolchain.host.setup import create_env, default_envs, plan  # lazy: as above

    known = default_envs()

    specs = [s for s in known if not only or s.name in only]
    unknown = set(only) - {s.name for s in known}
    if unknown:
        raise ConfigError(f"unknown environment(s): {', '.join(sorted(unknown))}", hint="choose from " + ", ".join(s.name for s in known))
    steps = plan(specs, reuse=[str(Path(p).absolute()) for p in reuse])
    pythons: list[str] = []
    for spec, action, python in steps:
        output.note(f"{spec.name}: {action} {python} (torch {spec.torch}; serves {', '.join(spec.serves)})")
        if dry_run:
            continue
        if action == "create":
            output.note(f"{spec.name}: installing {' '.join(spec.requirements())} ...")
            python = create_env(spec)
        pythons.append(python)
    if dry_run:
        return
    record = discover(pythons)
    path = write_toolchains(record)
    output.note(f"recorded {len(record.build_sets)} build set(s) in {path}")
