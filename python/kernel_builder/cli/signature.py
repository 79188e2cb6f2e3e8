"""``kernel-builder verify-signature``: check the Sigstore signature and the digest of a kernel's variants."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kernel_builder.cli import output
from kernel_builder.errors import LoadError

__all__ = ["verify_signature_cmd"]


def _local_variants(path: Path, all_variants: bool) -> list[Path]:
    from kernel_builder.loader.local import list_variant_dirs, local_variant_dir  # lazy: only when a tree is checked
    from kernel_builder.variants.system import detect_system  # lazy: as above (imports torch)

    if not all_variants:
        variant_dir, _ = local_variant_dir(path, detect_system())
        return [variant_dir]
    for base in (path / "build", path):
        found = [base / n for n in list_variant_dirs(base) if (base / n / "metadata.json").is_file() or (base / n / "metadata.json.sigstore").is_file()]
        if found:
            return found
    if (path / "metadata.json").is_file():
        return [path]
    raise LoadError(f"No build variants found in {path}", hint="pass a kernel directory holding build/, a build/ directory or a variant directory")


def _hub_variants(repo_id: str, revision: str | None, version: int | None, all_variants: bool) -> tuple[list[Path], str]:
    """Download (or find, offline) the variant this machine loads, or all of them; (dirs, commit)."""
    from kernel_builder.hub.download import HubClient, is_offline  # lazy: Hub access only for a Hub kernel
    from kernel_builder.loader import cache  # lazy: as above
    from kernel_builder.loader.fetch import available_versions, choose, select_revision, variant_names  # lazy: as above
    from kernel_builder.variants.system import detect_system  # lazy: as above (imports torch)

    offline = is_offline()
    client = None if offline else HubClient()
    if revision is None and version is None:
        versions = available_versions(repo_id, offline=offline, client=client)
        if not versions:
            raise LoadError(f"No numbered versions found for {repo_id}", hint="pass --revision (a branch, tag or commit)")
        version = max(versions)
    target = select_revision(repo_id, revision=revision, version=version, offline=offline, client=client)
    if all_variants:
        names = variant_names(target, offline=offline, client=client)
    else:
        names = [choose(target, detect_system(), offline=offline, client=client)[0]]
    if not names:
        raise LoadError(f"No build variants found in {repo_id} (revision: {target.label})")
    root = cache.cache_root()
    if offline:
        snapshot = cache.snapshot_dir(root, repo_id, target.commit)
    else:
        assert client is not None
        snapshot = client.download_variants(repo_id, target.commit, names, root)
    return [snapshot / "build" / name for name in names], target.commit


def _digest_check(variant_dir: Path) -> tuple[str, list[str]]:
    """``ok``, ``missing`` (no digest) or ``mismatch`` with the violations."""
    from kernel_builder.loader.metadata import read_metadata  # lazy: read only when a variant is checked
    from kernel_builder.tree.digest import validate_digest  # lazy: as above

    metadata = read_metadata(variant_dir / "metadata.json")
    if metadata.digest is None:
        return "missing", []
    violations = validate_digest(variant_dir, metadata.digest)
    return ("mismatch", violations) if violations else ("ok", [])


@click.command("verify-signature")
@click.argument("kernel", metavar="REPO_OR_PATH")
@click.argument("version_arg", metavar="[VERSION]", type=int, required=False)
@click.option("--version", "version", type=int, default=None, help="Kernel version N: the Hub branch vN (default: the highest).")
@click.option("--revision", default=None, help="Hub branch, tag or commit instead of a version.")
@click.option("--all-variants", is_flag=True, help="Check every variant (default: the one this machine loads).")
@click.option("--filter-unsigned", is_flag=True, help="Skip variants that carry no metadata.json.sigstore.")
@click.option("--filter-no-digest", is_flag=True, help="Skip variants without metadata.json or without a digest in it.")
@click.option(
    "--trusted-signer", "trusted_signers", multiple=True, metavar="[REPO_PATTERN=]IDENTITY",
    help="Also trust this signer: OWNER/REPO (any of its GitHub workflows) or "
    "https://github.com/OWNER/REPO/.github/workflows/FILE@REF ('*' matches any text); repeatable. "
    "Added to the built-in ones and KERNEL_BUILDER_TRUSTED_SIGNERS.",
)
@click.option("--repo-id", metavar="ORG/NAME", help="For a local tree: judge the signer as for this Hub repository.")
@click.option(
    "--trust-config", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG", metavar="PATH",
    help="A private Sigstore's client trust configuration (JSON; default: Sigstore's public trust root). "
    "[env: KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG]",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per variant in a list instead of text.")
def verify_signature_cmd(
    kernel: str, version_arg: int | None, version: int | None, revision: str | None, all_variants: bool,
    filter_unsigned: bool, filter_no_digest: bool, trusted_signers: tuple[str, ...], repo_id: str | None,
    trust_config: Path | None, as_json: bool,
) -> None:
    """Verify the Sigstore signature of a kernel's metadata.json, then its files against the digest.

    REPO_OR_PATH is a Hub repo id (ORG/NAME) or a local directory (a kernel holding build/,
    a build/ directory or one variant directory). A Hub kernel is checked at its highest vN
    branch, or at VERSION / --version / --revision; the variants are downloaded into the
    kernel cache, never imported. Each check is made in full (no receipts).

    The signature must verify against the trust root and name a trusted signer of the
    kernel (docs/signatures.md); then every file must match the digest in metadata.json.
    One line per variant: `✅ VARIANT: ...` or `❌ VARIANT: <why>`, as PyPI `kernels
    verify-signature` prints. Exit status 1 when any variant checked fails.

    \b
    Examples:
      kernel-builder verify-signature kernels-community/relu 1 --all-variants
      kernel-builder verify-signature acme/relu --trusted-signer acme/relu-kernel
      kernel-builder verify-signature ./build --repo-id acme/relu --all-variants
    """
    from kernel_builder.hub.download import is_offline  # lazy: the loader is for a check, not for --help
    from kernel_builder.loader.signature import BUNDLE_NAME, METADATA_MISSING, UNSIGNED, verify_signature  # lazy: as above
    from kernel_builder.signers import signers_for  # lazy: as above

    if version_arg is not None and version is not None and version_arg != version:
        raise click.UsageError(f"VERSION {version_arg} and --version {version} disagree")
    version = version if version is not None else version_arg
    local = Path(kernel).expanduser()
    commit = None
    if local.is_dir():
        if revision is not None or version is not None:
            raise LoadError("--revision and --version cannot be used with a local path")
        dirs, judged_as = _local_variants(local, all_variants), repo_id
    else:
        if local.exists() or local.is_absolute() or kernel.startswith(("./", "../", "~")):
            raise LoadError(f"Not a local kernel directory: {kernel}", hint="pass a directory holding build/, or a Hub repo id")
        if revision is not None and version is not None:
            raise LoadError("Only one of --revision or --version can be specified")
        if repo_id is not None and repo_id != kernel:
            raise click.UsageError("--repo-id is for a local tree (a Hub kernel is judged as its own repository)")
        dirs, commit = _hub_variants(kernel, revision, version, all_variants)
        judged_as = kernel
    signers = signers_for(judged_as, trusted_signers)
    offline = is_offline()

    failed = False
    rows: list[dict[str, Any]] = []
    for vdir in dirs:
        name = vdir.name
        result = verify_signature(vdir, repo_id=judged_as, commit=commit, signers=signers, trust_config=trust_config,
                                  offline=offline, use_receipts=False)
        if (result.status == UNSIGNED and filter_unsigned) or (result.status == METADATA_MISSING and filter_no_digest):
            continue
        row: dict[str, Any] = {
            "variant": name, "signature": result.status, "signer": result.signer.identity if result.signer else None,
            "detail": str(result), "digest": None, "violations": [], "ok": False,
        }
        rows.append(row)
        if not result.ok:
            failed = True
            if not as_json:
                output.result(f"❌ {name}: {result}")
            continue
        digest, violations = _digest_check(vdir)
        row.update(digest=digest, violations=violations)
        if digest == "missing" and not filter_no_digest:
            failed = True
            if not as_json:
                output.result(f"❌ {name}: {result}, but metadata.json has no digest, so the files cannot be verified")
            continue
        if digest == "mismatch":
            failed = True
            if not as_json:
                listing = "\n".join(f"  {v}" for v in violations)
                output.result(f"❌ {name}: {result}, but the files do not match the digest:\n{listing}")
            continue
        row["ok"] = True
        if not as_json:
            tail = "no digest to check the files against (--filter-no-digest)" if digest == "missing" else "every file matches the digest"
            output.result(f"✅ {name}: {result}, and {tail}")
    if as_json:
        output.result_json(rows)
    elif not rows:
        output.note(f"no variant checked: every one was skipped (--filter-unsigned: no {BUNDLE_NAME}; --filter-no-digest)")
    if failed:
        raise SystemExit(1)
