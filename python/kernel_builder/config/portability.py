"""Compiler flags that make a build depend on the machine it runs on.

``-march=native`` (and ``-mtune``/``-mcpu=native``, nvcc's ``-arch=native``) asks the
compiler for the build machine's CPU or GPU: the module then holds, say, AVX-512 code, and a
"redistributable" variant fetched from a cache or the Hub crashes on another CPU. The pinned
(hermetic) builds refuse such flags with a located error; the host toolchain, which is this
machine's anyway, may use them.
"""

from __future__ import annotations

import re
from typing import Any

from kernel_builder.config.loading import Parsed
from kernel_builder.config.problems import BuildTomlError, Problems

__all__ = ["host_specific_flags", "refuse_host_specific_flags"]

# -march=native, -mtune=native, -mcpu=native, -arch=native, --gpu-architecture=native,
# also inside -Xcompiler=... lists ("-Xcompiler=-march=native,-O3").
_NATIVE = re.compile(r"(?:^|[\s=,])(-march|-mtune|-mcpu|-arch|--gpu-architecture|-gpu-architecture)[= ]native(?:$|[\s,])")
_TAKES_VALUE = frozenset({"-march", "-mtune", "-mcpu", "-arch", "--gpu-architecture", "-gpu-architecture"})


def _flag_lists(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], list[Any]]]:
    """Every ``*-flags`` array of the document with its key path."""
    found: list[tuple[tuple[Any, ...], list[Any]]] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if isinstance(key, str) and key.endswith("-flags") and isinstance(value, list):
                found.append(((*path, key), value))
            else:
                found.extend(_flag_lists(value, (*path, key)))
    return found


def host_specific_flags(parsed: Parsed, file: str) -> Problems:
    """One problem per flag that names the build machine's CPU or GPU."""
    problems = Problems(file, parsed.positions)
    for path, flags in _flag_lists(parsed.document):
        for i, flag in enumerate(flags):
            if not isinstance(flag, str):
                continue
            pair = flag in _TAKES_VALUE and i + 1 < len(flags) and flags[i + 1] == "native"
            match = _NATIVE.search(flag)
            if match or pair:
                name = match.group(1) if match else flag
                problems.add(
                    (*path, i),
                    f'"{flag}" builds for this machine\'s {"GPU" if "arch" in name and "march" not in name else "CPU"}, '
                    "so the variant would crash or fail on others",
                )
    return problems


def refuse_host_specific_flags(parsed: Parsed, file: str) -> None:
    """Raise a ``BuildTomlError`` listing every host-specific flag (pinned builds)."""
    problems = host_specific_flags(parsed, file)
    if problems:
        raise BuildTomlError(
            file, problems.items,
            hint="name a portable target instead (-march=x86-64-v3, or the CUDA capabilities in "
            "cuda-capabilities), or build with --toolchain host, whose variants are for this machine only",
        )
