"""Nix evaluation of kernel flakes: variant lists equal the Python matrix, outputs exist."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import attrs
import pytest

from kernel_builder import nix
from kernel_builder.config import load
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from kernel_builder.toolchain.host.record import ToolchainsRecord
from kernel_builder.variants.buildsets import load_build_sets
from kernel_builder.variants.matrix import matrix
from boundaries import VARIANT_BUILD_DIRS, context_nix_modules, driver_closure
from nix_support import EXAMPLES, PINNED_RELU, PINNED_RELU_BUILDABLE, PINNED_RELU_OLD, PINNED_RELU_BUILT, PINNED_RELU_CPU, PINNED_RELU_CROSS_CPU, PINNED_RELU_CROSS_CUDA, PINNED_RELU_CUDA, commit_all, copy_kernel, environ_set, flake_variants, make_dirty, snapshot_builder, torch214_python

SYSTEM = "x86_64-linux"
REPO = Path(__file__).resolve().parents[2]
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "build.toml").is_file())


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("state")
    root = snapshot_builder(tmp_path_factory.mktemp("builder"))
    with environ_set({"KERNEL_BUILDER_STATE_DIR": str(path), "KERNEL_BUILDER_ROOT": str(root)}):
        yield path


def _with_torch214(state: Path) -> None:
    from kernel_builder.toolchain.host.discover import discover, write_toolchains

    write_toolchains(discover([torch214_python(state)], state=state), state=state)


def test_there_are_examples_to_compare() -> None:
    assert {"relu", "silu-and-mul"} <= set(EXAMPLE_NAMES)


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_nix_variants_equal_python_matrix(example: str, tmp_path: Path, state: Path) -> None:
    kernel = copy_kernel(example, tmp_path / example, git=False)
    listed = flake_variants(load(kernel), load_build_sets(), SYSTEM)
    expected = [v.name for v in listed]
    prepared = prepare_kernel_flake(kernel)
    assert nix.eval_json(prepared.installable("variants"), flake_args=prepared.flake_args) == expected
    table = nix.eval_json(prepared.installable("variantTable"), flake_args=prepared.flake_args)
    assert [row["name"] for row in table] == expected
    assert [row["name"] for row in table if row["bundle"]] == [v.name for v in listed if v.bundle]


def test_buildable_variants_follow_the_recorded_toolchain(tmp_path: Path, state: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    # the host provider, which finds only this venv: torch 2.13 CPU
    prepared = prepare_kernel_flake(kernel, state=tmp_path / "fresh-state", toolchain="host")
    table = {row["name"]: row for row in nix.eval_json(prepared.installable("variantTable"), flake_args=prepared.flake_args)}
    buildable = sorted(name for name, row in table.items() if row["buildable"])
    assert buildable == ["torch213-cxx11-cpu-x86_64-linux"]
    assert "torch 2.12" in table["torch212-cxx11-cpu-x86_64-linux"]["reason"]
    # an unbuildable variant is a clear evaluation error, not a broken derivation
    with pytest.raises(Exception, match="cannot build variant torch212-cxx11-cu126-x86_64-linux"):
        nix.eval_json(prepared.installable("redistributable.torch212-cxx11-cu126-x86_64-linux.drvPath"), flake_args=prepared.flake_args)


def test_flake_check_passes_and_outputs_have_the_documented_shape(tmp_path: Path, state: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", git=True)
    prepared = prepare_kernel_flake(kernel)
    # Evaluation builds each variant's plan and deps steps (import from derivation, see
    # docs/architecture.md); `--no-build` opens the store read-only, so they are built first
    # by evaluating every variant's derivation path (cross-built ones too), as docs/nix.md says.
    nix.eval_json(prepared.installable(f"legacyPackages.{SYSTEM}.redistributable"),
                  flake_args=[*prepared.flake_args, "--apply", "vs: builtins.mapAttrs (n: v: (builtins.tryEval v.drvPath).value) vs"])
    nix.run_nix(["flake", "check", "--no-build", *prepared.flake_args, prepared.ref])
    shown = {
        output: nix.eval_json(
            prepared.installable(f"{output}.{SYSTEM}"), flake_args=[*prepared.flake_args, "--apply", "builtins.attrNames"]
        )
        for output in ("packages", "devShells", "checks", "legacyPackages")
    }
    assert shown["packages"] == ["build-and-copy", "build-and-upload", "build-variants", "bundle", "ci", "ci-test", "default", "kernels"]
    assert shown["devShells"] == ["default", "test", *PINNED_RELU_BUILDABLE]
    native = PINNED_RELU + PINNED_RELU_OLD  # every x86_64 variant, bundle or not
    assert shown["checks"] == sorted([*native, *(f"{name}-tests" for name in native)])  # relu has tests/
    assert {"variants", "redistributable", "bundle", "variantTable"} <= set(shown["legacyPackages"])


def test_cpu_only_edit_changes_only_cpu_derivations(tmp_path: Path, state: Path) -> None:
    """Per-backend source filtering, checked on derivation paths (no build needed)."""
    _with_torch214(state)
    kernel = copy_kernel("relu", tmp_path / "relu", git=True)
    make_dirty(kernel)

    def drv_paths() -> dict[str, str]:
        prepared = prepare_kernel_flake(kernel)
        apply = "rs: builtins.mapAttrs (n: d: (builtins.tryEval d.drvPath).value) rs"
        return nix.eval_json(prepared.installable("redistributable"), flake_args=[*prepared.flake_args, "--apply", apply])

    before = drv_paths()
    cpu_source = kernel / "relu_cpu" / "relu_cpu.cpp"
    cpu_source.write_text(cpu_source.read_text() + "\n// edited\n")
    (kernel / "NOTES.txt").write_text("not a source\n")
    after = drv_paths()
    buildable = sorted(name for name, drv in before.items() if drv)
    assert buildable == PINNED_RELU_BUILDABLE
    changed = sorted(name for name in before if before[name] != after[name])
    assert changed == sorted(name for name in PINNED_RELU_BUILDABLE if "-cpu-" in name)
    cuda_source = kernel / "relu_cuda" / "relu.cu"
    cuda_source.write_text(cuda_source.read_text() + "\n// edited\n")
    last = drv_paths()
    assert sorted(name for name in after if after[name] != last[name]) == sorted(name for name in PINNED_RELU_BUILDABLE if "-cu1" in name)


def test_each_backend_sees_only_its_sources(tmp_path: Path, state: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    (kernel / "relu_cpu" / "include").mkdir()
    (kernel / "relu_cpu" / "include" / "helpers.h").write_text("#pragma once\n")
    (kernel / "build" / "old").mkdir(parents=True)
    (kernel / "NOTES.md").write_text("notes\n")
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace('src = ["relu_cpu/relu_cpu.cpp"]', 'src = ["relu_cpu/relu_cpu.cpp"]\ninclude = ["relu_cpu/include"]'))
    prepared = prepare_kernel_flake(kernel)

    def files(backend: str) -> list[str]:
        root = Path(nix.eval_json(prepared.installable(f"sources.{backend}"), flake_args=prepared.flake_args))
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())

    common = ["build.toml", "torch-ext/relu/__init__.py", "torch-ext/relu/layers.py", "torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h"]
    assert files("cpu") == sorted([*common, "relu_cpu/include/helpers.h", "relu_cpu/relu_cpu.cpp"])
    assert files("cuda") == sorted([*common, "relu_cuda/relu.cu"])


def test_a_toolchain_provider_is_a_seam(tmp_path: Path, state: Path) -> None:
    """A provider passed by the kernel flake replaces the host one; matrix and variant
    derivation stay as they are (this is how a hermetic provider plugs in)."""
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    (kernel / "flake.nix").write_text(
        (kernel / "flake.nix").read_text().replace(
            "path = ./.; }",
            'path = ./.; toolchainProvider = { recorded, system }: buildSet: { available = true; reason = ""; '
            'driverPython = "/opt/fake/bin/python"; toolchainPython = "/opt/fake/${buildSet.key}/bin/python"; '
            'env = { PATH = "/opt/fake/bin"; }; identity = { toolchainProvider = "fake"; }; }; }',
        )
    )
    prepared = prepare_kernel_flake(kernel)
    table = nix.eval_json(prepared.installable("variantTable"), flake_args=prepared.flake_args)
    assert table and all(row["buildable"] for row in table)
    drv = nix.eval_json(
        prepared.installable("redistributable.torch212-cxx11-cu126-x86_64-linux"),
        flake_args=[*prepared.flake_args, "--apply", "d: { inherit (d) toolchainPython toolchainProvider PATH; }"],
    )
    assert drv == {"toolchainPython": "/opt/fake/torch2.12-cuda12.6/bin/python", "toolchainProvider": "fake", "PATH": "/opt/fake/bin"}


def test_a_stale_locked_builder_is_never_used(tmp_path: Path, state: Path) -> None:
    """A kernel whose flake.lock pins an old builder still builds with this one: the wrapper
    always overrides the `kernel-builder` input and never rewrites the kernel's lock file."""
    stale = tmp_path / "stale-builder"
    stale.mkdir()
    (stale / "flake.nix").write_text(
        '{ outputs = { self }: { lib.genKernelFlakeOutputs = _: throw "stale kernel-builder used"; }; }\n'
    )
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    (kernel / "flake.nix").write_text((kernel / "flake.nix").read_text().replace(
        next(line for line in (kernel / "flake.nix").read_text().splitlines() if "kernel-builder.url" in line),
        f'  inputs.kernel-builder.url = "path:{stale}";',
    ))
    nix.run_nix(["flake", "lock"], cwd=str(kernel))
    lock = (kernel / "flake.lock").read_text()
    assert str(stale) in lock
    with pytest.raises(Exception, match="stale kernel-builder used"):  # the lock really pins the stale builder
        nix.eval_json(f"path:{kernel}#legacyPackages.{SYSTEM}.variants")
    prepared = prepare_kernel_flake(kernel)
    expected = [v.name for v in flake_variants(load(kernel), load_build_sets(), SYSTEM)]
    assert nix.eval_json(prepared.installable("variants"), flake_args=prepared.flake_args) == expected
    assert (kernel / "flake.lock").read_text() == lock


