"""The Nix matrix (nix/lib/pure/matrix.nix, builtins only) against the Python matrix; the Nix
unit tests themselves run in tests/nix/test_nix_eval.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kernel_builder.config import load, loads
from kernel_builder.nix import nix_env
from kernel_builder.variants.buildsets import build_sets_path, load_build_sets
from kernel_builder.variants.matrix import matrix
from matrix_corpus import corpus

REPO = Path(__file__).resolve().parents[2]
SYSTEMS = ["x86_64-linux", "aarch64-linux", "aarch64-darwin", "all"]


def nix_eval(expr: str) -> object:
    done = subprocess.run(
        ["nix", "eval", "--json", "--impure", "--expr", expr], env=nix_env(), capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def python_side(build, system: str) -> dict:
    result = matrix(build, load_build_sets(), system)
    return {
        # `local` (this machine can build it) comes from the toolchain lock, a Python-only fact
        "variants": [{k: x for k, x in v.to_json().items() if k != "local"} for v in result.variants],
        "skipped": [{"build_set": s.build_set.label, "reason": s.reason} for s in result.skipped],
        "decisions": [{"build_set": d.build_set.label, "reason": d.reason, "variant": d.variant} for d in result.decisions],
    }


def nix_side(toml_paths: list[Path]) -> list[dict]:
    """One nix evaluation for every (file, system) pair, in order."""
    files = " ".join(json.dumps(str(p)) for p in toml_paths)
    systems = " ".join(json.dumps(s) for s in SYSTEMS)
    expr = f"""
      let
        m = import {REPO}/nix/lib/pure/matrix.nix;
        data = builtins.fromJSON (builtins.readFile {json.dumps(str(build_sets_path()))});
        files = [ {files} ];
        systems = [ {systems} ];
      in builtins.concatMap (f: map (s: m.matrix data (builtins.fromTOML (builtins.readFile f)) s) systems) files
    """
    return nix_eval(expr)  # type: ignore[return-value]


def test_input_paths_match_the_nix_source_filter(tmp_path: Path) -> None:
    """Build.input_paths (the untracked-file check of git flakes) and nix/lib/pure/inputs.nix (the
    source filter) name the same files for every example and backend."""
    from kernel_builder.config.model import Backend

    with_includes = tmp_path / "with-includes"
    with_includes.mkdir()
    text = (REPO / "examples" / "relu" / "build.toml").read_text()
    text = text.replace("[torch]\n", '[torch]\ninclude = ["./common", "."]\n', 1)
    text = text.replace('src = ["relu_cuda/relu.cu"]', 'src = ["relu_cuda/relu.cu"]\ninclude = ["relu_cuda/inc"]')
    (with_includes / "build.toml").write_text(text)
    assert load(with_includes).input_paths()[-2:] == ("common", "relu_cuda/inc")
    cases = []
    for kernel in [with_includes, *sorted((REPO / "examples").iterdir())]:
        if (kernel / "build.toml").is_file():
            for backend in load(kernel).general.backends:
                cases.append((kernel, backend))
    pairs = " ".join(f"{{ path = {json.dumps(str(k))}; backend = {json.dumps(b.value)}; }}" for k, b in cases)
    expr = f"""
      let inputs = import {REPO}/nix/lib/pure/inputs.nix; config = import {REPO}/nix/lib/pure/kernel-config.nix; in
      map (c: inputs.inputPaths (config (/. + c.path)) c.backend) [ {pairs} ]
    """
    for (kernel, backend), nix_side in zip(cases, nix_eval(expr), strict=True):  # type: ignore[arg-type]
        python = load(kernel).input_paths(Backend(backend))
        assert sorted(python) == sorted({*nix_side["files"], *nix_side["includeDirs"], nix_side["extDir"]}), (kernel.name, backend)


def test_builder_flake_checks_with_its_committed_lock() -> None:
    """The builder flake has its own flake.lock (input-less), and `nix flake check` passes
    on it without touching the lock."""
    assert json.loads((REPO / "flake.lock").read_text()) == {"nodes": {"root": {}}, "root": "root", "version": 7}
    done = subprocess.run(
        ["nix", "flake", "check", "--no-update-lock-file", str(REPO)],
        env=nix_env(), capture_output=True, text=True, cwd=REPO, timeout=300,
    )
    assert done.returncode == 0, done.stderr


def test_nix_compute_tokens_follow_the_python_table() -> None:
    """names.nix spells compute tokens from its own prefix table; it must be names.py's."""
    from kernel_builder.variants.names import PLAIN_COMPUTE, VERSIONED_COMPUTE, BackendInfo

    cases = [(b, "13.0") for b in VERSIONED_COMPUTE] + [(b, None) for b in PLAIN_COMPUTE]
    sets = " ".join(f"{{ backend = {json.dumps(b)}; backendVersion = {json.dumps(v)}; }}" for b, v in cases)
    got = nix_eval(f"let n = import {REPO}/nix/lib/pure/names.nix; in map n.compute [ {sets} ]")
    assert got == [BackendInfo(b, (13, 0) if v else None).variant_str for b, v in cases]


def test_nix_unit_runner_reports_failures(tmp_path: Path) -> None:
    """The runner is not vacuous: a wrong expectation shows up as a failure."""
    expr = f"""
      let m = import {REPO}/nix/lib/pure/names.nix; in
      builtins.filter (c: c.expr != c.expected) [ {{ expr = m.noarchName "cuda"; expected = "torch-cpu"; }} ]
    """
    assert nix_eval(expr) == [{"expr": "torch-cuda", "expected": "torch-cpu"}]


@pytest.mark.timeout(300)
def test_nix_and_python_agree_on_examples_and_corpus(tmp_path: Path) -> None:
    paths: list[Path] = []
    builds = []
    for path in sorted((REPO / "examples").glob("*/build.toml")):
        paths.append(path)
        builds.append(load(path.parent))
    assert paths, "no examples found"
    for index, text in enumerate(corpus(80)):
        path = tmp_path / f"doc{index}.toml"
        path.write_text(text)
        paths.append(path)
        builds.append(loads(text, path=str(path)))
    assert len(paths) >= 51

    from_nix = nix_side(paths)
    total = 0
    kinds = set()
    for i, (path, build) in enumerate(zip(paths, builds)):
        for j, system in enumerate(SYSTEMS):
            ours = python_side(build, system)
            theirs = from_nix[i * len(SYSTEMS) + j]
            assert theirs == ours, f"{path} on {system}:\n{path.read_text()}"
            total += len(ours["variants"])
            kinds.update(v["kind"] for v in ours["variants"])
    # the corpus exercises every kind of name and a good many variants
    assert kinds == {"torch", "torch-stable-abi", "tvm-ffi", "noarch"}
    assert total > 500
