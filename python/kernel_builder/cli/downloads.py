"""``kernel-builder downloads``: the Hub kernels downloaded into the local kernel cache.

PyPI ``kernels`` calls this ``kernels cache``; here ``cache`` is the Nix binary cache of
built variants (``kernel-builder cache push``), so the loader's cache of downloads has its
own name. ``downloads ls`` prints what ``kernels cache ls`` (0.19.1) prints, text and JSON.
"""

from __future__ import annotations

from pathlib import Path

import click

from kernel_builder.cli import output

__all__ = ["downloads"]


@click.group("downloads")
def downloads() -> None:
    """Inspect the kernels downloaded from the Hub (the loader's cache, not the Nix binary cache).

    The cache is KERNELS_CACHE if set, else huggingface_hub's (HF_HUB_CACHE, or
    HF_HOME/hub): where get_kernel, `kernel-builder download` and PyPI `kernels` put
    the kernels they fetch. This is PyPI `kernels cache` (0.19.1); `kernel-builder cache`
    is something else: the Nix binary cache that built variants are pushed to.

    \b
    Example:
      kernel-builder downloads ls
      kernel-builder downloads ls --json
      kernel-builder downloads ls --cache-dir /data/hf-cache/hub
    """


@downloads.command("ls")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Inspect this cache directory (default: KERNELS_CACHE, else huggingface_hub's cache).")
@click.option("--json", "as_json", is_flag=True, help="Print {cache_dir, repos: [...]} as JSON instead of a table.")
@click.option("--show-warnings", is_flag=True, help="Print each cache inconsistency (a repository the scan left out).")
@click.option("--no-truncate", is_flag=True, help="Print full values whatever the terminal width.")
def ls(cache_dir: Path | None, as_json: bool, show_warnings: bool, no_truncate: bool) -> None:
    """List the cached versions of each downloaded kernel with their build variants.

    One row per cached version (a `vN` ref in the cache: what loading `version=N` records):
    the repository as `kernel/ORG/NAME`, its size on disk, when a file of it was last read
    and last changed, the version, and the variants downloaded for it (one per line). A
    revision loaded only by commit or branch name is not listed, as in `kernels cache ls`.
    `--json` prints `{"cache_dir", "repos": [{"repo_id", "size_on_disk", "last_accessed",
    "last_modified", "versions": [{"version", "size_on_disk", "last_accessed",
    "last_modified", "variants"}]}]}` (times in seconds since the epoch).

    \b
    Example:
      $ kernel-builder downloads ls
      ID                             SIZE LAST_ACCESSED     LAST_MODIFIED VERSION VARIANTS
      ----------------------------- ----- ----------------- ------------- ------- -------------------------------
      kernel/kernels-community/relu 96.5K 2 minutes ago     3 days ago    v1      torch-cpu
                                                                                  torch213-cxx11-cpu-x86_64-linux
      kernel/kernels-community/relu 97.1K a few seconds ago a day ago     v2      torch213-cxx11-cpu-x86_64-linux
    """
    from huggingface_hub.utils import tabulate  # lazy: huggingface_hub only for this command
    from huggingface_hub.utils._parsing import format_timesince  # lazy: as above

    from kernel_builder.loader.downloads import scan_downloads  # lazy: as above

    found = scan_downloads(cache_dir)
    if as_json:
        output.result_json(found.to_json())
    else:
        rows: list[list[str]] = []
        for kernel in found.kernels:
            for version in kernel.versions:
                first = version.variants[0] if version.variants else "-"
                rows.append([f"kernel/{kernel.repo_id}", version.size_on_disk_str, format_timesince(version.last_accessed),
                             version.last_modified_str, version.version, first])
                rows.extend(["", "", "", "", "", variant] for variant in version.variants[1:])
        if not rows:
            output.result(f"No cached kernel versions found in {found.cache_dir}.")
        else:
            headers = ["ID", "SIZE", "LAST_ACCESSED", "LAST_MODIFIED", "VERSION", "VARIANTS"]
            truncated = _truncate(headers, rows, no_truncate)
            output.result(tabulate(rows, headers=headers, alignments={"SIZE": "right"}))  # type: ignore[arg-type]
            if truncated:
                output.note("Hint: Use `--no-truncate` or `--json` to display full values.")
    if found.warnings:
        if show_warnings:
            for warning in found.warnings:
                output.note(f"Warning: {warning.rstrip('.')}. Repo ignored.")
        else:
            output.note(f"Warning: Found {len(found.warnings)} cache inconsistencies. "
                        "Re-run with `--show-warnings` to display them.")


def _truncate(headers: list[str], rows: list[list[str]], no_truncate: bool) -> bool:
    """Fit the table to the terminal as `hf cache ls` does (huggingface_hub's own rule, when
    this huggingface_hub has it); whether a value was cut."""
    try:
        from huggingface_hub.cli._output import _truncate_columns  # lazy: an internal of huggingface_hub's CLI
    except ImportError:
        return False
    return bool(_truncate_columns(headers, rows, no_truncate=no_truncate))
