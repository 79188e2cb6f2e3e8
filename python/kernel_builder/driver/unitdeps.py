"""What each translation unit of a per-object build reads: its compile keyed by that alone.

    python -m kernel_builder.driver.units deps --plan PLAN --sources DIR --out OUT

The plan (``driver.plan``) knows each unit's command but not what it includes: it never
sees the sources' contents. This step does, once per variant, and writes ``OUT/deps.json``:
for each unit the compile that depends on nothing but what the unit reads, which Nix turns
into the unit's object derivation (nix/lib/builders/per-object.nix, at evaluation):

1. The unit is preprocessed with the plan's command (``-E``, with the compiler's own
   dependency output, ``-MD -MF``): the files it reads, each one of the kernel's sources, a
   file the plan generated (``include/registration.h``) or a file in a store path.
2. Its *canonical command* drops every include directory and prefix map that names a store
   path the unit reads nothing from (a torch-free unit then names no torch), puts the
   object at a fixed place (``@KERNEL_BUILDER_UNIT@/object.o``) in a scratch directory of
   a fixed name (``@KERNEL_BUILDER_UNIT@``, whatever the variant), leaves out CMake's
   dependency-file flags, and writes the per-build macros' value (the ops identifier,
   which carries the kernel's commit) as a constant, ``_kernel_builder_ops``.
3. That is measured, not assumed: the unit is preprocessed again with the canonical command
   in a directory holding only the files it read, and the two outputs must be identical,
   byte for byte. Where they differ only because of the ops identifier (the torch binding,
   which registers under ``TORCH_EXTENSION_NAME``), the real identifier stays; where they
   differ otherwise (``__has_include`` of a file not read), or the unit reads a file
   outside the kernel and the store, or it does not preprocess (an error the compile will
   report), the unit keeps the plan's whole command and inputs (``"exact": false``).

A CUDA unit is compiled with the CUDA compiler made from the CUDA wheels alone
(nix/toolchains/pinned/cuda-compiler.nix: one store path for every torch environment that pins
the same wheels) in place of the environment's CUDA home (``aliases``: home -> compiler)
where nvcc's programs (``bin/``, ``nvvm/``) and every file the unit reads through the home
are byte for byte the same in both, and the preprocessed output is the same with the home's
path written back: a torch-free CUDA unit then names nothing of any torch environment.

Macros other than the ops identifier, ``-O``, architectures, the C++ ABI and every other
flag stay as the plan has them: two units share an object only when their compile is the
same compile.
"""

from __future__ import annotations

import concurrent.futures
import os
import posixpath
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import attrs

from kernel_builder.driver.planfile import TOP, Plan, Unit

__all__ = ["CANONICAL_OPS", "UNIT_DIR", "UnitDeps", "canonical_command", "parse_depfile", "scan_plan", "store_root"]

UNIT_DIR = "@KERNEL_BUILDER_UNIT@"  # the object step's scratch directory, in every canonical command
CANONICAL_OPS = "_kernel_builder_ops"  # the ops identifier's value where a unit's output does not depend on it
STORE = "/nix/store/"
_INCLUDE_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter")
_MAP_FLAGS = ("-ffile-prefix-map=", "-fdebug-prefix-map=", "-fmacro-prefix-map=", "-fprofile-prefix-map=")
_XCOMPILER = "-Xcompiler="


@attrs.frozen
class UnitDeps:
    """One unit's compile as its object derivation has it (``deps.json``'s entries)."""

    source: str
    exact: bool  # False: the plan's whole command and inputs (a unit that could not be measured)
    reason: str  # why not exact ("" when it is)
    command: tuple[str, ...] = ()
    directory: str = ""
    kernel_files: tuple[str, ...] = ()  # relative to the kernel (the scratch's src/)
    generated: dict[str, str] = attrs.field(factory=dict)  # relative to the scratch directory -> text
    store_roots: tuple[str, ...] = ()  # /nix/store/<hash>-<name> the compile reads or names
    ops_id: bool = False  # the ops identifier reaches this unit (its output depends on it)


def store_root(path: str) -> str | None:
    """``/nix/store/<hash>-<name>`` of a path in the store (``None`` elsewhere)."""
    if not path.startswith(STORE):
        return None
    name = path[len(STORE):].split("/", 1)[0]
    return STORE + name if name else None


