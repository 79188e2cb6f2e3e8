"""Unit tests: each build.toml rule, with the exact key path and line:column of its error."""

from __future__ import annotations

import textwrap

import pytest

from kernel_builder.config import BuildTomlError, dumps, load, loads, parse
from kernel_builder.config.model import Backend, CppDependency, GitUrl, KernelDependency, Torch, TorchNoarch, TvmFfi, Version
from kernel_builder.errors import ConfigError

HEAD = """\
[general]
name = "relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]
"""


def problems(text: str) -> list[str]:
    """Every problem line (``file:line:col: key: message``) of an invalid document."""
    with pytest.raises(BuildTomlError) as info:
        parse(textwrap.dedent(text))
    return [str(p) for p in info.value.problems]


def one_problem(text: str) -> str:
    found = problems(text)
    assert len(found) == 1, found
    return found[0]


# ---------------------------------------------------------------- valid documents


def test_example_relu_loads(repo_root) -> None:
    build = load(repo_root / "examples" / "relu")
    assert build.name == "relu" and build.general.version == 1
    assert build.general.backends == (Backend.CPU, Backend.CUDA)
    assert isinstance(build.framework, Torch)
    assert {n: k.backend for n, k in build.kernels.items()} == {"relu_cpu": Backend.CPU, "relu_cuda": Backend.CUDA}
    assert build.kernels["relu_cuda"].cuda_capabilities == ("8.0", "9.0")
    # load() also takes the file itself
    assert load(repo_root / "examples" / "relu" / "build.toml") == build


def test_full_document_values() -> None:
    build = loads(
        HEAD.replace('license = "Apache-2.0"', 'license = "MIT"\nupstream = "git@github.com:org/relu.git"')
        + """
python-depends = ["einops"]
kernel-depends = [{ repo-id = "org/a", version = 2 }, { repo-id = "org/b", revision = "abc" }]
[general.cuda]
minver = "12.6"
python-depends = ["nvidia-cutlass-dsl"]
[torch]
src = ["b.cpp"]
minver = "2.10"
[torch.stable-abi]
cuda = "2.11"
[kernel.k]
backend = "cuda"
src = ["k.cu"]
depends = ["cutlass_3_9", "torch"]
cuda-minver = "12.0"
"""
    )
    general = build.general
    assert general.upstream == GitUrl("git@github.com:org/relu.git")
    assert general.kernel_depends == (KernelDependency("org/a", version=2), KernelDependency("org/b", revision="abc"))
    assert general.backend_python_depends(Backend.CUDA) == ("nvidia-cutlass-dsl",)
    assert general.cuda.minver == Version((12, 6))
    assert build.stable_abi_for(Backend.CUDA) == Version((2, 11))
    assert build.stable_abi_for(Backend.CPU) is None
    assert build.framework.minver == Version((2, 10))
    assert build.kernels["k"].depends == (CppDependency.CUTLASS_3_9, CppDependency.TORCH)


def test_frameworks() -> None:
    assert isinstance(loads(HEAD + "[torch-noarch]\n").framework, TorchNoarch)
    tvm = loads(HEAD + '[tvm-ffi]\nsrc = ["a.cpp"]\n')
    assert isinstance(tvm.framework, TvmFfi) and tvm.ext_dir == "tvm-ffi-ext"
    assert loads(HEAD + "[torch]\n").framework == Torch()


@pytest.mark.parametrize("cuda_key, rocm_key", [("cuda-capabilities", "rocm-archs"), ("cuda_capabilities", "rocm_archs")])
def test_noarch_archs_both_spellings(cuda_key: str, rocm_key: str) -> None:
    build = loads(HEAD + f'[torch-noarch]\n{cuda_key} = ["9.0", "10.0"]\n{rocm_key} = ["gfx942"]\n')
    assert build.framework == TorchNoarch(cuda_capabilities=("9.0", "10.0"), rocm_archs=("gfx942",))


def test_noarch_both_spellings_at_once_is_an_error() -> None:
    found = one_problem(HEAD + '[torch-noarch]\ncuda-capabilities = []\ncuda_capabilities = []\n')
    assert found == "build.toml:9:1: torch-noarch.cuda_capabilities: `cuda_capabilities` and `cuda-capabilities` are the same key; keep one"


def test_stable_abi_string_applies_to_every_backend() -> None:
    build = loads(HEAD + '[torch]\nstable-abi = "2.11"\n')
    assert build.stable_abi_for(Backend.CPU) == build.stable_abi_for(Backend.CUDA) == Version((2, 11))


