"""Reading a parsed build.toml (plain dicts from ``tomllib``) into the model.

One reader serves editions 3, 4, 5 and 6: each section is a table of ``Field`` specs, and
the edition decides which fields exist (edition 6 tags a component with ``language``
where older editions have ``backend``). The walker checks every key of every table,
records each problem with its key path and keeps going, so a file with five mistakes
gets five messages. Value types (names, versions, URLs, backends) are checked by the
same parse functions the model uses.

Why not cattrs structuring: its detailed validation gives key paths but not TOML
line:column, and the schema changes with the edition and with each kernel's
``backend`` or ``language`` tag. So structuring is this small walker; unstructuring (``--json``,
``dumps``) uses cattrs (see ``writer.py``).
"""

from __future__ import annotations

import enum
import os
import posixpath
from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

import attrs

from kernel_builder._repr import fields_repr
from kernel_builder.ids import RepoId
from kernel_builder.config.model import (
    FRAMEWORK_KEYS,
    KERNEL_BACKENDS,
    RUST_MIN_TILEIRAS,
    Backend,
    Build,
    BuildLayout,
    CURRENT_EDITION,
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
    validate_branch_name,
    validate_kernel_name,
)
from kernel_builder.config.positions import Path
from kernel_builder.config.problems import Problems, describe

__all__ = ["ReadOptions", "read_build"]

_U64_MAX = 2**64 - 1


class _Invalid:
    def __repr__(self) -> str:
        return "INVALID"


INVALID: Any = _Invalid()


@attrs.frozen(eq=False, slots=False)
class ReadOptions:
    """How to read: the edition's schema, whether to check the dependency registry,
    whether this read migrates a legacy file (so v3 needs a license), and the kernel
    directory that source paths must exist in (``None``: check their form only)."""
    __repr__ = fields_repr

    edition: int
    check_registry: bool = True
    migrate: bool = False
    root: FsPath | None = None


@attrs.define(eq=False)
class _Ctx:
    __repr__ = fields_repr

    options: ReadOptions
    problems: Problems
    warnings: Problems
    framework: str | None = None  # the document's framework table, when it has exactly one


Reader = Callable[[_Ctx, Any, Path], Any]


@attrs.frozen(eq=False, slots=False)
class Field:
    __repr__ = fields_repr

    key: str
    attr: str
    read: Reader
    required: bool = False


def _field(key: str, read: Reader, required: bool = False, attr: str | None = None) -> Field:
    return Field(key, attr or key.replace("-", "_"), read, required)


# ---------------------------------------------------------------- value readers


def read_str(ctx: _Ctx, value: Any, path: Path) -> Any:
    if not isinstance(value, str):
        ctx.problems.add(path, f"expected a string, got {describe(value)}")
        return INVALID
    return value


def read_uint(ctx: _Ctx, value: Any, path: Path) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        ctx.problems.add(path, f"expected a non-negative integer, got {describe(value)}")
        return INVALID
    if value < 0 or value > _U64_MAX:
        ctx.problems.add(path, f"expected a non-negative integer, got {value}")
        return INVALID
    return value


def _list_of(item: Reader) -> Reader:
    def read(ctx: _Ctx, value: Any, path: Path) -> Any:
        if not isinstance(value, list):
            ctx.problems.add(path, f"expected an array, got {describe(value)}")
            return INVALID
        items = [item(ctx, v, path + (i,)) for i, v in enumerate(value)]
        return INVALID if any(v is INVALID for v in items) else tuple(items)

    return read


read_str_list = _list_of(read_str)


def _parsed(parse: Callable[[str], Any], what: str) -> Reader:
    """A reader for a string value type whose ``parse`` raises ``ValueError``."""

    def read(ctx: _Ctx, value: Any, path: Path) -> Any:
        if not isinstance(value, str):
            ctx.problems.add(path, f"expected {what} string, got {describe(value)}")
            return INVALID
        try:
            return parse(value)
        except ValueError as exc:
            ctx.problems.add(path, str(exc))
            return INVALID

    return read


