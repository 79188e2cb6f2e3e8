"""kernel-builder info / versions / lock / download, run as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hub_fixture import publish
from loader_trees import write_variant

REPO = "acme/relu-cli"


def kb(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernel_builder", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "relu"
    write_variant(root / "build", "torch-cpu", name="relu-cli", version=3)
    write_variant(root / "build", "torch-cuda", name="relu-cli", version=3, backend="cuda")
    write_variant(root / "build", "torch29-cxx11-cu126-x86_64-linux", name="relu-cli", version=3, backend="cuda")
    return root


def test_info_local_text_and_json(tree: Path) -> None:
    out = kb("info", str(tree))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        f"Path: {tree}",
        "Variant: torch-cpu",
        "Name: relu-cli",
        "Version: 3",
        "Minimum kernels version: -",
        "License: Apache-2.0",
        "Upstream: https://github.com/example/relu",
        "Source: -",
        "Kernel dependencies: -",
        "Python dependencies: -",
        "Backends: cpu, cuda",
    ]
    data = json.loads(kb("info", str(tree), "--json").stdout)
    assert list(data) == ["name", "version", "kernels_minver", "license", "upstream", "source", "python_depends", "backends",
                          "variant", "kernel_depends", "path"]
    assert data["backends"] == ["cpu", "cuda"] and data["source"] is None


def _reference_info(*args: str) -> subprocess.CompletedProcess:
    ref = subprocess.run([sys.executable, "-m", "kernels.cli", "info", *args], capture_output=True, text=True, timeout=120)
    if ref.returncode != 0:  # the reference CLI module may not be runnable with -m
        ref = subprocess.run(
            [str(Path(sys.executable).parent / "kernels"), "info", *args], capture_output=True, text=True, timeout=120
        )
    assert ref.returncode == 0, ref.stderr
    return ref


@pytest.mark.parametrize("minver", [None, "0.17.1"])
def test_info_local_matches_reference(tree: Path, minver: str | None) -> None:
    if minver is not None:
        for meta in tree.glob("build/*/metadata.json"):
            meta.write_text(json.dumps({**json.loads(meta.read_text()), "kernels-minver": minver}, indent=2))
    theirs = json.loads(_reference_info(str(tree), "--json").stdout)
    ours = json.loads(kb("info", str(tree), "--json").stdout)
    assert ours == theirs
    assert ours["kernels_minver"] == minver
    # the text output too, line for line
    assert kb("info", str(tree)).stdout == _reference_info(str(tree)).stdout


def test_info_dependencies_match_reference(hub_server, tmp_path: Path) -> None:
    """Kernel dependencies (from the Hub) are followed transitively; their Python
    dependencies join the kernel's. Text, JSON and --dep-tree as the reference prints them."""
    from kernel_builder.tree.layout import hash_tree

    def kernel(name: str, depends: list[str], python: tuple[str, ...]) -> Path:
        root = tmp_path / name
        vdir = write_variant(root / "build", "torch-cpu", name=name, python_depends=python, digest=False)
        meta = json.loads((vdir / "metadata.json").read_text())
        meta["kernel-depends"] = [{"repo-id": f"acme/{d}", "version": 1} for d in depends]
        (vdir / "metadata.json").write_text(json.dumps(meta))
        hash_tree(root)
        return root

    publish(hub_server, "acme/leaf-k", kernel("leaf-k", [], ("einops",)) / "build", version=1)
    publish(hub_server, "acme/mid-k", kernel("mid-k", ["leaf-k"], ()) / "build", version=1)
    top = kernel("top-k", ["mid-k", "leaf-k"], ("numpy",))
    theirs = json.loads(_reference_info(str(top), "--json", "--dep-tree").stdout)
    ours = json.loads(kb("info", str(top), "--json", "--dep-tree").stdout)
    assert ours == theirs
    assert ours["kernel_depends"] == ["acme/leaf-k", "acme/mid-k"] and ours["python_depends"] == ["einops", "numpy"]
    assert ours["dependency_tree"] == {"acme/leaf-k": {}, "acme/mid-k": {"acme/leaf-k": {}}}
    for args in (("--dep-tree",), ()):
        assert kb("info", str(top), *args).stdout == _reference_info(str(top), *args).stdout


def test_info_local_errors(tmp_path: Path, tree: Path) -> None:
    out = kb("info", str(tree), "--revision", "main")
    assert out.returncode == 7 and "cannot be used with a local path" in out.stderr
    (tmp_path / "empty").mkdir()
    out = kb("info", str(tmp_path / "empty"))
    assert out.returncode == 7 and "No build variants found in:" in out.stderr
    out = kb("info", REPO, "--revision", "main", "--version", "1")
    assert out.returncode == 7 and "Only one of --revision or --version" in out.stderr


