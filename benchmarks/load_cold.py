"""Bytes a cold get_kernel downloads, divided by the chosen variant's size.

A repo with 8 variants (1 MiB binary each, so metadata is noise) is served by the local
Hub test server; a fresh process with an empty cache runs ``get_kernel(version=1)``. The
server's request log gives every file sent; their sizes are summed. Goal: ratio 1.0 (a
naive full snapshot would be about 8).
Run: .venv/bin/python benchmarks/load_cold.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote

from _loader_bench import HubServer, publish, write_variant

from kernel_builder.variants.system import detect_system

REPO = "acme/cold"
PAYLOAD = 1 << 20


def main() -> None:
    system = detect_system()
    major, minor = system.torch_version or (2, 13)
    plat = f"{system.cpu}-{system.os}"
    variants = [
        f"torch{major}{minor}-cpu-{plat}",  # the one this machine loads
        f"torch{major}{minor}-cxx11-cpu-{plat}",
        f"torch{major}{minor - 1}-cpu-{plat}",
        f"torch{major}{minor}-cu130-{plat}",
        f"torch{major}{minor}-cu126-{plat}",
        f"torch{major}{minor}-rocm71-{plat}",
        "torch-cuda",
        "torch-rocm",
    ]
    with tempfile.TemporaryDirectory() as tmp, HubServer() as hub:
        build = Path(tmp) / "kernel" / "build"
        for variant in variants:
            backend = "cuda" if "cu" in variant else "rocm" if "rocm" in variant else "cpu"
            write_variant(build, variant, payload=PAYLOAD, backend=backend)
        publish(hub, REPO, build)
        files = hub.files(REPO, "v1")
        env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "KERNELS_CACHE": str(Path(tmp) / "cache"), "HF_HOME": tmp}
        code = f"from kernel_builder import get_kernel; import pathlib; print(pathlib.Path(get_kernel({REPO!r}, version=1).__file__).parent.name)"
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
        chosen = out.stdout.strip().splitlines()[-1]
        sent = 0
        for request in hub.requests:
            if request.endpoint == "resolve" and request.method == "GET" and request.status in (200, 206):
                path = unquote(request.path).split("/resolve/", 1)[1].split("/", 1)[1]
                sent += len(files[path])
        variant_bytes = sum(len(data) for path, data in files.items() if path.startswith(f"build/{chosen}/"))
        everything = sum(len(data) for path, data in files.items() if path.startswith("build/"))
        print(f"chosen variant: {chosen} ({variant_bytes} bytes); repo build/ holds {everything} bytes in {len(variants)} variants")
        print(f"downloaded by a cold get_kernel: {sent} bytes (naive snapshot ratio would be {everything / variant_bytes:.2f})")
        print(f"ratio: {sent / variant_bytes:.3f}", flush=True)


if __name__ == "__main__":
    main()
