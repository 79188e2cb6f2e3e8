"""A local, in-memory server that speaks the Hugging Face Hub HTTP protocol.

The real Hub cannot be reached from CI, and a mock of ``HfApi`` would only test our
assumptions about it. This server implements the endpoints ``huggingface_hub`` 2.4.0 and
``kernels`` use to create repos and branches, commit, list and download, with the Hub's
strictness: ``X-Error-Code`` 404s, 409 for an existing repo or branch, 412 for a stale
``parentCommit``, ``X-Repo-Commit``/``ETag`` on resolve and ``Link`` pagination.

Storage is git-like: content-addressed blobs (git blob sha1), one full tree per commit,
commits chained by parent, and refs (branches, tags, ``refs/pr/N``). By default every file
is "regular" (inline base64 in the commit), so clients need neither git-lfs nor xet. With
``lfs_threshold`` set, files of at least that many bytes are answered "lfs" and go through
the git-lfs batch API (basic transfer: batch, PUT, then an ``lfsFile`` commit line), stored
as pointer files like on the Hub; clients must then run with ``HF_HUB_DISABLE_XET=1``
(xet is not implemented: its token endpoint answers 404).

Every request is logged (``requests``) with its endpoint name and the bytes received;
``fail_next`` injects an error answer into the next matching request, and ``drop_next``
closes the connection without any answer, either before the request is applied or after
(the change is made, the client never hears of it). Test-only code.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, quote, unquote, urlsplit

__all__ = ["HubServer", "HubRequest", "HubHTTPError", "git_blob_oid", "REPO_TYPES"]

# URL segment used in /api/<T>/ -> repo type, and the prefix of file URLs per type.
REPO_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space", "kernels": "kernel"}
URL_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/", "kernel": "kernels/"}
WRITE_ENDPOINTS = frozenset(
    {"create_repo", "delete_repo", "create_branch", "delete_branch", "create_tag", "commit", "lfs_upload"}
)
GITATTRIBUTES = b"*.bin filter=lfs diff=lfs merge=lfs -text\n*.so filter=lfs diff=lfs merge=lfs -text\n"
_COMMIT_OID = re.compile(r"[0-9a-f]{40}")
_PR_REF = re.compile(r"refs/pr/(\d+)")


def git_blob_oid(data: bytes) -> str:
    """The git blob sha1 of ``data``: what the Hub reports as a regular file's ``oid``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    """The git-lfs pointer file stored in git in place of an LFS object."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


