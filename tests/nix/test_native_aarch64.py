"""Issue 44, item 2: native aarch64-linux hosts (GH200/GB200 machines build there, no x86_64 builder).

The lock's `requests.hosts.aarch64-linux` pins a native toolchain (Debian bookworm arm64
.debs, aarch64 wheels) in `aarch64-linux/<group>` groups with its own seed. A kernel flake
evaluated for aarch64-linux gives derivations of that system whose every input is an
aarch64 (or architecture-free) artifact of that host, while x86_64-linux keeps
cross-building the same variants with derivations of its own. Checked by evaluation, and by
building the host's first toolchain derivations natively under emulation: qemu-user through
binfmt_misc in a private user namespace (Linux >= 6.7 gives each its own), with Nix's
`extra-platforms = aarch64-linux` in a private configuration, so nothing of this machine's
binfmt or Nix settings changes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernel_builder.errors import ConfigError
from kernel_builder import nix
from kernel_builder.toolchain.pinned.lockfile import host_group, load_lock
from nix_support import REPO, copy_kernel, snapshot_builder

HOST = "aarch64-linux"
VARIANT = "torch213-cxx11-cpu-aarch64-linux"
FLAKE = """{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
"""
# An artifact of the x86_64 machine: a .deb of amd64, a wheel for x86_64.
X86_MARKS = ("_amd64.deb", "x86_64")


def plain_nix(*args: str, cwd: Path, extra: str = "", wrap: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """nix with only the offline settings and the sandbox on (as in test_nix_hermetic)."""
    config = ("experimental-features = nix-command flakes\nbuild-users-group =\nsubstituters =\n"
              f"sandbox = true\nsandbox-fallback = false\nflake-registry = {nix.empty_registry()}\n{extra}")
    return subprocess.run([*(wrap or []), "nix", *args], cwd=cwd,
                          env={"PATH": os.environ["PATH"], "HOME": str(cwd), "NIX_CONFIG": config},
                          capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def relu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/relu with a snapshot of this checkout as its builder input."""
    root = tmp_path_factory.mktemp("native")
    builder = snapshot_builder(root / "builder")
    kernel = copy_kernel("relu", root / "relu", git=False)
    (kernel / "flake.nix").write_text(FLAKE % builder)
    return kernel


def _eval(kernel: Path, attr: str, apply: str | None = None) -> object:
    done = plain_nix("eval", "--json", f".#{attr}", *(["--apply", apply] if apply else []), cwd=kernel)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


def test_the_lock_pins_a_native_aarch64_toolchain() -> None:
    """Every artifact of the host is an arm64 .deb, an aarch64 wheel or one for every machine;
    the lock's own system fetches none of the host's; unknown systems are located errors."""
    lock = load_lock()
    assert HOST in lock.hosts and lock.seed_of(HOST) is not None
    assert lock.seed_of(HOST).deb.endswith("_arm64.deb") and lock.seed_of(HOST).deb.startswith("busybox-static")
    everything = lock.artifacts_for(None, HOST)
    assert not [a.file for a in everything if any(m in a.file for m in X86_MARKS)]
    files = {a.file for a in lock.artifacts_for(["torch2.13-cpu"], HOST)}
    assert "torch-2.13.0-cp311-cp311-manylinux_2_28_aarch64.whl" in files
    assert any(f.startswith("nvidia_cuda_nvcc-13.0.88-") and f.endswith("aarch64.whl") for f in files)
    assert any(f.startswith("gcc-12_") and f.endswith("_arm64.deb") for f in files)
    # the host's groups mirror the lock's own requests
    assert {g.split("/", 1)[1] for g in lock.groups if g.startswith(f"{HOST}/")} >= {
        "seed", "tools", "runtime", "compiler", "sysroot", "python", "env:installer", "env:driver", "env:cli",
        "env:glibc-stubs", "env:torch2.13", "test:pytest", "check:loader"}
    assert lock.groups[host_group(HOST, "seed")] == (lock.seed_of(HOST).deb,)
    # x86_64-linux's toolchains take none of the host-only artifacts
    host_only = {a.key for a in everything} - {k for g, ks in lock.groups.items() if "/" not in g for k in ks}
    assert host_only and not host_only & {a.key for a in lock.artifacts_for(None)}
    with pytest.raises(ConfigError, match="no toolchain is pinned for aarch64-darwin"):
        lock.artifacts_for(None, "aarch64-darwin")
    with pytest.raises(ConfigError, match="not pinned for aarch64-linux"):
        lock.artifacts_for(["torch9.9-cpu"], HOST)


def test_aarch64_outputs_are_native_derivations(relu: Path) -> None:
    """`--system aarch64-linux` gives aarch64-linux derivations whose closure fetches only the
    host's artifacts; x86_64-linux's derivation of the same variant still cross-builds it."""
    table = _eval(relu, f"legacyPackages.{HOST}.variantTable")
    assert {r["name"] for r in table if r["buildable"]} >= {VARIANT}
    row = next(r for r in table if r["name"] == VARIANT)
    assert row["toolchainProvider"] == "pinned" and row["toolchainPython"].endswith("-kb-env-torch2.13/bin/python")
    assert _eval(relu, f"legacyPackages.{HOST}.redistributable.{VARIANT}.system") == HOST
    assert _eval(relu, f"legacyPackages.{HOST}.backendCi.cpu.system") == HOST
    assert _eval(relu, f"packages.{HOST}.build-variants.system") == HOST
    cross = _eval(relu, f"legacyPackages.x86_64-linux.redistributable.{VARIANT}",
                  "d: { inherit (d) system; target = d.KERNEL_BUILDER_TARGET_SYSTEM or null; }")
    assert cross == {"system": "x86_64-linux", "target": HOST}

    # The closure. Another machine's variant is one derivation (no per-object split, whose
    # evaluation builds steps only that machine runs): its path needs nothing built here.
    drv = _eval(relu, f"legacyPackages.{HOST}.redistributable.{VARIANT}.drvPath")
    assert drv == _eval(relu, f"legacyPackages.{HOST}.monolithic.{VARIANT}.drvPath")
    assert _eval(relu, f"packages.{HOST}.default.drvPath").endswith("-relu-bundle.drv")
    shown = plain_nix("show-derivation", "-r", drv, cwd=relu)
    assert shown.returncode == 0, shown.stderr[-2000:]
    closure = json.loads(shown.stdout)
    systems = {d["system"] for d in closure.values()}
    assert systems == {HOST, "builtin"}, systems
    fetched = {d["env"]["url"] for d in closure.values() if d["system"] == "builtin"}
    lock = load_lock()
    host_urls = {a.url for a in lock.artifacts_for(None, HOST)}
    seed_url = f"https://seed.invalid/run-kernel-builder-toolchain-fetch/{lock.seed_of(HOST).name}"
    assert fetched - host_urls == {seed_url}
    assert not [u for u in fetched if any(m in u for m in X86_MARKS)]
    seed = next(d for d in closure.values() if d["env"].get("url") == seed_url)
    assert seed["outputs"]["out"]["hash"] == lock.seed_of(HOST).nar_sha256
    # the x86_64 builder scripts run with the host's names
    runtime = next(d for d in closure.values() if d["env"].get("name") == "kb-runtime")
    assert runtime["env"]["hostTriple"] == "aarch64-linux-gnu" and runtime["env"]["hostLdSo"] == "ld-linux-aarch64.so.1"
    assert runtime["args"][2].endswith("-retarget.sh")


def test_the_host_changes_no_x86_64_derivation(relu: Path, tmp_path: Path) -> None:
    """The same builder with the host taken out of its lock (requests.hosts, its groups, its
    artifacts and seed) gives relu's x86_64-linux variants, the cross-built aarch64 ones
    included, and the x86_64 toolchain the same derivations (the one-derivation form of each
    variant: its path needs nothing built to evaluate)."""
    builder = Path(json.loads((relu / "flake.nix").read_text().split("url = ", 1)[1].split(";", 1)[0]).removeprefix("path:"))
    bare = snapshot_builder(tmp_path / "bare")
    lock = json.loads((bare / "nix" / "toolchain-lock.json").read_text())
    del lock["requests"]["hosts"], lock["hostSeeds"]
    lock["groups"] = {g: keys for g, keys in lock["groups"].items() if "/" not in g}
    used = {k for keys in lock["groups"].values() for k in keys}
    lock["artifacts"] = {k: a for k, a in lock["artifacts"].items() if k in used}
    (bare / "nix" / "toolchain-lock.json").write_text(json.dumps(lock, indent=1) + "\n")
    expr = """b: k: let
      lib = (import (b + "/nix/lib") { builderSrc = { outPath = b; }; });
      out = lib.genKernelFlakeOutputs { self = { outPath = k; }; path = k; };
      p = import (b + "/nix/toolchains/pinned/parts.nix") { system = "x86_64-linux"; };
      lp = out.legacyPackages.x86_64-linux;
    in map (n: lp.monolithic.${n}.drvPath) lp.buildableVariants
      ++ [ p.runtime.drvPath p.ccLink.drvPath p.driver.drvPath p.cli.drvPath ]
      ++ map (e: e.drvPath) (builtins.attrValues p.envs)"""
    paths = {}
    for name, root in (("with", builder), ("without", bare)):
        source = f'builtins.path {{ path = {relu}; name = "source"; }}'
        done = plain_nix("eval", "--impure", "--json", "--expr", f"({expr}) {root} ({source})", cwd=relu)
        assert done.returncode == 0, done.stderr[-3000:]
        paths[name] = json.loads(done.stdout)
    assert len(paths["with"]) > 20 and any("aarch64-linux" in p for p in paths["with"])
    assert paths["with"] == paths["without"]


# Registers qemu-aarch64 (F: opened now, so it runs inside the sandbox's chroot too) in a
# binfmt_misc of its own, then runs the command.
BINFMT = r"""
mount --make-rprivate / && mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 77
printf '%s' ":qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:$QEMU:F" \
  > /proc/sys/fs/binfmt_misc/register || exit 77
exec "$@"
"""
# Runs argv as root in a new user and mount namespace (uids 0-65535 mapped to themselves and
# setgroups allowed, which Nix's sandbox needs); exit 77 when the kernel refuses one.
USERNS = textwrap.dedent("""
    import ctypes, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    ready_r, ready_w = os.pipe(); go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r); os.close(go_w)
        ok = libc.unshare(0x10000000 | 0x00020000) == 0  # CLONE_NEWUSER | CLONE_NEWNS
        os.write(ready_w, b"1" if ok else b"0"); os.close(ready_w)
        if not ok or os.read(go_r, 1) != b"1":
            os._exit(77)
        os.setgid(0); os.setuid(0)
        os.execvp(sys.argv[1], sys.argv[1:])
    os.close(ready_w); os.close(go_r)
    if os.read(ready_r, 1) == b"1":
        try:
            for name, line in (("uid_map", "0 0 65536"), ("setgroups", "allow"), ("gid_map", "0 0 65536")):
                with open(f"/proc/{pid}/{name}", "w") as f:
                    f.write(line + "\\n")
            os.write(go_w, b"1")
        except OSError:
            os.write(go_w, b"0")
    sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
""")


@pytest.mark.slow
def test_the_host_toolchain_builds_natively_under_emulation(relu: Path, tmp_path: Path) -> None:
    """The host's runtime, compiler (with its glibc 2.28 link stubs, self-tested) and Python,
    built as aarch64-linux derivations by aarch64 programs (qemu-user via binfmt_misc):
    what an aarch64 machine runs. Skipped where the kernel gives a user namespace no
    binfmt_misc of its own (before Linux 6.7) or no user namespace at all."""
    lock = load_lock()
    if lock.seed_of(HOST) is None or not all(Path(a.store_path).exists() for a in lock.artifacts_for(["torch2.13-cpu"], HOST)):
        pytest.fail("the aarch64-linux host's artifacts are not in the store: run "
                    "`kernel-builder toolchain fetch --system aarch64-linux --build-set torch2.13-cpu` (.ci/setup does)")
    qemu_deb = next(a for a in lock.artifacts.values() if a.name == "qemu-user-static")
    subprocess.run(["dpkg-deb", "-x", qemu_deb.store_path, str(tmp_path / "qemu")], check=True)
    qemu = tmp_path / "qemu" / "usr" / "bin" / "qemu-aarch64-static"
    (tmp_path / "userns.py").write_text(USERNS)
    wrap = [sys.executable, str(tmp_path / "userns.py"), "env", f"QEMU={qemu}", "sh", "-c", BINFMT, "sh"]
    probe = subprocess.run([*wrap, "uname", "-m"], capture_output=True, text=True, check=False)
    if probe.returncode == 77:
        pytest.skip(f"no binfmt_misc in a user namespace here (Linux {os.uname().release}): {probe.stderr.strip()[-300:]}")
    assert probe.returncode == 0, probe.stderr

    parts = f'import {REPO}/nix/toolchains/pinned/parts.nix {{ system = "{HOST}"; }}'
    expr = f"let p = {parts}; in [ p.runtime p.cc p.ccLink p.python ]"
    done = plain_nix("build", "--no-link", "--json", "-L", "--impure", "--expr", expr, cwd=relu,
                     extra=f"extra-platforms = {HOST}\nmax-jobs = 1\ncores = 1\n", wrap=wrap)
    assert done.returncode == 0, done.stderr[-6000:]
    built = {r["drvPath"].split("-", 1)[1].removesuffix(".drv"): r for r in json.loads(done.stdout)}
    names = ["kb-runtime", "kb-cc-gcc12", "kb-cc-gcc12-glibc2.28", "kb-python3.11"]
    runtime, cc, cc_link, python = (Path(built[n]["outputs"]["out"]) for n in names)
    # their builders' own words (self-tests included), from this build or the one before
    log = {n: plain_nix("log", built[n]["drvPath"], cwd=relu).stdout for n in names}
    assert "runtime: bash" in log["kb-runtime"] and "cc: gcc-12" in log["kb-cc-gcc12"]
    assert "python: 3.11" in log["kb-python3.11"]
    assert "glibc 2.28 link stubs: ld-linux-aarch64.so.1" in log["kb-cc-gcc12-glibc2.28"]
    assert "ELF 64-bit LSB" in (magic := subprocess.run(["file", "-L", str(runtime / "bin" / "bash")], capture_output=True, text=True).stdout)
    assert "aarch64" in magic, magic
    assert (cc / "usr" / "lib" / "gcc" / "aarch64-linux-gnu" / "12").is_dir()
    assert (cc_link / "bin" / "g++").is_file()
    # the host's Python runs, as aarch64
    ran = subprocess.run([*wrap, str(python / "usr" / "bin" / "python3.11"), "-c", "import platform, ssl; print(platform.machine())"],
                         capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and ran.stdout.strip() == "aarch64", ran.stderr
