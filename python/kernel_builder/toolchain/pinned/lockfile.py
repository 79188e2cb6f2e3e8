"""The toolchain lock: every artifact a pinned build set is made of, read by Python and Nix.

``nix/toolchain-lock.json`` holds two parts:

* ``requests``: what we ask for (Debian package names per group, pip requirements per
  Python environment, which environment serves which build set). Maintainers edit these.
* the resolution, written by ``kernel-builder toolchain lock``: one ``artifacts`` entry per
  file (a Debian ``.deb`` or a wheel) with its name, version, file name, sha256 and public
  URL, the ``groups`` that list artifact keys, and the ``seed`` (the static busybox that
  every derivation starts from, taken out of its pinned ``.deb``).

The lock's ``system`` (x86_64-linux) is the machine its toolchains run on; it cross-builds
for ``requests.targets``. ``requests.hosts`` pins native toolchains of other machines
(aarch64-linux: Grace Hopper / Grace Blackwell hosts build there without an x86_64
builder): each host's requests resolve into groups named ``<system>/<group>``
(``aarch64-linux/runtime``, ``aarch64-linux/env:torch2.13``; see ``host_group``) and its
seed into ``hostSeeds.<system>``.

``nix/toolchains/pinned.nix`` turns each artifact into a fixed-output derivation
(``builtin:fetchurl``, flat sha256): online Nix fetches it from ``url``; offline,
``kernel-builder toolchain fetch`` adds the same file with ``nix-store --add-fixed``,
which gives the same store path (``fixed_output_path`` computes it here).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import attrs

from kernel_builder import _files
from kernel_builder.errors import ConfigError
from kernel_builder.toolchain.pinned.lockrequests import ENV_VAR, lock_path

__all__ = [
    "Artifact",
    "Seed",
    "ToolchainLock",
    "ENV_VAR",
    "SCHEMA",
    "lock_path",
    "load_lock",
    "store_name",
    "emulated_group",
    "host_group",
    "fixed_output_path",
    "nix_base32",
]

SCHEMA = 1
# Environments every pinned build set needs besides its own: pip itself, the driver's, and
# the ziglang wheel whose glibc symbol lists make the glibc 2.28 link stubs (not installed).
COMMON_ENVIRONMENTS = ("installer", "driver", "glibc-stubs")
STORE_DIR = "/nix/store"
_STORE_NAME_BAD = re.compile(r"[^A-Za-z0-9+\-._?=]")


def emulated_group(environment: str) -> str:
    """The group of a cross environment's emulated check environment
    (``requests.targets.<system>.emulation.environments.<environment>``): what the target's
    torch needs to be imported under qemu, beside the build's ``env:<environment>``."""
    return f"env:{environment}-emulated"


def host_group(system: str, group: str) -> str:
    """The lock's name of a native host's group (``requests.hosts.<system>``):
    ``host_group("aarch64-linux", "env:torch2.13")`` is ``aarch64-linux/env:torch2.13``."""
    return f"{system}/{group}"


@attrs.frozen
class Artifact:
    """One pinned file: a Debian package or a wheel."""

    key: str  # the store name, unique in the lock
    kind: str  # "deb" or "wheel"
    name: str
    version: str
    file: str
    sha256: str
    url: str

    @property
    def store_path(self) -> str:
        return fixed_output_path(self.key, self.sha256, recursive=False)

    def as_record(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "version": self.version, "file": self.file, "sha256": self.sha256, "url": self.url}


@attrs.frozen
class Seed:
    """The builder of the first derivations: one member of a pinned ``.deb``, as a directory
    holding that file (busybox dispatches on its own name, so the file keeps it)."""

    name: str
    deb: str  # artifact key of the .deb
    member: str  # path inside the .deb's data archive
    nar_sha256: str  # sha256 of the NAR of the directory holding the member

    @property
    def store_path(self) -> str:
        return fixed_output_path(self.name, self.nar_sha256, recursive=True)


