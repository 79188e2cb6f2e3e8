"""update-build and check-config, through the real CLI in a subprocess and as functions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_files import add_sources

from kernel_builder.config import BuildTomlError, load, parse, to_dict
from kernel_builder.config.model import Backend, TorchNoarch, Version
from kernel_builder.config.positions import scan
from kernel_builder.config.update import migrate_text, plan_update, snake_noarch_keys

V4 = """\
# ReLU, written before editions existed.
[general]
name = "relu"    # module name
version = 3
license = "Apache-2.0"
backends = [
    "cuda",   # the main one
    "cpu",
]

[torch]
src = ["torch-ext/torch_binding.cpp"]
stable-abi = "2.11"   # every backend

# The CUDA component.
[kernel.relu]
backend = "cuda"
depends = ["torch"]
src = ["relu_cuda/relu.cu"]
"""

V4_AS_6 = V4.replace("version = 3\n", "version = 3\nedition = 6\n").replace('backend = "cuda"', 'language = "cpp-cuda"')

V3 = """\
[general]
name = "triton-relu"
license = "MIT"   # required to migrate
backends = ["cuda", "rocm"]

# a pure Triton kernel: no framework table in v3
"""


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def kernel_dir(tmp_path: Path, text: str) -> Path:
    (tmp_path / "build.toml").write_text(text)
    try:
        return add_sources(tmp_path)
    except Exception:  # not TOML: the test is about that
        return tmp_path


# ---------------------------------------------------------------- update-build


def test_v4_is_rewritten_keeping_everything(tmp_path: Path) -> None:
    d = kernel_dir(tmp_path, V4)
    result = run("update-build", str(d))
    assert result.returncode == 0, result.stderr
    new = (d / "build.toml").read_text()
    assert new == V4_AS_6
    assert scan(new).comments == scan(V4).comments
    parsed = parse(new)
    assert parsed.edition == 6 and parsed.build == parse(V4).build
    assert parsed.build.stable_abi_for(Backend.CPU) == Version((2, 11))
    assert 'stable-abi = "2.11"' in new
    assert sorted(p.name for p in d.iterdir() if p.is_file()) == ["build.toml"]  # no temporary file left behind


def test_v5_becomes_6_in_place(tmp_path: Path) -> None:
    text = V4.replace("version = 3\n", "version = 3\nedition   =   5   # five\n")
    d = kernel_dir(tmp_path, text)
    done = run("update-build", str(d))
    assert done.returncode == 0, done.stderr
    assert 'edition 5 -> 6; [kernel.relu] backend -> language = "cpp-cuda"' in done.stderr
    new = (d / "build.toml").read_text()
    assert new == text.replace("edition   =   5", "edition   =   6").replace('backend = "cuda"', 'language = "cpp-cuda"')
    assert parse(new).edition == 6 and parse(new).build == parse(text).build


def test_v6_is_left_byte_identical(tmp_path: Path) -> None:
    text = V4_AS_6.replace("edition = 6\n", "edition   =   6\n")
    d = kernel_dir(tmp_path, text)
    before = (d / "build.toml").stat()
    for args in (["update-build", str(d)], ["update-build", "--check", str(d)], ["update-build", "--diff", str(d)]):
        result = run(*args)
        assert result.returncode == 0 and result.stdout == ""
        assert "already edition 6" in result.stderr
    assert (d / "build.toml").read_bytes() == text.encode()
    assert (d / "build.toml").stat().st_mtime_ns == before.st_mtime_ns


def test_check_and_diff_do_not_write(tmp_path: Path) -> None:
    d = kernel_dir(tmp_path, V4)
    check = run("update-build", "--check", str(d))
    assert check.returncode == 1 and check.stdout == ""
    assert 'needs an update (edition 4 -> 6; [kernel.relu] backend -> language = "cpp-cuda")' in check.stderr
    diff = run("update-build", "--diff", str(d))
    assert diff.returncode == 0
    assert diff.stdout.splitlines()[:2] == ["--- a/build.toml", "+++ b/build.toml"]
    added = [l for l in diff.stdout.splitlines() if l.startswith("+") and not l.startswith("+++")]
    assert added == ["+edition = 6", '+language = "cpp-cuda"']
    removed = [l for l in diff.stdout.splitlines() if l.startswith("-") and not l.startswith("---")]
    assert removed == ['-backend = "cuda"']
    both = run("update-build", "--check", "--diff", str(d))
    assert both.returncode == 1 and both.stdout == diff.stdout
    assert (d / "build.toml").read_text() == V4


def test_v3_migration_adds_version_and_noarch(tmp_path: Path) -> None:
    d = kernel_dir(tmp_path, V3)
    assert run("check-config", str(d)).returncode == 3
    result = run("update-build", str(d))
    assert result.returncode == 0, result.stderr
    new = (d / "build.toml").read_text()
    assert new.startswith('[general]\nname = "triton-relu"\nversion = 1\nedition = 6\nlicense = "MIT"   # required to migrate\n')
    assert new.rstrip().endswith("[torch-noarch]")
    assert "# a pure Triton kernel: no framework table in v3" in new
    build = load(d)
    assert build.framework == TorchNoarch() and build.general.version == 1


def test_v3_keeps_its_framework_table() -> None:
    text = '[general]\nname = "relu"\nlicense = "MIT"\nbackends = ["cpu"]\n[torch]\nsrc = ["a.cpp"]\n'
    new, edition = migrate_text(text)
    assert edition == 3
    assert new == text.replace('name = "relu"\n', 'name = "relu"\nversion = 1\nedition = 6\n')


def test_v3_tvm_ffi_without_src_migrates() -> None:
    # v3 allowed [tvm-ffi] without src; edition 5 did not, edition 6 does again.
    from config_oracle import reference

    text = '[general]\nname = "relu"\nlicense = "MIT"\nbackends = ["cpu"]\n[tvm-ffi]\n'
    new, edition = migrate_text(text)
    assert edition == 3 and "edition = 6" in new
    assert reference(new).ok and parse(new).build == parse(text, allow_legacy=True).build


def test_v3_without_license_is_an_error(tmp_path: Path) -> None:
    d = kernel_dir(tmp_path, V3.replace('license = "MIT"   # required to migrate\n', ""))
    result = run("update-build", str(d))
    assert result.returncode == 3
    assert "general.license: missing required key `license` (edition 6 needs it)" in result.stderr
    assert "run `kernel-builder update-build`" not in result.stderr
    assert (d / "build.toml").read_text() == V3.replace('license = "MIT"   # required to migrate\n', "")


def test_invalid_file_is_not_touched(tmp_path: Path) -> None:
    text = V4.replace('backend = "cuda"', 'backend = "gpu"')
    d = kernel_dir(tmp_path, text)
    result = run("update-build", str(d))
    assert result.returncode == 3
    assert "kernel.relu.backend: unknown backend 'gpu'" in result.stderr
    assert (d / "build.toml").read_text() == text


def test_update_keeps_file_mode(tmp_path: Path) -> None:
    d = kernel_dir(tmp_path, V4)
    os.chmod(d / "build.toml", 0o640)
    assert run("update-build", str(d / "build.toml")).returncode == 0
    assert (d / "build.toml").stat().st_mode & 0o777 == 0o640


def test_write_atomic_failure_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails before the rename leaves build.toml as it was and no temporary file."""
    import kernel_builder._files as files_mod
    import kernel_builder.config.update as update_mod

    d = kernel_dir(tmp_path, V4)

    def no_rename(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files_mod.os, "replace", no_rename)  # update writes through _files.write_atomic
    with pytest.raises(OSError, match="No space left"):
        update_mod.write_atomic(d / "build.toml", "[general]\n")
    assert (d / "build.toml").read_text() == V4
    assert [p.name for p in d.iterdir() if p.name.endswith(".tmp")] == []


