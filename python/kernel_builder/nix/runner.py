"""Running nix: the offline-safe settings every invocation gets, the command line, and the
one place a nix subprocess is started (``run_nix``; ``builds.build`` for ``nix build``)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from kernel_builder import _children
from kernel_builder._files import UnreadableFile, read_text, write_atomic
from kernel_builder.errors import ConfigError, NixError
from kernel_builder.nix.events import _tail, clean_stderr, explain
from kernel_builder.state import state_dir

__all__ = [
    "NixOptions",
    "check_builders",
    "empty_registry",
    "eval_json",
    "flake_path",
    "nix_argv",
    "nix_env",
    "nix_executable",
    "run_nix",
    "shell_command",
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