class HubHTTPError(Exception):
    """An error answer: status, optional ``X-Error-Code`` and a message."""

    def __init__(self, status: int, message: str, code: str | None = None, extra: dict | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.extra = extra or {}


def _not_found(code: str, message: str) -> HubHTTPError:
    return HubHTTPError(404, message, code)


@dataclass(frozen=True)
class HubRequest:
    """One request as the server saw it. ``bytes_received`` counts headers and body."""

    method: str
    path: str
    endpoint: str
    status: int
    bytes_received: int
    body_bytes: int
    authorization: bool


@dataclass
class Commit:
    oid: str
    parent: str | None
    files: dict[str, str]  # path -> blob oid
    title: str
    message: str
    date: str


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    pulls: dict[int, str] = field(default_factory=dict)

    def resolve(self, revision: str) -> str | None:
        """Revision -> commit oid: full ref names, then branch, tag, (abbreviated) commit."""
        if revision.startswith("refs/heads/"):
            return self.branches.get(revision[len("refs/heads/") :])
        if revision.startswith("refs/tags/"):
            return self.tags.get(revision[len("refs/tags/") :])
        if match := _PR_REF.fullmatch(revision):
            return self.pulls.get(int(match[1]))
        if revision in self.branches:
            return self.branches[revision]
        if revision in self.tags:
            return self.tags[revision]
        if re.fullmatch(r"[0-9a-f]{7,40}", revision):
            hits = [oid for oid in self.commits if oid.startswith(revision)]
            if len(hits) == 1:
                return hits[0]
        return None


class HubState:
    """Repos, blobs, the request log and injected failures, behind one lock."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.blobs: dict[str, bytes] = {}
        self.lfs_objects: dict[str, bytes] = {}  # sha256 -> content
        self.lfs_pointers: dict[str, str] = {}  # pointer blob oid -> sha256
        self.repos: dict[tuple[str, str], Repo] = {}
        self.requests: list[HubRequest] = []
        self.failures: list[tuple[str, int, str]] = []
        self.drops: list[tuple[str, bool]] = []  # (endpoint, after_apply)
        self.trusted_orgs: set[str] = set()
        self._counter = itertools.count()

    # -- storage -----------------------------------------------------------------
    def repo(self, repo_type: str, repo_id: str, *, authorized: bool = True) -> Repo:
        repo = self.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and not authorized):
            raise _not_found("RepoNotFound", f"Repository not found: {repo_type} {repo_id}")
        return repo

    def put_blob(self, data: bytes) -> str:
        oid = git_blob_oid(data)
        self.blobs[oid] = data
        return oid

    def put_lfs_pointer(self, sha256: str) -> str:
        oid = self.put_blob(lfs_pointer(sha256, len(self.lfs_objects[sha256])))
        self.lfs_pointers[oid] = sha256
        return oid

    def content(self, oid: str) -> bytes:
        """A file's content: the blob, or the LFS object its pointer names."""
        sha = self.lfs_pointers.get(oid)
        return self.lfs_objects[sha] if sha is not None else self.blobs[oid]

    def upload_oid(self, oid: str) -> str:
        """The id preupload reports for an existing file: sha256 for LFS files, else the blob id."""
        return self.lfs_pointers.get(oid, oid)

    def new_commit(self, repo: Repo, parent: str | None, files: dict[str, str], title: str, message: str = "") -> str:
        seed = f"{parent}\n{sorted(files.items())}\n{title}\n{next(self._counter)}\n{time.time_ns()}"
        oid = hashlib.sha1(seed.encode()).hexdigest()
        repo.commits[oid] = Commit(oid, parent, dict(files), title, message, _now_iso())
        return oid

    def create_repo(self, repo_type: str, repo_id: str, private: bool = False) -> Repo:
        if (repo_type, repo_id) in self.repos:
            raise HubHTTPError(409, "You already created this repo", extra={"url": repo_id})
        repo = Repo(repo_type, repo_id, private)
        files = {".gitattributes": self.put_blob(GITATTRIBUTES)}
        repo.branches["main"] = self.new_commit(repo, None, files, "initial commit")
        self.repos[(repo_type, repo_id)] = repo
        return repo

    def resolve(self, repo: Repo, revision: str) -> str:
        oid = repo.resolve(revision)
        if oid is None:
            raise _not_found("RevisionNotFound", f"Invalid rev id: {revision}")
        return oid

    def take_drop(self, endpoint: str) -> bool | None:
        """``after_apply`` of the next drop planned for ``endpoint``, else ``None``."""
        for i, (name, after) in enumerate(self.drops):
            if name == endpoint:
                del self.drops[i]
                return after
        return None

    def take_failure(self, endpoint: str) -> tuple[int, str] | None:
        for i, (name, status, message) in enumerate(self.failures):
            if name == endpoint:
                del self.failures[i]
                return status, message
        return None


def _tree_entries(state: HubState, files: dict[str, str], path: str, recursive: bool) -> list[dict]:
    """The Hub's tree listing of ``path`` ("" = root) in one commit's file map."""
    prefix = f"{path}/" if path else ""
    under = {p: oid for p, oid in files.items() if p.startswith(prefix)}
    if path and not under:
        if path in files:
            return [_file_entry(state, path, files[path])]
        raise _not_found("EntryNotFound", f"{path} does not exist on this revision")
    dirs: dict[str, list[str]] = {}
    entries: list[dict] = []
    for p in sorted(under):
        rest = p[len(prefix) :]
        parts = rest.split("/")
        for depth in range(1, len(parts)):
            d = prefix + "/".join(parts[:depth])
            dirs.setdefault(d, []).append(p)
        if recursive or len(parts) == 1:
            entries.append(_file_entry(state, p, under[p]))
    for d, members in dirs.items():
        if recursive or "/" not in d[len(prefix) :]:
            tree_oid = hashlib.sha1("".join(f"{m}:{under[m]}\n" for m in members).encode()).hexdigest()
            entries.append({"type": "directory", "oid": tree_oid, "path": d})
    entries.sort(key=lambda e: e["path"])
    return entries


def _file_entry(state: HubState, path: str, oid: str) -> dict:
    entry: dict[str, Any] = {"type": "file", "oid": oid, "size": len(state.content(oid)), "path": path}
    if (sha := state.lfs_pointers.get(oid)) is not None:
        entry["lfs"] = {"oid": sha, "size": entry["size"], "pointerSize": len(state.blobs[oid])}
    return entry


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(status, json.dumps(data).encode(), headers or {})


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: Any
    body: bytes
    authorized: bool

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"{}")
        except ValueError as exc:
            raise HubHTTPError(400, f"Invalid JSON body: {exc}") from None

    def flag(self, name: str) -> bool:
        return self.query.get(name, [""])[0].lower() in ("1", "true")


