"""``kernel-builder toolchain lock``: resolve the lock's requests into pinned artifacts.

Resolution uses the ordinary clients, so it sees exactly what ``fetch`` will download:
``apt-cache show`` and ``apt-get download --print-uris`` for Debian packages (version,
sha256, pool URL), and ``pip install --dry-run --report`` for each Python environment
(every wheel with its sha256, for CPython 3.11 on manylinux x86_64) and for each C++
dependency of ``requests.cpp`` (one wheel, without its Python dependencies: only its
headers are used, see ``kernel_builder/data/cpp_dependencies.json``), and for each
import-check set of ``requests.python.importCheck`` (``loader``: what the ``kernels``
loader always brings; otherwise a ``python-depends`` name). Wheels that come
from a local mirror get their public URL (PyPI's, or PyTorch's for ``+cpu`` builds).
Each kernel-test package (``requests.python.test``) is resolved on its own, with its
dependencies, into group ``test:<name>``: the package set a kernel flake's
``pythonCheckInputs`` picks from (see docs/testing.md).
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kernel_builder._files import write_atomic
from kernel_builder.errors import ConfigError
from kernel_builder.toolchain.pinned.clients import apt_arch_args, pip_platform_args, run_tool, seed_nar_hash
from kernel_builder.toolchain.pinned.fetch import download_debs
from kernel_builder.toolchain.pinned.lockfile import SCHEMA, Artifact, emulated_group, load_lock, lock_path, store_name
from kernel_builder.toolchain.pinned.lockrequests import check_package_name

__all__ = ["resolve_debs", "resolve_wheels", "public_wheel_url", "relock"]

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


def resolve_wheels(requirements: list[str], *, python: str = "3.11", deps: bool = True, machine: str = "x86_64") -> list[dict[str, str]]:
    """Every wheel ``pip`` would install for ``requirements`` on manylinux ``machine``
    (dependencies included unless ``deps`` is false)."""
    with tempfile.TemporaryDirectory(prefix="kb-lock-") as tmp:
        report = Path(tmp) / "report.json"
        run_tool(
            ["python3", "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--disable-pip-version-check",
             "--report", str(report), "--target", str(Path(tmp) / "target"), *pip_platform_args(python, machine),
             *([] if deps else ["--no-deps"]), *requirements],
            "pip install --dry-run --report",
        )
        data = json.loads(report.read_text())
    out = []
    for item in data["install"]:
        info = item["download_info"]
        file = info["url"].rsplit("/", 1)[1].replace("%2B", "+").replace("%2b", "+")
        sha = (info.get("archive_info", {}).get("hashes") or {}).get("sha256") or info["archive_info"]["hash"].split("=", 1)[1]
        out.append({"kind": "wheel", "name": item["metadata"]["name"], "version": item["metadata"]["version"],
                    "file": file, "sha256": sha, "url": public_wheel_url(info["url"], file)})
    return sorted(out, key=lambda a: a["name"].lower())


def relock(path: Path | None = None, *, upgrade_debs: bool = False) -> dict[str, Any]:
    """Re-resolve every request of the lock at ``path`` and write the new lock atomically.

    Debian packages keep the version the lock already pins (a Debian security update would
    otherwise rebuild every toolchain whenever anyone adds a wheel); ``upgrade_debs`` takes
    each package's current candidate instead.
    """
    path = path or lock_path()
    current = load_lock(path)
    requests = current.requests
    deb_pins = {} if upgrade_debs else {a.name: a.version for a in current.artifacts.values() if a.kind == "deb"}
    artifacts: dict[str, dict[str, str]] = {}
    groups: dict[str, list[str]] = {}

    def add(group: str, records: list[dict[str, str]]) -> None:
        keys = groups.setdefault(group, [])
        for record in records:
            key = store_name(record["file"])
            artifacts[key] = record
            if key not in keys:
                keys.append(key)

    debian = requests["debian"]
    for group, names in debian["groups"].items():
        add(group, resolve_debs(list(names), pins=deb_pins))
    python = requests["python"]
    for env, requirements in python["environments"].items():
        add(f"env:{env}", resolve_wheels(list(requirements), python=python["version"]))
    for requirement in python.get("test", []):
        add(f"test:{check_package_name(requirement)}", resolve_wheels([requirement], python=python["version"]))
    for name, requirements in (python.get("importCheck") or {}).items():
        add(f"check:{name}", resolve_wheels(list(requirements), python=python["version"]))
    for name, requirement in (requests.get("cpp") or {}).items():
        add(f"cpp:{name}", resolve_wheels([requirement], python=python["version"], deps=False))
    # Cross targets: each environment is the target's torch alone (no dependencies): the
    # build reads its headers, CMake package and libraries, and never runs it.
    for target in (requests.get("targets") or {}).values():
        for env, requirements in target["environments"].items():
            add(f"env:{env}", resolve_wheels(list(requirements), python=python["version"], deps=False, machine=target["machine"]))
        # Its emulated check environment: the rest of what that torch loads, with dependencies
        # (see emulated_group), installed beside it for the import check under qemu.
        for env, requirements in ((target.get("emulation") or {}).get("environments") or {}).items():
            add(emulated_group(env), resolve_wheels(list(requirements), python=python["version"], machine=target["machine"]))
    seed_request = requests["seed"]
    seed_key = next(k for k in groups[seed_request["group"]] if artifacts[k]["name"] == seed_request["deb"])
    with tempfile.TemporaryDirectory(prefix="kb-lock-") as tmp:
        seed_deb = Artifact(key=seed_key, **artifacts[seed_key])
        stored = Path(seed_deb.store_path)  # fetched before: the same file, by its fixed-output path
        deb = stored if stored.is_file() else download_debs([seed_deb], Path(tmp))[seed_key]
        nar = seed_nar_hash(deb, seed_request["member"], seed_request["name"])
    data = {
        "schema": SCHEMA,
        "comment": current_comment(path),
        "system": current.system,
        "requests": requests,
        "seed": {"name": seed_request["name"], "deb": seed_key, "member": seed_request["member"], "narSha256": nar},
        "groups": groups,
        "artifacts": dict(sorted(artifacts.items())),
    }
    write_atomic(path, json.dumps(data, indent=1) + "\n")
    return data


def current_comment(path: Path) -> str:
    return json.loads(path.read_text()).get("comment", "")
