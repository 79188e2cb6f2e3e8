"""Link stubs for an older glibc, generated from the symbol lists zig ships (run by
glibc-stubs-builder.sh with the pinned Python; standard library only).

usage: glibc-stubs.py ABILISTS TARGET VERSION OUTDIR

ABILISTS is zig's ``lib/libc/glibc/abilists`` (or the ``ziglang`` wheel holding it), TARGET
a zig target triple (``x86_64-linux-gnu``), VERSION the glibc to link against (``2.28``).
For each library of that glibc, OUTDIR gets ``<soname>.s`` (one labelled stub per exported
symbol, bound to its versions with ``.symver``) and ``<soname>.map`` (the version nodes),
which the builder assembles and links into a shared object with that soname. OUTDIR also
gets ``missing.txt``: ``symbol GLIBC_x.y`` for every symbol a later glibc exports (for
TARGET) that no library of VERSION has, with the version that first exported it; the
link wrapper turns a reference to one of them into a link error.

Why generate instead of linking against the sysroot's own libc.so.6: a module linked
against glibc 2.36 binds ``dlsym``, ``pthread_create``, ... to their GLIBC_2.34 versions
(they moved into libc), which manylinux_2_28 forbids. Linked against these stubs the same
references bind to the versions glibc 2.28 exports (GLIBC_2.2.5 in libdl/libpthread). The
stubs are never loaded: the module runs against the real glibc.

The abilists format (integers little-endian): u8 library count and NUL-terminated names;
u8 version count and (major, minor, patch) bytes; u8 target count and NUL-terminated
triples; then function inclusions and object inclusions, each a u16 count of inclusions.
An inclusion starts with its symbol's NUL-terminated name unless it continues the previous
symbol; then a uleb128 target bit set, for objects a uleb128 size, a library index byte
(bit 7: the symbol's last inclusion), and version index bytes (bit 7: the last one).
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

WHEEL_MEMBER = "ziglang/lib/libc/glibc/abilists"

# The soname of each glibc library zig lists, per architecture this toolchain targets.
SONAMES = {
    "x86_64-linux-gnu": {
        "c": "libc.so.6",
        "m": "libm.so.6",
        "ld": "ld-linux-x86-64.so.2",
        "pthread": "libpthread.so.0",
        "dl": "libdl.so.2",
        "rt": "librt.so.1",
        "util": "libutil.so.1",
        "resolv": "libresolv.so.2",
    },
    "aarch64-linux-gnu": {
        "c": "libc.so.6",
        "m": "libm.so.6",
        "ld": "ld-linux-aarch64.so.1",
        "pthread": "libpthread.so.0",
        "dl": "libdl.so.2",
        "rt": "librt.so.1",
        "util": "libutil.so.1",
        "resolv": "libresolv.so.2",
    },
}


class AbilistsError(Exception):
    """The file is not an abilists file this script understands."""


class Reader:
    """Sequential reads over the abilists bytes, with errors that say where."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise AbilistsError(f"truncated at byte {self.pos}")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def u16(self) -> int:
        return self.byte() | self.byte() << 8

    def uleb(self) -> int:
        value = shift = 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value

    def cstr(self) -> str:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise AbilistsError(f"unterminated name at byte {self.pos}")
        text = self.data[self.pos:end].decode("ascii")
        self.pos = end + 1
        return text


def parse(data: bytes) -> dict:
    """{libs, versions, targets, symbols}: ``symbols`` is a list of (name, kind, size,
    target bits, library index, version indices), kind ``"func"`` or ``"object"``."""
    r = Reader(data)
    libs = [r.cstr() for _ in range(r.byte())]
    versions = [(r.byte(), r.byte(), r.byte()) for _ in range(r.byte())]
    targets = [r.cstr() for _ in range(r.byte())]
    symbols = []
    for kind in ("func", "object"):
        name = None
        for _ in range(r.u16()):
            if name is None:
                name = r.cstr()
            bits = r.uleb()
            size = r.uleb() if kind == "object" else 0
            lib = r.byte()
            indices = []
            while True:
                v = r.byte()
                indices.append(v & 0x7F)
                if v & 0x80:
                    break
            if lib & 0x7F >= len(libs) or max(indices) >= len(versions):
                raise AbilistsError(f"symbol {name!r}: library or version index out of range")
            symbols.append((name, kind, size, bits, lib & 0x7F, tuple(indices)))
            if lib & 0x80:
                name = None
    # Newer files end with a (so far always empty) third list; refuse what we would drop.
    if r.pos < len(data) and r.u16() != 0:
        raise AbilistsError("has thread-local symbol inclusions, which this script does not generate")
    if r.pos != len(data):
        raise AbilistsError(f"{len(data) - r.pos} unexpected bytes at the end")
    return {"libs": libs, "versions": versions, "targets": targets, "symbols": symbols}


