"""``info``, ``describe-api``, ``variants``, ``versions``, ``lock`` and ``download``: inspect and fetch published kernels.

Thin Click commands over ``kernel_builder.loader``; results go to stdout, progress and
errors to stderr. Nothing here imports torch or huggingface_hub at import time.
"""

from __future__ import annotations

from pathlib import Path

import click

from kernel_builder.cli import output
from kernel_builder.errors import KernelBuilderError, LoadError

__all__ = ["info", "describe_api", "variants", "versions", "lock", "download"]


def _dash(value: object) -> str:
    return "-" if value is None else str(value)


@click.command("info")
@click.argument("kernel", metavar="REPO_OR_PATH")
@click.option("--revision", default=None, help="Hub branch, tag or commit (not with a local path).")
@click.option("--version", "version", type=int, default=None, help="Kernel version N: the Hub branch vN.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of text.")
@click.option("--dep-tree", is_flag=True, help="Show the kernel dependencies as a tree (JSON: dependency_tree).")
def info(kernel: str, revision: str | None, version: int | None, as_json: bool, dep_tree: bool) -> None:
    """Show a kernel as this machine would load it: the variant, its metadata, its dependencies, all backends.

    REPO_OR_PATH is a Hub repo id (ORG/NAME) or a local directory holding build/. Without
    --version or --revision a Hub repo is shown at its highest vN branch (main if none).
    The metadata is that of the variant this machine would load; Kernel dependencies are
    followed transitively (their Python dependencies are listed with the kernel's). Other
    variants are not listed here; `kernel-builder versions REPO` does that.

    \b
    Example:
      kernel-builder info kernels-community/relu --version 1
      kernel-builder info ./relu --json
      kernel-builder info ./relu --dep-tree
    """
    from kernel_builder.loader.info import kernel_info  # lazy: the loader is for a lookup, not for `info --help`

    data = kernel_info(kernel, revision=revision, version=version).to_json(dep_tree=dep_tree)
    if as_json:
        output.result_json(data)
        return
    if "path" in data:
        output.result(f"Path: {data['path']}")
    else:
        output.result(f"Repository: {data['repo_id']}")
        output.result(f"Revision: {data['revision']}")
    output.result(f"Variant: {data['variant']}")
    for label, key in (
        ("Name", "name"),
        ("Version", "version"),
        ("Minimum kernels version", "kernels_minver"),
        ("License", "license"),
        ("Upstream", "upstream"),
        ("Source", "source"),
    ):
        output.result(f"{label}: {_dash(data[key])}")
    if dep_tree:
        output.result("Kernel dependencies:")
        output.result(data.get("repo_id") or data["path"])
        for line in _tree_lines(data["dependency_tree"]):
            output.result(line)
    else:
        output.result(f"Kernel dependencies: {', '.join(data['kernel_depends']) or '-'}")
    output.result(f"Python dependencies: {', '.join(data['python_depends'] or []) or '-'}")
    output.result(f"Backends: {', '.join(data['backends']) or '-'}")


def _tree_lines(tree: dict, prefix: str = "") -> list[str]:
    """Tree lines as PyPI kernels prints them (``|-- a``, a backquote before the last child), children indented."""
    lines = []
    for index, (repo_id, below) in enumerate(tree.items()):
        last = index == len(tree) - 1
        lines.append(f"{prefix}{'`-- ' if last else '|-- '}{repo_id}")
        lines.extend(_tree_lines(below, prefix + ("    " if last else "|   ")))
    return lines


@click.command("describe-api")
@click.argument("kernel", metavar="REPO_OR_PATH")
@click.option("--revision", default=None, help="Hub branch, tag or commit (not with a local path).")
@click.option("--version", "version", type=int, default=None, help="Kernel version N: the Hub branch vN (default: the highest).")
@click.option("--json", "as_json", is_flag=True, help="Print symbols.json with the kernel's source and variant, as JSON.")
@click.option("--trust-remote-code", is_flag=True, help="Allow a Hub kernel whose publisher is not a trusted one.")
def describe_api(kernel: str, revision: str | None, version: int | None, as_json: bool, trust_remote_code: bool) -> None:
    """List a kernel's public functions (with their signatures) and layers, without importing it.

    Prints the symbols.json of the variant this machine would load (docs/metadata.md): the
    build's import check saved it. REPO_OR_PATH is a Hub repo id (ORG/NAME; the highest vN
    branch unless --version or --revision says otherwise) or a local directory holding
    build/ (or a variant directory). Only symbols.json (and the variant listing) is fetched
    from the Hub. The output is that of PyPI `kernels describe-api`, with signatures.
    As there, a Hub kernel must come from a trusted publisher unless --trust-remote-code
    is given (nothing is imported; the rule is the loader's).

    \b
    Example:
      kernel-builder describe-api ./relu
      kernel-builder describe-api kernels-community/relu --version 1 --json
    """
    from kernel_builder.tree.symbols import read_symbols, text_lines  # lazy: read only when a kernel is described

    path, source = _symbols_file(kernel, revision=revision, version=version, trust_remote_code=trust_remote_code)
    document = {**read_symbols(path), **source}
    if as_json:
        output.result_json(document)
        return
    if "path" in source:
        output.result(f"Path: {source['path']}")
    else:
        output.result(f"Repository: {source['repo_id']}")
        output.result(f"Revision: {source['revision']}")
    output.result(f"Variant: {source['variant']}")
    output.result()
    for line in text_lines(document):
        output.result(line)