@attrs.frozen
class ToolchainLock:
    """The parsed lock file (see the module docstring)."""

    path: Path
    requests: dict[str, Any]
    artifacts: dict[str, Artifact]
    groups: dict[str, tuple[str, ...]]
    seed: Seed | None
    system: str
    # The seeds of the native hosts (``hostSeeds``): system -> seed.
    host_seeds: dict[str, Seed] = attrs.field(factory=dict)

    @property
    def hosts(self) -> dict[str, dict[str, Any]]:
        """``requests.hosts``: system -> the requests of that machine's native toolchains."""
        return dict(self.requests.get("hosts") or {})

    def native_system(self, machine_system: str) -> str:
        """The system whose toolchains a machine of ``machine_system`` builds with: its own
        where the lock pins it natively (``system`` or a host), else the lock's ``system``."""
        return machine_system if machine_system in self.hosts else self.system

    def seed_of(self, system: str | None = None) -> Seed | None:
        """The seed of ``system``'s toolchains (the lock's own by default)."""
        return self.seed if system in (None, self.system) else self.host_seeds.get(system)

    def _groups_of(self, system: str | None) -> tuple[str, dict[str, tuple[str, ...]], dict[str, str]]:
        """(the name prefix, the groups as a toolchain of ``system`` names them, its build sets)."""
        if system in (None, self.system):
            return "", {g: keys for g, keys in self.groups.items() if "/" not in g}, self.build_sets
        if system not in self.hosts:
            raise _fail(self.path, f"no toolchain is pinned for {system} (the lock's system is {self.system}; "
                        f"requests.hosts has {', '.join(sorted(self.hosts)) or 'none'})",
                        hint=f"name one of {', '.join([self.system, *sorted(self.hosts)])}; a new native host is a "
                        "requests.hosts entry (docs/nix.md, \"Native aarch64-linux hosts\")")
        prefix = host_group(system, "")
        return (prefix, {g[len(prefix):]: keys for g, keys in self.groups.items() if g.startswith(prefix)},
                dict(self.hosts[system].get("buildSets") or {}))

    @property
    def build_sets(self) -> dict[str, str]:
        """Build-set key (``torch2.14-cuda13.0``) -> the environment that serves it."""
        return dict(self.requests.get("buildSets", {}))

    def environment_of(self, build_set: str) -> str:
        try:
            return self.build_sets[build_set]
        except KeyError:
            raise ConfigError(
                f"build set {build_set!r} is not pinned in {self.path}",
                hint="pinned build sets: " + ", ".join(sorted(self.build_sets)),
            ) from None

    def cross_environments_of(self, build_set: str) -> list[tuple[str, str]]:
        """(target system, environment) of each cross target that pins ``build_set``."""
        targets = self.requests.get("targets") or {}
        return [(system, t["buildSets"][build_set]) for system, t in targets.items() if build_set in t["buildSets"]]

    def artifacts_for(self, build_sets: list[str] | None = None, system: str | None = None) -> list[Artifact]:
        """Every artifact the given build sets need (all pinned sets when ``None``), in lock order,
        for the toolchains of ``system`` (the lock's ``system`` by default, or a native host's).

        Each build set needs the common groups (seed, runtime, compiler, sysroot, python,
        tools, the cross compilers, the ``COMMON_ENVIRONMENTS``) plus its own Python
        environment and the cross targets' environments for it (``requests.targets``);
        ``None`` means every group of that system (the other hosts' groups are never needed).
        """
        prefix, groups, build_set_envs = self._groups_of(system)
        if build_sets is None:  # everything, the CLI package's environment included
            wanted = list(groups)
            chosen: list[str] = []
        else:
            chosen = build_sets
            wanted = [g for g in groups if not g.startswith("env:")] + [f"env:{e}" for e in COMMON_ENVIRONMENTS]
        for key in chosen:
            if prefix:  # a native host: its own environment, nothing cross-built
                if key not in build_set_envs:
                    raise ConfigError(f"build set {key!r} is not pinned for {system} in {self.path}",
                                      hint=f"pinned there (requests.hosts.{system}.buildSets): " + ", ".join(sorted(build_set_envs)))
                envs = [(f"requests.hosts.{system}.buildSets", build_set_envs[key])]
            else:
                envs = [("requests.buildSets", self.environment_of(key))] + [
                    (f"requests.targets.{target}.buildSets", env) for target, env in self.cross_environments_of(key)
                ]
            for where, name in envs:  # the cross targets' environment of the same key too
                env = f"env:{name}"
                if env not in groups:  # requested but never resolved: fetching nothing would pass silently
                    raise _fail(self.path, f"{where}.{key}: environment {name!r} has no resolved artifacts (no groups.{prefix}{env})")
                for group in (env, emulated_group(name)):  # the emulated check's, where there is one
                    if group in groups and group not in wanted:
                        wanted.append(group)
        keys: list[str] = []
        for group in wanted:
            for key in groups.get(group, ()):
                if key not in keys:
                    keys.append(key)
        seed = self.seed_of(system)
        if seed is not None and seed.deb not in keys:
            keys.insert(0, seed.deb)
        return [self.artifacts[k] for k in keys]


