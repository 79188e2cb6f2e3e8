"""Property tests: model -> TOML -> model is the identity, and update-build keeps comments."""

from __future__ import annotations

import tomllib

import attrs

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kernel_builder.config import dumps, parse
from kernel_builder.config.model import (
    KERNEL_BACKENDS,
    Backend,
    RUST_MIN_TILEIRAS,
    Build,
    BuildLayout,
    CppDependency,
    CudaGeneral,
    General,
    GitUrl,
    Hub,
    Kernel,
    KernelDependency,
    Language,
    MlxNoarch,
    NeuronGeneral,
    Torch,
    TorchNoarch,
    TpuGeneral,
    TvmFfi,
    Version,
    XpuGeneral,
)
from kernel_builder.config.positions import scan
from kernel_builder.config.update import migrate_text

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

texts = st.text(max_size=10)
names = st.from_regex(r"[a-z][-a-z0-9]{0,8}[a-z0-9]", fullmatch=True)
versions = st.tuples(st.integers(0, 30), st.integers(0, 30)).map(lambda t: Version.parse(f"{t[0]}.{t[1]}"))
urls = st.sampled_from(["https://github.com/a/b", "git@github.com:org/x.git", "ssh://h/p", "git+https://h.org/r"]).map(GitUrl.parse)
str_lists = st.lists(texts, max_size=3).map(tuple)
opt_lists = st.none() | str_lists
# Source paths and branch names are checked for form: relative, inside the kernel, git-valid.
paths = st.from_regex(r"[a-z_][a-z0-9_.-]{0,6}(/[a-z0-9_][a-z0-9_.-]{0,5}){0,2}", fullmatch=True).filter(lambda p: ".." not in p)
path_lists = st.lists(paths, max_size=3).map(tuple)
opt_path_lists = st.none() | path_lists
branches = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,8}", fullmatch=True)
# Hub repository ids (kernel_builder.ids.RepoId): the reader rejects anything else
repo_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,6}/[A-Za-z0-9][A-Za-z0-9_-]{0,6}", fullmatch=True)
kernel_deps = st.lists(
    st.builds(KernelDependency, repo_ids, version=st.integers(0, 2**63)) | st.builds(KernelDependency, repo_ids, revision=texts),
    max_size=2,
).map(tuple)


def subsets(*items: str) -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(st.sampled_from(items), unique=True).map(tuple) if items else st.just(())


generals = st.builds(
    General,
    name=names,
    version=st.integers(0, 2**63),
    license=texts,
    backends=st.lists(st.sampled_from(list(Backend)), max_size=4).map(tuple),
    upstream=st.none() | urls,
    source=st.none() | urls,
    python_depends=subsets("einops", "helion", "tvm-ffi"),
    kernel_depends=kernel_deps,
    hub=st.none() | st.builds(Hub, st.none() | repo_ids, st.none() | branches),
    cuda=st.none() | st.builds(CudaGeneral, st.none() | versions, st.none() | versions, kernel_deps, subsets("nvidia-cutlass-dsl")),
    neuron=st.none() | st.builds(NeuronGeneral, kernel_deps, subsets("nki")),
    tpu=st.none() | st.just(TpuGeneral()),
    xpu=st.none() | st.builds(XpuGeneral, kernel_deps, subsets("onednn")),
    build_layout=st.none() | st.sampled_from(list(BuildLayout)),
)
stable_abis = st.none() | versions | st.dictionaries(st.sampled_from(list(Backend)), versions, max_size=3)
frameworks = st.one_of(
    st.builds(Torch, path_lists, opt_path_lists, opt_lists, st.none() | versions, st.none() | versions, opt_lists, stable_abis),
    st.builds(TorchNoarch, opt_lists, opt_lists, opt_lists),
    st.builds(TvmFfi, path_lists, opt_path_lists, opt_lists, opt_lists),
    st.builds(MlxNoarch, opt_lists),
)


@st.composite
def rust_kernels(draw: st.DrawFn) -> Kernel:
    """Edition 6's Rust components (only beside a [tvm-ffi] framework)."""
    language = draw(st.sampled_from([lang for lang in Language if lang.is_rust]))
    extra = {}
    if language is Language.RUST_CUDA_OXIDE:
        extra = {"cuda_capabilities": draw(opt_lists)}
    elif language is Language.RUST_CUTILE:
        extra = {"tileiras_minver": draw(versions.filter(lambda v: v >= RUST_MIN_TILEIRAS))}
    return Kernel(backend=language.backend, language=language, src=draw(path_lists), cargo_manifest=draw(paths), **extra)


