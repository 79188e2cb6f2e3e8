"""Publish a built tree to the Hub: the variants to the version branch, the card to ``main``.

Steps (each a small function below, glued together by ``upload``):

1. read the tree: variants and their metadata (``layout.discover_variants``), build.toml
   when the directory is a kernel source, and every file once (``digest.scan_variant``:
   the digest hash and the Hub's ids, which steps 2, 4 and 5 share);
2. check it (``tree.checks.check_tree``: layout, metadata, digests, ABI, ops
   lint) unless forced, and warn about dirty builds;
3. work out the repo id and the branch (``--branch``, ``[general.hub] branch``, else
   ``v<version>`` agreed by all variants);
4. read the remote state (refs, one recursive tree listing per branch) and plan each
   branch as adds of new or changed files plus deletes of stale ones (``hub.plan``);
5. unless a dry run: create the repo when missing, then make **one commit per branch**
   (batches only above 1000 operations) with ``parent_commit`` set, so a concurrent push or
   a failure never leaves a branch half-updated. A new version branch is never created
   empty: its commit goes to a staging branch (``kernel-builder-upload-<branch>-<hex>``,
   which no loader reads), and the version branch is then created at that commit, so it
   appears only with its build/, whatever stops the run (SIGINT, SIGKILL, a lost
   connection). The staging branch is deleted; one a killed run left is deleted by the
   next upload of that branch.

Only changed files are sent: an unchanged tree makes no commit and sends no content.

With ``sign`` (``upload --sign``), each variant's metadata.json is signed with Sigstore
(``hub.sign``) after step 2 and before any write, and each bundle joins its variant's files
as ``build/<variant>/metadata.json.sigstore``; a failed signing sends nothing.

When a connection drops without an answer, the request may or may not have been applied.
A lost commit is settled by reading the branch back (``_settle``): it has either the new
commit or its old head, the error says which, and a new branch is created only when its
commit landed, so a rerun always completes with the missing commits only.
"""

from __future__ import annotations

import logging
import re
import secrets
import sys
from pathlib import Path
from typing import Any

import attrs
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError
from huggingface_hub.utils import tqdm

from kernel_builder.tree.digest import VariantScan, scan_variant
from kernel_builder.errors import CheckError, HubError
from kernel_builder.hub.client import repo_url
from kernel_builder.hub.errors import CONNECTION_HINT, hub_error, is_connection_error
from kernel_builder.hub.plan import (
    MAX_OPS_PER_COMMIT,
    BranchPlan,
    LocalFile,
    local_file,
    plan_main_branch,
    plan_version_branch,
    variant_files,
)
from kernel_builder.hub.sign import sign_variants
from kernel_builder.hub.tree import (
    LocalTree,
    benchmark_files,
    choose_target,
    dirty_variants,
    narrowed_variants,
    read_tree,
    render_tree_card,
)
from kernel_builder.signers import BUNDLE_NAME
from kernel_builder.tree.checks import check_tree

__all__ = [
    "UploadOptions",
    "UploadResult",
    "PullRequest",
    "upload",
    "format_plans",
    "COMMIT_MESSAGE",
]

COMMIT_MESSAGE = "Uploaded using `kernel-builder`."
STAGING_PREFIX = "kernel-builder-upload-"
RETRY_HINT = f"{CONNECTION_HINT}: `kernel-builder upload` compares with the Hub and sends only what is missing"
log = logging.getLogger(__name__)


@attrs.frozen
class UploadOptions:
    directory: Path
    repo_id: str | None = None
    branch: str | None = None
    private: bool = False
    repo_type: str = "kernel"
    create_pr: bool = False
    dry_run: bool = False
    force: bool = False
    variants: tuple[str, ...] = ()  # upload only these (default: every variant in the tree)
    sign: bool = False  # sign each metadata.json with Sigstore (hub.sign) and upload the bundles
    trust_config: Path | None = None  # a private Sigstore's client trust configuration


@attrs.frozen
class PullRequest:
    branch: str
    url: str


