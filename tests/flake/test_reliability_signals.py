"""Issue 24, finding 7, with a real build: SIGTERM or SIGINT to the `kernel-builder build`
pid alone (a supervisor's `kill PID`) used to leave `nix build` compiling with parent 1.
Now nix gets the signal, kernel-builder waits for it, and nothing of the build is left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from nix_support import copy_kernel

pytestmark = pytest.mark.slow

CPU213 = "torch213-cxx11-cpu-x86_64-linux"


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (FileNotFoundError, ProcessLookupError):
            continue
        if stat[0] != "Z":
            out[int(name)] = (int(stat[1]), cmd)
    return out


@pytest.mark.timeout(900)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_build_stops_nix_and_leaves_nothing_running(tmp_path: Path, sig: signal.Signals) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False, salt=True)
    state = tmp_path / "state"
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(state)}
    os.environ["KERNEL_BUILDER_STATE_DIR"] = str(state)
    try:
        prepared = prepare_kernel_flake(kernel, state=state)
    finally:
        del os.environ["KERNEL_BUILDER_STATE_DIR"]
    out = nix.run_nix(["eval", "--raw", *prepared.flake_args, prepared.installable(f"redistributable.{CPU213}.outPath")]).stdout
    proc = subprocess.Popen([sys.executable, "-m", "kernel_builder", "build", str(kernel), "--variant", CPU213, "-j", "1", "--cores", "1"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait until the variant's builder runs (its command line names the output path).
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not any(out in cmd for _, cmd in _processes().values()):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    nix_pids = [pid for pid, (ppid, cmd) in _processes().items() if ppid == proc.pid and " build " in cmd]
    assert nix_pids, "nix build is not a child of kernel-builder"
    # Mid-step: the variant step runs for over a second (its import check imports torch), so
    # the signal finds it running.
    time.sleep(0.3)
    os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, err
    assert f"interrupted by {sig.name}" in err and "Traceback" not in err
    # kernel-builder waited: nix is gone already, and nothing builds this variant any more.
    assert not any(pid in _processes() for pid in nix_pids)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(out in cmd for _, cmd in _processes().values()):
        time.sleep(0.5)
    assert not any(out in cmd for _, cmd in _processes().values())
    assert not Path(out).exists()
