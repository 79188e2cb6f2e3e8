"""``build --timings``: when each derivation of a Nix build ran, as Nix reported it.

Three steps, the first the only one that watches a build:

* ``Recorder`` is fed ``nix.BuildEvent`` values while ``nix build`` runs and keeps a small
  event stream of its own (``Record``: a derivation started, ended well, failed), each
  stamped with the seconds since Nix reported its first event. A build ends when Nix's
  count of finished builds grows; Nix 2.8 then stops the build's activity at once, except
  for the derivations asked for on the command line (the variants), whose activity it stops
  only when it exits: their end is the moment the count grew and their output became valid
  (the store is asked only while such a target runs). A ``builder for ... failed`` message
  ends a failed build.
* ``spans`` (pure) turns a recorded stream into one ``Span`` per derivation; ``describe``
  says what each derivation is (``Part``: plan, object, link, variant, check, tests, other;
  the source an object compiles; the variants whose derivation closure holds it);
  ``layout`` (pure) groups the spans by variant, puts derivations that several variants
  share in groups of their own (a shared object is marked), and ranks the slowest.
* ``timings_render`` draws a ``Layout`` as a self-contained HTML page (inline SVG) and a PNG.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from kernel_builder.errors import KernelBuilderError
from kernel_builder import nix
from kernel_builder.nix.steps import Step, step_of

__all__ = [
    "KINDS", "Bar", "Group", "Layout", "Part", "Record", "Recorder", "Span", "describe", "kind_of_name", "layout",
    "spans",
]

# What a derivation of a build is; the order is the legend's.
KINDS = ("plan", "object", "link", "variant", "check", "tests", "other")
SLOWEST = 10  # how many of the slowest derivations a page names


@attrs.frozen
class Record:
    """One recorded moment: derivation ``drv`` started (``start``), ended well (``end``) or
    failed (``fail``), ``t`` seconds after Nix's first event; ``machine``: where it built
    (empty: this machine)."""

    t: float
    kind: str = attrs.field(validator=attrs.validators.in_(("start", "end", "fail")))
    drv: str
    machine: str = ""


class Recorder:
    """Follows ``nix.build``'s events (pass ``on_event``) and records when each derivation
    started and ended; ``records`` is the stream, ``wall`` the seconds from Nix's first event
    to its last, ``waited`` the seconds from this recorder's creation to Nix's first event
    (evaluation, and what ran before Nix). ``clock``, ``valid_outputs`` (which of these out
    paths the store holds) and ``output_of`` (a .drv's out path) are the store and the time,
    replaced when a recorded build is replayed.

    When Nix's count of finished builds grows by k, k builds ended at that moment. A
    dependency's activity stops right after (``pending`` holds the moment until its stop
    comes); a build target's (``event.target`` set: a variant) stops only when Nix exits,
    so while one runs, the store is asked which targets' outputs are valid now.
    """

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic,
        valid_outputs: Callable[[Sequence[str]], set[str]] | None = None,
        output_of: Callable[[str], str | None] | None = None,
    ) -> None:
        self.clock = clock
        self.valid_outputs = valid_outputs or _valid_outputs
        self.output_of = output_of or _output_of
        self.created = clock()
        self.first: float | None = None
        self.last: float | None = None
        self.records: list[Record] = []
        # drv -> (its out path, is a build target), in the order they started
        self.running: dict[str, tuple[str | None, bool]] = {}
        self.ended: set[str] = set()
        self.pending: list[float] = []  # moments builds ended whose stop has not come yet
        self.done = 0

    @property
    def wall(self) -> float:
        return 0.0 if self.first is None or self.last is None else self.last - self.first

    @property
    def waited(self) -> float:
        return 0.0 if self.first is None else self.first - self.created

    def on_event(self, event: nix.BuildEvent) -> None:
        now = self.clock()
        if self.first is None:
            self.first = now
        self.last = now
        t = now - self.first
        if event.kind == "stop":
            if event.drv in self.running:
                self._end(self.pending.pop(0) if self.pending else t, [event.drv], "end")
            return
        self.pending.clear()  # a moment no stop claimed was a target's (see _progress)
        if event.kind == "start" and event.drv and event.drv not in self.running and event.drv not in self.ended:
            self.running[event.drv] = (self.output_of(event.drv), event.target is not None)
            self.records.append(Record(t, "start", event.drv, event.machine))
        elif event.kind == "error" and event.drv and event.drv in self.running:
            self._end(t, [event.drv], "fail")
        elif event.kind == "progress":
            self._progress(t, event.text)

    def _progress(self, t: float, text: str) -> None:
        """Nix's count of finished builds grew by k: the targets among the running builds
        whose output is valid now ended at ``t``, and the others' stops will come next."""
        try:
            done = int(text.split()[0])
        except (IndexError, ValueError):
            return
        finished, self.done = done - self.done, max(done, self.done)
        if finished <= 0 or not self.running:
            return
        targets = {drv: out for drv, (out, target) in self.running.items() if target}
        if targets:
            if len(targets) == len(self.running) and len(targets) <= finished:
                ended = list(targets)
            else:
                valid = self.valid_outputs([out for out in targets.values() if out])
                # a target may finish while the store is asked: no more than k ended now, the
                # longest running first (the others end with the next growth of the count)
                ended = [drv for drv, out in targets.items() if out in valid][:finished]
            self._end(t, ended, "end")
            finished -= len(ended)
        self.pending = [t] * max(finished, 0)

    def _end(self, t: float, drvs: Iterable[str], kind: str) -> None:
        for drv in drvs:
            if self.running.pop(drv, None) is not None:
                self.ended.add(drv)
                self.records.append(Record(t, kind, drv))


