"""kernel-builder benchmark, run as a real subprocess on a hand-laid CPU kernel tree (local
and on the local Hub test server): the table, --json, --output, and located refusals of bad
benchmark scripts (syntax errors, failing workloads, symlinks out of the kernel, FIFOs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hub_fixture import publish

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "loader"))
from loader_trees import write_variant  # noqa: E402

BENCHMARK = """\
from kernel_builder.benchmark import Benchmark


class Relu(Benchmark):
    seed = 0

    def setup(self):
        self.x = [-1.0, 2.0, -3.0, 4.0] * 16

    def benchmark_relu(self):
        self.out = self.kernel.relu(self.x)

    def verify_relu(self):
        return [max(v, 0.0) for v in self.x]

    def benchmark_variant(self):
        self.out = self.kernel.VARIANT
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "relu"
    write_variant(root / "build", "torch-cpu")
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "benchmark_relu.py").write_text(BENCHMARK)
    (root / "benchmarks" / "helpers.py").write_text("raise SystemExit('not a benchmark script: never imported')\n")
    return root


def kb(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernel_builder", "benchmark", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def test_table_lists_each_workload_with_speedup(tree: Path) -> None:
    proc = kb(str(tree), "--iterations", "5", "--warmup", "1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # the table is for people: stderr
    assert "torch-cpu" in proc.stderr
    rows = {line.split("│")[1].strip(): line for line in proc.stderr.splitlines() if line.startswith("│")}
    assert set(rows) == {"Relu.relu", "Relu.variant"}
    header = next(line for line in proc.stderr.splitlines() if "Benchmark" in line and "Mean" in line)
    for column in ("N", "Speedup", "Mean", "Std", "Min", "Max", "Ref", "OK"):
        assert column in header
    assert "x" in rows["Relu.relu"].split("│")[3] and "yes" in rows["Relu.relu"]  # verified, speedup shown
    assert rows["Relu.variant"].split("│")[3].strip() == ""  # no verify_: no speedup


def test_json_and_output_file(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    proc = kb(str(tree), "--iterations", "3", "--warmup", "0", "--json", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert json.loads(out.read_text()) == document
    assert document["variant"] == "torch-cpu" and document["device"] == "cpu" and document["iterations"] == 3
    by_name = {r["workload"]: r for r in document["results"]}
    assert set(by_name) == {"relu", "variant"}
    relu = by_name["relu"]
    assert relu["benchmark"] == "Relu" and relu["script"] == "benchmark_relu.py" and relu["verified"] is True
    timing = relu["timing"]
    assert timing["iterations"] == 3 and 0 < timing["min_ms"] <= timing["mean_ms"] <= timing["max_ms"]
    assert relu["speedup"] == pytest.approx(relu["reference"]["mean_ms"] / timing["mean_ms"], rel=0.05, abs=1e-3)
    assert by_name["variant"]["reference"] is None and by_name["variant"]["speedup"] is None



def test_summarize_is_population_statistics() -> None:
    from kernel_builder.benchmarking import summarize

    timing = summarize([1.0, 2.0, 3.0, 6.0])
    assert (timing.iterations, timing.mean_ms, timing.min_ms, timing.max_ms) == (4, 3.0, 1.0, 6.0)
    assert timing.std_ms == pytest.approx(3.5**0.5)
    with pytest.raises(ValueError):
        summarize([])


def test_script_written_for_pypi_kernels_runs(tree: Path) -> None:
    """A script subclassing PyPI kernels' Benchmark (as kernels-community's do) runs unchanged."""
    text = BENCHMARK.replace("from kernel_builder.benchmark import Benchmark", "from kernels.benchmark import Benchmark")
    (tree / "benchmarks" / "benchmark_relu.py").write_text(text)
    proc = kb(str(tree), "--iterations", "2", "--warmup", "0", "--json")
    assert proc.returncode == 0, proc.stderr
    assert {r["workload"] for r in json.loads(proc.stdout)["results"]} == {"relu", "variant"}

def test_syntax_error_is_located(tree: Path) -> None:
    (tree / "benchmarks" / "benchmark_bad.py").write_text("from kernel_builder.benchmark import Benchmark\n\ndef broken(:\n")
    proc = kb(str(tree), "--iterations", "1")
    assert proc.returncode == 3, proc.stderr
    assert f"{tree / 'benchmarks' / 'benchmark_bad.py'}:3:12: invalid Python" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_failing_workload_is_located(tree: Path) -> None:
    text = BENCHMARK + "\n    def benchmark_boom(self):\n        self.kernel.missing()\n"
    line = text.splitlines().index("        self.kernel.missing()") + 1
    (tree / "benchmarks" / "benchmark_relu.py").write_text(text)
    proc = kb(str(tree), "--iterations", "1")
    assert proc.returncode == 1, proc.stderr
    assert f"{tree / 'benchmarks' / 'benchmark_relu.py'}:{line}: Relu.boom failed: AttributeError" in proc.stderr


def test_wrong_output_fails_verification(tree: Path) -> None:
    (tree / "benchmarks" / "benchmark_relu.py").write_text(BENCHMARK.replace("max(v, 0.0)", "v"))
    proc = kb(str(tree), "--iterations", "1")
    assert proc.returncode == 1
    assert "Relu.relu: the kernel's output (self.out) does not match verify_relu()" in proc.stderr


def test_script_without_benchmark_class(tree: Path) -> None:
    (tree / "benchmarks" / "benchmark_empty.py").write_text("X = 1\n")
    proc = kb(str(tree), "--iterations", "1")
    assert proc.returncode == 3
    assert "benchmark_empty.py: defines no Benchmark subclass" in proc.stderr


def test_symlink_out_of_the_kernel_is_refused(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text(BENCHMARK)
    (tree / "benchmarks" / "benchmark_link.py").symlink_to(outside)
    proc = kb(str(tree), "--iterations", "1")
    assert proc.returncode == 3
    assert "benchmark_link.py: is a symlink to" in proc.stderr and "outside the kernel directory" in proc.stderr


def test_fifo_is_refused_without_blocking(tree: Path) -> None:
    os.mkfifo(tree / "benchmarks" / "benchmark_fifo.py")
    proc = kb(str(tree), "--iterations", "1")  # a FIFO opened for reading would hang until the 180 s timeout
    assert proc.returncode == 3
    assert "benchmark_fifo.py: is a FIFO" in proc.stderr or "benchmark_fifo.py: is a named pipe" in proc.stderr


def test_no_benchmarks_directory(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_variant(root / "build", "torch-cpu")
    proc = kb(str(root))
    assert proc.returncode == 3
    assert f"{root}: no benchmarks/ directory" in proc.stderr


def test_help_says_it_submits_nowhere() -> None:
    proc = kb("--help")
    assert proc.returncode == 0
    assert "Results are submitted nowhere" in " ".join(proc.stdout.split())
    for option in ("--iterations", "--warmup", "--json", "--output", "--version", "--revision"):
        assert option in proc.stdout


def test_hub_kernel(hub_server, tree: Path) -> None:
    repo = "acme/relu-bench"
    hub_server.create_repo(repo)
    hub_server.commit_files(repo, {"benchmarks/benchmark_relu.py": BENCHMARK.encode(), "benchmarks/other.txt": b"x"})
    publish(hub_server, repo, tree / "build", version=1)
    proc = kb(repo, "--iterations", "2", "--warmup", "0", "--json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["repo_id"] == repo and document["revision"] == "v1" and document["variant"] == "torch-cpu"
    assert {r["workload"] for r in document["results"]} == {"relu", "variant"}
    assert all(r.method == "GET" or r.method == "HEAD" for r in hub_server.requests)  # submits nowhere


def test_docs_example_runs_on_examples_relu(tmp_path: Path) -> None:
    """docs/cli-loader.md's benchmark example, for real: build examples/relu with --local, write
    the page's benchmark script, benchmark it (a compiled CPU kernel, tensors, a verified speedup)."""
    import re
    import shutil

    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli-loader.md").read_text()
    section = docs[docs.index("## `kernel-builder benchmark") :]
    script = re.search(r"<<'PY'\n(.*?)PY\n", section, flags=re.S)
    assert script is not None
    kernel = tmp_path / "relu"
    examples = Path(__file__).resolve().parents[2] / "examples" / "relu"
    shutil.copytree(examples, kernel, ignore=shutil.ignore_patterns("build", "result*"))
    built = subprocess.run(
        [sys.executable, "-m", "kernel_builder", "build", str(kernel), "--local", "--backend", "cpu"],
        capture_output=True, text=True, timeout=900,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (kernel / "benchmarks").mkdir()
    (kernel / "benchmarks" / "benchmark_relu.py").write_text(script.group(1))
    proc = kb(str(kernel), "--iterations", "20", "--warmup", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["variant"].endswith("-cpu-x86_64-linux") or document["variant"].startswith("torch-cpu")
    (result,) = document["results"]
    assert result["benchmark"] == "Relu" and result["workload"] == "relu" and result["verified"] is True
    assert result["speedup"] > 0 and "Relu.relu" in proc.stderr
