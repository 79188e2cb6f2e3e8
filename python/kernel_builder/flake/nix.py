"""The nix driver: the only module that builds nix command lines and runs nix.

Debian's nix 2.8 works offline here with flakes on, no substituters, no build users and an
empty flake registry; every invocation gets those settings through ``NIX_CONFIG`` so that
nothing depends on the user's nix.conf.

The sandbox policy (docs/reliability.md): every nix call runs with Nix's sandbox on, whatever
nix.conf or the caller's ``NIX_CONFIG`` says, because any call that evaluates may build
(import-from-derivation). The one exception is the build step of host-toolchain variants,
which read this machine's compilers; ``build`` evaluates those first with the sandbox on, so
only the derivations it was asked for run outside it.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

import attrs

from kernel_builder import _children
from kernel_builder._files import UnreadableFile, read_text, write_atomic
from kernel_builder.errors import ConfigError, NixError
from kernel_builder.flake.object_progress import step_of
from kernel_builder.toolchain.state import state_dir

__all__ = [
    "BuildEvent",
    "EventKind",
    "BuildReport",
    "NixOptions",
    "build",
    "cache_path_info",
    "clean_stderr",
    "copy_to_cache",
    "derivation_outputs",
    "derivations",
    "empty_registry",
    "eval_json",
    "flake_path",
    "generate_cache_key",
    "input_closure",
    "invalid_paths",
    "untrusted_paths",
    "nix_argv",
    "nix_env",
    "nix_executable",
    "parse_log_line",
    "per_object_parts",
    "printable",
    "run_nix",
    "shell_command",
    "target_of",
]


def empty_registry() -> Path:
    """An empty flake registry file, so nix never tries to download the global one.

    It lives in the state directory, not in a shared temporary directory where another
    user could plant a registry (or a symlink) under the same name first. The path given
    to nix is ``flake_path``'s (a ``#`` would start a comment in ``NIX_CONFIG``).
    """
    path = state_dir() / "empty-flake-registry.json"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, '{"flakes":[],"version":2}\n')
    return flake_path(path)


# Characters a path may hold and still be written verbatim into a ``path:`` flake URL and a
# nix.conf line. Nix 2.8 does not percent-decode ``path:`` URLs, so ``#``, ``?``, ``%`` and
# spaces cannot be escaped there at all.
_NIX_SAFE = re.compile(r"[A-Za-z0-9/._+=,@~-]+")


def flake_path(path: Path) -> Path:
    """``path`` itself, or, when it holds a character a flake URL or nix.conf cannot carry
    (a state directory or HOME with ``#``, ``?`` or a space), the same file reached through
    a symlink: ``<tmp>/kernel-builder-links-<uid>/<hash>`` points at the deepest such
    directory and the rest of the path follows it. The link directory is this user's own
    (0700, checked), so no other user can redirect it. The last component must be safe: a
    ``path:`` flake that is itself a symlink is refused by Nix."""
    text = str(path)
    if _NIX_SAFE.fullmatch(text):
        return path
    parts = path.parts
    cut = max(i for i, part in enumerate(parts, 1) if not _NIX_SAFE.fullmatch(part))  # the deepest unsafe name
    if cut == len(parts):
        raise ConfigError(
            f"{path} cannot be given to nix: its last component holds a character a flake URL cannot carry",
            hint="rename it to letters, digits and ._+=,@~-",
        )
    target = Path(*parts[:cut])
    link = _link_dir() / hashlib.sha256(str(target).encode()).hexdigest()[:20]
    if not (link.is_symlink() and os.readlink(link) == str(target)):
        tmp = link.with_name(f".{link.name}.pid{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        os.symlink(target, tmp)
        os.replace(tmp, link)
    return link.joinpath(*parts[cut:])


def _link_dir() -> Path:
    """This user's directory of ``flake_path`` links, made 0700 and checked to be ours."""
    base = tempfile.gettempdir()
    if not _NIX_SAFE.fullmatch(base):
        base = "/tmp"
    links = Path(base) / f"kernel-builder-links-{os.getuid()}"
    try:
        links.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(links)
    except OSError as exc:
        raise ConfigError(f"cannot make {links}: {exc.strerror}", hint="set TMPDIR to a writable directory") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ConfigError(
            f"{links} is not a private directory of this user (another user may have made it)",
            hint=f"remove it, or set TMPDIR to a directory of your own; kernel-builder keeps links to paths "
            "that a flake URL cannot carry there",
        )
    return links


def nix_env(
    base: dict[str, str] | None = None,
    *,
    sandbox: bool = True,
    substituters: Sequence[str] = (),
    trusted_keys: Sequence[str] = (),
) -> dict[str, str]:
    """The environment for a nix subprocess: offline-safe settings in ``NIX_CONFIG``.

    ``sandbox`` is on unless a caller turns it off for the build of host-toolchain variants
    (they read this machine's compilers and Python environments); it comes after the
    caller's own ``NIX_CONFIG``, so neither that nor nix.conf can turn it off, and
    ``sandbox-fallback = false`` makes a kernel that cannot sandbox an error, not a silent
    unsandboxed build.
    ``substituters`` are the binary caches the caller asked for (none by default, so
    nothing is fetched from the network), trusted only through ``trusted_keys``; a path
    missing from a cache is asked for again next time (no negative narinfo caching), since
    a cache may be pushed to between two builds.
    """
    env = dict(os.environ if base is None else base)
    settings = [
        "experimental-features = nix-command flakes",
        "build-users-group =",
        f"substituters = {' '.join(substituters)}".rstrip(),
        f"flake-registry = {empty_registry()}",
        "warn-dirty = false",
        "narinfo-cache-negative-ttl = 0",
    ]
    if substituters:
        settings += [f"trusted-public-keys = {' '.join(trusted_keys)}".rstrip(), "require-sigs = true"]
    extra = env.get("NIX_CONFIG", "").strip()
    sandboxing = [f"sandbox = {'true' if sandbox else 'false'}", "sandbox-fallback = false"]
    env["NIX_CONFIG"] = "\n".join(settings + ([extra] if extra else []) + sandboxing) + "\n"
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


@attrs.frozen
class NixOptions:
    """The flags every build passes explicitly (nix's own defaults here are -j 1).

    ``builders`` is Nix's ``--builders`` value (remote machines); ``substituters`` and
    ``trusted_keys`` name binary caches and the public keys their paths must be signed with.
    """

    max_jobs: int = 1
    cores: int = 1
    print_build_logs: bool = False
    builders: str | None = None
    keep_going: bool = True
    sandbox: bool = True  # off only for host-toolchain builds (see ``build``)
    substituters: tuple[str, ...] = ()
    trusted_keys: tuple[str, ...] = ()

    def argv(self) -> list[str]:
        args = ["--max-jobs", str(self.max_jobs), "--cores", str(self.cores)]
        if self.print_build_logs:
            args.append("-L")
        if self.builders is not None:
            args += ["--builders", self.builders]
        if self.keep_going:
            args.append("--keep-going")
        return args

    def env(self) -> dict[str, str]:
        return nix_env(sandbox=self.sandbox, substituters=self.substituters, trusted_keys=self.trusted_keys)


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


def target_of(path: str | None, keys: Sequence[str]) -> str | None:
    """The key whose derivation ``path`` (a .drv or an output path) is: its name ends in ``-KEY``.

    Nix's log names derivations, not installables, so this naming rule is what ties the two
    together; the longest matching key wins.
    """
    if not path:
        return None
    stem = path.removesuffix(".drv")
    found = [key for key in keys if stem.endswith(f"-{key}")]
    return max(found, key=len) if found else None


def part_owner(path: str | None, keys: Sequence[str]) -> str | None:
    """The key whose variant a per-object build's part (plan, object or link) is: its
    failure is the variant's failure, and its log lines belong to the variant's log.
    ``object_progress.step_of`` holds the naming rule."""
    unit = step_of(path, keys)
    return unit.variant if unit is not None else None


def nix_argv(*args: str) -> list[str]:
    return [nix_executable(), *args]


def shell_command(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """``argv`` as a command that works when pasted into a shell: the settings kernel-builder
    passes in ``NIX_CONFIG`` become ``--option NAME VALUE`` flags, since a plain shell
    has none of them (without ``experimental-features`` nix refuses flakes)."""
    config = (env if env is not None else nix_env()).get("NIX_CONFIG", "")
    options: list[str] = []
    for line in config.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip():
            options += ["--option", name.strip(), value.strip()]
    program = Path(argv[0]).name if argv else ""
    flags = options if program in ("nix", "nix-store") else []
    return shlex.join([*argv[:1], *flags, *argv[1:]])


def run_nix(
    args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None, program: str = "nix", hint: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run nix (or ``nix-store``), capture output; ``NixError`` with the command and stderr tail on failure."""
    argv = nix_argv(*args) if program == "nix" else [_sibling(program), *args]
    done = _children.run(argv, cwd=cwd, env=nix_env())
    if done.returncode != 0:
        raise NixError(
            f"`{shell_command(argv)}` failed (exit {done.returncode}):\n{_tail(explain(clean_stderr(done.stderr)), 40)}",
            hint=hint or "rerun the command above to see the whole output",
        )
    return done


def _sibling(program: str) -> str:
    """``nix-store`` and friends next to the nix binary in use."""
    found = Path(nix_executable()).with_name(program)
    return str(found) if found.exists() else program


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


_FALLBACK = re.compile(r"(?:\(usually happens due to networking issues\))?;? ?try '--fallback' to build derivation from source ?")


def explain(text: str) -> str:
    """Nix's text with advice kernel-builder cannot follow replaced: `build` has no
    ``--fallback``; a substitute that fails is a damaged or missing NAR in the cache."""
    return _FALLBACK.sub(
        " (the binary cache holds a damaged or incomplete copy: rebuild without --cache, or push the "
        "variant to the cache again with `kernel-builder cache push`) ", text,
    ).rstrip()


def check_builders(builders: str | None, max_jobs: int, *, caches: bool = False) -> None:
    """``--builders @FILE`` names a readable machines file, and ``-j 0`` has builders or
    caches (``-j 0 --cache URL`` fetches what the caches hold and builds nothing)."""
    if builders is not None and builders.startswith("@"):
        path = Path(builders[1:])
        try:
            text = read_text(path)
        except FileNotFoundError:
            raise ConfigError(f"--builders {builders}: the machines file {path} does not exist",
                           hint="pass an existing Nix machines file (one `URI SYSTEM SSH-KEY MAX-JOBS` line per builder)") from None
        except UnreadableFile as exc:
            raise ConfigError(f"--builders {builders}: the machines file {path} {exc.reason}",
                           hint="pass a Nix machines file (one `URI SYSTEM SSH-KEY MAX-JOBS` line per builder)") from None
        if not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
            raise ConfigError(f"--builders {builders}: the machines file {path} lists no machine",
                           hint="add one `URI SYSTEM SSH-KEY MAX-JOBS` line per builder")
    if max_jobs == 0 and not (builders or "").strip() and not caches:
        raise ConfigError("-j 0 allows no build on this machine, and neither --builders nor --cache was given, "
                       "so nothing could build or be fetched",
                       hint="pass --builders 'ssh://HOST x86_64-linux' (or @MACHINES-FILE) or --cache URL, "
                       "or allow local builds with -j N")


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


# -- binary caches ----------------------------------------------------------------------


def generate_cache_key(name: str, secret: Path, public: Path) -> None:
    """``nix-store --generate-binary-cache-key``: an ed25519 pair, the public half is ``NAME:base64``."""
    run_nix(["--generate-binary-cache-key", name, str(secret), str(public)], program="nix-store")


def derivations(installables: Sequence[str], *, flake_args: Sequence[str] = (), cwd: str | None = None) -> dict[str, Any]:
    """``nix show-derivation`` of the installables: drv path -> its JSON (outputs, inputs, env)."""
    done = run_nix(["show-derivation", *flake_args, *installables], cwd=cwd)
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    return data


def input_closure(drvs: dict[str, Any]) -> list[str]:
    """Everything a store needs to build these derivations without building anything else:
    the closure of their input sources and of their input derivations' outputs (the
    toolchain). It is what Nix copies to a remote builder; the fetched artifacts the
    toolchain was made from are not part of it. Inputs this store lacks (a variant that
    was fetched, not built, here) are left out."""
    roots = sorted({src for d in drvs.values() for src in d.get("inputSrcs", [])})
    inputs = sorted({drv for d in drvs.values() for drv in d.get("inputDrvs", {})})
    roots += derivation_outputs(inputs)
    absent = set(invalid_paths(roots))
    roots = [root for root in roots if root not in absent]
    if not roots:
        return []
    return sorted(set(run_nix(["-qR", *roots], program="nix-store").stdout.split()))


def per_object_parts(drvs: Sequence[str], keys: Sequence[str]) -> list[str]:
    """The .drv files of the plan, objects and link of these variant derivations (of the
    variants named by ``keys``; see ``part_owner``), from their derivation closure: what
    `cache push --objects` pushes the outputs of. A monolithic variant has none."""
    if not drvs:
        return []
    closure = run_nix(["-qR", *drvs], program="nix-store").stdout.split()
    return sorted(p for p in closure if p.endswith(".drv") and part_owner(p, keys))


def derivation_outputs(drvs: Sequence[str]) -> list[str]:
    """The output paths of these .drv files (``nix-store -q --outputs``), valid or not."""
    if not drvs:
        return []
    return run_nix(["-q", "--outputs", *drvs], program="nix-store").stdout.split()


def copy_to_cache(url: str, paths: Sequence[str], secret_key: Path) -> subprocess.CompletedProcess[str]:
    """``nix copy`` the paths (with their closures) to a binary cache, signing each with the key."""
    sep = "&" if "?" in url else "?"
    target = f"{url}{sep}secret-key={quote(str(secret_key), safe='/')}"  # Nix percent-decodes query values
    if url.startswith("file://") and "compression=" not in url:
        target += "&compression=zstd"
    return run_nix(
        ["copy", "--to", target, *paths],
        hint="check the cache URL (file:///DIR, s3://BUCKET?region=..., ssh://HOST) and that the secret key file is readable",
    )


def cache_path_info(url: str, paths: Sequence[str]) -> dict[str, list[str]]:
    """Which of the paths the cache has, with the names of the keys they are signed with:
    ``{path: [key name, ...]}`` (an unsigned path maps to ``[]``; missing ones are absent)."""
    if not paths:
        return {}
    done = run_nix(["path-info", "--json", "--store", url, *paths],
                   hint="check the cache URL; a file:// cache is a directory `cache push` wrote")
    found: dict[str, list[str]] = {}
    for item in json.loads(done.stdout):
        if item.get("valid", True):
            found[item["path"]] = sorted({sig.split(":", 1)[0] for sig in item.get("signatures", [])})
    return found


def untrusted_paths(url: str, paths: Sequence[str], trusted_keys: Sequence[str]) -> list[str]:
    """The paths (all in the cache) that carry no valid signature by any of ``trusted_keys``."""
    if not paths:
        return []
    argv = nix_argv("store", "verify", "--no-contents", "--store", url,
                    "--option", "trusted-public-keys", " ".join(trusted_keys), *paths)
    done = _children.run(argv, env=nix_env())
    return sorted(set(re.findall(r"path '(/nix/store/[^']+)' is untrusted", _ANSI.sub("", done.stderr))))


def modified_paths(url: str, paths: Sequence[str]) -> list[str]:
    """The paths (all in the cache) whose NAR does not match the NarHash of their narinfo
    (``nix store verify`` of the contents, signatures left out)."""
    if not paths:
        return []
    done = _children.run(nix_argv("store", "verify", "--no-trust", "--store", url, *paths), env=nix_env())
    return sorted(set(re.findall(r"path '(/nix/store/[^']+)' was modified!", _ANSI.sub("", done.stderr))))


def invalid_paths(paths: Sequence[str]) -> list[str]:
    """The paths this store does not hold (``nix-store --check-validity --print-invalid``)."""
    if not paths:
        return []
    return run_nix(["--check-validity", "--print-invalid", *paths], program="nix-store").stdout.split()
