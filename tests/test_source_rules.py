"""Rules of the source tree that no linter here checks.

Function-local imports: an import inside a function hides a dependency and costs a lookup
on every call, so the package keeps them only where start-up time (``kernel-builder
--help`` must not import torch, huggingface_hub or rich) or a platform or optional
dependency needs them, and says why with a ``# lazy: <reason>`` comment on the import's
line or the line above.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "kernel_builder"


def unexplained_local_imports(source: str) -> list[int]:
    """Line numbers of imports inside functions that carry no ``# lazy:`` reason."""
    lines = source.splitlines()
    found = []

    def explained(node: ast.stmt) -> bool:
        window = lines[max(node.lineno - 2, 0) : node.end_lineno or node.lineno]
        return any("# lazy:" in line for line in window)

    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not explained(node):
                found.append(node.lineno)
    return sorted(set(found))


def test_the_rule_sees_local_imports_and_their_reasons() -> None:
    source = (
        "import os\n"
        "def f():\n"
        "    import json\n"
        "    # lazy: torch takes seconds to import\n"
        "    import torch\n"
        "    from rich import table  # lazy: rich is for terminals only\n"
        "    def g():\n"
        "        from a import b\n"
    )
    assert unexplained_local_imports(source) == [3, 8]


def test_every_function_local_import_says_why() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line in unexplained_local_imports(path.read_text(encoding="utf-8")):
            offenders.append(f"{path.relative_to(PACKAGE)}:{line}")
    assert not offenders, (
        "function-local imports without a `# lazy: <reason>` comment (hoist them to the top of "
        "the module, or say why start-up time needs them here):\n  " + "\n  ".join(offenders)
    )
