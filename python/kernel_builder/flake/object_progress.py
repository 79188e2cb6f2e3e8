"""Objects done per variant while Nix builds a variant object by object (``compiling 3/16``).

A variant built per translation unit is a small graph of derivations: a plan, one object
per compiled source, a link, then the variant itself. ``step_of`` recognizes them by name
(the one place that knows the naming rule); ``ObjectCounts`` keeps, for one variant, which
objects Nix will build in this run and which are done, and says the phase a person reads
in the variant's row. Counting is pure: the build tracker (``flake_build._Tracker``) feeds
it the derivations Nix starts and finishes, and the objects the store says are still to
be built (``planned``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence

import attrs

__all__ = ["OBJECT_PREFIX", "ObjectCounts", "Step", "Unit", "step_of"]

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


@attrs.define
class ObjectCounts:
    """One variant's objects in this run: those Nix will build (``planned``), started, done.

    ``planned`` comes from the store when the first object starts; an object that starts
    without being planned (the store could not say) joins it, so ``done <= total`` holds
    and the total never shrinks.
    """

    planned: set[str] = attrs.field(factory=set)  # object .drv paths this run builds
    started: set[str] = attrs.field(factory=set)
    done: set[str] = attrs.field(factory=set)
    planning: bool = False
    linking: bool = False

    @property
    def total(self) -> int:
        return len(self.planned | self.started | self.done)

    def plan(self, drvs: Iterable[str]) -> None:
        self.planned |= set(drvs)

    def start(self, unit: Unit, drv: str) -> None:
        if unit.step is Step.PLAN:
            self.planning = True
        elif unit.step is Step.OBJECT:
            self.planning = False
            self.started.add(drv)
        else:
            self.planning, self.linking = False, True

    def finish(self, unit: Unit, drv: str) -> bool:
        """Record that ``drv`` ended well; whether that changed the count."""
        if unit.step is Step.PLAN:
            self.planning = False
            return False
        if unit.step is Step.OBJECT and drv not in self.done:
            self.started.add(drv)
            self.done.add(drv)
            return True
        return False

    def phase(self) -> str | None:
        """What the variant's row shows while its graph builds (``None``: nothing of it yet)."""
        if self.linking:
            return "linking"
        if self.started or self.done:
            return f"compiling {len(self.done)}/{self.total}"
        if self.planning:
            return "planning"
        return None
