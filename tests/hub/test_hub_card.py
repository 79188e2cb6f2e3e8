"""The kernel card: context from the source or a variant, templates, errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hub_trees import make_kernel, write_variant
from kernel_builder.errors import ConfigError
from kernel_builder.hub.card import (
    UNSET_REPO_ID,
    CardContext,
    CardStamp,
    card_repo_id,
    context_for_module,
    default_template,
    exported_names,
    layer_classes,
    render_card,
    template_for,
    tree_context,
)
from kernel_builder.hub.tree import choose_target, read_tree, render_tree_card

REPO = Path(__file__).resolve().parents[2]
RENDER_CARD = REPO / "nix" / "lib" / "builders" / "render-card.py"


class TestContext:
    def test_exported_names_reads_literal_all(self, tmp_path):
        init = tmp_path / "__init__.py"
        init.write_text("x = 1\n__all__ = ['relu', \"gelu\", 3, 'layers']\n")
        assert exported_names(init) == ["relu", "gelu", "layers"]
        init.write_text("__all__: list[str] = ('a',)\n")
        assert exported_names(init) == ["a"]
        init.write_text("def broken(:\n")
        assert exported_names(init) == []
        assert exported_names(tmp_path / "missing.py") == []

    def test_layers_only_when_exported(self, tmp_path):
        (tmp_path / "__init__.py").write_text("__all__ = ['relu']\n")
        (tmp_path / "layers").mkdir()
        (tmp_path / "layers" / "__init__.py").write_text("class A:\n    pass\nclass B(A):\n    pass\ndef f(): pass\n")
        assert layer_classes(tmp_path) == ["A", "B"]
        ctx = context_for_module(tmp_path, repo_id="o/k", version=3, license="MIT", has_benchmark=False)
        assert ctx.functions == ("relu",) and ctx.layers == ()
        (tmp_path / "__init__.py").write_text("__all__ = ['relu', 'layers']\n")
        ctx = context_for_module(tmp_path, repo_id="o/k", version=3, license="MIT", has_benchmark=False)
        assert ctx.functions == ("relu",) and ctx.layers == ("A", "B")
        assert ctx.as_dict()["license"] == "mit"


class TestRepoId:
    """card_repo_id: the one rule for the repo id a card names (bundle and upload)."""

    def test_option_then_build_toml_then_none_never_the_kernel_name(self, tmp_path):
        named = read_tree(make_kernel(tmp_path / "named")).build
        unnamed = read_tree(make_kernel(tmp_path / "unnamed", repo_id=None)).build
        assert card_repo_id(named) == "org/hub-relu"
        assert card_repo_id(named, "org/x") == "org/x"
        assert card_repo_id(unnamed) is None and unnamed.general.name == "hub-relu"
        assert card_repo_id(unnamed, "org/x") == "org/x"
        assert card_repo_id(None) is None and card_repo_id(None, "org/x") == "org/x"

    def test_upload_targets_the_same_repo_id(self, tmp_path):
        named, unnamed = read_tree(make_kernel(tmp_path / "named")), read_tree(make_kernel(tmp_path / "unnamed", repo_id=None))
        assert choose_target(named, None, None)[0] == card_repo_id(named.build) == "org/hub-relu"
        assert choose_target(unnamed, "org/x", None)[0] == card_repo_id(unnamed.build, "org/x") == "org/x"
        with pytest.raises(ConfigError, match="no repository to upload to"):
            choose_target(unnamed, None, None)


class TestStamp:
    def test_line_and_read(self):
        for stamp in (CardStamp("org/x", True), CardStamp("org/x", False), CardStamp(None, True), CardStamp(None, False)):
            assert CardStamp.read(f"# card\n\n{stamp.line()}\n\n") == stamp
        assert CardStamp(None, True).line() == "<!-- kernel-builder card: rendered without a repo id; template: default -->"
        assert CardStamp("org/x", False).line() == "<!-- kernel-builder card: rendered for org/x; template: own -->"
        assert CardStamp.read("") is None and CardStamp.read("# a hand-written card\n") is None
        assert CardStamp.read(f"{CardStamp('org/x', True).line()}\nmore text\n") is None  # only the last line counts

    def test_render_card_ends_with_the_stamp(self, tmp_path):
        ctx = CardContext("org/k", 1, "MIT")
        assert render_card("# {{ repo_id }}", ctx, template_path=tmp_path / "CARD.md") == (
            "# org/k\n\n<!-- kernel-builder card: rendered for org/k; template: own -->\n"
        )
        assert CardStamp.read(render_card(default_template(), ctx)) == CardStamp("org/k", True)

    def test_without_a_repo_id_the_card_shows_a_placeholder(self):
        text = render_card(default_template(), CardContext(None, 2, "MIT", ("relu",), has_benchmark=True))
        assert f"# {UNSET_REPO_ID}\n" in text and f'get_kernel("{UNSET_REPO_ID}", version=2)' in text
        assert f"kernels benchmark {UNSET_REPO_ID} --version 2" in text
        assert text.endswith("\n<!-- kernel-builder card: rendered without a repo id; template: default -->\n")
        assert CardStamp.read(text) == CardStamp(None, True)


class TestRender:
    def test_default_card_sections(self):
        ctx = CardContext("org/k", 2, "Apache-2.0", ("relu",), ("ReLU",), True, "https://u", None)
        text = render_card(default_template(), ctx)
        assert text.startswith("---\nlibrary_name: kernels\nlicense: apache-2.0\n")
        assert 'get_kernel("org/k", version=2)' in text
        assert "- `relu`" in text and "- `ReLU`" in text
        assert "kernels benchmark org/k --version 2" in text
        assert "Upstream project: https://u" in text and "Kernel source" not in text

    def test_default_card_without_optional_parts(self):
        text = render_card(default_template(), CardContext("org/k", 1, "MIT"))
        for absent in ("## Functions", "## Layers", "## Benchmarks", "## Source", "{%", "{{"):
            assert absent not in text
        assert "\n\n\n" not in text

    def test_unknown_variable_and_syntax_errors(self, tmp_path):
        with pytest.raises(ConfigError, match="unknown variable"):
            render_card("{{ nope }}", CardContext("o/k", 1, "MIT"), template_path=tmp_path / "CARD.md")
        with pytest.raises(ConfigError, match=r"CARD.md:1: card template syntax error"):
            render_card("{% if %}", CardContext("o/k", 1, "MIT"), template_path=tmp_path / "CARD.md")


class TestTreeCard:
    def test_source_template_wins(self, tmp_path):
        root = make_kernel(tmp_path / "k", card="# {{ repo_id }} v{{ version }}\n{{ functions | join(',') }}\n")
        text = render_tree_card(read_tree(root), "org/k", 1)
        assert text == "# org/k v1\nrelu,scale\n\n<!-- kernel-builder card: rendered for org/k; template: own -->\n"

    def test_functions_come_from_torch_ext(self, tmp_path):
        root = make_kernel(tmp_path / "k")
        (root / "torch-ext/hub_relu/__init__.py").write_text("__all__ = ['only_in_source']\n")
        text = render_tree_card(read_tree(root), "org/k", 1)
        assert "- `only_in_source`" in text and "- `relu`" not in text

    def test_bare_tree_takes_a_prerendered_card_only_when_it_names_the_repo(self, tmp_path):
        write_variant(tmp_path / "b", "cpu")
        tree = read_tree(tmp_path / "b")
        assert "- `relu`" in render_tree_card(tree, "org/k", 1)  # no card: the default one
        card = tmp_path / "b" / "CARD.md"
        card.write_text(f"hand-edited\n\n{CardStamp('org/k', False).line()}\n")
        assert render_tree_card(tree, "org/k", 1) == card.read_text()  # names org/k: as it is
        for named in ("org/other", None):  # the default template made it: rendered again
            card.write_text(f"# {named}\n\n{CardStamp(named, True).line()}\n")
            text = render_tree_card(tree, "org/k", 1)
            assert 'get_kernel("org/k", version=1)' in text and CardStamp.read(text) == CardStamp("org/k", True)

    @pytest.mark.parametrize(
        ("card", "says"),
        [
            ("already rendered\n", "has no kernel-builder stamp"),
            (f"# ORG/NAME\n\n{CardStamp(None, False).line()}\n", "rendered without a repo id from the kernel's own CARD.md"),
            (f"# org/old\n\n{CardStamp('org/old', False).line()}\n", "rendered for org/old from the kernel's own CARD.md"),
        ],
    )
    def test_bare_tree_refuses_a_card_it_cannot_render_again(self, tmp_path, card, says):
        write_variant(tmp_path / "b", "cpu")
        (tmp_path / "b" / "CARD.md").write_text(card)
        with pytest.raises(ConfigError, match=says) as raised:
            render_tree_card(read_tree(tmp_path / "b"), "org/k", 1)
        assert "would publish a card that does not name org/k" in str(raised.value)
        assert "upload from the kernel's directory" in raised.value.hint

    def test_kernel_without_card_md_renders_a_stale_prerendered_card_again(self, tmp_path):
        root = make_kernel(tmp_path / "k", repo_id=None)
        tree = read_tree(root)
        fresh = render_tree_card(tree, "org/x", 1)
        for stale in ("no stamp\n", f"x\n\n{CardStamp(None, True).line()}\n", f"x\n\n{CardStamp('org/y', False).line()}\n"):
            (root / "build" / "CARD.md").write_text(stale)
            assert render_tree_card(tree, "org/x", 1) == fresh
        (root / "build" / "CARD.md").write_text(f"kept\n\n{CardStamp('org/x', True).line()}\n")
        assert render_tree_card(tree, "org/x", 1).startswith("kept\n")

    def test_default_card_from_a_kernel_source_has_every_field(self, tmp_path):
        root = make_kernel(tmp_path / "k")
        toml = (root / "build.toml").read_text()
        (root / "build.toml").write_text(toml.replace("upstream =", 'source = "https://github.com/org/k"\nupstream =', 1))
        text = render_tree_card(read_tree(root), "org/k", 3)
        assert "license: apache-2.0\n" in text  # license, in the Hub's YAML metadata
        assert "# org/k\n" in text and 'get_kernel("org/k", version=3)' in text  # repo id, version
        assert "- `relu`" in text and "- `scale`" in text  # the functions of __all__
        assert "- `layers`" not in text and "## Layers" in text  # layers listed as classes, not as a function
        assert "kernels benchmark org/k --version 3" in text  # benchmarks/ exists
        assert "Upstream project: https://github.com/example/relu" in text
        assert "Kernel source: https://github.com/org/k" in text
        (root / "benchmarks" / "benchmark.py").unlink()
        (root / "benchmarks").rmdir()
        assert "## Benchmarks" not in render_tree_card(read_tree(root), "org/k", 3)


class TestTreeContext:
    def test_module_from_the_source_else_the_first_variant(self, tmp_path):
        root = make_kernel(tmp_path / "k")
        tree = read_tree(root)
        (root / "torch-ext/hub_relu/__init__.py").write_text("__all__ = ['from_source']\n")
        variants = [tree.variants[n] for n in sorted(tree.variants)]
        ctx = tree_context(root, variants, repo_id="o/k", version=1, build=tree.build)
        assert ctx.functions == ("from_source",)
        shutil.rmtree(root / "torch-ext")
        ctx = tree_context(root, variants, repo_id="o/k", version=1, build=tree.build)
        assert ctx.functions == ("relu", "scale") and ctx.layers == ("ReLU",)
        assert (ctx.license, ctx.upstream, ctx.has_benchmark) == ("Apache-2.0", "https://github.com/example/relu", True)

    def test_bare_tree_reads_the_metadata(self, tmp_path):
        variant = write_variant(tmp_path / "b", "cpu")
        tree = read_tree(tmp_path / "b")
        ctx = tree_context(tree.kernel_dir, [variant], repo_id="o/k", version=2, metadata=tree.metadata[variant.name])
        assert (ctx.license, ctx.upstream, ctx.has_benchmark, ctx.functions) == ("Apache-2.0", None, False, ("relu", "scale"))
        with pytest.raises(ValueError, match="build.toml"):
            tree_context(tree.kernel_dir, [variant], repo_id="o/k", version=2)

    def test_benchmark_in_an_extra_dir(self, tmp_path):
        root = make_kernel(tmp_path / "k", benchmark=False)
        tree = read_tree(root)
        assert not tree_context(root, [], repo_id="o/k", version=1, build=tree.build).has_benchmark
        (tmp_path / "bundle" / "benchmarks").mkdir(parents=True)
        (tmp_path / "bundle" / "benchmarks" / "benchmark.py").write_text("")
        ctx = tree_context(root, [], repo_id="o/k", version=1, build=tree.build, extra_dirs=(tmp_path / "bundle",))
        assert ctx.has_benchmark

    def test_template_for(self, tmp_path):
        assert template_for(None) == (default_template(), None)
        assert template_for(tmp_path / "CARD.md") == (default_template(), None)
        (tmp_path / "CARD.md").write_text("# {{ repo_id }}\n")
        assert template_for(tmp_path / "CARD.md") == ("# {{ repo_id }}\n", tmp_path / "CARD.md")


def _bundle_card(root: Path, work: Path, python: str = sys.executable, prelude: str = "") -> str:
    """Run render-card.py the way bundle-builder.sh does: SOURCE is the bundle's filtered
    source (build.toml, CARD.md, benchmarks/), BUNDLE the variants plus benchmarks/."""
    source, bundle = work / "extras", work / "bundle"
    source.mkdir(parents=True)
    for name in ("build.toml", "CARD.md"):
        if (root / name).is_file():
            shutil.copy2(root / name, source / name)
    shutil.copytree(root / "build", bundle)
    if (root / "benchmarks").is_dir():
        shutil.copytree(root / "benchmarks", source / "benchmarks")
        shutil.copytree(root / "benchmarks", bundle / "benchmarks")
    script = f"{prelude}import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    done = subprocess.run(
        [python, "-c", script, str(RENDER_CARD), str(source), str(bundle)],
        env={"PYTHONPATH": str(REPO / "python"), "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr
    return (bundle / "CARD.md").read_text()


class TestBundleCard:
    """nix/lib/builders/render-card.py (inside the bundle derivation) and upload's
    render_tree_card build the context with the same function: same tree, same card."""

    @pytest.mark.parametrize("card", [None, "# {{ repo_id }} v{{ version }} ({{ license }})\n{{ functions | join(',') }} / {{ layers | join(',') }}\n{{ has_benchmark }} {{ upstream }} {{ source }}\n"])
    @pytest.mark.parametrize("benchmark", [True, False])
    def test_bundle_and_upload_render_the_same_card(self, tmp_path, card, benchmark):
        root = make_kernel(tmp_path / "k", card=card, benchmark=benchmark)
        expected = render_tree_card(read_tree(root), "org/hub-relu", 1)
        assert _bundle_card(root, tmp_path / "nix") == expected
        assert ("- `relu`" in expected) == (card is None)

    @pytest.mark.parametrize("card", [None, "# {{ repo_id }}\nget_kernel(\"{{ repo_id }}\")\n"])
    def test_without_a_repo_id_the_bundle_card_says_so_and_upload_renders_it_again(self, tmp_path, card):
        root = make_kernel(tmp_path / "k", repo_id=None, card=card)
        bundled = _bundle_card(root, tmp_path / "nix")
        assert f'get_kernel("{UNSET_REPO_ID}"' in bundled and 'get_kernel("hub-relu"' not in bundled
        assert CardStamp.read(bundled) == CardStamp(None, card is None)
        (root / "build" / "CARD.md").write_text(bundled)  # as `nix run .#build-variants` leaves it
        uploaded = render_tree_card(read_tree(root), "org/x", 1)
        assert 'get_kernel("org/x"' in uploaded and UNSET_REPO_ID not in uploaded
        assert CardStamp.read(uploaded) == CardStamp("org/x", card is None)

    def test_render_card_imports_only_the_driver_environment(self, tmp_path):
        """The bundle runs render-card.py with the pinned driver Python: it may import the
        standard library, the driver environment of nix/toolchain-lock.json and kernel_builder."""
        from importlib.metadata import packages_distributions

        lock = json.loads((REPO / "nix" / "toolchain-lock.json").read_text())
        dists = {w.split("-")[0].lower().replace("_", "-") for w in lock["groups"]["env:driver"]}
        allowed = {m for m, ds in packages_distributions().items() if any(d.lower().replace("_", "-") in dists for d in ds)}
        allowed |= set(sys.stdlib_module_names) | {"kernel_builder", "__future__"}
        assert {"attrs", "jinja2"} <= allowed and "huggingface_hub" not in allowed
        prelude = (
            "import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name.partition('.')[0] not in {sorted(allowed)!r}:\n"
            "            raise ImportError('not in the driver environment: ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
        )
        root = make_kernel(tmp_path / "k")
        assert _bundle_card(root, tmp_path / "nix", prelude=prelude) == render_tree_card(read_tree(root), "org/hub-relu", 1)
