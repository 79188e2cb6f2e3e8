"""Render a kernel's CARD.md template into the bundle (run by bundle-builder.sh).

usage: render-card.py SOURCE BUNDLE -- SOURCE holds build.toml and, optionally, CARD.md; the
card is written to BUNDLE/CARD.md with the context and the template the upload command uses
(the kernel's CARD.md, else kernel-builder's default card template).
"""

import sys
from pathlib import Path

from kernel_builder.config import load
from kernel_builder.hub.card import context_for_module, default_template, render_card

source, bundle = Path(sys.argv[1]), Path(sys.argv[2])
general = load(source).general
variants = sorted(p for p in bundle.iterdir() if (p / "metadata.json").is_file())
context = context_for_module(
    variants[0] if variants else None,
    repo_id=general.hub.repo_id if general.hub and general.hub.repo_id else general.name,
    version=general.version,
    license=general.license.lower(),
    has_benchmark=(source / "benchmarks" / "benchmark.py").is_file(),
    upstream=str(general.upstream.original) if general.upstream else None,
    source=str(general.source.original) if general.source else None,
)
template = source / "CARD.md"
if template.is_file():
    text = render_card(template.read_text(encoding="utf-8"), context, template_path=template)
else:
    text = render_card(default_template(), context)
(bundle / "CARD.md").write_text(text)