class HubServer:
    """The server plus helpers that seed or inspect state directly (no HTTP)."""

    tree_page_size = 50
    commits_page_size = 50
    lfs_threshold: int | None = None  # files at least this big are uploaded through LFS

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.state = HubState()
        handler = type("Handler", (_Handler,), {"hub": self})
        self._httpd = ThreadingHTTPServer((host, port), handler)
        self._httpd.daemon_threads = True
        self.host, self.port = self._httpd.server_address[:2]
        self.endpoint = f"http://{self.host}:{self.port}"
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------
    def start(self) -> HubServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="hubserver", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; safe to call twice (a test may stop it to simulate going offline)."""
        if self._thread is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        self._thread = None

    def __enter__(self) -> HubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request log and failure injection ------------------------------------------
    @property
    def requests(self) -> list[HubRequest]:
        with self.state.lock:
            return list(self.state.requests)

    def clear_log(self) -> None:
        with self.state.lock:
            self.state.requests.clear()

    def count(self, endpoint: str | None = None, method: str | None = None) -> int:
        """Number of logged requests, optionally only those of one endpoint name / method."""
        return sum(
            1
            for r in self.requests
            if (endpoint is None or r.endpoint == endpoint) and (method is None or r.method == method)
        )

    def bytes_received(self, endpoint: str | None = None) -> int:
        """Bytes received (request line, headers and body), optionally for one endpoint."""
        return sum(r.bytes_received for r in self.requests if endpoint is None or r.endpoint == endpoint)

    def write_requests(self) -> list[HubRequest]:
        """Requests that change (or would change) state: repo, branch, tag and commit writes."""
        return [r for r in self.requests if r.endpoint in WRITE_ENDPOINTS]

    def fail_next(self, endpoint: str, status: int = 500, message: str = "Injected failure", times: int = 1) -> None:
        """Answer the next ``times`` requests to ``endpoint`` with ``status``, changing nothing."""
        with self.state.lock:
            self.state.failures.extend([(endpoint, status, message)] * times)

    def drop_next(self, endpoint: str, *, after_apply: bool, times: int = 1) -> None:
        """Close the connection of the next ``times`` requests to ``endpoint`` without answering.

        ``after_apply=False``: nothing changes. ``after_apply=True``: the request is applied
        first, so the state changes but the client gets no answer.
        """
        with self.state.lock:
            self.state.drops.extend([(endpoint, after_apply)] * times)

    def trust_org(self, org: str, trusted: bool = True) -> None:
        """Set ``trustedKernelPublisher`` in the org overview ``kernels`` checks."""
        with self.state.lock:
            (self.state.trusted_orgs.add if trusted else self.state.trusted_orgs.discard)(org)

    # -- direct state helpers ----------------------------------------------------------
    def create_repo(self, repo_id: str, repo_type: str = "kernel", private: bool = False) -> None:
        with self.state.lock:
            self.state.create_repo(repo_type, repo_id, private)

    def create_branch(self, repo_id: str, branch: str, start: str = "main", repo_type: str = "kernel") -> str:
        with self.state.lock:
            repo = self.state.repo(repo_type, repo_id)
            if branch in repo.branches:
                raise HubHTTPError(409, f"Reference already exists: refs/heads/{branch}")
            repo.branches[branch] = self.state.resolve(repo, start)
            return repo.branches[branch]

    def create_tag(self, repo_id: str, tag: str, revision: str = "main", repo_type: str = "kernel") -> str:
        with self.state.lock:
            repo = self.state.repo(repo_type, repo_id)
            repo.tags[tag] = self.state.resolve(repo, revision)
            return repo.tags[tag]

    def commit_files(
        self,
        repo_id: str,
        files: dict[str, bytes],
        branch: str = "main",
        deletes: tuple[str, ...] = (),
        title: str = "seed",
        repo_type: str = "kernel",
    ) -> str:
        """Commit ``files`` (path -> bytes) and delete ``deletes`` on ``branch``; returns the commit oid."""
        with self.state.lock:
            repo = self.state.repo(repo_type, repo_id)
            head = self.state.resolve(repo, branch)
            tree = dict(repo.commits[head].files)
            for path in deletes:
                tree.pop(path, None)
            for path, data in files.items():
                tree[path] = self.state.put_blob(data)
            repo.branches[branch] = self.state.new_commit(repo, head, tree, title)
            return repo.branches[branch]

    def files(self, repo_id: str, revision: str = "main", repo_type: str = "kernel") -> dict[str, bytes]:
        """The file contents at ``revision``: path -> bytes."""
        with self.state.lock:
            repo = self.state.repo(repo_type, repo_id)
            commit = repo.commits[self.state.resolve(repo, revision)]
            return {p: self.state.content(oid) for p, oid in commit.files.items()}

    def branches(self, repo_id: str, repo_type: str = "kernel") -> dict[str, str]:
        with self.state.lock:
            return dict(self.state.repo(repo_type, repo_id).branches)

    def head(self, repo_id: str, revision: str = "main", repo_type: str = "kernel") -> str:
        with self.state.lock:
            repo = self.state.repo(repo_type, repo_id)
            return self.state.resolve(repo, revision)

    def history(self, repo_id: str, revision: str = "main", repo_type: str = "kernel") -> list[str]:
        """Commit titles from ``revision`` back to the first commit, newest first."""
        with self.state.lock:
            repo = self.state.repo(repo_type, repo_id)
            oid: str | None = self.state.resolve(repo, revision)
            titles = []
            while oid is not None:
                titles.append(repo.commits[oid].title)
                oid = repo.commits[oid].parent
            return titles

    def has_repo(self, repo_id: str, repo_type: str = "kernel") -> bool:
        with self.state.lock:
            return (repo_type, repo_id) in self.state.repos

    def env(self) -> dict[str, str]:
        """Environment variables that point a subprocess's huggingface_hub at this server."""
        return {"HF_ENDPOINT": self.endpoint}

    def repo_url(self, repo_type: str, repo_id: str) -> str:
        return f"{self.endpoint}/{URL_PREFIX[repo_type]}{repo_id}"


