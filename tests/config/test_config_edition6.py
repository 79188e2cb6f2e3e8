"""Edition 6: its rules with their locations and hints, update-build from 3/4/5 to 6 on real
kernels (PyPI kernels 0.19.1 must accept the result and the variants must not change), and
the CLI on an edition-6 kernel."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from config_oracle import reference

from kernel_builder.config import BuildTomlError, parse
from kernel_builder.config.model import Backend, BuildLayout, Language, MlxNoarch, Version
from kernel_builder.config.positions import scan
from kernel_builder.config.update import migrate_text
from kernel_builder.variants.buildsets import load_build_sets
from kernel_builder.variants.matrix import matrix

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*/build.toml"))

HEAD = """\
[general]
name = "relu"
version = 1
edition = 6
license = "Apache-2.0"
backends = ["cpu", "cuda"]
"""

RUST = HEAD + """\
build-layout = "zip"

[tvm-ffi]

[kernel.relu_rs]
language = "rust-cpu"
src = ["relu-rs/src", "Cargo.lock"]
cargo-manifest = "relu-rs/Cargo.toml"

[kernel.relu_tile]
language = "rust-cutile"
src = ["tile/src"]
cargo-manifest = "tile/Cargo.toml"
tileiras-minver = "13.2"

[kernel.relu_oxide]
language = "rust-cuda-oxide"
src = ["oxide/src"]
cargo-manifest = "oxide/Cargo.toml"
cuda-capabilities = ["8.0"]
"""


def problems(text: str, **kwargs: object) -> list[str]:
    with pytest.raises(BuildTomlError) as info:
        parse(text, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in info.value.problems]


def hint(text: str, **kwargs: object) -> str:
    with pytest.raises(BuildTomlError) as info:
        parse(text, **kwargs)  # type: ignore[arg-type]
    return info.value.hint or ""


# ---------------------------------------------------------------- the model


def test_rust_components_carry_everything_a_build_needs() -> None:
    parsed = parse(RUST)
    build = parsed.build
    assert parsed.edition == 6 and reference(RUST).ok
    assert build.build_layout is BuildLayout.ZIP
    rs, tile, oxide = build.kernels["relu_rs"], build.kernels["relu_tile"], build.kernels["relu_oxide"]
    assert (rs.language, rs.backend, rs.is_rust) == (Language.RUST_CPU, Backend.CPU, True)
    assert rs.cargo_manifest == "relu-rs/Cargo.toml" and rs.src == ("relu-rs/src", "Cargo.lock") and rs.depends == ()
    assert (tile.backend, tile.tileiras_minver) == (Backend.CUDA, Version((13, 2)))
    assert (oxide.backend, oxide.cuda_capabilities) == (Backend.CUDA, ("8.0",))
    assert set(build.kernels_for(Backend.CUDA)) == {"relu_tile", "relu_oxide"}
    # a build reads the manifests too
    assert "relu-rs/Cargo.toml" in build.input_paths(Backend.CPU) and "tile/Cargo.toml" not in build.input_paths(Backend.CPU)


def test_edition_5_and_its_edition_6_twin_are_one_model() -> None:
    for path in EXAMPLES:
        text = path.read_text()
        new, _ = migrate_text(text)
        assert parse(new).build == parse(text).build, path
        for kernel in parse(new).build.kernels.values():
            assert kernel.is_rust or kernel.language is Language.cpp_for(kernel.backend)  # examples/add-rust is Rust


def test_mlx_noarch_framework() -> None:
    text = HEAD.replace('["cpu", "cuda"]', '["metal"]') + '[mlx-noarch]\npyext = ["py", "metal"]\n'
    build = parse(text).build
    assert isinstance(build.framework, MlxNoarch) and build.is_mlx and build.pyext == ("py", "metal")


def test_rust_src_may_name_directories(tmp_path: Path) -> None:
    text = HEAD + '[tvm-ffi]\n[kernel.k]\nlanguage = "rust-cpu"\nsrc = ["crate/src", "missing"]\ncargo-manifest = "crate/Cargo.toml"\n'
    (tmp_path / "crate" / "src").mkdir(parents=True)
    (tmp_path / "crate" / "Cargo.toml").write_text("[package]\n")
    assert problems(text, root=tmp_path) == [
        f"build.toml:10:21: kernel.k.src[1]: string \"missing\" does not exist (looked for {tmp_path / 'missing'})"
    ]
    (tmp_path / "missing").write_text("")
    assert parse(text, root=tmp_path).build.kernels["k"].src == ("crate/src", "missing")


# ---------------------------------------------------------------- rules, located


def test_every_problem_of_an_edition_6_file_at_once() -> None:
    text = HEAD + """\
