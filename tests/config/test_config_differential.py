"""Differential test: our build.toml reader against the reference parser.

The reference is ``kernels._rust.Build.open`` from PyPI ``kernels==0.19.1`` (editions 3 to
6). On every corpus document the accept/reject verdict, the parsed backends, the kernel
dependencies of every backend and the legacy-v4 upgrade must match, except for the deliberate differences named in
``config_corpus.DELIBERATE``, which are checked to behave as documented instead.
"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

import config_corpus as corpus
from config_oracle import ours, reference

CASES = corpus.all_cases()


def test_corpus_is_large_and_covers_each_part() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    kinds = collections.Counter(name.split("-")[0] for name in names)
    assert len(CASES) >= 80
    assert kinds["valid"] >= 20 and kinds["bad"] >= 40 and kinds["mutant"] >= 80
    assert {c.deliberate for c in CASES if c.deliberate} == set(corpus.DELIBERATE)


def test_edition_6_corpus_covers_every_language_and_key() -> None:
    """Every language has a valid case, and every edition-6 key is dropped, retyped or both."""
    import tomllib

    valid6 = [c for c in CASES if c.name.startswith("valid-e6-")]
    languages = {k["language"] for c in valid6 for k in tomllib.loads(c.text).get("kernel", {}).values()}
    assert languages == set(corpus.LANGUAGES)
    keys = {"build-layout", "language", "cargo-manifest", "tileiras-minver", "cuda-capabilities", "src", "depends"}
    for key in keys:
        assert any(c.name.startswith("mutant-drop-e6-") and c.name.endswith("." + key) for c in CASES), key
        assert any(c.name.startswith("mutant-retype-e6-") and c.name.endswith("." + key) for c in CASES), key
    frameworks = {k for c in valid6 for k in tomllib.loads(c.text) if k not in ("general", "kernel")}
    assert frameworks == {"torch", "torch-noarch", "tvm-ffi", "mlx-noarch"}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_matches_reference(case: corpus.Case) -> None:
    ref = reference(case.text)
    mine, warnings = ours(case.text)
    if case.deliberate == corpus.UNKNOWN_PYTHON_DEPENDS:
        assert ref.ok and not mine.ok
        assert "Python dependenc" in mine.error
    elif case.deliberate == corpus.KEBAB_NOARCH_KEYS:
        assert not ref.ok and "Unknown field" in ref.error
        assert mine.ok
    elif case.deliberate == corpus.KERNEL_BACKEND_NOT_LISTED:
        assert ref.ok and mine.ok and mine.backends == ref.backends
        assert any("not in general.backends" in w for w in warnings)
    elif case.deliberate == corpus.STRICT_V3_FRAMEWORK:
        assert not ref.ok and "legacy format" in ref.error
        assert not mine.ok and "legacy v3 format" not in mine.error
    elif case.deliberate == corpus.PATHS_INSIDE:
        assert ref.ok and not mine.ok
        assert "absolute path" in mine.error or "outside the kernel directory" in mine.error or "relative file path" in mine.error
    elif case.deliberate == corpus.PRE_V3:
        assert not ref.ok  # "did not match v4 (...) or v3 (...)"
        assert not mine.ok and "older than edition 3" in mine.error and "update-build" not in mine.error
    else:
        assert (mine.ok, mine.backends, mine.legacy_v4) == (ref.ok, ref.backends, ref.legacy_v4), (
            f"reference: {ref.error or 'ok'}\nours: {mine.error or 'ok'}"
        )
        assert mine.kernel_depends == ref.kernel_depends
        # both tools also agree on which files are (valid) legacy v3
        assert ("unsupported legacy format" in ref.error) == ("legacy v3 format" in mine.error), (ref.error, mine.error)


EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*/build.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name for p in EXAMPLES])
def test_examples_agree(path: Path) -> None:
    text = path.read_text()
    ref = reference(text)
    mine, _ = ours(text)
    # Every example is written the way both tools read it (no kebab [torch-noarch] keys).
    assert ref.ok, ref.error
    assert (mine.ok, mine.backends, mine.kernel_depends) == (ref.ok, ref.backends, ref.kernel_depends), ref.error or mine.error


def test_relu_example_is_valid_edition_5(repo_root: Path) -> None:
    text = (repo_root / "examples" / "relu" / "build.toml").read_text()
    mine, warnings = ours(text)
    assert mine.ok and not mine.legacy_v4 and mine.backends == ("cpu", "cuda") and not warnings