# ---------------------------------------------------------------------------------------
# Routing: (method, path) -> endpoint name + handler. Paths are split before unquoting so a
# quoted revision such as refs%2Fheads%2Fv1 stays one segment.
# ---------------------------------------------------------------------------------------
Route = tuple[str, Callable[..., Response], tuple]


def _route(method: str, segments: list[str]) -> Route | None:
    seg = [unquote(s) for s in segments]
    if seg[:1] == ["api"]:
        rest = seg[1:]
        if method == "POST" and rest == ["repos", "create"]:
            return "create_repo", _create_repo, ()
        if method == "DELETE" and rest == ["repos", "delete"]:
            return "delete_repo", _delete_repo, ()
        if method == "POST" and rest == ["validate-yaml"]:
            return "validate_yaml", _validate_yaml, ()
        if method == "GET" and rest[:1] == ["whoami-v2"]:
            return "whoami", _whoami, ()
        if method == "GET" and len(rest) == 3 and rest[0] == "organizations" and rest[2] == "overview":
            return "org_overview", _org_overview, (rest[1],)
        if len(rest) >= 3 and rest[0] in REPO_TYPES:
            repo_type, repo_id, tail = REPO_TYPES[rest[0]], f"{rest[1]}/{rest[2]}", rest[3:]
            action, args = (tail[0], tail[1:]) if tail else ("", [])
            table = {
                ("GET", ""): ("repo_info", _repo_info),
                ("GET", "revision"): ("repo_info", _repo_info),
                ("GET", "refs"): ("refs", _refs),
                ("POST", "branch"): ("create_branch", _create_branch),
                ("DELETE", "branch"): ("delete_branch", _delete_branch),
                ("POST", "tag"): ("create_tag", _create_tag),
                ("GET", "tree"): ("tree", _tree),
                ("POST", "paths-info"): ("paths_info", _paths_info),
                ("GET", "commits"): ("commits", _commits),
                ("POST", "preupload"): ("preupload", _preupload),
                ("POST", "commit"): ("commit", _commit),
            }
            hit = table.get((method, action))
            if hit is not None and (action in ("", "refs") or args):
                return hit[0], hit[1], (repo_type, repo_id, args[0] if args else None, "/".join(args[1:]))
            if action in ("xet-write-token", "xet-read-token"):
                return "xet_token", _xet_unsupported, ()
        return None
    if method == "PUT" and len(seg) == 5 and seg[0] == "lfs-upload":
        return "lfs_upload", _lfs_upload, (seg[1], f"{seg[2]}/{seg[3]}", seg[4])
    if method == "POST" and len(seg) >= 6 and seg[-4:] == ["info", "lfs", "objects", "batch"]:
        repo_type, rest = "model", seg[:-4]
        if rest[0] in REPO_TYPES and len(rest) == 3:
            repo_type, rest = REPO_TYPES[rest[0]], rest[1:]
        if len(rest) == 2 and rest[1].endswith(".git"):
            return "lfs_batch", _lfs_batch, (repo_type, f"{rest[0]}/{rest[1][:-4]}")
    if method in ("GET", "HEAD"):
        repo_type = "model"
        if seg and seg[0] in REPO_TYPES and seg[0] != "models":
            repo_type, seg = REPO_TYPES[seg[0]], seg[1:]
        if len(seg) >= 5 and seg[2] == "resolve":
            return "resolve", _resolve, (repo_type, f"{seg[0]}/{seg[1]}", seg[3], "/".join(seg[4:]))
    return None