def _valid_outputs(outs: Sequence[str]) -> set[str]:
    """Which of ``outs`` the store holds now (none when the store cannot say)."""
    try:
        return set(outs) - set(nix.invalid_paths(outs))
    except KernelBuilderError:
        return set()


_DRV_OUT = re.compile(r'Derive\(\[\("out","([^"]+)"')


def _output_of(drv: str) -> str | None:
    """The ``out`` path a .drv file names (its ATerm text starts with the outputs)."""
    try:
        head = Path(drv).read_text(errors="replace")[:4096]
    except OSError:
        return None
    found = _DRV_OUT.match(head)
    return found.group(1) if found else None


# -- spans: one per derivation -----------------------------------------------------------


@attrs.frozen
class Span:
    """One derivation's build: from ``start`` to ``end`` seconds (``end`` is the build's last
    moment when it never ended: ``unfinished``)."""

    drv: str
    start: float
    end: float
    status: str  # "built", "failed" or "unfinished"
    machine: str = ""

    @property
    def seconds(self) -> float:
        return max(0.0, self.end - self.start)


def spans(records: Iterable[Record], wall: float) -> list[Span]:
    """The recorded stream as one span per started derivation, in start order; a derivation
    that started and never ended runs to ``wall`` (the build was stopped)."""
    started: dict[str, Record] = {}
    ends: dict[str, Record] = {}
    for record in records:
        if record.kind == "start":
            started.setdefault(record.drv, record)
        elif record.drv not in ends:
            ends[record.drv] = record
    out = []
    for drv, first in started.items():
        last = ends.get(drv)
        status = "unfinished" if last is None else "built" if last.kind == "end" else "failed"
        end = wall if last is None else last.t
        out.append(Span(drv, first.t, max(end, first.t), status, first.machine))
    return sorted(out, key=lambda s: (s.start, s.drv))


# -- parts: what each derivation is ------------------------------------------------------


@attrs.frozen
class Part:
    """What derivation ``drv`` is: its ``kind`` (one of ``KINDS``), a ``label`` a person reads
    (an object's source, or the derivation's name), and the variants whose build uses it."""

    drv: str
    kind: str
    label: str
    owners: tuple[str, ...]

    @property
    def shared(self) -> bool:
        return len(self.owners) > 1


