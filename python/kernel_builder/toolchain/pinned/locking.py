"""``kernel-builder toolchain lock``: resolve the lock's requests into pinned artifacts.

Resolution uses the ordinary clients, so it sees exactly what ``fetch`` will download:
``apt-cache show`` and ``apt-get download --print-uris`` for Debian packages (version,
sha256, pool URL), and ``pip install --dry-run --report`` for each Python environment
(every wheel with its sha256, for CPython 3.11 on manylinux x86_64; the versions the lock
already pins are kept where the requests allow them, see ``wheel_preferences``) and for each C++
dependency of ``requests.cpp`` (one wheel, without its Python dependencies: only its
headers are used, see ``kernel_builder/data/cpp_dependencies.json``), and for each
import-check set of ``requests.python.importCheck`` (``loader``: what the ``kernels``
loader always brings; otherwise a ``python-depends`` name). Wheels that come
from a local mirror get their public URL (PyPI's, or PyTorch's for ``+cpu`` builds).
Each kernel-test package (``requests.python.test``) is resolved on its own, with its
dependencies, into group ``test:<name>``: the package set a kernel flake's
``pythonCheckInputs`` picks from (see docs/testing.md).
Each native host of ``requests.hosts`` (aarch64-linux) is resolved the same way for its
machine: its Debian groups for its architecture (``bash:arm64``), its environments, test
packages and import-check sets for its manylinux platform, into ``<system>/<group>``
groups, and its seed into ``hostSeeds``.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from packaging.utils import canonicalize_name

from kernel_builder import _children
from kernel_builder._files import write_atomic
from kernel_builder.errors import ConfigError
from kernel_builder.toolchain.pinned.clients import apt_arch_args, pip_env, pip_platform_args, run_tool, seed_nar_hash
from kernel_builder.toolchain.pinned.fetch import download_debs
from kernel_builder.toolchain.pinned.lockfile import SCHEMA, Artifact, ToolchainLock, emulated_group, host_group, load_lock, lock_path, store_name
from kernel_builder.toolchain.pinned.lockrequests import check_package_name

__all__ = ["resolve_debs", "resolve_wheels", "public_wheel_url", "relock", "wheel_preferences"]

def resolve_debs(names: list[str], *, pins: dict[str, str] | None = None) -> list[dict[str, str]]:
    """Version, file, sha256 and URL of each Debian package (its candidate, or ``pins[name]``).

    A name may carry a foreign architecture (``libpython3.11-dev:arm64``: the cross targets'
    packages); it stays in the record's name, so fetch downloads that architecture's file."""
    specs = [f"{n}={pins[n]}" if pins and n in pins else n for n in names]
    arch = apt_arch_args(names)
    shown = run_tool(["apt-cache", *arch, "show", "--no-all-versions", *specs], "apt-cache show",
                     hint="a pinned version Debian no longer serves needs `toolchain lock --upgrade-debs`" if pins else None)
    versions: dict[str, str] = {}
    for block in shown.strip().split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z0-9-]+): (.*)$", block, flags=re.M))
        if "Package" in fields:
            versions.setdefault(_arch_name(fields["Package"], fields.get("Architecture", "")), fields["Version"])
    hint = "run `apt-get update` first" + ("; a pinned version Debian no longer serves needs `toolchain lock --upgrade-debs`" if pins else "")
    uris = run_tool(["apt-get", *arch, "download", "--print-uris", *specs], "apt-get download --print-uris", hint=hint)
    found: dict[str, dict[str, str]] = {}
    for line in uris.splitlines():
        match = re.match(r"'(\S+)' (\S+) \d+ SHA256:([0-9a-f]{64})", line)
        if not match:
            continue
        url, file, sha = match.groups()
        name = _arch_name(file.split("_", 1)[0], file.rsplit("_", 1)[1].removesuffix(".deb"))
        found[name] = {"kind": "deb", "name": name, "version": versions.get(name, ""), "file": file, "sha256": sha, "url": url}
    missing = [n for n in names if n not in found]
    if missing:
        raise ConfigError(f"apt did not resolve {', '.join(missing)}", hint="run `apt-get update` first")
    return [found[n] for n in names]


def _arch_name(package: str, arch: str) -> str:
    """``package`` as the lock names it: plain for the machine's own packages (amd64) and
    architecture-independent ones, ``package:arm64`` for a foreign architecture's."""
    return package if arch in ("amd64", "all", "") else f"{package}:{arch}"