def _info(hub: HubServer, repo: Repo, oid: str) -> dict:
    commit = repo.commits[oid]
    author = repo.repo_id.split("/")[0]
    return {
        "_id": hashlib.sha1(repo.repo_id.encode()).hexdigest()[:24],
        "id": repo.repo_id,
        "author": author,
        "sha": oid,
        "lastModified": commit.date,
        "createdAt": commit.date,
        "private": repo.private,
        "disabled": False,
        "gated": False,
        "downloads": 0,
        "likes": 0,
        "tags": [],
        "siblings": [{"rfilename": p} for p in sorted(commit.files)],
    }


def _create_repo(hub: HubServer, req: Request) -> Response:
    body = req.json()
    name, org = body.get("name"), body.get("organization") or "user"
    repo_type = body.get("type") or "model"
    if not name or repo_type not in URL_PREFIX:
        raise HubHTTPError(400, f"Invalid repo name or type: {name!r} {repo_type!r}")
    repo_id = f"{org}/{name}"
    url = hub.repo_url(repo_type, repo_id)
    try:
        hub.state.create_repo(repo_type, repo_id, body.get("private") or body.get("visibility") == "private")
    except HubHTTPError as exc:
        exc.extra = {"url": url}
        raise
    return _json({"url": url, "name": repo_id, "id": repo_id})


def _delete_repo(hub: HubServer, req: Request) -> Response:
    body = req.json()
    key = (body.get("type") or "model", f"{body.get('organization') or 'user'}/{body.get('name')}")
    hub.state.repo(*key, authorized=req.authorized)
    del hub.state.repos[key]
    return _json({})


def _validate_yaml(hub: HubServer, req: Request) -> Response:
    content = req.json().get("content", "")
    errors = []
    match = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", content, re.S)
    if match:
        try:
            import yaml

            data = yaml.safe_load(match[1])
            if data is not None and not isinstance(data, dict):
                errors.append({"message": "YAML metadata must be a mapping"})
        except Exception as exc:  # noqa: BLE001 - any YAML error is a validation error
            errors.append({"message": f"Invalid YAML: {exc}"})
    return _json({"errors": errors, "warnings": []}, 400 if errors else 200)


def _whoami(hub: HubServer, req: Request) -> Response:
    if not req.authorized:
        raise HubHTTPError(401, "Invalid credentials in Authorization header")
    return _json({"type": "user", "name": "user", "fullname": "Test User", "orgs": [], "auth": {}})


def _org_overview(hub: HubServer, req: Request, org: str) -> Response:
    known = any(repo_id.split("/")[0] == org for _, repo_id in hub.state.repos) or org in hub.state.trusted_orgs
    if not known:
        raise HubHTTPError(404, f"Organization not found: {org}")
    return _json(
        {"name": org, "fullname": org, "avatarUrl": "", "isVerified": False, "numUsers": 1,
         "trustedKernelPublisher": org in hub.state.trusted_orgs}
    )


def _repo_info(hub: HubServer, req: Request, repo_type: str, repo_id: str, rev: str | None, _: str) -> Response:
    repo = hub.state.repo(repo_type, repo_id, authorized=req.authorized)
    return _json(_info(hub, repo, hub.state.resolve(repo, rev or "main")))


