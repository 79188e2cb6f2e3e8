"""``nix build`` with live events: which derivation started, logged, failed, on which machine,
and which build target each belongs to."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import IO

import attrs

from kernel_builder import _children
from kernel_builder.errors import NixError
from kernel_builder.nix.events import _FAILED, BuildEvent, BuildReport, explain, parse_log_line
from kernel_builder.nix.runner import NixOptions, nix_argv, run_nix
from kernel_builder.nix.steps import part_owner, target_of
from kernel_builder.nix.store import derivations, invalid_paths

__all__ = ["build"]


def build(
    targets: Mapping[str, str],
    options: NixOptions,
    *,
    flake_args: Sequence[str] = (),
    out_link: str | None = None,
    on_event: Callable[[BuildEvent], None] | None = None,
    cwd: str | None = None,
) -> BuildReport:
    """Build ``targets`` (key -> installable) with ``nix build --json``; never raises for a failed build.

    Each key must end the name of its installable's derivation (see ``target_of``). Events
    are delivered as they happen (start/stop of each derivation, log lines with the
    derivation they belong to), so a caller can show live progress. With ``keep_going``
    the outputs of the targets that did not fail are returned too: nix prints no JSON when
    any target fails, so their paths come from evaluation (nothing is built twice). With
    ``options.sandbox`` off (host-toolchain builds) the targets are first evaluated with it
    on (``_instantiated``), and only their derivations are built outside it.
    """
    keys = list(targets)
    if not options.sandbox:  # evaluate (and build what evaluation needs) in the sandbox first
        try:
            targets, flake_args = _instantiated(targets, flake_args=flake_args, cwd=cwd), ()
        except NixError as exc:
            return BuildReport(1, {}, (), (), (), {}, (exc.message,), ("nix", "show-derivation", *targets.values()))
    link = ["--out-link", out_link] if out_link else ["--no-link"]
    argv = nix_argv("build", "--json", "--log-format", "internal-json", *options.argv(), *link, *flake_args, *targets.values())
    ids: dict[str, str] = {}
    logs: dict[str, list[str]] = {}
    failed: list[str] = []
    built: list[str] = []
    errors: list[str] = []
    machines: dict[str, str] = {}
    substituted: dict[str, str] = {}
    builder_errors: list[tuple[str, str]] = []
    untrusted: list[tuple[str, str]] = []
    builds_activity: list[str] = []

    def pump(stderr: IO[str]) -> None:
        for raw in stderr:
            event = parse_log_line(raw.rstrip("\n"))
            if event is None:
                continue
            if event.kind == "start":
                ids[event.text] = event.drv or ""
                built.append(event.drv or "")
                machines[event.drv or ""] = event.machine
                logs.setdefault(event.drv or "", [])
            elif event.kind == "progress":  # only the counts of the builds activity, once it started
                if not event.text:
                    builds_activity.append(event.machine)
                    continue
                if event.machine not in builds_activity:
                    continue
                event = BuildEvent("progress", text=event.text)
            elif event.kind == "substitute":
                substituted[event.path or ""] = event.machine
            elif event.kind == "builder-error":
                builder_errors.append((event.machine, event.text))
            elif event.kind == "untrusted":
                untrusted.append((event.path or "", event.machine))
            elif event.kind == "stop":
                drv = ids.pop(event.text, None)
                if drv is None:
                    continue
                event = BuildEvent("stop", drv=drv, machine=machines.get(drv, ""))
            elif event.kind == "log":
                drv = ids.get(event.drv or "")
                if drv is None:
                    continue
                logs[drv].append(event.text)
                event = BuildEvent("log", drv=drv, text=event.text, machine=machines.get(drv, ""))
            elif event.kind == "error":
                event = attrs.evolve(event, text=explain(event.text))
                errors.append(event.text)
                match = _FAILED.search(event.text)
                if match:
                    failed.append(match.group(1))
                    event = BuildEvent("error", drv=match.group(1), text=event.text)
            if on_event is not None:
                where = event.drv or event.path
                target = target_of(where, keys)
                if target is None and event.kind in ("log", "error"):  # not start/stop: a row's drv is its variant's
                    target = part_owner(where, keys)
                on_event(attrs.evolve(event, target=target))

    # SIGINT/SIGTERM stop nix too, and we wait for it (then _children.Interrupted is raised)
    with _children.supervised(argv, cwd=cwd, env=options.env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        reader = threading.Thread(target=pump, args=(proc.stderr,), daemon=True)
        reader.start()
        stdout = proc.stdout.read()
        proc.wait()
        reader.join()
    failed_keys = sorted({key for key in (target_of(drv, keys) or part_owner(drv, keys) for drv in failed)
                          if key is not None})
    outputs = _outputs(stdout, keys) if proc.returncode == 0 else {}
    survivors = {key: targets[key] for key in keys if key not in failed_keys}
    if proc.returncode != 0 and options.keep_going and failed_keys and survivors:
        outputs = _valid_outputs(survivors, flake_args=flake_args, cwd=cwd)
        if out_link and outputs:  # what --out-link does when nothing failed: keep them from the GC
            run_nix(["--realise", *outputs.values(), "--add-root", out_link], program="nix-store")
    return BuildReport(
        proc.returncode, outputs, tuple(failed_keys), tuple(failed), tuple(built), logs, tuple(errors), tuple(argv),
        machines, substituted, tuple(builder_errors), tuple(untrusted),
    )


def _instantiated(targets: Mapping[str, str], *, flake_args: Sequence[str], cwd: str | None) -> dict[str, str]:
    """``targets`` as their .drv paths, found by evaluating them with the sandbox on: a build
    run with it off (the host toolchain's) then evaluates nothing, so whatever a flake builds
    while it is evaluated (import-from-derivation) is built in the sandbox. ``--dry-run
    --json`` lists one derivation per installable, in the order given."""
    done = run_nix(["build", "--dry-run", "--json", "--no-link", *flake_args, *targets.values()], cwd=cwd)
    drvs = [item["drvPath"] for item in json.loads(done.stdout)]
    if len(drvs) != len(targets):
        raise NixError(f"evaluating {len(targets)} build target(s) gave {len(drvs)} derivation(s)",
                       hint="each build target must be one derivation")
    return dict(zip(targets, drvs))


def _valid_outputs(targets: Mapping[str, str], *, flake_args: Sequence[str], cwd: str | None) -> dict[str, str]:
    """The out paths of ``targets`` that exist, found by evaluation only: ``nix build`` prints
    no JSON when a target failed, and asking it again would build what ``--keep-going`` left."""
    keys = list(targets)
    found: dict[str, str] = {}
    for drv, data in derivations(list(targets.values()), flake_args=flake_args, cwd=cwd).items():
        key = target_of(drv, keys)
        out = data.get("outputs", {}).get("out", {}).get("path")
        if key is not None and out:
            found[key] = out
    absent = set(invalid_paths(list(found.values())))
    return {key: out for key, out in found.items() if out not in absent}


def _outputs(stdout: str, keys: Sequence[str]) -> dict[str, str]:
    """``nix build --json``'s items as key -> out path (nix orders them by path, not as asked)."""
    items = json.loads(stdout) if stdout.strip() else []
    if len(keys) == 1 and len(items) == 1:
        return {keys[0]: items[0]["outputs"]["out"]}
    found = {target_of(item["drvPath"], keys): item["outputs"]["out"] for item in items}
    return {key: out for key, out in found.items() if key is not None}
