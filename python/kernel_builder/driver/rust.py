"""Rust components (edition 6 ``language = "rust-cpu"``): their crates, vendored, built by cargo.

A Rust component names its crate with ``cargo-manifest``; cargo builds it, as upstream's
builder does, with ``cargo rustc --release --locked --lib --crate-type staticlib``, and the
static library is linked whole into the tvm-ffi module (``<ops id>.so``), so the functions
the crate exports (``#[no_mangle] extern "C"`` ones a ``[tvm-ffi] src`` binding wraps, or
the ``__tvm_ffi_<name>`` symbols of tvm-ffi's Rust macros) are the module's.

Builds run offline (the Nix sandbox has no network, and crates.io is not a pinned
registry): every crate the build needs comes from the kernel's ``vendor/`` directory
beside ``Cargo.lock`` (the workspace root), in the layout ``cargo vendor`` writes (one
directory per crate with its ``.cargo-checksum.json``; Debian's ``librust-*-dev`` packages
install crates in that layout under ``/usr/share/cargo/registry``). Before cargo runs,
``check_vendored`` reads the manifests and ``Cargo.lock`` and names, at its line and
column, each dependency that is not vendored (cargo's own message would name neither file).

The toolchain is ``$KERNEL_BUILDER_RUST`` (a directory with ``bin/cargo`` and
``bin/rustc``: the pinned Rust in a Nix build), else ``cargo`` and ``rustc`` on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from kernel_builder.config.model import Backend, Build, Kernel, Language
from kernel_builder.config.positions import scan
from kernel_builder.config.problems import BuildTomlError, Problems
from kernel_builder.errors import BuildError

__all__ = [
    "ENV_VAR", "UNAVAILABLE", "VENDOR_DIR", "Crate", "RustToolchain", "build_components", "check_vendored", "crate_of",
    "locate", "unbuildable_reason",
]


def _log():  # lazy: list-variants reads this module's tables and must not import logging
    import logging

    return logging.getLogger(__name__)


ENV_VAR = "KERNEL_BUILDER_RUST"
VENDOR_DIR = "vendor"
_DEPENDENCY_TABLES = ("dependencies", "build-dependencies", "dev-dependencies")
_VENDOR_HINT = (
    "vendor every crate into vendor/ beside Cargo.lock (`cargo vendor` on a machine that reaches a registry, or "
    "Debian's librust-<crate>-dev: copy /usr/share/cargo/registry/<crate>-<version>), list vendor in the "
    "component's src, and run `cargo generate-lockfile --offline` against it; see docs/build-toml.md, \"Rust kernels\""
)


# Why the components of these languages are not built here: their compilers are in no
# registry the toolchain lock pins. nix/lib/pure/languages.nix (`unavailable`) has the same
# table for the Nix build's reason; tests/driver/test_rust.py compares the two.
UNAVAILABLE: dict[Language, str] = {
    Language.RUST_CUDA_OXIDE: (
        "it needs cuda-oxide's rustc codegen backend (rustc-codegen-cuda, published only on GitHub in drbh/cuda-oxide "
        "and built with the nightly Rust its rust-toolchain.toml names), which no registry the toolchain lock pins "
        "(Debian, PyPI) serves"
    ),
    Language.RUST_CUTILE: (
        "it needs NVIDIA's cuTile Rust crates (published on crates.io, which the pinned build cannot reach) and the "
        "tileiras compiler of CUDA >= 13.2, which the toolchain lock does not pin"
    ),
}


def unbuildable_reason(build: Build, backend: Backend | str, *, rust_pinned: bool = True) -> str | None:
    """Why ``backend``'s variants cannot be built here because of a Rust component (its
    language's compiler is missing, or the lock pins no Rust), or ``None``."""
    reasons = []
    for name, kernel in sorted(build.kernels_for(Backend(backend)).items()):
        if kernel.language in UNAVAILABLE:
            reasons.append(f"[kernel.{name}] is {kernel.language.value}: {UNAVAILABLE[kernel.language]}")
        elif kernel.is_rust and not rust_pinned:
            reasons.append(f"[kernel.{name}] is {kernel.language.value}, and the toolchain lock pins no Rust "
                           "(requests.debian.groups.rust)")
    return "; ".join(reasons) or None


@attrs.frozen
class RustToolchain:
    cargo: Path
    rustc: Path