def test_toolchain_identity_is_a_derivation_input(tmp_path: Path, state: Path) -> None:
    """The variant derivation carries the toolchain identity: a change in the variant's own
    toolchain (torch files, compiler) changes its derivation; an unrelated one does not."""
    from kernel_builder.toolchain.host.discover import load_toolchains
    from kernel_builder.flake.kernel_flake import prepare_flake_input
    from kernel_builder.identity import kernel_identity

    fresh = tmp_path / "fresh-state"
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    prepared = prepare_kernel_flake(kernel, state=fresh, toolchain="host")  # this venv only: torch 2.13 CPU
    record = load_toolchains(state=fresh)
    assert record is not None
    cpu213 = "redistributable.torch213-cxx11-cpu-x86_64-linux"
    inputs = nix.eval_json(
        prepared.installable(cpu213),
        flake_args=[*prepared.flake_args, "--apply", "d: { inherit (d) torchVersion torchRecordHash cxxVersion cmakeVersion ninjaVersion toolchainProvider; }"],
    )
    entry = record.build_sets["torch2.13-cpu"]
    assert inputs == {
        "torchVersion": entry.torch_version, "torchRecordHash": entry.torch_record_hash,
        "cxxVersion": record.compiler.version, "cmakeVersion": entry.cmake_version,
        "ninjaVersion": entry.ninja_version, "toolchainProvider": "host",
    }

    def drv_path(changed: ToolchainsRecord) -> str:
        flake_input = prepare_flake_input(changed, kernel_identity(kernel), state=fresh)
        args = ["--override-input", "kernel-builder", f"path:{flake_input}", "--no-write-lock-file"]
        return str(nix.eval_json(prepared.installable(f"{cpu213}.drvPath"), flake_args=args))

    base = drv_path(record)
    torch_changed = attrs.evolve(record, build_sets={**record.build_sets, "torch2.13-cpu": attrs.evolve(entry, torch_record_hash="0" * 64)})
    compiler_changed = attrs.evolve(record, compiler=attrs.evolve(record.compiler, version=record.compiler.version + " (patched)"))
    other = attrs.evolve(entry, torch_version="2.12.0", python="/opt/other/bin/python")
    unrelated = attrs.evolve(record, build_sets={**record.build_sets, "torch2.12-cpu": other})
    assert drv_path(torch_changed) != base
    assert drv_path(compiler_changed) != base
    assert drv_path(unrelated) == base
    assert load_toolchains(state=fresh) == record  # the derivations were evaluated from copies