def _source_path(kind: str) -> Reader:
    """A path relative to the kernel directory naming a ``kind`` ("file", "directory", or
    "file or directory": a Rust component's ``src`` may list a crate's directories).

    It may not be absolute or climb out with ``..``; with a root, it must exist, be of
    that kind and stay inside the root after symlinks are resolved. Builds copy and hash
    what these name, so a path outside the kernel reads (or writes) outside it.
    """
    hint = "build.toml names files and directories relative to its own directory"

    def read(ctx: _Ctx, value: Any, path: Path) -> Any:
        if not isinstance(value, str):
            ctx.problems.add(path, f"expected a relative {kind} path string, got {describe(value)}")
            return INVALID
        shown = describe(value)
        if not value or "\0" in value:
            ctx.problems.add(path, f"expected a relative {kind} path, got {shown}")
            return INVALID
        if posixpath.isabs(value) or os.path.isabs(value) or value.startswith("~"):
            ctx.problems.add(path, f"{shown} is an absolute path; {hint}")
            return INVALID
        normal = posixpath.normpath(value)
        if normal == ".." or normal.startswith("../"):
            ctx.problems.add(path, f"{shown} leads outside the kernel directory; {hint}")
            return INVALID
        root = ctx.options.root
        if root is None:
            return value
        try:
            full = root / value
            real_root = os.path.realpath(root)
            real = os.path.realpath(full)
            inside = os.path.commonpath([real_root, real]) == real_root
            exists, is_dir, is_file = full.exists(), full.is_dir(), full.is_file()
        except (OSError, ValueError) as exc:
            ctx.problems.add(path, f"{shown} cannot be checked: {exc}")
            return INVALID
        if not inside:
            ctx.problems.add(path, f"{shown} resolves to {real}, outside the kernel directory (through a symlink); {hint}")
        elif not exists:
            ctx.problems.add(path, f"{shown} does not exist (looked for {full})")
        elif kind == "file or directory" and not (is_file or is_dir):
            ctx.problems.add(path, f"{shown} is neither a file nor a directory")
        elif kind == "file" and not is_file:
            what = "a directory" if is_dir else "not a regular file"
            ctx.problems.add(path, f"{shown} is {what}, expected a file; list directories under `include`")
        elif kind == "directory" and not is_dir:
            ctx.problems.add(path, f"{shown} is not a directory; list header directories here and files under `src`")
        else:
            return value
        return INVALID

    return read


read_src = _list_of(_source_path("file"))
read_rust_src = _list_of(_source_path("file or directory"))
read_include = _list_of(_source_path("directory"))
read_file_path = _source_path("file")


def _major_minor(text: str) -> Version:
    """build.toml versions are exactly ``major.minor`` (as the reference parser insists)."""
    count = len(text.strip().split("."))
    if text.strip() and count != 2:
        raise ValueError(f'expected a major.minor version such as "2.12", got {text!r} ({count} component{"s" if count != 1 else ""})')
    return Version.parse(text)


def _member(kind: type[enum.Enum], what: str) -> Callable[[str], Any]:
    """``kind(text)`` exactly as written, else a ``ValueError`` listing the valid values."""

    def parse(text: str) -> Any:
        try:
            return kind(text)
        except ValueError:
            valid = ", ".join(m.value for m in kind)
            raise ValueError(f"unknown {what} {text!r}; expected one of {valid}") from None

    return parse


read_version = _parsed(_major_minor, 'a version (e.g. "2.12")')
read_git_url = _parsed(GitUrl.parse, "a git URL")
read_name = _parsed(validate_kernel_name, "a kernel name")
read_branch = _parsed(validate_branch_name, "a branch name")
# Backends are lowercase in build.toml (the CLI is the case-insensitive place).
read_backend = _parsed(_member(Backend, "backend"), "a backend")
read_backends = _list_of(read_backend)
read_cpp_deps = _list_of(_parsed(_member(CppDependency, "C++ dependency"), "a dependency name"))
read_language = _parsed(_member(Language, "language"), "a language")
read_build_layout = _parsed(_member(BuildLayout, "build layout"), "a build layout")


def _python_deps(backend: Backend | None) -> Reader:
    def check(ctx: _Ctx, value: Any, path: Path) -> Any:
        name = read_str(ctx, value, path)
        if name is INVALID or not ctx.options.check_registry:
            return name
        from kernel_builder.config.registry import registry  # lazy: only a kernel with python-depends reads the registry

        problem = registry().problem(name, backend)
        if problem:
            ctx.problems.add(path, problem)
            return INVALID
        return name

    return _list_of(check)