def parse_depfile(text: str) -> list[str]:
    """The prerequisites of a Make-style dependency file (GCC's and nvcc's ``-MD -MF``):
    continuation lines joined, ``\\ `` an escaped space, targets (``x:``) left out."""
    joined = text.replace("\\\n", " ")
    found: list[str] = []
    for line in joined.splitlines():
        target, sep, rest = line.partition(": ")
        if not sep:
            if line.rstrip().endswith(":"):
                continue  # a phony target line (-MP)
            rest = line
        word = ""
        i = 0
        while i < len(rest):
            char = rest[i]
            if char == "\\" and i + 1 < len(rest) and rest[i + 1] in " #$":
                word += rest[i + 1]
                i += 2
                continue
            if char.isspace():
                if word:
                    found.append(word)
                word = ""
            else:
                word += char
            i += 1
        if word:
            found.append(word)
    return found


def _expand_response_files(argv: Sequence[str], cwd: str) -> list[str]:
    """``@file`` and nvcc's ``--options-file file`` spliced in (CMake writes include lists there)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        path = None
        if arg.startswith("@") and len(arg) > 1:
            path = arg[1:]
        elif arg in ("--options-file", "-optf") and i + 1 < len(argv):
            path = argv[i + 1]
            i += 1
        if path is None:
            out.append(arg)
        else:
            full = path if os.path.isabs(path) else os.path.join(cwd, path)
            out += shlex.split(Path(full).read_text())
        i += 1
    return out


def _strip_outputs(argv: Sequence[str]) -> list[str]:
    """``argv`` without ``-c``, ``-o X`` and CMake's dependency-file flags."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if arg in ("-c", "-MD", "-MMD") or arg.startswith(("-MF", "-MT")) and len(arg) > 3:
            continue
        out.append(arg)
    return out


def _under(path: str, directory: str) -> bool:
    directory = directory.rstrip("/")
    return path == directory or path.startswith(directory + "/")


def _mapped_prefix(arg: str) -> str | None:
    """The old prefix of a prefix-map flag (plain or behind nvcc's ``-Xcompiler=``)."""
    flag = arg.removeprefix(_XCOMPILER)
    for name in _MAP_FLAGS:
        if flag.startswith(name):
            return flag[len(name):].split("=", 1)[0]
    return None


