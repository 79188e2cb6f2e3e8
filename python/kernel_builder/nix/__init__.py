"""The nix driver: the only package that builds nix command lines and runs nix.

Debian's nix 2.8 works offline here with flakes on, no substituters, no build users and an
empty flake registry; every invocation gets those settings through ``NIX_CONFIG`` so that
nothing depends on the user's nix.conf.

The sandbox policy (docs/reliability.md): every nix call runs with Nix's sandbox on, whatever
nix.conf or the caller's ``NIX_CONFIG`` says, because any call that evaluates may build
(import-from-derivation). The one exception is the build step of host-toolchain variants,
which read this machine's compilers; ``build`` evaluates those first with the sandbox on, so
only the derivations it was asked for run outside it.

Modules: ``runner`` (settings, command lines, ``run_nix``), ``builds`` (``nix build`` with
live events), ``events`` (reading nix's log), ``store`` (store and cache queries) and
``steps`` (how our derivations are named). The package imports only core modules.
"""

from kernel_builder.nix.builds import build
from kernel_builder.nix.events import BuildEvent, BuildReport, EventKind, clean_stderr, explain, parse_log_line, printable
from kernel_builder.nix.runner import (
    NixOptions,
    check_builders,
    empty_registry,
    eval_json,
    flake_path,
    nix_argv,
    nix_env,
    nix_executable,
    run_nix,
    shell_command,
)
from kernel_builder.nix.steps import part_owner, target_of
from kernel_builder.nix.store import (
    cache_path_info,
    copy_to_cache,
    derivation_outputs,
    derivations,
    generate_cache_key,
    input_closure,
    invalid_paths,
    modified_paths,
    per_object_parts,
    untrusted_paths,
)

__all__ = [
    "BuildEvent",
    "BuildReport",
    "EventKind",
    "NixOptions",
    "build",
    "cache_path_info",
    "check_builders",
    "clean_stderr",
    "copy_to_cache",
    "derivation_outputs",
    "derivations",
    "empty_registry",
    "eval_json",
    "explain",
    "flake_path",
    "generate_cache_key",
    "input_closure",
    "invalid_paths",
    "modified_paths",
    "nix_argv",
    "nix_env",
    "nix_executable",
    "parse_log_line",
    "part_owner",
    "per_object_parts",
    "printable",
    "run_nix",
    "shell_command",
    "target_of",
    "untrusted_paths",
]
