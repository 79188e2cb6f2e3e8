"""``plan.json`` of a per-object build: its data model, read by every object and link step.

Its own module so that those steps (``driver.units``) start without the planner's imports.
"""

from __future__ import annotations

import json

import attrs

from kernel_builder.errors import BuildError

__all__ = ["PLAN_VERSION", "TOP", "UID_PLACEHOLDER", "Plan", "Unit"]

TOP = "@KERNEL_BUILDER_TOP@"  # the build's temporary directory, in every path of the plan
# The unique id per-object.nix plans with (so that one plan serves every commit of a kernel):
# the object and link steps put the kernel's own in its place (nix/lib/builders/per-object.nix).
UID_PLACEHOLDER = "kernel_builder_uid_placeholder"
PLAN_VERSION = 1


@attrs.frozen
class Unit:
    """One translation unit: ``source`` relative to the kernel, ``object`` relative to the
    scratch directory (CMake names it after the source's absolute path, so it may hold
    ``TOP``), the compiler's argv and the directory it runs in."""

    source: str
    object: str
    command: tuple[str, ...]
    directory: str


@attrs.frozen
class Plan:
    """What ``plan.json`` holds: the units, the link (a shell command, as Ninja runs it),
    the module it writes (relative to ``link_directory``) and the variant's facts."""

    variant: str
    ops_id: str
    archs: tuple[str, ...]
    scratch: str
    units: tuple[Unit, ...]
    link_command: str
    link_directory: str
    module: str

    def to_json(self) -> str:
        data = attrs.asdict(self, recurse=True)
        data["version"] = PLAN_VERSION
        return json.dumps(data, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Plan:
        data = json.loads(text)
        if data.pop("version", None) != PLAN_VERSION:
            raise BuildError(f"plan.json is not a version-{PLAN_VERSION} plan", hint="rebuild the plan derivation")
        units = tuple(Unit(u["source"], u["object"], tuple(u["command"]), u["directory"]) for u in data.pop("units"))
        return cls(units=units, **{k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items()})