def read_repo_id(ctx: _Ctx, value: Any, path: Path) -> Any:
    """A Hub repository id, by the one rule of ``kernel_builder.ids.RepoId``."""
    text = read_str(ctx, value, path)
    if text is INVALID:
        return INVALID
    try:
        RepoId.parse(text)
    except ValueError as exc:
        ctx.problems.add(path, str(exc))
        return INVALID
    return text


def read_kernel_dep(ctx: _Ctx, value: Any, path: Path) -> Any:
    fields = [_field("repo-id", read_repo_id, required=True), _field("version", read_uint), _field("revision", read_str)]
    kwargs = read_table(ctx, value, path, fields)
    if kwargs is INVALID:
        return INVALID
    has_version, has_revision = "version" in kwargs, "revision" in kwargs
    if has_version == has_revision:
        why = "both" if has_version else "neither"
        ctx.problems.add(path, f"a kernel dependency needs exactly one of `version` or `revision` (found {why})")
        return INVALID
    return KernelDependency(**kwargs)


read_kernel_deps = _list_of(read_kernel_dep)


def read_stable_abi(ctx: _Ctx, value: Any, path: Path) -> Any:
    """A version for every backend, or (edition 5) a table of backend -> version."""
    if isinstance(value, str) or ctx.options.edition < 5:
        return read_version(ctx, value, path)
    if not isinstance(value, dict):
        ctx.problems.add(path, f"expected a version string or a table of backend = version, got {describe(value)}")
        return INVALID
    out: dict[Backend, Version] = {}
    ok = True
    for key, item in value.items():
        backend = read_backend(ctx, key, path + (key,))
        version = read_version(ctx, item, path + (key,))
        if backend is INVALID or version is INVALID:
            ok = False
        else:
            out[backend] = version
    return out if ok else INVALID


# ---------------------------------------------------------------- tables


def read_table(ctx: _Ctx, value: Any, path: Path, fields: list[Field], what: str = "a table") -> Any:
    """Check a table against ``fields``: unknown, missing and bad keys are all reported.

    Returns the keyword arguments for the model class, or ``INVALID``.
    """
    if not isinstance(value, dict):
        ctx.problems.add(path, f"expected {what}, got {describe(value)}")
        return INVALID
    by_key = {f.key: f for f in fields}
    ok = True
    for key in value:
        if key not in by_key:
            expected = ", ".join(dict.fromkeys(f.key for f in fields))
            ctx.problems.add(path + (key,), f"unknown key; expected one of: {expected}", at="key")
            ok = False
    out: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for field in fields:
        if field.key not in value:
            if field.required and field.attr not in seen:
                ctx.problems.add(path + (field.key,), f"missing required key `{field.key}`", at="key")
                ok = False
            continue
        if field.attr in seen:  # two spellings of one key
            ctx.problems.add(path + (field.key,), f"`{field.key}` and `{seen[field.attr]}` are the same key; keep one", at="key")
            ok = False
            continue
        seen[field.attr] = field.key
        result = field.read(ctx, value[field.key], path + (field.key,))
        if result is INVALID:
            ok = False
        else:
            out[field.attr] = result
    return out if ok else INVALID


def _section(cls: type, fields: Callable[[_Ctx], list[Field]]) -> Reader:
    def read(ctx: _Ctx, value: Any, path: Path) -> Any:
        kwargs = read_table(ctx, value, path, fields(ctx))
        return INVALID if kwargs is INVALID else cls(**kwargs)

    return read


def _v5(ctx: _Ctx) -> bool:
    return ctx.options.edition >= 5


def _backend_fields(backend: Backend, kernel_deps: bool) -> Callable[[_Ctx], list[Field]]:
    def fields(ctx: _Ctx) -> list[Field]:
        out = []
        if backend is Backend.CUDA:
            out += [_field("minver", read_version), _field("maxver", read_version)]
        if kernel_deps and _v5(ctx):
            out.append(_field("kernel-depends", read_kernel_deps))
        out.append(_field("python-depends", _python_deps(backend)))
        return out

    return fields


read_hub = _section(Hub, lambda ctx: [_field("repo-id", read_repo_id), _field("branch", read_branch)])
read_cuda = _section(CudaGeneral, _backend_fields(Backend.CUDA, True))
read_neuron = _section(NeuronGeneral, _backend_fields(Backend.NEURON, True))
read_tpu = _section(TpuGeneral, _backend_fields(Backend.TPU, False))
read_xpu = _section(XpuGeneral, _backend_fields(Backend.XPU, True))


