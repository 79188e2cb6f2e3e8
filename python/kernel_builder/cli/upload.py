"""``kernel-builder upload``: publish built variants to the Hugging Face Hub."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kernel_builder.cli import output

__all__ = ["upload"]


@click.command("upload")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--repo-id", metavar="ORG/NAME", help="Repository to publish to (default: [general.hub] repo-id).")
@click.option("--branch", metavar="BRANCH", help="Branch for the variants (default: [general.hub] branch, else v<version>).")
@click.option("--private", is_flag=True, help="Create the repository as private (only when it does not exist yet).")
@click.option(
    "--repo-type",
    type=click.Choice(["kernel", "model"]),
    default="kernel",
    show_default=True,
    help="Hub repository type.",
)
@click.option("--create-pr", is_flag=True, help="Open pull requests instead of committing to the branches directly.")
@click.option("--dry-run", is_flag=True, help="Print the exact operations per branch and write nothing.")
@click.option(
    "--output-json",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    metavar="PATH",
    help="Write {status, repo_id, branch, url, pull_requests} (and signed_by, with --sign) as JSON to PATH ('-' for stdout).",
)
@click.option("--force", is_flag=True, help="Upload even if the tree fails the layout, metadata or digest checks.")
@click.option("--variant", "variants", multiple=True, metavar="NAME", help="Upload only this variant (repeatable; default: every variant in the tree).")
@click.option(
    "--sign",
    is_flag=True,
    help="Sign each variant's metadata.json with Sigstore, keyless, as the CI job's OIDC identity (GitHub Actions: "
    "`permissions: id-token: write`; else SIGSTORE_ID_TOKEN), and upload the bundle beside it as metadata.json.sigstore.",
)
@click.option(
    "--trust-config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG",
    metavar="PATH",
    help="With --sign: a private Sigstore's client trust configuration (JSON; default: Sigstore's public instance). "
    "[env: KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG]",
)
def upload(
    directory: Path,
    repo_id: str | None,
    branch: str | None,
    private: bool,
    repo_type: str,
    create_pr: bool,
    dry_run: bool,
    output_json: Path | None,
    force: bool,
    variants: tuple[str, ...] = (),
    sign: bool = False,
    trust_config: Path | None = None,
) -> None:
    """Publish the built variants of DIRECTORY to the Hub.

    Variants are found in DIRECTORY/result, DIRECTORY/build or DIRECTORY itself. They go
    to the version branch (v<version> from their metadata, all variants must agree) under
    build/<variant>/, with benchmarks/benchmark*.py; the kernel card (CARD.md rendered, or
    a default card) goes to main as README.md. The repository and branch are created
    when missing.

    Only new or changed files are sent, in one commit per branch, so a failed upload
    leaves the branch as it was and rerunning is safe. Files under an uploaded variant's
    directory that no longer exist locally are deleted; other variants stay. On a new
    branch, everything under build/ that is not uploaded is removed. With --variant only
    the named variants are checked and uploaded.

    With --sign, each variant's metadata.json (which holds the digest of every file) is
    signed before anything is sent, and the Sigstore bundle is written beside it (when the
    tree is writable) and uploaded as build/<variant>/metadata.json.sigstore, the file
    `get_kernel` and `kernel-builder verify-signature` check (docs/signatures.md). A
    dry run signs nothing.

    The token comes from HF_TOKEN or `hf auth login`; the endpoint from HF_ENDPOINT.

    \b
    Examples:
      kernel-builder upload examples/relu --dry-run
      kernel-builder upload . --repo-id my-org/relu --output-json upload.json
      kernel-builder upload . --sign          # in CI, with an OIDC identity
    """
    from kernel_builder.hub.client import make_api  # lazy: huggingface_hub loads for an upload, not for `upload --help`
    from kernel_builder.hub.upload import UploadOptions, format_plans  # lazy: as above
    from kernel_builder.hub.upload import upload as run_upload  # lazy: as above

    options = UploadOptions(
        directory=directory,
        repo_id=repo_id,
        branch=branch,
        private=private,
        repo_type=repo_type,
        create_pr=create_pr,
        dry_run=dry_run,
        force=force,
        variants=variants,
        sign=sign,
        trust_config=trust_config,
    )
    result = run_upload(options, make_api())

    if result.status == "dry_run":
        output.result(format_plans(result))
        output.note("dry run: nothing was written" + (" and nothing was signed" if sign else ""))
    elif result.status == "no_changes":
        output.result(f"No changes: {result.repo_id}@{result.branch} is already up to date ({result.url})")
    elif result.status == "pull_request_created":
        for pr in result.pull_requests:
            output.result(f"Pull request for {pr.branch}: {pr.url}")
    else:
        output.result(f"Uploaded to {result.url}")
    if result.signed_by is not None:
        output.note(f"signed as {result.signed_by}")

    if output_json is not None:
        text = json.dumps(result.to_json(), indent=2) + "\n"
        if str(output_json) == "-":
            output.result(text, nl=False)
        else:
            output_json.write_text(text, encoding="utf-8")
