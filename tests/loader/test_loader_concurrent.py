"""Eight processes load the same kernel at once: one download, all succeed, cache intact."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hub_fixture import publish
from loader_trees import write_variant

SCRIPT = textwrap.dedent(
    """
    import sys, time
    from kernel_builder import get_kernel
    from kernel_builder.variants.system import System
    cpu = System(backend="cpu", cpu="x86_64", os="linux", torch_version=None)
    # Start together: wait for the go file the test creates once every worker is ready.
    open(sys.argv[2] + ".ready", "w").close()
    while not __import__("os").path.exists(sys.argv[1]):
        time.sleep(0.01)
    m = get_kernel("acme/busy", version=1, system=cpu)
    print(m.VARIANT, m.relu([-3, 3]))
    """
)


@pytest.mark.timeout(180)
def test_eight_processes_one_download(hub_server, tmp_path: Path) -> None:
    big = {"weights.bin": os.urandom(3 << 20)}  # makes the download slow enough to overlap
    write_variant(tmp_path / "build", "torch-cpu", name="busy", extra=big)
    write_variant(tmp_path / "build", "torch-cuda", name="busy", backend="cuda")
    publish(hub_server, "acme/busy", tmp_path / "build", version=1)
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(go), str(tmp_path / f"w{i}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )
        for i in range(8)
    ]
    import time

    deadline = time.time() + 120
    while not all((tmp_path / f"w{i}.ready").exists() for i in range(8)) and time.time() < deadline:
        time.sleep(0.05)
    go.touch()
    results = [p.communicate(timeout=150) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
        assert out.split()[0] == "torch-cpu"
    gets = [r.path for r in hub_server.requests if r.endpoint == "resolve" and r.method == "GET"]
    # Each of the variant's four files was sent exactly once, nothing else.
    assert sorted(p.rsplit("/torch-cpu/", 1)[1] for p in gets) == ["__init__.py", "_ops.py", "metadata.json", "weights.bin"]
    # One process downloaded; the other seven found the verified variant and skipped the
    # snapshot entirely (no recursive listing, no HEAD per file).
    recursive = [r for r in hub_server.requests if r.endpoint == "tree" and "recursive=true" in r.path.lower()]
    heads = [r for r in hub_server.requests if r.endpoint == "resolve" and r.method == "HEAD"]
    assert len(recursive) == 1
    assert len(heads) <= 5
    snapshot = next((Path(os.environ["HF_HOME"]) / "hub" / "kernels--acme--busy" / "snapshots").iterdir())
    assert (snapshot / "build" / "torch-cpu" / "weights.bin").read_bytes() == big["weights.bin"]
    assert not (snapshot / "build" / "torch-cuda").exists()
