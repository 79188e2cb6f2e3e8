"""Nix 2.8 (Debian 12) and Nix 2.26 (Debian 13) alike: the examples' flakes, the kernel's
flake.lock as the CLI copies it, and `toolchain fetch` into a store under another directory.
The slow tests run Debian 13's Nix from a private prefix and a private store
(`.ci/modern-nix.sh`), so the machine's Nix and /nix are never touched."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import attrs
import pytest

from kernel_builder import nix
from kernel_builder.errors import NixError
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from kernel_builder.flake.kernel_source import lock_for_copy
from kernel_builder.toolchain.pinned import clients
from kernel_builder.toolchain.pinned import fetch as fetch_module
from kernel_builder.toolchain.pinned.fetch import download_debs, fetch
from kernel_builder.toolchain.pinned.lockfile import Artifact, load_lock
from nix_support import EXAMPLES, REPO, commit_all, copy_kernel, environ_set, kernel_builder, salt_sources, snapshot_builder

SYSTEM = "x86_64-linux"
TRACKED_EXAMPLES = sorted(
    Path(p).parent.name
    for p in subprocess.run(["git", "-C", str(REPO), "ls-files", "examples/*/flake.nix"], capture_output=True,
                            text=True, check=True).stdout.split()
)

# What Nix 2.26 writes for examples/relu's `inputs.kernel-builder.url = "path:../.."` (no
# narHash, a `parent`): Nix 2.8 refuses every flake command on a lock holding it.
LOCK_2_26 = {
    "nodes": {
        "kernel-builder": {
            "locked": {"path": "../..", "type": "path"},
            "original": {"path": "../..", "type": "path"},
            "parent": [],
        },
        "root": {"inputs": {"kernel-builder": "kernel-builder"}},
    },
    "root": "root",
    "version": 7,
}


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("state")
    root = snapshot_builder(tmp_path_factory.mktemp("builder"))
    with environ_set({"KERNEL_BUILDER_STATE_DIR": str(path), "KERNEL_BUILDER_ROOT": str(root)}):
        yield path


def _nix_config(extra: str) -> str:
    return "\n".join(filter(None, [os.environ.get("NIX_CONFIG", "").strip(), extra])) + "\n"


# -- the lock the CLI copies ------------------------------------------------------------


def test_lock_for_copy_drops_the_builder_input() -> None:
    assert lock_for_copy(json.dumps(LOCK_2_26).encode()) is None
    other = {"locked": {"type": "github", "owner": "o", "repo": "r", "rev": "0" * 40, "narHash": "sha256-x"},
             "original": {"type": "github", "owner": "o", "repo": "r"}}
    builder_dep = {"locked": {"type": "path", "path": "/b", "narHash": "sha256-y"}, "original": {"type": "path", "path": "/b"}}
    lock = {
        "nodes": {
            "root": {"inputs": {"kernel-builder": "kernel-builder", "extra": "extra"}},
            "kernel-builder": {**LOCK_2_26["nodes"]["kernel-builder"], "inputs": {"dep": "dep"}},
            "dep": builder_dep,
            "extra": other,
        },
        "root": "root",
        "version": 7,
    }
    kept = json.loads(lock_for_copy(json.dumps(lock).encode()) or b"null")
    assert kept == {"nodes": {"root": {"inputs": {"extra": "extra"}}, "extra": other}, "root": "root", "version": 7}
    for text in (b"not json", b"[]", b'{"nodes": {}}', json.dumps({**lock, "nodes": {**lock["nodes"], "root": {}}}).encode()):
        assert lock_for_copy(text) == text  # nothing to drop: Nix reads (and judges) it as written


def test_a_lock_written_by_nix_2_26_does_not_stop_a_build(tmp_path: Path, state: Path) -> None:
    """A kernel whose flake.lock Nix 2.26 wrote for a relative builder input: plain Nix 2.8
    refuses it, the CLI (which overrides the builder input) evaluates, and leaves it as it was."""
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    text = json.dumps(LOCK_2_26, indent=2) + "\n"
    (kernel / "flake.lock").write_text(text)
    with pytest.raises(NixError, match="mutable lock"):
        nix.eval_json(f"path:{kernel}#legacyPackages.{SYSTEM}.variants",
                      flake_args=["--override-input", "kernel-builder", f"path:{REPO}", "--no-write-lock-file"])
    prepared = prepare_kernel_flake(kernel)
    assert "torch213-cxx11-cpu-x86_64-linux" in nix.eval_json(prepared.installable("variants"), flake_args=prepared.flake_args)
    assert not (Path(prepared.ref.removeprefix("path:")) / "flake.lock").exists()
    assert (kernel / "flake.lock").read_text() == text


# -- the examples' flakes ---------------------------------------------------------------


@pytest.mark.parametrize("name", TRACKED_EXAMPLES)
def test_example_flake_lists_every_output_of_the_library(name: str, state: Path) -> None:
    """The examples spell their output names out (Nix 2.26 needs that for a relative input):
    the names must be exactly the library's, so no output is hidden."""
    text = (EXAMPLES / name / "flake.nix").read_text()
    listed = re.search(r"inherit \(kernel\) ([\w ]+);", text)
    assert listed, f"examples/{name}/flake.nix does not spell its outputs out: Nix 2.26 recurses forever on it"
    builder = Path(os.environ["KERNEL_BUILDER_ROOT"])
    expr = (f'builtins.attrNames ((builtins.getFlake "path:{builder}").lib.genKernelFlakeOutputs '
            f'{{ path = {EXAMPLES / name}; }})')
    assert sorted(listed.group(1).split()) == json.loads(nix.run_nix(["eval", "--impure", "--json", "--expr", expr]).stdout)