def read_edition(ctx: _Ctx, value: Any, path: Path) -> Any:
    expected = ctx.options.edition
    if type(value) is not int or value != expected:
        ctx.problems.add(path, f"expected {expected}, got {describe(value)}")
        return INVALID
    return value


def general_fields(ctx: _Ctx) -> list[Field]:
    edition = ctx.options.edition
    fields = [
        _field("name", read_name, required=True),
        _field("version", read_uint, required=edition >= 4),
    ]
    if edition >= 5:
        fields.append(_field("edition", read_edition, required=True))
    fields += [_field("license", read_str, required=edition >= 4), _field("upstream", read_git_url)]
    if edition >= 4:
        fields.append(_field("source", read_git_url))
    fields.append(_field("backends", read_backends, required=True))
    if edition >= 6:
        fields.append(_field("build-layout", read_build_layout))
    fields.append(_field("python-depends", _python_deps(None)))
    if edition >= 5:
        fields.append(_field("kernel-depends", read_kernel_deps))
    fields += [_field("hub", read_hub), _field("cuda", read_cuda), _field("neuron", read_neuron)]
    if edition >= 5:
        fields.append(_field("tpu", read_tpu))
    fields.append(_field("xpu", read_xpu))
    return fields


def _current_key(ctx: _Ctx, kwargs: dict[str, Any], path: Path, key: str, fix: str, default: Any) -> bool:
    """A key edition 3 may leave out: default it, or report it when migrating to the current edition.

    False when it was reported (the table is then invalid).
    """
    if key in kwargs:
        return True
    if ctx.options.migrate:
        ctx.problems.add(path + (key,), f"missing required key `{key}` (edition {CURRENT_EDITION} needs it): {fix}", at="key")
        return False
    kwargs[key] = default
    return True


def read_general(ctx: _Ctx, value: Any, path: Path) -> Any:
    kwargs = read_table(ctx, value, path, general_fields(ctx))
    if kwargs is INVALID:
        return INVALID
    kwargs.pop("edition", None)
    if ctx.options.edition == 3:
        kwargs.setdefault("version", 1)
        if not _current_key(ctx, kwargs, path, "license", 'add e.g. license = "Apache-2.0"', ""):
            return INVALID
    return General(**kwargs)


def _torch_fields(ctx: _Ctx) -> list[Field]:
    fields = [
        _field("src", read_src),
        _field("include", read_include),
        _field("pyext", read_str_list),
        _field("minver", read_version),
        _field("maxver", read_version),
    ]
    if ctx.options.edition >= 4:
        fields += [_field("cxx-flags", read_str_list), _field("stable-abi", read_stable_abi)]
    return fields


def _noarch_fields(ctx: _Ctx) -> list[Field]:
    # The reference parser only knows the snake spellings; the documented ones are kebab.
    return [
        _field("pyext", read_str_list),
        _field("cuda-capabilities", read_str_list),
        _field("cuda_capabilities", read_str_list),
        _field("rocm-archs", read_str_list),
        _field("rocm_archs", read_str_list),
    ]


def _tvm_fields(ctx: _Ctx) -> list[Field]:
    # Editions 4 and 5 require `src`; 3 and 6 do not (a Rust component brings the binding).
    required = ctx.options.edition in (4, 5)
    fields = [_field("src", read_src, required=required), _field("include", read_include)]
    fields.append(_field("pyext", read_str_list))
    if ctx.options.edition >= 4:
        fields.append(_field("cxx-flags", read_str_list))
    return fields


def read_tvm_ffi(ctx: _Ctx, value: Any, path: Path) -> Any:
    kwargs = read_table(ctx, value, path, _tvm_fields(ctx))
    if kwargs is INVALID:
        return INVALID
    # v3 may leave `src` out; migrating it writes edition 6, which may too.
    kwargs.setdefault("src", ())
    return TvmFfi(**kwargs)


FRAMEWORK_READERS: dict[str, Reader] = {
    "torch": _section(Torch, _torch_fields),
    "torch-noarch": _section(TorchNoarch, _noarch_fields),
    "tvm-ffi": read_tvm_ffi,
    "mlx-noarch": _section(MlxNoarch, lambda ctx: [_field("pyext", read_str_list)]),
}


def frameworks_of(edition: int) -> tuple[str, ...]:
    """The framework tables an edition knows, in build.toml's spelling."""
    keys = ["torch", "tvm-ffi"]
    if edition >= 4:
        keys.insert(1, "torch-noarch")
    if edition >= 6:
        keys.append("mlx-noarch")
    return tuple(keys)

