"""The nix driver: the only module that builds nix command lines and runs nix.

Debian's nix 2.8 works offline here with flakes on, no substituters, no build users and an
empty flake registry; every invocation gets those settings through ``NIX_CONFIG`` so that
nothing depends on the user's nix.conf.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from kernel_builder.errors import NixError

__all__ = [
    "BuildEvent",
    "BuildReport",
    "NixOptions",
    "build",
    "clean_stderr",
    "empty_registry",
    "eval_json",
    "nix_argv",
    "nix_env",
    "nix_executable",
    "parse_log_line",
    "run_nix",
]


def empty_registry() -> Path:
    """An empty flake registry file, so nix never tries to download the global one."""
    path = Path(tempfile.gettempdir()) / "kernel-builder-empty-registry.json"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text('{"flakes":[],"version":2}\n')
        os.replace(tmp, path)
    return path


def nix_env(base: dict[str, str] | None = None, *, sandbox: bool = False) -> dict[str, str]:
    """The environment for a nix subprocess: offline-safe settings in ``NIX_CONFIG``.

    ``sandbox`` is on for pinned (hermetic) builds; the host toolchain needs it off,
    because its builds read this machine's compilers and Python environments.
    """
    env = dict(os.environ if base is None else base)
    settings = [
        "experimental-features = nix-command flakes",
        "build-users-group =",
        "substituters =",
        f"sandbox = {'true' if sandbox else 'false'}",
        f"flake-registry = {empty_registry()}",
        "warn-dirty = false",
    ]
    extra = env.get("NIX_CONFIG", "").strip()
    env["NIX_CONFIG"] = "\n".join(settings + ([extra] if extra else [])) + "\n"
    return env


def nix_executable() -> str:
    """The nix binary; ``NixError`` with an install hint when there is none."""
    found = shutil.which("nix")
    if found is None:
        raise NixError(
            "nix is not installed",
            hint="install it with `apt-get install nix-bin` (Debian) or from nixos.org, or build with --local",
        )
    return found


# -- running nix ------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FAILED = re.compile(r"builder for '(/nix/store/[^']+\.drv)' failed")
_ACT_BUILD = 105
_RES_BUILD_LOG_LINE = 101


@attrs.frozen
class NixOptions:
    """The flags every build passes explicitly (nix's own defaults here are -j 1)."""

    max_jobs: int = 1
    cores: int = 1
    print_build_logs: bool = False
    builders: str | None = None
    keep_going: bool = True
    sandbox: bool = False

    def argv(self) -> list[str]:
        args = ["--max-jobs", str(self.max_jobs), "--cores", str(self.cores)]
        if self.print_build_logs:
            args.append("-L")
        if self.builders is not None:
            args += ["--builders", self.builders]
        if self.keep_going:
            args.append("--keep-going")
        return args


@attrs.frozen
class BuildEvent:
    """One thing nix reported: ``start``/``stop`` of a derivation build, a ``log`` line, an ``error``."""

    kind: str
    drv: str | None = None
    text: str = ""


@attrs.frozen
class BuildReport:
    returncode: int
    outputs: dict[str, str]  # drvPath -> out path (only when nix succeeded)
    failed: tuple[str, ...]  # drv paths whose builder failed
    built: tuple[str, ...]  # drv paths nix actually built in this run
    logs: dict[str, list[str]]  # drv path -> log lines seen
    errors: tuple[str, ...]  # nix's error messages
    argv: tuple[str, ...]


def nix_argv(*args: str) -> list[str]:
    return [nix_executable(), *args]


def run_nix(args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run nix, capture output; ``NixError`` with the command and stderr tail on failure."""
    argv = nix_argv(*args)
    done = subprocess.run(argv, cwd=cwd, env=nix_env(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise NixError(
            f"`{' '.join(argv)}` failed (exit {done.returncode}):\n{_tail(clean_stderr(done.stderr), 40)}",
            hint="rerun the command above to see the whole output",
        )
    return done


def eval_json(installable: str, *, flake_args: Sequence[str] = (), cwd: str | None = None) -> object:
    done = run_nix(["eval", "--json", *flake_args, installable], cwd=cwd)
    return json.loads(done.stdout)


def clean_stderr(text: str) -> str:
    """Drop nix's noise about not writing lock files for overridden inputs."""
    lines, skip = [], False
    for line in text.splitlines():
        if line.startswith("warning: not writing modified lock file"):
            skip = True
            continue
        if skip and (line.startswith("•") or line.startswith("    ") or not line.strip()):
            continue
        skip = False
        lines.append(line)
    return "\n".join(lines)


def _tail(text: str, n: int) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def parse_log_line(line: str) -> BuildEvent | None:
    """Turn one ``--log-format internal-json`` line into an event (``None`` for the rest)."""
    if not line.startswith("@nix "):
        text = _ANSI.sub("", line).rstrip()
        return BuildEvent("error", text=text) if text.startswith("error:") else None
    try:
        data = json.loads(line[5:])
    except ValueError:
        return None
    action = data.get("action")
    if action == "start" and data.get("type") == _ACT_BUILD:
        return BuildEvent("start", drv=str(data["fields"][0]), text=str(data["id"]))
    if action == "stop":
        return BuildEvent("stop", text=str(data["id"]))
    if action == "result" and data.get("type") == _RES_BUILD_LOG_LINE:
        return BuildEvent("log", text=_ANSI.sub("", str(data["fields"][0])), drv=str(data["id"]))
    if action == "msg" and data.get("level", 9) <= 0:
        return BuildEvent("error", text=_ANSI.sub("", str(data.get("msg", ""))))
    return None


def build(
    installables: Sequence[str],
    options: NixOptions,
    *,
    flake_args: Sequence[str] = (),
    out_link: str | None = None,
    on_event: Callable[[BuildEvent], None] | None = None,
    cwd: str | None = None,
) -> BuildReport:
    """``nix build --json`` with a machine-readable log; never raises for a failed build.

    Events are delivered as they happen (start/stop of each derivation, log lines with
    the derivation they belong to), so a caller can show live progress.
    """
    link = ["--out-link", out_link] if out_link else ["--no-link"]
    argv = nix_argv("build", "--json", "--log-format", "internal-json", *options.argv(), *link, *flake_args, *installables)
    proc = subprocess.Popen(
        argv, cwd=cwd, env=nix_env(sandbox=options.sandbox), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    ids: dict[str, str] = {}
    logs: dict[str, list[str]] = {}
    failed: list[str] = []
    built: list[str] = []
    errors: list[str] = []

    def pump() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            event = parse_log_line(raw.rstrip("\n"))
            if event is None:
                continue
            if event.kind == "start":
                ids[event.text] = event.drv or ""
                built.append(event.drv or "")
                logs.setdefault(event.drv or "", [])
            elif event.kind == "stop":
                drv = ids.pop(event.text, None)
                if drv is None:
                    continue
                event = BuildEvent("stop", drv=drv)
            elif event.kind == "log":
                drv = ids.get(event.drv or "")
                if drv is None:
                    continue
                logs[drv].append(event.text)
                event = BuildEvent("log", drv=drv, text=event.text)
            elif event.kind == "error":
                errors.append(event.text)
                match = _FAILED.search(event.text)
                if match:
                    failed.append(match.group(1))
                    event = BuildEvent("error", drv=match.group(1), text=event.text)
            if on_event is not None:
                on_event(event)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    assert proc.stdout is not None
    stdout = proc.stdout.read()
    proc.wait()
    reader.join()
    outputs: dict[str, str] = {}
    if proc.returncode == 0 and stdout.strip():
        for item in json.loads(stdout):
            outputs[item["drvPath"]] = item["outputs"]["out"]
    return BuildReport(proc.returncode, outputs, tuple(failed), tuple(built), logs, tuple(errors), tuple(argv))