def canonical_command(
    argv: Sequence[str], *, scratch: str, unit_dir: str, reads: Sequence[str], ops_id: str, ops_value: str,
    aliases: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """The unit's command keyed by what it reads (``argv`` after response files: the plan's,
    with ``scratch`` where the plan's scratch directory is). Include directories and prefix
    maps in the store that no read file is under are dropped; ``scratch`` becomes
    ``unit_dir``; the ops identifier becomes ``ops_value``; each (old, new) path of
    ``aliases`` becomes new first (in the command and the files read); the output is
    ``unit_dir/object.o``."""
    swap = sorted(aliases, key=lambda pair: -len(pair[0]))

    def swapped(text: str) -> str:
        for old, new in swap:
            text = text.replace(old, new)
        return text

    reads = [swapped(p) for p in reads]
    roots = {store_root(p) for p in reads} - {None}
    out: list[str] = []
    args = [swapped(a) for a in _strip_outputs(argv)]
    i = 0
    while i < len(args):
        arg = args[i]
        directory = None
        taken = 1
        for flag in _INCLUDE_FLAGS:
            if arg == flag and i + 1 < len(args):
                directory, taken = args[i + 1], 2
            elif arg.startswith(flag) and arg != flag and not (flag == "-I" and arg.startswith(("-isystem", "-iquote", "-idirafter"))):
                directory = arg[len(flag):]
            if directory is not None:
                break
        if directory is not None and directory.startswith(STORE):
            norm = posixpath.normpath(directory)
            if not any(_under(posixpath.normpath(p), norm) for p in reads):
                i += taken
                continue
        prefix = _mapped_prefix(arg)
        if prefix is not None and prefix.startswith(STORE) and store_root(prefix) not in roots:
            i += 1
            continue
        out += args[i:i + taken]
        i += taken
    out = [a.replace(scratch, unit_dir).replace(ops_id, ops_value) for a in out]
    return [*out, "-o", f"{unit_dir}/object.o", "-c"]


def _is_nvcc(argv: Sequence[str]) -> bool:
    return posixpath.basename(argv[0]) == "nvcc"


def _preprocess(argv: Sequence[str], cwd: str, work: Path, tag: str, *, deps: bool = True) -> tuple[bytes, list[str]] | str:
    """Preprocess with ``argv`` (outputs stripped): (output, files read; none without
    ``deps``), or the error text."""
    base = _strip_outputs(argv)
    # the canonical commands end in "-c" after "-o": drop a trailing "-c" too
    base = [a for a in base if a != "-c"]
    out_file, dep_file = work / f"{tag}.i", work / f"{tag}.d"
    if _is_nvcc(base):
        # nvcc: -E writes the host compiler's preprocessed output; its dependency list
        # (-M: every file of the host and device passes) comes from a second run.
        runs = [[*base, "-E", "-o", str(out_file)], *([[*base, "-M", "-o", str(dep_file)]] if deps else [])]
    else:
        runs = [[*base, "-E", *(["-MD", "-MF", str(dep_file)] if deps else []), "-o", str(out_file)]]
    for cmd in runs:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"preprocessing failed (exit {done.returncode}): {(done.stderr or done.stdout)[-2000:]}"
    reads: list[str] = []
    for dep in parse_depfile(dep_file.read_text()) if deps else []:
        reads.append(posixpath.normpath(dep if posixpath.isabs(dep) else posixpath.join(cwd, dep)))
    return out_file.read_bytes(), sorted(set(reads))


def _lay_out(
    dest: Path, tree: Path, sources: Path, *, kernel_files: Sequence[str] | None, generated: dict[str, str] | None,
    replace: Sequence[tuple[str, str]] = (),
) -> None:
    """The scratch directory of one scan: the plan's whole tree and every source (``None``),
    or only the listed files (what the object step will have)."""
    if dest.exists():
        shutil.rmtree(dest)
    if kernel_files is None:
        _copy_tree(tree, dest, replace=replace)
        _copy_tree(sources, dest / "src")
        return
    for rel in kernel_files:
        target = dest / "src" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sources / rel, target)
    for rel, text in (generated or {}).items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def _copy_tree(origin: Path, dest: Path, *, replace: Sequence[tuple[str, str]] = ()) -> None:
    """``origin`` into ``dest`` (writable), each (old, new) of ``replace`` done in every file."""
    for root, _dirs, files in os.walk(origin):
        target = dest / Path(root).relative_to(origin)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            data = (Path(root) / name).read_bytes()
            for old, new in replace:
                data = data.replace(old.encode(), new.encode())
            (target / name).write_bytes(data)


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).read_bytes() == Path(b).read_bytes()
    except OSError:
        return False


def _same_tree(a: Path, b: Path) -> bool:
    """Every file under ``a`` is under ``b`` with the same bytes, and the other way round."""
    def files(root: Path) -> dict[str, Path]:
        return {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()} if root.is_dir() else {}
    left, right = files(a), files(b)
    return bool(left) and left.keys() == right.keys() and all(_same_file(str(left[k]), str(right[k])) for k in left)


