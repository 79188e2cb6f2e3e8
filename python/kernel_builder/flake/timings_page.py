"""``build --timings``'s picture: a ``timings.Layout`` as ``timings.html`` and ``timings.png``.

``figure`` (pure) places everything once, in pixels: the title and summary, a legend, a
time axis, then per group a header and one bar per derivation, labelled with what it
builds (an object's source) and its seconds, the slowest ranked (``#1``); derivations
several variants share are drawn in their own colour and say so. ``svg`` writes that
figure as inline SVG (tooltips in ``<title>``, no script), ``html`` puts it in a page with
the tables of variants, the slowest derivations and every derivation; ``png`` draws the
same figure with Pillow, an optional dependency (``kernel-builder[timings]``): it is the
smallest well-kept library that rasterizes rectangles and text with a real font, which is
all a PNG of this figure needs (matplotlib would bring a plotting stack to draw the same
rectangles). ``write`` writes both files through temporary files.
"""

from __future__ import annotations

import html as _html
import io
from collections.abc import Sequence
from pathlib import Path

import attrs

from kernel_builder._files import write_atomic
from kernel_builder.flake import timings
from kernel_builder.flake.timings import Bar, Layout

__all__ = ["Figure", "figure", "html", "png", "svg", "write"]

COLORS = {
    "plan": "#9c9c9c", "object": "#4e79a7", "shared": "#2a9d8f", "link": "#f28e2b", "variant": "#59a14f",
    "check": "#b07aa1", "tests": "#b07aa1", "other": "#bab0ac", "failed": "#e15759",
}
LEGEND = {"plan": "plan", "object": "object", "shared": "shared object", "link": "link", "variant": "variant",
          "check": "check", "tests": "tests", "other": "other", "failed": "failed"}
LABEL_X, PLOT_X, PLOT_W, RIGHT = 12, 360, 860, 80
ROW, HEADER = 16, 22
LABEL_CHARS = 46
PNG_MAX_ROWS = 600  # more derivations than this: the PNG draws thin rows without labels


@attrs.frozen
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str | None = None
    opacity: float = 1.0
    title: str | None = None


@attrs.frozen
class Text:
    x: float
    y: float  # the baseline
    text: str
    size: int = 12
    anchor: str = "start"  # start, middle, end
    bold: bool = False
    fill: str = "#222222"


@attrs.frozen
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str = "#dddddd"


@attrs.frozen
class Figure:
    width: int
    height: int
    items: tuple[Rect | Text | Line, ...]


