"""nix/toolchains/pinned/glibc-stubs.py: zig's abilists read right, the symbols of one
glibc version picked right, and stubs that bind references to that version.

The fast tests encode small abilists files by hand (the format as documented by zig's
libc-abi-tools); the slow ones read the pinned ziglang wheel and build the pinned
``ccLink`` derivation (stubs + wrappers) in the sandbox.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.toolchain.pinned.lockfile import load_lock

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "nix" / "toolchains" / "pinned" / "glibc-stubs.py"
_spec = importlib.util.spec_from_file_location("glibc_stubs", SCRIPT)
stubs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stubs)

VERSIONS = [(2, 2, 5), (2, 14, 0), (2, 28, 0), (2, 30, 0), (2, 33, 0), (2, 34, 0)]
TARGETS = ["aarch64-linux-gnu", "x86_64-linux-gnu"]
X86 = 1 << 1
ARM = 1 << 0


def uleb(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        out.append(b | (0x80 if value else 0))
        if not value:
            return bytes(out)


def inclusions(symbols: list[tuple[str, list[tuple]]], *, sized: bool) -> bytes:
    """symbols: (name, [(targets, lib, [version index...], size)...]) in the abilists encoding."""
    body = bytearray()
    count = 0
    for name, incs in symbols:
        body += name.encode() + b"\0"
        for n, (targets, lib, versions, size) in enumerate(incs):
            count += 1
            body += uleb(targets)
            if sized:
                body += uleb(size)
            body.append(lib | (0x80 if n == len(incs) - 1 else 0))
            body += bytes(v | (0x80 if i == len(versions) - 1 else 0) for i, v in enumerate(versions))
    return count.to_bytes(2, "little") + bytes(body)


def abilists(functions, objects, *, tail: bytes = b"\0\0") -> bytes:
    libs = ["c", "pthread", "dl"]
    head = bytes([len(libs)]) + b"".join(n.encode() + b"\0" for n in libs)
    head += bytes([len(VERSIONS)]) + b"".join(bytes(v) for v in VERSIONS)
    head += bytes([len(TARGETS)]) + b"".join(t.encode() + b"\0" for t in TARGETS)
    return head + inclusions(functions, sized=False) + inclusions(objects, sized=True) + tail


C, PTHREAD, DL = 0, 1, 2
FUNCTIONS = [
    ("memcpy", [(X86, C, [0, 1], 0)]),                          # 2.2.5 and 2.14: 2.14 is the default
    ("pthread_create", [(X86, C, [5], 0), (X86, PTHREAD, [0], 0)]),  # moved into libc in 2.34
    ("dlsym", [(X86 | ARM, C, [5], 0), (X86, DL, [0], 0)]),
    ("stat", [(X86, C, [4], 0)]),                               # 2.33 only
    ("pthread_cond_clockwait", [(X86, PTHREAD, [3], 0), (X86, C, [5], 0)]),
    ("only_on_arm", [(ARM, C, [0], 0)]),
]
OBJECTS = [("environ", [(X86, C, [0], 8)])]


def test_parse_reads_header_and_every_inclusion() -> None:
    abi = stubs.parse(abilists(FUNCTIONS, OBJECTS))
    assert abi["libs"] == ["c", "pthread", "dl"]
    assert abi["versions"] == VERSIONS and abi["targets"] == TARGETS
    assert ("pthread_create", "func", 0, X86, PTHREAD, (0,)) in abi["symbols"]
    assert ("environ", "object", 8, X86, C, (0,)) in abi["symbols"]
    assert len(abi["symbols"]) == 10


def test_select_binds_each_symbol_to_the_library_and_versions_of_that_glibc() -> None:
    libs, later = stubs.select(stubs.parse(abilists(FUNCTIONS, OBJECTS)), "x86_64-linux-gnu", (2, 28, 0))
    assert libs["c"]["memcpy"] == ("func", 0, [(2, 2, 5), (2, 14, 0)])
    assert "pthread_create" not in libs["c"] and libs["pthread"]["pthread_create"][2] == [(2, 2, 5)]
    assert libs["dl"]["dlsym"][2] == [(2, 2, 5)]
    assert libs["c"]["environ"] == ("object", 8, [(2, 2, 5)])
    assert "only_on_arm" not in libs["c"]
    # Exported by a later glibc only: what the link wrapper refuses, with the first version.
    assert later == {"stat": (2, 33, 0), "pthread_cond_clockwait": (2, 30, 0)}
    libs, later = stubs.select(stubs.parse(abilists(FUNCTIONS, OBJECTS)), "x86_64-linux-gnu", (2, 34, 0))
    assert libs["c"]["pthread_create"][2] == [(2, 34, 0)] and later == {}


def test_assembly_makes_the_newest_version_the_default_and_sizes_objects() -> None:
    libs, _ = stubs.select(stubs.parse(abilists(FUNCTIONS, OBJECTS)), "x86_64-linux-gnu", (2, 28, 0))
    text = stubs.assembly(libs["c"])
    assert "memcpy@GLIBC_2.2.5\n" in text and "memcpy@@GLIBC_2.14\n" in text
    assert "environ@@GLIBC_2.2.5\n" in text and "\t.size kb_stub_0_0, 8\n" in text
    assert '.note.GNU-stack' in text
    script = stubs.version_script(libs["c"])
    assert script.splitlines() == [
        "GLIBC_2.2.5 { global: environ; memcpy; local: *; };",
        "GLIBC_2.14 { global: memcpy; };",
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (abilists(FUNCTIONS, OBJECTS)[:-4], "truncated at byte"),
        (abilists(FUNCTIONS, OBJECTS)[:-9], "unterminated name at byte"),
        (abilists(FUNCTIONS, OBJECTS, tail=b"\x01\x00"), "thread-local"),
        (abilists(FUNCTIONS, OBJECTS, tail=b"\0\0\0"), "1 unexpected bytes at the end"),
        (abilists([("bad", [(X86, 7, [0], 0)])], []), "library or version index out of range"),
    ],
)
def test_bad_abilists_are_refused_saying_why(data: bytes, message: str) -> None:
    with pytest.raises(stubs.AbilistsError, match=message):
        stubs.parse(data)


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False)


def test_script_writes_sources_maps_and_the_later_symbols(tmp_path: Path) -> None:
    source = tmp_path / "abilists"
    source.write_bytes(abilists(FUNCTIONS, OBJECTS))
    done = run_script(str(source), "x86_64-linux-gnu", "2.28", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "libc.so.6.map", "libc.so.6.s", "libdl.so.2.map", "libdl.so.2.s", "libpthread.so.0.map", "libpthread.so.0.s", "missing.txt"]
    assert (tmp_path / "out" / "missing.txt").read_text() == "pthread_cond_clockwait GLIBC_2.30\nstat GLIBC_2.33\n"
    assert "libc.so.6 (2), libdl.so.2 (1), libpthread.so.0 (1)" in done.stdout


def test_script_errors_name_the_problem(tmp_path: Path) -> None:
    source = tmp_path / "abilists"
    source.write_bytes(abilists(FUNCTIONS, OBJECTS))
    done = run_script(str(source), "riscv64-linux-gnu", "2.28", str(tmp_path / "out"))
    assert done.returncode == 1 and "error: no sonames known for riscv64-linux-gnu" in done.stderr
    done = run_script(str(source), "x86_64-linux-gnu", "two", str(tmp_path / "out"))
    assert done.returncode == 1 and "error:" in done.stderr
    assert run_script(str(source)).returncode == 2


def test_every_build_set_fetches_the_ziglang_wheel() -> None:
    lock = load_lock(REPO / "nix" / "toolchain-lock.json")
    for build_set in lock.build_sets:
        assert "ziglang" in [a.name for a in lock.artifacts_for([build_set])]


# -- the pinned wheel and the pinned derivation -------------------------------------------


def ziglang_wheel() -> Path:
    lock = load_lock(REPO / "nix" / "toolchain-lock.json")
    (artifact,) = [lock.artifacts[k] for k in lock.groups["env:glibc-stubs"]]
    path = Path(artifact.store_path)
    if not path.exists():
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        subprocess.run([sys.executable, "-m", "kernel_builder", "toolchain", "fetch"], env=env, check=True,
                       capture_output=True, cwd=REPO)
    return path


@pytest.mark.slow
def test_pinned_wheel_gives_glibc_2_28_x86_64_as_manylinux_2_28_expects(tmp_path: Path) -> None:
    done = run_script(str(ziglang_wheel()), "x86_64-linux-gnu", "2.28", str(tmp_path))
    assert done.returncode == 0, done.stderr
    later = dict(line.split() for line in (tmp_path / "missing.txt").read_text().splitlines())
    assert later["stat"] == "GLIBC_2.33" and later["pthread_cond_clockwait"] == "GLIBC_2.30"
    assert "dlsym" not in later and "pthread_create" not in later and "fcntl64" not in later
    assert "pthread_create@@GLIBC_2.2.5" in (tmp_path / "libpthread.so.0.s").read_text()
    assert "dlsym@@GLIBC_2.2.5" in (tmp_path / "libdl.so.2.s").read_text()
    assert "pthread_create@" not in (tmp_path / "libc.so.6.s").read_text()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_stub_derivation_builds_in_the_sandbox_and_rebuilds_bit_identical() -> None:
    ziglang_wheel()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NIX_")}
    env["NIX_CONFIG"] = f"sandbox = true\nbuild-users-group =\nsubstituters =\nflake-registry = {nix.empty_registry()}\n"
    expr = f'(import {REPO}/nix/toolchains/pinned/parts.nix {{ system = "x86_64-linux"; }}).ccLink'
    built = subprocess.run(["nix-build", "-j1", "--no-out-link", "-E", expr], env=env, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr[-3000:]
    out = Path(built.stdout.strip())
    assert (out / "lib" / "libc.so").read_text().count("AS_NEEDED") == 1
    assert {"libc.so.6", "libpthread.so.0", "libdl.so.2", "gcc", "g++"} <= {p.name for p in (out / "lib").iterdir()} | {
        p.name for p in (out / "bin").iterdir()}
    checked = subprocess.run(["nix-build", "-j1", "--check", "--no-out-link", "-E", expr], env=env, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr[-3000:]
