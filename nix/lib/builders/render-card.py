"""Render a kernel's card into the bundle (run by bundle-builder.sh with the driver Python).

usage: render-card.py SOURCE BUNDLE -- SOURCE holds build.toml and, optionally, CARD.md and
benchmarks/; BUNDLE holds the variants. The card is written to BUNDLE/CARD.md with the
context (``hub.card.tree_context``) and the template (``hub.card.template_for``) that the
upload command uses.
"""

import sys
from pathlib import Path

from kernel_builder.config import load
from kernel_builder.hub.card import render_card, template_for, tree_context

source, bundle = Path(sys.argv[1]), Path(sys.argv[2])
build = load(source)
general = build.general
context = tree_context(
    source,
    sorted(p for p in bundle.iterdir() if (p / "metadata.json").is_file()),
    # upload's default target: [general.hub] repo-id, else the kernel's name
    repo_id=general.hub.repo_id if general.hub and general.hub.repo_id else general.name,
    version=general.version,
    build=build,
    extra_dirs=(bundle,),
)
template, template_path = template_for(source / "CARD.md")
(bundle / "CARD.md").write_text(render_card(template, context, template_path=template_path))