build-layout = "tar"

[torch]

[kernel.a]
backend = "cuda"
src = ["a.cu"]
depends = []

[kernel.b]
language = "rust-cutile"
src = []
cargo-manifest = "/abs/Cargo.toml"
tileiras-minver = "12.8"
depends = []

[kernel.c]
language = "cpp-tpu"
src = []
depends = []
"""
    assert problems(text) == [
        "build.toml:7:16: general.build-layout: unknown build layout 'tar'; expected one of files, zip",
        'build.toml:11:1: kernel.a.language: missing required key `language`; edition 6 names the language: '
        'write language = "cpp-cuda" instead of backend = "cuda"',
        "build.toml:12:1: kernel.a.backend: unknown key; expected one of: language, src, depends, include, cxx-flags, "
        "cuda-capabilities, cuda-flags, cuda-minver, rocm-archs, hip-flags, sycl-flags, cargo-manifest, tileiras-minver",
        "build.toml:17:12: kernel.b.language: a Rust component (rust-cutile) needs the [tvm-ffi] framework; this file has [torch]",
        'build.toml:19:18: kernel.b.cargo-manifest: string "/abs/Cargo.toml" is an absolute path; build.toml names files '
        "and directories relative to its own directory",
        'build.toml:20:19: kernel.b.tileiras-minver: 12.8 is older than 13.2, the first CUDA release with cuTile; use "13.2" or later',
        "build.toml:21:1: kernel.b.depends: unknown key; expected one of: language, src, cargo-manifest, tileiras-minver",
        "build.toml:24:12: kernel.c.language: unknown language 'cpp-tpu'; expected one of cpp-cpu, cpp-cuda, cpp-rocm, "
        "cpp-xpu, cpp-metal, rust-cpu, rust-cuda-oxide, rust-cutile",
    ]


@pytest.mark.parametrize(
    "language, key",
    [("cpp-cpu", "cuda-flags"), ("cpp-metal", "cargo-manifest"), ("cpp-cuda", "tileiras-minver"), ("rust-cpu", "include"),
     ("rust-cpu", "cuda-capabilities"), ("rust-cuda-oxide", "cuda-flags"), ("rust-cutile", "cuda-capabilities")],
)
def test_a_key_of_another_language_is_an_error(language: str, key: str) -> None:
    base = {"language": f'"{language}"', "src": "[]"}
    if language.startswith("rust-"):
        base["cargo-manifest"] = '"Cargo.toml"'
    else:
        base["depends"] = "[]"
    if language == "rust-cutile":
        base["tileiras-minver"] = '"13.2"'
    base[key] = '"13.2"' if key in ("tileiras-minver",) else '"C.toml"' if key == "cargo-manifest" else "[]"
    text = HEAD + "[tvm-ffi]\n[kernel.k]\n" + "".join(f"{k} = {v}\n" for k, v in base.items())
    found = problems(text)
    assert len(found) == 1 and f"kernel.k.{key}: unknown key" in found[0], found
    assert not reference(text).ok


def test_mlx_noarch_runs_on_metal_only() -> None:
    text = HEAD + "[mlx-noarch]\n"
    assert problems(text) == [
        "build.toml:6:13: general.backends[0]: [mlx-noarch] kernels run on metal only, not cpu",
        "build.toml:6:20: general.backends[1]: [mlx-noarch] kernels run on metal only, not cuda",
    ]


def test_edition_6_keys_in_edition_5_say_which_edition_has_them() -> None:
    text = HEAD.replace("edition = 6", "edition = 5").replace('["cpu", "cuda"]', '["metal"]') + "[mlx-noarch]\n"
    assert "mlx-noarch: unknown table (an edition-6 table: set edition = 6)" in "\n".join(problems(text))


@pytest.mark.parametrize("edition", [7, 8, 100])
def test_a_newer_edition_is_refused_with_a_hint_that_can_help(edition: int) -> None:
    text = HEAD.replace("edition = 6", f"edition = {edition}") + "[torch]\n"
    assert problems(text) == [
        f"build.toml:4:11: general.edition: unsupported build edition {edition}; "
        "this kernel-builder reads editions 3 and 4 (no `edition` key), 5 and 6"
    ]
    found = hint(text)
    assert "write the file as edition 6" in found
    assert "upgrade" not in found and "update-build" not in found  # no newer kernel-builder, and update-build reads none


@pytest.mark.parametrize("edition", [0, 1, 2, 3, 4])
def test_an_older_edition_number_is_refused_with_what_to_write(edition: int) -> None:
    text = HEAD.replace("edition = 6", f"edition = {edition}") + "[torch]\n"
    found = hint(text)
    assert "write the file as edition 6" in found and "delete the edition line" in found
    assert "upgrade" not in found and "run `kernel-builder update-build`" not in found


PRE_V3 = [
    "[general]\nname = 'relu'\nuniversal = true\n[torch]\n",
    "[general]\nname = 'relu'\ncuda-minver = '12.0'\n[torch]\n[kernel.k]\nbackend = 'cuda'\nsrc = []\ndepends = []\n",
    "[general]\nname = 'relu'\n[torch]\nsrc = []\n[kernel.k]\nbackend = 'cuda'\nsrc = []\ndepends = []\n",
    "[general]\nname = 'relu'\n[torch]\nuniversal = true\n",
    "[general]\nname = 'relu'\n[torch]\n[kernel.k]\nlanguage = 'cuda-hipify'\nsrc = []\ndepends = []\n",
]


@pytest.mark.parametrize("text", PRE_V3)
def test_files_older_than_v3_are_refused_with_what_to_write_by_hand(text: str) -> None:
    for allow_legacy in (False, True):  # check-config, update-build
        with pytest.raises(BuildTomlError) as info:
            parse(text, allow_legacy=allow_legacy)
        assert "older than edition 3" in str(info.value)
        assert "by hand" in info.value.hint and 'language = "cpp-<backend>"' in info.value.hint
        assert "update-build" not in info.value.hint


def test_update_build_never_sends_the_author_back_to_update_build(tmp_path: Path) -> None:
    """A file update-build cannot read gets hints without `run kernel-builder update-build`."""
    for text in [*PRE_V3, '[general]\nname = "relu"\nbackends = ["cuda"]\n[torch]\nfrob = 1\n', HEAD.replace("6", "7") + "[torch]\n"]:
        (tmp_path / "build.toml").write_text(text)
        done = subprocess.run(
            [sys.executable, "-m", "kernel_builder", "update-build", str(tmp_path)], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 3, done.stderr
        assert "update-build`" not in done.stderr, done.stderr


# ---------------------------------------------------------------- update-build 3/4/5 -> 6


def _variants(text: str) -> list[str]:
    return matrix(parse(text, allow_legacy=True).build, load_build_sets(), "all").names


def _as_edition(text: str, edition: int) -> str | None:
    """An example written as an older edition, or ``None`` where that edition cannot say it
    (a per-backend stable ABI is edition 5 and later)."""
    if edition < 5:
        text = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("edition ="))
    if edition == 3:
        text = text.replace("version = 1\n", "", 1)
    try:
        return text if parse(text, allow_legacy=True).edition == edition else None
    except BuildTomlError:
        return None


ROUND_TRIPS = [
    pytest.param(legacy, id=f"{path.parent.name}-{edition}")
    for path in EXAMPLES
    for edition in (5, 4, 3)
    if (legacy := _as_edition(path.read_text(), edition)) is not None
]


def test_every_example_round_trips_from_edition_5_and_most_from_4_and_3() -> None:
    assert len(ROUND_TRIPS) >= 2 * len(EXAMPLES) and len(EXAMPLES) >= 8
    assert sum(p.id.endswith("-3") for p in ROUND_TRIPS) >= 4


@pytest.mark.parametrize("text", ROUND_TRIPS)
def test_update_build_round_trips_the_examples(text: str) -> None:
    """Each example as edition 5, as v4 (no edition key) and, where v3 can say it, as v3:
    update-build gives edition 6, which 0.19.1 accepts with the same backends, the same
    model and the same variants, and every comment is kept."""
    old = parse(text, allow_legacy=True)
    new, found = migrate_text(text)
    assert found == old.edition
    reread = parse(new)
    assert reread.edition == 6 and reread.build == old.build
    assert scan(new).comments == scan(text).comments
    ref = reference(new)
    assert ref.ok, ref.error
    assert ref.backends == tuple(b.value for b in old.build.general.backends)
    assert _variants(new) == _variants(text)
    assert migrate_text(new)[0] == new  # a second run changes nothing


COMMUNITY_STYLE = [
    # the shapes of kernels-community files (written for this test): v4 with comments and
    # multi-line lists, several components per backend, a noarch Triton kernel, tvm-ffi.
    """\