def public_wheel_url(url: str, file: str) -> str:
    """The public download URL of a wheel (a local mirror's ``file://`` URL is mapped)."""
    if url.startswith(("https://", "http://")):
        return url
    parts = file[: -len(".whl")].split("-")
    name, version, python_tag = parts[0], parts[1], parts[-3]
    if "+" in version:  # a PyTorch build with a local label (2.13.0+cpu) lives on PyTorch's index
        return f"https://download.pytorch.org/whl/{version.split('+', 1)[1]}/{quote(file)}"
    return f"https://files.pythonhosted.org/packages/{python_tag}/{name[0].lower()}/{name.lower()}/{file}"


def resolve_wheels(
    requirements: list[str], *, python: str = "3.11", deps: bool = True, machine: str = "x86_64",
    prefer: Mapping[str, str] | None = None,
) -> list[dict[str, str]]:
    """Every wheel ``pip`` would install for ``requirements`` on manylinux ``machine``
    (dependencies included unless ``deps`` is false).

    ``prefer`` maps package names to versions to keep where the requirements allow them
    (the lock's current pins): pip gets them as constraints; a preference that pip's error
    names (it conflicts with a requirement, or the index has no such wheel for ``machine``)
    is dropped and pip runs again, so a request that needs another version gets it and
    nothing else moves."""
    kept = {canonicalize_name(n): v for n, v in (prefer or {}).items()}
    options = [*pip_platform_args(python, machine), *([] if deps else ["--no-deps"])]
    while isinstance(data := _pip_report(options, requirements, kept), str):
        blocking = _named_preferences(data, kept)
        if not blocking:  # the requests themselves cannot be met
            raise ConfigError(f"pip install --dry-run --report failed for {', '.join(requirements)} ({machine}):\n{data[-2500:]}")
        for name in blocking:
            del kept[name]
    out = []
    for item in data["install"]:
        info = item["download_info"]
        file = info["url"].rsplit("/", 1)[1].replace("%2B", "+").replace("%2b", "+")
        sha = (info.get("archive_info", {}).get("hashes") or {}).get("sha256") or info["archive_info"]["hash"].split("=", 1)[1]
        out.append({"kind": "wheel", "name": item["metadata"]["name"], "version": item["metadata"]["version"],
                    "file": file, "sha256": sha, "url": public_wheel_url(info["url"], file)})
    return sorted(out, key=lambda a: a["name"].lower())


def _pip_report(options: list[str], requirements: list[str], constraints: Mapping[str, str]) -> dict[str, Any] | str:
    """pip's ``--dry-run --report`` for ``requirements`` under ``name==version`` constraints;
    the report, or pip's output when it fails."""
    with tempfile.TemporaryDirectory(prefix="kb-lock-") as tmp:
        report, pins = Path(tmp) / "report.json", Path(tmp) / "constraints.txt"
        pins.write_text("".join(f"{n}=={v}\n" for n, v in sorted(constraints.items())))
        # Not --quiet: pip says which requirements conflict at its default verbosity only.
        argv = ["python3", "-m", "pip", "install", "--dry-run", "--ignore-installed", "--disable-pip-version-check",
                "--report", str(report), "--target", str(Path(tmp) / "target"), *options,
                *(["--constraint", str(pins)] if constraints else []), *requirements]
        try:
            done = _children.run(argv, env=pip_env())
        except OSError as exc:
            raise ConfigError(f"cannot run python3: {exc.strerror}", hint="pip install --dry-run --report needs python3 on PATH") from None
        return json.loads(report.read_text()) if done.returncode == 0 else f"{done.stdout}\n{done.stderr}".strip()


def _named_preferences(stderr: str, kept: Mapping[str, str]) -> set[str]:
    """The preferences (``name==version`` constraints) that pip's error message names."""
    return {n for n, v in kept.items() if re.search(rf"(?<![\w.-]){re.escape(n)}=={re.escape(v)}(?![\w.])", stderr, re.I)}


def wheel_preferences(current: ToolchainLock, group: str) -> dict[str, str]:
    """The versions to keep when resolving ``group`` again: the group's own pins, and for a
    package it does not pin yet (a new group), the one version the whole lock pins for it."""
    versions: dict[str, set[str]] = {}
    for artifact in current.artifacts.values():
        if artifact.kind == "wheel":
            versions.setdefault(canonicalize_name(artifact.name), set()).add(artifact.version)
    prefer = {name: next(iter(found)) for name, found in versions.items() if len(found) == 1}
    for key in current.groups.get(group, ()):
        artifact = current.artifacts[key]
        if artifact.kind == "wheel":
            prefer[canonicalize_name(artifact.name)] = artifact.version
    return prefer