def test_info_hub(hub_server, tree: Path) -> None:
    publish(hub_server, REPO, tree / "build", version=3)
    out = kb("info", REPO)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:4] == [f"Repository: {REPO}", "Revision: v3", "Variant: torch-cpu", "Name: relu-cli"]
    assert [line.split(":")[0] for line in lines] == [
        "Repository", "Revision", "Variant", "Name", "Version", "Minimum kernels version", "License", "Upstream", "Source",
        "Kernel dependencies", "Python dependencies", "Backends",
    ]
    data = json.loads(kb("info", REPO, "--version", "3", "--json").stdout)
    assert list(data)[-2:] == ["repo_id", "revision"] and data["revision"] == "v3" and data["version"] == 3
    data = json.loads(kb("info", REPO, "--revision", "main", "--json").stdout)
    assert data["revision"] == "main" and data["backends"] == ["cpu", "cuda"]
    out = kb("info", REPO, "--version", "9")
    assert out.returncode == 7 and "Version 9 not found, available versions: 3" in out.stderr


def test_info_hub_without_versions_reads_main(hub_server, tree: Path) -> None:
    from hub_fixture import tree_files

    hub_server.create_repo("acme/unversioned-info")
    hub_server.commit_files("acme/unversioned-info", tree_files(tree / "build", "build/"))
    data = json.loads(kb("info", "acme/unversioned-info", "--json").stdout)
    assert list(data) == [
        "name", "version", "kernels_minver", "license", "upstream", "source", "python_depends", "backends",
        "variant", "kernel_depends", "repo_id", "revision",
    ]
    assert (data["repo_id"], data["revision"], data["name"]) == ("acme/unversioned-info", "main", "relu-cli")
    out = kb("info", "acme/unversioned-info")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:3] == ["Repository: acme/unversioned-info", "Revision: main", "Variant: torch-cpu"]
    # info names the variant this machine loads, not the others (that is `versions`' job)
    assert "torch29-cxx11-cu126-x86_64-linux" not in out.stdout


def test_versions(hub_server, tmp_path: Path) -> None:
    for version in (1, 2):
        build = tmp_path / f"v{version}"
        write_variant(build, "torch-cpu", name="relu-cli", version=version)
        write_variant(build, "torch-rocm", name="relu-cli", version=version, backend="rocm")
        publish(hub_server, REPO, build, version=version)
    out = kb("versions", REPO, "--backend", "cpu")
    assert out.returncode == 0, out.stderr
    assert "Version 1:\n\ntorch-cpu compatible, preferred ✅\ntorch-rocm: backend (rocm)" in out.stdout
    assert "Version 2:" in out.stdout
    data = json.loads(kb("versions", REPO, "--json").stdout)
    assert [v["version"] for v in data["versions"]] == [1, 2]
    assert data["versions"][0]["variants"][0] == {"name": "torch-cpu", "accepted": True, "preferred": True, "reason": None}
    hub_server.create_repo("acme/unversioned")
    from click.testing import CliRunner

    from kernel_builder.cli.loader import versions

    result = CliRunner().invoke(versions, ["acme/unversioned"])
    assert result.exit_code == 0
    assert result.stdout.strip() == "Repository does not support kernel versions: acme/unversioned"