[general]
name = "layer-norm"
version = 1
license = "BSD-3-Clause"
backends = ["cuda", "xpu"]   # no ROCm yet

[general.hub]
repo-id = "org/layer-norm"

[torch]
src = [
  "torch-ext/torch_binding.cpp",
  "torch-ext/torch_binding.h",
]

[kernel.layer_norm]
backend = "cuda"
depends = ["torch", "cutlass_3_6"]
cuda-capabilities = ["8.0", "9.0a"]   # Hopper needs the a
src = ["ln/ln_api.cpp", "ln/ln_fwd.cu"]

[kernel.layer_norm_xpu]
backend = 'xpu'
depends = ["torch", "sycl_tla"]
src = ["ln_xpu/ln.cpp"]
sycl-flags = ["-fsycl"]
""",
    """\
[general]
name = "triton-kernels"
version = 1
license = "MIT"
backends = ["cuda", "rocm", "xpu"]

[torch-noarch]
cuda_capabilities = ["9.0", "10.0"]
""",
    """\
[general]
name = "relu-tvm"
version = 2
license = "Apache-2.0"
backends = ["cpu", "cuda"]

[tvm-ffi]
src = ["tvm-ffi-ext/binding.cpp"]

[kernel.relu]
backend = "cuda"
depends = []
src = ["relu.cu"]
[kernel.relu_cpu]
  backend="cpu"
  depends=[]
  src=["relu.cpp"]
