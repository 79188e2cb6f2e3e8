"""docs/reliability.md's tables name tests: each named test must exist (issue 45 #26).

Every row's last cell names the tests that check it, as ``file.py::test`` (paths relative
to ``tests/``), ``file.py::Class::test``, a whole ``file.py``, ``::test`` (the file named
last), ``...[id, id]`` or ``[id, id]`` (parameter ids of the test named last), or a bare
``test_name`` (in the file named last). This test resolves each one against the test
files' syntax trees: a renamed, moved or deleted test, or a parameter id that no longer
appears in its file, fails it, naming the row.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

TESTS = Path(__file__).resolve().parent
DOC = TESTS.parent / "docs" / "reliability.md"

_SPAN = re.compile(r"`([^`]+)`")
_FULL = re.compile(r"^(?P<file>[\w/]+\.py)(?P<names>(?:::\w+)*)(?:\[(?P<ids>[^\]]*)\])?$")
_TAIL = re.compile(r"^(?:\.\.\.)?(?P<names>(?:::\w+)*)(?:\[(?P<ids>[^\]]*)\])?$")
_BARE = re.compile(r"^(?P<names>test_\w+)(?:\[(?P<ids>[^\]]*)\])?$")


@attrs.frozen
class Ref:
    """One test a row names: a file, the names inside it (class, function), parameter ids."""

    line: int
    file: str
    names: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()

    def __str__(self) -> str:
        text = "::".join((self.file, *self.names))
        return text + (f"[{', '.join(self.ids)}]" if self.ids else "")


def _ids(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip()) if text else ()


def _names(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.split("::") if part)


def table_refs(markdown: str) -> tuple[list[Ref], list[str]]:
    """The references of every table row's last cell, and the rows whose last cell names
    no test at all (``same`` and ``...[ids]`` refer to the row above)."""
    refs: list[Ref] = []
    empty: list[str] = []
    current: Ref | None = None
    for number, line in enumerate(markdown.splitlines(), 1):
        if not line.startswith("|") or re.match(r"^\|[-| ]+\|$", line):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if cells[-1] == "test":  # a header row
            continue
        found = 0
        for span in _SPAN.findall(cells[-1]):
            full, tail, bare = _FULL.match(span), _TAIL.match(span), _BARE.match(span)
            if full:
                current = Ref(number, full["file"], _names(full["names"]), _ids(full["ids"]))
            elif current is not None and tail and (tail["names"] or tail["ids"]):
                names = _names(tail["names"]) if tail["names"] else current.names
                current = Ref(number, current.file, names, _ids(tail["ids"]))
            elif current is not None and bare:
                current = Ref(number, current.file, (bare["names"],), _ids(bare["ids"]))
            else:
                continue
            refs.append(current)
            found += 1
        if not found and not re.match(r"^same\b", cells[-1]):
            empty.append(f"line {number}: {cells[-1]!r}")
    return refs, empty


def _defined(tree: ast.Module, names: tuple[str, ...]) -> bool:
    body: list[ast.stmt] = tree.body
    for name in names:
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == name), None)
        if node is None:
            return False
        body = node.body if isinstance(node, ast.ClassDef) else []
    return True


def collected_ids(refs: list[Ref]) -> dict[tuple[str, ...], set[str]]:
    """The parameter ids pytest collects for the tests that ``refs`` name with ids:
    ``(file, *names) -> {id}`` (stacked parametrizations join theirs with ``-``)."""
    files = sorted({ref.file for ref in refs if ref.ids and (TESTS / ref.file).is_file()})
    if not files:
        return {}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           *(str(TESTS / f) for f in files)], capture_output=True, text=True, cwd=TESTS.parent, timeout=300)
    found: dict[tuple[str, ...], set[str]] = {}
    for line in done.stdout.splitlines():
        match = re.match(r"^tests/(?P<file>\S+?\.py)(?P<names>(?:::\w+)+)\[(?P<id>.*)\]$", line)
        if match:
            found.setdefault((match["file"], *_names(match["names"])), set()).add(match["id"])
    return found


def problems(refs: list[Ref], root: Path = TESTS, ids: dict[tuple[str, ...], set[str]] | None = None) -> list[str]:
    """What does not resolve: a missing file, a name not defined at that place, a parameter
    id that is neither one pytest collects for that test (``ids``) nor in the file's text
    (a parametrized function's name, ``[_no_metadata]``)."""
    ids = collected_ids(refs) if ids is None else ids
    found: list[str] = []
    for ref in refs:
        path = root / ref.file
        if not path.is_file():
            found.append(f"docs/reliability.md:{ref.line}: {ref}: no file tests/{ref.file}")
            continue
        text = path.read_text()
        if ref.names and not _defined(ast.parse(text), ref.names):
            found.append(f"docs/reliability.md:{ref.line}: {ref}: tests/{ref.file} defines no {'::'.join(ref.names)}")
        for ident in ref.ids:
            if ident not in ids.get((ref.file, *ref.names), set()) and not re.search(rf"\b{re.escape(ident)}\b", text):
                found.append(f"docs/reliability.md:{ref.line}: {ref}: parameter id {ident!r} is not one of its collected ids, nor in tests/{ref.file}")
    return found


def test_every_test_the_reliability_tables_name_exists() -> None:
    refs, empty = table_refs(DOC.read_text())
    assert len(refs) > 100  # the parser reads the tables (a format change must not make this vacuous)
    assert empty == [], "rows that name no test"
    assert problems(refs) == []


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("`flake/test_reliability_sandbox.py::test_gone`", "defines no test_gone"),
        ("`flake/test_no_such_file.py`", "no file tests/flake/test_no_such_file.py"),
        ("`flake/test_reliability_sandbox.py::Listener::nope`", "defines no Listener::nope"),
        ("`flake/test_reliability_sandbox.py::test_an_unsandboxed_build_still_evaluates_in_the_sandbox`, `::test_renamed`",
         "defines no test_renamed"),
        ("`hub/test_reliability_tree_links.py::test_hash_check_and_upload_refuse_what_is_not_the_variants_own_file[file-link, no-such-case]`",
         "parameter id 'no-such-case' is not"),
    ],
    ids=["renamed-test", "moved-file", "class-method", "tail-reference", "parameter-id"],
)
def test_a_test_that_disappears_fails_the_check(cell: str, expected: str) -> None:
    refs, empty = table_refs(f"| fault | what happens | test |\n|---|---|---|\n| x | y | {cell} |\n")
    assert refs and empty == []
    assert any(expected in problem for problem in problems(refs)), problems(refs)


def test_the_reference_forms_resolve_as_documented() -> None:
    table = (
        "| a | b | test |\n|---|---|---|\n"
        "| r1 | x | `config/test_config_hostile.py::test_hostile_build_toml_gives_one_clear_error[fifo]` (CLI) |\n"
        "| r2 | x | same `[dev-zero]` |\n"
        "| r3 | x | `...[deep-array]`, `::test_update_build_writes_through_a_symlink`, `test_a_huge_kernel_name_stops_build_local_before_anything` |\n"
        "| r4 | x | same |\n"
        "| r5 | x | nothing here |\n"
    )
    refs, empty = table_refs(table)
    assert [str(r) for r in refs] == [
        "config/test_config_hostile.py::test_hostile_build_toml_gives_one_clear_error[fifo]",
        "config/test_config_hostile.py::test_hostile_build_toml_gives_one_clear_error[dev-zero]",
        "config/test_config_hostile.py::test_hostile_build_toml_gives_one_clear_error[deep-array]",
        "config/test_config_hostile.py::test_update_build_writes_through_a_symlink",
        "config/test_config_hostile.py::test_a_huge_kernel_name_stops_build_local_before_anything",
    ]
    assert empty == ["line 7: 'nothing here'"]