def test_versions_trim_and_normalise() -> None:
    build = loads(HEAD + '[torch]\nminver = " 2.0 "\nmaxver = "2.10"\n')
    assert build.framework.minver == Version((2,)) and str(build.framework.maxver) == "2.10"


# ---------------------------------------------------------------- errors: general


def test_every_problem_is_reported_with_path_and_position() -> None:
    found = problems(
        """\
        [general]
        name = "Relu"
        version = -1
        edition = 5
        backends = ["cuda", "gpu"]
        frobnicate = true

        [torch]
        src = "a.cpp"
        """
    )
    assert found == [
        "build.toml:1:1: general.license: missing required key `license`",
        "build.toml:2:8: general.name: invalid kernel name 'Relu': use lowercase letters, digits and dashes, "
        "starting with a letter and not ending with a dash (at least 2 characters)",
        "build.toml:3:11: general.version: expected a non-negative integer, got -1",
        "build.toml:5:21: general.backends[1]: unknown backend 'gpu'; expected one of cann, cpu, cuda, metal, neuron, rocm, tpu, xpu",
        "build.toml:6:1: general.frobnicate: unknown key; expected one of: name, version, edition, license, upstream, "
        "source, backends, python-depends, kernel-depends, hub, cuda, neuron, tpu, xpu",
        'build.toml:9:7: torch.src: expected an array, got string "a.cpp"',
    ]



def test_a_document_without_problems_is_never_scanned_for_positions(repo_root) -> None:
    """Positions are found on first use (config/positions.py): what most reads never need."""
    parsed = parse((repo_root / "examples" / "relu" / "build.toml").read_text())
    assert "_scanned" not in vars(parsed.positions)
    assert parsed.positions.key(("general", "name")) == (3, 1) and "_scanned" in vars(parsed.positions)

def test_message_has_file_count_and_hint() -> None:
    with pytest.raises(ConfigError) as info:
        loads(HEAD.replace("version = 1", 'version = "1"') + "[torch]\n", path="k/build.toml")
    text = str(info.value)
    assert text.splitlines()[0] == "k/build.toml: 1 problem found"
    assert 'k/build.toml:3:11: general.version: expected a non-negative integer, got string "1"' in text
    assert info.value.hint and "docs/build-toml.md" in text


@pytest.mark.parametrize(
    "line, expected",
    [
        ('upstream = "ftp://a.org/b"', "general.upstream: unsupported git URL scheme 'ftp'"),
        ('upstream = "github.com/a/b"', "general.upstream: not a git URL"),
        ('source = "git@github.com:/abs"', "general.source: not a git URL"),
        ('license = 3', "general.license: expected a string, got integer 3"),
        ('backends = "cuda"', 'general.backends: expected an array, got string "cuda"'),
        ('python-depends = ["numpy"]', "general.python-depends[0]: unknown Python dependency 'numpy' for [general]; allowed: einops, helion, tvm-ffi"),
        ('kernel-depends = [{ repo-id = "a/b" }]', "general.kernel-depends[0]: a kernel dependency needs exactly one of `version` or `revision` (found neither)"),
        ('kernel-depends = [{ repo-id = "a/b", version = 1, revision = "x" }]', "general.kernel-depends[0]: a kernel dependency needs exactly one of `version` or `revision` (found both)"),
        ('kernel-depends = [{ repo-id = "a/b", version = "1" }]', 'general.kernel-depends[0].version: expected a non-negative integer, got string "1"'),
        ('kernel-depends = [{ repo-id = "a/b", version = 1, rev = "x" }]', "general.kernel-depends[0].rev: unknown key; expected one of: repo-id, version, revision"),
    ],
)
def test_general_value_rules(line: str, expected: str) -> None:
    key = line.split(" = ")[0]
    text = "\n".join(l for l in HEAD.splitlines() if not l.startswith(key + " ")) + f"\n{line}\n[torch]\n"
    found = one_problem(text)
    assert expected in found
    line_no = text.splitlines().index(line) + 1
    assert found.startswith(f"build.toml:{line_no}:")


