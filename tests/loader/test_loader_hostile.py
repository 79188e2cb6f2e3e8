"""Hostile variants: a metadata id that takes over a module, and planted bytecode.

The takeover and bytecode cases run in a fresh interpreter, so a failure cannot leave a
replaced ``torch`` or a cached module behind in the test process.
"""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import subprocess
import sys
import textwrap
from pathlib import Path

import attrs
import pytest
from hub_fixture import publish
from loader_trees import write_variant

from kernel_builder import get_kernel
from kernel_builder.loader.errors import InvalidRequest
from kernel_builder.tree.metadata import Metadata
from kernel_builder.variants.system import detect_system

CPU = detect_system(backend="cpu")


def with_id(vdir: Path, module_id: str) -> Path:
    """Rewrite the variant's metadata id (metadata.json is outside the digest)."""
    meta = Metadata.read(vdir / "metadata.json")
    data = json.loads((vdir / "metadata.json").read_text())
    data["id"] = module_id
    (vdir / "metadata.json").write_text(json.dumps(data))
    assert Metadata.read(vdir / "metadata.json") == attrs.evolve(meta, id=module_id)
    return vdir


def load_in_subprocess(path: Path, prelude: str = "", after: str = "") -> subprocess.CompletedProcess[str]:
    """``get_local_kernel(path)`` in a fresh interpreter that would write bytecode as usual."""
    script = textwrap.dedent(
        f"""
        import sys, os
        {prelude}
        from kernel_builder import get_local_kernel
        from kernel_builder.variants.system import detect_system
        before = dict(sys.modules)
        try:
            module = get_local_kernel({str(path)!r}, system=detect_system(backend="cpu"))
        except Exception as exc:
            print("REFUSED", type(exc).__name__, exc)
            changed = [n for n in before if sys.modules.get(n) is not before[n]]
            print("CHANGED", changed)
        else:
            print("LOADED", module.__name__, module.VARIANT)
        {after}
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize(
    ("module_id", "why"),
    [
        ("torch", "names the already imported module 'torch'"),
        ("os", "names the already imported module 'os'"),
        ("os.path", "is not a single Python identifier"),
        ("imaplib", "names the module at"),  # not imported, but on sys.path
        ("sys", "names the already imported module 'sys'"),
        ("1abc", "is not a single Python identifier"),
        ("a-b", "is not a single Python identifier"),
        ("class", "is not a single Python identifier"),
        ("", "is not a single Python identifier"),
        ("shadowme", "names the module at"),
    ],
)
def test_an_id_that_names_a_module_is_refused(tmp_path: Path, module_id: str, why: str) -> None:
    vdir = with_id(write_variant(tmp_path / "k" / "build", "torch-cpu"), module_id)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "shadowme.py").write_text("X = 1\n")
    prelude = f"import torch; sys.path.insert(0, {str(tmp_path / 'site')!r})"
    done = load_in_subprocess(tmp_path / "k", prelude)
    assert done.returncode == 0, done.stderr
    assert "REFUSED InvalidRequest refusing to import" in done.stdout, done.stdout
    assert str(vdir) in done.stdout and why in done.stdout, done.stdout
    assert "CHANGED []" in done.stdout


def test_a_hub_variant_with_a_takeover_id_names_repo_and_variant(hub_server, tmp_path: Path) -> None:
    build = tmp_path / "build"
    with_id(write_variant(build, "torch-cpu"), "torch")
    publish(hub_server, "acme/evil", build, version=1)
    import torch

    with pytest.raises(InvalidRequest, match=r"variant 'torch-cpu' of acme/evil \(revision [0-9a-f]{40}\).*'torch'"):
        get_kernel("acme/evil", version=1, system=CPU)
    assert sys.modules["torch"] is torch


def test_a_normal_id_still_loads_twice(tmp_path: Path) -> None:
    write_variant(tmp_path / "k" / "build", "torch-cpu")
    done = load_in_subprocess(tmp_path / "k", after=f"m2 = get_local_kernel({str(tmp_path / 'k')!r}, system=detect_system(backend='cpu')); print('SAME', m2 is module)")
    assert "LOADED _relu_test_torch_cpu" in done.stdout and "SAME True" in done.stdout, (done.stdout, done.stderr)


# ---------------------------------------------------------------- planted bytecode


EVIL = 'VARIANT = "planted"\nOPS_ID = "planted"\n'


def plant(vdir: Path, module: str, tmp_path: Path) -> Path:
    """An unchecked-hash .pyc of EVIL where Python's import looks for ``module``'s bytecode."""
    evil = tmp_path / f"evil_{module}.py"
    evil.write_text(EVIL)
    target = Path(importlib.util.cache_from_source(str(vdir / f"{module}.py")))
    py_compile.compile(str(evil), cfile=str(target), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    return target


def test_planted_bytecode_never_runs(tmp_path: Path) -> None:
    vdir = write_variant(tmp_path / "k" / "build", "torch-cpu", extra={"sub/__init__.py": b"WHERE = 'source'\n"})
    planted = [plant(vdir, "__init__", tmp_path), plant(vdir, "_ops", tmp_path), plant(vdir / "sub", "__init__", tmp_path)]
    (vdir / "sneaky.pyc").write_bytes(planted[0].read_bytes())  # sourceless module, outside the digest too
    after = (
        "print('OPS', module._ops.OPS_ID)\n"
        "import importlib\n"
        "print('SUB', importlib.import_module(module.__name__ + '.sub').WHERE)\n"
        "try:\n"
        "    importlib.import_module(module.__name__ + '.sneaky')\n"
        "except ModuleNotFoundError:\n"
        "    print('NO SNEAKY')\n"
    )
    done = load_in_subprocess(tmp_path / "k", after=textwrap.indent(after, "        ").lstrip())
    assert done.returncode == 0, done.stderr
    assert "LOADED _relu_test_torch_cpu" in done.stdout and " torch-cpu" in done.stdout, done.stdout
    assert "planted" not in done.stdout, done.stdout
    assert "SUB source" in done.stdout and "NO SNEAKY" in done.stdout, done.stdout


def test_loading_writes_no_bytecode(tmp_path: Path) -> None:
    vdir = write_variant(tmp_path / "k" / "build", "torch-cpu", extra={"sub/__init__.py": b"WHERE = 'source'\n"})
    done = load_in_subprocess(tmp_path / "k", after="import importlib; importlib.import_module(module.__name__ + '.sub')")
    assert "LOADED" in done.stdout, (done.stdout, done.stderr)
    assert sorted(p.name for p in vdir.rglob("*") if "pycache" in str(p) or p.suffix == ".pyc") == []


# -- metadata.json that is not a small regular JSON file (issue 45: 8, 20) ----------------
HOSTILE_METADATA_SCRIPT = """
import resource, sys
# A runaway read must fail here, not take the machine: 1.5 GiB of address space at most.
resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
from kernel_builder import get_local_kernel
from kernel_builder.errors import LoadError
from kernel_builder.variants.system import detect_system
try:
    get_local_kernel(sys.argv[1], system=detect_system(backend="cpu"))
except LoadError as exc:
    print("LOADERROR", type(exc).__name__, exc)
except BaseException as exc:
    print("OTHER", type(exc).__name__, str(exc)[:300])
else:
    print("LOADED")
"""


def _hostile_load(variant_dir: Path) -> str:
    out = subprocess.run([sys.executable, "-c", HOSTILE_METADATA_SCRIPT, str(variant_dir)],
                         capture_output=True, text=True, timeout=60)
    return out.stdout + out.stderr


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_metadata_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    """A metadata.json linked to /dev/zero grew the loader to 10 GB; a FIFO hung it."""
    vdir = write_variant(tmp_path / "build", "torch-cpu", name="hostile-meta")
    (vdir / "metadata.json").unlink()
    if kind == "dev-zero":
        (vdir / "metadata.json").symlink_to("/dev/zero")
    else:
        os.mkfifo(vdir / "metadata.json")
    out = _hostile_load(vdir)  # the 60 s timeout is the hang check
    assert out.startswith("LOADERROR"), out
    assert "metadata.json" in out and ("character device" in out if kind == "dev-zero" else "FIFO" in out), out


def test_deeply_nested_metadata_is_a_load_error(tmp_path: Path) -> None:
    """100,000 nested lists raised RecursionError, which callers catching LoadError miss."""
    vdir = write_variant(tmp_path / "build", "torch-cpu", name="deep-meta")
    (vdir / "metadata.json").write_text("[" * 100_000 + "]" * 100_000)
    out = _hostile_load(vdir)
    assert out.startswith("LOADERROR"), out
    assert "metadata.json" in out and "nested too deeply" in out, out


def test_oversized_metadata_is_refused(tmp_path: Path) -> None:
    vdir = write_variant(tmp_path / "build", "torch-cpu", name="big-meta")
    data = json.loads((vdir / "metadata.json").read_text())
    data["x-padding"] = "a" * (64 << 20)
    (vdir / "metadata.json").write_text(json.dumps(data))
    out = _hostile_load(vdir)
    assert out.startswith("LOADERROR") and "limit" in out, out


@pytest.mark.parametrize("kind", ["dev-zero", "deep"])
def test_check_and_info_give_a_located_error(tmp_path: Path, kind: str) -> None:
    """``check`` and ``info`` read metadata.json the same way: one located error, exit != 0."""
    vdir = write_variant(tmp_path / "kern" / "build", "torch-cpu", name="hostile-cli")
    (vdir / "metadata.json").unlink()
    if kind == "dev-zero":
        (vdir / "metadata.json").symlink_to("/dev/zero")
    else:
        (vdir / "metadata.json").write_text("[" * 100_000 + "]" * 100_000)
    for command in (["info", str(tmp_path / "kern")], ["check", str(tmp_path / "kern")]):
        out = subprocess.run([sys.executable, "-m", "kernel_builder", *command], capture_output=True, text=True, timeout=60)
        assert out.returncode != 0, (command, out.stdout, out.stderr)
        assert "Traceback" not in out.stderr and "RecursionError" not in out.stderr, (command, out.stderr)
        assert "metadata.json" in out.stderr, (command, out.stderr)
