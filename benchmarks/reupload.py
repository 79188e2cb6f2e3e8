"""Bytes on the wire for publishing a kernel tree, measured on the local Hub test server.

Lays out a kernel with two noarch variants (Python files plus a 4 MiB binary each),
uploads it, then uploads it again unchanged. Prints:

* the first upload's bytes on the wire (request lines, headers and bodies of every
  request the server received) divided by the tree's bytes; inline base64 costs 4/3, so
  the goal is <= 1.4;
* on the last line, ``ratio:`` the payload bytes (request bodies) sent by the unchanged
  re-upload divided by the tree's bytes; goal 0.0: the planner compares git blob ids from
  one tree listing, so nothing is sent and no commit is made.

Run: .venv/bin/python benchmarks/reupload.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "hub")]

from hub_trees import make_kernel, tree_bytes, write_variant  # noqa: E402
from hubserver import HubServer  # noqa: E402

from kernel_builder.hub.client import make_api  # noqa: E402
from kernel_builder.hub.upload import UploadOptions, upload  # noqa: E402


def main() -> None:
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    with tempfile.TemporaryDirectory() as tmp, HubServer() as hub:
        root = make_kernel(Path(tmp) / "relu", benchmark=True)
        for backend in ("cpu", "cuda"):
            write_variant(root / "build", backend, extra={"data/table.bin": os.urandom(4 << 20)})
        size = tree_bytes(root / "build") + (root / "benchmarks" / "benchmark.py").stat().st_size
        api = make_api(hub.endpoint, token="hf_benchmark")
        quiet = lambda _m: None  # noqa: E731

        first = upload(UploadOptions(root), api, log=quiet)
        first_wire = hub.bytes_received()
        first_body = sum(r.body_bytes for r in hub.requests)
        hub.clear_log()
        again = upload(UploadOptions(root), api, log=quiet)
        again_wire = hub.bytes_received()
        again_body = sum(r.body_bytes for r in hub.requests)

        print(f"tree bytes (variants + benchmarks): {size}")
        print(f"first upload: status={first.status} commits={len(first.commits)} wire={first_wire} body={first_body}")
        print(f"first upload wire/tree: {first_wire / size:.4f} (goal <= 1.4)")
        print(f"re-upload: status={again.status} commits={len(again.commits)} requests={len(hub.requests)} "
              f"wire={again_wire} (GET request lines and headers only) body={again_body}")
        print(f"re-upload wire/tree incl. headers: {again_wire / size:.6f}")
        print(f"ratio: {again_body / size}")


if __name__ == "__main__":
    main()