""",
]


@pytest.mark.parametrize("text", COMMUNITY_STYLE, ids=["v4-cuda-xpu", "v4-noarch", "v4-tvm-ffi"])
def test_update_build_round_trips_community_shapes(text: str) -> None:
    new, found = migrate_text(text)
    assert found == 4
    assert parse(new).build == parse(text).build and parse(new).edition == 6
    assert reference(new).ok and reference(new).backends == reference(text).backends
    assert _variants(new) == _variants(text)
    assert "backend =" not in new and "backend=" not in new
    assert scan(new).comments == scan(text).comments


# ---------------------------------------------------------------- the CLI on an edition-6 kernel


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, timeout=120)


def test_check_config_and_list_variants_on_an_edition_6_twin(tmp_path: Path) -> None:
    twin = tmp_path / "relu"
    shutil.copytree(REPO / "examples" / "relu", twin)
    assert run("update-build", str(twin)).returncode == 0
    assert "edition = 6" in (twin / "build.toml").read_text()
    done = run("check-config", str(twin))
    assert done.returncode == 0, done.stderr
    assert "edition:   6" in done.stdout and "kernels:   relu_cpu (cpp-cpu), relu_cuda (cpp-cuda)" in done.stdout
    assert done.stderr == ""
    six = run("list-variants", "--system", "all", "--json", str(twin))
    five = run("list-variants", "--system", "all", "--json", str(REPO / "examples" / "relu"))
    assert six.returncode == 0 and five.returncode == 0, six.stderr + five.stderr
    assert json.loads(six.stdout) == json.loads(five.stdout)


def test_the_docs_have_an_edition_6_example_per_language_that_the_reference_reads() -> None:
    import re
    import tomllib

    page = (REPO / "docs" / "build-toml.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", page, flags=re.S)
    languages = set()
    for block in blocks:
        ref = reference(block)
        assert ref.ok, ref.error
        parsed = parse(block)
        assert parsed.edition == 6 and not parsed.warnings
        languages |= {k["language"] for k in tomllib.loads(block).get("kernel", {}).values()}
    assert languages == {lang.value for lang in Language}
    for key in ("build-layout", "cargo-manifest", "tileiras-minver", "[mlx-noarch]", "What changed from edition 5 to edition 6"):
        assert key in page


@pytest.mark.parametrize(
    "kernels, expected",
    [
        ('[kernel.k]\nbackend = "cuda"  # GPU\nsrc = []\ndepends = []\n', '[kernel.k]\nlanguage = "cpp-cuda"  # GPU\nsrc = []\ndepends = []\n'),
        ("[kernel.k]\n\"backend\"='cpu'\nsrc = []\ndepends = []\n", "[kernel.k]\n\"language\"=\"cpp-cpu\"\nsrc = []\ndepends = []\n"),
        ('[kernel]\nk = { backend = "cuda", src = [], depends = [] }\n', '[kernel]\nk = { language = "cpp-cuda", src = [], depends = [] }\n'),
        ('[kernel]\nk.backend = "cpu"\nk.src = []\nk.depends = []\n', '[kernel]\nk.language = "cpp-cpu"\nk.src = []\nk.depends = []\n'),
        ('[kernel.a]\nbackend = "cpu"\nsrc = []\ndepends = []\n[kernel.b]\nsrc = []\nbackend = "rocm"\ndepends = []\n',
         '[kernel.a]\nlanguage = "cpp-cpu"\nsrc = []\ndepends = []\n[kernel.b]\nsrc = []\nlanguage = "cpp-rocm"\ndepends = []\n'),
    ],
    ids=["comment", "quoted-key", "inline-table", "dotted-keys", "two-components"],
)
def test_update_build_renames_backend_in_every_shape(kernels: str, expected: str) -> None:
    head = HEAD.replace("edition = 6", "edition = 5").replace('["cpu", "cuda"]', '["cpu", "cuda", "rocm"]') + "[torch]\n"
    new, edition = migrate_text(head + kernels)
    assert edition == 5
    assert new == head.replace("edition = 5", "edition = 6") + expected
    assert parse(new).build == parse(head + kernels).build and reference(new).ok


def test_a_component_whose_backend_is_not_listed_warns_at_its_language() -> None:
    text = HEAD.replace('["cpu", "cuda"]', '["cpu"]') + '[tvm-ffi]\n[kernel.k]\nlanguage = "rust-cuda-oxide"\nsrc = []\ncargo-manifest = "C.toml"\n'
    assert [str(w) for w in parse(text).warnings] == [
        "build.toml:9:12: kernel.k.language: backend cuda (of rust-cuda-oxide) is not in general.backends (cpu); "
        "this component will not be built"
    ]


@pytest.mark.parametrize("written", ["5", "+5", "0x5", "0o5", "0b101", "5  # five"])
def test_update_build_rewrites_edition_5_however_it_is_written(written: str) -> None:
    text = HEAD.replace("edition = 6", f"edition = {written}") + "[torch]\n"
    new, edition = migrate_text(text)
    assert edition == 5
    assert new == HEAD.replace("edition = 6", "edition = 6" + ("  # five" if "#" in written else "")) + "[torch]\n"


def test_the_docs_language_table_is_the_models() -> None:
    import re

    page = (REPO / "docs" / "build-toml.md").read_text()
    rows = dict(re.findall(r"^\| `((?:cpp|rust)-[a-z-]+)` \| ([a-z]+) \|", page, flags=re.M))
    assert rows == {lang.value: lang.backend.value for lang in Language}
