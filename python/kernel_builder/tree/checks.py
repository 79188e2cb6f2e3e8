"""Checks on a built variant: layout, metadata, digest, ABI, RUNPATH, ops lint, import.

The build runs them on every variant before publishing it; ``kernel-builder check`` and
``upload`` run them on an existing tree. ``check_variant`` returns the warnings and raises
``CheckError`` listing every error it found, so one run shows all problems.

The manylinux_2_28 check is a warning by default, because the host toolchain links against
this machine's glibc (2.36 here: ``__libc_single_threaded@GLIBC_2.32``), which
manylinux_2_28 does not allow. ``strict_manylinux=True`` makes it an error: the pinned
(hermetic) toolchain sets it, since it links modules against glibc 2.28's symbol versions
(docs/nix.md) and only real uses of newer symbols (libstdc++'s, mostly) remain.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from kernel_builder.tree.digest import VariantScan, uncovered_files, validate_digest
from kernel_builder.errors import BuildError, CheckError
from kernel_builder.tree.layout import discover_variants
from kernel_builder.tree.metadata import Metadata
from kernel_builder.tree.opslint import lint_archive, lint_tree
from kernel_builder.tree import symbols, ziplayout
from kernel_builder.pyenv import probe_toolchain
from kernel_builder.variants.compat import importable
from kernel_builder.variants.host import Platform
from kernel_builder.variants.names import Kind, try_parse
from kernel_builder.variants.system import toolchain_system

__all__ = [
    "CheckReport",
    "check_variant",
    "check_tree",
    "failed_tree_error",
    "check_layout",
    "check_zip_layout",
    "check_abi",
    "check_runpath",
    "check_stable_abi_symbols",
    "import_check",
    "missing_module",
    "start_import_check",
    "PYTHON_ABI",
    "MANYLINUX",
]

PYTHON_ABI = "3.9"
MANYLINUX = "manylinux_2_28"
_ALWAYS_ALLOWED = frozenset({"metadata.json", "metadata.json.sigstore", symbols.FILE_NAME})
# Torch C++ namespaces whose symbols a stable-ABI module must not import.
_UNSTABLE_SYMBOL = re.compile(r"^(?:(?:typeinfo|vtable|VTT) for |typeinfo name for )?(?:c10|at|torch|caffe2)::")


@attrs.frozen
class CheckReport:
    """The outcome for one variant: ``errors`` empty means it passed."""

    variant: str
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # the public API the import check found (symbols.json's document); None when it did not run
    symbols: dict[str, Any] | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def ok(self) -> bool:
        return not self.errors

    def raise_for_errors(self) -> None:
        if self.errors:
            lines = "\n".join(f"  - {e}" for e in self.errors)
            raise CheckError(
                f"variant {self.variant} failed {len(self.errors)} check(s):\n{lines}",
                hint="see docs/build.md (\"What each check failure means\") for the fix of each",
            )


def check_layout(variant_dir: Path, metadata: Metadata | None, python_name: str | None, pyext: Iterable[str] | None) -> list[str]:
    """``__init__.py`` at the top, no nested package dir, nothing but expected files (in the
    zip layout: in ``<id>.zip``, with only metadata, symbols and the module beside it)."""
    if metadata is not None and metadata.build_layout == "zip":
        return check_zip_layout(variant_dir, metadata, python_name, pyext)
    errors = []
    if not (variant_dir / "__init__.py").is_file():
        errors.append("layout: __init__.py is missing at the top of the variant (the kernel's package files go there)")
    if python_name and (variant_dir / python_name).exists():
        errors.append(f"layout: nested {python_name}/ found; the package files must sit directly in the variant dir")
    ops_id = metadata.id if metadata else None
    allowed_ext = None if pyext is None else {e.lstrip(".") for e in pyext} | {"py"}
    for path in sorted(variant_dir.rglob("*")):
        rel = path.relative_to(variant_dir)
        if "__pycache__" in rel.parts or path.is_dir():
            continue
        name = rel.as_posix()
        if name in _ALWAYS_ALLOWED:
            continue
        if name.endswith(".so") or ".so." in name:
            if len(rel.parts) != 1 or ops_id is None or not name.startswith(ops_id + "."):
                errors.append(f"layout: unexpected shared library {name} (only {ops_id}.abi3.so belongs here)")
            continue
        if allowed_ext is not None and path.suffix.lstrip(".") not in allowed_ext:
            errors.append(f"layout: unexpected file {name} (extension not in pyext {sorted(allowed_ext)})")
        elif allowed_ext is None and path.suffix in (".o", ".a", ".ninja", ".cmake", ".log"):
            errors.append(f"layout: build byproduct {name} must not be shipped")
    return errors


def check_zip_layout(variant_dir: Path, metadata: Metadata, python_name: str | None, pyext: Iterable[str] | None) -> list[str]:
    """The zip layout (``tree.ziplayout``): ``<id>.zip`` holds the package, with
    ``__init__.py`` at its root; beside it only metadata.json (+ sigstore bundle),
    symbols.json and the compiled module."""
    name = ziplayout.archive_name(metadata.id)
    archive = variant_dir / name
    errors = []
    for path in sorted(variant_dir.iterdir()):
        if path.name in (name, "__pycache__") or path.name in _ALWAYS_ALLOWED:
            continue
        if path.is_file() and ziplayout.is_native_library(path.name):
            if not path.name.startswith(metadata.id + "."):
                errors.append(f"layout: unexpected shared library {path.name} (only {metadata.id}.abi3.so belongs here)")
            continue
        errors.append(f"layout: {path.name} is beside {name}; in the zip build layout the package's files belong "
                      "in the archive (only metadata.json, symbols.json and the compiled module stay beside it)")
    if not archive.is_file():
        return [f'layout: {name} is missing (metadata.json says "build-layout": "zip": the package goes there)', *errors]
    problems = ziplayout.archive_problems(archive)
    if problems:
        return [*(f"layout: {p}" for p in problems), *errors]
    names = ziplayout.file_names(archive)
    if "__init__.py" not in names:
        errors.append(f"layout: __init__.py is missing at the root of {name} (the kernel's package files go there)")
    if python_name and any(n.split("/", 1)[0] == python_name for n in names):
        errors.append(f"layout: nested {python_name}/ found in {name}; the package files must sit at the archive's root")
    allowed_ext = None if pyext is None else {e.lstrip(".") for e in pyext} | {"py"}
    for entry in sorted(names):
        if "__pycache__" in entry.split("/"):
            continue
        suffix = Path(entry).suffix
        if ziplayout.is_native_library(entry):
            errors.append(f"layout: {name} holds the shared library {entry}, which cannot be loaded from an archive "
                          "(the compiled module sits beside the archive)")
        elif allowed_ext is not None and suffix.lstrip(".") not in allowed_ext:
            errors.append(f"layout: unexpected file {name}/{entry} (extension not in pyext {sorted(allowed_ext)})")
        elif allowed_ext is None and suffix in (".o", ".a", ".ninja", ".cmake", ".log"):
            errors.append(f"layout: build byproduct {name}/{entry} must not be shipped")
    return errors


def check_runpath(library: Path) -> list[str]:
    readelf = shutil.which("readelf")
    if readelf is None:
        return []
    out = subprocess.run([readelf, "-d", str(library)], capture_output=True, text=True, check=False).stdout
    found = [line.strip() for line in out.splitlines() if "(RUNPATH)" in line or "(RPATH)" in line]
    return [f"runpath: {library.name} has {entry}; strip it (patchelf --remove-rpath)" for entry in found]


def check_stable_abi_symbols(library: Path) -> list[str]:
    """Undefined Torch C++ symbols in a module that claims the Torch stable ABI."""
    nm = shutil.which("nm")
    if nm is None:
        return ["stable ABI: `nm` (binutils) is needed to list the module's symbols"]
    out = subprocess.run([nm, "-D", "-C", "--undefined-only", str(library)], capture_output=True, text=True, check=False)
    bad = []
    for line in out.stdout.splitlines():
        symbol = line.strip().split(None, 1)[-1] if line.strip() else ""
        if _UNSTABLE_SYMBOL.match(symbol):
            bad.append(symbol)
    if not bad:
        return []
    listed = "; ".join(bad[:8]) + (f"; … {len(bad) - 8} more" if len(bad) > 8 else "")
    return [f"stable ABI: {library.name} uses Torch C++ symbols outside the stable ABI: {listed}"]


def manylinux_violations(library: Path) -> list[str]:
    """``symbol@VERSION`` for every symbol of ``library`` newer than manylinux_2_28 allows."""
    import kernel_abi_check  # lazy: the ABI checker (a compiled extension) loads only for arch variants

    found = kernel_abi_check.ObjectFile(str(library)).check_manylinux(MANYLINUX)
    return [f"{getattr(v, 'name', v)}@{getattr(v, 'dep', '')}_{getattr(v, 'version', '')}" for v in found]


def objects_using(build_dir: Path, symbols: list[str]) -> dict[str, list[str]]:
    """For each ``symbol@VERSION``, the object files under ``build_dir`` that reference it
    (``nm -u``), so a manylinux error can name the source that needs the newer glibc."""
    nm = shutil.which("nm")
    names = {s.split("@", 1)[0]: s for s in symbols}
    found: dict[str, list[str]] = {s: [] for s in symbols}
    if nm is None:
        return found
    for obj in sorted(build_dir.rglob("*.o")):
        done = subprocess.run([nm, "-u", str(obj)], capture_output=True, text=True, check=False)
        for line in done.stdout.splitlines():
            name = line.split()[-1] if line.strip() else ""
            if name in names:
                found[names[name]].append(obj.name)
    return found


def check_abi(library: Path, *, strict_manylinux: bool = False, stable_abi: bool = False) -> tuple[list[str], list[str]]:
    """(errors, warnings) from kernel-abi-check (abi3, manylinux) and the stable-ABI scan."""
    import kernel_abi_check  # lazy: as above

    errors: list[str] = []
    warnings: list[str] = []
    obj = kernel_abi_check.ObjectFile(str(library))
    for violation in obj.check_python_abi(PYTHON_ABI):
        errors.append(f"abi3: {library.name}: {violation} (the module must use only the Python {PYTHON_ABI} limited API)")
    manylinux = list(obj.check_manylinux(MANYLINUX))
    if manylinux:
        text = ", ".join(f"{getattr(v, 'name', v)}@{getattr(v, 'dep', '')}_{getattr(v, 'version', '')}" for v in manylinux)
        message = f"{MANYLINUX}: {library.name} needs newer symbols than {MANYLINUX} allows: {text}"
        if strict_manylinux:
            errors.append(message)
        else:
            warnings.append(
                message + " (expected with the host toolchain, whose glibc is newer than 2.28; "
                "a hermetic manylinux toolchain makes this an error)"
            )
    if stable_abi:
        errors.extend(check_stable_abi_symbols(library))
    return errors, warnings


# Imports torch first, then reads "<variant dir>\t<ops id>" from stdin: the build starts
# it before compiling so that torch's import time overlaps with the compiler. The paths in
# $KERNEL_BUILDER_IMPORT_PATH (the kernels loader's runtime dependencies and the kernel's
# python-depends, pinned), then those after argv[1] (start_import_check's extra_paths),
# come after the toolchain's own site-packages, which win. This interpreter reads them (and
# $KERNEL_BUILDER_KERNEL_DEPS) from the environment it is handed; the driver does not. Each is
# added as a site directory, so its .pth files count as they do in an installed
# environment (nvidia-cutlass-dsl's `cutlass` is only importable through its .pth).
_IMPORT_SCRIPT = r"""
import gc, importlib, importlib.util, json, os, site, sys, warnings
# No cyclic collection: the process lives for one import and ends with os._exit below, and
# the collector's passes over torch's import are a sixth of an emulated check (3.5 s of 23).
gc.disable()
warnings.simplefilter("ignore")
for entry in os.environ.get("KERNEL_BUILDER_IMPORT_PATH", "").split(os.pathsep) + sys.argv[2:]:
    if entry:
        site.addsitedir(entry)
