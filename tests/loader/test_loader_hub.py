"""get_kernel and friends against the local Hub test server."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import shutil
import textwrap
from pathlib import Path

import pytest
from hub_fixture import publish
from loader_trees import write_variant

from kernel_builder import get_kernel, get_kernel_variants, get_loaded_kernels, has_kernel, install_kernel
from kernel_builder.errors import HubError
from kernel_builder.loader.errors import IntegrityError, InvalidRequest, KernelNotFound
from kernel_builder.variants.resolve import VariantAccepted, VariantRejected
from kernel_builder.variants.system import detect_system

CPU = detect_system(backend="cpu")
REPO = "acme/relu-test"


@pytest.fixture
def hub(hub_server, tmp_path: Path):
    """Versions 1 and 2 of a kernel (torch-cpu + torch-cuda each), org trusted."""
    for version in (1, 2):
        build = tmp_path / f"v{version}" / "build"
        write_variant(build, "torch-cpu", version=version)
        write_variant(build, "torch-cuda", version=version, backend="cuda")
        publish(hub_server, REPO, build, version=version)
    return hub_server


def _downloaded(hub) -> list[str]:
    """Paths of the files the server sent with a GET resolve."""
    return sorted(r.path.split("/resolve/", 1)[1].split("/", 1)[1] for r in hub.requests if r.endpoint == "resolve" and r.method == "GET")


def test_version_loads_branch_and_only_the_variant(hub) -> None:
    module = get_kernel(REPO, version=1, system=CPU)
    assert module.VERSION == 1 and module.VARIANT == "torch-cpu"
    assert _downloaded(hub) == ["build/torch-cpu/__init__.py", "build/torch-cpu/_ops.py", "build/torch-cpu/metadata.json"]
    loaded = [k for k in get_loaded_kernels() if k.module is module][0]
    assert loaded.repo_info.repo_id == REPO and loaded.repo_info.revision == hub.branches(REPO)["v1"]
    assert get_kernel(REPO, version=1, system=CPU) is module


def test_two_versions_in_one_process(hub) -> None:
    one = get_kernel(REPO, version=1, system=CPU)
    two = get_kernel(REPO, version=2, system=CPU)
    assert (one.VERSION, two.VERSION) == (1, 2)
    assert one.__name__ != two.__name__ and sys.modules[one.__name__] is one and sys.modules[two.__name__] is two


def test_revision_keeps_label(hub) -> None:
    module = get_kernel(REPO, revision="v2", system=CPU)
    assert module.VERSION == 2
    loaded = [k for k in get_loaded_kernels() if k.module is module][0]
    assert loaded.repo_info.revision == "v2"


def test_version_errors(hub, caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(InvalidRequest, match="Version 7 not found, available versions: 1, 2"):
        get_kernel(REPO, version=7, system=CPU)
    with pytest.raises(InvalidRequest, match="Only one of `revision` or `version`"):
        get_kernel(REPO, version=1, revision="main", system=CPU)
    hub.clear_log()
    with pytest.raises(InvalidRequest, match="A kernel version or revision must be specified"):
        get_kernel(REPO, system=CPU)
    assert hub.requests == []  # arguments are checked before any request
    with caplog.at_level(logging.WARNING, logger="kernel_builder.loader"):
        get_kernel(REPO, version=1, system=CPU)
    assert "You are using version 1 of 'acme/relu-test', but version 2 is available." in caplog.text


def test_untrusted_publisher(hub_server, tmp_path: Path) -> None:
    write_variant(tmp_path / "build", "torch-cpu", name="untrusted")
    publish(hub_server, "shady/relu", tmp_path / "build", version=1, trusted=False)
    with pytest.raises(InvalidRequest, match="not from a trusted publisher"):
        get_kernel("shady/relu", version=1, system=CPU)
    assert get_kernel("shady/relu", version=1, system=CPU, trust_remote_code=True).VARIANT == "torch-cpu"
    # has_kernel and install_kernel check the publisher too (kernels 0.17.2), and take trust_remote_code
    for call in (has_kernel, install_kernel):
        with pytest.raises(InvalidRequest, match="not from a trusted publisher"):
            call("shady/relu", version=1, system=CPU)
    assert has_kernel("shady/relu", version=1, system=CPU, trust_remote_code=True)
    assert install_kernel("shady/relu", version=1, system=CPU, trust_remote_code=True).name == "torch-cpu"


def test_invalid_repo_id_touches_nothing(hub) -> None:
    for bad in ("../etc", "acme/..", "acme", "/abs/path", "a/b/c"):
        with pytest.raises(HubError, match="invalid Hub repository id"):
            get_kernel(bad, version=1, system=CPU)
    assert hub.requests == []


def test_unsafe_variant_name_refused(hub_server, tmp_path: Path) -> None:
    hub_server.create_repo("acme/evil")
    hub_server.commit_files("acme/evil", {"build/..x/metadata.json": b"{}", "build/torch-cpu/__init__.py": b""})
    hub_server.create_branch("acme/evil", "v1")
    with pytest.raises(HubError, match="unsafe variant name '..x'"):
        get_kernel("acme/evil", version=1, system=CPU, trust_remote_code=True)


def test_no_variant_for_system(hub_server, tmp_path: Path) -> None:
    write_variant(tmp_path / "build", "torch-rocm", name="rocm-only", backend="rocm")
    publish(hub_server, "acme/rocm-only", tmp_path / "build", version=1)
    with pytest.raises(KernelNotFound, match=r"Cannot find a build variant for this system in acme/rocm-only \(revision: v1\)"):
        get_kernel("acme/rocm-only", version=1, system=CPU)
    assert not has_kernel("acme/rocm-only", version=1, system=CPU)
    assert _downloaded(hub_server) == []


def test_has_kernel_and_variants(hub) -> None:
    assert has_kernel(REPO, version=1, system=CPU)
    trace = get_kernel_variants(REPO, version=1, system=CPU)
    assert trace[0] == VariantAccepted("torch-cpu")
    assert isinstance(trace[1], VariantRejected) and trace[1].variant == "torch-cuda"
    assert "does not match system backend (cpu)" in trace[1].reason
    assert _downloaded(hub) == []


def test_tampered_cache_refused(hub) -> None:
    path = install_kernel(REPO, version=1, system=CPU)
    target = (path / "_ops.py").resolve()  # the cache blob behind the snapshot symlink
    target.write_text("OPS_ID = 'tampered'\n")
    with pytest.raises(IntegrityError, match="File hash mismatch for _ops.py") as info:
        get_kernel(REPO, version=1, system=CPU)
    # deleting the variant directory would link the same tampered blob again: the hint
    # names the repository folder that holds the blobs, and following it works
    repo_folder = path.parents[3]
    assert repo_folder.name.startswith("kernels--") and f"rm -rf {repo_folder}" in info.value.hint
    shutil.rmtree(repo_folder)
    assert get_kernel(REPO, version=1, system=CPU) is not None


def test_tampered_download_refused(hub_server, tmp_path: Path) -> None:
    vdir = write_variant(tmp_path / "build", "torch-cpu", name="liar")
    (vdir / "__init__.py").write_text("VARIANT = 'changed after hashing'\n")
    publish(hub_server, "acme/liar", tmp_path / "build", version=1)
    with pytest.raises(IntegrityError, match="File hash mismatch for __init__.py"):
        get_kernel("acme/liar", version=1, system=CPU)


def test_dependencies_checked_before_download(hub_server, tmp_path: Path) -> None:
    write_variant(tmp_path / "build", "torch-cpu", name="needs-dep", python_depends=("kepler-22b",))
    publish(hub_server, "acme/needs-dep", tmp_path / "build", version=1)
    with pytest.raises(InvalidRequest, match="kepler-22b"):
        get_kernel("acme/needs-dep", version=1, system=CPU)
    assert _downloaded(hub_server) == ["build/torch-cpu/metadata.json"]


OFFLINE_SCRIPT = textwrap.dedent(
    """
    import sys
    from kernel_builder import get_kernel, has_kernel
    from kernel_builder.variants.system import detect_system
    cpu = detect_system(backend="cpu")
    m = get_kernel(sys.argv[1], version=int(sys.argv[2]), system=cpu)
    r = get_kernel(sys.argv[1], revision=sys.argv[3], system=cpu)
    assert has_kernel(sys.argv[1], version=int(sys.argv[2]), system=cpu)
    print(m.VERSION, r.VERSION, m.__file__)
    """
)


def test_offline_makes_no_http_request(hub, tmp_path: Path) -> None:
    online = install_kernel(REPO, version=2, system=CPU)
    commit = hub.branches(REPO)["v2"]
    hub.clear_log()
    hub.stop()  # nothing may answer now
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT, REPO, "2", commit], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    version, rev_version, file = out.stdout.split()
    assert (version, rev_version) == ("2", "2") and Path(file).parent == online
    assert hub.requests == []


def test_offline_uncached(hub_server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.warns(UserWarning, match="Skipping the publisher trust check"):
        with pytest.raises(InvalidRequest, match="offline mode"):
            get_kernel("acme/never", version=1, system=CPU)
    with pytest.warns(UserWarning, match="Skipping the publisher trust check"):
        with pytest.raises(KernelNotFound, match="local snapshot"):
            get_kernel("acme/never", revision="main", system=CPU)
    assert hub_server.requests == []


def test_kernels_cache_env(hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELS_CACHE", str(tmp_path / "kcache"))
    path = install_kernel(REPO, version=1, system=CPU)
    assert tmp_path / "kcache" in path.parents
    assert (tmp_path / "kcache" / "kernels--acme--relu-test" / "refs" / "v1").read_text() == hub.branches(REPO)["v1"]


@pytest.mark.parametrize("name", ["..", "../x", "/etc", "a/b", "a\\b", "", ".hidden", "x/../../y"])
def test_variant_names_are_single_safe_components(name: str) -> None:
    from kernel_builder.hub.download import validate_variant_name

    with pytest.raises(HubError, match="unsafe variant name"):
        validate_variant_name(name, repo_id=REPO, revision="v1")


def test_invalid_commit_from_hub_refused() -> None:
    from kernel_builder.hub.download import validate_commit

    with pytest.raises(HubError, match="invalid commit id"):
        validate_commit("../../etc", repo_id=REPO, revision="main")
    assert validate_commit("a" * 40, repo_id=REPO, revision="main") == "a" * 40


def test_offline_reads_cache_written_by_reference_kernels(hub) -> None:
    """A snapshot downloaded by PyPI ``kernels`` loads offline with our loader by commit."""
    commit = hub.branches(REPO)["v1"]
    script = f"from kernels import install_kernel; print(install_kernel({REPO!r}, revision={commit!r}, backend='cpu'))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    hub.clear_log()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    code = (
        "from kernel_builder import get_kernel; from kernel_builder.variants.system import detect_system;"
        f"print(get_kernel({REPO!r}, revision={commit!r}, system=detect_system(backend='cpu')).__file__)"
    )
    ours = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert ours.returncode == 0, ours.stderr
    assert Path(ours.stdout.strip()).parent == Path(out.stdout.strip().splitlines()[-1])
    assert hub.requests == []


def test_hub_errors_name_repo_and_revision(hub) -> None:
    with pytest.raises(HubError, match="repository acme/missing not found"):
        get_kernel("acme/missing", version=1, system=CPU, trust_remote_code=True)
    with pytest.raises(HubError, match="could not verify whether 'nobody' is a trusted kernel publisher"):
        get_kernel("nobody/relu", version=1, system=CPU)
    with pytest.raises(HubError, match="revision 'no-such-branch' not found in acme/relu-test"):
        get_kernel(REPO, revision="no-such-branch", system=CPU)
    hub.fail_next("refs", status=500, message="boom")
    with pytest.raises(HubError, match="listing versions for acme/relu-test failed"):
        get_kernel(REPO, version=1, system=CPU)


@pytest.mark.parametrize("agent", ["my-app/1.2", {"my-app": "1.2"}])
def test_user_agent_reaches_the_hub_client(hub, agent, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller's user agent is part of the headers of the client every request goes through."""
    from kernel_builder.hub.download import HubClient
    from kernel_builder.loader import api

    made: list[HubClient] = []

    def recording(**kwargs: object) -> HubClient:
        made.append(HubClient(**kwargs))
        return made[-1]

    monkeypatch.setattr(api, "HubClient", recording)
    get_kernel(REPO, version=2, system=CPU, user_agent=agent)
    assert len(made) == 1 and made[0]._api is not None  # the one client was really used
    ua = made[0].api._build_hf_headers()["user-agent"]
    assert "my-app/1.2" in ua and ua.startswith("kernel-builder/")


def test_trust_list_allows_listed_repos_and_trusted_publishers(hub_server, tmp_path: Path, recwarn) -> None:
    write_variant(tmp_path / "a" / "build", "torch-cpu", name="listed")
    publish(hub_server, "shady/listed", tmp_path / "a" / "build", version=1, trusted=False)
    write_variant(tmp_path / "b" / "build", "torch-cpu", name="trusted-org")
    publish(hub_server, "acme/trusted-org", tmp_path / "b" / "build", version=1)
    allow = ["shady/listed"]
    assert get_kernel("shady/listed", version=1, system=CPU, trust_remote_code=allow).VARIANT == "torch-cpu"
    assert get_kernel("acme/trusted-org", version=1, system=CPU, trust_remote_code=allow).VARIANT == "torch-cpu"
    with pytest.raises(InvalidRequest, match="not from a trusted publisher"):
        has_kernel("shady/relu", version=1, system=CPU, trust_remote_code=allow)
    assert not [w for w in recwarn if "trust" in str(w.message)]
