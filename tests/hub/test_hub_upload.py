"""``kernel-builder upload`` against the local Hub server, checked with the real loader."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hub_trees import make_kernel, rehash, write_variant

REPO = "org/hub-relu"
SECRET = "hf_upload_test_token_do_not_print_8c1d"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernel_builder", "upload", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def _api(hub_server):
    from kernel_builder.hub.client import make_api

    return make_api(hub_server.endpoint)


def _upload(hub_server, directory: Path, **kwargs):
    from kernel_builder.hub.upload import UploadOptions, upload

    return upload(UploadOptions(directory, **kwargs), _api(hub_server))


LOAD = textwrap.dedent(
    """
    import sys, torch, kernels
    kernel = kernels.get_kernel(sys.argv[1], version=int(sys.argv[2]), trust_remote_code=True)
    x = torch.randn(1000)
    assert torch.equal(kernel.relu(x), torch.relu(x)), "relu differs from torch.relu"
    print("scale", kernel.scale(torch.ones(1)).item())
    """
)


@pytest.mark.timeout(240)
def test_upload_then_load_with_kernels(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    out = tmp_path / "result.json"
    done = run_cli(str(root), "--output-json", str(out), env={"HF_TOKEN": SECRET})
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert all(r.authorization for r in hub_server.write_requests())  # the token was sent, never shown
    progress = done.stderr.splitlines()
    assert f"Creating kernel repository {REPO}" in progress and any(l.startswith("Committing to v1: ") for l in progress)

    result = json.loads(out.read_text())
    assert result == {
        "status": "uploaded",
        "repo_id": REPO,
        "branch": "v1",
        "url": f"{hub_server.endpoint}/kernels/{REPO}/tree/v1",
        "pull_requests": [],
    }
    files = hub_server.files(REPO, "v1")
    assert files["build/torch-cpu/__init__.py"] == (root / "build/torch-cpu/__init__.py").read_bytes()
    assert "benchmarks/benchmark.py" in files and "README.md" not in files
    readme = hub_server.files(REPO, "main")["README.md"].decode()
    assert 'get_kernel("org/hub-relu", version=1)' in readme and "- `relu`" in readme
    # One commit per branch on top of the branch's start.
    assert hub_server.history(REPO, "v1") == ["Uploaded using `kernel-builder`.", "initial commit"]
    assert hub_server.history(REPO, "main") == ["Uploaded using `kernel-builder`.", "initial commit"]

    load = subprocess.run([sys.executable, "-c", LOAD, REPO, "1"], capture_output=True, text=True, timeout=180)
    assert load.returncode == 0, load.stderr
    assert "scale 2.0" in load.stdout
    # The loader only fetched the cpu variant.
    fetched = {r.path for r in hub_server.requests if r.endpoint == "resolve"}
    assert fetched and all("torch-cpu" in p for p in fetched)


def test_reupload_unchanged_makes_no_commit(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    assert run_cli(str(root)).returncode == 0
    heads = hub_server.branches(REPO)
    hub_server.clear_log()
    again = run_cli(str(root), "--output-json", "-")
    assert again.returncode == 0, again.stderr
    assert "No changes" in again.stdout
    assert json.loads(again.stdout[again.stdout.index("{") :])["status"] == "no_changes"
    assert hub_server.branches(REPO) == heads
    assert hub_server.write_requests() == []
    assert sum(r.body_bytes for r in hub_server.requests) == 0  # nothing was sent, not even samples


def test_removed_variant_stays_on_the_hub(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    _upload(hub_server, root)
    shutil.rmtree(root / "build" / "torch-cuda")
    result = _upload(hub_server, root)
    assert result.status == "no_changes"
    assert "build/torch-cuda/__init__.py" in hub_server.files(REPO, "v1")


def test_changed_variant_replaces_its_stale_files_only(hub_server, tmp_path):
    root = tmp_path / "relu"
    make_kernel(root)
    write_variant(root / "build", "cpu", extra={"old_helper.py": b"OLD = 1\n"})
    _upload(hub_server, root)
    before = hub_server.files(REPO, "v1")
    assert "build/torch-cpu/old_helper.py" in before

    (root / "build/torch-cpu/old_helper.py").unlink()
    write_variant(root / "build", "cpu", factor=3.0)
    result = _upload(hub_server, root)
    assert result.status == "uploaded" and len(result.commits) == 1  # card unchanged: one commit on v1
    after = hub_server.files(REPO, "v1")
    assert "build/torch-cpu/old_helper.py" not in after
    assert b"factor: float = 3.0" in after["build/torch-cpu/__init__.py"]
    cuda = {p: d for p, d in before.items() if p.startswith("build/torch-cuda/")}
    assert cuda and all(after[p] == d for p, d in cuda.items())
    assert len(hub_server.history(REPO, "v1")) == 3


def test_new_version_goes_to_a_new_branch(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    _upload(hub_server, root)
    v1 = hub_server.head(REPO, "v1")
    v1_files = hub_server.files(REPO, "v1")
    # Something under build/ on main must not leak into a new version branch.
    hub_server.commit_files(REPO, {"build/stray/x.py": b"x"}, branch="main")

    shutil.rmtree(root / "build")
    make_kernel(root, version=2)
    result = _upload(hub_server, root)
    assert result.branch == "v2" and result.status == "uploaded"
    assert hub_server.head(REPO, "v1") == v1 and hub_server.files(REPO, "v1") == v1_files
    v2 = hub_server.files(REPO, "v2")
    assert "build/stray/x.py" not in v2
    assert b'"version": 2' in v2["build/torch-cpu/metadata.json"]
    assert "version=2" in hub_server.files(REPO, "main")["README.md"].decode()


def test_branch_option_and_build_toml_branch(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu", branch="release")
    assert _upload(hub_server, root).branch == "release"
    assert _upload(hub_server, root, branch="other").branch == "other"
    assert {"release", "other"} <= set(hub_server.branches(REPO))


def test_commit_failure_leaves_branch_unchanged_and_rerun_works(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    _upload(hub_server, root)
    head = hub_server.head(REPO, "v1")
    write_variant(root / "build", "cpu", factor=5.0)

    hub_server.fail_next("commit", status=500, message="storage backend unavailable")
    failed = run_cli(str(root), env={"HF_TOKEN": SECRET})
    assert failed.returncode == 6
    assert SECRET not in failed.stdout + failed.stderr  # not even in the error report
    assert "HTTP 500" in failed.stderr and "storage backend unavailable" in failed.stderr
    assert "rerunning `kernel-builder upload` is safe" in failed.stderr
    assert hub_server.head(REPO, "v1") == head

    rerun = run_cli(str(root))
    assert rerun.returncode == 0, rerun.stderr
    assert b"5.0" in hub_server.files(REPO, "v1")["build/torch-cpu/__init__.py"]


def test_failed_first_commit_on_a_new_branch_removes_the_branch(hub_server, tmp_path):
    from kernel_builder.errors import HubError

    root = make_kernel(tmp_path / "relu")
    hub_server.fail_next("commit", status=503)
    with pytest.raises(HubError, match="HTTP 503"):
        _upload(hub_server, root)
    assert set(hub_server.branches(REPO)) == {"main"}  # neither v1 nor its staging branch
    assert _upload(hub_server, root).status == "uploaded"


def test_stale_parent_commit_is_reported(hub_server, tmp_path, monkeypatch):
    from kernel_builder.errors import HubError
    from kernel_builder.hub import upload as upload_mod

    root = make_kernel(tmp_path / "relu")
    _upload(hub_server, root)
    write_variant(root / "build", "cpu", factor=7.0)
    real = upload_mod._remote_files

    def listing_then_push(api, repo_id, repo_type, commit, recursive=True):
        files = real(api, repo_id, repo_type, commit, recursive)
        if recursive:  # someone else pushes to v1 right after we listed it
            hub_server.commit_files(REPO, {"build/torch-cpu/other.py": b"1"}, branch="v1", title="concurrent")
        return files

    monkeypatch.setattr(upload_mod, "_remote_files", listing_then_push)
    with pytest.raises(HubError, match="HTTP 412") as err:
        _upload(hub_server, root)
    assert "changed while uploading" in str(err.value)
    assert hub_server.history(REPO, "v1")[0] == "concurrent"


def test_dry_run_writes_nothing(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    fresh = run_cli(str(root), "--dry-run")
    assert fresh.returncode == 0, fresh.stderr
    assert "(would be created)" in fresh.stdout
    assert "add    build/torch-cpu/__init__.py" in fresh.stdout
    assert "add    README.md" in fresh.stdout
    assert not hub_server.has_repo(REPO)

    _upload(hub_server, root)
    (root / "build/torch-cuda/layers.py").unlink()
    rehash(root / "build/torch-cuda")
    hub_server.clear_log()
    planned = run_cli(str(root), "--dry-run", "--output-json", str(tmp_path / "o.json"))
    assert planned.returncode == 0, planned.stderr
    assert "delete build/torch-cuda/layers.py" in planned.stdout
    assert "add    build/torch-cuda/metadata.json" in planned.stdout
    assert "build/torch-cpu" not in planned.stdout  # unchanged files are not listed
    assert json.loads((tmp_path / "o.json").read_text())["status"] == "dry_run"
    assert hub_server.write_requests() == [] and hub_server.requests
    assert all(r.method == "GET" for r in hub_server.requests)


def test_digest_mismatch_refuses_unless_forced(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    (root / "build/torch-cpu/_ops.py").write_text("# edited after hashing\n")
    refused = run_cli(str(root))
    assert refused.returncode == 8
    assert "File hash mismatch for _ops.py" in refused.stderr and "--force" in refused.stderr
    assert hub_server.requests == []
    forced = run_cli(str(root), "--force")
    assert forced.returncode == 0, forced.stderr
    assert hub_server.files(REPO, "v1")["build/torch-cpu/_ops.py"] == b"# edited after hashing\n"


def test_layout_failure_refuses_unless_forced(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    (root / "build/torch-cuda/__init__.py").unlink()
    rehash(root / "build/torch-cuda")  # digests match: only the layout is wrong
    refused = run_cli(str(root))
    assert refused.returncode == 8
    assert "torch-cuda: layout: __init__.py is missing at the top of the variant" in refused.stderr
    assert "--force" in refused.stderr
    assert hub_server.requests == []
    forced = run_cli(str(root), "--force")
    assert forced.returncode == 0, forced.stderr
    assert "build/torch-cuda/_ops.py" in hub_server.files(REPO, "v1")


def test_missing_digest_refuses(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    meta = json.loads((root / "build/torch-cuda/metadata.json").read_text())
    del meta["digest"]
    (root / "build/torch-cuda/metadata.json").write_text(json.dumps(meta))
    refused = run_cli(str(root))
    assert refused.returncode == 8 and "no digest" in refused.stderr


def test_versions_must_agree(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    write_variant(root / "build", "cuda", version=2)
    refused = run_cli(str(root))
    assert refused.returncode == 8
    assert "disagree on the version" in refused.stderr and "torch-cuda: v2" in refused.stderr


def test_repo_id_is_required(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu", repo_id=None)
    refused = run_cli(str(root))
    assert refused.returncode == 3 and "--repo-id" in refused.stderr
    ok = run_cli(str(root), "--repo-id", "other/relu")
    assert ok.returncode == 0, ok.stderr
    assert hub_server.has_repo("other/relu")


def test_dirty_variants_warn(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    write_variant(root / "build", "cuda", dirty=True)
    done = run_cli(str(root))
    assert done.returncode == 0
    assert "dirty" in done.stderr and "torch-cuda" in done.stderr and "torch-cpu" not in done.stderr.split("dirty")[1]
    assert "warning: built from a dirty git tree (uncommitted changes): torch-cuda" in done.stderr.splitlines()


def test_bare_build_tree_and_model_repo(hub_server, tmp_path):
    """A tree without build.toml (e.g. a nix result) uploads with --repo-id and a default card."""
    build = tmp_path / "bundle"
    write_variant(build, "cpu")
    done = run_cli(str(build), "--repo-id", "org/bare", "--repo-type", "model", "--private",
                   env={"HF_TOKEN": SECRET})
    assert done.returncode == 0, done.stderr
    assert hub_server.has_repo("org/bare", repo_type="model")
    assert not hub_server.has_repo("org/bare", repo_type="kernel")
    files = hub_server.files("org/bare", "v1", repo_type="model")
    assert "build/torch-cpu/__init__.py" in files
    assert "- `scale`" in hub_server.files("org/bare", "main", repo_type="model")["README.md"].decode()


def test_bare_tree_with_a_card_for_another_repo_is_refused(hub_server, tmp_path):
    """A bare tree's card made from the kernel's own template cannot be rendered again for
    another repository: upload stops before talking to the Hub, naming both and the way out."""
    from kernel_builder.hub.card import CardStamp

    build = tmp_path / "bundle"
    write_variant(build, "cpu")
    (build / "CARD.md").write_text(f"# org/old\n\n{CardStamp('org/old', False).line()}\n")
    done = run_cli(str(build), "--repo-id", "org/new", env={"HF_TOKEN": SECRET})
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert "rendered for org/old" in done.stderr and "org/new" in done.stderr
    assert "upload from the kernel's directory" in done.stderr
    assert not hub_server.has_repo("org/new") and hub_server.write_requests() == []


def test_create_pr(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    refused = run_cli(str(root), "--create-pr")
    assert refused.returncode == 6 and "cannot create it" in refused.stderr
    _upload(hub_server, root)
    head = hub_server.head(REPO, "v1")
    write_variant(root / "build", "cpu", factor=9.0)
    done = run_cli(str(root), "--create-pr", "--output-json", "-")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout[done.stdout.index("{") :])
    assert result["status"] == "pull_request_created"
    assert result["pull_requests"] == [{"branch": "v1", "url": f"{hub_server.endpoint}/kernels/{REPO}/discussions/1"}]
    assert hub_server.head(REPO, "v1") == head
    assert b"9.0" in hub_server.files(REPO, "refs/pr/1")["build/torch-cpu/__init__.py"]


def test_batches_only_above_the_limit(hub_server, tmp_path, monkeypatch):
    from kernel_builder.hub import upload as upload_mod

    root = make_kernel(tmp_path / "relu", backends=("cpu",), benchmark=False)
    monkeypatch.setattr(upload_mod, "MAX_OPS_PER_COMMIT", 3)
    result = _upload(hub_server, root)
    assert len(result.commits) == 3  # 4 variant files -> 2 batches on v1, the card on main
    assert hub_server.history(REPO, "v1")[:2] == [
        "Uploaded using `kernel-builder`. (batch 2/2)",
        "Uploaded using `kernel-builder`. (batch 1/2)",
    ]
    monkeypatch.setattr(upload_mod, "MAX_OPS_PER_COMMIT", 1000)
    write_variant(root / "build", "cpu", factor=4.0)
    assert len(_upload(hub_server, root).commits) == 1


@pytest.mark.timeout(240)
def test_lfs_files_upload_compare_and_load(hub_server, tmp_path, monkeypatch):
    """When the Hub routes big files to LFS, unchanged ones are still recognised by sha256."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    hub_server.lfs_threshold = 4096
    root = make_kernel(tmp_path / "relu")
    table = os.urandom(64 << 10)
    write_variant(root / "build", "cpu", extra={"table.bin": table})
    assert _upload(hub_server, root).status == "uploaded"
    assert hub_server.count("lfs_upload") == 1
    assert hub_server.files(REPO, "v1")["build/torch-cpu/table.bin"] == table

    hub_server.clear_log()
    again = _upload(hub_server, root)
    assert again.status == "no_changes" and not again.plans[0].adds
    assert sum(r.body_bytes for r in hub_server.requests) == 0

    load = subprocess.run([sys.executable, "-c", LOAD, REPO, "1"], capture_output=True, text=True, timeout=180)
    assert load.returncode == 0, load.stderr


