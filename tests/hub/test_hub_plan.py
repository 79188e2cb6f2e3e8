"""The pure upload planner: what is added, kept and deleted on each branch."""

from __future__ import annotations

from kernel_builder.tree.digest import scan_variant
from kernel_builder.hub.plan import (
    BranchPlan,
    git_blob_oid,
    local_file,
    plan_main_branch,
    plan_version_branch,
    variant_files,
)


def _f(path: str, data: bytes = b"x"):
    return local_file(path, content=data)


LOCAL = {
    "torch-cpu": [_f("build/torch-cpu/__init__.py"), _f("build/torch-cpu/_ops.py")],
}
BENCH = [_f("benchmarks/benchmark.py")]
REMOTE = {
    ".gitattributes": "g",
    "README.md": "r",
    "build/torch-cpu/__init__.py": git_blob_oid(b"x"),
    "build/torch-cpu/stale.py": "s",
    "build/torch-cuda/__init__.py": "c",
    "benchmarks/benchmark_old.py": "b",
    "benchmarks/data.txt": "d",
}


def test_existing_branch_deletes_only_inside_uploaded_variants():
    plan = plan_version_branch("v1", LOCAL, BENCH, REMOTE, branch_exists=True)
    assert [f.path_in_repo for f in plan.adds] == ["build/torch-cpu/_ops.py", "benchmarks/benchmark.py"]
    assert plan.deletes == ("benchmarks/benchmark_old.py", "build/torch-cpu/stale.py")
    assert plan.unchanged == 1 and not plan.create


def test_new_branch_clears_build_and_benchmarks():
    plan = plan_version_branch("v2", LOCAL, BENCH, REMOTE, branch_exists=False)
    assert plan.create
    assert plan.deletes == (
        "benchmarks/benchmark_old.py",
        "benchmarks/data.txt",
        "build/torch-cpu/stale.py",
        "build/torch-cuda/__init__.py",
    )


def test_unchanged_tree_is_an_empty_plan():
    remote = {f.path_in_repo: f.oid for files in LOCAL.values() for f in files}
    plan = plan_version_branch("v1", LOCAL, [], remote, branch_exists=True)
    assert plan.empty and plan.unchanged == 2


def test_main_only_gets_the_card():
    card = _f("README.md", b"card")
    assert plan_main_branch(card, {"README.md": git_blob_oid(b"card")}, "c").empty
    plan = plan_main_branch(card, {"README.md": "old", "build/x": "y"}, "c")
    assert [f.path_in_repo for f in plan.adds] == ["README.md"] and plan.deletes == ()


def test_batches_split_only_above_the_limit():
    adds = tuple(_f(f"build/v/{i}.py") for i in range(2500))
    plan = BranchPlan("v1", False, adds, ("build/v/old.py",))
    assert len(plan.batches()) == 3
    assert [len(a) + len(d) for a, d in plan.batches()] == [1000, 1000, 501]
    assert len(BranchPlan("v1", False, adds[:999], ("x",)).batches()) == 1


def test_variant_files_skip_bytecode_and_match_git(tmp_path):
    (tmp_path / "sub" / "__pycache__").mkdir(parents=True)
    (tmp_path / "a.py").write_bytes(b"hello\n")
    (tmp_path / "sub" / "b.py").write_bytes(b"")
    (tmp_path / "sub" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "c.pyc").write_bytes(b"\0")
    files = variant_files(scan_variant(tmp_path), "build/torch-cpu")
    assert [f.path_in_repo for f in files] == ["build/torch-cpu/a.py", "build/torch-cpu/sub/b.py"]
    # `git hash-object` of "hello\n" and of the empty file.
    assert files[0].oid == "ce013625030ba8dba906f756967f9e9ca394464a"
    assert files[1].oid == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