@attrs.frozen
class UploadResult:
    """What happened. ``status`` is ``uploaded``, ``no_changes``, ``pull_request_created`` or ``dry_run``."""

    status: str
    repo_id: str
    branch: str
    url: str
    plans: tuple[BranchPlan, ...] = ()
    commits: tuple[str, ...] = ()
    pull_requests: tuple[PullRequest, ...] = ()
    repo_created: bool = False
    signed_by: str | None = None  # the signing identity, with ``sign``

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "repo_id": self.repo_id,
            "branch": self.branch,
            "url": self.url,
            "pull_requests": [{"branch": pr.branch, "url": pr.url} for pr in self.pull_requests],
        }
        if self.signed_by is not None:
            out["signed_by"] = self.signed_by
        return out


def _failed(exc: Exception, what: str, *, hint: str | None = None) -> HubError:
    """``hub_error``, saying for a lost connection that a rerun sends only what is missing."""
    return hub_error(exc, what, hint=hint, connection_hint=RETRY_HINT)


# -- 4. remote state ----------------------------------------------------------------------
def _remote_refs(api: HfApi, repo_id: str, repo_type: str) -> dict[str, str] | None:
    """Branch name -> head commit, or ``None`` when the repo does not exist."""
    try:
        refs = api.list_repo_refs(repo_id, repo_type=repo_type)
    except RepositoryNotFoundError:
        return None
    except Exception as exc:
        raise _failed(exc, f"reading the branches of {repo_id}") from None
    return {b.name: b.target_commit for b in refs.branches}


def _remote_id(entry: Any) -> str:
    """A remote file's id as the planner compares it: ``sha256:<hex>`` for LFS/xet files."""
    lfs = getattr(entry, "lfs", None)
    return f"sha256:{lfs.sha256}" if lfs is not None else entry.blob_id


def _remote_files(api: HfApi, repo_id: str, repo_type: str, commit: str, recursive: bool = True) -> dict[str, str]:
    """Path -> id (git blob id, or ``sha256:<hex>`` for LFS files) of every file at ``commit``."""
    try:
        entries = api.list_repo_tree(repo_id, repo_type=repo_type, revision=commit, recursive=recursive)
        return {e.path: _remote_id(e) for e in entries if hasattr(e, "blob_id")}
    except Exception as exc:
        raise _failed(exc, f"listing the files of {repo_id}@{commit[:12]}") from None


# -- 5. write -----------------------------------------------------------------------------
def _operations(adds: tuple[LocalFile, ...], deletes: tuple[str, ...]) -> list[Any]:
    ops: list[Any] = [CommitOperationDelete(path_in_repo=p, is_folder=False) for p in deletes]
    for f in adds:
        op = CommitOperationAdd(path_in_repo=f.path_in_repo, path_or_fileobj=f.content if f.content is not None else str(f.source))
        op.upload_info.sha256 = bytes.fromhex(f.sha256)  # known from the scan: huggingface_hub need not read it again
        ops.append(op)
    return ops