def seconds_text(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


def _tick_step(total: float) -> float:
    for step in (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800):
        if total / step <= 10:
            return step
    return 86400.0


def _short(text: str, limit: int = LABEL_CHARS) -> str:
    """``text`` cut at its start to ``limit`` characters (a path's end says the most)."""
    return text if len(text) <= limit else "..." + text[-(limit - 3):]


def bar_label(bar: Bar) -> str:
    label = bar.part.label
    if bar.part.shared:
        label += f" [shared by {len(bar.part.owners)}]"
    return (f"#{bar.rank} " if bar.rank else "") + label


def slow_line(bar: Bar) -> str:
    """``#1 VARIANT: WHAT (KIND), SECONDS`` for the list of the slowest."""
    owners = bar.part.owners
    where = owners[0] if len(owners) == 1 else f"shared by {len(owners)} variants" if owners else "no selected variant"
    what = bar.part.label if bar.part.label == bar.part.kind else f"{bar.part.label} ({bar.part.kind})"
    return f"#{bar.rank} {where}: {what}, {seconds_text(bar.span.seconds)}"


def fill_of(bar: Bar) -> str:
    if bar.span.status == "failed":
        return COLORS["failed"]
    if bar.part.kind == "object" and bar.part.shared:
        return COLORS["shared"]
    return COLORS.get(bar.part.kind, COLORS["other"])


def summary(layout: Layout) -> str:
    bars = layout.bars
    if not bars:
        return "Nix built nothing: every selected variant was in the store already, fetched, or failed before building"
    failed = sum(1 for b in bars if b.span.status == "failed")
    unfinished = sum(1 for b in bars if b.span.status == "unfinished")
    shared = sum(1 for b in bars if b.part.shared and b.part.kind == "object")
    text = (f"{len(bars)} derivation(s) in {seconds_text(layout.wall)}; their times added up: "
            f"{seconds_text(layout.busy)}; at most {layout.concurrency} at once")
    if shared:
        text += f"; {shared} shared object(s)"
    if failed:
        text += f"; {failed} failed"
    if unfinished:
        text += f"; {unfinished} unfinished"
    return text + f" (Nix started building {seconds_text(layout.waited)} after the command)"


def figure(layout: Layout, *, row: int = ROW, labels: bool = True) -> Figure:
    """Everything the picture holds, placed in pixels (``row``: a bar row's height; without
    ``labels`` only the groups are named, for a PNG of very many derivations)."""
    items: list[Rect | Text | Line] = []
    width = PLOT_X + PLOT_W + RIGHT
    items.append(Text(LABEL_X, 24, f"Build timings: {layout.kernel}", size=16, bold=True))
    items.append(Text(LABEL_X, 44, summary(layout), size=12, fill="#444444"))
    kinds = [k for k in timings.KINDS if any(b.part.kind == k for b in layout.bars)]
    if any(b.part.shared and b.part.kind == "object" for b in layout.bars):
        kinds.insert(kinds.index("object") + 1 if "object" in kinds else 0, "shared")
    if any(b.span.status == "failed" for b in layout.bars):
        kinds.append("failed")
    x = LABEL_X
    for kind in kinds:
        items.append(Rect(x, 56, 12, 10, COLORS[kind]))
        items.append(Text(x + 16, 65, LEGEND[kind], size=11))
        x += 24 + 7 * len(LEGEND[kind])
    end = max([layout.wall, *(b.span.end for b in layout.bars)]) or 1.0
    scale = PLOT_W / end
    axis_y = 92
    step = _tick_step(end)
    ticks = [i * step for i in range(int(end / step + 1e-9) + 1)]
    top = axis_y + 6
    y = top
    rows: list[Rect | Text | Line] = []
    statuses = dict(layout.variants)
    for group in layout.groups:
        rows.append(Rect(0, y, width, HEADER, "#f0f0f0"))
        title = group.title
        if len(group.owners) == 1 and group.owners[0] in statuses:
            status = statuses[group.owners[0]]
            title += f": {status}" + ("" if group.bars else ", nothing built in this run")
        elif len(group.owners) > 1:
            title += ": " + ", ".join(group.owners)
        rows.append(Text(LABEL_X, y + 15, _short(title, 150), size=12, bold=True))
        y += HEADER
        for bar in group.bars:
            x0 = PLOT_X + bar.span.start * scale
            w = max(1.0, bar.span.seconds * scale)
            tip = (f"{timings.drv_name(bar.part.drv)}\n{bar.part.kind}, {bar.span.status}: "
                   f"{bar.span.start:.2f}s to {bar.span.end:.2f}s ({bar.span.seconds:.2f}s)"
                   + (f" on {bar.span.machine}" if bar.span.machine else "")
                   + (f"\nused by {', '.join(bar.part.owners)}" if bar.part.shared else ""))
            stroke = "#1b4f48" if bar.part.shared and bar.part.kind == "object" else None
            rows.append(Rect(x0, y + 2, w, max(1, row - 4), fill_of(bar), stroke,
                             0.5 if bar.span.status == "unfinished" else 1.0, tip))
            if labels:
                rows.append(Text(LABEL_X + 12, y + row - 4, _short(bar_label(bar)), size=11,
                                 bold=bar.rank is not None and bar.rank <= 3))
                rows.append(Text(x0 + w + 4, y + row - 4, seconds_text(bar.span.seconds), size=10, fill="#555555"))
            y += row
    bottom = y
    for tick in ticks:
        tx = PLOT_X + tick * scale
        items.append(Line(tx, top, tx, bottom))
        items.append(Text(tx, axis_y, seconds_text(tick) if tick else "0", size=10, anchor="middle", fill="#555555"))
    items += rows
    y = bottom + 24
    if layout.slowest:
        items.append(Text(LABEL_X, y, "slowest:", size=12, bold=True))
        for bar in layout.slowest[:5]:
            y += 16
            items.append(Text(LABEL_X + 12, y, slow_line(bar), size=11))
    return Figure(width, int(y + 16), tuple(items))


# -- SVG and HTML ------------------------------------------------------------------------


def _e(text: str) -> str:
    return _html.escape(text, quote=True)


def svg(fig: Figure) -> str:
    """The figure as one ``<svg>`` element (system fonts, tooltips as ``<title>``)."""
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{fig.width}" height="{fig.height}" '
           f'viewBox="0 0 {fig.width} {fig.height}" font-family="DejaVu Sans, Arial, sans-serif" role="img">',
           f'<rect width="{fig.width}" height="{fig.height}" fill="#ffffff"/>']
    for item in fig.items:
        if isinstance(item, Rect):
            attrs_ = f'x="{item.x:.1f}" y="{item.y:.1f}" width="{item.w:.1f}" height="{item.h:.1f}" fill="{item.fill}"'
            if item.stroke:
                attrs_ += f' stroke="{item.stroke}"'
            if item.opacity != 1.0:
                attrs_ += f' fill-opacity="{item.opacity}"'
            out.append(f"<rect {attrs_}><title>{_e(item.title)}</title></rect>" if item.title else f"<rect {attrs_}/>")
        elif isinstance(item, Text):
            weight = ' font-weight="bold"' if item.bold else ""
            out.append(f'<text x="{item.x:.1f}" y="{item.y:.1f}" font-size="{item.size}" text-anchor="{item.anchor}" '
                       f'fill="{item.fill}"{weight}>{_e(item.text)}</text>')
        else:
            out.append(f'<line x1="{item.x1:.1f}" y1="{item.y1:.1f}" x2="{item.x2:.1f}" y2="{item.y2:.1f}" '
                       f'stroke="{item.stroke}"/>')
    out.append("</svg>")
    return "\n".join(out)


