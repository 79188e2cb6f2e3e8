"""Per-object builds spread over remote builders: one variant of the 16-source kernel with
two loopback builders (``remote_support``: sshds over empty stores) and ``-j 0``, so that
nothing is built here. Its objects are built on both machines: Nix's log says where each
derivation was built, and each builder's store holds the objects it was said to build.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from kernel_builder import nix
from many_kernel import CPU_VARIANT, UNITS, source_name, write_many
from nix_support import snapshot_builder
from remote_support import LoopbackRemote, several, start_remote

pytestmark = pytest.mark.slow

# "building '<drv>' on 'ssh://root@kb-remote-N'": Nix 2.8's line for a remote build
_BUILT_ON = re.compile(r"building '(/nix/store/[a-z0-9]{32}-([^']+)\.drv)' on 'ssh://root@(kb-remote-\d+)'")
_FLAKE = """{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
"""


@pytest.fixture(scope="module")
def remotes(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> list[LoopbackRemote]:
    machines = []
    for i in range(2):
        machine = start_remote(tmp_path_factory.mktemp(f"builder{i}") / "machine")
        request.addfinalizer(machine.stop)
        machines.append(machine)
    return machines


def _salted_kernel(root: Path) -> Path:
    """The 16-source kernel, every source and build.toml salted: nothing of it is in a store."""
    kernel = write_many(root / "many", flake=_FLAKE % snapshot_builder(root / "builder"))
    salt = f"salt {time.time_ns()}"
    for path in [kernel / "build.toml", kernel / "many" / "common.h", kernel / "torch-ext" / "torch_binding.cpp",
                 *(kernel / source_name(k) for k in range(UNITS))]:
        path.write_text(path.read_text() + ("# " if path.suffix == ".toml" else "// ") + salt + "\n")
    return kernel


@pytest.mark.timeout(2400)
def test_the_objects_of_one_variant_are_built_on_both_builders(tmp_path: Path, remotes: list[LoopbackRemote]) -> None:
    kernel = _salted_kernel(tmp_path)
    builders, env = several(remotes, tmp_path / "ssh_config")
    attr = f".#legacyPackages.x86_64-linux.redistributable.{CPU_VARIANT}"
    done = subprocess.run(["nix", "build", "-L", "--no-link", "-j", "0", "--builders", builders, attr],
                          cwd=kernel, env=nix.nix_env(env), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    where = {name: (drv, host) for drv, name, host in _BUILT_ON.findall(done.stderr)}
    objects = {name: item for name, item in where.items() if name.startswith(f"0-obj-many-{CPU_VARIANT}-")}
    assert len(objects) == UNITS + 1  # every source and the binding, each built remotely
    hosts = {host for _, host in objects.values()}
    assert hosts == {"kb-remote-0", "kb-remote-1"}
    # the builders' stores agree with the log: each holds the objects it built; the one that
    # did not link (the link's builder got every object as an input) lacks the other's
    outputs = {host: nix.derivation_outputs([drv for drv, h in objects.values() if h == host]) for host in hosts}
    linker = where[f"many-{CPU_VARIANT}-link"][1]
    for i, remote in enumerate(remotes):
        host, other = f"kb-remote-{i}", f"kb-remote-{1 - i}"
        remote.ssh(f"nix-store --check-validity {' '.join(outputs[host])}")
        if host != linker:
            absent = remote.ssh(f"nix-store --check-validity --print-invalid {' '.join(outputs[other])}").stdout.split()
            assert sorted(absent) == sorted(outputs[other])