def _commit_plan(
    api: HfApi, repo_id: str, repo_type: str, plan: BranchPlan, create_pr: bool, revision: str | None = None
) -> tuple[list[str], list[PullRequest]]:
    """Commit one branch's plan (to ``revision``, default its branch); returns the commit ids
    and any pull requests opened."""
    commits: list[str] = []
    prs: list[PullRequest] = []
    batches = plan.batches(MAX_OPS_PER_COMMIT)
    parent = plan.parent_commit
    revision = revision or plan.branch
    for index, (adds, deletes) in enumerate(batches, 1):
        message = COMMIT_MESSAGE if len(batches) == 1 else f"{COMMIT_MESSAGE} (batch {index}/{len(batches)})"
        size = sum(f.size for f in adds)
        log.info("Committing to %s: %d file(s) (%s), %d deletion(s)", plan.branch, len(adds), _human(size), len(deletes))
        try:
            info = api.create_commit(
                repo_id,
                repo_type=repo_type,
                operations=_operations(adds, deletes),
                commit_message=message,
                revision=revision,
                parent_commit=parent if not (create_pr and index > 1) else None,
                create_pr=create_pr and index == 1,
            )
        except Exception as exc:
            lost = is_connection_error(exc)
            if lost and not create_pr:
                raise _ConnectionLost(exc, parent, adds, deletes, commits) from None
            if not lost and not isinstance(exc, (HfHubHTTPError, OSError, ValueError)):
                raise
            status = getattr(getattr(exc, "response", None), "status_code", None)
            if lost:  # a pull request: its answer was lost, so its state is unknown
                hint = RETRY_HINT
            elif status == 412:
                hint = f"{repo_id}@{plan.branch} changed while uploading; nothing was committed. Rerun the upload."
            elif plan.create:
                hint = f"{plan.branch} was not created; rerunning `kernel-builder upload` is safe"
            else:
                scope = f"batch {index}/{len(batches)}" if len(batches) > 1 else "this commit"
                hint = (
                    f"{plan.branch} did not change by {scope} (a commit is all or nothing); "
                    "rerunning `kernel-builder upload` is safe and only sends what is missing"
                )
            raise _failed(exc, f"committing to {repo_id}@{plan.branch}", hint=hint) from None
        commits.append(info.oid)
        parent = info.oid
        if create_pr and index == 1 and info.pr_url:
            prs.append(PullRequest(plan.branch, info.pr_url))
            revision = info.pr_revision or revision
    return commits, prs


class _ConnectionLost(Exception):
    """A commit request got no answer: it may or may not have been applied."""

    def __init__(
        self, exc: Exception, parent: str | None, adds: tuple[LocalFile, ...], deletes: tuple[str, ...], done: list[str]
    ) -> None:
        super().__init__(str(exc))
        self.exc = exc
        self.parent = parent
        self.adds = adds
        self.deletes = deletes
        self.done = done  # commits of earlier batches


def _applied(api: HfApi, repo_id: str, repo_type: str, head: str, lost: _ConnectionLost) -> bool:
    """Whether the files at ``head`` are what the lost commit would have made them."""
    remote = _remote_files(api, repo_id, repo_type, head)
    added = all(remote.get(f.path_in_repo) in (f.oid, f"sha256:{f.sha256}") for f in lost.adds)
    return added and not any(path in remote for path in lost.deletes)


def _lost_cause(lost: _ConnectionLost) -> str:
    first = (str(lost.exc).strip().splitlines() or [""])[0][:200]
    return f"{type(lost.exc).__name__}: {first}" if first else type(lost.exc).__name__


def _settle(
    api: HfApi, repo_id: str, repo_type: str, plan: BranchPlan, lost: _ConnectionLost, revision: str | None = None
) -> tuple[HubError, str | None]:
    """After a lost commit answer, find out what ``revision`` (default: the plan's branch)
    holds: the error to report, and the new head when the commit was applied.

    A commit is atomic on the Hub, so the branch has either the new commit or its old head.
    """
    revision = revision or plan.branch
    what = f"committing to {repo_id}@{plan.branch}"
    cause = _lost_cause(lost)
    try:
        head = (_remote_refs(api, repo_id, repo_type) or {}).get(revision)
        applied = head is not None and head != lost.parent and _applied(api, repo_id, repo_type, head, lost)
    except HubError:
        return HubError(
            f"{what} failed: connection lost ({cause}), and the Hub could not be asked whether the commit was applied",
            hint=RETRY_HINT,
        ), None
    if head == lost.parent or head is None:
        state = f"{plan.branch} was not created" if plan.create else f"{plan.branch} is unchanged"
        return HubError(f"{what} failed: connection lost before the commit was applied; {state} ({cause})", hint=RETRY_HINT), None
    if applied:
        return HubError(
            f"{what}: connection lost after the commit was applied; {plan.branch} has the new commit {head[:12]} ({cause})",
            hint="rerun `kernel-builder upload` to finish: it sends only what is missing (nothing, if this was the last commit)",
        ), head
    return HubError(
        f"{what} failed: connection lost ({cause}), and {revision} moved to {head[:12]}, which is not this upload's commit",
        hint="someone else pushed to the branch meanwhile; check it, then rerun `kernel-builder upload`",
    ), None