_STYLE = """
body { font-family: DejaVu Sans, Arial, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border-bottom: 1px solid #ddd; padding: 2px 10px 2px 0; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: 0.95em; }
.chart { overflow-x: auto; border: 1px solid #ddd; }
.failed { color: #b3261e; }
"""


def html(layout: Layout) -> str:
    """A self-contained page: the chart as inline SVG, then tables (no script, nothing fetched)."""
    fig = figure(layout)
    variants_rows = []
    for name, status in layout.variants:
        own = [b for g in layout.groups if g.owners == (name,) for b in g.bars]
        shared = [b for b in layout.bars if b.part.shared and name in b.part.owners]
        span = (f"{seconds_text(min(b.span.start for b in own))} to {seconds_text(max(b.span.end for b in own))}"
                if own else "-")
        variants_rows.append(f"<tr><td><code>{_e(name)}</code></td><td>{_e(status)}</td><td class=n>{len(own)}</td>"
                             f"<td class=n>{len(shared)}</td><td>{span}</td></tr>")
    slow = [
        f"<tr><td class=n>#{b.rank}</td><td><code>{_e(b.part.label)}</code></td><td>{_e(b.part.kind)}</td>"
        f"<td>{_e(', '.join(b.part.owners) or '-')}</td><td class=n>{b.span.seconds:.2f}</td>"
        f"<td class=n>{b.span.start:.2f}</td></tr>"
        for b in layout.slowest
    ]
    every = [
        f"<tr><td class=n>{b.span.start:.2f}</td><td class=n>{b.span.seconds:.2f}</td>"
        f"<td class=\"{'failed' if b.span.status == 'failed' else ''}\">{_e(b.span.status)}</td><td>{_e(b.part.kind)}</td>"
        f"<td><code>{_e(b.part.label)}</code></td><td>{_e(', '.join(b.part.owners) or '-')}</td>"
        f"<td>{_e(b.span.machine or 'local')}</td><td><code>{_e(b.span.drv)}</code></td></tr>"
        for b in sorted(layout.bars, key=lambda b: (b.span.start, b.span.drv))
    ]
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Build timings: {_e(layout.kernel)}</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>Build timings: {_e(layout.kernel)}</h1>
<p>{_e(summary(layout))}. Times are Nix's: a bar runs from the moment Nix started the derivation's build to the
moment it reported the build finished (or failed). Grouped by variant; derivations that several variants use are
grouped by the variants sharing them, and shared objects are drawn in their own colour.</p>
<h2>Variants</h2>
<table>
<tr><th>variant</th><th>status</th><th>its derivations built</th><th>shared ones it uses</th><th>from, to</th></tr>
{chr(10).join(variants_rows)}
</table>
<h2>Timeline</h2>
<div class="chart">
{svg(fig)}
</div>
<h2>Slowest derivations</h2>
<table>
<tr><th>rank</th><th>what</th><th>kind</th><th>variants</th><th>seconds</th><th>started at</th></tr>
{chr(10).join(slow)}
</table>
<h2>Every derivation</h2>
<table>
<tr><th>started at</th><th>seconds</th><th>status</th><th>kind</th><th>what</th><th>variants</th><th>where</th><th>derivation</th></tr>
{chr(10).join(every)}
</table>
</body>
</html>
"""


# -- PNG -----------------------------------------------------------------------------------


def _rgb(color: str, opacity: float = 1.0) -> tuple[int, int, int]:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return tuple(round(c * opacity + 255 * (1 - opacity)) for c in (r, g, b))  # type: ignore[return-value]


def png(layout: Layout) -> bytes | None:
    """The figure as PNG bytes, drawn with Pillow; ``None`` when Pillow is not installed."""
    try:
        from PIL import Image, ImageDraw, ImageFont  # lazy: optional (kernel-builder[timings]), PNG only
    except ImportError:
        return None
    rows = len(layout.bars)
    fig = figure(layout) if rows <= PNG_MAX_ROWS else figure(layout, row=4, labels=False)
    image = Image.new("RGB", (fig.width, fig.height), "white")
    draw = ImageDraw.Draw(image)
    fonts: dict[tuple[int, bool], object] = {}

    def font(size: int, bold: bool) -> object:
        """DejaVu Sans where the system has it (the SVG asks for it first), else Pillow's own."""
        if (size, bold) not in fonts:
            try:
                fonts[size, bold] = ImageFont.truetype("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf", size)
            except OSError:
                try:
                    fonts[size, bold] = ImageFont.load_default(size=size)
                except (TypeError, OSError, ImportError):  # Pillow < 10.1, or built without FreeType
                    fonts[size, bold] = ImageFont.load_default()
        return fonts[size, bold]

    anchors = {"start": "ls", "middle": "ms", "end": "rs"}
    for item in fig.items:
        if isinstance(item, Rect):
            box = [item.x, item.y, item.x + max(item.w, 1) - 1, item.y + max(item.h, 1) - 1]
            draw.rectangle(box, fill=_rgb(item.fill, item.opacity), outline=_rgb(item.stroke) if item.stroke else None)
        elif isinstance(item, Text):
            draw.text((item.x, item.y), item.text, fill=_rgb(item.fill), font=font(item.size, item.bold),
                      anchor=anchors[item.anchor])
        else:
            draw.line([item.x1, item.y1, item.x2, item.y2], fill=_rgb(item.stroke))
    buffer = io.BytesIO()
    image.save(buffer, "PNG", optimize=True)
    return buffer.getvalue()


def write(build_dir: Path, layout: Layout) -> list[Path]:
    """Write ``timings.html`` (and ``timings.png`` when Pillow is installed) into
    ``build_dir``, each through a temporary file; the paths written."""
    build_dir.mkdir(parents=True, exist_ok=True)
    page = build_dir / "timings.html"
    write_atomic(page, html(layout))
    written = [page]
    picture = png(layout)
    if picture is not None:
        write_atomic(build_dir / "timings.png", picture)
        written.append(build_dir / "timings.png")
    return written


def record_layout(kernel: str, recorder: timings.Recorder, variants: Sequence[tuple[str, str]]) -> Layout:
    """The layout of what ``recorder`` saw: the variants' derivations (those that started)
    give the closures that say who uses what."""
    names = [name for name, _ in variants]
    found = timings.spans(recorder.records, recorder.wall)
    variant_drvs = {}
    for span in found:
        kind, variant = timings.kind_of_name(span.drv, names)
        if kind == "variant" and variant is not None:
            variant_drvs[variant] = span.drv
    parts = timings.describe([s.drv for s in found], names, timings.derivation_closures(variant_drvs))
    return timings.layout(kernel, found, parts, variants, wall=recorder.wall, waited=recorder.waited)