def _symbols_file(
    kernel: str, *, revision: str | None, version: int | None, trust_remote_code: bool = False
) -> tuple[Path, dict[str, str]]:
    """Where the symbols.json of the variant this machine loads is (downloaded if on the
    Hub), and the source fields ``describe-api`` prints (PyPI ``kernels``' keys)."""
    from kernel_builder.hub.download import HubClient, is_offline  # lazy: Hub access only for a Hub kernel
    from kernel_builder.loader import cache  # lazy: as above
    from kernel_builder.loader.fetch import available_versions, choose, select_revision  # lazy: as above
    from kernel_builder.loader.local import local_variant_dir  # lazy: as above
    from kernel_builder.tree.symbols import FILE_NAME  # lazy: as above
    from kernel_builder.variants.system import detect_system  # lazy: as above (imports torch)

    hint = "rebuild the kernel with this kernel-builder: the build's import check writes symbols.json"
    local = Path(kernel).expanduser()
    if local.is_dir():
        if revision is not None or version is not None:
            raise LoadError("--revision and --version cannot be used with a local path")
        variant_dir, _ = local_variant_dir(local, detect_system())
        path = variant_dir / FILE_NAME
        if not path.is_file():
            raise LoadError(f"No {FILE_NAME} found in {local} (variant: {variant_dir.name})", hint=hint)
        return path, {"path": str(local), "variant": variant_dir.name}
    if local.exists() or local.is_absolute() or kernel.startswith(("./", "../", "~")):
        raise LoadError(f"Not a local kernel directory: {kernel}", hint="pass a directory holding build/, or a Hub repo id")
    if revision is not None and version is not None:
        raise LoadError("Only one of --revision or --version can be specified")
    offline = is_offline()
    client = None if offline else HubClient()
    if client is not None and not trust_remote_code and not client.is_trusted_publisher(kernel.split("/", 1)[0]):
        raise LoadError(
            f"Kernel repository '{kernel}' is not from a trusted publisher.",
            hint="pass --trust-remote-code to describe kernels from publishers you trust yourself",
        )
    if revision is None and version is None:
        versions = available_versions(kernel, offline=offline, client=client)
        if not versions:
            raise LoadError(f"No numbered versions found for {kernel}", hint="pass --revision (a branch, tag or commit)")
        version = max(versions)
    target = select_revision(kernel, revision=revision, version=version, offline=offline, client=client)
    variant, _ = choose(target, detect_system(), offline=offline, client=client)
    remote = f"build/{variant}/{FILE_NAME}"
    label = f"v{version}" if version is not None else str(revision)
    where = f"{kernel} (version: {version}, revision: {label})" if version is not None else f"{kernel} (revision: {label})"
    missing = LoadError(f"No {FILE_NAME} found in {where} (variant: {variant})", hint=hint)
    if offline:
        path = cache.snapshot_dir(cache.cache_root(), kernel, target.commit) / remote
        if not path.is_file():
            raise missing
    else:
        assert client is not None
        if not client.file_exists(kernel, remote, target.commit):
            raise missing
        path = client.download_file(kernel, remote, target.commit, cache.cache_root())
    return path, {"repo_id": kernel, "revision": label, "variant": variant}


class _VersionParam(click.ParamType):
    """An integer kernel version, or ``latest``."""

    name = "N|latest"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int | str:
        if isinstance(value, int) or value == "latest":
            return value
        try:
            return int(str(value))
        except ValueError:
            self.fail(f"{value!r}: version must be an integer or 'latest'", param, ctx)


