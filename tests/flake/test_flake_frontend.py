"""Fast tests of the Nix front end: selection, nix log parsing, kernel identity, flake
inputs, toolchain discovery, and the `build`/`toolchain`/`init` commands' errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import attrs
import pytest

from kernel_builder import nix
from kernel_builder.driver.ops_id import unique_id
from kernel_builder.flake.selection import default_jobs, select_variants
from kernel_builder.errors import ConfigError, NixError
from kernel_builder.flake.variant_table import Provider, parse_table
from kernel_builder.toolchain.host.discover import build_set_key, discover, is_stale
from kernel_builder.flake.kernel_flake import kernel_flake_ref, needed_files, prepare_flake_input, prepare_kernel_flake
from kernel_builder.identity import kernel_identity
from nix_support import PYTHON, commit_all, copy_kernel, dry_run, kernel_builder

TABLE = parse_table([
    {"name": "torch212-cxx11-cpu-x86_64-linux", "backend": "cpu", "bundle": True, "buildable": False, "reason": "no torch 2.12", "buildSet": "torch2.12-cpu"},
    {"name": "torch213-cxx11-cpu-x86_64-linux", "backend": "cpu", "bundle": True, "buildable": True, "reason": "", "buildSet": "torch2.13-cpu"},
    {"name": "torch211-cxx11-cpu-x86_64-linux", "backend": "cpu", "bundle": False, "buildable": True, "reason": "", "buildSet": "torch2.11-cpu"},
    {"name": "torch214-cxx11-cu130-x86_64-linux", "backend": "cuda", "bundle": True, "buildable": True, "reason": "",
     "buildSet": "torch2.14-cuda13.0", "toolchainProvider": "pinned", "toolchainPython": "/nix/store/x-python/bin/python"},
])


def test_the_variant_table_is_typed_once() -> None:
    entry = TABLE[3]
    assert entry.provider is Provider.PINNED and entry.build_set == "torch2.14-cuda13.0" and entry.python.endswith("python")
    with pytest.raises(NixError, match=r"variantTable\[0\] lacks buildSet"):
        parse_table([{"name": "x", "backend": "cpu", "bundle": True, "buildable": True}])


class TestSelectVariants:
    def test_default_is_every_buildable_bundle_variant_with_notes_for_the_rest(self) -> None:
        selected, notes = select_variants(TABLE, [], [])
        assert selected == ["torch213-cxx11-cpu-x86_64-linux", "torch214-cxx11-cu130-x86_64-linux"]
        assert notes == ["torch212-cxx11-cpu-x86_64-linux: no torch 2.12"]

    def test_backend_filter(self) -> None:
        assert select_variants(TABLE, [], ["cuda"]) == (["torch214-cxx11-cu130-x86_64-linux"], [])

    def test_explicit_variant_may_be_outside_the_bundle(self) -> None:
        assert select_variants(TABLE, ["torch211-cxx11-cpu-x86_64-linux"], []) == (["torch211-cxx11-cpu-x86_64-linux"], [])

    def test_unknown_variant_lists_the_valid_ones(self) -> None:
        with pytest.raises(ConfigError, match="unknown variant 'torch299'") as info:
            select_variants(TABLE, ["torch299"], [])
        assert "torch213-cxx11-cpu-x86_64-linux" in str(info.value.hint)

    def test_unbuildable_variant_says_why(self) -> None:
        with pytest.raises(ConfigError, match="cannot be built here: no torch 2.12"):
            select_variants(TABLE, ["torch212-cxx11-cpu-x86_64-linux"], [])

    def test_unknown_backend(self) -> None:
        with pytest.raises(ConfigError, match="no variant of this kernel has backend 'rocm'"):
            select_variants(TABLE, [], ["rocm"])

    def test_system_filter_picks_that_systems_arch_variants(self) -> None:
        cross = TABLE + parse_table([
            {"name": "torch213-cxx11-cpu-aarch64-linux", "backend": "cpu", "bundle": True, "buildable": True, "reason": "", "buildSet": "torch2.13-cpu"},
            {"name": "torch-cpu", "backend": "cpu", "bundle": True, "buildable": True, "reason": "", "buildSet": "torch2.13-cpu"},
        ])
        assert select_variants(cross, [], [], ["aarch64-linux"]) == (["torch213-cxx11-cpu-aarch64-linux"], [])
        assert select_variants(cross, [], ["cuda"], ["x86_64-linux"]) == (["torch214-cxx11-cu130-x86_64-linux"], [])
        with pytest.raises(ConfigError, match="no variant of this kernel is for system 'riscv64-linux'") as info:
            select_variants(cross, [], [], ["riscv64-linux"])
        assert info.value.hint.endswith("aarch64-linux, x86_64-linux")


@pytest.mark.parametrize(("variants", "cpus", "expected"), [(1, 2, (1, 2)), (4, 2, (2, 1)), (3, 16, (3, 5)), (0, 4, (1, 4))])
def test_default_jobs(variants: int, cpus: int, expected: tuple[int, int]) -> None:
    assert default_jobs(variants, cpus) == expected


@pytest.mark.parametrize(("variants", "cpus"), [(1, 2), (4, 2), (3, 16)])
def test_default_jobs_per_object_keeps_every_cpu_busy_even_for_one_variant(variants: int, cpus: int) -> None:
    assert default_jobs(variants, cpus, per_object=True) == (cpus, 1)


class TestNixDriver:
    def test_options_are_explicit_and_pass_builders_through(self) -> None:
        argv = nix.NixOptions(max_jobs=2, cores=3, print_build_logs=True, builders="ssh://b x86_64-linux").argv()
        assert argv == ["--max-jobs", "2", "--cores", "3", "-L", "--builders", "ssh://b x86_64-linux", "--keep-going"]

    def test_environment_is_offline(self) -> None:
        config = nix.nix_env({})["NIX_CONFIG"]
        assert "substituters =\n" in config and "experimental-features = nix-command flakes" in config
        assert "flake-registry = " in config

    def test_build_events_and_failures_from_a_real_nix_build(self, tmp_path: Path) -> None:
        salt = f"{tmp_path} {time.time_ns()}"  # never built before
        (tmp_path / "flake.nix").write_text(
            "{ outputs = { self }: { packages.x86_64-linux = {\n"
            f'  ok = derivation {{ name = "kb-ok"; system = "x86_64-linux"; builder = "/bin/bash"; args = ["-c" "echo hello; echo {salt} > $out"]; }};\n'
            f'  bad = derivation {{ name = "kb-bad"; system = "x86_64-linux"; builder = "/bin/bash"; args = ["-c" "echo about to fail {salt}; exit 3"]; }};\n'
            "}; }; }\n"
        )
        events: list[nix.BuildEvent] = []
        targets = {"ok": f"path:{tmp_path}#ok", "bad": f"path:{tmp_path}#bad"}
        report = nix.build(targets, nix.NixOptions(max_jobs=2, sandbox=False), on_event=events.append)  # /bin/bash builders
        assert report.returncode != 0
        assert report.failed == ("bad",)
        assert [Path(d).name.split("-", 1)[1] for d in report.failed_drvs] == ["kb-bad.drv"]
        bad = report.failed_drvs[0]
        # the partial result: ok's output although bad failed, keyed by target
        assert list(report.outputs) == ["ok"] and Path(report.outputs["ok"]).read_text().strip() == salt
        assert report.logs[bad] == [f"about to fail {salt}"]
        assert {Path(d).name.split("-", 1)[1] for d in report.built} == {"kb-ok.drv", "kb-bad.drv"}
        assert ("start", bad, "bad") in [(e.kind, e.drv, e.target) for e in events]
        again = nix.build({"ok": f"path:{tmp_path}#ok"}, nix.NixOptions(sandbox=False))
        assert again.returncode == 0 and again.built == () and again.outputs == report.outputs
        assert dry_run([f"path:{tmp_path}#ok"]) == []
        assert [Path(p).name.split("-", 1)[1] for p in dry_run([f"path:{tmp_path}#bad"])] == ["kb-bad.drv"]

    def test_parse_log_line_ignores_noise(self) -> None:
        assert nix.parse_log_line("warning: Git tree is dirty") is None
        assert nix.parse_log_line('@nix {"action":"start","id":1,"type":0,"text":"copying"}') is None
        event = nix.parse_log_line('@nix {"action":"start","fields":["/nix/store/x-a.drv","",1,1],"id":7,"type":105}')
        assert event == nix.BuildEvent("start", drv="/nix/store/x-a.drv", text="7")


class TestKernelIdentity:
    def test_clean_git_is_the_short_commit(self, tmp_path: Path) -> None:
        kernel = copy_kernel("relu", tmp_path / "k")
        head = subprocess.run(["git", "-C", str(kernel), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        assert kernel_identity(kernel).as_record() == {"unique-id": head[:7], "commit": head, "dirty": False}

    def test_dirty_git_is_the_short_commit_dirty_and_stays_while_editing(self, tmp_path: Path) -> None:
        kernel = copy_kernel("relu", tmp_path / "k")
        head = subprocess.run(["git", "-C", str(kernel), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        (kernel / "relu_cpu" / "relu_cpu.cpp").write_text("// one\n")
        first = kernel_identity(kernel)
        (kernel / "relu_cpu" / "relu_cpu.cpp").write_text("// two\n")
        assert first == kernel_identity(kernel)
        assert first.unique_id == head[:7] + "_dirty" and first.dirty
        assert first.unique_id == unique_id(kernel)  # the same id as a local build

    def test_outside_git_it_follows_build_toml_only(self, tmp_path: Path) -> None:
        kernel = copy_kernel("relu", tmp_path / "k", git=False)
        first = kernel_identity(kernel)
        (kernel / "relu_cpu" / "relu_cpu.cpp").write_text("// edited\n")
        assert kernel_identity(kernel) == first and first.commit is None
        assert first.unique_id == unique_id(kernel)  # the same id as a local build
        (kernel / "build.toml").write_text((kernel / "build.toml").read_text() + "\n# changed\n")
        assert kernel_identity(kernel) != first

    def test_flake_ref_is_a_copy_that_follows_the_needed_files_only(self, tmp_path: Path) -> None:
        kernel = copy_kernel("relu", tmp_path / "k")
        state = tmp_path / "state"
        first = kernel_flake_ref(kernel, state=state)
        assert first.startswith(f"path:{state}/kernel-sources/")
        (kernel / "NOTES.md").write_text("not an input\n")
        assert kernel_flake_ref(kernel, state=state) == first
        (kernel / "torch-ext" / "relu" / "new.py").write_text("X = 1\n")  # untracked, but a pyext file
        second = kernel_flake_ref(kernel, state=state)
        assert second != first and (Path(second[5:]) / "torch-ext" / "relu" / "new.py").is_file()
        assert kernel_flake_ref(copy_kernel("relu", tmp_path / "plain", git=False), state=state) == first  # content, not place

    def test_an_untracked_source_listed_in_build_toml_is_copied(self, tmp_path: Path) -> None:
        kernel = copy_kernel("relu", tmp_path / "k")
        (kernel / "relu_cpu" / "extra.cpp").write_text("// new\n")
        toml = kernel / "build.toml"
        toml.write_text(toml.read_text().replace('src = ["relu_cpu/relu_cpu.cpp"]', 'src = ["relu_cpu/relu_cpu.cpp", "relu_cpu/extra.cpp"]'))
        ref = prepare_kernel_flake(kernel, state=tmp_path / "state").ref
        assert (Path(ref[5:]) / "relu_cpu" / "extra.cpp").is_file()

    def test_a_torch_include_directory_is_copied_whole(self, tmp_path: Path) -> None:
        """[torch] include directories are inputs too (Build.input_paths, nix/lib/pure/inputs.nix)."""
        kernel = copy_kernel("relu", tmp_path / "k")
        toml = kernel / "build.toml"
        toml.write_text(toml.read_text().replace("[torch]\n", '[torch]\ninclude = ["common"]\n', 1))
        assert "common" in needed_files(kernel)
        (kernel / "common" / "sub").mkdir(parents=True)
        (kernel / "common" / "sub" / "util.h").write_text("#pragma once\n")
        ref = prepare_kernel_flake(kernel, state=tmp_path / "state").ref
        assert (Path(ref[5:]) / "common" / "sub" / "util.h").is_file()


class TestToolchains:
    def test_discover_records_this_venv_and_rejects_a_python_without_torch(self, tmp_path: Path) -> None:
        record = discover(state=tmp_path)
        entry = record.build_sets[build_set_key("2.13", "cpu")]
        assert entry.torch_version.startswith("2.13") and len(entry.torch_record_hash) == 64
        assert record.hermetic is False and record.provider == "host"
        assert "cmake version" in entry.cmake_version
        assert not is_stale(record)
        bare = tmp_path / "bare"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
        with pytest.raises(ConfigError, match="has no torch installed"):
            discover([str(bare / "bin" / "python")], state=tmp_path)
        with pytest.raises(ConfigError, match="does not exist"):
            discover([str(tmp_path / "nope" / "python")], state=tmp_path)

    def test_a_changed_environment_makes_the_record_stale(self, tmp_path: Path) -> None:
        record = discover(state=tmp_path)
        first = attrs.evolve(record.environments[0], stamp="0,0")
        assert is_stale(attrs.evolve(record, environments=(first, *record.environments[1:])))

    def test_flake_input_is_content_addressed_and_leaves_sources_alone(self, tmp_path: Path) -> None:
        kernel = copy_kernel("relu", tmp_path / "k")
        identity = kernel_identity(kernel)
        record = discover(state=tmp_path)
        first = prepare_flake_input(record, identity, state=tmp_path)
        assert prepare_flake_input(record, identity, state=tmp_path) == first
        assert json.loads((first / "state" / "kernel.json").read_text())["unique-id"] == identity.unique_id
        assert (first / "flake.nix").is_file() and (first / "nix" / "lib" / "builders" / "variant.nix").is_file()
        patched = attrs.evolve(record, compiler=attrs.evolve(record.compiler, version="c++ 99"))
        assert prepare_flake_input(patched, identity, state=tmp_path) != first
        status = subprocess.run(["git", "-C", str(kernel), "status", "--porcelain"], capture_output=True, text=True).stdout
        assert status == ""

    def test_toolchain_commands(self, tmp_path: Path) -> None:
        env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path)}
        done = kernel_builder("toolchain", "discover", "--json", env=env)
        assert "torch2.13-cpu" in json.loads(done.stdout)["build-sets"]
        assert "not hermetic" in done.stderr
        assert (tmp_path / "toolchains.json").is_file()
        # one environment per torch pin of the lock; the venv's torch 2.13.0+cpu is torch 2.13.0
        done = kernel_builder("toolchain", "setup", "--dry-run", "--only", "torch213", "--reuse", PYTHON, env=env)
        assert f"torch213: reuse {Path(PYTHON).parent / 'python'}" in done.stderr
        done = kernel_builder("toolchain", "setup", "--dry-run", "--only", "torch214", env=env)
        assert f"torch214: create {tmp_path / 'envs' / 'torch214' / 'bin' / 'python'}" in done.stderr


class TestBuildCommandErrors:
    def test_build_toml_errors_come_before_nix(self, tmp_path: Path) -> None:
        kernel = copy_kernel("relu", tmp_path / "k", git=False)
        (kernel / "build.toml").write_text((kernel / "build.toml").read_text().replace('backend = "cpu"', 'backend = "cpuu"'))
        done = kernel_builder("build", str(kernel), env=dict(os.environ), check=False)
        assert done.returncode == 3 and "kernel.relu_cpu.backend: unknown backend 'cpuu'" in done.stderr
        assert "fetching" not in done.stderr and "selected" not in done.stderr  # stopped before toolchains and Nix

    def test_an_unpinned_variant_says_what_is_missing_and_where_it_is_published(self, tmp_path: Path) -> None:
        """The variant table comes from Nix; the reason `build` prints is `list-variants`'."""
        kernel = copy_kernel("relu", tmp_path / "k", git=False)
        env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
        done = kernel_builder("build", str(kernel), "--variant", "torch213-cxx11-cu126-x86_64-linux", env=env, check=False)
        assert done.returncode == 3, done.stderr
        assert (
            "variant torch213-cxx11-cu126-x86_64-linux cannot be built here: torch 2.13 + CUDA 12.6 is published on the "
            "PyTorch index (https://download.pytorch.org/whl/cu126), not on PyPI (whose torch 2.13 is the CUDA 13.0 build)"
        ) in done.stderr
        assert "--toolchain host" not in done.stderr
        listed = kernel_builder("list-variants", str(kernel), env=env).stdout
        line = next(x for x in listed.splitlines() if x.startswith("torch213-cxx11-cu126-x86_64-linux"))
        assert line.split("not-here: ", 1)[1] in done.stderr  # one sentence, both commands

    def test_missing_flake_nix(self, tmp_path: Path) -> None:
        kernel = copy_kernel("relu", tmp_path / "k", git=False)
        (kernel / "flake.nix").unlink()
        done = kernel_builder("build", str(kernel), env=dict(os.environ), check=False)
        assert done.returncode == 3 and "flake.nix does not exist" in done.stderr and "--local" in done.stderr

    def test_help_does_not_import_torch(self) -> None:
        code = (
            "import sys\nfrom kernel_builder.cli import main\n"
            "for cmd in (['build', '--help'], ['init', '--help'], ['toolchain', 'discover', '--help']):\n"
            "    try:\n        main(cmd)\n    except SystemExit:\n        pass\n"
            "print(sorted(m for m in ('torch', 'huggingface_hub') if m in sys.modules))"
        )
        done = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, check=True)
        assert done.stdout.strip().splitlines()[-1] == "[]"
        assert "--builders" in done.stdout and "--backends" in done.stdout
