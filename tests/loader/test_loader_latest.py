"""``UNSTABLE_KERNELS_ALL_LATEST``: with it on, a Hub kernel loads at its highest ``vN`` whatever
version, revision or lock pin was asked for; side by side with PyPI ``kernels`` 0.19.1, in
subprocesses against the local Hub server."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hub_fixture import publish
from loader_trees import write_variant

from kernel_builder import get_kernel, has_kernel, install_kernel
from kernel_builder.loader import latest
from kernel_builder.loader.errors import InvalidRequest
from kernel_builder.variants.system import detect_system

CPU = detect_system(backend="cpu")
REPO = "acme/latest-test"

SCRIPT = textwrap.dedent(
    """
    import json, sys
    which, repo, lockfile, mode = sys.argv[1:5]
    if which == "kernels":
        import kernels as k
        assert k.__version__ == "0.19.1", k.__version__
    else:
        import kernel_builder as k
    if mode == "online":
        out = {
            "version": k.get_kernel(repo, version=1).VERSION,
            "revision": k.get_kernel(repo, revision="v1").VERSION,
            "locked": k.get_locked_kernel(repo, lockfile=lockfile).VERSION,
            "has": k.has_kernel(repo, version=1),
        }
    else:
        out = {"load_kernel": k.load_kernel(repo, lockfile=lockfile).VERSION}
    print(json.dumps(out))
    """
)


@pytest.fixture
def hub(hub_server, tmp_path: Path):
    """Versions 1, 2 and 3 of a kernel (torch-cpu each), org trusted; a lock pins v1."""
    commits = {}
    for version in (1, 2, 3):
        build = tmp_path / f"v{version}" / "build"
        write_variant(build, "torch-cpu", name="latest-test", version=version)
        commits[version] = publish(hub_server, REPO, build, version=version)
    lock = [{"dependency": {"repo-id": REPO, "version": 1}, "lock": {"commit": hub_server.branches(REPO)["v1"]}}]
    (tmp_path / "kernels.lock").write_text(json.dumps(lock))
    return hub_server


def _run(which: str, mode: str, tmp_path: Path, value: str | None, home: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HOME": str(tmp_path / home)}
    env.pop("UNSTABLE_KERNELS_ALL_LATEST", None)
    env.pop("PYTHONPATH", None)
    if value is not None:
        env["UNSTABLE_KERNELS_ALL_LATEST"] = value
    if mode == "offline":
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run([sys.executable, "-c", SCRIPT, which, REPO, str(tmp_path / "kernels.lock"), mode],
                          capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("which", ["kernels", "ours"])
def test_every_load_takes_the_highest_version_as_0_19_1_does(hub, tmp_path: Path, which: str) -> None:
    off = _run(which, "online", tmp_path, None, f"off-{which}")
    assert off.returncode == 0, off.stderr
    assert json.loads(off.stdout.splitlines()[-1]) == {"version": 1, "revision": 1, "locked": 1, "has": True}

    on = _run(which, "online", tmp_path, "yes", f"on-{which}")
    assert on.returncode == 0, on.stderr
    assert json.loads(on.stdout.splitlines()[-1]) == {"version": 3, "revision": 3, "locked": 3, "has": True}
    commit = hub.branches(REPO)["v3"]
    assert (f"UNSTABLE_KERNELS_ALL_LATEST is enabled: overriding requested" in on.stderr
            and f"and any lockfile pin for '{REPO}' with v3 ({commit}). Kernel API changes may break your code." in on.stderr)
    # offline (load_kernel never goes online): the v3 ref the online loads recorded in the cache
    offline = _run(which, "offline", tmp_path, "TRUE", f"on-{which}")
    assert offline.returncode == 0, offline.stderr
    assert json.loads(offline.stdout.splitlines()[-1]) == {"load_kernel": 3}


@pytest.mark.timeout(300)
def test_a_repo_without_versions_is_refused_by_both(hub_server, tmp_path: Path) -> None:
    build = tmp_path / "b" / "build"
    write_variant(build, "torch-cpu", name="unversioned")
    hub_server.create_repo("acme/unversioned")
    hub_server.commit_files("acme/unversioned", {f"build/torch-cpu/{p.name}": p.read_bytes()
                                                  for p in (build / "torch-cpu").iterdir()})
    hub_server.trust_org("acme")
    code = ("import sys\nimport {m} as k\ntry:\n    k.get_kernel('acme/unversioned', revision='main')\n"
            "except ValueError as e:\n    print(e)\n")
    env = {**os.environ, "UNSTABLE_KERNELS_ALL_LATEST": "1"}
    env.pop("PYTHONPATH", None)
    expected = ("Cannot load the latest version of 'acme/unversioned': no numbered versions are available on the Hub. "
                "UNSTABLE_KERNELS_ALL_LATEST requires a numbered version.")
    for module in ("kernels", "kernel_builder"):
        done = subprocess.run([sys.executable, "-c", code.format(m=module)], capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        assert expected in done.stdout, (module, done.stdout)


@pytest.mark.timeout(300)
def test_in_process_values_and_what_is_not_affected(hub, monkeypatch: pytest.MonkeyPatch, caplog) -> None:
    for value, on in (("1", True), ("on", True), ("Yes", True), ("true", True), ("0", False), ("", False), ("latest", False)):
        monkeypatch.setenv(latest.ENV, value)
        assert latest.enabled() is on
    monkeypatch.setenv(latest.ENV, "1")
    with caplog.at_level(logging.WARNING, logger="kernel_builder.loader"):
        assert get_kernel(REPO, version=2, system=CPU).VERSION == 3
    assert "overriding requested version 2 and any lockfile pin" in caplog.text
    assert has_kernel(REPO, version=1, system=CPU)
    # install_kernel takes what was asked for, as 0.19.1's install_kernel does
    assert install_kernel(REPO, version=1, system=CPU).parent.parent.name == hub.branches(REPO)["v1"]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("KERNELS_CACHE", str(Path(os.environ["HF_HOME"]) / "empty-cache"))
    with pytest.raises(InvalidRequest, match="no numbered versions are available in the local cache"):
        get_kernel(REPO, version=1, system=CPU)