_KERNEL_EXTRA = {
    Backend.CUDA: [("cuda-capabilities", read_str_list), ("cuda-flags", read_str_list), ("cuda-minver", read_version)],
    Backend.ROCM: [("rocm-archs", read_str_list), ("hip-flags", read_str_list)],
    Backend.XPU: [("sycl-flags", read_str_list)],
}
# Edition 6's Rust components: the crate's sources and manifest, and per language a few keys.
_RUST_EXTRA = {
    Language.RUST_CPU: [],
    Language.RUST_CUDA_OXIDE: [_field("cuda-capabilities", read_str_list)],
    Language.RUST_CUTILE: [_field("tileiras-minver", read_version, required=True)],
}


def _tag(ctx: _Ctx, v: Any, p: Path) -> Any:
    return v  # `backend` / `language`: checked before the table


def _cpp_fields(tag: str, backend: Backend | None) -> list[Field]:
    fields = [
        _field(tag, _tag),
        _field("src", read_src, required=True),
        _field("depends", read_cpp_deps, required=True),
        _field("include", read_include),
        _field("cxx-flags", read_str_list),
    ]
    extras = _KERNEL_EXTRA.get(backend, []) if backend else [e for b in _KERNEL_EXTRA.values() for e in b]
    return fields + [_field(key, read) for key, read in extras]


def _rust_fields(language: Language) -> list[Field]:
    common = [
        _field("language", _tag),
        _field("src", read_rust_src, required=True),
        _field("cargo-manifest", read_file_path, required=True),
    ]
    return common + _RUST_EXTRA[language]


def _kernel_fields(edition: int, language: Language | None) -> list[Field]:
    """The keys of a component: by its backend (editions 3-5) or its language (6).

    An unknown tag gives every key some component may have, so that only keys no
    component knows are reported as unknown."""
    if edition < 6:
        return _cpp_fields("backend", language.backend if language else None)
    if language is None:
        fields = _cpp_fields("language", None) + [f for lang in _RUST_EXTRA for f in _rust_fields(lang)]
        return [attrs.evolve(f, required=False) for f in {f.key: f for f in fields}.values()]
    if language.is_rust:
        return _rust_fields(language)
    return _cpp_fields("language", language.backend)


def _read_tag(ctx: _Ctx, value: dict[str, Any], path: Path) -> Language | None:
    """The component's language: edition 6's ``language``, else C++ for its ``backend``."""
    edition6 = ctx.options.edition >= 6
    tag = "language" if edition6 else "backend"
    if tag not in value:
        fix = ""
        if edition6 and isinstance(value.get("backend"), str) and value["backend"] in {b.value for b in KERNEL_BACKENDS}:
            fix = f'; edition 6 names the language: write language = "cpp-{value["backend"]}" instead of backend = "{value["backend"]}"'
        ctx.problems.add(path + (tag,), f"missing required key `{tag}`{fix}", at="key")
        return None
    if edition6:
        language = read_language(ctx, value[tag], path + (tag,))
        return None if language is INVALID else language
    backend = read_backend(ctx, value[tag], path + (tag,))
    if backend is INVALID:
        return None
    if backend not in KERNEL_BACKENDS:
        valid = ", ".join(sorted(b.value for b in KERNEL_BACKENDS))
        ctx.problems.add(path + (tag,), f"kernels cannot target backend {backend.value}; expected one of {valid}")
        return None
    return Language.cpp_for(backend)


def _tileiras_minver(value: dict[str, Any]) -> Version | None:
    """The component's ``tileiras-minver`` when it is a well-formed version (a malformed one
    is reported by the table reader), read apart so that its minimum is checked even when
    another key of the table is wrong."""
    try:
        return _major_minor(value["tileiras-minver"])
    except (KeyError, ValueError, AttributeError, TypeError):
        return None