def _refs(hub: HubServer, req: Request, repo_type: str, repo_id: str, _rev: str | None, _p: str) -> Response:
    repo = hub.state.repo(repo_type, repo_id, authorized=req.authorized)

    def refs(items: dict, kind: str) -> list[dict]:
        return [{"name": str(n), "ref": f"refs/{kind}/{n}", "targetCommit": oid} for n, oid in sorted(items.items())]

    data = {"branches": refs(repo.branches, "heads"), "tags": refs(repo.tags, "tags"), "converts": []}
    data["pullRequests"] = refs(repo.pulls, "pr") if req.flag("include_prs") else []
    return _json(data)


def _create_branch(hub: HubServer, req: Request, repo_type: str, repo_id: str, branch: str, rest: str) -> Response:
    repo = hub.state.repo(repo_type, repo_id, authorized=req.authorized)
    branch = "/".join(filter(None, [branch, rest]))
    if branch in repo.branches:
        raise HubHTTPError(409, f"Reference already exists: refs/heads/{branch}")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]*", branch) or branch.startswith("refs/"):
        raise HubHTTPError(400, f"Invalid branch name: {branch}")
    start = req.json().get("startingPoint") or "main"
    repo.branches[branch] = hub.state.resolve(repo, start)
    return _json({})


def _delete_branch(hub: HubServer, req: Request, repo_type: str, repo_id: str, branch: str, rest: str) -> Response:
    repo = hub.state.repo(repo_type, repo_id, authorized=req.authorized)
    branch = "/".join(filter(None, [branch, rest]))
    if branch not in repo.branches:
        raise _not_found("RevisionNotFound", f"Invalid rev id: {branch}")
    if branch == "main":
        raise HubHTTPError(403, "Cannot delete the main branch")
    del repo.branches[branch]
    return _json({})


def _create_tag(hub: HubServer, req: Request, repo_type: str, repo_id: str, rev: str, _p: str) -> Response:
    repo = hub.state.repo(repo_type, repo_id, authorized=req.authorized)
    tag = req.json().get("tag")
    if not tag:
        raise HubHTTPError(400, "Missing tag name")
    if tag in repo.tags:
        raise HubHTTPError(409, f"Tag already exists: {tag}")
    repo.tags[tag] = hub.state.resolve(repo, rev)
    return _json({})


def _paginated(req: Request, items: list, page_size: int, base_url: str, headers: dict) -> Response:
    start = int(req.query.get("cursor", ["0"])[0] or 0)
    page = items[start : start + page_size]
    if start + page_size < len(items):
        query = "&".join(f"{k}={quote(v[0])}" for k, v in req.query.items() if k != "cursor")
        link = f"{base_url}?{query}&cursor={start + page_size}" if query else f"{base_url}?cursor={start + page_size}"
        headers = {**headers, "Link": f'<{link}>; rel="next"'}
    return _json(page, headers=headers)


def _tree(hub: HubServer, req: Request, repo_type: str, repo_id: str, rev: str, path: str) -> Response:
    repo = hub.state.repo(repo_type, repo_id, authorized=req.authorized)
    oid = hub.state.resolve(repo, rev)
    entries = _tree_entries(hub.state, repo.commits[oid].files, path.strip("/"), req.flag("recursive"))
    return _paginated(req, entries, hub.tree_page_size, hub.endpoint + req.path, {"X-Repo-Commit": oid})


def _paths_info(hub: HubServer, req: Request, repo_type: str, repo_id: str, rev: str, _p: str) -> Response:
    repo = hub.state.repo(repo_type, repo_id, authorized=req.authorized)
    files = repo.commits[hub.state.resolve(repo, rev)].files
    form = parse_qs(req.body.decode())
    out = []
    for path in form.get("paths", []):
        if path in files:
            out.append(_file_entry(hub.state, path, files[path]))
        elif any(p.startswith(path.rstrip("/") + "/") for p in files):
            out.extend(e for e in _tree_entries(hub.state, files, "", True) if e["path"] == path.rstrip("/"))
    return _json(out)


def _commits(hub: HubServer, req: Request, repo_type: str, repo_id: str, rev: str, _p: str) -> Response:
    repo = hub.state.repo(repo_type, repo_id, authorized=req.authorized)
    oid: str | None = hub.state.resolve(repo, rev)
    items = []
    while oid is not None:
        c = repo.commits[oid]
        items.append({"id": c.oid, "title": c.title, "message": c.message, "date": c.date,
                      "authors": [{"user": "user"}]})
        oid = c.parent
    return _paginated(req, items, hub.commits_page_size, hub.endpoint + req.path, {})