def drv_name(drv: str) -> str:
    """``/nix/store/<hash>-NAME.drv`` -> ``NAME``."""
    name = drv.rsplit("/", 1)[-1].removesuffix(".drv")
    digest, sep, rest = name.partition("-")
    return rest if sep and len(digest) == 32 else name


def kind_of_name(drv: str, variants: Sequence[str]) -> tuple[str, str | None]:
    """(kind, variant) from the derivation's name alone: the naming rules of nix/lib/builders
    (``nix.steps.step_of`` for plan, object and link; ``<kernel>-<variant>`` is the
    variant; ``-check``, ``-tests``, ``-tests-check`` and ``-ci-test`` after the variant's
    name are its checks and tests). Anything else is ``other``."""
    unit = step_of(drv, variants)
    if unit is not None:
        return {Step.PLAN: "plan", Step.OBJECT: "object", Step.LINK: "link"}[unit.step], unit.variant
    target = nix.target_of(drv, variants)
    if target is not None:
        return "variant", target
    name = drv_name(drv)
    for variant in sorted(variants, key=len, reverse=True):
        for suffix, kind in (("-tests-check", "tests"), ("-tests", "tests"), ("-ci-test", "tests"), ("-check", "check")):
            if name.endswith(f"-{variant}{suffix}"):
                return kind, variant
    return "other", None


_ENV = re.compile(r'\("(step|unit)","((?:[^"\\]|\\.)*)"\)')
# an object keyed by what it reads names its source only inside its unitJson attribute
_UNIT_SOURCE = re.compile(r'\\"source\\":\\"((?:[^"\\]|\\\\.)*)\\"')
# per-object.nix's steps that make the plan: the plan itself, each unit's deps, their merge
_PLAN_STEPS = ("plan", "deps", "merge")


def _drv_env(drv: str) -> dict[str, str]:
    """The ``step`` and ``unit`` attributes a per-object derivation carries (per-object.nix),
    read from the .drv file; empty when it has none or cannot be read."""
    try:
        text = Path(drv).read_text(errors="replace")
    except OSError:
        return {}
    env = {key: value for key, value in _ENV.findall(text)}
    if "unit" not in env and (source := _UNIT_SOURCE.search(text)) is not None:
        env["unit"] = source.group(1)
    return env


def describe(
    drvs: Iterable[str], variants: Sequence[str], closures: Mapping[str, set[str]], *,
    env_of: Callable[[str], Mapping[str, str]] = _drv_env,
) -> dict[str, Part]:
    """A ``Part`` for each derivation. ``closures`` maps a variant to the .drv files of its
    derivation closure (``derivation_closures``): a derivation's owners are the variants whose
    closure holds it, so an object that several variants' links take is shared whatever its
    name; a variant whose derivation is unknown (it never started) owns what its name says.
    An object's label is the source it compiles (its ``unit`` attribute)."""
    parts = {}
    for drv in drvs:
        kind, named = kind_of_name(drv, variants)
        env = env_of(drv)
        step = env.get("step")
        if step in ("object", "link"):
            kind = step
        elif step in _PLAN_STEPS:
            kind = "plan"
        owners = tuple(v for v in variants if drv in closures.get(v, ()))
        if not owners and step == "deps":  # built while Nix evaluates: in no closure, named <kernel>-<variant>-deps-<unit>
            named = next((v for v in sorted(variants, key=len, reverse=True) if f"-{v}-deps-" in drv_name(drv)), named)
        if not owners and named is not None:
            owners = (named,)
        if kind == "object":
            unit = step_of(drv, variants)
            label = env.get("unit") or (unit.source if unit is not None else None) or drv_name(drv)
        elif step == "deps":
            label = f"deps {env.get('unit') or drv_name(drv)}"
        elif step == "merge":
            label = "deps (merged)"
        elif kind in ("plan", "link", "check", "tests") or (kind == "variant" and named is not None):
            label = kind if kind != "variant" else "assemble and check"
        else:
            label = drv_name(drv)
        parts[drv] = Part(drv, kind, label, owners)
    return parts


