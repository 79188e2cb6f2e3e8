"""silu-and-mul-bad-registration must fail the ops lint: its op name is a literal.

(A builder fixture: it runs kernel-builder's lint on the package sources.)
"""

from pathlib import Path

from kernel_builder.tree.opslint import lint_tree

PACKAGE = Path(__file__).resolve().parents[1] / "torch-ext" / "silu_and_mul"


def test_literal_namespace_is_reported():
    [violation] = lint_tree(PACKAGE)
    assert violation.helper == "custom_op" and violation.target == "silu_and_mul"
    assert "add_op_namespace_prefix" in str(violation)