def _publish_new_branch(
    api: HfApi, repo_id: str, repo_type: str, plan: BranchPlan, refs: dict[str, str]
) -> list[str]:
    """Commit a new branch's plan on a staging branch, then create the branch at that commit.

    The branch therefore appears only with its files: an interrupted or killed run leaves at
    most a staging branch (deleted here, or by the next upload of this branch), never a
    version branch that is a copy of ``main`` without build/.
    """
    leftover = re.compile(rf"{re.escape(STAGING_PREFIX + plan.branch)}-[0-9a-f]{{8}}")  # not branch v1-x's
    for name in refs:
        if leftover.fullmatch(name):
            log.info("Removing %s, left by an earlier upload that was stopped", name)
            _rollback_branch(api, repo_id, repo_type, name)
    staging = f"{STAGING_PREFIX}{plan.branch}-{secrets.token_hex(4)}"
    _create_branch(api, repo_id, repo_type, staging, plan.parent_commit, label=plan.branch)
    try:
        try:
            done, _ = _commit_plan(api, repo_id, repo_type, plan, False, revision=staging)
        except _ConnectionLost as lost:
            error, head = _settle(api, repo_id, repo_type, plan, lost, revision=staging)
            if head is not None:
                _promote(api, repo_id, repo_type, plan.branch, head)
            raise error from None
        _promote(api, repo_id, repo_type, plan.branch, done[-1])
    finally:
        _rollback_branch(api, repo_id, repo_type, staging)
    return done


def _promote(api: HfApi, repo_id: str, repo_type: str, branch: str, commit: str) -> None:
    """Create ``branch`` at ``commit`` (a staging branch's head that holds the whole upload)."""
    try:
        api.create_branch(repo_id, repo_type=repo_type, branch=branch, revision=commit, exist_ok=False)
    except Exception as exc:
        if is_connection_error(exc):
            try:
                if (_remote_refs(api, repo_id, repo_type) or {}).get(branch) == commit:
                    return  # the answer was lost, the branch is there with the upload
            except HubError:
                pass
        status = getattr(getattr(exc, "response", None), "status_code", None)
        hint = (
            f"someone else created {branch} meanwhile; check it, then rerun `kernel-builder upload`"
            if status == 409
            else f"{branch} was not created; rerunning `kernel-builder upload` is safe"
        )
        raise _failed(exc, f"creating the branch {branch} in {repo_id} at the uploaded commit {commit[:12]}", hint=hint) from None


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def _scan(tree: LocalTree) -> dict[str, VariantScan]:
    """Read each variant's files once (digest hash and Hub ids), with a progress bar on stderr."""
    out: dict[str, VariantScan] = {}
    with tqdm(total=len(tree.variants), desc="Hashing variants", unit="variant", file=sys.stderr,
              disable=len(tree.variants) < 2 or None) as bar:
        for name, path in tree.variants.items():
            digest = tree.metadata[name].digest
            out[name] = scan_variant(path, digest.algorithm if digest is not None else "sha256")
            bar.update(1)
    return out


def _select(tree: LocalTree, names: tuple[str, ...]) -> LocalTree:
    """The tree narrowed to ``names`` (all of it when empty); a name it lacks is an error."""
    if not names:
        return tree
    if missing := [n for n in names if n not in tree.variants]:
        raise CheckError(
            f"{tree.build_dir} has no built variant {', '.join(missing)}",
            hint=f"it holds: {', '.join(tree.variants) or 'none'}",
        )
    left = [n for n in tree.variants if n not in names]
    if left:
        log.info("Not uploading %s: only %s asked for", ", ".join(left), ", ".join(names))
    keep = [n for n in tree.variants if n in names]
    return attrs.evolve(tree, variants={n: tree.variants[n] for n in keep}, metadata={n: tree.metadata[n] for n in keep})