def test_backend_section_rules() -> None:
    found = problems(
        HEAD
        + """[general.rocm]
[general.cuda]
minver = "12"
maxver = 13
python-depends = ["einops"]
[general.tpu]
kernel-depends = []
python-depends = ["jax"]
[general.hub]
repo = "x"
[torch]
"""
    )
    assert found == [
        "build.toml:7:1: general.rocm: unknown key; expected one of: name, version, edition, license, upstream, source, "
        "backends, python-depends, kernel-depends, hub, cuda, neuron, tpu, xpu",
        "build.toml:9:10: general.cuda.minver: expected a major.minor version such as \"2.12\", got '12' (1 component)",
        'build.toml:10:10: general.cuda.maxver: expected a version (e.g. "2.12") string, got integer 13',
        "build.toml:11:19: general.cuda.python-depends[0]: unknown Python dependency 'einops' for [general.cuda]; allowed: nvidia-cutlass-dsl",
        "build.toml:13:1: general.tpu.kernel-depends: unknown key; expected one of: python-depends",
        "build.toml:14:19: general.tpu.python-depends[0]: no Python dependencies are defined for backend tpu; remove 'jax'",
        "build.toml:16:1: general.hub.repo: unknown key; expected one of: repo-id, branch",
    ]


def test_backend_scoped_python_depends_are_accepted() -> None:
    build = loads(HEAD + '[general.neuron]\npython-depends = ["nki"]\n[general.xpu]\npython-depends = ["onednn"]\n[torch-noarch]\n')
    assert build.general.backend_python_depends(Backend.NEURON) == ("nki",)
    assert build.general.backend_python_depends(Backend.XPU) == ("onednn",)


# ---------------------------------------------------------------- errors: structure


def test_missing_general() -> None:
    found = problems('[kernel.a]\nbackend = "cpu"\nsrc = []\ndepends = []\n')
    assert found == ["build.toml: general: missing required table [general]"]
    assert problems("[torch]\n") == ["build.toml: general: missing required table [general]"]


def test_no_framework_table() -> None:
    assert one_problem(HEAD) == "build.toml: missing framework table: add one of [torch], [torch-noarch] or [tvm-ffi]"


def test_two_framework_tables() -> None:
    found = one_problem(HEAD + '[torch]\n[tvm-ffi]\nsrc = []\n')
    assert found == "build.toml:8:1: tvm-ffi: only one framework table is allowed, found [torch] and [tvm-ffi]"


def test_unknown_top_level_table() -> None:
    found = one_problem(HEAD + "[torch]\n[tool.x]\na = 1\n")
    assert found == "build.toml:8:2: tool: unknown table; expected one of: general, torch, torch-noarch, tvm-ffi, kernel"


def test_framework_key_rules() -> None:
    assert one_problem(HEAD + "[tvm-ffi]\n") == "build.toml:7:1: tvm-ffi.src: missing required key `src`"
    assert one_problem(HEAD + '[tvm-ffi]\nsrc = []\nstable-abi = "2.11"\n').startswith(
        "build.toml:9:1: tvm-ffi.stable-abi: unknown key; expected one of: src, include, pyext, cxx-flags"
    )
    assert one_problem(HEAD + '[torch]\nminver = "2.10.0"\n') == (
        "build.toml:8:10: torch.minver: expected a major.minor version such as \"2.12\", got '2.10.0' (3 components)"
    )
    assert one_problem(HEAD + '[torch.stable-abi]\ngpu = "2.11"\n').startswith("build.toml:8:7: torch.stable-abi.gpu: unknown backend 'gpu'")
    assert one_problem(HEAD + "[torch]\nstable-abi = 2\n") == (
        "build.toml:8:14: torch.stable-abi: expected a version string or a table of backend = version, got integer 2"
    )


KERNEL = HEAD + "[torch]\n[kernel.relu]\n"


def test_kernel_rules() -> None:
    found = problems(
        KERNEL
        + 'backend = "cuda"\nsrc = ["a.cu"]\ndepends = ["torch", "boost"]\ncuda-capabilities = ["8.0", 9]\nrocm-archs = []\n'
        + '[kernel.other]\nbackend = "tpu"\nsrc = []\ndepends = []\n'
        + '[kernel.third]\nsrc = []\n'
    )
    assert found == [
        "build.toml:11:21: kernel.relu.depends[1]: unknown C++ dependency 'boost'; expected one of cutlass_2_10, cutlass_3_5, "
        "cutlass_3_6, cutlass_3_8, cutlass_3_9, cutlass_4_0, cutlass_4_4, cutlass_4_5, sycl_tla, metal-cpp, torch, "
        "torch-stable-abi-shim",
        "build.toml:12:29: kernel.relu.cuda-capabilities[1]: expected a string, got integer 9",
        "build.toml:13:1: kernel.relu.rocm-archs: unknown key; expected one of: backend, src, depends, include, cxx-flags, "
        "cuda-capabilities, cuda-flags, cuda-minver",
        "build.toml:15:11: kernel.other.backend: kernels cannot target backend tpu; expected one of cpu, cuda, metal, rocm, xpu",
        "build.toml:18:1: kernel.third.backend: missing required key `backend`",
        "build.toml:18:1: kernel.third.depends: missing required key `depends`",
    ]


