"""driver.job: what a derivation step receives, read once from argv and the environment.

The job is made at each entry point (plan, units, run_variant) by one parser; after that
no module under driver/ or tree/ reads an environment variable (the AST scan below).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from boundaries import PACKAGE, module_name
from kernel_builder.driver import job as job_mod
from kernel_builder.driver.job import ENV, Options, Sandbox, UnitJob, VariantJob, parse, parser
from kernel_builder.errors import BuildError

ARGV = ["--source", "examples/relu", "--variant", "torch213-cxx11-cpu-x86_64-linux", "--out", "out",
        "--toolchain-python", "/tc/bin/python"]

# Where a module under driver/ or tree/ may name the environment as a whole: it hands it on
# to a child process unread (module, function) -> why.
HANDED_ON = {
    ("kernel_builder.tree.checks", "start_import_check"):
        "the import check's interpreter gets this process's environment when no job gives one (`kernel-builder check`)",
    ("kernel_builder.driver.rust", "build_staticlib"): "cargo runs in the environment, with its own variables set over it",
    ("kernel_builder.backends.rust", "build_staticlib"): "(the same, where the backends' modules put it)",
}


def test_run_variant_job_is_argv_and_environment() -> None:
    environ = {
        ENV.PROVIDER: "pinned", ENV.STRICT_MANYLINUX: "1", ENV.PREFIX_MAPS: "-ffile-prefix-map=/nix/a=/a  -ffile-prefix-map=/nix/b=/b",
        ENV.TARGET_SYSTEM: "aarch64-linux", ENV.TARGET_PYTHON: "/qemu/python", ENV.BUILD_TOP: "/build",
        ENV.BUILD_CORES: "6", ENV.SHELL: "/nix/store/x-bash/bin/sh", ENV.CUDA_CAPABILITIES: "9.0, 10.0",
        ENV.BUILD_LAYOUT: "zip", "PATH": "/tc/bin",
    }
    job = parse("run_variant", [*ARGV, "--unique-id", "abc", "--kernel-commit", "a" * 40, "--kernel-dirty", "--jobs", "2",
                                "--prebuilt-module", "/linked", "--no-import-check"], environ)
    assert isinstance(job, VariantJob)
    assert job.source == Path("examples/relu").resolve() and job.out == Path("out").resolve()
    assert job.variant == "torch213-cxx11-cpu-x86_64-linux"
    tc = job.toolchain
    assert (tc.python, tc.provider, tc.pinned) == ("/tc/bin/python", "pinned", True)
    assert tc.prefix_maps == ("-ffile-prefix-map=/nix/a=/a", "-ffile-prefix-map=/nix/b=/b")
    assert tc.target.platform.system == "aarch64-linux" and tc.target.python == "/qemu/python"
    assert dict(tc.environ) == environ  # handed on whole to the tools
    assert job.options == Options(uid="abc", kernel_commit="a" * 40, kernel_dirty=True, jobs=2, strict_manylinux=True,
                                  import_check=False, cuda_capabilities=("9.0", "10.0"), prebuilt_module=Path("/linked"),
                                  build_layout="zip")
    assert job.sandbox == Sandbox(top="/build", cores=6, shell="/nix/store/x-bash/bin/sh")
    assert job.jobs == 2 and job.sandbox.in_nix and job.sandbox.temp == "/build"


def test_argv_wins_over_the_environment_defaults() -> None:
    environ = {ENV.CUDA_CAPABILITIES: "9.0", ENV.BUILD_LAYOUT: "zip", ENV.STRICT_MANYLINUX: "0"}
    job = parse("run_variant", [*ARGV, "--cuda-capabilities", "10.0", "--build-layout", "files", "--strict-manylinux"], environ)
    assert (job.options.cuda_capabilities, job.options.build_layout, job.options.strict_manylinux) == (("10.0",), "files", True)
    plain = parse("run_variant", ARGV, {})
    assert plain.options == Options() and plain.toolchain.provider == "host" and not plain.toolchain.pinned
    assert plain.toolchain.target.platform is None and plain.sandbox == Sandbox()
    assert plain.jobs >= 1 and not plain.sandbox.in_nix


def test_the_job_is_a_frozen_value() -> None:
    job = parse("plan", ARGV, {"X": "1"})
    with pytest.raises(AttributeError):
        job.variant = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        job.toolchain.environ["X"] = "2"  # type: ignore[index]
    assert job == parse("plan", ARGV, {"X": "changed"})  # the environment as a whole is not part of its value


def test_plan_takes_the_variant_options_it_needs() -> None:
    job = parse("plan", [*ARGV, "--unique-id", "u"], {ENV.CUDA_CAPABILITIES: "8.0", ENV.STRICT_MANYLINUX: "1"})
    assert job.options == Options(uid="u", cuda_capabilities=("8.0",))  # the plan neither checks nor imports
    with pytest.raises(SystemExit) as exc:
        parse("plan", [*ARGV, "--jobs", "2"], {})
    assert exc.value.code == 2


@pytest.mark.parametrize(
    ("argv", "fields"),
    [
        (["deps", "--plan", "p", "--sources", "s", "--out", "o", "--unit", "a.cu", "--unit-file", "f", "--alias", "/h=/c",
          "--alias", "nonsense"],
         {"step": "deps", "plan": Path("p"), "sources": Path("s"), "only": "a.cu", "unit_file": Path("f"), "aliases": (("/h", "/c"),)}),
        (["object", "--unit", "u.json", "--files", "k", "--label", "v", "--out", "o"],
         {"step": "object", "unit": Path("u.json"), "files": Path("k"), "label": "v"}),
        (["object", "--plan", "p", "--source", "a.cu", "--file", "f", "--headers", "h", "--unique-id", "ab-cd", "--out", "o"],
         {"step": "object", "plan": Path("p"), "source": "a.cu", "file": Path("f"), "headers": Path("h"), "uid": "ab_cd"}),
        (["link", "--plan", "p", "--objects", "a", "b", "--unique-id", "x", "--out", "o"],
         {"step": "link", "objects": (Path("a"), Path("b")), "uid": "x"}),
        (["merge", "--parts", "a", "b", "--out", "o"], {"step": "merge", "parts": (Path("a"), Path("b"))}),
    ],
)
def test_units_jobs(argv: list[str], fields: dict[str, object]) -> None:
    job = parse("units", argv, {ENV.BUILD_TOP: "/build", ENV.BUILD_CORES: "0", ENV.SHELL: "/sh"})
    assert isinstance(job, UnitJob) and job.out == Path("o")
    assert job.sandbox == Sandbox(top="/build", cores=None, shell="/sh")
    for name, value in fields.items():
        assert getattr(job, name) == value, name


@pytest.mark.parametrize(
    ("entry", "argv", "environ", "message"),
    [
        ("run_variant", ARGV, {ENV.TARGET_SYSTEM: "aarch64"}, r"\$KERNEL_BUILDER_TARGET_SYSTEM='aarch64' is not a Nix system"),
        ("run_variant", ARGV, {ENV.BUILD_LAYOUT: "tar"}, r"unknown build layout 'tar'; expected one of files, zip"),
        ("plan", ARGV, {ENV.BUILD_CORES: "many"}, r"\$NIX_BUILD_CORES='many' is not a number of cores"),
        ("units", ["object", "--plan", "p", "--out", "o"], {}, r"object: --unit, or --plan, --source and --file, are required"),
    ],
)
def test_a_bad_value_is_a_clear_error(entry: str, argv: list[str], environ: dict[str, str], message: str) -> None:
    with pytest.raises(BuildError, match=message) as exc:
        parse(entry, argv, environ)  # type: ignore[arg-type]
    assert exc.value.hint or entry == "units"


@pytest.mark.parametrize(
    ("entry", "argv"),
    [
        ("run_variant", ARGV[:-2]),  # no --toolchain-python
        ("run_variant", [*ARGV, "--kernel-dirty"]),  # needs --kernel-commit
        ("run_variant", [*ARGV, "--build-layout", "tar"]),
        ("units", ["compile", "--out", "o"]),
    ],
)
def test_bad_argv_exits_2_with_usage(entry: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse(entry, argv, {})  # type: ignore[arg-type]
    assert exc.value.code == 2
    assert f"usage: python -m kernel_builder.driver.{entry}" in capsys.readouterr().err


def test_one_parser_serves_the_three_entry_points() -> None:
    assert job_mod.ENTRY_POINTS == ("plan", "run_variant", "units")
    for entry in job_mod.ENTRY_POINTS:
        assert parser(entry).prog == f"python -m kernel_builder.driver.{entry}"
    with pytest.raises(ValueError, match="no driver entry point"):
        parser("objects")  # type: ignore[arg-type]


def test_local_builds_take_the_toolchain_from_the_environment_and_the_options_as_given() -> None:
    """build --local: no option defaults from the environment (those are run_variant's)."""
    environ = {ENV.STRICT_MANYLINUX: "1", ENV.BUILD_LAYOUT: "zip", ENV.PREFIX_MAPS: "-ffile-prefix-map=/a=/b"}
    job = VariantJob.from_environ("examples/relu", "torch-cpu", "build", toolchain_python="py",
                                  options=Options(work_dir="/w", jobs=3), environ=environ)
    assert job.options == Options(work_dir=Path("/w"), jobs=3) and job.toolchain.prefix_maps == ("-ffile-prefix-map=/a=/b",)
    with pytest.raises(BuildError, match="--kernel-dirty needs --kernel-commit"):
        Options(kernel_dirty=True)


def test_the_entry_point_reports_a_bad_environment_value_and_exits_1(tmp_path: Path) -> None:
    """Through the real entry point: the job's error, before anything is built."""
    done = subprocess.run(
        [sys.executable, "-m", "kernel_builder.driver.run_variant", "--source", str(tmp_path), "--variant", "torch-cpu",
         "--out", str(tmp_path / "out"), "--toolchain-python", sys.executable],
        capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", ENV.TARGET_SYSTEM: "arm"}, timeout=120,
        cwd=Path(__file__).resolve().parents[2], check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "error: $KERNEL_BUILDER_TARGET_SYSTEM='arm' is not a Nix system" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


# -- no environment reads below the entry points --------------------------------------------------


def _environment_uses(tree: ast.AST) -> list[tuple[int, str, str]]:
    """(line, function, how) for each use of the environment: ``read`` (a variable by name:
    ``os.environ.get``/``[...]``/``in``, ``os.getenv``, ``from os import environ``) or
    ``whole`` (``os.environ`` as a value, handed on)."""
    parents: dict[ast.AST, ast.AST] = {}
    functions: dict[ast.AST, str] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions[child] = node.name
            elif node in functions:
                functions[child] = functions[node]
    found = []
    for node in ast.walk(tree):
        where = functions.get(node, "<module>")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
            if node.attr in ("getenv", "getenvb", "putenv", "unsetenv", "environb"):
                found.append((node.lineno, where, "read"))
            elif node.attr == "environ":
                parent = parents.get(node)
                read = isinstance(parent, (ast.Attribute, ast.Subscript)) or (
                    isinstance(parent, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops))
                found.append((node.lineno, where, "read" if read else "whole"))
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and any(a.name in ("environ", "getenv") for a in node.names):
            found.append((node.lineno, where, "read"))
    return found


def _modules_below_the_entry_points() -> list[Path]:
    roots = [PACKAGE / "driver", PACKAGE / "tree"]
    return sorted(p for root in roots for p in root.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", _modules_below_the_entry_points(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_module_below_the_entry_points_reads_the_environment(path: Path) -> None:
    module = module_name(path)
    uses = _environment_uses(ast.parse(path.read_text(encoding="utf-8")))
    if module == "kernel_builder.driver.job":
        assert uses, "driver.job is where the environment is read"
        assert {where for _, where, _ in uses} <= {"from_environ", "parse"}, uses
        return
    reads = [(line, where) for line, where, how in uses if how == "read"]
    assert reads == [], f"{module} reads environment variables at {reads}: read them in driver.job (a job field)"
    whole = [(line, where) for line, where, how in uses if how == "whole" and (module, where) not in HANDED_ON]
    assert whole == [], f"{module} uses os.environ at {whole}: take the job's (ToolchainInputs.environ)"


def test_the_scan_sees_reads_and_hand_ons() -> None:
    code = (
        "import os\nfrom os import environ\n"
        "def f():\n    return os.environ.get('A'), os.environ['B'], 'C' in os.environ, os.getenv('D')\n"
        "def g():\n    return dict(os.environ, X='1')\n"
        "TOP = os.environ.get('E')\n"
    )
    uses = _environment_uses(ast.parse(code))
    assert sorted((where, how) for _, where, how in uses) == [
        ("<module>", "read"), ("<module>", "read"), ("f", "read"), ("f", "read"), ("f", "read"), ("f", "read"), ("g", "whole"),
    ]