# -- toolchain fetch into a store elsewhere -----------------------------------------------


def test_fetch_seeds_a_store_under_another_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`store = local?root=DIR`: the seed is added to that store, once from the .deb this
    fetch downloads, once from the .deb the store already holds (read through Nix: its
    file is under DIR, not at its /nix/store path)."""
    lock = attrs.evolve(load_lock(), groups={})  # only the seed and its .deb
    assert lock.seed is not None
    deb = lock.artifacts[lock.seed.deb]
    read: list[Path] = []

    def extract_seed(deb_file: Path, *args: str) -> Path:
        read.append(deb_file)
        return clients.extract_seed(deb_file, *args)

    # the .deb is never read at its /nix/store path: on this machine that path holds the
    # machine store's copy, which a store elsewhere need not have
    monkeypatch.setattr(fetch_module, "extract_seed", extract_seed)
    for case in ("downloaded", "in-store"):
        root = tmp_path / case / "root"
        monkeypatch.setenv("NIX_CONFIG", _nix_config(f"store = local?root={root}"))
        if case == "in-store":
            named = tmp_path / case / deb.key
            named.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(deb.store_path if Path(deb.store_path).is_file() else _download(deb, tmp_path), named)
            assert nix.run_nix(["--add-fixed", "sha256", str(named)], program="nix-store").stdout.strip() == deb.store_path
        report = fetch(lock, [], state=tmp_path / case / "state")
        assert lock.seed.store_path in report.added
        assert (deb.store_path in report.added) == (case == "downloaded")
        assert (root / lock.seed.store_path.lstrip("/") / Path(lock.seed.member).name).is_file()
        assert nix.invalid_paths([lock.seed.store_path, deb.store_path]) == []
        assert read[-1].is_relative_to(tmp_path / case / "state"), read


def _download(deb: Artifact, into: Path) -> Path:
    return download_debs([deb], into / "download")[deb.key]


# -- Nix 2.26 itself (slow: Debian 13's nix-bin in a private prefix and a private store) ------

MODERN_NIX_SCRIPT = REPO / ".ci" / "modern-nix.sh"
RELU_CPU = "torch213-cxx11-cpu-x86_64-linux"


@attrs.define
class ModernNix:
    """Debian 13's Nix with its own configuration, run in a mount namespace of its own
    where ``nix_dir`` is mounted on /nix: its store is the ordinary /nix/store to it (a
    `local?root=` store would hand `builtins.path` filters the paths under that root), and
    nothing it does reaches this machine's /nix. ``shared`` store paths of this machine's
    store are bind-mounted read-only into it (``share``), so the toolchain (GBs) is not copied."""

    bin: Path
    conf: Path
    nix_dir: Path
    host_store: Path
    shared: list[str] = attrs.field(factory=list)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("NIX_CONFIG", "NIX_REMOTE", "NIX_PATH")}
        return {**env, "PATH": f"{self.bin}:{env.get('PATH', '')}", "NIX_CONF_DIR": str(self.conf),
                "SHARED": " ".join(Path(p).name for p in self.shared)}

    def run(self, *args: str, cwd: Path, program: str = "nix", stdin: bytes | None = None) -> str:
        script = ('mount --bind /nix/store "$0" && mount --bind "$1" /nix && '
                  'for p in $SHARED; do mount --bind -o ro "$0/$p" "/nix/store/$p" || exit 1; done && shift && exec "$@"')
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                str(self.host_store), str(self.nix_dir), str(self.bin / program), *args]
        done = subprocess.run(argv, cwd=cwd, env=self.env(), input=stdin, capture_output=True, check=False)
        assert done.returncode == 0, f"{program} {' '.join(args)} (Nix 2.26) failed:\n{done.stderr.decode()[-3000:]}"
        return done.stdout.decode()

    def share(self, paths: list[str]) -> None:
        """Make ``paths`` (a closure, valid in this machine's store) valid in this store too:
        each bind-mounted in every later ``run``, registered from Nix 2.8's own database
        dump (``--dump-db`` / ``--load-db``, a format both versions read)."""
        store = self.nix_dir / "store"
        for path in paths:
            point = store / Path(path).name
            if Path(path).is_dir():
                point.mkdir(exist_ok=True)
            else:
                point.touch()
        dump = subprocess.run([nix.runner._sibling("nix-store"), "--dump-db", *paths], capture_output=True, check=True,
                              env=nix.nix_env()).stdout
        self.shared = sorted(set(self.shared) | set(paths))
        self.run("--load-db", cwd=self.nix_dir, program="nix-store", stdin=dump)

    def store_file(self, store_path: str) -> Path:
        """Where a path of this store is on this machine's file system."""
        return self.nix_dir / Path(store_path).relative_to("/nix")


@pytest.fixture(scope="module")
def modern(tmp_path_factory: pytest.TempPathFactory) -> ModernNix:
    done = subprocess.run(["bash", str(MODERN_NIX_SCRIPT)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f".ci/modern-nix.sh failed:\n{done.stderr[-3000:]}"
    bin_dir = Path(done.stdout.strip().splitlines()[-1])
    base = tmp_path_factory.mktemp("nix-2.26")
    registry = base / "registry.json"
    registry.write_text('{"flakes": [], "version": 2}\n')
    conf = base / "conf"
    conf.mkdir()
    # Debian 13's nix-bin puts its bash-static into every sandbox as /bin/sh: so does this one
    (conf / "nix.conf").write_text(
        "experimental-features = nix-command flakes\nbuild-users-group =\nsubstituters =\n"
        f"flake-registry = {registry}\nsandbox = true\nsandbox-paths = /bin/sh={bin_dir / 'bash-static'}\n"
        "warn-dirty = false\n"
    )
    (base / "nix" / "store").mkdir(parents=True)
    (base / "nix" / "store").chmod(0o1775)
    (base / "host-store").mkdir()
    found = ModernNix(bin_dir, conf, base / "nix", base / "host-store")
    version = found.run("--version", cwd=base).split()[-1]
    assert tuple(int(x) for x in version.split(".")[:2]) >= (2, 26), version
    assert found.run("config", "show", "sandbox-paths", cwd=base).strip() == f"/bin/sh={bin_dir / 'bash-static'}"
    return found


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's builder and examples, committed in a git repository of their own
    (the examples' `path:../..` is this repository's root); relu's sources salted, so no
    store holds its variant yet."""
    root = snapshot_builder(tmp_path_factory.mktemp("repo"))
    for name in TRACKED_EXAMPLES:
        shutil.copytree(EXAMPLES / name, root / "examples" / name, ignore=shutil.ignore_patterns("build", "__pycache__", "result*", "flake.lock"))
    salt_sources(root / "examples" / "relu")
    commit_all(root, init=True)
    return root


def _variants_2_8(kernel: Path) -> list[str]:
    return nix.eval_json(".#variants", flake_args=["--no-write-lock-file"], cwd=str(kernel))  # type: ignore[return-value]


@pytest.mark.slow
@pytest.mark.parametrize("name", TRACKED_EXAMPLES)
def test_examples_evaluate_with_nix_2_26(name: str, modern: ModernNix, repo: Path) -> None:
    """Each example's kernel flake, as plain Nix 2.26 sees it: the first command writes the
    lock, later ones read it back (the relative input then reaches the library as
    `<source>/examples/<name>/../..`); the variants are those Nix 2.8 lists, and relu's
    torch213 CPU variant is the very derivation Nix 2.8 makes. (Not compared: the command
    that writes the lock, whose `self` has the commit's revision, while Nix 2.8 and the
    later commands see the tree the new lock made dirty, and name the kernel by build.toml.)"""
    kernel = repo / "examples" / name
    expected = _variants_2_8(kernel)
    attr = f".#redistributable.{RELU_CPU}.drvPath"
    drv = nix.eval_json(attr, flake_args=["--no-write-lock-file"], cwd=str(kernel)) if name == "relu" else None
    assert json.loads(modern.run("eval", "--json", ".#variants", cwd=kernel)) == expected
    assert (kernel / "flake.lock").is_file()
    assert json.loads(modern.run("eval", "--json", ".#variants", cwd=kernel)) == expected  # the lock read back
    if drv is not None:
        # evaluating a variant builds its plan and deps steps (import from derivation): Nix
        # 2.26 builds them in its own store, from the toolchain this machine's store shares
        modern.share(_toolchain_closure(drv))
        assert json.loads(modern.run("eval", "--json", attr, cwd=kernel)) == drv


@pytest.mark.slow
def test_init_flake_works_with_nix_2_26_and_2_8(tmp_path: Path, modern: ModernNix) -> None:
    """`init`'s flake (an absolute builder URL): Nix 2.26 evaluates it twice, and the lock it
    writes is read by Nix 2.8 as it is."""
    builder = snapshot_builder(tmp_path / "builder")
    kernel = tmp_path / "my-kernel"
    kernel_builder("init", str(kernel), "--name", "me/my-kernel", "--backends", "cpu", "--builder-url", f"path:{builder}",
                   env=dict(os.environ))
    expected = _variants_2_8(kernel)
    for _ in range(2):
        assert json.loads(modern.run("eval", "--json", ".#variants", cwd=kernel)) == expected
    lock = (kernel / "flake.lock").read_text()
    assert nix.eval_json(".#variants", cwd=str(kernel)) == expected  # Nix 2.8 on the lock Nix 2.26 wrote
    assert (kernel / "flake.lock").read_text() == lock


def _toolchain_closure(drv: str) -> list[str]:
    """The closure of the store paths ``drv``'s build needs that this machine's store holds:
    from ``drv`` down, every input derivation whose outputs are all valid is a root (its
    runtime closure is needed, not its own inputs); any other is built, so its inputs count."""
    roots: set[str] = set()
    todo, seen = [drv], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        outputs = nix.run_nix(["-q", "--outputs", current], program="nix-store").stdout.split()
        if current != drv and not nix.invalid_paths(outputs):
            roots.update(outputs)
            continue
        todo += [p for p in nix.run_nix(["-q", "--references", current], program="nix-store").stdout.split() if p.endswith(".drv")]
    return sorted(set(nix.run_nix(["-qR", *roots], program="nix-store").stdout.split())) if roots else []


@pytest.mark.slow
def test_relu_cpu_variant_builds_with_nix_2_26(modern: ModernNix, repo: Path) -> None:
    """relu's torch213 CPU variant (sources salted: never built), built by Nix 2.26 in its
    sandbox (with Debian 13's /bin/sh in it) into its own store. The toolchain paths it
    needs are this machine's (Nix 2.26 cannot open a 2.8 store without changing its
    database, so they are shared read-only, see ``ModernNix.share``); what this machine's
    store lacks, Nix 2.26 builds."""
    kernel = repo / "examples" / "relu"
    (kernel / "flake.lock").unlink(missing_ok=True)  # Nix 2.8 refuses the lock Nix 2.26 wrote for `path:../..`
    attr = f".#redistributable.{RELU_CPU}"
    drv = nix.eval_json(f"{attr}.drvPath", flake_args=["--no-write-lock-file"], cwd=str(kernel))
    assert isinstance(drv, str)
    shared = _toolchain_closure(drv)
    assert shared, "this machine's store holds none of the toolchain: run `kernel-builder toolchain fetch`"
    modern.share(shared)
    out = json.loads(modern.run("build", "--json", "--no-link", "--no-write-lock-file", "-L", "-j", "2", "--cores", "2", attr,
                                cwd=kernel))
    assert out[0]["drvPath"] == drv
    tree = modern.store_file(out[0]["outputs"]["out"])
    assert list(tree.rglob("metadata.json")) and list(tree.rglob("_relu_*.so")), sorted(p.name for p in tree.rglob("*"))
    assert nix.invalid_paths([out[0]["outputs"]["out"]]) == [out[0]["outputs"]["out"]]  # not in this machine's store