@pytest.mark.parametrize(
    "backend, key",
    [("cpu", "cuda-flags"), ("metal", "metal-flags"), ("rocm", "sycl-flags"), ("xpu", "hip-flags"), ("cuda", "hip-flags")],
)
def test_kernel_keys_belong_to_their_backend(backend: str, key: str) -> None:
    found = one_problem(KERNEL + f'backend = "{backend}"\nsrc = []\ndepends = []\n{key} = []\n')
    assert found.startswith(f"build.toml:12:1: kernel.relu.{key}: unknown key")


@pytest.mark.parametrize("backend, key", [("cuda", "cuda-flags"), ("rocm", "hip-flags"), ("xpu", "sycl-flags"), ("rocm", "rocm-archs")])
def test_kernel_backend_keys_accepted(backend: str, key: str) -> None:
    build = loads(HEAD.replace('["cpu", "cuda"]', f'["{backend}"]') + f'[torch]\n[kernel.k]\nbackend = "{backend}"\nsrc = []\ndepends = []\n{key} = ["x"]\n')
    assert getattr(build.kernels["k"], key.replace("-", "_")) == ("x",)


def test_kernel_with_odd_name_gets_a_quoted_path() -> None:
    found = one_problem(HEAD + '[torch]\n[kernel."a.b"]\nbackend = "cpu"\nsrc = 1\ndepends = []\n')
    assert found == 'build.toml:10:7: kernel."a.b".src: expected an array, got integer 1'


def test_inline_tables_get_positions() -> None:
    found = one_problem(HEAD + '[torch]\n[kernel]\nk = { backend = "cpu", src = [], depends = ["x"] }\n')
    assert found.startswith("build.toml:9:45: kernel.k.depends[0]: unknown C++ dependency 'x'")


# ---------------------------------------------------------------- editions


def test_v4_is_upgraded_with_a_warning(caplog) -> None:
    text = HEAD.replace("edition = 5\n", "") + '[torch]\nstable-abi = "2.11"\n'
    parsed = parse(text)
    assert parsed.edition == 4
    assert parsed.build == loads(HEAD + '[torch]\nstable-abi = "2.11"\n')
    assert not caplog.records
    loads(text)
    [record] = caplog.records
    assert record.levelname == "WARNING" and record.name == "kernel_builder.config.loading"
    assert "legacy v4 format" in record.getMessage() and "kernel-builder update-build" in record.getMessage()


def test_v4_rejects_edition_5_only_keys() -> None:
    found = problems(HEAD.replace("edition = 5\n", "") + '[general.tpu]\n[torch.stable-abi]\ncuda = "2.11"\n')
    assert "build.toml:6:1: general.tpu: unknown key" in found[0]
    assert found[1] == 'build.toml:7:1: torch.stable-abi: expected a version (e.g. "2.12") string, got a table'


def test_v3_is_refused_with_update_hint() -> None:
    with pytest.raises(BuildTomlError) as info:
        loads('[general]\nname = "relu"\nbackends = ["cuda"]\n')
    assert "legacy v3 format" in str(info.value)
    assert "kernel-builder update-build" in info.value.hint


def test_v3_is_read_when_migrating() -> None:
    parsed = parse('[general]\nname = "relu"\nlicense = "MIT"\nbackends = ["cuda"]\n', allow_legacy=True)
    assert parsed.edition == 3 and parsed.build.general.version == 1
    assert parsed.build.framework == TorchNoarch()


def test_v3_without_license_cannot_migrate() -> None:
    with pytest.raises(BuildTomlError) as info:
        parse('[general]\nname = "relu"\nbackends = ["cuda"]\n', allow_legacy=True)
    assert [str(p) for p in info.value.problems] == [
        'build.toml:1:1: general.license: missing required key `license` (edition 6 needs it): add e.g. license = "Apache-2.0"'
    ]