def test_progress_and_warnings_go_to_the_module_logger(hub_server, tmp_path, caplog):
    root = make_kernel(tmp_path / "relu")
    write_variant(root / "build", "cuda", dirty=True)
    with caplog.at_level("INFO", logger="kernel_builder.hub.upload"):
        _upload(hub_server, root)
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "kernel_builder.hub.upload"]
    assert ("WARNING", "built from a dirty git tree (uncommitted changes): torch-cuda") in records
    assert ("INFO", f"Creating kernel repository {REPO}") in records
    assert any(level == "INFO" and message.startswith("Committing to v1: ") for level, message in records), records


def test_a_tree_narrowed_with_cuda_capabilities_refuses_unless_forced(hub_server, tmp_path):
    root = make_kernel(tmp_path / "relu")
    path = root / "build/torch-cuda/metadata.json"
    meta = json.loads(path.read_text())
    meta.setdefault("provenance", {"kernel-builder": {"version": "0.1.0"}})["cuda-capabilities"] = ["9.0"]
    path.write_text(json.dumps(meta))
    refused = run_cli(str(root))
    assert refused.returncode == 8, refused.stderr
    assert "built for fewer CUDA architectures than build.toml asks" in refused.stderr
    assert "torch-cuda (only 9.0)" in refused.stderr and "--force" in refused.stderr
    assert hub_server.requests == []
    forced = run_cli(str(root), "--force")
    assert forced.returncode == 0, forced.stderr
    assert "build/torch-cuda/metadata.json" in hub_server.files(REPO, "v1")