@st.composite
def kernels(draw: st.DrawFn) -> Kernel:
    backend = draw(st.sampled_from(sorted(KERNEL_BACKENDS, key=lambda b: b.value)))
    extra = {}
    if backend is Backend.CUDA:
        extra = {"cuda_capabilities": draw(opt_lists), "cuda_flags": draw(opt_lists), "cuda_minver": draw(st.none() | versions)}
    elif backend is Backend.ROCM:
        extra = {"rocm_archs": draw(opt_lists), "hip_flags": draw(opt_lists)}
    elif backend is Backend.XPU:
        extra = {"sycl_flags": draw(opt_lists)}
    return Kernel(
        backend=backend,
        src=draw(path_lists),
        depends=tuple(draw(st.lists(st.sampled_from(list(CppDependency)), max_size=3))),
        include=draw(opt_path_lists),
        cxx_flags=draw(opt_lists),
        **extra,
    )


@st.composite
def _builds(draw: st.DrawFn) -> Build:
    """A valid model: [mlx-noarch] only with metal, Rust components only with [tvm-ffi]."""
    general, framework = draw(generals), draw(frameworks)
    if isinstance(framework, MlxNoarch):
        general = attrs.evolve(general, backends=tuple(b for b in general.backends if b is Backend.METAL))
    components = kernels() | rust_kernels() if isinstance(framework, TvmFfi) else kernels()
    return Build(general, framework, draw(st.dictionaries(st.text(min_size=1, max_size=8), components, max_size=3)))


builds = _builds()


@SETTINGS
@given(builds)
def test_model_toml_model_round_trip(build: Build) -> None:
    text = dumps(build)
    parsed = parse(text)
    assert parsed.edition == 6
    assert parsed.build == build
    assert dumps(parsed.build) == text


comment_text = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=12)


def _v5_compatible(build: Build) -> Build:
    """Drop what only edition 6 can say (build-layout, [mlx-noarch], Rust components, [tvm-ffi] without src)."""
    general = attrs.evolve(build.general, build_layout=None)
    framework = build.framework
    if isinstance(framework, MlxNoarch):
        framework = TorchNoarch(pyext=framework.pyext)
    if isinstance(framework, TvmFfi) and not framework.src:
        framework = attrs.evolve(framework, src=("binding.cpp",))
    kernels = {name: k for name, k in build.kernels.items() if not k.is_rust}
    return attrs.evolve(build, general=general, framework=framework, kernels=kernels)


def _as_edition_5(text: str) -> str:
    """Edition-6 text written by ``dumps`` as edition 5: ``backend`` tags, ``edition = 5``."""
    lines = []
    for line in text.splitlines():
        if line.startswith('language = "cpp-'):
            line = 'backend = "' + line[len('language = "cpp-') :]
        lines.append("edition = 5" if line == "edition = 6" else line)
    return "\n".join(lines) + "\n"


def _v4_compatible(build: Build) -> Build:
    """Drop what only editions 5 and 6 can say (kernel-depends, [general.tpu], per-backend stable ABI)."""
    build = _v5_compatible(build)
    g = build.general
    general = attrs.evolve(
        g,
        kernel_depends=(),
        tpu=None,
        cuda=g.cuda and attrs.evolve(g.cuda, kernel_depends=()),
        neuron=g.neuron and attrs.evolve(g.neuron, kernel_depends=()),
        xpu=g.xpu and attrs.evolve(g.xpu, kernel_depends=()),
    )
    framework = build.framework
    if isinstance(framework, Torch) and isinstance(framework.stable_abi, dict):
        framework = attrs.evolve(framework, stable_abi=None)
    return attrs.evolve(build, general=general, framework=framework)


def _v3_compatible(build: Build) -> Build:
    """Also drop what v3 cannot say: source, [torch] cxx-flags / stable-abi, [tvm-ffi] cxx-flags, noarch keys."""
    build = _v4_compatible(build)
    general = attrs.evolve(build.general, source=None)
    framework = build.framework
    if isinstance(framework, Torch):
        framework = attrs.evolve(framework, cxx_flags=None, stable_abi=None)
    elif isinstance(framework, TvmFfi):
        framework = attrs.evolve(framework, cxx_flags=None)
    else:
        framework = TorchNoarch()
    return attrs.evolve(build, general=general, framework=framework)