@click.command("variants")
@click.argument("kernel", metavar="REPO_OR_PATH")
@click.option("--all-versions", is_flag=True, help="Every vN branch (default: the highest only).")
@click.option("--version", "version", type=_VersionParam(), default=None, help="Kernel version N (the branch vN), or 'latest'.")
@click.option("--revision", default=None, help="A branch, tag or commit instead of a version.")
@click.option("--only-compatible", is_flag=True, help="Only the variants this machine can load.")
@click.option("--json", "as_json", is_flag=True, help="Print the decisions as JSON.")
def variants(
    kernel: str, all_versions: bool, version: int | str | None, revision: str | None, only_compatible: bool, as_json: bool
) -> None:
    """List a kernel's build variants and whether this machine can load each (and why not).

    REPO_OR_PATH is a Hub repo id (its highest vN branch; --version N, --all-versions or
    --revision choose others) or a local directory holding build/. The variant this machine
    would load is marked `preferred`, the other loadable ones `compatible`; each rejected one
    says why. As PyPI `kernels variants` (0.19.1) prints it; `versions` is the older form.
    (`list-variants` is another question: what a kernel's build.toml builds.)

    \b
    Example:
      kernel-builder variants kernels-community/relu
      kernel-builder variants kernels-community/relu --all-versions --only-compatible
      kernel-builder variants ./relu --json
    """
    from kernel_builder.variants.system import detect_system  # lazy: imports torch, only for a lookup

    if sum((all_versions, version is not None, revision is not None)) > 1:
        raise LoadError("Only one of --all-versions, --version or --revision can be specified")
    local = Path(kernel).expanduser()
    if local.is_dir():
        if all_versions or version is not None or revision is not None:
            raise LoadError("--all-versions, --version and --revision cannot be used with a local path")
        listings = [(None, None, _local_variant_names(local))]
    else:
        listings = _hub_variant_names(kernel, all_versions=all_versions, version=version, revision=revision)
    system = detect_system()
    results = []
    for number, ref, names in listings:
        decisions = _decisions(system, names, only_compatible=only_compatible)
        if as_json:
            results.append({"version": number, "revision": ref, "variants": decisions})
            continue
        label = f"Path {kernel}" if ref is None and number is None else (
            f"Version {number}" if number is not None else f"Revision {ref}"
        )
        lines = [
            f"{d['variant']} {'compatible, preferred' if d['preferred'] else 'compatible'} ✅" if d["compatible"]
            else f"{d['variant']}: {d['reason']}"
            for d in decisions
        ]
        text = "\n".join(lines) or ("No compatible variants found." if only_compatible else "No build variants found.")
        output.result(f"{label}:\n\n{text}")
    if as_json:
        if local.is_dir():
            output.result_json({"path": kernel, "variants": results[0]["variants"]})
        else:
            output.result_json({"repo_id": kernel, "revisions": results})


def _decisions(system: object, names: list[str], *, only_compatible: bool) -> list[dict[str, object]]:
    """Every variant's decision, best first (``variants.resolve``): ``variant``,
    ``compatible``, ``preferred``, ``reason``. Names that are no variant names are left out
    with a warning, as PyPI ``kernels`` does."""
    from kernel_builder.variants.names import try_parse  # lazy: only for a lookup
    from kernel_builder.variants.resolve import VariantAccepted, resolve  # lazy: as above

    parsable = []
    for name in names:
        if try_parse(name) is None:
            output.warn(f"{name!r} is not a build variant name; left out")
        else:
            parsable.append(name)
    resolution = resolve(system, parsable)  # type: ignore[arg-type]
    decisions = resolution.accepted if only_compatible else resolution.decisions
    return [
        {
            "variant": d.variant,
            "compatible": isinstance(d, VariantAccepted),
            "preferred": d.variant == resolution.best,
            "reason": None if isinstance(d, VariantAccepted) else d.reason,
        }
        for d in decisions
    ]


def _local_variant_names(path: Path) -> list[str]:
    """The variant directories of a kernel directory's build/ (or of a build/ directory itself)."""
    from kernel_builder.loader.local import list_variant_dirs  # lazy: only for a lookup
    from kernel_builder.variants.names import try_parse  # lazy: as above

    for base in (path / "build", path):
        names = list_variant_dirs(base)
        if any(try_parse(n) is not None for n in names):
            return names
    raise LoadError(f"No build variants found in: {path / 'build'}", hint="build the kernel first, or pass the directory that holds build/")


