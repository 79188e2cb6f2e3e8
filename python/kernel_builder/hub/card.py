"""The kernel card: the README.md that ``upload`` puts on the repo's ``main`` branch.

A kernel may carry a Jinja2 template ``CARD.md`` next to build.toml (``init`` writes one);
without one the default template shipped with kernel-builder is used. Either way the
template sees the same context, built by ``tree_context`` from the source (or, for a bare
build tree, from a variant): ``repo_id``, ``version``, ``functions`` (``__all__`` minus ``layers``),
``layers`` (classes of the ``layers`` module, only if ``__all__`` exports ``layers``),
``has_benchmark``, ``upstream``, ``source`` and ``license`` (lower-cased, as the Hub's
YAML metadata expects).

The repo id a card names comes from ``card_repo_id``, and from nowhere else: ``--repo-id``,
else ``[general.hub] repo-id``, else none (never the kernel's name, which is no repository:
upload refuses to run without a repo id). Every rendered card ends with a stamp line (an
HTML comment, ``CardStamp``) that records the repo id it names, or that it has none (the
template then sees the placeholder ``UNSET_REPO_ID``), and whether the default template
made it; upload renders a pre-rendered card again unless its stamp names the repository
being uploaded to.

Two callers render cards: ``upload`` (``hub.tree.render_tree_card``) and the Nix bundle
(``nix/lib/builders/render-card.py``), which runs with the pinned driver environment; so this
module imports nothing beyond the standard library, attrs, jinja2 and kernel_builder's own
light modules.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from kernel_builder.errors import ConfigError

if TYPE_CHECKING:
    from kernel_builder.config.model import Build
    from kernel_builder.tree.metadata import Metadata

__all__ = [
    "UNSET_REPO_ID",
    "card_repo_id",
    "CardStamp",
    "CardContext",
    "default_template",
    "exported_names",
    "layer_classes",
    "context_for_module",
    "tree_context",
    "template_for",
    "render_card",
]


# What a card rendered without a repo id shows where the repo id goes: plainly a
# placeholder to a reader, yet shaped like a repo id, so templates that split it still work.
UNSET_REPO_ID = "ORG/NAME"


def card_repo_id(build: Build | None, requested: str | None = None) -> str | None:
    """The repository a card names (and upload targets): ``requested`` (``--repo-id``), else
    build.toml's ``[general.hub] repo-id``, else None -- never the kernel's name, because
    ``upload`` refuses to run without one of the two."""
    if requested:
        return requested
    hub = build.general.hub if build is not None else None
    return hub.repo_id if hub is not None and hub.repo_id else None


_STAMP = re.compile(
    r"<!-- kernel-builder card: rendered (?:for (?P<repo_id>[^\s;]+)|without a repo id); "
    r"template: (?P<template>default|own) -->"
)


@attrs.frozen
class CardStamp:
    """The last line of a rendered card: the repo id it names (None: rendered without one)
    and whether the default template made it. Upload reads it to decide whether a
    pre-rendered card can go up as it is."""

    repo_id: str | None
    default_template: bool

    def line(self) -> str:
        named = f"for {self.repo_id}" if self.repo_id else "without a repo id"
        template = "default" if self.default_template else "own"
        return f"<!-- kernel-builder card: rendered {named}; template: {template} -->"

    @classmethod
    def read(cls, card: str) -> CardStamp | None:
        """The stamp of ``card`` (its last non-empty line); None when it has none."""
        lines = card.rstrip().splitlines()
        match = _STAMP.fullmatch(lines[-1].strip()) if lines else None
        if match is None:
            return None
        return cls(match["repo_id"], match["template"] == "default")


@attrs.frozen
class CardContext:
    """Everything a card template may use; ``repo_id`` None renders as ``UNSET_REPO_ID``."""

    repo_id: str | None
    version: int
    license: str
    functions: tuple[str, ...] = ()
    layers: tuple[str, ...] = ()
    has_benchmark: bool = False
    upstream: str | None = None
    source: str | None = None

    def as_dict(self) -> dict[str, object]:
        data = attrs.asdict(self)
        data["repo_id"] = self.repo_id or UNSET_REPO_ID
        data["license"] = self.license.lower()
        data["functions"] = list(self.functions) or None
        data["layers"] = list(self.layers) or None
        return data


def default_template() -> str:
    """The template used when a kernel has no CARD.md of its own."""
    return resources.files("kernel_builder.cli").joinpath("templates/CARD.md").read_text(encoding="utf-8")


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, KeyError, SyntaxError, UnicodeDecodeError):  # KeyError: no such member of a zip
        return None


def exported_names(init_py: Path) -> list[str]:
    """The string items of a literal ``__all__`` in ``init_py``; [] when absent."""
    tree = _parse(init_py)
    if tree is None:
        return []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            if isinstance(node.value, (ast.List, ast.Tuple)):
                return [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def layer_classes(module_dir: Path) -> list[str]:
    """Class names defined at the top of ``layers/__init__.py`` or ``layers.py``."""
    for candidate in (module_dir / "layers" / "__init__.py", module_dir / "layers.py"):
        tree = _parse(candidate)
        if tree is not None:
            return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    return []


def context_for_module(
    module_dir: Path | None,
    *,
    repo_id: str | None,
    version: int,
    license: str,
    has_benchmark: bool,
    upstream: str | None = None,
    source: str | None = None,
) -> CardContext:
    """The card context of a Python module directory (``torch-ext/<name>`` or a variant)."""
    names = exported_names(module_dir / "__init__.py") if module_dir is not None else []
    layers = layer_classes(module_dir) if module_dir is not None and "layers" in names else []
    return CardContext(
        repo_id=repo_id,
        version=version,
        license=license,
        functions=tuple(n for n in names if n != "layers"),
        layers=tuple(layers),
        has_benchmark=has_benchmark,
        upstream=upstream,
        source=source,
    )


EXT_DIRS = ("torch-ext", "tvm-ffi-ext")  # where a kernel source keeps its Python module


def tree_context(
    kernel_dir: Path,
    variant_dirs: Sequence[Path],
    *,
    repo_id: str | None,
    version: int,
    build: Build | None = None,
    metadata: Metadata | None = None,
    extra_dirs: Sequence[Path] = (),
) -> CardContext:
    """The card context of a built tree: the one rule that upload and the Nix bundle share.

    Functions and layers come from the kernel's own module (``<ext dir>/<python name>``)
    when ``kernel_dir`` holds it, else from the first of ``variant_dirs`` (its ``<id>.zip``
    when ``metadata``, that variant's, says ``"build-layout": "zip"``); license, upstream
    and source from ``build`` (build.toml), else from ``metadata`` (a bare build tree's first
    variant); there is a benchmark when ``benchmarks/benchmark.py`` is in ``kernel_dir`` or
    one of ``extra_dirs``.
    """
    module_dir: Path | None = variant_dirs[0] if variant_dirs else None
    if module_dir is not None and metadata is not None and metadata.build_layout == "zip":
        # the zip build layout: the first variant's package is its <id>.zip (tree.ziplayout)
        import zipfile  # lazy: only a zip-layout tree needs it

        module_dir = zipfile.Path(module_dir / f"{metadata.id}.zip")  # type: ignore[assignment]
    if build is not None:
        general = build.general
        license, upstream, source = general.license, general.upstream, general.source
        for ext in EXT_DIRS:
            if (kernel_dir / ext / build.python_name).is_dir():
                module_dir = kernel_dir / ext / build.python_name
                break
    elif metadata is not None:
        license, upstream, source = metadata.license, metadata.upstream, metadata.source
    else:
        raise ValueError("tree_context needs build.toml (build) or a variant's metadata")
    return context_for_module(
        module_dir,
        repo_id=repo_id,
        version=version,
        license=license,
        has_benchmark=any((d / "benchmarks" / "benchmark.py").is_file() for d in (kernel_dir, *extra_dirs)),
        upstream=None if upstream is None else str(upstream),
        source=None if source is None else str(source),
    )


def template_for(card_md: Path | None) -> tuple[str, Path | None]:
    """``(template, its path)``: the kernel's own ``CARD.md`` when it exists, else the default
    template (path None)."""
    if card_md is not None and card_md.is_file():
        return card_md.read_text(encoding="utf-8"), card_md
    return default_template(), None


def render_card(template: str, context: CardContext, *, template_path: Path | None = None) -> str:
    """Render ``template`` (Jinja2, ``trim_blocks``) and end it with its ``CardStamp``
    (``template_path`` None: the default template); an unknown variable is an error."""
    import jinja2  # lazy: jinja2 loads only when a card is rendered

    env = jinja2.Environment(
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    where = template_path or "the default card template"
    try:
        text = env.from_string(template).render(**context.as_dict())
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(
            f"{where}:{exc.lineno}: card template syntax error: {exc.message}",
            hint="CARD.md is a Jinja2 template; see docs/publishing.md for the variables it can use",
        ) from None
    except jinja2.UndefinedError as exc:
        raise ConfigError(
            f"{where}: card template uses an unknown variable: {exc.message}",
            hint="available: repo_id, version, functions, layers, has_benchmark, upstream, source, license",
        ) from None
    body = text if not text or text.endswith("\n") else text + "\n"
    return f"{body}\n{CardStamp(context.repo_id, template_path is None).line()}\n"