import torch


# The variant's package as a loader of its layout imports it: its __init__.py, or with
# metadata.json's "build-layout": "zip" the archive <id>.zip (PyPI kernels 0.19's way:
# __init__ from the archive, submodules from the variant directory, then the archive);
# None when the variant has no package (the layout checks report why).
def package_spec(name, variant_dir):
    try:
        with open(os.path.join(variant_dir, "metadata.json"), encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        meta = {}
    if not isinstance(meta, dict) or meta.get("build-layout") != "zip":
        init = os.path.join(variant_dir, "__init__.py")
        if not os.path.isfile(init):
            return None
        return importlib.util.spec_from_file_location(name, init, submodule_search_locations=[variant_dir])
    import zipfile, zipimport
    from importlib import abc as loader_abc, machinery
    try:
        from importlib.resources.abc import TraversableResources
    except ImportError:  # Python < 3.11
        TraversableResources = loader_abc.TraversableResources
    archive = os.path.join(variant_dir, str(meta.get("id")) + ".zip")
    if not os.path.isfile(archive):
        return None

    class Resources(TraversableResources):
        def files(self):
            return zipfile.Path(archive)

    class ZipInit(loader_abc.Loader):
        def __init__(self):
            self.archive = zipimport.zipimporter(archive)
        def create_module(self, spec):
            return None
        def exec_module(self, module):
            exec(self.archive.get_code("__init__"), module.__dict__)
        def get_source(self, fullname):
            return self.archive.get_source("__init__")
        def get_data(self, data_path):
            return self.archive.get_data(data_path)
        def get_resource_reader(self, fullname):
            return Resources()

    spec = machinery.ModuleSpec(name, ZipInit(), origin=archive + "/__init__.py", is_package=True)
    spec.submodule_search_locations = [variant_dir, archive]
    spec.has_location = True
    return spec


path, ops_id, driver_stub = (sys.stdin.readline().rstrip("\n").split("\t") + [""])[:3]
if driver_stub:
    # A CUDA build's stand-in libcuda.so.1: where no driver is installed, a module that calls
    # the driver API (NEEDED libcuda.so.1) binds to it, found by its soname once loaded.
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        ctypes.CDLL(driver_stub)
# kernel-depends (nix/lib/builders/kernel-deps.nix): each locked dependency's variant is
# imported first and handed to `kernels.get_kernel_dep` for the kernel's import.
kernel_deps, deps_context = {}, None
deps_spec = json.loads(os.environ.get("KERNEL_BUILDER_KERNEL_DEPS") or "null")
for i, dep in enumerate((deps_spec or {}).get("kernels", [])):
    dep_name = "_kernel_dep_%d_%s" % (i, "".join(c if c.isalnum() else "_" for c in dep["repo-id"]))
    found = [spec for spec in (package_spec(dep_name, os.path.join(dep["path"], "build", v))
                               for v in deps_spec["variants"]) if spec is not None]
    if not found:
        sys.exit("kernel-depends: %s (%s) has none of the variants %s" % (dep["repo-id"], dep["path"], ", ".join(deps_spec["variants"])))
    dep_spec = found[0]
    kernel_deps[dep["repo-id"]] = importlib.util.module_from_spec(dep_spec)
    sys.modules[dep_name] = kernel_deps[dep["repo-id"]]
    dep_spec.loader.exec_module(kernel_deps[dep["repo-id"]])
if kernel_deps:
    for where in ("kernels._internals.deps", "kernels.deps"):  # kernels 0.19 / 0.17
        try:
            deps_context = importlib.import_module(where).use_kernel_deps(kernel_deps)
            break
        except (ImportError, AttributeError):
            pass
spec = package_spec(ops_id, path)
if spec is None:
    sys.exit("the variant has no package to import: no __init__.py (or, in the zip layout, no <id>.zip)")
module = importlib.util.module_from_spec(spec)
sys.modules[ops_id] = module
if deps_context is not None:
    with deps_context:
        spec.loader.exec_module(module)
else:
    spec.loader.exec_module(module)
ops_module = importlib.import_module(ops_id + "._ops")
ops = getattr(ops_module, "ops", None)
if type(ops).__module__.startswith("tvm_ffi"):
    # A tvm-ffi kernel: _ops opened its library with tvm_ffi.load_module. Its functions are
    # the library's __tvm_ffi_<name> exports that the loaded module really implements.
    import re
    with open(path + "/" + ops_id + ".so", "rb") as f:
        found = set(m.decode() for m in re.findall(rb"__tvm_ffi_([A-Za-z][A-Za-z0-9_]*)\0", f.read()))
    names = sorted(n for n in found if ops.implements_function(n))
    result = {"namespace": ops_id + " (tvm-ffi)", "ops": names}
else:
    namespace = ops_module.add_op_namespace_prefix("x")[: -len("::x")]
    names = sorted(n for n in torch._C._dispatch_get_all_op_names() if n.startswith(namespace + "::"))
    result = {"namespace": namespace, "ops": names}
# The public API for symbols.json, by kernel_builder/tree/symbols.py (its path is argv[1]).
spec = importlib.util.spec_from_file_location("_kernel_builder_symbols", sys.argv[1])
symbols = importlib.util.module_from_spec(spec)
spec.loader.exec_module(symbols)
result["symbols"] = symbols.describe(module)
print(json.dumps(result))
# Done: skip the interpreter's teardown (torch's takes 0.6 s, 1 s under qemu, per check).
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
"""


_PR_SET_THP_DISABLE = 41


def _huge_pages_off() -> Callable[[], None] | None:
    """A ``preexec_fn`` that turns transparent huge pages off for the import-check
    interpreter (inherited across exec); None off Linux.

    qemu-user asks for huge pages for its translated code, so each first touch zeroes
    2 MiB: under emulation that was 1.1-1.4 s of kernel time per ``import torch``, 0.3 s
    without (docs/nix.md, "Checks under emulation"). A native interpreter asks for none,
    so nothing changes for it. ``prctl`` is looked up here, before the fork: the child only
    calls it (no dlopen between fork and exec)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def turn_off() -> None:
        prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0)

    return turn_off


