"""The local Hub server against the real client: huggingface_hub's HfApi and kernels."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from hubserver import git_blob_oid

REPO = "org/relu"


def _api(hub_server) -> HfApi:
    return HfApi(endpoint=hub_server.endpoint, token=False)


def _add(path: str, data: bytes) -> CommitOperationAdd:
    return CommitOperationAdd(path_in_repo=path, path_or_fileobj=data)


class TestRepos:
    def test_create_repo_then_conflict(self, hub_server):
        api = _api(hub_server)
        url = api.create_repo(REPO, repo_type="kernel")
        assert url.repo_id == REPO and url.repo_type == "kernel"
        assert api.create_repo(REPO, repo_type="kernel", exist_ok=True).repo_id == REPO
        with pytest.raises(HfHubHTTPError) as err:
            api.create_repo(REPO, repo_type="kernel")
        assert err.value.response.status_code == 409
        # A new repo starts with one commit holding .gitattributes on main.
        assert api.list_repo_files(REPO, repo_type="kernel") == [".gitattributes"]

    def test_repo_types_are_separate(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        with pytest.raises(RepositoryNotFoundError):
            api.model_info(REPO)
        assert api.kernel_info(REPO).id == REPO

    def test_missing_repo_revision_entry(self, hub_server, tmp_path):
        api = _api(hub_server)
        with pytest.raises(RepositoryNotFoundError):
            api.kernel_info("org/none")
        api.create_repo(REPO, repo_type="kernel")
        with pytest.raises(RevisionNotFoundError):
            api.kernel_info(REPO, revision="v9")
        with pytest.raises(EntryNotFoundError):
            api.hf_hub_download(REPO, "nope.txt", repo_type="kernel", cache_dir=tmp_path)
        codes = [r.status for r in hub_server.requests if r.endpoint in ("repo_info", "resolve")]
        assert codes == [404, 404, 404]

    def test_private_repo_needs_a_token(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel", private=True)
        with pytest.raises(RepositoryNotFoundError):
            api.kernel_info(REPO)
        assert HfApi(endpoint=hub_server.endpoint, token="hf_test").kernel_info(REPO).private is True


class TestBranchesAndCommits:
    def test_branch_conflict_and_refs(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        api.create_branch(REPO, repo_type="kernel", branch="v1")
        with pytest.raises(HfHubHTTPError) as err:
            api.create_branch(REPO, repo_type="kernel", branch="v1")
        assert err.value.response.status_code == 409
        api.create_branch(REPO, repo_type="kernel", branch="v1", exist_ok=True)
        refs = api.list_repo_refs(REPO, repo_type="kernel")
        assert [(b.name, b.ref) for b in refs.branches] == [("main", "refs/heads/main"), ("v1", "refs/heads/v1")]

    def test_commit_add_delete_and_noop(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        api.create_branch(REPO, repo_type="kernel", branch="v1")
        first = api.create_commit(
            REPO, repo_type="kernel", revision="v1", commit_message="add",
            operations=[_add("build/a/x.py", b"x = 1\n"), _add("build/b/y.py", b"y = 2\n")],
        )
        assert hub_server.head(REPO, "v1") == first.oid
        assert hub_server.head(REPO, "main") != first.oid  # main untouched
        again = api.create_commit(
            REPO, repo_type="kernel", revision="v1", commit_message="same",
            operations=[_add("build/a/x.py", b"x = 1\n")],
        )
        assert again.oid == first.oid and hub_server.count("commit") == 1
        api.create_commit(
            REPO, repo_type="kernel", revision="v1", commit_message="del",
            operations=[CommitOperationDelete("build/a/")],
        )
        assert sorted(hub_server.files(REPO, "v1")) == [".gitattributes", "build/b/y.py"]
        assert hub_server.history(REPO, "v1") == ["del", "add", "initial commit"]

    def test_stale_parent_commit_is_412(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        old = hub_server.head(REPO)
        hub_server.commit_files(REPO, {"a.txt": b"a"})
        with pytest.raises(HfHubHTTPError) as err:
            api.create_commit(
                REPO, repo_type="kernel", commit_message="late", parent_commit=old,
                operations=[_add("b.txt", b"b")],
            )
        assert err.value.response.status_code == 412
        assert "b.txt" not in hub_server.files(REPO)

    def test_commit_to_missing_branch_is_revision_not_found(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        with pytest.raises(RevisionNotFoundError):
            api.create_commit(REPO, repo_type="kernel", revision="v7", commit_message="x",
                              operations=[_add("a", b"a")])

    def test_delete_missing_file_is_entry_not_found(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        with pytest.raises(EntryNotFoundError):
            api.create_commit(REPO, repo_type="kernel", commit_message="x",
                              operations=[CommitOperationDelete("ghost.py")])

    def test_injected_failure_changes_nothing(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        before = hub_server.head(REPO)
        hub_server.fail_next("commit", status=500, message="boom")
        with pytest.raises(HfHubHTTPError) as err:
            api.create_commit(REPO, repo_type="kernel", commit_message="x", operations=[_add("a", b"a")])
        assert err.value.response.status_code == 500 and "boom" in str(err.value)
        assert hub_server.head(REPO) == before
        api.create_commit(REPO, repo_type="kernel", commit_message="x", operations=[_add("a", b"a")])
        assert hub_server.files(REPO)["a"] == b"a"

    def test_create_pr_makes_a_pr_ref(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        info = api.create_commit(REPO, repo_type="kernel", commit_message="pr", create_pr=True,
                                 operations=[_add("a", b"a")])
        assert info.pr_revision == "refs/pr/1"
        assert "a" not in hub_server.files(REPO, "main")
        assert hub_server.files(REPO, "refs/pr/1")["a"] == b"a"

    def test_validate_yaml_rejects_bad_front_matter(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        with pytest.raises(ValueError, match="Invalid metadata in README.md"):
            api.create_commit(REPO, repo_type="kernel", commit_message="card",
                              operations=[_add("README.md", b"---\n- a list\n---\n")])
        assert hub_server.count("commit") == 0


class TestRevisionsAndTrees:
    def test_branch_wins_over_tag_then_commit(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        tagged = hub_server.commit_files(REPO, {"f": b"tagged"})
        hub_server.create_tag(REPO, "x", tagged)
        hub_server.commit_files(REPO, {"f": b"later"})
        hub_server.create_branch(REPO, "x", start=hub_server.head(REPO))
        assert api.kernel_info(REPO, revision="x").sha == hub_server.head(REPO, "x") != tagged
        assert api.kernel_info(REPO, revision="refs/tags/x").sha == tagged
        assert api.kernel_info(REPO, revision=tagged[:10]).sha == tagged

    def test_tree_listing_and_pagination(self, hub_server):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        hub_server.create_branch(REPO, "v1")
        files = {f"build/torch-cpu/m{i}.py": b"%d" % i for i in range(7)}
        files["build/torch-cuda/__init__.py"] = b""
        hub_server.commit_files(REPO, files, branch="v1")
        hub_server.tree_page_size = 3
        top = list(api.list_repo_tree(REPO, repo_type="kernel", revision="refs/heads/v1", path_in_repo="build"))
        assert [e.path for e in top] == ["build/torch-cpu", "build/torch-cuda"]
        listed = api.list_repo_files(REPO, repo_type="kernel", revision="v1")
        assert sorted(listed) == sorted([".gitattributes", *files])
        pages = [r for r in hub_server.requests if r.endpoint == "tree" and "recursive=true" in r.path]
        assert len(pages) > 3  # followed Link: rel="next"
        entry = next(e for e in api.list_repo_tree(REPO, repo_type="kernel", revision="v1", path_in_repo="build/torch-cpu"))
        assert entry.blob_id == git_blob_oid(b"0") and entry.size == 1
        with pytest.raises(EntryNotFoundError):
            list(api.list_repo_tree(REPO, repo_type="kernel", revision="v1", path_in_repo="nothing"))


class TestDownloads:
    def test_resolve_headers(self, hub_server):
        import httpx2

        _api(hub_server).create_repo(REPO, repo_type="kernel")
        commit = hub_server.commit_files(REPO, {"dir/a b.txt": b"hello"})
        r = httpx2.head(f"{hub_server.endpoint}/kernels/{REPO}/resolve/main/dir/a%20b.txt")
        assert r.status_code == 200
        assert r.headers["X-Repo-Commit"] == commit
        assert r.headers["ETag"] == f'"{git_blob_oid(b"hello")}"'
        assert r.headers["Content-Length"] == "5"
        part = httpx2.get(f"{hub_server.endpoint}/kernels/{REPO}/resolve/{commit}/dir/a%20b.txt",
                          headers={"Range": "bytes=1-"})
        assert part.status_code == 206 and part.content == b"ello"

    def test_hf_hub_download_and_snapshot(self, hub_server, tmp_path):
        api = _api(hub_server)
        api.create_repo(REPO, repo_type="kernel")
        hub_server.create_branch(REPO, "v1")
        commit = hub_server.commit_files(REPO, {"build/torch-cpu/a.py": b"A", "README.md": b"R"}, branch="v1")
        path = api.hf_hub_download(REPO, "build/torch-cpu/a.py", repo_type="kernel", revision="v1",
                                   cache_dir=tmp_path)
        assert open(path, "rb").read() == b"A"
        snap = api.snapshot_download(REPO, repo_type="kernel", revision="v1", cache_dir=tmp_path,
                                     allow_patterns=["build/*"])
        assert snap.endswith(commit)
        assert (tmp_path / f"kernels--org--relu/snapshots/{commit}/build/torch-cpu/a.py").read_bytes() == b"A"


KERNEL_INIT = b"import torch\n\ndef relu(x):\n    return torch.clamp(x, min=0)\n\n__all__ = ['relu']\n"


def _noarch_files() -> dict[str, bytes]:
    import base64
    import hashlib

    files = {"__init__.py": KERNEL_INIT, "_ops.py": b"import torch\nops = torch.ops._srv_relu_cpu_0000001\n"}
    digest = {p: base64.b64encode(hashlib.sha256(d).digest()).decode() for p, d in sorted(files.items())}
    meta = {"name": "srv-relu", "id": "_srv_relu_cpu_0000001", "version": 1, "license": "apache-2.0",
            "python-depends": [], "backend": {"type": "cpu"},
            "digest": {"algorithm": "sha256", "files": digest}}
    files["metadata.json"] = json.dumps(meta).encode()
    return {f"build/torch-cpu/{p}": d for p, d in files.items()}


LOAD = textwrap.dedent(
    """
    import sys, torch, kernels
    kwargs = {"trust_remote_code": True} if sys.argv[2] == "1" else {}
    try:
        k = kernels.get_kernel(sys.argv[1], version=1, **kwargs)
    except ValueError as exc:
        print("REFUSED", exc)
        raise SystemExit(3)
    x = torch.randn(64)
    assert torch.equal(k.relu(x), torch.relu(x))
    print("OK", type(k).__name__)
    """
)


@pytest.mark.timeout(180)
def test_kernels_get_kernel_against_server(hub_server):
    hub_server.create_repo("trusted/srv-relu")
    hub_server.create_branch("trusted/srv-relu", "v1")
    hub_server.commit_files("trusted/srv-relu", _noarch_files(), branch="v1")
    hub_server.trust_org("trusted")
    ok = subprocess.run([sys.executable, "-c", LOAD, "trusted/srv-relu", "0"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "OK" in ok.stdout
    assert hub_server.count("org_overview") == 1
    assert hub_server.count("refs") >= 1  # version=1 resolves through list_repo_refs

    hub_server.trust_org("trusted", False)
    hub_server.create_repo("stranger/srv-relu")
    hub_server.create_branch("stranger/srv-relu", "v1")
    hub_server.commit_files("stranger/srv-relu", _noarch_files(), branch="v1")
    refused = subprocess.run([sys.executable, "-c", LOAD, "stranger/srv-relu", "0"], capture_output=True, text=True)
    assert refused.returncode == 3, refused.stderr
    assert "trusted" in refused.stdout


def test_paths_info_commits_and_exists(hub_server):
    api = _api(hub_server)
    api.create_repo(REPO, repo_type="kernel")
    commit = hub_server.commit_files(REPO, {"build/torch-cpu/a.py": b"A"}, title="add a")
    infos = api.get_paths_info(REPO, ["build/torch-cpu/a.py", "build", "missing"], repo_type="kernel")
    assert sorted((type(i).__name__, i.path) for i in infos) == [("RepoFile", "build/torch-cpu/a.py"),
                                                                 ("RepoFolder", "build")]
    commits = api.list_repo_commits(REPO, repo_type="kernel")
    assert [c.commit_id for c in commits][0] == commit and [c.title for c in commits] == ["add a", "initial commit"]
    assert api.file_exists(REPO, "build/torch-cpu/a.py", repo_type="kernel")
    assert not api.file_exists(REPO, "build/torch-cpu/b.py", repo_type="kernel")
    assert api.repo_exists(REPO, repo_type="kernel") and not api.repo_exists("org/other", repo_type="kernel")


def test_lfs_uploads_when_asked(hub_server, tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)  # the server speaks git-lfs, not xet
    hub_server.lfs_threshold = 1024
    api = _api(hub_server)
    api.create_repo(REPO, repo_type="kernel")
    big, small = bytes(range(256)) * 16, b"small\n"
    api.create_commit(REPO, repo_type="kernel", commit_message="lfs",
                      operations=[_add("lib/k.so", big), _add("k.py", small)])
    assert hub_server.count("lfs_batch") == 1 and hub_server.count("lfs_upload") == 1
    assert hub_server.files(REPO)["lib/k.so"] == big
    entry = next(e for e in api.list_repo_tree(REPO, repo_type="kernel", path_in_repo="lib"))
    assert entry.lfs.sha256 == __import__("hashlib").sha256(big).hexdigest() and entry.size == len(big)
    assert entry.blob_id != git_blob_oid(big)  # git stores the pointer
    path = api.hf_hub_download(REPO, "lib/k.so", repo_type="kernel", cache_dir=tmp_path)
    assert open(path, "rb").read() == big
    # Same content again: the client sees the sha256 in preupload and commits nothing.
    api.create_commit(REPO, repo_type="kernel", commit_message="again", operations=[_add("lib/k.so", big)])
    assert hub_server.count("commit") == 1 and hub_server.count("lfs_upload") == 1
