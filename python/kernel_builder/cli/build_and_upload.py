"""``kernel-builder build-and-upload``: ``build`` then ``upload`` of the same directory.

Upstream's command of that name, and the flake app ``nix run .#build-and-upload``: the
variants are built into DIR/build exactly as ``build`` builds them, then DIR is published
exactly as ``upload`` publishes it (repo id from build.toml's [general.hub] or --repo-id).
Nothing is uploaded when the build fails. Only the variants this run built are uploaded: a
variant that build/ holds from an earlier build (older source, another --variant) is named
and left out, never published as if it were part of this build.
"""

from __future__ import annotations

from pathlib import Path

import click

from kernel_builder.cli import output
from kernel_builder.cli.build import build
from kernel_builder.cli.upload import upload

__all__ = ["build_and_upload"]


@click.command("build-and-upload")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--repo-id", metavar="ORG/NAME", help="Repository to publish to (default: [general.hub] repo-id).")
@click.option("--branch", metavar="BRANCH", help="Branch for the variants (default: [general.hub] branch, else v<version>).")
@click.option("--variant", "variants", multiple=True, metavar="NAME", help="Build and upload only this variant (repeatable).")
@click.option("--backend", "backends", multiple=True, metavar="NAME", help="Only variants of this backend (repeatable).")
@click.option("-j", "--max-jobs", "max_jobs", type=click.IntRange(min=0), help="Variants built at once (as for build).")
@click.option("--cores", type=click.IntRange(min=1), help="Compile jobs each variant build may use.")
@click.option("-L", "--print-build-logs", "print_build_logs", is_flag=True, help="Stream every variant's build log to stderr.")
@click.option("--toolchain", type=click.Choice(["pinned", "host"]), default="pinned", show_default=True, help="As for build.")
@click.option("--layout", "build_layout", type=click.Choice(["files", "zip"]), help="The variants' build layout (as for build; default: build.toml's).")
@click.option("--create-pr", is_flag=True, help="Open pull requests instead of committing to the branches directly.")
@click.option("--sign", is_flag=True, help="Sign each variant's metadata.json with Sigstore before uploading (as for upload).")
@click.option(
    "--trust-config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG",
    metavar="PATH",
    help="With --sign: a private Sigstore's client trust configuration (as for upload).",
)
@click.pass_context
def build_and_upload(
    ctx: click.Context, directory: Path, repo_id: str | None, branch: str | None, variants: tuple[str, ...],
    backends: tuple[str, ...], max_jobs: int | None, cores: int | None, print_build_logs: bool, toolchain: str,
    create_pr: bool, sign: bool = False, trust_config: Path | None = None, build_layout: str | None = None,
) -> None:
    """Build the variants of the kernel in DIRECTORY into DIRECTORY/build, then upload them.

    \b
    The same as `kernel-builder build DIR` followed by `kernel-builder upload DIR
    --variant V...` for the variants this run built: others that DIR/build holds from
    earlier builds are named and not uploaded.
    Examples:
      kernel-builder build-and-upload .
      kernel-builder build-and-upload . --backend cpu --repo-id my-org/my-kernel
      kernel-builder build-and-upload . --sign      # in CI: sign, then upload
    """
    built = ctx.invoke(
        build, directory=directory, variants=variants, backends=backends, max_jobs=max_jobs, cores=cores,
        print_build_logs=print_build_logs, toolchain=toolchain, build_layout=build_layout,
    )
    build_dir = directory / "build"
    earlier = sorted(p.name for p in build_dir.iterdir() if p.is_dir() and p.name not in built and (p / "metadata.json").is_file()) if build_dir.is_dir() else []
    if earlier:
        output.note(f"not uploading {', '.join(earlier)}: {build_dir} holds them from an earlier build, not this one "
                    "(`kernel-builder upload` publishes them on purpose)")
    ctx.invoke(upload, directory=directory, repo_id=repo_id, branch=branch, create_pr=create_pr, variants=tuple(built),
               sign=sign, trust_config=trust_config)
