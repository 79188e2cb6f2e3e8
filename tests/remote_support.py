"""A second Nix "machine" on loopback, for remote-build and binary-cache tests.

An sshd listens on 127.0.0.1 only, started inside its own mount namespace where an empty
directory is bind-mounted over ``/nix``: its sessions see a fresh, empty Nix store while
this machine's store is untouched. Its Nix settings come from ``SetEnv NIX_CONF_DIR`` (see
``/work/shared/spec/scale-out``). ``stop()`` ends the sshd by its pid and removes the
store it had (whose files are read-only).
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import time
from pathlib import Path
from typing import IO

__all__ = ["LoopbackRemote", "free_port", "several", "start_remote"]

NIX_CONF = """experimental-features = nix-command flakes
build-users-group =
substituters =
sandbox = true
narinfo-cache-negative-ttl = 0
"""

SSHD_CONFIG = """ListenAddress 127.0.0.1
Port {port}
HostKey {root}/ssh/host_key
AuthorizedKeysFile {root}/ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
SetEnv NIX_CONF_DIR={root}/etc/nix
"""


def free_port() -> int:
    """A loopback TCP port nobody listens on (just now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LoopbackRemote:
    """One running sshd over an empty store; ``builders`` and ``env`` are what a client passes."""

    def __init__(self, root: Path, port: int, proc: subprocess.Popen[bytes], log: IO[bytes]) -> None:
        self.root, self.port, self.proc, self.log = root, port, proc, log
        self.key = root / "ssh" / "client_key"

    @property
    def uri(self) -> str:
        return "ssh://root@127.0.0.1"

    def builders(self, jobs: int = 1) -> str:
        """Nix 2.8's builder URI has no port: the port comes from NIX_SSHOPTS."""
        return f"{self.uri} x86_64-linux {self.key} {jobs}"

    @property
    def sshopts(self) -> str:
        return (f"-p {self.port} -i {self.key} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                "-o LogLevel=ERROR -o BatchMode=yes")

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        return {**(os.environ if base is None else base), "NIX_SSHOPTS": self.sshopts}

    def ssh(self, command: str, *, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run COMMAND on the remote (its store, its nix.conf)."""
        done = subprocess.run(["ssh", *self.sshopts.split(), "root@127.0.0.1", command],
                              capture_output=True, text=True, check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"remote `{command}` failed ({done.returncode}):\n{done.stderr[-4000:]}")
        return done

    def stop(self) -> None:
        """End the sshd (by pid) and remove its store."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        _remove_tree(self.root)


def _remove_tree(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink() and path.exists():
            path.chmod(path.stat().st_mode | stat.S_IWUSR | (stat.S_IXUSR if path.is_dir() else 0))
    shutil.rmtree(root, ignore_errors=True)


def start_remote(root: Path, *, timeout: float = 15.0) -> LoopbackRemote:
    """Start an sshd on a free loopback port whose sessions see an empty /nix."""
    (root / "nix").mkdir(parents=True)
    (root / "etc" / "nix").mkdir(parents=True)
    (root / "etc" / "nix" / "nix.conf").write_text(NIX_CONF)
    ssh = root / "ssh"
    ssh.mkdir()
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(ssh / name)], check=True)
    shutil.copy(ssh / "client_key.pub", ssh / "authorized_keys")
    port = free_port()
    (ssh / "sshd_config").write_text(SSHD_CONFIG.format(port=port, root=root))
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # sshd's privilege separation directory
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    log = (root / "sshd.log").open("wb")
    proc = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "bash", "-c",
         f'mount --bind "{root}/nix" /nix && exec "{sshd}" -D -e -f "{ssh}/sshd_config"'],
        stdout=log, stderr=subprocess.STDOUT,
    )
    remote = LoopbackRemote(root, port, proc, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            remote.stop()
            raise RuntimeError(f"sshd exited: {(root / 'sshd.log').read_text() if root.exists() else ''}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return remote
        time.sleep(0.1)
    remote.stop()
    raise RuntimeError(f"sshd did not listen on 127.0.0.1:{port} within {timeout}s")


def several(remotes: list[LoopbackRemote], config: Path) -> tuple[str, dict[str, str]]:
    """``--builders`` and the environment for building on all REMOTES at once.

    They all listen on 127.0.0.1, and Nix 2.8's builder URI has no port, so each gets a host
    alias ``kb-remote-N`` in an ssh config file (its port and key) that ``NIX_SSHOPTS``
    names; Nix then tells them apart, and its log says ``on 'ssh://root@kb-remote-N'``.
    """
    hosts = "".join(f"Host kb-remote-{i}\n  HostName 127.0.0.1\n  Port {r.port}\n  IdentityFile {r.key}\n"
                    for i, r in enumerate(remotes))
    config.write_text(hosts + "Host *\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
                      "  LogLevel ERROR\n  BatchMode yes\n")
    builders = " ; ".join(f"ssh://root@kb-remote-{i} x86_64-linux {r.key} 1" for i, r in enumerate(remotes))
    return builders, {**os.environ, "NIX_SSHOPTS": f"-F {config}"}
