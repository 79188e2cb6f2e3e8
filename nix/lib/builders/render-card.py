"""Render a kernel's card into the bundle (run by bundle-builder.sh with the driver Python).

usage: render-card.py SOURCE BUNDLE -- SOURCE holds build.toml and, optionally, CARD.md and
benchmarks/; BUNDLE holds the variants. The card is written to BUNDLE/CARD.md with the
context (``hub.card.tree_context``), the repo id (``hub.card.card_repo_id``: ``[general.hub]
repo-id``, else none, and the card's stamp says so) and the template
(``hub.card.template_for``) that the upload command uses; upload renders the card again
unless its stamp names the repository it uploads to.
"""

import sys
from pathlib import Path

from kernel_builder.config import load
from kernel_builder.hub.card import card_repo_id, render_card, template_for, tree_context

source, bundle = Path(sys.argv[1]), Path(sys.argv[2])
build = load(source)
general = build.general
context = tree_context(
    source,
    sorted(p for p in bundle.iterdir() if (p / "metadata.json").is_file()),
    repo_id=card_repo_id(build),
    version=general.version,
    build=build,
    extra_dirs=(bundle,),
)
template, template_path = template_for(source / "CARD.md")
(bundle / "CARD.md").write_text(render_card(template, context, template_path=template_path))