def _preupload(hub: HubServer, req: Request, repo_type: str, repo_id: str, rev: str, _p: str) -> Response:
    repo = hub.state.repo(repo_type, repo_id, authorized=req.authorized)
    files = repo.commits[hub.state.resolve(repo, rev)].files
    body = req.json()
    if not isinstance(body.get("files"), list):
        raise HubHTTPError(400, "Expected a `files` list")
    threshold = hub.lfs_threshold
    out = []
    for f in body["files"]:
        current = files.get(f["path"])
        lfs = threshold is not None and int(f.get("size", 0)) >= threshold
        out.append(
            {
                "path": f["path"],
                "uploadMode": "lfs" if lfs else "regular",
                "shouldIgnore": False,
                "oid": hub.state.upload_oid(current) if current is not None else None,
            }
        )
    return _json({"files": out})


def _commit(hub: HubServer, req: Request, repo_type: str, repo_id: str, rev: str, _p: str) -> Response:
    state = hub.state
    repo = state.repo(repo_type, repo_id, authorized=req.authorized)
    try:
        lines = [json.loads(line) for line in req.body.splitlines() if line.strip()]
    except ValueError as exc:
        raise HubHTTPError(400, f"Invalid ndjson body: {exc}") from None
    if not lines or lines[0].get("key") != "header":
        raise HubHTTPError(400, "The first ndjson line must be the commit header")
    header = lines[0]["value"]
    create_pr = req.flag("create_pr")
    pr_match = _PR_REF.fullmatch(rev)
    if rev.startswith("refs/heads/"):
        rev = rev[len("refs/heads/") :]
    if pr_match:
        if int(pr_match[1]) not in repo.pulls:
            raise _not_found("RevisionNotFound", f"Invalid rev id: {rev}")
    elif rev not in repo.branches:
        if rev in repo.tags or repo.resolve(rev) is not None:
            raise HubHTTPError(400, f"Invalid rev id: {rev} is not a branch")
        raise _not_found("RevisionNotFound", f"Invalid rev id: {rev}")
    head = state.resolve(repo, rev)
    parent = header.get("parentCommit")
    if parent is not None:
        if not create_pr and not head.startswith(parent):
            raise HubHTTPError(412, "A commit has happened since. Please refresh and try again.")
        if create_pr:
            head = state.resolve(repo, parent)
    tree = dict(repo.commits[head].files)
    blobs: dict[str, bytes] = {}
    for line in lines[1:]:
        key, value = line.get("key"), line.get("value") or {}
        path = str(value.get("path", "")).strip("/")
        if not path or ".." in path.split("/"):
            raise HubHTTPError(400, f"Invalid path in commit: {value.get('path')!r}")
        if key == "file":
            if value.get("encoding") != "base64":
                raise HubHTTPError(400, f"Unsupported encoding for {path}: {value.get('encoding')}")
            data = base64.b64decode(value.get("content", ""), validate=True)
            blobs[path] = data
            tree[path] = git_blob_oid(data)
        elif key == "deletedFile":
            if path not in tree:
                raise _not_found("EntryNotFound", f"A file with this name doesn't exist: {path}")
            del tree[path]
        elif key == "deletedFolder":
            doomed = [p for p in tree if p.startswith(path + "/")]
            if not doomed:
                raise _not_found("EntryNotFound", f"A folder with this name doesn't exist: {path}")
            for p in doomed:
                del tree[p]
        elif key == "lfsFile":
            sha = str(value.get("oid", ""))
            if value.get("algo", "sha256") != "sha256" or sha not in state.lfs_objects:
                raise HubHTTPError(400, f"LFS object {sha} for {path} was never uploaded")
            tree[path] = state.put_lfs_pointer(sha)
        else:
            raise HubHTTPError(400, f"Unsupported commit operation: {key!r}")
    for data in blobs.values():
        state.put_blob(data)
    oid = state.new_commit(repo, head, tree, header.get("summary") or "", header.get("description") or "")
    prefix = URL_PREFIX[repo_type]
    body: dict[str, Any] = {"commitOid": oid, "commitUrl": f"{hub.endpoint}/{prefix}{repo_id}/commit/{oid}"}
    if create_pr:
        number = max([0, *repo.pulls]) + 1
        repo.pulls[number] = oid
        body["pullRequestUrl"] = f"{hub.endpoint}/{prefix}{repo_id}/discussions/{number}"
    elif pr_match:
        repo.pulls[int(pr_match[1])] = oid
    else:
        repo.branches[rev] = oid
    return _json(body)


