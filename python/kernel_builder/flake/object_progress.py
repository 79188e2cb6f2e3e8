"""Objects done per variant while Nix builds a variant object by object (``compiling 3/16``).

A variant built per translation unit is a small graph of derivations: a plan, one object
per compiled source, a link, then the variant itself. ``nix.steps.step_of`` recognizes them by
name (the one place that knows the naming rule); ``ObjectCounts`` keeps, for one variant, which
objects Nix will build in this run and which are done, and says the phase a person reads
in the variant's row. Counting is pure: the build tracker (``flake_build._Tracker``) feeds
it the derivations Nix starts and finishes, and the objects the store says are still to
be built (``planned``).
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from kernel_builder.nix.steps import Step, Unit

__all__ = ["ObjectCounts"]


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