def _check(tree: LocalTree, scans: dict[str, VariantScan], force: bool) -> None:
    """Refuse a tree that fails its checks (unless forced); warn about dirty builds."""
    if force:
        log.info("Skipping the tree checks (--force).")
    else:
        reports = [r for r in check_tree(tree.build_dir, scans=scans) if r.variant in tree.variants]
        if problems := [f"{r.variant}: {e}" for r in reports for e in r.errors]:
            listing = "\n  ".join(problems)
            raise CheckError(
                f"refusing to upload {tree.build_dir}: the tree fails its checks:\n  {listing}",
                hint="rebuild, or rerun `kernel-builder hash` if you changed files on purpose; --force uploads anyway",
            )
    if dirty := dirty_variants(tree):
        log.warning("built from a dirty git tree (uncommitted changes): %s", ", ".join(dirty))
    if narrowed := narrowed_variants(tree):
        listing = ", ".join(f"{name} (only {','.join(caps)})" for name, caps in narrowed.items())
        if not force:
            raise CheckError(
                f"refusing to upload {tree.build_dir}: built for fewer CUDA architectures than build.toml asks "
                f"(--cuda-capabilities): {listing}",
                hint="rebuild without --cuda-capabilities; --force uploads anyway",
            )
        log.warning("uploading variants built for fewer CUDA architectures than build.toml asks: %s", listing)


def _plan(
    api: HfApi,
    repo_id: str,
    repo_type: str,
    branch: str,
    refs: dict[str, str],
    variants: dict[str, list[LocalFile]],
    benchmarks: list[LocalFile],
    card: LocalFile | None,
) -> tuple[BranchPlan, BranchPlan | None]:
    """The version branch's plan and ``main``'s (``None`` when the card goes to the version branch)."""
    exists = branch in refs
    base = refs.get(branch) if exists else refs.get("main")
    remote = _remote_files(api, repo_id, repo_type, base) if base else {}
    version_plan = plan_version_branch(branch, variants, benchmarks, remote, branch_exists=exists, parent_commit=base)
    if card is None:
        return version_plan, None
    if branch == "main":
        card_adds = plan_main_branch(card, remote, base).adds
        return attrs.evolve(version_plan, adds=version_plan.adds + card_adds), None
    main_head = refs.get("main")
    remote_main = _remote_files(api, repo_id, repo_type, main_head, recursive=False) if main_head else {}
    return version_plan, plan_main_branch(card, remote_main, main_head)


def upload(options: UploadOptions, api: HfApi) -> UploadResult:
    """Upload ``options.directory`` (see the module docstring for the steps)."""
    tree = _select(read_tree(options.directory), options.variants)
    scans = _scan(tree)
    _check(tree, scans, options.force)
    repo_id, branch, version = choose_target(tree, options.repo_id, options.branch)
    repo_type = options.repo_type
    card_text = render_tree_card(tree, repo_id, version)
    card = local_file("README.md", content=card_text.encode("utf-8")) if card_text is not None else None
    variants = {name: variant_files(scan, f"build/{name}") for name, scan in scans.items()}
    benchmarks = benchmark_files(tree)  # judged (no link out, no FIFO) before any request
    signed_by = None
    if options.sign and not options.dry_run:  # before any write, so a failed signing sends nothing
        signed = sign_variants(tree.variants, trust_config=options.trust_config)
        signed_by = signed.signer.identity
        for name, data in signed.bundles.items():
            bundle = local_file(f"build/{name}/{BUNDLE_NAME}", content=data)
            others = [f for f in variants[name] if f.path_in_repo != bundle.path_in_repo]
            variants[name] = sorted([*others, bundle], key=lambda f: f.path_in_repo)
        log.info("Signed metadata.json of %d variant(s) as %s", len(signed.bundles), signed_by)

    refs = _remote_refs(api, repo_id, repo_type)
    missing_repo = refs is None
    if missing_repo and options.create_pr:
        raise HubError(
            f"{repo_id} does not exist, and --create-pr cannot create it",
            hint="ask a maintainer of the organization to create the repository",
        )
    if missing_repo and not options.dry_run:
        repo_id, refs = _create_repo(api, repo_id, repo_type, options.private)
    refs = refs or {}
    if branch not in refs and options.create_pr:
        raise HubError(
            f"{repo_id} has no branch {branch}, and --create-pr cannot create it",
            hint=f"ask a maintainer of {repo_id} to create the branch {branch}",
        )
    version_plan, main_plan = _plan(api, repo_id, repo_type, branch, refs, variants, benchmarks, card)
    plans = tuple(p for p in (version_plan, main_plan) if p is not None)
    url = repo_url(api.endpoint, repo_type, repo_id, branch)
    if options.dry_run:
        return UploadResult("dry_run", repo_id, branch, url, plans, repo_created=missing_repo)

    commits: list[str] = []
    prs: list[PullRequest] = []
    for plan in plans:
        if plan.empty:
            log.info("%s: nothing changed (%d file(s) already up to date)", plan.branch, plan.unchanged)
            continue
        if plan.create:
            commits.extend(_publish_new_branch(api, repo_id, repo_type, plan, refs))
            continue
        try:
            done, opened = _commit_plan(api, repo_id, repo_type, plan, options.create_pr)
        except _ConnectionLost as lost:
            raise _settle(api, repo_id, repo_type, plan, lost)[0] from None
        commits.extend(done)
        prs.extend(opened)
    status = "no_changes" if not commits else "pull_request_created" if prs else "uploaded"
    return UploadResult(status, repo_id, branch, url, plans, tuple(commits), tuple(prs), missing_repo, signed_by)


