"""The kernel card: context from the source or a variant, templates, errors."""

from __future__ import annotations

import pytest

from hub_trees import make_kernel, write_variant
from kernel_builder.errors import ConfigError
from kernel_builder.hub.card import (
    CardContext,
    context_for_module,
    default_template,
    exported_names,
    layer_classes,
    render_card,
)
from kernel_builder.hub.tree import read_tree, render_tree_card


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
        assert text == "# org/k v1\nrelu,scale\n"

    def test_functions_come_from_torch_ext(self, tmp_path):
        root = make_kernel(tmp_path / "k")
        (root / "torch-ext/hub_relu/__init__.py").write_text("__all__ = ['only_in_source']\n")
        text = render_tree_card(read_tree(root), "org/k", 1)
        assert "- `only_in_source`" in text and "- `relu`" not in text

    def test_bare_tree_prefers_prerendered_card(self, tmp_path):
        write_variant(tmp_path / "b", "cpu")
        assert "- `relu`" in render_tree_card(read_tree(tmp_path / "b"), "org/k", 1)
        (tmp_path / "b" / "CARD.md").write_text("already rendered\n")
        assert render_tree_card(read_tree(tmp_path / "b"), "org/k", 1) == "already rendered\n"

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
