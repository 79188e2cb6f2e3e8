"""The C++ dependency table: every upstream name known, each provided or refused, and the
driver's include dirs for a declared dependency (Nix store path or the toolchain's env)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from kernel_builder.config import cpp_deps, loads
from kernel_builder.config.model import CppDependency
from kernel_builder.driver import cpp_deps as driver_deps
from kernel_builder.errors import BuildError, ConfigError
from kernel_builder.toolchain.pinned.lockfile import load_lock

ROOT = Path(__file__).resolve().parents[2]

# The names upstream's build.toml accepts in `depends` (its Dependency enum).
UPSTREAM = ["cutlass_2_10", "cutlass_3_5", "cutlass_3_6", "cutlass_3_8", "cutlass_3_9", "cutlass_4_0",
            "cutlass_4_4", "cutlass_4_5", "sycl_tla", "metal-cpp", "torch", "torch-stable-abi-shim"]


def _toml(cuda_depends: str, *, backends='["cpu", "cuda"]', cuda_backend="cuda") -> str:
    return f"""
[general]
name = "kk"
version = 1
edition = 5
license = "MIT"
backends = {backends}

[torch]
src = ["torch-ext/b.cpp"]

[kernel.k_cpu]
backend = "cpu"
depends = ["torch"]
src = ["k.cpp"]