_LOCK_LIMIT = 16 << 20  # the lock is ~60 kB; CUDA environments make it grow, not 300 times
_FIX = "regenerate it with `kernel-builder toolchain lock` (edit only its `requests`); see docs/nix.md"
_ARTIFACT_FIELDS = ("kind", "name", "version", "file", "sha256", "url")
_SEED_FIELDS = (("name", "name"), ("deb", "deb"), ("member", "member"), ("narSha256", "nar_sha256"))


def _fail(path: Path, message: str, hint: str = _FIX) -> ConfigError:
    return ConfigError(f"{path}: {message}", hint=hint)


def _kind(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _expect(path: Path, where: str, value: object, kind: type, what: str) -> Any:
    """``value`` when it is a ``kind``, else an error naming the key path and what was found."""
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise _fail(path, f"{where}: expected {what}, got {_kind(value)}")
    return value


def _read(path: Path) -> dict[str, Any]:
    try:
        text = _files.read_text(path, limit=_LOCK_LIMIT)
    except FileNotFoundError:
        raise ConfigError(f"the toolchain lock {path} does not exist", hint="set $KERNEL_BUILDER_TOOLCHAIN_LOCK or reinstall kernel-builder") from None
    except _files.UnreadableFile as exc:
        where = f"{path}:{exc.line}:{exc.column}" if exc.line else str(path)
        raise ConfigError(f"the toolchain lock {where} {exc.reason}", hint=_FIX) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}", hint=_FIX) from None
    except RecursionError:
        raise _fail(path, "nested too deeply") from None
    data = _expect(path, "the top level", data, dict, "an object")
    if data.get("schema") != SCHEMA:
        raise _fail(
            path, f"schema: expected {SCHEMA}, got {data.get('schema')!r}",
            hint=f"this kernel-builder reads schema {SCHEMA}; use the kernel-builder that wrote the lock, or {_FIX}",
        )
    return data


def _artifacts(path: Path, raw: object) -> dict[str, Artifact]:
    artifacts: dict[str, Artifact] = {}
    for key, record in _expect(path, "artifacts", raw if raw is not None else {}, dict, "an object of artifact records").items():
        record = _expect(path, f"artifacts.{key}", record, dict, "an object")
        fields = {}
        for name in _ARTIFACT_FIELDS:
            if name not in record:
                raise _fail(path, f"artifacts.{key}: missing `{name}`")
            fields[name] = _expect(path, f"artifacts.{key}.{name}", record[name], str, "a string")
        if fields["kind"] not in ("deb", "wheel"):
            raise _fail(path, f"artifacts.{key}.kind: expected \"deb\" or \"wheel\", got {fields['kind']!r}")
        if not re.fullmatch(r"[0-9a-f]{64}", fields["sha256"]):
            raise _fail(path, f"artifacts.{key}.sha256: expected 64 hex digits")
        if store_name(key) != key:
            raise _fail(path, f"artifacts.{key}: not a valid store name")
        artifacts[key] = Artifact(key=key, **fields)
    return artifacts


def _groups(path: Path, raw: object, artifacts: dict[str, Artifact]) -> dict[str, tuple[str, ...]]:
    groups: dict[str, tuple[str, ...]] = {}
    for name, keys in _expect(path, "groups", raw if raw is not None else {}, dict, "an object of artifact-key arrays").items():
        keys = _expect(path, f"groups.{name}", keys, list, "an array of artifact keys")
        for i, key in enumerate(keys):
            _expect(path, f"groups.{name}[{i}]", key, str, "an artifact key")
            if key not in artifacts:
                raise _fail(path, f"groups.{name}[{i}]: unknown artifact {key!r}")
        groups[name] = tuple(keys)
    return groups


def _seed(path: Path, raw: object, artifacts: dict[str, Artifact], where: str = "seed") -> Seed | None:
    if not raw:
        return None
    raw = _expect(path, where, raw, dict, "an object {name, deb, member, narSha256}")
    fields = {}
    for key, attr in _SEED_FIELDS:
        if key not in raw:
            raise _fail(path, f"{where}: missing `{key}`")
        fields[attr] = _expect(path, f"{where}.{key}", raw[key], str, "a string")
    if fields["deb"] not in artifacts:
        raise _fail(path, f"{where}.deb: unknown artifact {fields['deb']!r}")
    return Seed(**fields)