def _create_repo(api: HfApi, repo_id: str, repo_type: str, private: bool) -> tuple[str, dict[str, str]]:
    log.info("Creating %s repository %s", repo_type, repo_id)
    try:
        url = api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True)
    except Exception as exc:
        if not isinstance(exc, HfHubHTTPError):
            if is_connection_error(exc):
                raise _failed(exc, f"creating the repository {repo_id}") from None
            raise
        status = exc.response.status_code if exc.response is not None else None
        hint = None
        if status == 403:
            hint = (
                "publishing kernels may need approval for your organization, or your token lacks write access; "
                "ask the organization's admins, or use a token with write permission"
            )
        raise _failed(exc, f"creating the repository {repo_id}", hint=hint) from None
    repo_id = url.repo_id or repo_id
    return repo_id, _remote_refs(api, repo_id, repo_type) or {}


def _create_branch(
    api: HfApi, repo_id: str, repo_type: str, branch: str, start: str | None, *, label: str | None = None
) -> None:
    """Create ``branch`` at ``start``; errors name ``label`` (the version branch a staging
    branch is made for)."""
    try:
        api.create_branch(repo_id, repo_type=repo_type, branch=branch, revision=start, exist_ok=False)
    except Exception as exc:
        error = _failed(exc, f"creating the branch {label or branch} in {repo_id}", hint="nothing was uploaded; rerun")
        if is_connection_error(exc):
            # The answer was lost, not necessarily the request: remove a branch that holds no build.
            try:
                created = branch in (_remote_refs(api, repo_id, repo_type) or {})
            except HubError:
                created = False
            if created:
                _rollback_branch(api, repo_id, repo_type, branch)
        raise error from None


def _rollback_branch(api: HfApi, repo_id: str, repo_type: str, branch: str) -> bool:
    """Remove a (staging or half-created) branch; best effort, the error that led here is what matters."""
    try:
        api.delete_branch(repo_id, repo_type=repo_type, branch=branch)
        return True
    except Exception:  # noqa: BLE001 - best effort
        log.warning("could not remove the branch %s, which holds no version; delete it or rerun the upload", branch)
        return False


def format_plans(result: UploadResult) -> str:
    """The exact operations per branch, one per line (what ``--dry-run`` prints)."""
    lines = [f"repository: {result.repo_id}{' (would be created)' if result.repo_created else ''}"]
    for plan in result.plans:
        state = "new branch" if plan.create or result.repo_created else "existing branch"
        lines.append(f"branch {plan.branch} ({state}): {len(plan.adds)} to add, {len(plan.deletes)} to delete, "
                     f"{plan.unchanged} unchanged")
        lines.extend(f"  add    {f.path_in_repo} ({_human(f.size)})" for f in plan.adds)
        lines.extend(f"  delete {p}" for p in plan.deletes)
    return "\n".join(lines)