def _hub_variant_names(
    repo_id: str, *, all_versions: bool, version: int | str | None, revision: str | None
) -> list[tuple[int | None, str, list[str]]]:
    """(version, ref, variant names) for each selected revision of a Hub repo; ref is the
    branch's full name (``refs/heads/vN``) for a version, else the revision as given."""
    from kernel_builder.hub.download import HubClient, is_offline  # lazy: Hub access only for a Hub kernel
    from kernel_builder.loader.fetch import Target, available_versions, select_revision, variant_names  # lazy: as above

    offline = is_offline()
    client = None if offline else HubClient()
    if revision is not None:
        target = select_revision(repo_id, revision=revision, version=None, offline=offline, client=client)
        return [(None, revision, variant_names(target, offline=offline, client=client))]
    versions = available_versions(repo_id, offline=offline, client=client)
    if version is not None and version != "latest":
        if version not in versions:
            listing = ", ".join(str(v) for v in sorted(versions))
            raise LoadError(f"Version {version} not found, available versions: {listing}")
        selected = [int(version)]
    elif not versions:
        raise LoadError(f"Repository does not support kernel versions: {repo_id}", hint="pass --revision (a branch, tag or commit)")
    elif all_versions:
        selected = sorted(versions)
    else:
        selected = [max(versions)]
    out = []
    for number in selected:
        target = Target(repo_id, f"v{number}", versions[number], number)
        out.append((number, f"refs/heads/v{number}", variant_names(target, offline=offline, client=client)))
    return out


@click.command("versions")
@click.argument("repo_id", metavar="REPO")
@click.option("--backend", default=None, help="Resolve for this backend (cpu or the detected one).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: versions with every variant's decision.")
def versions(repo_id: str, backend: str | None, as_json: bool) -> None:
    """List a repo's versions (vN branches) and the variants of each.

    For every version, the variant this machine would load is marked `preferred`, other
    loadable ones `compatible`, and each rejected variant shows why it does not fit.

    \b
    Example:
      kernel-builder versions kernels-community/relu
    """
    from kernel_builder.loader.info import version_traces  # lazy: the loader is for a lookup, not for `versions --help`
    from kernel_builder.variants.resolve import VariantAccepted, format_trace  # lazy: as above
    from kernel_builder.variants.system import detect_system, select_backend  # lazy: as above

    system = select_backend(detect_system(), backend)
    traces = version_traces(repo_id, system)
    if as_json:
        out = []
        for number, target, res in traces:
            variants = [
                {
                    "name": d.variant,
                    "accepted": isinstance(d, VariantAccepted),
                    "preferred": d.variant == res.best,
                    "reason": None if isinstance(d, VariantAccepted) else d.reason,
                }
                for d in res.decisions
            ]
            out.append({"version": number, "commit": target.commit, "variants": variants})
        output.result_json({"repo_id": repo_id, "system": system.describe(), "versions": out})
        return
    if not traces:
        output.result(f"Repository does not support kernel versions: {repo_id}")
        return
    output.note(f"System: {system.describe()}")
    for i, (number, _target, res) in enumerate(traces):
        if i:
            output.result()
        output.result(f"Version {number}:\n")
        output.result(format_trace(res) or "(no variants)")


@click.command("lock")
@click.argument("project_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
def lock(project_dir: Path) -> None:
    """Pin the kernels in [tool.kernels.dependencies] of PROJECT_DIR/pyproject.toml.

    Writes PROJECT_DIR/kernels.lock (the format PyPI `kernels` reads): for every
    dependency the commit its version branch (or revision) points at now.

    \b
    Example (pyproject.toml):
      [tool.kernels.dependencies]
      "kernels-community/relu" = 1
    then:  kernel-builder lock .
    """
    from kernel_builder.loader.project import lock_project  # lazy: the loader is for locking, not for `lock --help`

    for entry in lock_project(project_dir):
        dep = entry.dependency
        spec = f"version {dep.version}" if dep.version is not None else f"revision {dep.revision}"
        output.note(f"Locked {dep.repo_id} ({spec}) at {entry.commit}")


@click.command("download")
@click.argument("project_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--all-variants", is_flag=True, help="Download every variant, not only the one for this machine.")
def download(project_dir: Path, all_variants: bool) -> None:
    """Download the kernels locked in PROJECT_DIR/kernels.lock into the cache.

    Afterwards load_kernel(repo, lockfile=PROJECT_DIR/kernels.lock) works offline. Only
    the variant this machine loads is fetched unless --all-variants is given; each one is
    checked against its digest.

    \b
    Example:
      kernel-builder download .
    """
    from kernel_builder.loader.project import download_project  # lazy: the loader is for a download, not for `download --help`
    from kernel_builder.variants.system import detect_system  # lazy: as above

    system = None if all_variants else detect_system()  # all variants: no need to import torch
    results = download_project(project_dir, system, all_variants=all_variants)
    failed = [lock.dependency.repo_id for lock, result in results if isinstance(result, KernelBuilderError)]
    for lock, result in results:
        if not isinstance(result, KernelBuilderError):
            output.result(str(result))
    if failed:
        raise LoadError(f"{len(failed)} kernel(s) failed to download: {', '.join(failed)}")