@pytest.mark.parametrize(
    "edition, expected",
    [
        (
            "7",
            "build.toml:4:11: general.edition: unsupported build edition 7; "
            "this kernel-builder reads editions 3 and 4 (no `edition` key), 5 and 6",
        ),
        (
            "4",
            "build.toml:4:11: general.edition: unsupported build edition 4; "
            "this kernel-builder reads editions 3 and 4 (no `edition` key), 5 and 6",
        ),
        ('"5"', 'build.toml:4:11: general.edition: expected an integer edition (6), got string "5"'),
        ("true", "build.toml:4:11: general.edition: expected an integer edition (6), got boolean true"),
    ],
)
def test_edition_probe(edition: str, expected: str) -> None:
    # other problems of the file are not reported: the edition decides how to read it
    assert one_problem(HEAD.replace("edition = 5", f"edition = {edition}").replace("version = 1", "version = -1")) == expected


def test_neither_v4_nor_v3_reports_the_closer_edition() -> None:
    with pytest.raises(BuildTomlError) as info:
        loads('[general]\nname = "relu"\nversion = 1\nlicense = "x"\nbackends = ["cuda"]\n[torch-noarch]\nfoo = 1\n')
    assert "read as legacy v4" in str(info.value)
    assert [str(p) for p in info.value.problems] == [
        "build.toml:7:1: torch-noarch.foo: unknown key; expected one of: pyext, cuda-capabilities, cuda_capabilities, rocm-archs, rocm_archs"
    ]


def test_toml_syntax_error_position() -> None:
    found = one_problem('[general]\nname = "relu\n')
    assert found.startswith("build.toml:2:13: invalid TOML: Illegal character")


def test_missing_file(tmp_path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load(tmp_path)


# ---------------------------------------------------------------- warnings


def test_kernel_backend_not_in_backends_is_a_warning() -> None:
    parsed = parse(HEAD + '[torch]\n[kernel.r]\nbackend = "rocm"\nsrc = []\ndepends = []\n')
    assert [str(w) for w in parsed.warnings] == [
        "build.toml:9:11: kernel.r.backend: backend rocm is not in general.backends (cpu, cuda); this component will not be built"
    ]
    assert "r" in parsed.build.kernels


def test_duplicate_and_empty_backends_warn() -> None:
    dup = parse(HEAD.replace('["cpu", "cuda"]', '["cpu", "cpu"]') + "[torch]\n")
    assert [str(w) for w in dup.warnings] == ["build.toml:6:20: general.backends[1]: backend cpu is listed twice"]
    empty = parse(HEAD.replace('["cpu", "cuda"]', "[]") + "[torch]\n")
    assert [w.message for w in empty.warnings] == ["no backends listed: nothing will be built"]


# ---------------------------------------------------------------- writer


def test_dumps_is_edition_6_with_kebab_keys(repo_root) -> None:
    build = load(repo_root / "examples" / "relu")
    text = dumps(build)
    assert "edition = 6" in text and "cuda-capabilities" in text and "repo-id" in text
    assert 'language = "cpp-cuda"' in text and "backend =" not in text
    assert parse(text).edition == 6 and loads(text) == build


def test_docs_examples_are_valid(repo_root) -> None:
    """Every ```toml block of docs/build-toml.md is a valid file of its edition, 5 or 6."""
    import re

    page = (repo_root / "docs" / "build-toml.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", page, flags=re.S)
    assert blocks
    for block in blocks:
        parsed = parse(block)
        assert parsed.edition in (5, 6) and not parsed.warnings


@pytest.mark.parametrize("repo_id", ["relu", "a/b/c", "../x", "a/..b", "org/-x", "/x", ""])
def test_hub_and_kernel_dependency_repo_ids_follow_the_one_rule(repo_id: str) -> None:
    """general.hub.repo-id and kernel-depends use kernel_builder.ids.RepoId, as upload and the loader do."""
    from kernel_builder.ids import RepoId

    with pytest.raises(ValueError, match="invalid Hub repository id"):
        RepoId.parse(repo_id)
    base = '[general]\nname = "relu"\nversion = 1\nedition = 5\nlicense = "MIT"\nbackends = ["cpu"]\n'
    for extra in (f'[general.hub]\nrepo-id = "{repo_id}"\n', f'kernel-depends = [{{ repo-id = "{repo_id}", version = 1 }}]\n'):
        text = base + extra if extra.startswith("[") else base.replace("[general]\n", "[general]\n" + extra)
        with pytest.raises(ConfigError, match="invalid Hub repository id"):
            loads(text + "[torch-noarch]\n")
    assert str(RepoId.parse("my-org/relu.v2")) == "my-org/relu.v2"
