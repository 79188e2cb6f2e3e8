"""``kernel-builder toolchain``: discover and set up the host toolchains Nix builds use."""

from __future__ import annotations

import json
from pathlib import Path

import click

__all__ = ["toolchain"]


@click.group("toolchain")
def toolchain() -> None:
    """Discover or set up the host toolchains that Nix variant builds use.

    The host toolchain is not hermetic: variants are compiled with this machine's C++
    compiler, nvcc and Python environments (one torch each). Their identities (torch
    version and install hash, compiler, nvcc, cmake, ninja versions) are recorded in
    toolchains.json in the state directory ($KERNEL_BUILDER_STATE_DIR, default
    ~/.local/state/kernel-builder) and go into every variant derivation, so a change
    rebuilds exactly the variants it affects.
    """


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
    from kernel_builder.toolchain import discover, load_toolchains, write_toolchains

    previous = load_toolchains()
    extra = [*pythons, *[env["python"] for env in (previous or {}).get("environments", []) if Path(env["python"]).exists()]]
    record = discover(extra)
    path = write_toolchains(record)
    if as_json:
        click.echo(json.dumps(record, indent=2, sort_keys=True))
    for key, entry in sorted(record["build-sets"].items()):
        click.echo(f"{key}: {entry['python']} (torch {entry['torch-version']})", err=True)
    cuda = record.get("cuda")
    click.echo(f"nvcc: {cuda['nvcc']} (CUDA {cuda['version']})" if cuda else "nvcc: not found", err=True)
    click.echo(f"compiler: {record['compiler']['version'] or 'not found'}", err=True)
    click.echo(f"recorded {len(record['build-sets'])} build set(s) in {path} (host toolchain, not hermetic)", err=True)


@toolchain.command("setup")
@click.option("--only", "only", multiple=True, metavar="NAME", help="Set up only this environment (torch213-cpu, torch214); repeatable.")
@click.option("--reuse", "reuse", multiple=True, metavar="PATH", help="Use this existing Python instead of creating an env with the same torch.")
@click.option("--dry-run", is_flag=True, help="Print what would be done and change nothing.")
def setup_cmd(only: tuple[str, ...], reuse: tuple[str, ...], dry_run: bool) -> None:
    """Create the Python environments for the build sets this machine can build.

    \b
    torch213-cpu: torch 2.13.0 (CPU wheel) for torch2.13-cpu
    torch214:     torch 2.14.1 (CUDA 13.0 wheel, ~5.4 GB) for torch2.14-cpu and torch2.14-cuda13.0
    Each gets cmake>=3.26 and ninja. Environments live in <state>/envs/ and are recorded
    by a discovery run at the end.
    Example:
      kernel-builder toolchain setup --reuse .venv/bin/python
    """
    from kernel_builder.errors import ConfigError
    from kernel_builder.toolchain import discover, write_toolchains
    from kernel_builder.toolchain.setup import DEFAULT_ENVS, create_env, plan

    specs = [s for s in DEFAULT_ENVS if not only or s.name in only]
    unknown = set(only) - {s.name for s in DEFAULT_ENVS}
    if unknown:
        raise ConfigError(f"unknown environment(s): {', '.join(sorted(unknown))}", hint="choose from " + ", ".join(s.name for s in DEFAULT_ENVS))
    steps = plan(specs, reuse=[str(Path(p).absolute()) for p in reuse])
    pythons: list[str] = []
    for spec, action, python in steps:
        click.echo(f"{spec.name}: {action} {python} (torch {spec.torch}; serves {', '.join(spec.serves)})", err=True)
        if dry_run:
            continue
        if action == "create":
            click.echo(f"{spec.name}: installing {' '.join(spec.requirements())} ...", err=True)
            python = create_env(spec)
        pythons.append(python)
    if dry_run:
        return
    record = discover(pythons)
    path = write_toolchains(record)
    click.echo(f"recorded {len(record['build-sets'])} build set(s) in {path}", err=True)
