"""kernels-community's CI (`.github/workflows/build.yaml` in huggingface/kernels-community)
runs on a kernel flake made by `kernel-builder init` that points at this builder: its
commands, as it writes them, evaluate the backend outputs for x86_64-linux and
aarch64-linux, build `backendCi.cpu` and `ci-test`, and the ci-test closure exports and runs
the kernel's tests with nothing but itself in /nix/store and no environment."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from packaging.version import Version

from kernel_builder.cli.init import INIT_BACKENDS, scaffold_files
from kernel_builder.config import load, loads
from kernel_builder import nix
from kernel_builder.variants.buildsets import load_build_sets
from kernel_builder.variants.matrix import variant_for
from nix_support import commit_all, flake_variants, kernel_builder, snapshot_builder

SYSTEMS = ("x86_64-linux", "aarch64-linux")

# build.yaml's commands, unchanged but for the quoting of $KERNEL (it is the current directory
# here) and the compression of the exported closure (`nix run nixpkgs#zstd` needs the network).
EVAL = "nix eval .#{target} --apply builtins.attrNames --json --system {system}"
BUILD_BACKEND_CI = 'nix build -L ".#backendCi.$BACKEND" && ls -l result/'
COPY_RESULT = "cp -rL result build && rm result && chmod -R u+w build"
BUILD_CI_TEST = "nix build -L .#ci-test"

# `sh -c` program: $1 a scratch directory, $2 the closure's store paths, then the command.
# The real store is bound to $1, a tmpfs hides /nix/store, and each closure path is bound
# back: the command sees the closure and nothing else of the store (as after
# `nix-store --import` on another machine, without copying gigabytes here).
ONLY_CLOSURE = """
stage=$1; closure=$2; shift 2
mount --bind /nix/store "$stage" && mount -t tmpfs closure /nix/store || exit 1
for p in $closure; do
  n=${p#/nix/store/}
  if [ -d "$stage/$n" ]; then mkdir "$p"; else : > "$p"; fi
  mount --bind "$stage/$n" "$p" || exit 1
done
exec env -i "$@"
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """An `init` kernel (cpu, cuda) whose flake input is a snapshot of this builder, its
    tests marked for CI as kernels-community marks them, committed; and the environment
    (offline Nix settings, sandbox on as on kernels-community's runners)."""
    root = tmp_path_factory.mktemp("ci")
    state = root / "state"
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(state)}
    builder = snapshot_builder(root / "builder")
    path = root / "my-kernel"
    kernel_builder("init", str(path), "--name", "test-org/my-kernel", "--backends", "cpu,cuda",
                   "--builder-url", f"path:{builder}", "--no-git", env=env)
    test_file = path / "tests" / "test_my_kernel.py"
    test_file.write_text(test_file.read_text().replace("\nimport torch\n", "\nimport torch\n\npytestmark = pytest.mark.kernels_ci\n", 1))
    commit_all(path, init=True)
    os.environ["KERNEL_BUILDER_STATE_DIR"] = str(state)  # nix_env's empty registry lives there
    try:
        nix_env = nix.nix_env(env, sandbox=True)
    finally:
        os.environ.pop("KERNEL_BUILDER_STATE_DIR", None)
    return path, nix_env


def _sh(script: str, cwd: Path, env: dict[str, str], **extra: str) -> str:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env={**env, **extra},
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{script}\nexit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
    return done.stdout