def _with_comments(lines: list[str], data: st.DataObject) -> tuple[str, list[str]]:
    """``lines`` with comments drawn onto their own lines and after values."""
    out, inserted = [], []
    for line in lines:
        if data.draw(st.booleans()):
            inserted.append("# " + data.draw(comment_text))
            out.append(inserted[-1])
        if line and data.draw(st.booleans()):
            inserted.append("# " + data.draw(comment_text))
            line += "  " + inserted[-1]
        out.append(line)
    text = "\n".join(out) + "\n"
    try:
        same = tomllib.loads(text) == tomllib.loads("\n".join(lines))
    except tomllib.TOMLDecodeError:
        same = False
    assume(same)  # a trailing comment may not land inside a multi-line value
    return text, inserted


def _check_migration(legacy: str, inserted: list[str], edition: int, build: Build) -> None:
    new, found = migrate_text(legacy)
    assert found == edition
    reread = parse(new)
    assert reread.edition == 6 and reread.build == build
    assert [c.rstrip() for c in scan(new).comments] == [c.rstrip() for c in inserted]
    # only insertions and in-place edits (`edition = 5` -> 6, `backend = "x"` -> `language = "cpp-x"`):
    # every original line is still there, in order
    new_lines = iter(new.splitlines())
    edited = (_as_edition_6_line(line) for line in legacy.splitlines())
    assert all(any(line == candidate for candidate in new_lines) for line in edited)


def _as_edition_6_line(line: str) -> str:
    if line.startswith('backend = "'):
        return 'language = "cpp-' + line[len('backend = "') :]
    return "edition = 6" + line[len("edition = 5") :] if line.startswith("edition = 5") else line


@SETTINGS
@given(builds.map(_v5_compatible), st.data())
def test_update_build_v5_keeps_every_comment_and_gives_edition_6(build: Build, data: st.DataObject) -> None:
    legacy, inserted = _with_comments(_as_edition_5(dumps(build)).splitlines(), data)
    assert parse(legacy).edition == 5
    _check_migration(legacy, inserted, 5, build)


@SETTINGS
@given(builds.map(_v4_compatible), st.data())
def test_update_build_v4_keeps_every_comment_and_gives_edition_6(build: Build, data: st.DataObject) -> None:
    lines = [line for line in _as_edition_5(dumps(build)).splitlines() if line != "edition = 5"]
    legacy, inserted = _with_comments(lines, data)
    assert parse(legacy).edition == 4
    _check_migration(legacy, inserted, 4, build)


@SETTINGS
@given(builds.map(_v3_compatible), st.data())
def test_update_build_v3_keeps_every_comment_and_gives_edition_6(build: Build, data: st.DataObject) -> None:
    drop = {"edition = 5", "[torch-noarch]"}
    if build.general.version == 1 and data.draw(st.booleans()):
        drop.add("version = 1")
    lines = [line for line in _as_edition_5(dumps(build)).splitlines() if line not in drop]
    legacy, inserted = _with_comments(lines, data)
    # a file that v3 allows may also be valid v4 (which is tried first); without a
    # framework table or without `version` it can only be v3
    edition = parse(legacy, allow_legacy=True).edition
    assert edition == 3 if isinstance(build.framework, TorchNoarch) or "version = 1" in drop else edition in (3, 4)
    _check_migration(legacy, inserted, edition, build)


def _value_paths(node: object, prefix: tuple = ()) -> list[tuple]:
    out = []
    if isinstance(node, dict):
        for key, value in node.items():
            out += [prefix + (key,), *_value_paths(value, prefix + (key,))]
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += [prefix + (index,), *_value_paths(value, prefix + (index,))]
    return out


@SETTINGS
@given(builds, st.data())
def test_every_value_has_a_position(build: Build, data: st.DataObject) -> None:
    """The position scanner finds every key and value tomllib finds, at the right place."""
    text, _ = _with_comments(dumps(build).splitlines(), data)
    doc = tomllib.loads(text)
    positions = scan(text)
    lines = text.splitlines()
    for path in _value_paths(doc):
        value = doc
        for part in path:
            value = value[part]
        if isinstance(value, dict) and path not in positions.values:
            assert path in positions.keys  # a [table] header
            continue
        line, column = positions.values[path]
        rest = lines[line - 1][column - 1 :]
        if isinstance(value, str):
            assert rest[0] in "\"'"
        elif isinstance(value, list):
            assert rest[0] == "["
        elif isinstance(value, dict):
            assert rest[0] == "{"
        else:
            assert tomllib.loads("v = " + rest.split(",")[0].split("]")[0].split("}")[0].split("#")[0])["v"] == value