def _nix_kernel_identity(ref: str, record: dict, tmp_path: Path) -> dict:
    """kernel-identity.nix applied as gen-flake-outputs applies it, to the flake ``ref``'s own
    ``self`` (what Nix gives that tree: a revision only when it is clean git) and ``./.``,
    without a record and with ``record``."""
    (tmp_path / "record.json").write_text(json.dumps(record))
    expr = f"""
      let
        self = builtins.getFlake "{ref}";
        identity = import {REPO}/nix/lib/pure/kernel-identity.nix;
        at = recorded: identity {{ inherit self recorded; path = self.outPath; }};
      in {{ unrecorded = at null; recorded = at (builtins.fromJSON (builtins.readFile {tmp_path}/record.json)); }}
    """
    return json.loads(nix.run_nix(["eval", "--json", "--impure", "--expr", expr]).stdout)


@pytest.mark.parametrize("where", ["clean-git", "dirty-git", "outside-git"])
def test_kernel_identity_is_one_rule_in_python_and_nix(where: str, tmp_path: Path) -> None:
    """kernel_builder.identity and kernel-identity.nix give one identity for one tree. Without
    a record Nix sees no revision in a dirty tree and treats it as outside git (the reason
    `kernel-builder build` records the identity); the record passes through unchanged."""
    from kernel_builder.identity import kernel_identity

    kernel = tmp_path / "kernel"
    kernel.mkdir()
    shutil.copy(EXAMPLES / "relu" / "build.toml", kernel / "build.toml")
    (kernel / "flake.nix").write_text("{ outputs = { self }: { }; }\n")
    if where != "outside-git":
        commit_all(kernel, init=True)
    if where == "dirty-git":
        with (kernel / "build.toml").open("a") as handle:
            handle.write("# an edit\n")
    python = kernel_identity(kernel)
    as_nix = {"uniqueId": python.unique_id, "commit": python.commit, "dirty": python.dirty}
    ref = f"path:{kernel}" if where == "outside-git" else f"git+file://{kernel}"
    nix_says = _nix_kernel_identity(ref, python.as_record(), tmp_path)
    assert nix_says["recorded"] == as_nix
    if where == "dirty-git":
        assert python.unique_id.endswith("_dirty")
        plain = tmp_path / "plain"
        plain.mkdir()
        shutil.copy(kernel / "build.toml", plain / "build.toml")
        outside = kernel_identity(plain)
        assert nix_says["unrecorded"] == {"uniqueId": outside.unique_id, "commit": None, "dirty": False}
    else:
        assert nix_says["unrecorded"] == as_nix


