"""The Nix library's seams: only the toolchain providers look inside a toolchain, and
gen-flake-outputs.nix only assembles named builders (docs/architecture.md, "The derivation
graph")."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NIX = REPO / "nix"
BUILDERS = NIX / "lib" / "builders"


def _code(text: str) -> str:
    """Nix source without comments."""
    return re.sub(r"#[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def test_only_the_toolchain_providers_look_inside_a_toolchain() -> None:
    """No Nix file outside nix/toolchains/ names the pinned provider's parts: they ask the
    provider (nix/toolchains/default.nix) instead."""
    files = sorted(p for p in NIX.rglob("*.nix") if NIX / "toolchains" not in p.parents)
    assert len(files) > 20
    inside = re.compile(r"pinned/|parts\.nix|cuda-compiler\.nix")
    offenders = [str(p.relative_to(REPO)) for p in files if inside.search(_code(p.read_text()))]
    assert offenders == []
    # the pattern does see a file that looks inside
    assert inside.search(_code((NIX / "toolchains" / "pinned.nix").read_text()))


def test_gen_flake_outputs_only_assembles_named_builders() -> None:
    """gen-flake-outputs.nix makes no derivation and copies nothing into the store itself;
    each part of the outputs is a builder file of its own."""
    code = _code((BUILDERS / "gen-flake-outputs.nix").read_text())
    assert not re.search(r"\bderivation\b|builtins\.(path|storePath|toFile|filterSource|fetch\w*)\b", code)
    imported = set(re.findall(r"import \./([\w-]+\.nix)", code))
    assert imported >= {"variant-set.nix", "variant-kinds.nix", "test-outputs.nix", "bundle-programs.nix", "ci-views.nix"}
    for name in imported:
        assert (BUILDERS / name).is_file(), name
    # the builders it leaves to those files are not imported here
    assert not imported & {"variant.nix", "per-object.nix", "bundle.nix", "check.nix", "ci.nix", "ci-test.nix"}