def usable_aliases(aliases: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (home, compiler) pairs whose nvcc programs (``bin/``, ``nvvm/``) are the same
    files; with each, (the directory the home's ``include`` links to, ``/..``; compiler): the
    environment's ``nvidia/cu13``, which torch's CMake names too (GCC then finds CUDA's
    headers there, the same directory as nvcc's own ``-I``)."""
    found = []
    for old, new in aliases:
        if not (_same_tree(Path(old) / "bin", Path(new) / "bin") and _same_tree(Path(old) / "nvvm", Path(new) / "nvvm")):
            continue
        found.append((old, new))
        include = Path(old) / "include"
        if include.is_symlink():
            found.append((posixpath.dirname(os.path.realpath(include)), new))
    return found


def scan_unit(
    plan: Plan, unit: Unit, *, tree: Path, sources: Path, work: Path, aliases: Sequence[tuple[str, str]] = (),
    top: str = "/tmp",
) -> UnitDeps:
    """Measure one unit (see the module's docstring); ``work`` is this unit's own directory,
    ``top`` the build's temporary directory (the job's sandbox), where the plan has ``TOP``."""
    here = str(work / "unit")  # the unit's scratch directory while it is scanned
    scratch_token = plan.scratch

    def real(text: str) -> str:
        return text.replace(scratch_token, here).replace(TOP, top)

    def fallback(reason: str) -> UnitDeps:
        return UnitDeps(source=unit.source, exact=False, reason=reason)

    _lay_out(Path(here), tree, sources, kernel_files=None, generated=None, replace=((scratch_token, here), (TOP, top)))
    cwd = real(unit.directory)
    os.makedirs(cwd, exist_ok=True)
    try:
        argv = _expand_response_files([real(a) for a in unit.command], cwd)
    except OSError as exc:
        return fallback(f"cannot read a response file of its command: {exc}")
    full = _preprocess(argv, cwd, work, "full")
    if isinstance(full, str):
        return fallback(full)
    output, reads = full
    kernel_files, generated, roots, outside = [], {}, set(), []
    src = here + "/src"
    for path in reads:
        if _under(path, src):
            kernel_files.append(posixpath.relpath(path, src))
        elif _under(path, here):
            generated[posixpath.relpath(path, here)] = Path(path).read_text()
        elif (root := store_root(path)) is not None:
            roots.add(root)
        else:
            outside.append(path)
    if outside:
        return fallback(f"it reads files outside the kernel and the store: {', '.join(outside[:3])}")
    unit_cwd = cwd.replace(here, UNIT_DIR)
    # the homes the unit reads through or names, every file it reads there the compiler's too
    swaps = [(old, new) for old, new in aliases
             if (any(_under(p, old) for p in reads) or any(old in a for a in argv))
             and all(_same_file(p, new + p[len(old):]) for p in reads if _under(p, old))]
    attempts = [(swaps, CANONICAL_OPS, False), ([], CANONICAL_OPS, False), (swaps, plan.ops_id, True), ([], plan.ops_id, True)]
    for swap, value, per_build in (a for i, a in enumerate(attempts) if a[0] or i % 2):
        canonical = canonical_command(argv, scratch=here, unit_dir=UNIT_DIR, reads=reads, ops_id=plan.ops_id,
                                      ops_value=value, aliases=swap)
        _lay_out(Path(here), tree, sources, kernel_files=kernel_files, generated=generated)
        os.makedirs(cwd, exist_ok=True)
        again = _preprocess([a.replace(UNIT_DIR, here) for a in canonical], cwd, work, "canonical", deps=False)
        if isinstance(again, str):
            continue
        text, expected = again[0], output
        for old, new in swap:  # the home's and the compiler's paths read alike
            text = text.replace(new.encode(), b"@CUDA@")
            expected = expected.replace(old.encode(), b"@CUDA@")
        if text == expected:
            named = {store_root(w) for a in canonical for w in _store_words(a)} - {None}
            swapped = set()
            for path in reads:  # the store paths of the files read, read where the command now reads them
                for old, new in sorted(swap, key=lambda pair: -len(pair[0])):
                    path = path.replace(old, new)
                swapped.add(store_root(path))
            swapped -= {None}
            return UnitDeps(
                source=unit.source, exact=True, reason="", command=tuple(canonical), directory=unit_cwd,
                kernel_files=tuple(sorted(kernel_files)), generated=dict(sorted(generated.items())),
                store_roots=tuple(sorted(swapped | named)), ops_id=per_build,
            )
    return fallback("its preprocessed output changes when only the files it reads are there")


def _store_words(arg: str) -> list[str]:
    """Every ``/nix/store/...`` path inside one argument (``-ccbin=/nix/store/...``, ``-Xcompiler=-I/nix/...``)."""
    found = []
    start = arg.find(STORE)
    while start != -1:
        end = start + len(STORE)
        while end < len(arg) and arg[end] not in " =,:;\"'":
            end += 1
        found.append(arg[start:end])
        start = arg.find(STORE, end)
    return found


def scan_plan(
    plan_dir: Path, sources: Path, *, work: Path, jobs: int = 1, aliases: Sequence[tuple[str, str]] = (),
    only: str | None = None, top: str = "/tmp",
) -> dict[str, UnitDeps]:
    """Every unit of the plan in ``plan_dir``, measured over the kernel files in ``sources``;
    ``aliases``: (CUDA home, CUDA compiler) store paths (see the module's docstring)."""
    plan = Plan.from_json((plan_dir / "plan.json").read_text())
    aliases = usable_aliases(aliases)
    work.mkdir(parents=True, exist_ok=True)

    def one(pair: tuple[int, Unit]) -> UnitDeps:
        index, unit = pair
        directory = work / f"u{index}"
        directory.mkdir(parents=True, exist_ok=True)
        try:
            return scan_unit(plan, unit, tree=plan_dir / "tree", sources=sources, work=directory, aliases=aliases, top=top)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        found = list(pool.map(one, [(i, u) for i, u in enumerate(plan.units) if only is None or u.source == only]))
    return {d.source: d for d in found}