def derivation_closures(variant_drvs: Mapping[str, str]) -> dict[str, set[str]]:
    """variant -> the .drv files of its derivation's closure (``nix-store -qR``); a variant
    the store cannot answer for is left out (its parts are then known by name)."""
    found: dict[str, set[str]] = {}
    for variant, drv in variant_drvs.items():
        try:
            closure = nix.run_nix(["-qR", drv], program="nix-store").stdout.split()
        except KernelBuilderError:
            continue
        found[variant] = {p for p in closure if p.endswith(".drv")}
    return found


# -- layout: groups, rows, the slowest ---------------------------------------------------


@attrs.frozen
class Bar:
    """One derivation on the chart; ``rank`` is its place among the slowest (1 = slowest)."""

    span: Span
    part: Part
    rank: int | None = None


@attrs.frozen
class Group:
    """The bars of one variant (``owners`` is that one), of the derivations several variants
    share (``owners`` lists them), or of those no selected variant uses (``owners`` empty)."""

    title: str
    owners: tuple[str, ...]
    bars: tuple[Bar, ...]


@attrs.frozen
class Layout:
    """What the page shows: ``groups`` in order, ``slowest`` bars (slowest first), and the
    variants with their outcome (``variants``: name -> status)."""

    kernel: str
    wall: float
    waited: float
    groups: tuple[Group, ...]
    slowest: tuple[Bar, ...]
    variants: tuple[tuple[str, str], ...]

    @property
    def bars(self) -> list[Bar]:
        return [bar for group in self.groups for bar in group.bars]

    @property
    def busy(self) -> float:
        """The derivations' seconds added up (more than ``wall`` when builds ran side by side)."""
        return sum(bar.span.seconds for bar in self.bars)

    @property
    def concurrency(self) -> int:
        """The most derivations that ran at one moment."""
        edges = sorted([(b.span.start, 1) for b in self.bars] + [(b.span.end, -1) for b in self.bars],
                       key=lambda e: (e[0], e[1]))
        most = now = 0
        for _, step in edges:
            now += step
            most = max(most, now)
        return most


def layout(
    kernel: str, found: Sequence[Span], parts: Mapping[str, Part], variants: Sequence[tuple[str, str]], *,
    wall: float, waited: float = 0.0, slowest: int = SLOWEST,
) -> Layout:
    """Group ``found`` by the variants that use each derivation: one group per selected
    variant (in the order given), then one per set of variants that share derivations
    (the more variants, the earlier), then what no selected variant uses. Bars keep their
    start order within a group; the ``slowest`` longest are ranked."""
    names = [name for name, _ in variants]
    ranked = sorted(found, key=lambda s: (-s.seconds, s.start, s.drv))[:slowest]
    rank = {span.drv: i for i, span in enumerate(ranked, 1)}
    by_owners: dict[tuple[str, ...], list[Bar]] = {}
    for span in found:
        part = parts.get(span.drv) or Part(span.drv, "other", drv_name(span.drv), ())
        by_owners.setdefault(part.owners, []).append(Bar(span, part, rank.get(span.drv)))
    order = [(name,) for name in names]
    order += sorted((o for o in by_owners if len(o) > 1),
                    key=lambda o: (-len(o), [names.index(v) if v in names else len(names) for v in o]))
    order += [o for o in by_owners if len(o) == 1 and o[0] not in names]
    order += [()] if () in by_owners else []
    groups = []
    for owners in order:
        bars = tuple(by_owners.get(owners, ()))
        if not bars and len(owners) != 1:
            continue
        groups.append(Group(_title(owners), owners, bars))
    bars = {bar.span.drv: bar for group in groups for bar in group.bars}
    return Layout(kernel, wall, waited, tuple(groups), tuple(bars[s.drv] for s in ranked), tuple(variants))


def _title(owners: tuple[str, ...]) -> str:
    if not owners:
        return "used by no selected variant"
    if len(owners) == 1:
        return owners[0]
    return f"shared by {len(owners)} variants"