def version_name(version: tuple[int, int, int]) -> str:
    major, minor, patch = version
    return f"GLIBC_{major}.{minor}" + (f".{patch}" if patch else "")


def parse_version(text: str) -> tuple[int, int, int]:
    parts = [int(p) for p in text.split(".")]
    if not 2 <= len(parts) <= 3:
        raise ValueError(f"expected a glibc version like 2.28, got {text!r}")
    major, minor, patch = (parts + [0])[:3]
    return (major, minor, patch)


def select(abi: dict, target: str, version: tuple[int, int, int]) -> tuple[dict, dict]:
    """(per library: {symbol: (kind, size, [versions ascending])} for glibc ``version``,
    {symbol: first version} for symbols only later glibcs export)."""
    if target not in abi["targets"]:
        raise AbilistsError(f"target {target} is not listed (listed: {', '.join(abi['targets'])})")
    bit = 1 << abi["targets"].index(target)
    libs: dict[str, dict] = {}
    later: dict[str, tuple[int, int, int]] = {}
    for name, kind, size, bits, lib, indices in abi["symbols"]:
        if not bits & bit:
            continue
        versions = sorted(abi["versions"][i] for i in indices)
        old = [v for v in versions if v <= version]
        if old:
            entry = libs.setdefault(abi["libs"][lib], {}).setdefault(name, (kind, size, []))
            entry[2].extend(v for v in old if v not in entry[2])
            entry[2].sort()
        else:
            first = versions[0]
            later[name] = min(later.get(name, first), first)
    present = {name for symbols in libs.values() for name in symbols}
    return libs, {name: v for name, v in later.items() if name not in present}


def assembly(symbols: dict) -> str:
    """One stub per (symbol, version), bound with ``.symver``: the newest version is the
    default (``@@``, what new links bind to), older ones stay for completeness (``@``)."""
    lines = ["\t.section .note.GNU-stack,\"\",@progbits"]
    for n, (name, (kind, size, versions)) in enumerate(sorted(symbols.items())):
        for i, version in enumerate(versions):
            label = f"kb_stub_{n}_{i}"
            at = "@@" if i == len(versions) - 1 else "@"
            if kind == "func":
                lines += ["\t.text", f"\t.globl {label}", f"\t.type {label}, @function", f"{label}:", "\tret"]
            else:
                lines += ["\t.data", f"\t.globl {label}", f"\t.type {label}, @object", f"\t.size {label}, {size}",
                          f"\t.balign 8", f"{label}:", f"\t.zero {max(size, 1)}"]
            lines.append(f"\t.symver {label}, {name}{at}{version_name(version)}")
    return "\n".join(lines) + "\n"


def version_script(symbols: dict) -> str:
    """The version nodes, oldest first, each naming its symbols (the stub labels match
    only the ``local`` wildcard, so they stay out of the dynamic symbol table)."""
    nodes: dict[tuple[int, int, int], list[str]] = {}
    for name, (_, _, versions) in sorted(symbols.items()):
        for version in versions:
            nodes.setdefault(version, []).append(name)
    blocks = []
    for i, (node, names) in enumerate(sorted(nodes.items())):
        local = " local: *;" if i == 0 else ""
        blocks.append(f"{version_name(node)} {{ global: {' '.join(n + ';' for n in names)}{local} }};")
    return "\n".join(blocks) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    source, target, wanted, outdir = Path(argv[0]), argv[1], argv[2], Path(argv[3])
    if source.suffix == ".whl":
        with zipfile.ZipFile(source) as wheel:
            data = wheel.read(WHEEL_MEMBER)
    else:
        data = source.read_bytes()
    if target not in SONAMES:
        raise AbilistsError(f"no sonames known for {target} (known: {', '.join(SONAMES)})")
    libs, later = select(parse(data), target, parse_version(wanted))
    outdir.mkdir(parents=True, exist_ok=True)
    for lib, symbols in sorted(libs.items()):
        soname = SONAMES[target].get(lib)
        if soname is None:
            raise AbilistsError(f"library {lib!r} has no known soname for {target}")
        (outdir / f"{soname}.s").write_text(assembly(symbols))
        (outdir / f"{soname}.map").write_text(version_script(symbols))
    (outdir / "missing.txt").write_text("".join(f"{name} {version_name(v)}\n" for name, v in sorted(later.items())))
    print(f"glibc {wanted} for {target}: " + ", ".join(f"{SONAMES[target][lib]} ({len(s)})" for lib, s in sorted(libs.items()))
          + f"; {len(later)} later symbols")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (AbilistsError, ValueError, OSError, KeyError) as exc:
        print(f"glibc-stubs.py: error: {exc}", file=sys.stderr)
        sys.exit(1)
