"""How our derivations are named, and which build target or variant a store path belongs to.

Nix's log names derivations, not installables: these naming rules (nix/lib/builders) are
what tie a log line, a failure or a timing to a variant and to its plan, objects and link.
Pure functions; nothing here runs nix.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence

import attrs

__all__ = ["OBJECT_PREFIX", "Step", "Unit", "part_owner", "step_of", "target_of", "torchless"]

OBJECT_PREFIX = "0-obj-"  # sorts before every kernel name (nix/lib/builders/per-object.nix)
_TORCH_TAIL = re.compile(r"-torch\d+$")  # "<kernel>-torch212": another torch version's object


class Step(str, enum.Enum):
    """Which derivation of a variant's graph a derivation is."""

    PLAN = "plan"
    OBJECT = "obj"
    LINK = "link"

    def __str__(self) -> str:
        return self.value


@attrs.frozen
class Unit:
    """A derivation of ``variant``'s graph; ``source`` is an object's (sanitized) source."""

    variant: str
    step: Step
    source: str | None = None


def step_of(path: str | None, variants: Sequence[str]) -> Unit | None:
    """The step of one of ``variants`` that the derivation (``.drv``) or output ``path`` is.

    The per-object derivations of nix/lib/builders are named ``<kernel>-<variant>-plan``,
    ``0-obj-<kernel>-<variant>-<sanitized relative source>`` (``0-obj-`` first, before any
    kernel's name, so that Nix, which starts ready derivations in name order, compiles every
    object before any link or check, whatever the kernels) and ``<kernel>-<variant>-link``;
    this is the one function that reads that rule (the longest matching variant wins, as in
    ``nix.target_of``). An object that reads no torch is every torch version's, and named by
    the variant without its torch part (``0-obj-<kernel>-cxx11-cpu-x86_64-linux-<source>``):
    it is counted as the first of ``variants`` that has that part. The deps step
    (``<kernel>-<variant>-deps``) is the plan's second half and counted as the plan.
    ``None`` for anything else, the variant derivation included.
    """
    if not path:
        return None
    name = path.rsplit("/", 1)[-1].removesuffix(".drv")
    digest, sep, unhashed = name.partition("-")
    name = unhashed if sep and len(digest) == 32 else name  # a store path: <hash>-<name>
    # an object's "-<kernel>-<variant>-<source>" (a key may be a whole "<kernel>-<variant>")
    object_rest = "-" + name.removeprefix(OBJECT_PREFIX) if name.startswith(OBJECT_PREFIX) else None
    for variant in sorted(variants, key=len, reverse=True):
        for step in (Step.PLAN, Step.LINK):
            if name.endswith(f"-{variant}-{step.value}"):
                return Unit(variant, step)
        if name.endswith(f"-{variant}-deps"):
            return Unit(variant, Step.PLAN)
        if object_rest is not None:
            _, marker, source = object_rest.partition(f"-{variant}-")
            if marker and source:
                return Unit(variant, Step.OBJECT, source)
    if object_rest is not None:  # a torch-free unit's object: shared by the torch versions
        for variant in variants:
            kernel, marker, source = object_rest.partition(f"-{torchless(variant)}-")
            if marker and source and torchless(variant) != variant and not _TORCH_TAIL.search(kernel):
                return Unit(variant, Step.OBJECT, source)
    return None


def torchless(variant: str) -> str:
    """``variant`` without its torch part (``torch213-cxx11-cpu-x86_64-linux`` ->
    ``cxx11-cpu-x86_64-linux``), as per-object.nix names a torch-free unit's object."""
    head, sep, rest = variant.partition("-")
    return rest if sep and head.startswith("torch") and head[5:].isdigit() else variant




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
    ``step_of`` holds the naming rule."""
    unit = step_of(path, keys)
    return unit.variant if unit is not None else None

