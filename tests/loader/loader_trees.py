"""Kernel trees for the loader tests, laid out by hand (no compile needed).

``noarch`` variants (``build/torch-cpu``) and arch variants named for this machine are
pure Python packages with a real metadata.json and digest, so every loader path runs for
real: resolution, download, digest verification and import under the metadata id.
``layout="zip"`` writes the package as ``<id>.zip`` with ``"build-layout": "zip"`` (the
layout PyPI ``kernels`` 0.19 reads).
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

from kernel_builder.tree.digest import compute_digest
from kernel_builder.tree.metadata import Metadata, MetadataBackend

INIT = '''\
"""Test kernel {name} v{version} ({variant})."""
from ._ops import OPS_ID

VERSION = {version}
VARIANT = {variant!r}


def relu(values):
    return [v if v > 0 else 0 for v in values]
'''


def write_variant(
    build_dir: Path,
    variant: str,
    *,
    name: str = "relu-test",
    version: int = 1,
    backend: str = "cpu",
    python_depends: tuple[str, ...] = (),
    digest: bool = True,
    extra: dict[str, bytes] | None = None,
    layout: str = "files",
) -> Path:
    """Write ``build_dir/variant`` with __init__.py, _ops.py, metadata.json (+ digest);
    with ``layout="zip"`` the two modules are in ``<id>.zip`` instead."""
    vdir = build_dir / variant
    vdir.mkdir(parents=True, exist_ok=True)
    ops_id = f"_{name.replace('-', '_')}_{variant.replace('-', '_').replace('.', '_')}_v{version}_" + hashlib.sha1(
        f"{name}{variant}{version}".encode()
    ).hexdigest()[:7]
    modules = {"__init__.py": INIT.format(name=name, version=version, variant=variant), "_ops.py": f"OPS_ID = {ops_id!r}\n"}
    if layout == "zip":
        with zipfile.ZipFile(vdir / f"{ops_id}.zip", "w") as archive:
            for rel, text in modules.items():
                archive.writestr(rel, text)
    else:
        for rel, text in modules.items():
            (vdir / rel).write_text(text)
    for rel, data in (extra or {}).items():
        (vdir / rel).parent.mkdir(parents=True, exist_ok=True)
        (vdir / rel).write_bytes(data)
    meta = Metadata(
        name=name,
        id=ops_id,
        version=version,
        license="Apache-2.0",
        backend=MetadataBackend(backend),
        upstream="https://github.com/example/relu",
        python_depends=python_depends,
        build_layout=layout,
    )
    if digest:
        meta = meta.with_digest(compute_digest(vdir))
    meta.write(vdir / "metadata.json")
    return vdir
