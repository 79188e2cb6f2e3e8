"""``kernel-builder benchmark``: time a kernel's ``benchmarks/`` scripts on this machine."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import click

from kernel_builder.cli import output
from kernel_builder.errors import LoadError

__all__ = ["benchmark"]


@click.command("benchmark")
@click.argument("kernel", metavar="REPO_OR_PATH")
@click.option("--revision", "--branch", "revision", default=None, help="Hub branch, tag or commit (not with a local path).")
@click.option("--version", "version", type=int, default=None, help="Kernel version N: the Hub branch vN (default: the highest).")
@click.option("--iterations", type=click.IntRange(min=1), default=100, show_default=True, help="Timed calls per workload.")
@click.option("--warmup", type=click.IntRange(min=0), default=10, show_default=True, help="Untimed calls before timing.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout (the table still goes to stderr).")
@click.option("--output", "output_file", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Also write the JSON results to this file.")
def benchmark(
    kernel: str,
    revision: str | None,
    version: int | None,
    iterations: int,
    warmup: int,
    as_json: bool,
    output_file: Path | None,
) -> None:
    """Time a kernel's benchmarks/benchmark*.py scripts against the variant this machine loads.

    REPO_OR_PATH is a local kernel directory (holding build/ and benchmarks/) or a Hub repo
    id (ORG/NAME; its highest vN branch unless --version or --revision says otherwise; only
    the chosen variant and benchmarks/ are downloaded). Each script defines subclasses of
    kernel_builder.benchmark.Benchmark (kernels.benchmark.Benchmark works too); every
    benchmark_<name> method is a workload, timed --iterations times after --warmup calls.
    When the class has verify_<name>, the kernel's self.out is checked against it and the
    reference is timed too: the table then shows the speedup (reference mean / kernel mean).

    The table (milliseconds: mean, std, min, max) goes to stderr; --json prints the results
    on stdout, --output writes them to a file. Results are submitted nowhere: unlike PyPI
    `kernels benchmark --upload`, this command never sends anything to the Hub.
    Benchmark scripts are the kernel's own Python code: run only kernels you trust.

    \b
    Example:
      kernel-builder benchmark ./relu --iterations 20 --warmup 2
      kernel-builder benchmark kernels-community/relu --version 1 --json
    """
    from kernel_builder import benchmarking  # lazy: imports torch when it runs
    from kernel_builder._files import write_atomic  # lazy: as above
    from kernel_builder.variants.system import detect_system  # lazy: as above (imports torch)

    local = Path(kernel).expanduser()
    system = detect_system()
    device = benchmarking.device_for(system.backend.name.value)
    with tempfile.TemporaryDirectory(prefix="kernel-builder-benchmark-") as scratch:
        if local.is_dir():
            if revision is not None or version is not None:
                raise LoadError("--revision and --version cannot be used with a local path")
            from kernel_builder.loader.api import get_local_kernel  # lazy: as above
            from kernel_builder.loader.local import local_variant_dir  # lazy: as above

            root = local
            scripts = benchmarking.find_scripts(root)  # refuse bad scripts before importing the kernel
            variant_dir, _ = local_variant_dir(local, system)
            module = get_local_kernel(variant_dir, system=system)
            source: dict[str, Any] = {"path": str(local), "variant": variant_dir.name}
        else:
            if local.exists() or local.is_absolute() or kernel.startswith(("./", "../", "~")):
                raise LoadError(f"Not a local kernel directory: {kernel}", hint="pass a directory holding build/, or a Hub repo id")
            root, module, source = _from_hub(kernel, revision=revision, version=version, system=system, scratch=Path(scratch))
            scripts = benchmarking.find_scripts(root)
        output.note(f"Benchmarking {source.get('repo_id') or source['path']} ({source['variant']}) on {device}")
        workloads = []
        for path in scripts:
            loaded = benchmarking.load_script(path, root)
            for cls in benchmarking.benchmark_classes(loaded, path):
                output.note(f"Running {path.name}: {cls.__name__}")
                workloads += benchmarking.run_class(
                    cls, kernel=module, device=device, path=path, iterations=iterations, warmup=warmup
                )
    document = {**source, "device": device, "iterations": iterations, "warmup": warmup, "results": [w.to_json() for w in workloads]}
    _print_table(workloads)
    if output_file is not None:
        write_atomic(output_file, json.dumps(document, indent=2) + "\n")
        output.note(f"Results written to {output_file}")
    if as_json:
        output.result_json(document)


def _from_hub(
    repo_id: str, *, revision: str | None, version: int | None, system: Any, scratch: Path
) -> tuple[Path, ModuleType, dict[str, Any]]:
    """Load the variant this machine picks from the Hub, and copy ``benchmarks/benchmark*.py``
    of the same commit into ``scratch`` as regular files (the cache holds them as links)."""
    import fnmatch  # lazy: only for a Hub kernel

    from huggingface_hub.hf_api import RepoFile  # lazy: as above

    from kernel_builder import benchmarking  # lazy: as above
    from kernel_builder._files import UnsafeFile, read_regular  # lazy: as above
    from kernel_builder.hub.download import REPO_TYPE, HubClient, is_offline  # lazy: as above
    from kernel_builder.loader import cache  # lazy: as above
    from kernel_builder.loader.api import get_kernel  # lazy: as above
    from kernel_builder.loader.fetch import available_versions, choose, select_revision  # lazy: as above

    if revision is not None and version is not None:
        raise LoadError("Only one of --revision or --version can be specified")
    if is_offline():
        raise LoadError("benchmark needs the Hub to fetch benchmarks/", hint="unset HF_HUB_OFFLINE, or pass a local kernel directory")
    client = HubClient()
    if revision is None and version is None:
        versions = available_versions(repo_id, offline=False, client=client)
        if not versions:
            raise LoadError(f"No numbered versions found for {repo_id}", hint="pass --revision (a branch, tag or commit)")
        version = max(versions)
    target = select_revision(repo_id, revision=revision, version=version, offline=False, client=client)
    try:
        tree = list(client.api.list_repo_tree(repo_id, path_in_repo=benchmarking.DIRECTORY, repo_type=REPO_TYPE, revision=target.commit))
    except Exception:  # noqa: BLE001 - no benchmarks/ on the Hub: find_scripts says so below
        tree = []
    directory = scratch / benchmarking.DIRECTORY
    directory.mkdir()
    for item in tree:
        name = item.path.rsplit("/", 1)[-1]
        if isinstance(item, RepoFile) and item.path == f"{benchmarking.DIRECTORY}/{name}" and fnmatch.fnmatchcase(name, benchmarking.PATTERN):
            downloaded = client.download_file(repo_id, item.path, target.commit, cache.cache_root())
            try:
                (directory / name).write_bytes(read_regular(downloaded))
            except UnsafeFile as exc:
                raise LoadError(f"{repo_id}: {item.path}: {exc.reason}") from None
    variant, _ = choose(target, system, offline=False, client=client)
    module = get_kernel(repo_id, revision=target.commit, system=system)
    label = f"v{version}" if version is not None else str(revision)
    return scratch, module, {"repo_id": repo_id, "revision": label, "commit": target.commit, "variant": variant}


def _ms(value: float) -> str:
    return f"{value:.4f}"


def _print_table(workloads: list[Any]) -> None:
    """The results as a rich table on stderr; Speedup and Ref columns only when a workload has a reference."""
    from rich.table import Table  # lazy: rich only when there is a table to print

    with_ref = any(w.reference is not None for w in workloads)
    names = [f"{w.cls}.{w.name}" for w in workloads]
    table = Table(title="Benchmark results (ms)", pad_edge=False)
    table.add_column("Benchmark", no_wrap=True, min_width=max(map(len, names), default=9))
    for header in ("N", *(("Speedup",) if with_ref else ()), "Mean", "Std", "Min", "Max", *(("Ref", "OK") if with_ref else ())):
        table.add_column(header, justify="right", no_wrap=True, min_width=len(header))
    for name, w in zip(names, workloads):
        t = w.timing
        row = [name, str(t.iterations)]
        if with_ref:
            row.append("" if w.speedup is None else f"{w.speedup:.2f}x")
        row += [_ms(t.mean_ms), _ms(t.std_ms), _ms(t.min_ms), _ms(t.max_ms)]
        if with_ref:
            row += ["" if w.reference is None else _ms(w.reference.mean_ms), "yes" if w.verified else "-"]
        table.add_row(*row)
    output.console().print(table)