def locate(environ: Mapping[str, str]) -> RustToolchain:
    """``$KERNEL_BUILDER_RUST`` if set, else ``cargo`` and ``rustc`` on PATH."""
    given = environ.get(ENV_VAR, "")
    if given:
        root = Path(given)
        found = RustToolchain(root / "bin" / "cargo", root / "bin" / "rustc")
        missing = [p for p in (found.cargo, found.rustc) if not p.is_file()]
        if missing:
            raise BuildError(f"${ENV_VAR}: {root} has no {', '.join(p.name for p in missing)} in bin/",
                             hint="point it at a Rust toolchain (the directory holding bin/cargo and bin/rustc)")
        return found
    search = environ.get("PATH", os.defpath)
    cargo, rustc = shutil.which("cargo", path=search), shutil.which("rustc", path=search)
    if cargo is None or rustc is None:
        raise BuildError(
            "this kernel has Rust components, and no Rust toolchain was found (cargo and rustc on PATH, or $KERNEL_BUILDER_RUST)",
            hint="build with Nix (the pinned toolchain brings Debian's rustc-web and cargo-web), or install Rust "
            "(Debian 12: `apt-get install rustc-web cargo-web`)",
        )
    return RustToolchain(Path(cargo), Path(rustc))


@attrs.frozen
class Crate:
    """One Rust component's crate inside the kernel directory ``source``."""

    component: str
    source: Path
    manifest: Path  # the component's cargo-manifest
    root: Path  # the workspace root: Cargo.lock and vendor/ live here
    lib_name: str  # the library target's name: lib<lib_name>.a

    @property
    def lock(self) -> Path:
        return self.root / "Cargo.lock"

    @property
    def vendor(self) -> Path:
        return self.root / VENDOR_DIR

    def rel(self, path: Path) -> str:
        return path.relative_to(self.source).as_posix() if path.is_relative_to(self.source) else str(path)


