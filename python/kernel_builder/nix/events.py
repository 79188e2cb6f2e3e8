"""What nix reports while it builds: ``--log-format internal-json`` lines turned into events,
and its error text made safe and useful to relay."""

from __future__ import annotations

import enum
import json
import re

import attrs

__all__ = ["BuildEvent", "BuildReport", "EventKind", "clean_stderr", "explain", "parse_log_line", "printable"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# What a terminal acts on rather than prints: CSI sequences (colours, cursor moves, clearing
# the screen), OSC (window titles, hyperlinks, clipboard writes), DCS/SOS/PM/APC strings,
# other two-byte ESC sequences, and C1's one-byte CSI.
_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_FAILED = re.compile(r"builder for '(/nix/store/[^']+\.drv)' failed")
# A remote builder Nix could not use (it then tries another machine, or builds locally).
_CANNOT_BUILD_ON = re.compile(r"^cannot build on '([^']+)': (?:error: )?(.*)", re.S)
_UNTRUSTED = re.compile(r"the substitute for '(/nix/store/[^']+)' from '([^']+)' is not signed by any of the keys")
_ACT_BUILD = 105
_ACT_BUILDS = 104  # the parent activity counting builds: its progress says when one ends
_ACT_SUBSTITUTE = 108
_RES_BUILD_LOG_LINE = 101
_RES_PROGRESS = 105


class EventKind(str, enum.Enum):
    """What a ``BuildEvent`` reports (see ``BuildEvent``)."""

    START = "start"
    STOP = "stop"
    LOG = "log"
    SUBSTITUTE = "substitute"
    BUILDER_ERROR = "builder-error"
    UNTRUSTED = "untrusted"
    ERROR = "error"
    PROGRESS = "progress"

    def __str__(self) -> str:
        return self.value


@attrs.frozen
class BuildEvent:
    """One thing nix reported.

    ``start``/``stop`` of a derivation build (``machine``: the remote builder's URI, empty
    when built here), a ``log`` line (``machine``: where its derivation builds), a ``substitute`` (``path`` fetched from the cache
    ``machine``), a ``builder-error`` (``machine`` could not be used, ``text`` says why),
    an ``untrusted`` substitute (``path`` in cache ``machine`` lacks a trusted signature),
    an ``error``, or ``progress``: nix's count of builds changed (``text``: "DONE RUNNING
    FAILED"), which is when a build ends; its own stop comes only when nix exits.
    ``target`` is the key of the build target the derivation or path belongs to, when there
    is one.
    """

    kind: EventKind = attrs.field(converter=EventKind)
    drv: str | None = None
    text: str = ""
    machine: str = ""
    path: str | None = None
    target: str | None = None


@attrs.frozen
class BuildReport:
    """What one ``build`` did, keyed by target where nix's output allows.

    ``outputs`` holds every target that was built, fetched or already valid, also when
    others failed; ``failed`` the targets whose derivation failed. The rest is per
    derivation, as nix reports it.
    """

    returncode: int
    outputs: dict[str, str]  # target key -> out path
    failed: tuple[str, ...]  # target keys whose builder failed
    failed_drvs: tuple[str, ...]  # every drv path whose builder failed (dependencies too)
    built: tuple[str, ...]  # drv paths nix actually built in this run
    logs: dict[str, list[str]]  # drv path -> log lines seen
    errors: tuple[str, ...]  # nix's error messages
    argv: tuple[str, ...]
    machines: dict[str, str] = attrs.field(factory=dict)  # drv path -> builder URI ("" = this machine)
    substituted: dict[str, str] = attrs.field(factory=dict)  # out path -> cache URI
    builder_errors: tuple[tuple[str, str], ...] = ()  # (builder URI, why it could not be used)
    untrusted: tuple[tuple[str, str], ...] = ()  # (store path, cache URI) refused for its signature


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


_FALLBACK = re.compile(r"(?:\(usually happens due to networking issues\))?;? ?try '--fallback' to build derivation from source ?")


def explain(text: str) -> str:
    """Nix's text with advice kernel-builder cannot follow replaced: `build` has no
    ``--fallback``; a substitute that fails is a damaged or missing NAR in the cache."""
    return _FALLBACK.sub(
        " (the binary cache holds a damaged or incomplete copy: rebuild without --cache, or push the "
        "variant to the cache again with `kernel-builder cache push`) ", text,
    ).rstrip()


def _tail(text: str, n: int) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def printable(text: str) -> str:
    """``text`` safe to relay to a terminal: escape sequences dropped, every other control
    character but newline and tab shown as ``\\xNN`` (a lone carriage return too, so a line
    cannot overwrite what was printed before it). The policy for everything a build or a
    kernel's tests print that kernel-builder passes on (docs/reliability.md)."""
    text = _ESCAPE.sub("", text.replace("\r\n", "\n"))
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def parse_log_line(line: str) -> BuildEvent | None:
    """Turn one ``--log-format internal-json`` line into an event (``None`` for the rest)."""
    if not line.startswith("@nix "):
        text = printable(line).rstrip()
        return BuildEvent("error", text=text) if text.startswith("error:") else None
    try:
        data = json.loads(line[5:])
    except ValueError:
        return None
    action = data.get("action")
    if action == "start" and data.get("type") == _ACT_BUILD:
        fields = data.get("fields") or [""]
        machine = str(fields[1]) if len(fields) > 1 else ""
        return BuildEvent("start", drv=str(fields[0]), text=str(data["id"]), machine=machine)
    if action == "start" and data.get("type") == _ACT_SUBSTITUTE:
        fields = data.get("fields") or ["", ""]
        return BuildEvent("substitute", path=str(fields[0]), machine=str(fields[1]) if len(fields) > 1 else "")
    if action == "start" and data.get("type") == _ACT_BUILDS:
        return BuildEvent("progress", machine=str(data["id"]))
    if action == "result" and data.get("type") == _RES_PROGRESS and len(data.get("fields") or []) == 4:
        done, _, running, failed = data["fields"]
        return BuildEvent("progress", text=f"{done} {running} {failed}", machine=str(data["id"]))
    if action == "stop":
        return BuildEvent("stop", text=str(data["id"]))
    if action == "result" and data.get("type") == _RES_BUILD_LOG_LINE:
        return BuildEvent("log", text=printable(str(data["fields"][0])), drv=str(data["id"]))
    if action == "msg":
        text = printable(str(data.get("msg", "")))
        builder = _CANNOT_BUILD_ON.match(text)
        if builder:
            return BuildEvent("builder-error", machine=builder.group(1), text=builder.group(2).strip())
        untrusted = _UNTRUSTED.search(text)
        if untrusted:
            return BuildEvent("untrusted", path=untrusted.group(1), machine=untrusted.group(2), text=text)
        if data.get("level", 9) <= 0:
            return BuildEvent("error", text=text)
    return None