[kernel.k_gpu]
backend = "{cuda_backend}"
depends = {cuda_depends}
src = ["k.cu"]
"""


def test_every_upstream_name_is_in_the_table_and_the_model():
    assert sorted(cpp_deps.table()) == sorted(UPSTREAM)
    assert sorted(d.value for d in CppDependency) == sorted(UPSTREAM)


def test_every_name_is_provided_or_says_why_not():
    for name, dep in cpp_deps.table().items():
        if dep.builtin:
            continue
        assert (dep.provider is None) == (dep.unavailable is not None), name
        assert dep.backends, name


def test_providers_are_the_lock_requests():
    lock = json.loads((ROOT / "nix" / "toolchain-lock.json").read_text())
    providers = {d.provider.name: d.provider.wheel for d in cpp_deps.table().values() if d.provider}
    assert providers == lock["requests"]["cpp"]
    for name, wheel in providers.items():
        (key,) = lock["groups"][f"cpp:{name}"]
        artifact = lock["artifacts"][key]
        assert f"{artifact['name']}=={artifact['version']}" == wheel


def test_unknown_dependency_is_a_located_error_listing_the_known_names():
    with pytest.raises(ConfigError) as err:
        loads(_toml('["torch", "cutlass_9_9"]'), path="k/build.toml")
    text = str(err.value)
    assert "k/build.toml:19:21:" in text and "kernel.k_gpu.depends[1]" in text
    assert "cutlass_9_9" in text and "cutlass_3_8" in text and "sycl_tla" in text


def test_cutlass_is_declared_only_for_the_cuda_variants():
    build = loads(_toml('["torch", "cutlass_3_8"]'))
    assert [d.dep.name for d in cpp_deps.declared(build, "cuda")] == ["cutlass_3_8"]
    assert cpp_deps.declared(build, "cpu") == ()
    assert cpp_deps.unbuildable_reason(build, "cuda") is None
    assert cpp_deps.stand_in_notes(build, "cuda") == ()


def test_a_stand_in_release_is_a_note():
    build = loads(_toml('["torch", "cutlass_4_0"]'))
    (note,) = cpp_deps.stand_in_notes(build, "cuda")
    assert note.startswith("cutlass_4_0: PyPI has no nvidia-cutlass 4.0 wheel") and "nvidia-cutlass==4.2.0.0" in note


@pytest.mark.parametrize(
    ("depends", "reason"),
    [
        ('["sycl_tla"]', "[kernel.k_gpu] depends on sycl_tla, which serves xpu kernels, not cuda"),
        ('["cutlass_4_5"]', "[kernel.k_gpu] depends on cutlass_4_5: CUTLASS 4.5 has no nvidia-cutlass wheel on PyPI"),
        ('["metal-cpp"]', "[kernel.k_gpu] depends on metal-cpp, which serves metal kernels, not cuda"),
    ],
)
def test_an_unprovided_dependency_is_accepted_and_makes_only_its_backend_unbuildable(depends, reason):
    build = loads(_toml(depends))  # check-config accepts it
    assert cpp_deps.unbuildable_reason(build, "cuda").startswith(reason)
    assert cpp_deps.unbuildable_reason(build, "cpu") is None


def _fake_wheel_tree(root: Path, version: str) -> None:
    for rel in ("cutlass_library/source/include/cute", "cutlass_library/source/tools/util/include/cutlass"):
        (root / rel).mkdir(parents=True)
    (root / f"nvidia_cutlass-{version}.dist-info").mkdir()


class TestDriverResolve:
    def test_a_store_path_from_nix_gives_includes_and_a_prefix_map(self, tmp_path):
        build = loads(_toml('["torch", "cutlass_3_8"]'))
        _fake_wheel_tree(tmp_path, "3.8.0.0")
        env = {driver_deps.ENV_VAR: json.dumps({"cutlass-3.8": str(tmp_path)})}
        deps = driver_deps.resolve(build, "cuda", python="py", site_packages=None, environ=env)
        assert deps.includes == (f"{tmp_path}/cutlass_library/source/include",
                                 f"{tmp_path}/cutlass_library/source/tools/util/include")
        assert deps.prefix_maps == (f"-ffile-prefix-map={tmp_path}=/kernel-builder/deps/cutlass-3.8",)
        assert driver_deps.resolve(build, "cpu", python="py", site_packages=None, environ=env).includes == ()

    def test_local_uses_the_toolchain_env_wheel(self, tmp_path):
        build = loads(_toml('["torch", "cutlass_3_8"]'))
        _fake_wheel_tree(tmp_path, "3.8.0.0")
        deps = driver_deps.resolve(build, "cuda", python="py", site_packages=str(tmp_path), environ={})
        assert deps.includes[0] == f"{tmp_path}/cutlass_library/source/include" and deps.prefix_maps == ()

    def test_local_without_the_wheel_says_what_to_install(self, tmp_path):
        build = loads(_toml('["torch", "cutlass_3_8"]'))
        with pytest.raises(BuildError) as err:
            driver_deps.resolve(build, "cuda", python="/x/python", site_packages=str(tmp_path), environ={})
        assert "needs nvidia-cutlass 3.8.0.0" in str(err.value)
        assert "/x/python -m pip install --no-deps nvidia-cutlass==3.8.0.0" in err.value.hint

    def test_an_unprovided_dependency_is_a_build_error(self):
        build = loads(_toml('["torch", "cutlass_2_10"]'))
        with pytest.raises(BuildError, match="cutlass_2_10: CUTLASS 2.10 has no nvidia-cutlass wheel"):
            driver_deps.resolve(build, "cuda", python="py", site_packages=None, environ={})

    def test_the_real_wheel_layout_has_the_include_dirs(self, tmp_path):
        """The pinned wheel (from the Nix store, where `toolchain fetch` put it) has the
        directories the table names, with cute/tensor.hpp."""
        lock = json.loads((ROOT / "nix" / "toolchain-lock.json").read_text())
        (key,) = lock["groups"]["cpp:cutlass-3.8"]
        path = Path(load_lock().artifacts[key].store_path)
        if not path.exists():
            pytest.fail(f"{path} is not in the store: run `kernel-builder toolchain fetch`")
        names = zipfile.ZipFile(path).namelist()
        provider = cpp_deps.table()["cutlass_3_8"].provider
        for rel in provider.includes:
            assert any(n.startswith(rel + "/") for n in names), rel
        assert "cutlass_library/source/include/cute/tensor.hpp" in names


def _kernel_dir(tmp_path: Path, depends: str, capabilities: str = '["9.0"]') -> Path:
    text = _toml(depends).replace('src = ["k.cu"]', f'cuda-capabilities = {capabilities}\nsrc = ["k.cu"]')
    (tmp_path / "build.toml").write_text(text)
    (tmp_path / "torch-ext" / "kk").mkdir(parents=True)
    for rel in ("torch-ext/b.cpp", "k.cpp", "k.cu", "torch-ext/kk/__init__.py"):
        (tmp_path / rel).write_text("")
    return tmp_path


def _check_config(kernel: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", "check-config", str(kernel)],
                          capture_output=True, text=True, check=False)


def test_check_config_accepts_and_reports_an_unbuildable_dependency_and_a_stand_in(tmp_path):
    done = _check_config(_kernel_dir(tmp_path, '["torch", "sycl_tla", "cutlass_3_9"]'))
    assert done.returncode == 0, done.stderr
    assert ("note: the cuda variants cannot be built here: [kernel.k_gpu] depends on sycl_tla, which serves "
            "xpu kernels, not cuda") in done.stderr
    assert "note: cutlass_3_9: PyPI has no nvidia-cutlass 3.9 wheel" in done.stderr
    assert "cpu variants" not in done.stderr


def test_check_config_warns_for_a_capability_a_cuda_version_cannot_build(tmp_path):
    done = _check_config(_kernel_dir(tmp_path, '["torch"]', '["9.0", "10.3a"]'))
    assert done.returncode == 0, done.stderr
    assert "warning: [kernel.k_gpu] cuda-capabilities 10.3a: CUDA 12.6 cannot build it" in done.stderr
    assert "cuda-capabilities 9.0:" not in done.stderr