def _read_toml(path: Path, *, what: str, source: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BuildError(f"{what}: cannot read {path.relative_to(source) if path.is_relative_to(source) else path}: "
                         f"{exc.strerror}", hint="list it in the component's src") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise BuildError(f"{path.relative_to(source)}: {exc}", hint="fix the TOML syntax") from None


def crate_of(source: Path, name: str, kernel: Kernel) -> Crate:
    """The crate of component ``name`` (``[kernel.NAME]``), its workspace root and library name."""
    assert kernel.cargo_manifest is not None
    manifest = (source / kernel.cargo_manifest).resolve()
    what = f"[kernel.{name}] cargo-manifest"
    doc, _ = _read_toml(manifest, what=what, source=source)
    package = doc.get("package")
    if not isinstance(package, dict) or not isinstance(package.get("name"), str):
        raise BuildError(f"{what}: {kernel.cargo_manifest} has no [package] name: it is not a crate's manifest",
                         hint="name the Cargo.toml of the crate that builds the kernel's library (a workspace member)")
    lib = doc.get("lib") if isinstance(doc.get("lib"), dict) else {}
    lib_name = lib.get("name") if isinstance(lib.get("name"), str) else package["name"].replace("-", "_")
    root = manifest.parent
    for parent in manifest.parents:  # cargo's rule: the nearest manifest above with [workspace]
        if not parent.is_relative_to(source):
            break
        candidate = parent / "Cargo.toml"
        if parent != manifest.parent and candidate.is_file():
            outer, _ = _read_toml(candidate, what=what, source=source)
            if isinstance(outer.get("workspace"), dict):
                root = parent
                break
    return Crate(name, source, manifest, root, lib_name)


def _vendored(crate: Crate, problems: dict[str, Problems]) -> dict[str, set[str]]:
    """Package name -> the versions vendor/ holds."""
    found: dict[str, set[str]] = {}
    if not crate.vendor.is_dir():
        return found
    for entry in sorted(crate.vendor.iterdir()):
        manifest = entry / "Cargo.toml"
        if not manifest.is_file():
            continue
        try:
            package = tomllib.loads(manifest.read_text(encoding="utf-8")).get("package") or {}
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if isinstance(package.get("name"), str):
            found.setdefault(package["name"], set()).add(str(package.get("version", "")))
            if not (entry / ".cargo-checksum.json").is_file():
                rel = crate.rel(manifest)
                problems.setdefault(rel, Problems(rel)).add(
                    (), f"vendored crate {package['name']} has no .cargo-checksum.json beside it (cargo's directory "
                    "sources need one: `cargo vendor` writes it; for a hand-copied crate write {\"files\":{},\"package\":null})")
    return found


def _dependencies(doc: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    """(key path, dependency key, spec) of every dependency a manifest declares."""
    for table in _DEPENDENCY_TABLES:
        for key, spec in (doc.get(table) or {}).items():
            yield (table, key), key, spec
    for target, tables in (doc.get("target") or {}).items():
        for table in _DEPENDENCY_TABLES:
            for key, spec in ((tables or {}).get(table) or {}).items():
                yield ("target", target, table, key), key, spec


def check_vendored(crate: Crate) -> None:
    """Every registry crate the component's crate needs is in vendor/: the dependencies its
    manifest (and the manifests of its path dependencies in the kernel) declare, and the
    packages of Cargo.lock. Raises one located error listing every problem."""
    problems: dict[str, Problems] = {}
    vendored = _vendored(crate, problems)
    vendor_rel = crate.rel(crate.vendor)
    root_doc: dict[str, Any] = {}
    root_manifest = crate.root / "Cargo.toml"
    if root_manifest.is_file():
        root_doc, _ = _read_toml(root_manifest, what="the workspace manifest", source=crate.source)
    workspace_deps = ((root_doc.get("workspace") or {}).get("dependencies") or {}) if isinstance(root_doc.get("workspace"), dict) else {}
    seen: set[Path] = set()
    todo = [crate.manifest]
    while todo:
        manifest = todo.pop()
        if manifest in seen:
            continue
        seen.add(manifest)
        doc, text = _read_toml(manifest, what=f"[kernel.{crate.component}]", source=crate.source)
        rel = crate.rel(manifest)
        found = Problems(rel, scan(text))
        for path, key, spec in _dependencies(doc):
            if isinstance(spec, dict) and spec.get("workspace") is True:
                spec = workspace_deps.get(key, spec)
            if isinstance(spec, dict) and isinstance(spec.get("path"), str):
                target = (manifest.parent / spec["path"] / "Cargo.toml").resolve()
                if not target.is_relative_to(crate.source):
                    found.add(path, f"path dependency {key} is outside the kernel directory", at="key")
                elif target.is_file():
                    todo.append(target)
                continue
            if isinstance(spec, dict) and "git" in spec:
                found.add(path, f"crate {key} is a git dependency, which cannot be fetched in the build (no network); "
                          f"vendor it into {vendor_rel}/", at="key")
                continue
            name = spec.get("package", key) if isinstance(spec, dict) else key
            if name not in vendored:
                found.add(path, f"crate {name} is not vendored: {vendor_rel}/ has no {name} package "
                          "(the build runs offline and takes crates from there only)", at="key")
        if found:
            problems[rel] = found
    if not crate.lock.is_file():
        if problems:  # the manifests' problems first: they name what to vendor
            _raise(crate, problems)
        raise BuildError(
            f"[kernel.{crate.component}]: {crate.rel(crate.lock)} is missing: cargo builds the crate --locked, offline",
            hint="create it against the vendored crates: `cargo generate-lockfile --offline` (see docs/build-toml.md, \"Rust kernels\")",
        )
    lock_doc, lock_text = _read_toml(crate.lock, what=f"[kernel.{crate.component}]", source=crate.source)
    lock_rel = crate.rel(crate.lock)
    in_lock = Problems(lock_rel, scan(lock_text))
    for index, package in enumerate(lock_doc.get("package") or []):
        source = str(package.get("source", ""))
        name, version = str(package.get("name", "")), str(package.get("version", ""))
        if source.startswith("git+"):
            in_lock.add(("package", index, "name"), f"crate {name} {version} comes from git ({source}), which the build "
                        f"cannot fetch; vendor it into {vendor_rel}/")
        elif source and version not in vendored.get(name, ()):
            have = ", ".join(sorted(vendored.get(name, ()))) or "none"
            in_lock.add(("package", index, "name"), f"crate {name} {version} is not vendored ({vendor_rel}/ has "
                        f"{'version ' + have if name in vendored else 'no ' + name + ' package'})")
    if in_lock:
        problems.setdefault(lock_rel, in_lock)
    if problems:
        _raise(crate, problems)


def _raise(crate: Crate, problems: dict[str, Problems]) -> None:
    items = [p for collected in problems.values() for p in collected.items]
    raise BuildTomlError(
        ", ".join(problems), items, hint=_VENDOR_HINT,
        note=f"[kernel.{crate.component}]: the Rust build runs offline with the crates of {crate.rel(crate.vendor)}/ only",
    )


def _cargo_config(crate: Crate) -> str:
    vendor = str(crate.vendor).replace("\\", "\\\\").replace('"', '\\"')
    return (
        "# Written by kernel-builder: crates come from the kernel's vendor/ only, offline.\n"
        "[source.crates-io]\nreplace-with = \"kernel-vendor\"\n\n"
        f"[source.kernel-vendor]\ndirectory = \"{vendor}\"\n\n"
        "[net]\noffline = true\n"
    )


def build_staticlib(
    toolchain: RustToolchain, crate: Crate, work: Path, *, jobs: int | None = None, verbose: bool = False,
    prefix_maps: tuple[tuple[str, str], ...] = (),
) -> Path:
    """Build ``crate`` into ``work/target/release/lib<lib_name>.a`` with cargo; give back its path."""
    check_vendored(crate)
    home = work / "cargo-home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(_cargo_config(crate))
    target = work / "target"
    # Paths of this build (panic messages carry source file names) are mapped to fixed ones,
    # so the module holds no store or scratch path and is the same wherever it is built.
    remaps = [(str(crate.source), "/kernel-source"), (str(home), "/cargo-home"), *prefix_maps]
    env = {
        **os.environ,
        "CARGO_HOME": str(home),
        "RUSTC": str(toolchain.rustc),
        "CARGO_INCREMENTAL": "0",
        "CARGO_TERM_COLOR": "never",
        "RUSTFLAGS": " ".join(f"--remap-path-prefix={a}={b}" for a, b in remaps),
    }
    env.pop("RUSTC_WRAPPER", None)
    env.pop("CARGO_BUILD_TARGET", None)
    argv = [str(toolchain.cargo), "rustc", "--release", "--locked", "--offline", "--lib", "--crate-type", "staticlib",
            "--manifest-path", str(crate.manifest), "--target-dir", str(target)]
    if jobs:
        argv += ["-j", str(jobs)]
    if verbose:
        argv.append("-v")
    _log().info(f"[kernel.{crate.component}]: cargo builds {crate.rel(crate.manifest)} (library {crate.lib_name})")
    done = subprocess.run(argv, cwd=crate.root, env=env, capture_output=True, text=True, check=False)
    if verbose or done.returncode != 0:
        for line in done.stderr.splitlines():
            _log().info(f"cargo: {line}")
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-25:])
        raise BuildError(f"[kernel.{crate.component}]: cargo failed to build {crate.rel(crate.manifest)} "
                         f"(exit {done.returncode}):\n{tail}",
                         hint="run the same build by hand: `cargo build --offline` in the kernel directory")
    library = target / "release" / f"lib{crate.lib_name}.a"
    if not library.is_file():
        raise BuildError(f"[kernel.{crate.component}]: cargo built no {library.name} in {target / 'release'}",
                         hint="the crate's [lib] target must be the kernel's library")
    return library


def build_components(
    build: Build, backend: str, source: Path, work: Path, *, environ: Mapping[str, str], jobs: int | None = None,
    verbose: bool = False, prefix_maps: tuple[tuple[str, str], ...] = (),
) -> tuple[Path, ...]:
    """The static library of every Rust component of ``backend``, built in ``work``."""
    components = sorted(((n, k) for n, k in build.kernels_for(Backend(backend)).items() if k.is_rust), key=lambda c: c[0])
    if not components:
        return ()
    reason = unbuildable_reason(build, backend)
    if reason:
        raise BuildError(f"the {backend} variants are not built here: build.toml {reason}",
                         hint="build the kernel's other backends (`kernel-builder list-variants` says which are buildable here)")
    toolchain = locate(environ)
    return tuple(
        build_staticlib(toolchain, crate_of(source, name, kernel), work / name, jobs=jobs, verbose=verbose,
                        prefix_maps=prefix_maps)
        for name, kernel in components
    )