def start_import_check(
    python: str, *, extra_paths: Iterable[str] = (), environ: Mapping[str, str] | None = None,
) -> subprocess.Popen:
    """Start the import-check interpreter now (it imports torch and waits for a variant).
    ``extra_paths`` come after ``$KERNEL_BUILDER_IMPORT_PATH`` (a tvm-ffi kernel's tvm_ffi).
    ``environ`` is the environment it runs in, handed on whole (a variant build's job's;
    None: this process's, as for ``kernel-builder check``), without PYTHONPATH."""
    env = dict(os.environ if environ is None else environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    return subprocess.Popen(
        [python, "-c", _IMPORT_SCRIPT, symbols.__file__, *(p for p in extra_paths if p)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_huge_pages_off(),
    )


def import_check(
    variant_dir: Path, ops_id: str, python: str, *, require_ops: bool, started: subprocess.Popen | None = None,
    driver_stub: Path | None = None,
) -> tuple[list[str], list[str], dict[str, Any] | None]:
    """Import the variant as package ``ops_id`` in a fresh ``python``; (errors, registered ops,
    the public API as ``symbols.describe`` saw it in that interpreter, None on failure).
    ``driver_stub`` (a CUDA build's stub libcuda.so.1) is loaded first where the machine has
    no CUDA driver, so a module that calls the driver API imports."""
    proc = started or start_import_check(python)
    stdout, stderr = proc.communicate(f"{variant_dir}\t{ops_id}\t{driver_stub or ''}\n", timeout=600)
    if proc.returncode != 0:
        module = missing_module(stderr.splitlines())
        if module == "tvm_ffi":
            return [f"import: the variant is a tvm-ffi kernel and {python} cannot import tvm_ffi: install "
                    "apache-tvm-ffi into it, or put a site-packages directory holding tvm_ffi on "
                    f"$KERNEL_BUILDER_IMPORT_PATH:\n{stderr.strip()[-1500:]}"], [], None
        if module is not None:
            return [f"import: the variant imports module {module!r}, which {python} does not have (a Python package "
                    f"it needs is declared in build.toml's python-depends):\n{stderr.strip()[-1500:]}"], [], None
        hint = ("\n(the module calls the CUDA driver API and this machine has no driver, libcuda.so.1: "
                "import it on a machine with one; `kernel-builder build` checks it against a stub)"
                if driver_stub is None and "libcuda.so.1" in stderr else "")
        return [f"import: importing the variant with {python} failed:\n{stderr.strip()[-3000:]}{hint}"], [], None
    result = json.loads(stdout.strip().splitlines()[-1])
    if require_ops and not result["ops"]:
        return [f"import: the module imported but registered no ops in namespace {result['namespace']}"], [], None
    return [], result["ops"], result["symbols"]


_NO_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '(?P<name>[\w.]+)'")


def missing_module(lines: Iterable[str]) -> str | None:
    """The top-level module a failed import could not find (``ModuleNotFoundError``), if any."""
    for line in lines:
        found = _NO_MODULE.search(line)
        if found:
            return found["name"].split(".")[0]
    return None


def _importable(variant_name: str, python: str, platform: Platform | None = None) -> str | None:
    """``None`` if ``python``'s torch can import this variant, else why not
    (``variants.compat.importable`` against what ``python`` describes, on ``platform``:
    this machine unless ``python`` is another machine's, emulated)."""
    try:
        system = toolchain_system(probe_toolchain(python), platform)
    except BuildError:
        return f"{python} has no importable torch"
    parsed = try_parse(variant_name)
    if parsed is None:
        return None
    if parsed.kind is Kind.TVM_FFI:
        # the check imports the tvm_ffi the variant was built against (its import path), not the toolchain's
        system = attrs.evolve(system, tvm_ffi_version=parsed.version)
    return importable(parsed, system).reason


def _unsafe_entry(root: Path) -> str | None:
    """Why the variant's files may not be read at all (a symlink out of the variant, a FIFO,
    a device, a link loop: ``digest``'s file-set rule), found before any file is opened;
    the other checks would read them."""
    try:
        uncovered_files(root)
    except CheckError as exc:
        return exc.message
    return None


def _symbols_problems(root: Path) -> list[str]:
    """A symbols.json the variant has must be one PyPI ``kernels`` can read (a variant
    without one passes: older builds and builds without the import check have none)."""
    path = root / symbols.FILE_NAME
    if not path.is_file():
        return []
    try:
        symbols.read_symbols(path)
    except CheckError as exc:
        return [f"symbols: {exc.message}"]
    return []


def _stale_symbols(root: Path, api: dict[str, Any]) -> list[str]:
    """A saved symbols.json that is not what the import check just found: the digest says
    the file is the build's, so the checking torch (or Python) differs from the build's, or
    the module's API depends on the machine. A warning: describe-api shows the saved one."""
    path = root / symbols.FILE_NAME
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none, or one _symbols_problems reports
        return []
    if saved == api:
        return []
    differ = [
        group for group in ("functions", "layers")
        if [entry.get("name") for entry in saved.get(group, [])] != [entry["name"] for entry in api[group]]
    ]
    what = f"its {' and '.join(differ)} are not the module's" if differ else "its signatures, docs or layer attributes differ"
    return [f"symbols: {symbols.FILE_NAME} is not what importing the variant here finds ({what}); "
            "the build's torch saw another API (rebuild, or check with the build's toolchain)"]


def _uncovered(root: Path, scan: VariantScan | None) -> list[str]:
    """Files an upload would send that the digest does not cover (under a symlinked directory)."""
    try:
        uncovered = scan.uncovered() if scan is not None else uncovered_files(root)
    except CheckError as exc:  # a symlink loop
        return [exc.message]
    return [f"{rel} would be uploaded but the digest does not cover it (a symlinked directory?)" for rel in uncovered]


def check_variant(
    variant_dir: str | os.PathLike[str],
    *,
    python: str | None = None,
    pyext: Iterable[str] | None = None,
    python_name: str | None = None,
    strict_manylinux: bool = False,
    require_digest: bool = True,
    variant_name: str | None = None,
    import_process: subprocess.Popen | None = None,
    raise_errors: bool = True,
    scan: VariantScan | None = None,
    python_platform: Platform | None = None,
    driver_stub: Path | None = None,
) -> CheckReport:
    """Run every check on one variant; raise ``CheckError`` listing all errors (with
    ``raise_errors=False``: return the report, errors included).

    ``python`` enables the import check (skipped, with a note, when that torch cannot load
    the variant); ``pyext`` (from build.toml) enables the file-extension layout rule.
    ``variant_name`` defaults to the directory name (the build checks a staging dir);
    ``import_process`` is an interpreter from ``start_import_check`` to use (else one is
    started; an unused one is stopped). ``scan`` is the variant's files already read
    (``upload`` passes it so that the digest check reads nothing again).
    ``python_platform`` is the machine ``python`` runs as when it is not this one (a cross
    variant's import check, under qemu). ``driver_stub`` is a CUDA build's stub
    libcuda.so.1 for the import check (``import_check``).
    """
    root = Path(variant_dir)
    name = variant_name or root.name
    if scan is None and (unsafe := _unsafe_entry(root)) is not None:  # a scan judged every entry already
        if import_process is not None:
            import_process.kill()
            import_process.communicate()
        report = CheckReport(name, (f"files: {unsafe}",))
        if raise_errors:
            report.raise_for_errors()
        return report
    errors: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []
    api: dict[str, Any] | None = None
    metadata: Metadata | None = None
    try:
        metadata = Metadata.read(root / "metadata.json")
    except CheckError as exc:
        errors.append(f"metadata: {exc.message}")
    parsed = try_parse(name)
    if parsed is None:
        errors.append(f"name: {name!r} is not a variant name (e.g. torch213-cxx11-cpu-x86_64-linux or torch-cpu)")
    if metadata is not None:
        if metadata.unknown_keys:  # ignored by every reader (as kernels 0.19.1 does): a typo or a newer builder's
            warnings.append(f"metadata: metadata.json has keys kernel-builder does not know, which loaders ignore: "
                            f"{', '.join(metadata.unknown_keys)}")
        python_name = python_name or metadata.name.replace("-", "_")
        if parsed is not None and metadata.backend.type.value != parsed.backend:
            errors.append(f"metadata: backend.type is {metadata.backend.type.value} but the variant is {parsed.backend}")
        if metadata.digest is None:
            if require_digest:
                errors.append("digest: metadata.json has no digest (run `kernel-builder hash`)")
        else:
            actual = scan.digest() if scan is not None else None
            errors.extend(f"digest: {v}" for v in validate_digest(root, metadata.digest, actual=actual))
            errors.extend(f"digest: {problem}" for problem in _uncovered(root, scan))
    errors.extend(check_layout(root, metadata, python_name, pyext))
    errors.extend(_symbols_problems(root))
    errors.extend(f"ops lint: {v}" for v in lint_tree(root))
    if metadata is not None and metadata.build_layout == "zip":
        errors.extend(f"ops lint: {v}" for v in lint_archive(root / ziplayout.archive_name(metadata.id)))
    libraries = sorted(p for p in root.iterdir() if p.is_file() and p.name.endswith(".so"))
    is_arch = parsed is not None and parsed.kind is not Kind.NOARCH
    if is_arch and metadata is not None:
        # a tvm-ffi module is a plain library that tvm_ffi.load_module opens, not a Python extension
        module = f"{metadata.id}.so" if parsed is not None and parsed.kind is Kind.TVM_FFI else f"{metadata.id}.abi3.so"
        if not (root / module).is_file():
            errors.append(f"layout: {module} is missing (the compiled ops module)")
    for library in libraries:
        abi_errors, abi_warnings = check_abi(
            library, strict_manylinux=strict_manylinux, stable_abi=parsed is not None and parsed.kind is Kind.STABLE_ABI
        )
        errors.extend(abi_errors)
        warnings.extend(abi_warnings)
        errors.extend(check_runpath(library))
    if python is not None and metadata is not None and not errors:
        why_not = _importable(name, python, python_platform)
        if why_not is None:
            import_errors, ops, api = import_check(root, metadata.id, python, require_ops=is_arch,
                                                   started=import_process, driver_stub=driver_stub)
            import_process = None
            errors.extend(import_errors)
            if ops:
                notes.append(f"registered ops: {', '.join(ops)}")
            if api is not None:
                warnings.extend(_stale_symbols(root, api))
        else:
            notes.append(f"import check skipped: {why_not}")
    if import_process is not None:
        import_process.kill()
        import_process.communicate()
    report = CheckReport(name, tuple(errors), tuple(warnings), tuple(notes), symbols=api)
    if raise_errors:
        report.raise_for_errors()
    return report


def check_tree(
    build_dir: str | os.PathLike[str],
    *,
    python: str | Callable[[str], str] | None = None,
    strict_manylinux: bool = False,
    scans: Mapping[str, VariantScan] | None = None,
) -> list[CheckReport]:
    """Check every variant of a built tree (``DIR/result``, ``DIR/build`` or ``DIR``).

    ``python`` is the import-check interpreter, or a function from variant name to one;
    ``scans`` maps variant names to their files already read (``upload``'s).
    Returns one report per variant, failing ones included (``ok`` false, ``errors`` set);
    the caller decides what a failure means (``failed_tree_error`` gives the CLI's error).
    A tree that is not a build tree at all still raises ``CheckError``.
    """
    _, variants = discover_variants(build_dir)
    reports = []
    for variant in variants:
        interpreter = python(variant.name) if callable(python) else python
        scan = scans.get(variant.name) if scans is not None else None
        reports.append(
            check_variant(variant, python=interpreter, strict_manylinux=strict_manylinux, raise_errors=False, scan=scan)
        )
    return reports


def failed_tree_error(reports: Iterable[CheckReport]) -> CheckError | None:
    """One ``CheckError`` listing every failing variant's errors, or ``None`` when all passed."""
    failures = []
    for report in reports:
        if not report.ok:
            lines = "\n".join(f"  - {e}" for e in report.errors)
            failures.append(f"variant {report.variant} failed {len(report.errors)} check(s):\n{lines}")
    if not failures:
        return None
    return CheckError(
        "\n".join(failures),
        hint="see docs/build.md (\"What each check failure means\"); rebuild the failing variants",
    )
