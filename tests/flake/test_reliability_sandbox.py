"""Nix's sandbox is on for every nix call that may build, whatever nix.conf says (issue 45 #2).

Evaluation builds too: a kernel flake that reads a derivation's output while it is evaluated
(import-from-derivation) has Nix build that derivation there and then. Here the machine's
nix.conf says ``sandbox = false`` (NIX_CONF_DIR points at one that does), a 0600 file sits
outside the build and a loopback listener waits; the derivation built at evaluation time
tries to read the one and connect to the other. It must see neither: the sandbox hides the
file and gives the build its own network namespace. Before the fix, the kernel flake's
evaluation ran it unsandboxed as root: it read the file and connected.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from kernel_builder.toolchain.pinned.lockfile import load_lock
from nix_support import copy_kernel, environ_set, snapshot_builder

SECRET = "kb-sandbox-secret-7f3a"
SAFE = "unreadable refused"


class Listener:
    """A loopback TCP listener that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[tuple[Path, Listener]]:
    """A system-like nix.conf with the sandbox off, a 0600 secret and a loopback listener."""
    conf = tmp_path / "etc-nix"
    conf.mkdir()
    (conf / "nix.conf").write_text("sandbox = false\n")
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    listener = Listener()
    try:
        with environ_set({"NIX_CONF_DIR": str(conf)}):
            yield secret, listener
    finally:
        listener.close()


def _probe(busybox: str, secret: Path, port: int, salt: str) -> str:
    """A derivation (Nix text) whose output says whether it read ``secret`` and reached
    ``port``; ``busybox`` is a Nix string expression naming the seed's busybox."""
    script = (
        f"if ${{bb}} cat {secret} >/dev/null 2>&1; then r=read:$(${{bb}} cat {secret}); else r=unreadable; fi; "
        f"if echo hi | ${{bb}} timeout 5 ${{bb}} nc 127.0.0.1 {port}; then n=connected; else n=refused; fi; "
        f'echo "$r $n" > $out'
    )
    return (f'let bb = {busybox}; in derivation {{ name = "kb-sandbox-probe"; system = "x86_64-linux"; '
            f'builder = bb; args = [ "sh" "-c" {json.dumps(script)} ]; salt = {json.dumps(salt)}; }}')


def test_a_kernel_flake_evaluation_that_builds_runs_in_the_sandbox(tmp_path: Path, hostile) -> None:
    """The issue's reproduction: ``torchVersions`` reads a derivation's output (IFD)."""
    secret, listener = hostile
    state = tmp_path / "state"
    root = snapshot_builder(tmp_path / "builder")
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    # the seed busybox, reached in pure evaluation through the builder's own toolchain parts
    seed = '"${(import "${kernel-builder}/nix/toolchains/pinned/parts.nix" { system = "x86_64-linux"; }).seed}/busybox"'
    probe = _probe(seed, secret, listener.port, str(tmp_path))
    extra = (f"torchVersions = all: let seen = builtins.readFile ({probe}); in "
             f'if seen == "{SAFE}\\n" then all else throw "sandbox leak: ${{seen}}";')
    text = (kernel / "flake.nix").read_text()
    (kernel / "flake.nix").write_text(text.replace("path = ./.; }", f"path = ./.;\n{extra}\n}}"))
    with environ_set({"KERNEL_BUILDER_STATE_DIR": str(state), "KERNEL_BUILDER_ROOT": str(root)}):
        prepared = prepare_kernel_flake(kernel)
        variants = nix.eval_json(prepared.installable("variants"), flake_args=prepared.flake_args)
    assert isinstance(variants, list) and variants  # the probe ran, saw nothing, and evaluation went on
    assert listener.accepted == 0


def test_an_unsandboxed_build_still_evaluates_in_the_sandbox(tmp_path: Path, hostile) -> None:
    """A build the caller runs with the sandbox off (the host toolchain's) builds only its
    derivations unsandboxed: what evaluation builds on the way is built in the sandbox."""
    secret, listener = hostile
    seed = load_lock().seed.store_path
    probe = _probe(f'"${{builtins.storePath "{seed}"}}/busybox"', secret, listener.port, str(tmp_path))
    expr = tmp_path / "default.nix"
    expr.write_text(
        f'{{ target = derivation {{ name = "kb-host-target"; system = "x86_64-linux"; '
        f'builder = "${{builtins.storePath "{seed}"}}/busybox"; '
        f'args = [ "sh" "-c" "echo \'${{builtins.readFile ({probe})}}\' > $out" ]; }}; }}\n'
    )
    report = nix.build({"target": "target"}, nix.NixOptions(max_jobs=1, sandbox=False), flake_args=["-f", str(expr)])
    assert report.returncode == 0, report.errors
    assert Path(report.outputs["target"]).read_text().strip() == SAFE
    assert listener.accepted == 0


def test_the_sandbox_setting_wins_over_the_users_nix_config() -> None:
    """``NIX_CONFIG`` from the caller's environment comes after nix.conf, and kernel-builder's
    own settings come after it: ``sandbox = false`` there does not turn the sandbox off."""
    env = nix.nix_env({"NIX_CONFIG": "sandbox = false\nsandbox-fallback = true\nkeep-outputs = true"})
    done = subprocess.run(nix.nix_argv("show-config", "--json"), env=env, capture_output=True, text=True, check=True)
    config = json.loads(done.stdout)
    assert config["sandbox"]["value"] is True
    assert config["sandbox-fallback"]["value"] is False
    assert config["keep-outputs"]["value"] is True  # the user's other settings still apply
    host = nix.nix_env({"NIX_CONFIG": "sandbox = true"}, sandbox=False)
    done = subprocess.run(nix.nix_argv("show-config", "--json"), env=host, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["sandbox"]["value"] is False  # asked for (host builds) and given