def relock(
    path: Path | None = None, *, upgrade_debs: bool = False, upgrade_wheels: bool = False,
    only_groups: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Re-resolve every request of the lock at ``path`` and write the new lock atomically.

    Debian packages keep the version the lock already pins (a Debian security update would
    otherwise rebuild every toolchain whenever anyone adds a wheel); ``upgrade_debs`` takes
    each package's current candidate instead. Wheels likewise keep their pinned versions
    where the requests allow them (``wheel_preferences``): adding an environment resolves
    that environment, and a new PyPI release of a dependency moves nothing else;
    ``upgrade_wheels`` takes the newest that the requests allow.

    ``only_groups`` (group names as the lock's ``groups`` has them: a Debian group such as
    ``rust``, ``env:torch2.15``, ``test:pytest``, ``check:tvm-ffi``, ``cpp:cutlass-4.2``)
    resolves just those requests and keeps every other group as the lock has it: adding a
    group of Debian packages takes seconds, not a relock of every environment. An artifact
    no group lists any more is dropped.
    """
    path = path or lock_path()
    current = load_lock(path)
    requests = current.requests
    deb_pins = {} if upgrade_debs else {a.name: a.version for a in current.artifacts.values() if a.kind == "deb"}

    def prefer(group: str) -> dict[str, str]:
        return {} if upgrade_wheels else wheel_preferences(current, group)
    artifacts: dict[str, dict[str, str]] = {}
    groups: dict[str, list[str]] = {}
    requested = dict(_requested_groups(current, prefer, deb_pins))
    unknown = [g for g in only_groups if g not in requested]
    if unknown:
        raise ConfigError(f"{path}: no request makes group {', '.join(map(repr, unknown))}",
                          hint="the groups the requests make: " + ", ".join(requested))
    kept = set(requested) - set(only_groups) if only_groups else set()

    def add(group: str, records: list[dict[str, str]]) -> None:
        keys = groups.setdefault(group, [])
        for record in records:
            key = store_name(record["file"])
            artifacts[key] = record
            if key not in keys:
                keys.append(key)

    for group, resolve in requested.items():
        if group in kept and group in current.groups:
            add(group, [current.artifacts[k].as_record() for k in current.groups[group]])
        else:
            add(group, resolve())
    def seed_record(request: dict[str, str], group: str, deb_name: str, previous: Any) -> dict[str, str]:
        key = next(k for k in groups[group] if artifacts[k]["name"] == deb_name)
        if previous is not None and previous.deb == key and group not in only_groups and only_groups:
            nar = previous.nar_sha256  # the same .deb: the same member
        else:
            with tempfile.TemporaryDirectory(prefix="kb-lock-") as tmp:
                seed_deb = Artifact(key=key, **artifacts[key])
                stored = Path(seed_deb.store_path)  # fetched before: the same file, by its fixed-output path
                deb = stored if stored.is_file() else download_debs([seed_deb], Path(tmp))[key]
                nar = seed_nar_hash(deb, request["member"], request["name"])
        return {"name": request["name"], "deb": key, "member": request["member"], "narSha256": nar}

    seed_request = requests["seed"]
    seed = seed_record(seed_request, seed_request["group"], seed_request["deb"], current.seed)
    host_seeds = {
        system: seed_record(host["seed"], host_group(system, host["seed"]["group"]),
                            f"{host['seed']['deb']}:{host['debian']['architecture']}", current.host_seeds.get(system))
        for system, host in (requests.get("hosts") or {}).items()
    }
    data = {
        "schema": SCHEMA,
        "comment": current_comment(path),
        "system": current.system,
        "requests": requests,
        "seed": seed,
        **({"hostSeeds": host_seeds} if host_seeds else {}),
        "groups": groups,
        "artifacts": dict(sorted(artifacts.items())),
    }
    write_atomic(path, json.dumps(data, indent=1) + "\n")
    return data


def _requested_groups(
    current: ToolchainLock, prefer: Callable[[str], dict[str, str]], deb_pins: dict[str, str],
) -> Iterator[tuple[str, Callable[[], list[dict[str, str]]]]]:
    """(group, how to resolve it) for every group the requests of the lock ``current``
    make, in lock order; nothing is resolved until a group's function is called."""
    requests = current.requests
    debian = requests["debian"]
    for group, names in debian["groups"].items():
        yield group, functools.partial(resolve_debs, list(names), pins=deb_pins)
    python = requests["python"]
    version = python["version"]
    for env, requirements in python["environments"].items():
        yield f"env:{env}", functools.partial(resolve_wheels, list(requirements), python=version, prefer=prefer(f"env:{env}"))
    for requirement in python.get("test", []):
        group = f"test:{check_package_name(requirement)}"
        yield group, functools.partial(resolve_wheels, [requirement], python=version, prefer=prefer(group))
    for name, requirements in (python.get("importCheck") or {}).items():
        yield f"check:{name}", functools.partial(resolve_wheels, list(requirements), python=version, prefer=prefer(f"check:{name}"))
    for name, requirement in (requests.get("cpp") or {}).items():
        yield f"cpp:{name}", functools.partial(resolve_wheels, [requirement], python=version, deps=False)
    # Cross targets: each environment is the target's torch alone (no dependencies): the
    # build reads its headers, CMake package and libraries, and never runs it.
    for target in (requests.get("targets") or {}).values():
        resolved: dict[str, dict[str, str]] = {}

        def cross(env: str, requirements: list[str], machine: str = target["machine"],
                  resolved: dict[str, dict[str, str]] = resolved) -> list[dict[str, str]]:
            wheels = resolve_wheels(requirements, python=version, deps=False, machine=machine, prefer=prefer(f"env:{env}"))
            resolved[env] = {canonicalize_name(w["name"]): w["version"] for w in wheels}
            return wheels

        def emulated(env: str, requirements: list[str], machine: str = target["machine"],
                     resolved: dict[str, dict[str, str]] = resolved) -> list[dict[str, str]]:
            # Installed together with its cross environment, so a wheel both have is preferred
            # at the environment's version (the lock's other pins would give two versions of
            # one project: one pip install cannot take both); see emulated_group.
            if env not in resolved:  # that environment was kept as the lock has it
                resolved[env] = {canonicalize_name(current.artifacts[k].name): current.artifacts[k].version
                                 for k in current.groups.get(f"env:{env}", ())}
            return resolve_wheels(requirements, python=version, machine=machine,
                                  prefer={**prefer(emulated_group(env)), **resolved.get(env, {})})
        for env, requirements in target["environments"].items():
            yield f"env:{env}", functools.partial(cross, env, list(requirements))
        for env, requirements in ((target.get("emulation") or {}).get("environments") or {}).items():
            yield emulated_group(env), functools.partial(emulated, env, list(requirements))
    # Native hosts: the same kinds of requests, for that machine (its Debian architecture,
    # its manylinux platform), into `<system>/<group>` groups.
    for system, host in (requests.get("hosts") or {}).items():
        arch, machine = host["debian"]["architecture"], host["machine"]
        for group, names in host["debian"]["groups"].items():
            yield host_group(system, group), functools.partial(resolve_debs, [_host_deb(n, arch) for n in names], pins=deb_pins)
        host_python = host["python"]
        for env, requirements in host_python["environments"].items():
            group = host_group(system, f"env:{env}")
            yield group, functools.partial(resolve_wheels, list(requirements), python=version, machine=machine, prefer=prefer(group))
        for requirement in host_python.get("test", []):
            group = host_group(system, f"test:{check_package_name(requirement)}")
            yield group, functools.partial(resolve_wheels, [requirement], python=version, machine=machine, prefer=prefer(group))
        for name, requirements in (host_python.get("importCheck") or {}).items():
            group = host_group(system, f"check:{name}")
            yield group, functools.partial(resolve_wheels, list(requirements), python=version, machine=machine, prefer=prefer(group))


def _host_deb(name: str, arch: str) -> str:
    """A host's Debian package as apt names it: ``bash`` -> ``bash:arm64``; ``media-types:all``
    (a package for every architecture, one file) -> ``media-types``; ``x:arch`` stays."""
    if name.endswith(":all"):
        return name.removesuffix(":all")
    return name if ":" in name else f"{name}:{arch}"


def current_comment(path: Path) -> str:
    return json.loads(path.read_text()).get("comment", "")