def read_kernel(ctx: _Ctx, value: Any, path: Path) -> Any:
    tag = "language" if ctx.options.edition >= 6 else "backend"
    if not isinstance(value, dict):
        ctx.problems.add(path, f"expected a table with a `{tag}` key, got {describe(value)}")
        return INVALID
    language = _read_tag(ctx, value, path)
    kwargs = read_table(ctx, value, path, _kernel_fields(ctx.options.edition, language))
    ok = kwargs is not INVALID and language is not None
    if language is not None and language.is_rust and ctx.framework not in (None, "tvm-ffi"):
        ctx.problems.add(
            path + ("language",),
            f"a Rust component ({language.value}) needs the [tvm-ffi] framework; this file has [{ctx.framework}]",
        )
        ok = False
    minver = _tileiras_minver(value) if language is Language.RUST_CUTILE else None
    if minver is not None and minver < RUST_MIN_TILEIRAS:
        ctx.problems.add(
            path + ("tileiras-minver",),
            f"{minver} is older than {RUST_MIN_TILEIRAS}, the first CUDA release with cuTile; use \"13.2\" or later",
        )
        ok = False
    if not ok:
        return INVALID
    kwargs.pop(tag, None)
    return Kernel(backend=language.backend, language=language, **kwargs)


def read_kernels(ctx: _Ctx, value: Any, path: Path) -> Any:
    if not isinstance(value, dict):
        ctx.problems.add(path, f"expected a table of [kernel.NAME] tables, got {describe(value)}")
        return INVALID
    kernels = {name: read_kernel(ctx, item, path + (name,)) for name, item in value.items()}
    return INVALID if any(k is INVALID for k in kernels.values()) else kernels


def read_build(doc: dict[str, Any], options: ReadOptions, problems: Problems, warnings: Problems) -> Build | None:
    """Read a whole document; problems go to ``problems``; ``None`` if there were any."""
    ctx = _Ctx(options, problems, warnings)
    known = frameworks_of(options.edition)
    frameworks = [k for k in FRAMEWORK_KEYS if k in doc and k in known]
    ctx.framework = frameworks[0] if len(frameworks) == 1 else None
    allowed = {"general", "kernel", *frameworks}
    for key in doc:
        if key not in allowed:
            names = ", ".join(known)
            later = " (an edition-6 table: set edition = 6)" if key == "mlx-noarch" else ""
            ctx.problems.add((key,), f"unknown table{later}; expected one of: general, {names}, kernel", at="key")
    general: Any = INVALID
    if "general" not in doc:
        ctx.problems.add(("general",), "missing required table [general]", at="key")
    else:
        general = read_general(ctx, doc["general"], ("general",))
    framework: Any = INVALID
    if not frameworks:
        if options.edition < 4:
            framework = TorchNoarch()
        else:
            tables = [f"[{k}]" for k in known]
            ctx.problems.add((), f"missing framework table: add one of {', '.join(tables[:-1])} or {tables[-1]}")
    elif len(frameworks) > 1:
        listed = " and ".join(f"[{k}]" for k in frameworks)
        for key in frameworks[1:]:
            ctx.problems.add((key,), f"only one framework table is allowed, found {listed}", at="key")
    else:
        framework = FRAMEWORK_READERS[frameworks[0]](ctx, doc[frameworks[0]], (frameworks[0],))
    kernels: Any = {}
    if "kernel" in doc:
        kernels = read_kernels(ctx, doc["kernel"], ("kernel",))
    if isinstance(framework, MlxNoarch) and general is not INVALID:
        for index, backend in enumerate(general.backends):
            if backend is not Backend.METAL:
                ctx.problems.add(("general", "backends", index), f"[mlx-noarch] kernels run on metal only, not {backend.value}")
    if problems or INVALID in (general, framework, kernels):
        return None
    build = Build(general=general, framework=framework, kernels=kernels)
    _warn(build, warnings, "language" if options.edition >= 6 else "backend")
    return build


def _warn(build: Build, warnings: Problems, tag: str) -> None:
    """Legal but suspicious settings: reported, never fatal. ``tag`` is the key that names a
    component's backend (``language`` in edition 6)."""
    backends = build.general.backends
    if not backends:
        warnings.add(("general", "backends"), "no backends listed: nothing will be built")
    seen: set[Backend] = set()
    for index, backend in enumerate(backends):
        if backend in seen:
            warnings.add(("general", "backends", index), f"backend {backend.value} is listed twice")
        seen.add(backend)
    for name, kernel in build.kernels.items():
        if kernel.backend not in seen:
            listed = ", ".join(b.value for b in backends) or "none"
            warnings.add(
                ("kernel", name, tag),
                f"backend {kernel.backend.value}{f' (of {kernel.language.value})' if tag == 'language' else ''} is not in "
                f"general.backends ({listed}); this component will not be built",
            )

