"""Ops lint: every op a kernel registers from Python must carry the build's namespace.

``torch.library`` helpers used as decorators (``custom_op``, ``triton_op``,
``register_kernel``, ``register_fake``, ``register_vmap``, ``register_torch_dispatch``)
take the op name first. A literal such as ``"myns::silu"`` would collide when two builds
of a kernel are loaded in one process, so the name must be a direct
``add_op_namespace_prefix(...)`` call. This is a static AST scan; nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attrs

__all__ = ["LintViolation", "lint_archive", "lint_source", "lint_tree", "REGISTRATION_HELPERS"]

REGISTRATION_HELPERS = frozenset(
    {"custom_op", "triton_op", "register_kernel", "register_fake", "register_vmap", "register_torch_dispatch"}
)


@attrs.frozen
class LintViolation:
    path: str
    line: int
    helper: str
    target: str

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line}: @{self.helper} on {self.target!r} does not name the op with "
            "add_op_namespace_prefix(...)"
        )


def _callee_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_prefixed(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Call) and _callee_name(node.func) == "add_op_namespace_prefix"


def _op_name_arg(call: ast.Call) -> ast.expr | None:
    if call.args:
        return call.args[0]
    for keyword in call.keywords:
        if keyword.arg in ("name", "op", "qualname", "op_name"):
            return keyword.value
    return None


def lint_source(text: str, path: str = "<string>") -> list[LintViolation]:
    """Violations in one module's source (top-level definitions only, as the reference)."""
    tree = ast.parse(text, filename=path)
    found = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for decorator in node.decorator_list:
            if not isinstance(decorator, ast.Call):
                continue
            helper = _callee_name(decorator.func)
            if helper in REGISTRATION_HELPERS and not _is_prefixed(_op_name_arg(decorator)):
                found.append(LintViolation(path, decorator.lineno, helper, node.name))
    return found


def lint_tree(root: Path) -> list[LintViolation]:
    """Lint every ``*.py`` under ``root`` (``__pycache__`` skipped); paths relative to it."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        found.extend(lint_source(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix()))
    return found


def lint_archive(archive: Path) -> list[LintViolation]:
    """Lint every ``*.py`` in a zip-layout variant's ``<id>.zip``; paths ``<id>.zip/<entry>``.
    An archive that is missing or unreadable has nothing to lint (the layout check says why)."""
    import zipfile  # lazy: only zip-layout variants have an archive

    found = []
    try:
        with zipfile.ZipFile(archive) as z:
            for info in sorted(z.infolist(), key=lambda i: i.filename):
                if info.filename.endswith(".py") and "__pycache__" not in info.filename.split("/"):
                    text = z.read(info).decode("utf-8")
                    found.extend(lint_source(text, f"{archive.name}/{info.filename}"))
    except (OSError, zipfile.BadZipFile, ValueError):
        return []
    return found
