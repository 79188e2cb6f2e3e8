"""Each host command reads build.toml once (issue 47: a kernel value at the command line's edge).

The command line reads build.toml into a ``flake.kernel.Kernel`` and hands it down; the
kernel flake (host-flag refusal, identity, kernel-depends), the copy of the files Nix reads
and ``build --local`` use that value. These tests run the real CLI in-process on a copy of
examples/relu and count the calls of the one build.toml parser (``config.loading.parse``,
which every reader goes through). The commands that hand over to Nix are stopped where they
would first ask Nix (``nix.eval_json``, the variant table), after everything on the host
side before it ran: flake input, kernel source copy, kernel-depends staging.

An unknown ``--backend`` is a configuration error (exit 3) on both paths: ``build --local``
(build.toml's [general] backends) and the Nix build (the flake's variant table).
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

import kernel_builder.config.loading as loading
from kernel_builder import nix
from kernel_builder.cli import main
from nix_support import copy_kernel


class _AtNix(Exception):
    """Raised where the command would first ask Nix."""


def _stop(*args: object, **kwargs: object) -> None:
    raise _AtNix


@pytest.fixture
def relu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KERNEL_BUILDER_STATE_DIR", str(tmp_path / "state"))
    return copy_kernel("relu", tmp_path / "relu", git=False)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ``path`` of every build.toml parse from now on."""
    calls: list[str] = []
    real = loading.parse

    def counting(text: str, **kwargs: object) -> loading.Parsed:
        calls.append(str(kwargs.get("path")))
        return real(text, **kwargs)

    monkeypatch.setattr(loading, "parse", counting)
    return calls


def _run(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _secret_key(tmp_path: Path) -> Path:
    key = tmp_path / "keys" / "test-1.sec"  # outside the kernel: its copy refuses secret keys
    key.parent.mkdir()
    key.write_text("test-1:" + base64.b64encode(bytes(range(64))).decode() + "\n")
    return key


@pytest.mark.parametrize(
    "command",
    [
        ["build", "{k}", "--backend", "cpu"],
        ["test", "{k}"],
        ["devshell", "{k}"],
        ["testshell", "{k}"],
        ["cache", "push", "{k}", "--to", "{tmp}/cache", "--secret-key", "{key}"],
    ],
    ids=lambda c: " ".join(a for a in c if "{" not in a),
)
def test_a_command_that_hands_over_to_nix_reads_build_toml_once(
    relu: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: list[str]
) -> None:
    monkeypatch.setattr(nix, "eval_json", _stop)
    argv = [a.format(k=relu, tmp=tmp_path, key=_secret_key(tmp_path) if "{key}" in a else "") for a in command]
    with pytest.raises(_AtNix):
        main(argv)
    assert parses == [str(relu / "build.toml")]
    assert list((tmp_path / "state" / "kernel-sources").iterdir())  # the host side ran: the kernel's copy exists


@pytest.mark.parametrize(
    "command",
    [
        ["build", "{k}", "--print-nix-args"],
        ["list-variants", "{k}"],
        ["check-config", "{k}"],
        ["create-pyproject", "{k}", "--no-compile-commands"],
    ],
    ids=lambda c: " ".join(a for a in c if "{" not in a),
)
def test_a_host_only_command_reads_build_toml_once(relu: Path, parses: list[str], command: list[str]) -> None:
    assert _run([a.format(k=relu) for a in command]) == 0
    assert parses == [str(relu / "build.toml")]


@pytest.mark.slow
def test_build_local_reads_build_toml_once(relu: Path, parses: list[str]) -> None:
    """A real CPU build (the variant builds in this process: the driver gets the Build)."""
    assert _run(["build", str(relu), "--local", "--backend", "cpu"]) == 0
    assert parses == [str(relu / "build.toml")]
    assert (relu / "build" / "torch213-cxx11-cpu-x86_64-linux" / "metadata.json").is_file()


@pytest.mark.parametrize("backend", ["metal", "foo"])
def test_an_unknown_backend_is_a_config_error_with_local(relu: Path, backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    """build.toml's [general] backends are cpu and cuda; ``foo`` is no backend at all."""
    assert _run(["build", str(relu), "--local", "--backend", backend]) == 3
    assert f"--backend {backend} is not in [general] backends ['cpu', 'cuda']" in capsys.readouterr().err
    assert not (relu / "build").exists()


@pytest.mark.parametrize("backend", ["metal", "foo"])
def test_an_unknown_backend_is_a_config_error_through_nix(relu: Path, backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The same exit code when the flake's variant table (a real Nix evaluation) refuses it."""
    assert _run(["build", str(relu), "--backend", backend]) == 3
    err = capsys.readouterr().err
    assert f"no variant of this kernel has backend '{backend}'" in err and "backends of this kernel: cpu, cuda" in err