def _lfs_batch(hub: HubServer, req: Request, repo_type: str, repo_id: str) -> Response:
    hub.state.repo(repo_type, repo_id, authorized=req.authorized)
    body = req.json()
    if body.get("operation") != "upload" or not isinstance(body.get("objects"), list):
        raise HubHTTPError(400, "Only LFS upload batches are supported")
    objects = []
    for obj in body["objects"]:
        oid, size = str(obj.get("oid")), int(obj.get("size", -1))
        entry: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
        if oid not in hub.state.lfs_objects:  # already stored: no action, the client skips it
            href = f"{hub.endpoint}/lfs-upload/{repo_type}/{repo_id}/{oid}"
            entry["actions"] = {"upload": {"href": href, "expires_in": 3600}}
        objects.append(entry)
    response = _json({"transfer": "basic", "objects": objects})
    response.content_type = "application/vnd.git-lfs+json"
    return response


def _lfs_upload(hub: HubServer, req: Request, repo_type: str, repo_id: str, oid: str) -> Response:
    hub.state.repo(repo_type, repo_id, authorized=True)
    if hashlib.sha256(req.body).hexdigest() != oid:
        raise HubHTTPError(400, f"LFS object content does not match its sha256 {oid}")
    hub.state.lfs_objects[oid] = req.body
    return Response(200, b"", {}, "text/plain")


def _xet_unsupported(hub: HubServer, req: Request) -> Response:
    raise HubHTTPError(404, "This test server stores every file as a regular (inline) file")


def _resolve(hub: HubServer, req: Request, repo_type: str, repo_id: str, rev: str, path: str) -> Response:
    state = hub.state
    repo = state.repo(repo_type, repo_id, authorized=req.authorized)
    commit = state.resolve(repo, rev)
    blob = repo.commits[commit].files.get(path)
    if blob is None:
        raise HubHTTPError(404, f"Entry not found: {path}", "EntryNotFound", extra={"X-Repo-Commit": commit})
    data = state.content(blob)
    etag = state.lfs_pointers.get(blob, blob)  # the Hub's ETag of an LFS file is its sha256
    headers = {"X-Repo-Commit": commit, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
    status = 200
    if (rng := req.headers.get("Range")) and (m := re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())):
        start = int(m[1]) if m[1] else max(len(data) - int(m[2] or 0), 0)
        end = int(m[2]) if m[1] and m[2] else len(data) - 1
        if start >= len(data) and len(data) > 0:
            raise HubHTTPError(416, "Requested range not satisfiable")
        headers["Content-Range"] = f"bytes {start}-{min(end, len(data) - 1)}/{len(data)}"
        data, status = data[start : end + 1], 206
    return Response(status, data, headers, "application/octet-stream")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub: HubServer  # set on the per-server subclass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        body = self._read_body()
        head_bytes = len(self.requestline) + 2 + len(bytes(self.headers)) if self.headers else 0
        split = urlsplit(self.path)
        segments = [s for s in split.path.split("/") if s]
        route = _route(self.command, segments)
        endpoint = route[0] if route else "unknown"
        req = Request(
            self.command, split.path, parse_qs(split.query, keep_blank_values=True), self.headers, body,
            authorized=bool(self.headers.get("Authorization")),
        )
        state = self.hub.state
        with state.lock:
            drop = state.take_drop(endpoint)
            try:
                if route is None:
                    raise HubHTTPError(404, f"No such endpoint: {self.command} {split.path}")
                if drop is False:
                    response = Response(0, b"", {}, "")
                elif injected := state.take_failure(endpoint):
                    raise HubHTTPError(injected[0], injected[1])
                else:
                    response = route[1](self.hub, req, *route[2])
            except HubHTTPError as exc:
                response = _error_response(exc)
            status = 0 if drop is not None else response.status  # 0: no answer was sent
            state.requests.append(
                HubRequest(self.command, self.path, endpoint, status, head_bytes + len(body), len(body), req.authorized)
            )
        if drop is not None:
            self.close_connection = True  # the socket closes with no status line sent
            return
        self._send(response)

    def _send(self, response: Response) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        for key, value in response.headers.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle


def _error_response(exc: HubHTTPError) -> Response:
    headers = {"X-Error-Message": exc.message}
    if exc.code:
        headers["X-Error-Code"] = exc.code
    body: dict[str, Any] = {"error": exc.message}
    for key, value in exc.extra.items():
        (headers if key.startswith("X-") else body)[key] = value
    return _json(body, exc.status, headers)