def test_lock_download_then_load_offline(hub_server, tmp_path: Path) -> None:
    write_variant(tmp_path / "k", "torch-cpu", name="relu-cli", version=1)
    write_variant(tmp_path / "k", "torch-cuda", name="relu-cli", version=1, backend="cuda")
    commit = publish(hub_server, REPO, tmp_path / "k", version=1)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(f'[project]\nname = "app"\n\n[tool.kernels.dependencies]\n"{REPO}" = 1\n')
    out = kb("lock", str(project))
    assert out.returncode == 0, out.stderr
    text = (project / "kernels.lock").read_text()
    assert json.loads(text) == [{"dependency": {"repo-id": REPO, "version": 1}, "lock": {"commit": commit}}]
    # The reference reads our lock file.
    from kernels._rust import KernelLocks

    assert [str(lock.commit) for _, lock in KernelLocks.from_json(text).items()] == [commit]  # 0.19.1: Oid values

    out = kb("download", str(project))
    assert out.returncode == 0, out.stderr
    assert f"Downloading `{REPO}` at commit {commit}" in out.stderr
    gets = [r.path for r in hub_server.requests if r.endpoint == "resolve" and r.method == "GET"]
    assert gets and all("/build/torch-cpu/" in p for p in gets)

    hub_server.stop()
    # A package whose distribution metadata carries kernels.lock: load_kernel(lockfile=None).
    site = tmp_path / "site"
    (site / "myapp").mkdir(parents=True)
    (site / "myapp" / "__init__.py").write_text(
        f"from kernel_builder import load_kernel\nkernel = load_kernel({REPO!r}, lockfile=None, backend='cpu')\n"
    )
    dist = site / "myapp-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myapp\nVersion: 0.1\n")
    (dist / "top_level.txt").write_text("myapp\n")
    (dist / "kernels.lock").write_text(text)
    script = (
        "from kernel_builder import load_kernel; import sys;"
        f"m = load_kernel({REPO!r}, lockfile=sys.argv[1], backend='cpu'); print(m.VARIANT, m.VERSION);"
        "import myapp; print(myapp.kernel is m)"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    out = subprocess.run(
        [sys.executable, "-c", script, str(project / "kernels.lock")], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["torch-cpu", "1", "True"]


def test_download_all_variants_and_missing_lock(hub_server, tmp_path: Path) -> None:
    write_variant(tmp_path / "k", "torch-cpu", name="relu-cli", version=1)
    write_variant(tmp_path / "k", "torch-cuda", name="relu-cli", version=1, backend="cuda")
    publish(hub_server, REPO, tmp_path / "k", version=1)
    project = tmp_path / "p"
    project.mkdir()
    out = kb("download", str(project))
    assert out.returncode == 7 and "No kernels.lock file found in:" in out.stderr
    (project / "pyproject.toml").write_text(f'[tool.kernels.dependencies]\n"{REPO}" = 1\n')
    assert kb("lock", str(project)).returncode == 0
    out = kb("download", str(project), "--all-variants")
    assert out.returncode == 0, out.stderr
    build = Path(out.stdout.strip())
    assert sorted(p.name for p in build.iterdir()) == ["torch-cpu", "torch-cuda"]


def test_download_all_variants_verifies_every_digest(hub_server, tmp_path: Path) -> None:
    write_variant(tmp_path / "k", "torch-cpu", name="relu-cli", version=1)
    cuda = write_variant(tmp_path / "k", "torch-cuda", name="relu-cli", version=1, backend="cuda")
    (cuda / "_ops.py").write_text("OPS_ID = 'changed after hashing'\n")
    publish(hub_server, REPO, tmp_path / "k", version=1)
    project = tmp_path / "p"
    project.mkdir()
    (project / "pyproject.toml").write_text(f'[tool.kernels.dependencies]\n"{REPO}" = 1\n')
    assert kb("lock", str(project)).returncode == 0
    out = kb("download", str(project), "--all-variants")
    assert out.returncode == 7
    assert "torch-cuda" in out.stderr and "File hash mismatch for _ops.py" in out.stderr
    assert "1 kernel(s) failed to download: acme/relu-cli" in out.stderr
    out = kb("download", str(project), "--all-variants", env={"KERNEL_BUILDER_SKIP_DIGEST": "1"})
    assert out.returncode == 0, out.stderr
    assert "digest verification skipped" in out.stderr


def test_load_kernel_not_locked(tmp_path: Path) -> None:
    from kernel_builder import load_kernel
    from kernel_builder.loader.errors import InvalidRequest

    (tmp_path / "kernels.lock").write_text("[]")
    with pytest.raises(InvalidRequest, match="Kernel `acme/x` is not locked"):
        load_kernel("acme/x", lockfile=tmp_path / "kernels.lock")


def test_info_and_versions_offline_from_cache(hub_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from kernel_builder import install_kernel
    from kernel_builder.cli.loader import info, versions
    from kernel_builder.variants.system import detect_system

    write_variant(tmp_path / "k", "torch-cpu", name="relu-cli", version=1)
    write_variant(tmp_path / "k", "torch-rocm", name="relu-cli", version=1, backend="rocm")
    publish(hub_server, REPO, tmp_path / "k", version=1)
    install_kernel(REPO, version=1, system=detect_system(backend="cpu"))
    hub_server.stop()
    hub_server.clear_log()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = CliRunner().invoke(versions, [REPO, "--backend", "cpu"])
    assert result.exit_code == 0, result.output
    # Only what is cached is known offline: the downloaded variant.
    assert result.stdout.splitlines() == ["Version 1:", "", "torch-cpu compatible, preferred ✅"]
    result = CliRunner().invoke(info, [REPO, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["revision"], data["name"], data["backends"]) == ("v1", "relu-cli", ["cpu"])
    assert hub_server.requests == []


def test_get_locked_kernel_downloads_the_locked_commit(hub_server, tmp_path: Path) -> None:
    """get_locked_kernel: the commit from the lock file, downloaded when missing; the
    reference loads the same variant from the same lock."""
    write_variant(tmp_path / "k1", "torch-cpu", name="relu-cli", version=1)
    locked = publish(hub_server, REPO, tmp_path / "k1", version=1)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(f'[tool.kernels.dependencies]\n"{REPO}" = 1\n')
    assert kb("lock", str(project)).returncode == 0
    write_variant(tmp_path / "k2", "torch-cpu", name="relu-cli", version=2)
    publish(hub_server, REPO, tmp_path / "k2", version=1)  # v1 moves on; the lock does not
    script = (
        "import sys; from pathlib import Path; from {lib} import get_locked_kernel;"
        f"m = get_locked_kernel({REPO!r}, lockfile=Path(sys.argv[1]));"
        "print(m.VARIANT, m.VERSION, Path(m.__file__).parent.parent.parent.name)"
    )
    for lib in ("kernel_builder", "kernels"):
        cache = tmp_path / f"cache-{lib}"
        out = subprocess.run(
            [sys.executable, "-c", script.format(lib=lib), str(project / "kernels.lock")],
            capture_output=True, text=True, timeout=120, env={**os.environ, "KERNELS_CACHE": str(cache)},
        )
        assert out.returncode == 0, (lib, out.stderr)
        assert out.stdout.split() == ["torch-cpu", "1", locked], lib