def _eval(kernel: Path, env: dict[str, str], attr: str, apply: str | None = None) -> object:
    args = ["nix", "eval", "--json", f".#{attr}"] + (["--apply", apply] if apply else [])
    done = subprocess.run(args, cwd=kernel, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


def _newest(rows: list[dict], backend: str) -> str:
    """The representative the outputs promise: the newest torch of the backend's buildable
    bundle variants, the older backend version on a tie."""
    candidates = [r for r in rows if r["backend"] == backend and r["buildable"] and r["bundle"]]
    by_backend_version = sorted(candidates, key=lambda r: Version(r["backendVersion"] or "0"))
    return max(by_backend_version, key=lambda r: Version(r["torch"]))["name"]  # max keeps the first


def test_the_matrix_commands_list_the_backends_of_both_systems(kernel: tuple[Path, dict[str, str]]) -> None:
    """`nix eval .#backendCi|backendBundle --apply builtins.attrNames --json --system S`
    for both runner systems (the setup job), and what each backend output holds."""
    path, env = kernel
    for target in ("backendCi", "backendBundle"):
        for system in SYSTEMS:
            assert json.loads(_sh(EVAL.format(target=target, system=system), path, env)) == ["cpu", "cuda"]
    names = {s: [v.name for v in flake_variants(load(path), load_build_sets(), s)] for s in SYSTEMS}
    for system in SYSTEMS:
        legacy = f"legacyPackages.{system}"
        listed = _eval(path, env, f"{legacy}.variantTable")
        # the Python matrix of that system (x86_64-linux's also lists the variants it cross-builds)
        assert [r["name"] for r in listed] == names[system]
        table = [r for r in listed if r["name"].endswith(system)]
        ci = _eval(path, env, f"{legacy}.backendCi", "builtins.mapAttrs (_: b: b.variantNames)")
        assert ci == {b: [_newest(table, b)] for b in ("cpu", "cuda")}
        bundles = _eval(path, env, f"{legacy}.backendBundle", "builtins.mapAttrs (_: b: b.variantNames)")
        assert bundles == {b: [r["name"] for r in table if r["backend"] == b and r["bundle"] and r["buildable"]] for b in ("cpu", "cuda")}
        assert all(n.endswith(system) for ns in bundles.values() for n in ns)
    # aarch64-linux's outputs are its native toolchains' (an ARM runner builds them itself);
    # x86_64-linux cross-builds the same variants with derivations of its own
    # (their derivations' attributes only: their paths may need that machine to evaluate)
    name = _eval(path, env, "legacyPackages.aarch64-linux.backendCi.cpu.variantNames")[0]
    assert _eval(path, env, "legacyPackages.aarch64-linux.backendCi.cpu.system") == "aarch64-linux"
    assert _eval(path, env, f"legacyPackages.aarch64-linux.redistributable.{name}.system") == "aarch64-linux"
    assert _eval(path, env, f"legacyPackages.x86_64-linux.redistributable.{name}.system") == "x86_64-linux"


def test_the_other_upstream_outputs(kernel: tuple[Path, dict[str, str]]) -> None:
    """ciTests per variant this machine can run, ci-test the newest CUDA one (upstream's
    preference), pkgs per buildable variant, archVariants, kernels, and the builder's
    lib.allBuildVariantsJSON."""
    path, env = kernel
    table = _eval(path, env, "variantTable")
    here = [r for r in table if r["name"].endswith("x86_64-linux")]
    runnable = [r["name"] for r in here if r["buildable"]]
    assert sorted(_eval(path, env, "ciTests", "builtins.attrNames")) == sorted(runnable)
    assert _eval(path, env, "ci-test.name") == f"my-kernel-{_newest(here, 'cuda')}-ci-test"
    assert sorted(_eval(path, env, "pkgs", "builtins.attrNames")) == sorted(runnable)
    assert {"env", "python", "runtime", "testSite"} <= set(_eval(path, env, f"pkgs.{runnable[0]}", "builtins.attrNames"))
    assert set(_eval(path, env, "archVariants")) == {r["name"] for r in here}
    assert _eval(path, env, "kernels.meta.mainProgram") == "kernels"
    # aarch64-linux's are its own evaluation's: the tests of its variants, run on its machine
    arm_runnable = [r["name"] for r in _eval(path, env, "legacyPackages.aarch64-linux.variantTable")
                    if r["buildable"] and r["name"].endswith("aarch64-linux")]
    assert sorted(_eval(path, env, "legacyPackages.aarch64-linux.ciTests", "builtins.attrNames")) == sorted(arm_runnable)
    assert _eval(path, env, f"legacyPackages.aarch64-linux.ciTests.{arm_runnable[0]}.system") == "aarch64-linux"

    build = loads(scaffold_files("o/all", list(INIT_BACKENDS), "Apache-2.0", "path:/x")["build.toml"], path=Path("build.toml"))
    expected: dict[str, dict[str, list[str]]] = {}
    for bs in load_build_sets():
        if bs.bundle:
            names = expected.setdefault(bs.system, {}).setdefault(bs.backend.value, [])
            if variant_for(build, bs).name not in names:
                names.append(variant_for(build, bs).name)
    builder = re.search(r'url = "path:([^"]+)"', (path / "flake.nix").read_text()).group(1)
    done = subprocess.run(["nix", "eval", "--raw", f"path:{builder}#lib.allBuildVariantsJSON"], env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected


def test_ci_test_of_a_kernel_without_tests_runs_nothing_and_says_so(kernel: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """Upstream's script does nothing without tests/; so does ours, saying so."""
    path, env = kernel
    bare = tmp_path / "bare"
    shutil.copytree(path, bare, ignore=shutil.ignore_patterns(".git", "tests", "build", "result*"))
    commit_all(bare, init=True)
    script = _eval(bare, env, "ci-test.script")
    assert "tests=''" in script and "ci-test: my-kernel has no tests/ directory: nothing to run" in script
    assert "tests='/nix/store/" in _eval(path, env, "ci-test.script")


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_build_yaml_builds_backend_ci_and_ci_test_runs_from_its_exported_closure(
    kernel: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    path, env = kernel
    newest_cpu = _eval(path, env, "backendCi.cpu.variantNames")[0]
    # the build-kernel job of a pull request, backend cpu
    listing = _sh(BUILD_BACKEND_CI, path, env, BACKEND="cpu")
    _sh(COPY_RESULT, path, env)
    assert newest_cpu in listing
    assert json.loads((path / "build" / newest_cpu / "metadata.json").read_text())["backend"]["type"] == "cpu"
    assert (path / "build" / "CARD.md").is_file()

    # the build-ci-test job: the script names only paths of its closure, none of this machine
    _sh(BUILD_CI_TEST, path, env)
    ci_test = Path(os.path.realpath(path / "result"))
    script = (ci_test / "bin" / "ci-test").read_text()
    closure = _sh(f"nix-store -qR {ci_test}", path, env).split()
    for mentioned in set(re.findall(r"/nix/store/[a-z0-9]{32}-[A-Za-z0-9+._?-]+", script)):
        assert mentioned in closure, f"ci-test names {mentioned}, which is not in its closure"
    assert not [p for p in re.findall(r"(?<![\w.-])/(?:usr|bin|lib|opt|home|etc|var|work)/\S*", script)], script
    # the export (compressed there; its bytes counted here) holds every path's NAR
    exported = int(_sh(f'nix-store --export $(nix-store -qR "{ci_test}") | wc -c', path, env))
    assert exported > json.loads(_sh(f"nix path-info --json -S {ci_test}", path, env))[0]["closureSize"]
    # the GPU job, where only the imported closure is in the store: a private mount namespace
    # with an empty /nix/store holding just the closure's paths, and an empty environment
    stage = tmp_path / "stage"
    stage.mkdir()
    run = ["unshare", "-m", "sh", "-c", ONLY_CLOSURE, "only-closure", str(stage), " ".join(closure), f"{ci_test}/bin/ci-test"]
    done = subprocess.run(run, capture_output=True, text=True, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-6000:]
    # the CUDA variant on a machine without a GPU: the device tests skip and say why
    assert "1 passed, 3 skipped" in out and "needs a GPU (none here)" in out, out[-6000:]
    assert "PytestUnknownMarkWarning" not in out  # ci-test registers kernels_ci
    # arguments go to pytest: nothing selected passes, as upstream's script accepts it
    done = subprocess.run([*run, "-m", "not kernels_ci"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "ci-test: no test selected" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    # upstream's `kernels` output: the loader's command
    assert "verify-signature" in _sh("nix run .#kernels -- --help", path, env)