def test_plan_update_reports_edition(tmp_path: Path) -> None:
    plan = plan_update(kernel_dir(tmp_path, V4))
    assert plan.needed and plan.from_edition == 4
    assert "+edition = 6" in plan.diff()


# ---------------------------------------------------------------- check-config


def test_check_config_summary(repo_root: Path) -> None:
    result = run("check-config", str(repo_root / "examples" / "relu"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "name:      relu",
        "version:   1",
        "edition:   5",
        "framework: torch",
        "backends:  cpu, cuda",
        "kernels:   relu_cpu (cpu), relu_cuda (cuda)",
    ]
    assert result.stderr == ""


def test_check_config_defaults_to_cwd_and_json(repo_root: Path) -> None:
    result = run("check-config", "--json", cwd=repo_root / "examples" / "relu")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data == to_dict(load(repo_root / "examples" / "relu"))
    assert data["general"]["edition"] == 6
    assert data["kernel"]["relu_cuda"]["language"] == "cpp-cuda" and "backend" not in data["kernel"]["relu_cuda"]
    assert data["kernel"]["relu_cuda"]["cuda-capabilities"] == ["8.0", "9.0"]


def test_check_config_v4_warns_and_passes(tmp_path: Path) -> None:
    result = run("check-config", str(kernel_dir(tmp_path, V4)))
    assert result.returncode == 0
    assert "edition:   4 (legacy; upgraded in memory, run `kernel-builder update-build`)" in result.stdout
    assert "legacy v4 format" in result.stderr and "kernel-builder update-build" in result.stderr


def test_check_config_reports_all_errors(tmp_path: Path) -> None:
    text = V4.replace('name = "relu"', 'name = "Relu"').replace('"cpu",', '"gpu",').replace('depends = ["torch"]', "depends = 1")
    result = run("check-config", str(kernel_dir(tmp_path, text)))
    assert result.returncode == 3 and result.stdout == ""
    path = tmp_path / "build.toml"
    lines = result.stderr.splitlines()
    assert lines[0] == f"error: {path}: 3 problems found (no `general.edition`, read as legacy v4)"
    assert lines[1].startswith(f"  {path}:3:8: general.name: invalid kernel name 'Relu'")
    assert lines[2].startswith(f"  {path}:8:5: general.backends[1]: unknown backend 'gpu'")
    assert lines[3] == f"  {path}:18:11: kernel.relu.depends: expected an array, got integer 1"
    assert lines[4].startswith("hint: ")


def test_check_config_warns_about_unlisted_kernel_backend(tmp_path: Path) -> None:
    text = V4.replace('    "cuda",   # the main one\n', "").replace("version = 3\n", "version = 3\nedition = 5\n")
    result = run("check-config", str(kernel_dir(tmp_path, text)))
    assert result.returncode == 0
    assert "kernel.relu.backend: backend cuda is not in general.backends (cpu)" in result.stderr


STABLE = """\
[general]
name = "relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]

[torch]
src = ["torch-ext/torch_binding.cpp"]
{stable}

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu/relu_cpu.cpp"]
"""


def _newest_torch(backend: str) -> tuple[int, int]:
    from kernel_builder.variants.buildsets import load_build_sets

    return max(b.torch_v.major_minor() for b in load_build_sets() if b.backend.value == backend)


def test_check_config_reports_a_stable_abi_no_torch_can_build(tmp_path: Path) -> None:
    """A stable ABI newer than every Torch of the matrix used to fail only in the build."""
    major, minor = _newest_torch("cpu")
    too_new = f"{major}.{minor + 1}"
    result = run("check-config", str(kernel_dir(tmp_path, STABLE.format(stable=f'stable-abi = {{ cpu = "{too_new}" }}'))))
    assert result.returncode == 3 and result.stdout == ""
    path = tmp_path / "build.toml"
    lines = result.stderr.splitlines()
    assert lines[0] == f"error: {path}: 1 problem found"
    assert lines[1] == (
        f"  {path}:10:22: torch.stable-abi.cpu: stable ABI {too_new} for cpu needs Torch >= {too_new}, but the "
        f"newest Torch the build matrix has for cpu is {major}.{minor}: no cpu variant can be built"
    )
    assert lines[2].startswith("hint: lower the stable ABI")
    # the one-string form names the key itself
    result = run("check-config", str(kernel_dir(tmp_path, STABLE.format(stable=f'stable-abi = "{too_new}"'))))
    assert result.returncode == 3 and f"{path}:10:14: torch.stable-abi: stable ABI {too_new} for cpu" in result.stderr
    # an older one passes quietly
    result = run("check-config", str(kernel_dir(tmp_path, STABLE.format(stable='stable-abi = "2.11"'))))
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_stable_abi_newer_than_some_systems_warns() -> None:
    """Newer than one system's Torch only: that system's variant fails, the rest build (a warning)."""
    from kernel_builder.variants.buildsets import BuildSet
    from kernel_builder.variants.checks import matrix_problems

    sets = [
        BuildSet(torch="2.14", backend=Backend.CPU, system="x86_64-linux"),
        BuildSet(torch="2.13", backend=Backend.CPU, system="aarch64-linux"),
    ]
    problems, warnings = matrix_problems(parse(STABLE.format(stable='stable-abi = "2.14"')), sets)
    assert problems == []
    assert [w.message for w in warnings] == [
        "stable ABI 2.14 for cpu needs Torch >= 2.14; the build matrix has older Torch on some systems, "
        "so torch-stable-abi214-cpu-aarch64-linux will fail to build"
    ]
    problems, warnings = matrix_problems(parse(STABLE.format(stable='stable-abi = "2.15"')), sets)
    assert [p.message.split(":")[0] for p in problems] == ["stable ABI 2.15 for cpu needs Torch >= 2.15, but the newest Torch the build matrix has for cpu is 2.14"]
    assert warnings == []


def test_help_texts() -> None:
    for command in ("check-config", "update-build"):
        result = run(command, "--help")
        assert result.returncode == 0 and "Example:" in result.stdout


@pytest.mark.parametrize(
    "name, text, expected",
    [
        (
            "crlf",
            '[general]\r\nname = "relu"\r\nversion = 1\r\nlicense = "x"\r\nbackends = ["cpu"]\r\n\r\n[torch]\r\n',
            '[general]\r\nname = "relu"\r\nversion = 1\r\nedition = 6\r\nlicense = "x"\r\nbackends = ["cpu"]\r\n\r\n[torch]\r\n',
        ),
        (
            "inline-general",
            'general = { name = "relu", version = 1, license = "x", backends = ["cpu"] }\n[torch]\n',
            'general = { name = "relu", version = 1, edition = 6, license = "x", backends = ["cpu"] }\n[torch]\n',
        ),
        (
            "dotted-general",
            'general.name = "relu"\ngeneral.version = 1\ngeneral.license = "x"\ngeneral.backends = ["cpu"]\n[torch]\n',
            'general.name = "relu"\ngeneral.version = 1\ngeneral.edition = 6\ngeneral.license = "x"\ngeneral.backends = ["cpu"]\n[torch]\n',
        ),
        (
            "dotted-v3",
            'general.name = "relu"  # n\ngeneral.license = "x"\ngeneral.backends = ["cpu"]',
            'general.name = "relu"  # n\ngeneral.version = 1\ngeneral.edition = 6\ngeneral.license = "x"\ngeneral.backends = ["cpu"]\n[torch-noarch]\n',
        ),
        (
            "indented-v3",
            '[general]\n  name = "relu"\n  license = "x"\n  backends = ["cpu"]\n',
            '[general]\n  name = "relu"\n  version = 1\n  edition = 6\n  license = "x"\n  backends = ["cpu"]\n\n[torch-noarch]\n',
        ),
    ],
)
def test_migration_handles_every_table_shape(name: str, text: str, expected: str) -> None:
    new, _ = migrate_text(text)
    assert new == expected
    assert parse(new).build == parse(text, allow_legacy=True).build


# ------------------------------------------- [torch-noarch] spellings both tools read
KEBAB_NOARCH = """\
[general]
name = "silu-and-mul"
version = 1
edition = 6
license = "apache-2.0"
backends = ["cuda", "rocm"]

[torch-noarch]
cuda-capabilities = ["9.0", "10.0"]   # kept comment
"rocm-archs" = ["gfx942"]
"""


def test_update_build_renames_kebab_noarch_keys(tmp_path: Path) -> None:
    """Kebab [torch-noarch] keys are read by us but rejected by the reference parser;
    update-build writes the snake spelling both read, touching nothing else."""
    from config_oracle import reference

    assert not reference(KEBAB_NOARCH).ok
    d = kernel_dir(tmp_path, KEBAB_NOARCH)
    check = run("update-build", "--check", str(d))
    assert check.returncode == 1
    assert "[torch-noarch] cuda-capabilities -> cuda_capabilities" in check.stderr
    done = run("update-build", str(d))
    assert done.returncode == 0, done.stderr
    assert "updated" in done.stderr and "rocm-archs -> rocm_archs" in done.stderr and "edition" not in done.stderr
    text = (d / "build.toml").read_text()
    assert text == KEBAB_NOARCH.replace("cuda-capabilities", "cuda_capabilities").replace('"rocm-archs"', '"rocm_archs"')
    assert reference(text).ok
    assert load(d) == parse(KEBAB_NOARCH).build
    assert "already edition 6" in run("update-build", str(d)).stderr


def test_v4_update_also_renames_kebab_noarch_keys() -> None:
    v4 = KEBAB_NOARCH.replace("edition = 6\n", "")
    new, edition = migrate_text(v4)
    assert edition == 4
    assert "cuda_capabilities" in new and "rocm_archs" in new and "edition = 6" in new
    assert parse(new).build == parse(v4, allow_legacy=True).build


def test_examples_use_the_spelling_both_tools_read(repo_root: Path) -> None:
    for path in (repo_root / "examples").glob("*/build.toml"):
        assert snake_noarch_keys(path.read_text())[0] == path.read_text(), path


def test_init_writes_a_build_toml_the_reference_reads(tmp_path: Path) -> None:
    from config_oracle import reference

    done = run("init", str(tmp_path / "k"), "--name", "acme/my-kernel", "--backends", "cpu,cuda", "--no-git")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "k" / "build.toml").read_text()
    assert reference(text).ok, reference(text).error
    assert snake_noarch_keys(text)[0] == text  # nothing for update-build to rename
