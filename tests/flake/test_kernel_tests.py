"""A kernel's own tests as derivations: `kernel-builder test` and checks.<variant>-tests.

Real nix builds in the sandbox with the pinned torch 2.13 CPU toolchain: one relu copy with
extra tests (one failing, two that need a GPU), built once and tested several ways.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from nix_support import REPO, copy_kernel, environ_set, kernel_builder, make_dirty, snapshot_builder

pytestmark = pytest.mark.slow

CPU213 = "torch213-cxx11-cpu-x86_64-linux"

EXTRA_TESTS = '''
import pytest
import torch

import relu


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_device(device):
    x = torch.randn(4, device=device)
    assert torch.equal(relu.relu(x), torch.relu(x))


def test_gpu_runtime():
    torch.zeros(1).cuda()


def test_broken():
    assert relu.relu(torch.tensor([-1.0])).item() == -1.0
'''

EINOPS_TEST = '''
import einops
import torch

import relu


def test_rearranged_input():
    x = einops.rearrange(torch.randn(2, 3), "a b -> b a")
    assert torch.equal(relu.relu(x.contiguous()), torch.relu(x))
'''


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    state = tmp_path_factory.mktemp("kb-state")
    builder = snapshot_builder(tmp_path_factory.mktemp("builder"))
    pinned = {"KERNEL_BUILDER_STATE_DIR": str(state), "KERNEL_BUILDER_ROOT": str(builder)}
    with environ_set(pinned):  # for the in-process prepare_kernel_flake
        yield {**os.environ, **pinned, "PYTHONPATH": str(REPO / "python")}


@pytest.fixture(scope="module")
def relu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    kernel = copy_kernel("relu", tmp_path_factory.mktemp("relu") / "relu")
    (kernel / "tests" / "test_extra.py").write_text(EXTRA_TESTS)
    make_dirty(kernel)  # later flake.nix edits keep the unique id, so the variant builds once
    return kernel


def _test_json(kernel: Path, env: dict[str, str], *args: str) -> tuple[int, list[dict], str]:
    done = kernel_builder("test", str(kernel), "--variant", CPU213, "--json", *args, env=env, check=False)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else [], done.stderr


@pytest.mark.timeout(900)
def test_a_failing_test_fails_the_command_and_gpu_tests_are_skipped(relu: Path, env: dict[str, str]) -> None:
    code, rows, stderr = _test_json(relu, env)
    assert code == 8, stderr[-3000:]
    (row,) = rows
    assert row["variant"] == CPU213 and not row["ok"] and row["exit_code"] == 1
    assert row["failed"] == ["tests.test_extra::test_broken"]
    skipped = dict(row["skipped"])
    runtime = skipped.pop("tests.test_extra::test_gpu_runtime")
    assert skipped == {"tests.test_extra::test_device[cuda]": "needs a GPU (none here)"}
    # the pinned torch 2.13 is PyPI's CUDA build: no driver here (a CPU build would say it
    # was not compiled with CUDA)
    assert runtime.startswith("needs a GPU (none here): Found no NVIDIA driver"), runtime
    # relu's own 5 tests and the CPU half of test_device passed; GPU tests are not among them
    assert row["passed"] == 6
    assert "1 failed, 6 passed, 2 skipped" in row["summary"]
    assert "test_broken" in stderr and "assert 0.0 == -1.0" in stderr  # the failing test's output
    assert "kernel tests failed for 1 of 1 variant(s)" in stderr


@pytest.mark.timeout(900)
def test_k_selects_and_a_passing_run_succeeds(relu: Path, env: dict[str, str]) -> None:
    code, rows, stderr = _test_json(relu, env, "-k", "not broken")
    assert code == 0, stderr[-3000:]
    (row,) = rows
    assert row["ok"] and row["failed"] == [] and row["passed"] == 6
    assert "1 deselected" in row["summary"]


@pytest.mark.timeout(900)
def test_a_test_module_that_cannot_import_fails_the_run_but_the_others_still_run(relu: Path, env: dict[str, str]) -> None:
    stale = relu / "tests" / "test_stale.py"
    stale.write_text("import relu_renamed_long_ago\n\n\ndef test_never_collected():\n    pass\n")
    try:
        code, rows, stderr = _test_json(relu, env, "-k", "not extra")
    finally:
        stale.unlink()
    assert code == 8, stderr[-3000:]
    (row,) = rows
    assert row["failed"] == ["tests.test_stale"]
    assert row["passed"] == 5  # relu's own tests ran: pytest's default would have stopped at collection
    assert "No module named 'relu_renamed_long_ago'" in stderr


@pytest.mark.timeout(900)
def test_the_flake_check_fails_naming_the_test(relu: Path, env: dict[str, str]) -> None:
    prepared = prepare_kernel_flake(relu)
    argv = nix.nix_argv("build", "--no-link", "--cores", "1", *prepared.flake_args, prepared.installable(f"checks.x86_64-linux.{CPU213}-tests"))
    done = subprocess.run(argv, env=nix.nix_env(sandbox=True), capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "FAILED tests/test_extra.py::test_broken" in done.stderr
    assert f"{CPU213}: kernel tests failed: " in done.stderr and '"pytest_exit": 1' in done.stderr


@pytest.mark.timeout(900)
def test_python_check_inputs_reach_the_tests(relu: Path, env: dict[str, str]) -> None:
    (relu / "tests" / "test_extra.py").unlink()
    (relu / "tests" / "test_einops.py").write_text(EINOPS_TEST)
    flake = relu / "flake.nix"
    original = flake.read_text()
    try:
        code, rows, stderr = _test_json(relu, env)
        assert code == 8 and "No module named 'einops'" in stderr  # not an input yet: the test cannot import it
        flake.write_text(original.replace("path = ./.; }", "path = ./.; pythonCheckInputs = pkgs: with pkgs; [ einops ]; }"))
        code, rows, stderr = _test_json(relu, env)
        assert code == 0, stderr[-3000:]
        assert rows[0]["passed"] == 6
    finally:
        flake.write_text(original)
        # the module-scoped kernel goes on without it: later runs (-k hostile) would collect
        # it without einops and report its import failure
        (relu / "tests" / "test_einops.py").unlink(missing_ok=True)


def test_a_check_input_the_lock_lacks_is_refused_with_the_fix(tmp_path: Path, env: dict[str, str]) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    flake = kernel / "flake.nix"
    flake.write_text(flake.read_text().replace("path = ./.; }", "path = ./.; pythonCheckInputs = pkgs: with pkgs; [ notpinned ]; }"))
    done = kernel_builder("test", str(kernel), "--variant", CPU213, env=env, check=False)
    assert done.returncode == 3, done.stderr[-3000:]
    assert "undefined variable 'notpinned'" in done.stderr
    assert "hint: notpinned is not in the pinned kernel-test package set: add it to requests.python.test" in done.stderr


# -- runs that must not hang, lie or flood (issue 45: 9, 10, 12, 21) ----------------------

HOSTILE_TESTS = {
    "timeouts": '''
import sys
import time


def test_hostile_sleeps():
    time.sleep(10**6)


def test_hostile_floods():
    sys.stdout.write(("y" * 99 + "\\n") * 1_500_000)  # 150 MB
    assert False, "flooded"


def test_hostile_passes():
    pass
''',
    "exit": '''
import os


def test_hostile_a_exits():
    os._exit(0)


def test_hostile_b_fails():
    assert False
''',
    "abort": '''
import os


def test_hostile_aborts():
    os.abort()
''',
    "stuck": '''
import signal
import time


def test_hostile_stuck():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})  # as native code that never returns to Python
    time.sleep(10**6)
''',
}


def _hostile(relu: Path, env: dict[str, str], which: str, *args: str) -> tuple[int, list[dict], str]:
    module = relu / "tests" / f"test_hostile_{which}.py"
    module.write_text(HOSTILE_TESTS[which])
    try:
        return _test_json(relu, env, "-k", "hostile", *args)
    finally:
        module.unlink()


@pytest.mark.timeout(900)
def test_a_hanging_test_times_out_a_flood_is_capped_and_progress_is_shown(relu: Path, env: dict[str, str]) -> None:
    code, rows, stderr = _hostile(relu, env, "timeouts", "--test-timeout", "5")
    assert code == 8, stderr[-3000:]
    (row,) = rows
    assert row["status"] == "failed" and "1 passed" in row["summary"]
    hostile = sorted(f for f in row["failed"] if "hostile" in f)  # (an earlier test may leave a module that fails to import)
    assert hostile == ["tests.test_hostile_timeouts::test_hostile_floods", "tests.test_hostile_timeouts::test_hostile_sleeps"]
    assert "ran longer than its limit of 5 s" in stderr
    # progress while it ran, without -L
    assert f"{CPU213}: 0/3 done; running tests/test_hostile_timeouts.py::test_hostile_" in stderr, stderr[-3000:]
    log = Path(row["log"])
    assert log.stat().st_size < 5 << 20  # 150 MB printed, 4 MiB kept
    assert "bytes of test output left out here" in log.read_text(errors="replace")
    assert len(stderr) < 1 << 20


@pytest.mark.timeout(900)
def test_a_test_that_ends_the_process_fails_the_run_and_is_named(relu: Path, env: dict[str, str]) -> None:
    code, rows, stderr = _hostile(relu, env, "exit")
    assert code == 8, stderr[-3000:]
    (row,) = rows
    assert row["status"] == "crashed" and row["exit_code"] == 0 and not row["ok"]  # pytest said 0; no JUnit record
    assert row["stopped_in"] == "tests/test_hostile_exit.py::test_hostile_a_exits"
    assert "crashed: pytest exited 0 without writing its JUnit record, during tests/test_hostile_exit.py::test_hostile_a_exits" in stderr
    assert "[CRASHED]" in stderr and "test session starts" not in row["summary"]


@pytest.mark.timeout(900)
def test_a_crashing_test_is_named(relu: Path, env: dict[str, str]) -> None:
    code, rows, stderr = _hostile(relu, env, "abort")
    assert code == 8, stderr[-3000:]
    (row,) = rows
    assert row["status"] == "crashed" and row["exit_code"] == -6
    assert row["summary"] == "crashed: the test process was killed by SIGABRT during tests/test_hostile_abort.py::test_hostile_aborts"
    assert "kernel tests failed for 1 of 1 variant(s): torch213-cxx11-cpu-x86_64-linux: tests/test_hostile_abort.py::test_hostile_aborts" in stderr


@pytest.mark.timeout(900)
def test_a_test_stuck_past_its_limit_is_killed_and_named_and_the_run_has_a_limit(relu: Path, env: dict[str, str]) -> None:
    code, rows, stderr = _hostile(relu, env, "stuck", "--test-timeout", "2")
    assert code == 8, stderr[-3000:]
    (row,) = rows
    assert row["status"] == "timed-out" and row["stopped_in"] == "tests/test_hostile_stuck.py::test_hostile_stuck"
    assert "did not stop at its time limit of 2 s" in row["summary"] and "killed after" in row["summary"]
    code, rows, stderr = _hostile(relu, env, "stuck", "--run-timeout", "20")
    assert code == 8, stderr[-3000:]
    assert rows[0]["summary"] == "timed-out: the run exceeded its time limit of 20 s while tests/test_hostile_stuck.py::test_hostile_stuck ran"


def test_a_bad_k_is_a_usage_error(relu: Path, env: dict[str, str]) -> None:
    done = kernel_builder("test", str(relu), "--variant", CPU213, "-k", "and or (", env=env, check=False)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "pytest refused -k 'and or ('" in done.stderr and "Wrong expression passed to '-k'" in done.stderr


def test_pytest_options_of_the_kernel_that_pytest_refuses_are_a_configuration_error(relu: Path, env: dict[str, str]) -> None:
    ini = relu / "tests" / "pytest.ini"
    ini.write_text("[pytest]\naddopts = --no-such-option\n")
    try:
        done = kernel_builder("test", str(relu), "--variant", CPU213, env=env, check=False)
    finally:
        ini.unlink()
    assert done.returncode == 3, done.stderr[-3000:]
    assert f"pytest refused to run the tests of {CPU213}: unrecognized arguments: --no-such-option" in done.stderr
    assert "tests/pytest.ini" in done.stderr


def test_a_tests_directory_without_tests_is_refused_before_nix(tmp_path: Path, env: dict[str, str]) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    for module in (kernel / "tests").glob("*.py"):
        module.unlink()
    done = kernel_builder("test", str(kernel), env=env, check=False)
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    assert f"{kernel / 'tests'} holds no test files (test_*.py or *_test.py), so there is nothing to run" in done.stderr
    assert "missing" not in done.stderr


@pytest.mark.timeout(900)
def test_a_kernel_that_does_not_compile_shows_its_first_compile_error(tmp_path: Path, env: dict[str, str]) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", git=False, salt=True)
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    source.write_text(source.read_text() + "\nint broken( { return 0; }\n")
    done = kernel_builder("test", str(kernel), "--variant", CPU213, env=env, check=False)
    assert done.returncode == 4, done.stderr[-3000:]
    assert "the variant does not build: compile error" in done.stderr, done.stderr[-3000:]
    assert "relu_cpu.cpp:" in done.stderr and "error:" in done.stderr
    assert "builder for '/nix/store" not in done.stderr


HOSTILE_TESTS["escapes"] = '''
import sys


def test_hostile_escapes():
    sys.stdout.write("\\x1b]0;pwned\\x07\\x1b[2J\\x1b[Hscreen cleared\\rover\\n")
    assert False, "\\x1b[2J\\x1b]8;;http://x.invalid\\x1b\\\\link\\x07bell"
'''


@pytest.mark.timeout(900)
def test_a_tests_terminal_escapes_never_reach_the_terminal(relu: Path, env: dict[str, str]) -> None:
    """issue 45 #25: `test`'s report relays the test's output and failure message; with -L
    the run's log lines too. Escape sequences are dropped, other controls shown as \\xNN."""
    for args in ((), ("-L",)):
        code, rows, stderr = _hostile(relu, env, "escapes", *args)
        assert code == 8, stderr[-3000:]
        assert rows[0]["failed"] == ["tests.test_hostile_escapes::test_hostile_escapes"]
        assert "\x1b" not in stderr and "\x07" not in stderr and "\r" not in stderr, repr(stderr[-3000:])
        assert "link\\x07bell" in stderr  # the failure message, made harmless, still shown