def test_dev_shell_has_the_variant_toolchain(tmp_path: Path, state: Path) -> None:
    """`nix develop .#devShells.<sys>.<variant>` gives a shell with that variant's toolchain."""
    import subprocess

    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    prepared = prepare_kernel_flake(kernel, state=tmp_path / "fresh-state", toolchain="host")  # this venv only
    variant = "torch213-cxx11-cpu-x86_64-linux"
    done = subprocess.run(
        nix.nix_argv(
            "develop", *prepared.flake_args, prepared.installable(f"devShells.{SYSTEM}.{variant}"),
            "--command", "bash", "-c", 'echo "variant=$variant python=$toolchainPython cmake=$(command -v cmake)"',
        ),
        # the host toolchain's shell runs this machine's /bin/bash: only host builds turn the sandbox off
        cwd=kernel, env=nix.nix_env(sandbox=False), capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    from kernel_builder.toolchain.host.discover import load_toolchains

    record = load_toolchains(state=tmp_path / "fresh-state")
    assert record is not None
    entry = record.build_sets["torch2.13-cpu"]
    line = done.stdout.strip().splitlines()[-1]
    assert line == f"variant={variant} python={entry.python} cmake={entry.env_bin}/cmake"


def test_variant_python_source_is_the_driver_closure(tmp_path: Path) -> None:
    """context.nix hands the derivations the packages the plan, object, link and variant
    steps may import, by directory, and the core modules they import, by name
    (tests/test_boundaries.py holds the imports to both lists), and nothing of the front
    end: no cli/, flake/, toolchain/, hub/, loader/ or layers/ file, no _children.py."""
    builder = snapshot_builder(tmp_path / "builder")
    src = f'{{ outPath = builtins.path {{ path = {builder}; name = "kernel-builder-src"; }}; }}'
    done = nix.run_nix(["eval", "--raw", "--impure", "--expr", f"(import {builder}/nix/lib/builders/context.nix {{ builderSrc = {src}; }}).pythonSrc"])
    store = Path(done.stdout.strip())
    shipped = {p.relative_to(store).as_posix() for p in store.rglob("*.py")}
    closure = driver_closure()
    assert closure <= shipped, sorted(closure - shipped)
    package = REPO / "python"
    expected = {
        p.relative_to(package).as_posix()
        for p in (package / "kernel_builder").rglob("*.py")
        if "__pycache__" not in p.parts
        and (p.name in context_nix_modules() if p.parent.name == "kernel_builder"
             else p.relative_to(package / "kernel_builder").parts[0] in VARIANT_BUILD_DIRS)
    }
    assert shipped == expected
    assert "kernel_builder/_children.py" not in shipped
    assert (store / "kernel_builder" / "driver" / "templates" / "CMakeLists.txt.j2").is_file()
    assert (store / "kernel_builder" / "data" / "python_dependencies.json").is_file()


def test_editing_code_outside_the_variant_build_rebuilds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Touching the front end (the build CLI, the module that selects build's variants,
    --local, toolchain setup, the loader, the Hub card, the core modules only the front end
    imports) keeps every variant derivation (and so every object), so
    `nix build --dry-run` has nothing new to build; touching driver/ changes them."""
    from nix_support import dry_run

    builder = snapshot_builder(tmp_path / "builder")
    monkeypatch.setenv("KERNEL_BUILDER_ROOT", str(builder))
    monkeypatch.setenv("KERNEL_BUILDER_STATE_DIR", str(tmp_path / "state"))
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    attr = "redistributable.torch213-cxx11-cpu-x86_64-linux"

    def drv_and_plan() -> tuple[str, list[str]]:
        prepared = prepare_kernel_flake(kernel, state=tmp_path / "state")
        drv = str(nix.eval_json(prepared.installable(f"{attr}.drvPath"), flake_args=prepared.flake_args))
        return drv, dry_run([prepared.installable(attr)], flake_args=prepared.flake_args)

    before = drv_and_plan()
    for rel in ("cli/build.py", "flake/selection.py", "flake/local.py", "toolchain/host/setup.py", "loader/api.py", "hub/card.py",
                "_children.py", "benchmark.py"):
        path = builder / "python" / "kernel_builder" / rel
        path.write_text(path.read_text() + "\n# touched\n")
    assert drv_and_plan() == before
    generate = builder / "python" / "kernel_builder" / "driver" / "generate.py"
    generate.write_text(generate.read_text() + "\n# touched\n")
    assert drv_and_plan()[0] != before[0]


def _nix_lib_tests(repo: Path) -> dict:
    done = nix.run_nix(["eval", "--json", "--impure", "--expr", f"import {repo}/nix/lib/tests"])
    return json.loads(done.stdout)


def test_nix_unit_tests_pass_and_cover_every_export() -> None:
    """nix/lib/tests: every { expr; expected; } holds, and its meta-tests find no export of a
    pure module or of the lib without a test, no unlisted pure file and no unrun test file."""
    result = _nix_lib_tests(REPO)
    assert result["failures"] == []
    assert result["untested"] == []
    assert result["unlisted"] == []
    assert result["count"] >= 100


def test_the_nix_meta_tests_catch_an_untested_export(tmp_path: Path) -> None:
    repo = snapshot_builder(tmp_path / "repo")
    for example in ("relu", "silu-and-mul"):
        shutil.copytree(EXAMPLES / example, repo / "examples" / example)
    pure = repo / "nix" / "lib" / "pure"
    names = pure / "names.nix"
    names.write_text(names.read_text().rstrip().removesuffix("}") + "  shout = s: s + \"!\";\n}\n")
    (pure / "extra.nix").write_text("{ f = x: x; }\n")
    (repo / "nix" / "lib" / "tests" / "test_extra_things.nix").write_text("{ }\n")
    result = _nix_lib_tests(repo)
    assert result["failures"] == []
    assert result["untested"] == ["names.shout"]
    assert result["unlisted"] == [
        "pure/extra.nix is not a module of pure/default.nix",
        "tests/test_extra_things.nix is run by no suite",
    ]


def _code(text: str) -> str:
    """Nix source without comments."""
    return re.sub(r"#[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def test_pure_modules_make_no_derivations_and_no_store_paths() -> None:
    """nix/lib/pure is builtins only: nothing there builds, copies into the store or reaches
    into the derivation builders; nix/lib/builders holds all of that."""
    forbidden = re.compile(
        r"\bderivation\b|builtins\.(path|storePath|toFile|filterSource|fetch\w*)\b|\.\./builders|toolchains"
    )
    files = sorted((REPO / "nix" / "lib" / "pure").glob("*.nix"))
    assert len(files) >= 7
    for path in files:
        assert not forbidden.findall(_code(path.read_text())), path.name
    builders = _code((REPO / "nix" / "lib" / "builders" / "variant.nix").read_text())
    assert forbidden.search(builders)  # the pattern does see a builder