def _requests(path: Path, raw: object, groups: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    requests = _expect(path, "requests", raw if raw is not None else {}, dict, "an object")
    build_sets = _expect(path, "requests.buildSets", requests.get("buildSets", {}), dict, "an object {build set: environment}")
    python = _expect(path, "requests.python", requests.get("python", {}), dict, "an object")
    environments = _expect(path, "requests.python.environments", python.get("environments", {}), dict, "an object {environment: requirements}")
    for key, env in build_sets.items():
        _expect(path, f"requests.buildSets.{key}", env, str, "an environment name")
        if env not in environments:
            raise _fail(path, f"requests.buildSets.{key}: unknown environment {env!r} "
                        f"(requests.python.environments has {', '.join(sorted(environments)) or 'none'})")
    _targets(path, requests.get("targets", {}), requests)
    _hosts(path, requests.get("hosts", {}))
    return requests


def _hosts(path: Path, raw: object) -> None:
    """``requests.hosts``: per native host system, its machine, Debian architecture and
    groups, seed, Python environments and the build sets they serve (see docs/nix.md,
    "Native aarch64-linux hosts")."""
    for system, host in _expect(path, "requests.hosts", raw, dict, "an object {system: host}").items():
        where = f"requests.hosts.{system}"
        host = _expect(path, where, host, dict, "an object {machine, debian, seed, python, buildSets}")
        machine = _expect(path, f"{where}.machine", host.get("machine"), str, "a machine name")
        if machine not in _MACHINES:
            raise _fail(path, f"{where}.machine: expected one of {', '.join(_MACHINES)}, got {machine!r}")
        debian = _expect(path, f"{where}.debian", host.get("debian"), dict, "an object {architecture, groups}")
        _expect(path, f"{where}.debian.architecture", debian.get("architecture"), str, "a Debian architecture such as arm64")
        groups = _expect(path, f"{where}.debian.groups", debian.get("groups"), dict, "an object {group: package names}")
        seed = _expect(path, f"{where}.seed", host.get("seed"), dict, "an object {group, deb, member, name}")
        for field in ("group", "deb", "member", "name"):
            _expect(path, f"{where}.seed.{field}", seed.get(field), str, "a string")
        if seed["group"] not in groups:
            raise _fail(path, f"{where}.seed.group: unknown group {seed['group']!r} ({where}.debian.groups has {', '.join(sorted(groups))})")
        python = _expect(path, f"{where}.python", host.get("python"), dict, "an object {environments, test, importCheck}")
        environments = _expect(path, f"{where}.python.environments", python.get("environments"), dict, "an object {environment: requirements}")
        for key, env in _expect(path, f"{where}.buildSets", host.get("buildSets", {}), dict, "an object {build set: environment}").items():
            if env not in environments:
                raise _fail(path, f"{where}.buildSets.{key}: unknown environment {env!r} ({where}.python.environments has {', '.join(sorted(environments)) or 'none'})")
        for env in _expect(path, f"{where}.cuda", host.get("cuda", {}), dict, "an object {environment: CUDA version}"):
            if env not in environments:
                raise _fail(path, f"{where}.cuda.{env}: unknown environment {env!r} ({where}.python.environments has {', '.join(sorted(environments)) or 'none'})")


_MACHINES = ("aarch64",)  # what nix/toolchains/pinned/parts.nix (`machines`) can cross-build for


def _targets(path: Path, raw: object, requests: dict[str, Any]) -> None:
    """``requests.targets``: per cross target system, its machine, Debian groups, torch
    environments and the build sets they serve (which must be pinned natively too)."""
    groups = (requests.get("debian") or {}).get("groups") or {}
    for system, target in _expect(path, "requests.targets", raw, dict, "an object {system: target}").items():
        where = f"requests.targets.{system}"
        target = _expect(path, where, target, dict, "an object {machine, gnu, debianGroups, environments, buildSets}")
        machine = _expect(path, f"{where}.machine", target.get("machine"), str, "a machine name")
        if machine not in _MACHINES:
            raise _fail(path, f"{where}.machine: expected one of {', '.join(_MACHINES)}, got {machine!r}")
        _expect(path, f"{where}.gnu", target.get("gnu"), str, "a GNU triple such as aarch64-linux-gnu")
        for i, group in enumerate(_expect(path, f"{where}.debianGroups", target.get("debianGroups"), list, "an array of group names")):
            if group not in groups:
                raise _fail(path, f"{where}.debianGroups[{i}]: unknown group {group!r} (requests.debian.groups has {', '.join(sorted(groups))})")
        environments = _expect(path, f"{where}.environments", target.get("environments"), dict, "an object {environment: requirements}")
        for key, env in _expect(path, f"{where}.buildSets", target.get("buildSets"), dict, "an object {build set: environment}").items():
            if env not in environments:
                raise _fail(path, f"{where}.buildSets.{key}: unknown environment {env!r} ({where}.environments has {', '.join(sorted(environments)) or 'none'})")
            if key not in (requests.get("buildSets") or {}):
                raise _fail(path, f"{where}.buildSets.{key}: {key} is not pinned for this system (requests.buildSets), "
                            "whose environment runs CMake for the cross build", hint=f"add {key} to requests.buildSets, or remove it here; then {_FIX}")
        _emulation(path, f"{where}.emulation", target.get("emulation"), groups, environments)


def _emulation(path: Path, where: str, raw: object, groups: dict[str, Any], environments: dict[str, Any]) -> None:
    """``requests.targets.<system>.emulation`` (optional): the Debian groups of qemu and the
    target's CPython, and per cross environment the wheels, stand-in libraries and load-only
    libraries its torch needs to be imported under qemu (see docs/nix.md, "Checks under
    emulation")."""
    if raw is None:
        return
    emulation = _expect(path, where, raw, dict, "an object {debianGroups, environments, standIns, loadOnly}")
    for i, group in enumerate(_expect(path, f"{where}.debianGroups", emulation.get("debianGroups"), list, "an array of group names")):
        if group not in groups:
            raise _fail(path, f"{where}.debianGroups[{i}]: unknown group {group!r} (requests.debian.groups has {', '.join(sorted(groups))})")
    for field in ("environments", "standIns", "loadOnly"):
        for env, value in _expect(path, f"{where}.{field}", emulation.get(field, {}), dict, "an object {environment: array}").items():
            if env not in environments:
                raise _fail(path, f"{where}.{field}.{env}: unknown environment {env!r} (the target's environments: {', '.join(sorted(environments))})")
            _expect(path, f"{where}.{field}.{env}", value, list, "an array of strings")


def load_lock(path: Path | None = None) -> ToolchainLock:
    """Read and validate the lock file: every error names the file, the key path and the fix."""
    path = path or lock_path()
    data = _read(path)
    system = _expect(path, "system", data.get("system", "x86_64-linux"), str, "a Nix system such as x86_64-linux")
    artifacts = _artifacts(path, data.get("artifacts"))
    groups = _groups(path, data.get("groups"), artifacts)
    seed = _seed(path, data.get("seed"), artifacts)
    requests = _requests(path, data.get("requests"), groups)
    host_seeds = {}
    for host, raw in _expect(path, "hostSeeds", data.get("hostSeeds", {}), dict, "an object {system: seed}").items():
        if host not in (requests.get("hosts") or {}):
            raise _fail(path, f"hostSeeds.{host}: {host} is not a host of requests.hosts")
        host_seeds[host] = _seed(path, raw, artifacts, where=f"hostSeeds.{host}")
    return ToolchainLock(path, requests, artifacts, groups, seed, system, {h: s for h, s in host_seeds.items() if s is not None})


def store_name(file_name: str) -> str:
    """A file name as a store path name (Nix allows only ``[A-Za-z0-9+-._?=]``)."""
    return _STORE_NAME_BAD.sub("_", unquote(file_name)).lstrip(".")


# -- store paths of fixed-output derivations ----------------------------------------------

_BASE32 = "0123456789abcdfghijklmnpqrsvwxyz"


def nix_base32(data: bytes) -> str:
    """Nix's base-32 (its own alphabet, least significant bits first)."""
    length = (len(data) * 8 + 4) // 5
    out = []
    for n in range(length - 1, -1, -1):
        bit = n * 5
        i, j = divmod(bit, 8)
        c = data[i] >> j
        if i + 1 < len(data):
            c |= data[i + 1] << (8 - j)
        out.append(_BASE32[c & 0x1F])
    return "".join(out)


def _compress(digest: bytes, size: int) -> bytes:
    out = bytearray(size)
    for i, b in enumerate(digest):
        out[i % size] ^= b
    return bytes(out)


def fixed_output_path(name: str, sha256_hex: str, *, recursive: bool, store: str = STORE_DIR) -> str:
    """The store path of a fixed-output sha256 file (``builtins.fetchurl``, ``nix-store
    --add-fixed sha256``) or, with ``recursive``, of a directory hashed as a NAR."""
    if recursive:  # Nix addresses a recursive sha256 path like `nix-store --add` does
        fingerprint = f"source:sha256:{sha256_hex}:{store}:{name}"
    else:
        inner = hashlib.sha256(f"fixed:out:sha256:{sha256_hex}:".encode()).hexdigest()
        fingerprint = f"output:out:sha256:{inner}:{store}:{name}"
    digest = _compress(hashlib.sha256(fingerprint.encode()).digest(), 20)
    return f"{store}/{nix_base32(digest)}-{name}"
