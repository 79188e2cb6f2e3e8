"""The build sets file and the Python matrix: whole ordered variant lists and skip reasons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernel_builder.config import loads
from kernel_builder.errors import ConfigError
from kernel_builder.toolchain.pinned.lockrequests import served_build_sets
from kernel_builder.variants.buildsets import BuildSet, build_sets_path, current_system, load_build_sets, parse_build_sets
from kernel_builder.variants.matrix import matrix, variant_for
from kernel_builder.config.model import Backend
from kernel_builder.versions import Version

SETS = parse_build_sets(
    {
        "buildSets": [
            {"torch": "2.11", "backend": "cpu", "systems": ["x86_64-linux"], "bundle": False},
            {"torch": "2.11", "backend": "tpu", "systems": ["x86_64-linux"], "bundle": False},
            {"torch": "2.12", "backend": "cpu", "systems": ["aarch64-darwin", "x86_64-linux"], "tvmFfi": "0.1"},
            {"torch": "2.12", "backend": "metal", "systems": ["aarch64-darwin"]},
            {"torch": "2.12", "backend": "cuda", "backendVersion": "12.6", "systems": ["x86_64-linux"], "tvmFfi": "0.1"},
            {"torch": "2.12", "backend": "rocm", "backendVersion": "7.1", "systems": ["x86_64-linux"]},
            {"torch": "2.13", "backend": "cpu", "systems": ["aarch64-darwin", "x86_64-linux"]},
            {"torch": "2.13", "backend": "cuda", "backendVersion": "12.6", "systems": ["x86_64-linux"]},
            {"torch": "2.13", "backend": "cuda", "backendVersion": "13.0", "systems": ["x86_64-linux"], "tvmFfi": "0.1"},
            {"torch": "2.13", "backend": "xpu", "backendVersion": "2026.0.0", "systems": ["x86_64-linux"]},
        ]
    }
)


def toml(backends: str, framework: str, general_extra: str = "", kernels: tuple[str, ...] = ()) -> str:
    parts = [
        f'[general]\nname = "relu"\nversion = 1\nedition = 5\nlicense = "MIT"\nbackends = {backends}\n{general_extra}',
        framework,
    ]
    for b in kernels:
        parts.append(f'[kernel.{b}]\nbackend = "{b}"\ndepends = ["torch"]\nsrc = ["{b}.cpp"]\n')
    return "\n".join(parts)


def names(text: str, system: str | None = "x86_64-linux") -> list[str]:
    return matrix(loads(text), SETS, system).names


class TestFilters:
    def test_arch_kernel_all_sets_of_its_backends(self) -> None:
        assert names(toml('["cpu", "cuda"]', "[torch]\n", kernels=("cpu", "cuda"))) == [
            "torch211-cxx11-cpu-x86_64-linux",
            "torch212-cxx11-cpu-x86_64-linux",
            "torch212-cxx11-cu126-x86_64-linux",
            "torch213-cxx11-cpu-x86_64-linux",
            "torch213-cxx11-cu126-x86_64-linux",
            "torch213-cxx11-cu130-x86_64-linux",
        ]

    def test_torch_bounds_inclusive(self) -> None:
        text = toml('["cpu", "cuda"]', '[torch]\nminver = "2.12"\nmaxver = "2.12"\n', kernels=("cpu", "cuda"))
        assert names(text) == ["torch212-cxx11-cpu-x86_64-linux", "torch212-cxx11-cu126-x86_64-linux"]
        skipped = {s.build_set.label: s.reason for s in matrix(loads(text), SETS, "x86_64-linux").skipped}
        assert skipped["torch 2.11 cpu x86_64-linux"] == "torch 2.11 < [torch].minver 2.12"
        assert skipped["torch 2.13 cuda 13.0 x86_64-linux"] == "torch 2.13 > [torch].maxver 2.12"
        assert skipped["torch 2.12 rocm 7.1 x86_64-linux"] == "backend rocm not in general.backends (cpu, cuda)"

    def test_cuda_bounds_inclusive(self) -> None:
        text = toml('["cuda"]', "[torch]\n", '[general.cuda]\nminver = "12.8"\nmaxver = "13.0"\n', kernels=("cuda",))
        assert names(text) == ["torch213-cxx11-cu130-x86_64-linux"]
        reasons = [s.reason for s in matrix(loads(text), SETS, "x86_64-linux").skipped if s.build_set.backend is Backend.CUDA]
        assert reasons == ["cuda 12.6 < [general.cuda].minver 12.8", "cuda 12.6 < [general.cuda].minver 12.8"]
        text = toml('["cuda"]', "[torch]\n", '[general.cuda]\nmaxver = "12.6"\n', kernels=("cuda",))
        assert names(text) == ["torch212-cxx11-cu126-x86_64-linux", "torch213-cxx11-cu126-x86_64-linux"]

    def test_darwin_names_have_no_cxx11(self) -> None:
        assert names(toml('["cpu", "metal"]', "[torch]\n", kernels=("cpu", "metal")), "aarch64-darwin") == [
            "torch212-cpu-aarch64-darwin",
            "torch212-metal-aarch64-darwin",
            "torch213-cpu-aarch64-darwin",
        ]

    def test_all_systems_sorted_then_file_order(self) -> None:
        assert names(toml('["cpu"]', "[torch]\n", kernels=("cpu",)), "all") == [
            "torch212-cpu-aarch64-darwin",
            "torch213-cpu-aarch64-darwin",
            "torch211-cxx11-cpu-x86_64-linux",
            "torch212-cxx11-cpu-x86_64-linux",
            "torch213-cxx11-cpu-x86_64-linux",
        ]
        assert names(toml('["cpu"]', "[torch]\n", kernels=("cpu",)), None) == names(toml('["cpu"]', "[torch]\n", kernels=("cpu",)), "all")

    def test_unknown_system_is_empty(self) -> None:
        assert names(toml('["cpu"]', "[torch]\n", kernels=("cpu",)), "riscv64-linux") == []


class TestStableAbi:
    def test_per_backend_table(self) -> None:
        text = toml('["cpu", "cuda"]', '[torch]\n[torch.stable-abi]\ncuda = "2.11"\nrocm = "2.10"\n', kernels=("cpu", "cuda"))
        result = matrix(loads(text), SETS, "x86_64-linux")
        assert result.names == [
            "torch211-cxx11-cpu-x86_64-linux",
            "torch212-cxx11-cpu-x86_64-linux",
            "torch213-cxx11-cpu-x86_64-linux",
            "torch-stable-abi211-cu126-x86_64-linux",
            "torch-stable-abi211-cu130-x86_64-linux",
        ]
        superseded = [s for s in result.skipped if s.reason.startswith("stable ABI")]
        assert [(s.build_set.label, s.reason) for s in superseded] == [
            ("torch 2.12 cuda 12.6 x86_64-linux", "stable ABI: superseded by torch 2.13")
        ]
        # the surviving stable-ABI variant is built with the newest torch of its group
        cu126 = next(v for v in result.variants if v.name.startswith("torch-stable-abi211-cu126"))
        assert cu126.torch == "2.13"

    def test_string_applies_to_every_backend(self) -> None:
        text = toml('["cpu", "cuda"]', '[torch]\nstable-abi = "2.10"\n', kernels=("cpu", "cuda"))
        assert names(text) == [
            "torch-stable-abi210-cpu-x86_64-linux",
            "torch-stable-abi210-cu126-x86_64-linux",
            "torch-stable-abi210-cu130-x86_64-linux",
        ]

    def test_backend_without_kernel_is_noarch(self) -> None:
        text = toml('["cpu", "cuda"]', '[torch]\n[torch.stable-abi]\ncpu = "2.11"\ncuda = "2.11"\n', kernels=("cuda",))
        assert names(text) == ["torch-cpu", "torch-stable-abi211-cu126-x86_64-linux", "torch-stable-abi211-cu130-x86_64-linux"]


class TestNoarchAndTvmFfi:
    def test_noarch_one_variant_per_backend(self) -> None:
        result = matrix(loads(toml('["cpu", "cuda", "tpu", "neuron"]', "[torch-noarch]\n")), SETS, "all")
        # first occurrence decides the place: aarch64-darwin sets come before x86_64-linux ones
        assert result.names == ["torch-cpu", "torch-tpu", "torch-cuda"]
        assert [(v.system, v.torch, v.bundle) for v in result.variants] == [(None, "2.12", True), (None, "2.11", False), (None, "2.12", True)]
        assert result.notes == ("backend neuron: no build set in build-sets.json",)
        dup = [d for d in result.decisions if d.included and d.reason != "in"]
        assert dup[0].reason == "in (same variant as torch 2.12 cpu aarch64-darwin)"

    def test_noarch_bundle_prefers_a_bundle_set(self) -> None:
        result = matrix(loads(toml('["cpu"]', "[torch-noarch]\n")), SETS, "x86_64-linux")
        (variant,) = result.variants
        assert (variant.name, variant.bundle, variant.torch) == ("torch-cpu", True, "2.12")
        assert [b.torch for b in variant.build_sets] == ["2.11", "2.12", "2.13"]

    def test_tvm_ffi(self) -> None:
        text = toml('["cpu", "cuda"]', '[tvm-ffi]\nsrc = ["a.cpp"]\n', kernels=("cuda",))
        result = matrix(loads(text), SETS, "x86_64-linux")
        assert result.names == ["tvm-ffi01-cpu-x86_64-linux", "tvm-ffi01-cu126-x86_64-linux", "tvm-ffi01-cu130-x86_64-linux"]
        assert "torch 2.13 cuda 12.6 x86_64-linux" in {s.build_set.label for s in result.skipped if s.reason == "no tvm-ffi version in this build set"}

    def test_bundle_only(self) -> None:
        result = matrix(loads(toml('["cpu"]', "[torch]\n", kernels=("cpu",))), SETS, "x86_64-linux").bundle_only()
        assert result.names == ["torch212-cxx11-cpu-x86_64-linux", "torch213-cxx11-cpu-x86_64-linux"]

    def test_variant_for_tpu_is_always_noarch(self) -> None:
        build = loads(toml('["tpu"]', "[torch]\n"))
        tpu = next(b for b in SETS if b.backend is Backend.TPU)
        assert variant_for(build, tpu).name == "torch-tpu"


class TestShippedBuildSets:
    def test_upstream_bundle_matrix_and_local_sets(self) -> None:
        sets = load_build_sets(served=served_build_sets())
        # x86_64: every pinned set; aarch64-linux: the sets the lock cross-builds (issue 26).
        # torch 2.12-2.14: PyPI's CUDA 13.0 build; torch 2.15: PyPI's CUDA 13.2 build (issue 41).
        pinned = [(t, "cpu") for t in ("2.12", "2.13", "2.14", "2.15")] + [(t, "cuda 13.0") for t in ("2.12", "2.13", "2.14")]
        pinned.append(("2.15", "cuda 13.2"))
        assert {b.label for b in sets if b.local} == {
            f"torch {t} {backend} {sysname}" for t, backend in pinned for sysname in ("x86_64-linux", "aarch64-linux")
        }
        build = loads(toml('["cpu", "cuda", "rocm", "xpu", "metal"]', "[torch]\n", kernels=("cpu", "cuda", "rocm", "xpu", "metal")))
        got = set(matrix(build, sets, "all").bundle_only().names)
        # The bundle: the three newest torch releases (docs/variants.md).
        expected = {f"torch{t}-cpu-aarch64-darwin" for t in ("213", "215")} | {f"torch{t}-metal-aarch64-darwin" for t in ("213", "215")}
        for t in ("213", "214", "215"):
            for sysname in ("aarch64-linux", "x86_64-linux"):
                expected.add(f"torch{t}-cxx11-cpu-{sysname}")
                expected |= {f"torch{t}-cxx11-{cu}-{sysname}" for cu in ("cu126", "cu130", "cu132")}
        expected |= {f"torch213-cxx11-{r}-x86_64-linux" for r in ("rocm71", "rocm72")} | {"torch215-cxx11-rocm72-x86_64-linux"}
        expected |= {"torch213-cxx11-xpu20260-x86_64-linux", "torch215-cxx11-xpu20260-x86_64-linux"}
        assert got == expected
        non_bundle = {b.label for b in sets if not b.bundle}
        assert {"torch 2.11 cpu x86_64-linux", "torch 2.11 tpu x86_64-linux", "torch 2.12 cpu x86_64-linux",
                "torch 2.12 cuda 13.0 aarch64-linux"} <= non_bundle
        assert {label.split()[1] for label in non_bundle} == {"2.11", "2.12"}
        assert all(b.bundle for b in sets if b.torch_v >= Version.parse("2.13"))

    def test_one_file_shared_with_nix(self, repo_root: Path) -> None:
        assert build_sets_path() == repo_root / "nix" / "build-sets.json"

    def test_env_override(self, tmp_path: Path, monkeypatch) -> None:
        path = tmp_path / "sets.json"
        path.write_text(json.dumps({"buildSets": [{"torch": "2.9", "backend": "cpu", "systems": ["x86_64-linux"]}]}))
        monkeypatch.setenv("KERNEL_BUILDER_BUILD_SETS", str(path))
        assert load_build_sets() == (BuildSet("2.9", Backend.CPU, "x86_64-linux"),)

    def test_current_system(self) -> None:
        import platform

        assert current_system() == f"{ {'amd64': 'x86_64', 'arm64': 'aarch64'}.get(platform.machine().lower(), platform.machine().lower())}-{platform.system().lower()}"


class TestBuildSetsErrors:
    @pytest.mark.parametrize(
        ("data", "fragment"),
        [
            ({}, "`buildSets` list"),
            ({"buildSets": [{"torch": "2.13", "backend": "gpu", "systems": ["x86_64-linux"]}]}, "buildSets[0].backend"),
            ({"buildSets": [{"torch": "2.13", "backend": "neuron", "systems": ["x86_64-linux"]}]}, "no builds exist for backend neuron"),
            ({"buildSets": [{"torch": "2.13", "backend": "cuda", "systems": ["x86_64-linux"]}]}, "needs a backendVersion"),
            ({"buildSets": [{"torch": "2.13", "backend": "cpu", "backendVersion": "1.0", "systems": ["x86_64-linux"]}]}, "takes no backendVersion"),
            ({"buildSets": [{"torch": "two", "backend": "cpu", "systems": ["x86_64-linux"]}]}, "buildSets[0].torch"),
            ({"buildSets": [{"backend": "cpu", "systems": ["x86_64-linux"]}]}, "torch is required"),
            ({"buildSets": [{"torch": "2.13", "backend": "cpu", "systems": ["riscv-linux"]}]}, "systems must be"),
            ({"buildSets": [{"torch": "2.13", "backend": "cpu", "systems": ["x86_64-linux"], "bundle": "yes"}]}, "bundle must be true or false"),
            ({"buildSets": [{"torch": "2.13", "backend": "cpu", "systems": ["x86_64-linux"], "cuda": "12"}]}, "unknown keys ['cuda']"),
            # which sets this machine builds comes from the toolchain lock, not the shared file
            ({"buildSets": [{"torch": "2.13", "backend": "cpu", "systems": ["x86_64-linux"], "local": ["x86_64-linux"]}]}, "unknown keys ['local']"),
        ],
    )
    def test_errors_name_the_entry(self, data: dict, fragment: str) -> None:
        with pytest.raises(ConfigError) as info:
            parse_build_sets(data, "sets.json")
        assert fragment in str(info.value) and "sets.json" in str(info.value)

    def test_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError, match="KERNEL_BUILDER_BUILD_SETS"):
            load_build_sets(tmp_path / "none.json")


class TestDefaultBounds:
    """The default [torch]/[general.cuda] bounds live in build-sets.json only."""

    def test_shipped_bounds(self) -> None:
        from kernel_builder.variants.buildsets import DefaultBounds, default_bounds
        from kernel_builder.config.model import Version

        assert default_bounds() == DefaultBounds(Version.parse("2.0"), Version.parse("99.9"), Version.parse("11.8"), Version.parse("99.9"))

    def test_bounds_from_the_file_decide(self) -> None:
        from kernel_builder.variants.buildsets import DefaultBounds, parse_bounds

        bounds = parse_bounds({"defaultBounds": {"torch": {"minver": "2.13"}}})
        assert bounds == DefaultBounds(torch_min=bounds.torch_min)
        build = loads(toml('["cpu"]', "[torch]\n"))
        sets = [b for b in SETS if b.backend is Backend.CPU and b.system == "x86_64-linux"]
        result = matrix(build, sets, "x86_64-linux", bounds=bounds)
        assert all(v.torch >= "2.13" for v in result.variants)
        assert any("< [torch].minver 2.13" in s.reason for s in result.skipped)

    @pytest.mark.parametrize(
        ("data", "fragment"),
        [
            ({"defaultBounds": []}, "defaultBounds must be an object"),
            ({"defaultBounds": {"rocm": {}}}, "defaultBounds must be an object"),
            ({"defaultBounds": {"torch": {"min": "2"}}}, "defaultBounds.torch must be"),
            ({"defaultBounds": {"cuda": {"minver": "x"}}}, "defaultBounds.cuda.minver"),
        ],
    )
    def test_bad_bounds(self, data: dict, fragment: str) -> None:
        from kernel_builder.variants.buildsets import parse_bounds

        with pytest.raises(ConfigError, match=fragment.replace(".", r"\.").replace("[", r"\[")):
            parse_bounds(data, "sets.json")

    def test_no_version_literals_outside_the_data_files(self) -> None:
        """matrix.py, matrix.nix and toolchain/host/setup.py name no build-set or bound version."""
        import re

        repo = Path(__file__).resolve().parents[2]
        for rel in ("python/kernel_builder/variants/matrix.py", "nix/lib/pure/matrix.nix", "python/kernel_builder/toolchain/host/setup.py"):
            code = "\n".join(line for line in (repo / rel).read_text().splitlines() if not line.lstrip().startswith(("#", "=>", "(kernelConfigWith", "(matrix", "expandBuildSets", "*")))
            code = re.sub(r'""".*?"""', "", code, flags=re.S)
            code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
            assert not re.findall(r'"(?:2\.\d+(?:\.\d+)?|11\.8|99\.9)"', code), rel


class TestSetupEnvironmentsFromTheLock:
    def test_default_envs_follow_the_lock(self) -> None:
        from kernel_builder.toolchain.pinned.lockrequests import torch_environments
        from kernel_builder.toolchain.host.setup import default_envs

        envs = default_envs()
        assert [(e.name, e.torch, e.serves) for e in envs] == [
            ("torch212", "2.12.1", ("torch2.12-cpu", "torch2.12-cuda13.0")),
            ("torch213", "2.13.0", ("torch2.13-cpu", "torch2.13-cuda13.0")),  # `torch==2.13.0,!=2.13.0+cpu`
            ("torch214", "2.14.1", ("torch2.14-cpu", "torch2.14-cuda13.0")),
            ("torch215", "2.15.0", ("torch2.15-cpu", "torch2.15-cuda13.2")),
        ]
        assert len(envs) == len(torch_environments())

    def test_pins_with_a_label_or_extra_specifiers(self, tmp_path: Path) -> None:
        from kernel_builder.toolchain.pinned.lockrequests import lock_facts, torch_environments

        lock = tmp_path / "lock.json"
        environments = {"a": ["torch==2.13.0+cpu", "ninja"], "b": ["numpy", "torch == 2.12.1 , !=2.12.1+cpu"], "c": ["torch===2.11.0"]}
        build_sets = {"torch2.13-cpu": "a", "torch2.12-cuda13.0": "b", "torch2.11-cpu": "c"}
        lock.write_text(json.dumps({"system": "x86_64-linux", "requests": {
            "python": {"environments": environments}, "buildSets": build_sets, "cuda": {"b": "13.0"}}}))
        assert torch_environments(lock) == [
            ("a", "2.13.0+cpu", ("torch2.13-cpu",)), ("b", "2.12.1", ("torch2.12-cuda13.0",)), ("c", "2.11.0", ("torch2.11-cpu",)),
        ]
        assert lock_facts(lock) == ("x86_64-linux", {"2.12": "13.0"})

    def test_a_noarch_variant_is_local_when_any_set_of_its_backend_is(self) -> None:
        """Nix builds a noarch variant with the first build set of its backend that has a
        toolchain (variant-records.nix), so list-variants must not judge it by the matrix's
        first choice alone: torch-cuda's first set is CUDA 12.6, which is not pinned."""
        sets = load_build_sets(served=served_build_sets())
        build = loads(toml('["cpu", "cuda", "rocm"]', "[torch-noarch]\n"))
        by_name = {v.name: v for v in matrix(build, sets, "x86_64-linux").variants}
        assert by_name["torch-cuda"].build_set.local is False and by_name["torch-cuda"].local is True
        assert by_name["torch-cuda"].to_json()["local"] is True
        assert by_name["torch-rocm"].local is False
        arch = loads(toml('["cuda"]', "[torch]\n", kernels=("cuda",)))
        cu126 = next(v for v in matrix(arch, sets, "x86_64-linux").variants if "cu126" in v.name)
        assert cu126.local is False  # an arch variant needs its own build set

    def test_local_comes_from_the_lock(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        lock = tmp_path / "lock.json"
        lock.write_text(json.dumps({"system": "x86_64-linux", "requests": {"buildSets": {"torch2.13-cpu": "torch2.13"}}}))
        sets = tmp_path / "sets.json"
        sets.write_text(json.dumps({"buildSets": [{"torch": "2.13", "backend": "cpu", "systems": ["aarch64-linux", "x86_64-linux"]}, {"torch": "2.14", "backend": "cpu", "systems": ["x86_64-linux"]}]}))
        monkeypatch.setenv("KERNEL_BUILDER_TOOLCHAIN_LOCK", str(lock))
        assert [(b.label, b.local) for b in load_build_sets(sets, served=served_build_sets())] == [
            ("torch 2.13 cpu aarch64-linux", False),
            ("torch 2.13 cpu x86_64-linux", True),
            ("torch 2.14 cpu x86_64-linux", False),
        ]
