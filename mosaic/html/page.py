"""What every page shares: the shell, escaping, tables, numbers, assets and chart data.

Text is escaped where it enters markup (:func:`cell` and :func:`esc`);
pre-built markup travels as :class:`Html`, so a log's command line or
file name can never become markup. Charts are described in Python
(:class:`Chart`) and drawn by ``assets/charts.js`` with uPlot from one
JSON block per page: thinning a series to at most ``report_chart_points``
points keeps a 40-day run's page as light as a minute's.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, NotRequired

import numpy as np
from matplotlib.ticker import EngFormatter
from typing_extensions import TypedDict

from mosaic import __version__
from mosaic.html.csp import policy
from mosaic.report.text import display_name, readable
from mosaic.report.timeline import per_stretch

STYLESHEETS = ("uPlot.min.css", "mosaic.css")
CHART_SCRIPTS = ("uPlot.iife.min.js", "charts.js")
# Files a report site copies into report/assets/ (the licence travels with the library).
SITE_ASSETS = (*STYLESHEETS, *CHART_SCRIPTS, "table.js", "uPlot.LICENSE")
# The site's pages at its top folder, as every top page's navigation names them (mosaic report)
ROOT_NAV = (("index.html", "Year"), ("applications.html", "Applications"), ("method.html", "Method"))
SIGNIFICANT_DIGITS = 5  # of a chart's numbers: more only grows the page


class Html(str):
    """Markup already escaped or built from escaped parts: inserted as is."""


def esc(value: object) -> Html:
    """``value`` as text in markup (quotes escaped too: safe in attributes), readable
    whatever its bytes (:func:`mosaic.report.text.readable`)."""
    return value if isinstance(value, Html) else Html(html.escape(readable(value), quote=True))


def asset_text(name: str) -> str:
    """An asset shipped in the package (``mosaic/html/assets/NAME``)."""
    return resources.files("mosaic.html").joinpath("assets", name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Assets:
    """Where a page finds its stylesheets and scripts: inside it, or in a shared folder."""

    inline: bool
    prefix: str = ""  # relative path of the shared folder, e.g. "../assets/"

    def styles(self) -> Html:
        if self.inline:
            return Html("".join(f"<style>{asset_text(name)}</style>" for name in STYLESHEETS))
        return Html("".join(f'<link rel="stylesheet" href="{esc(self.prefix + n)}">' for n in STYLESHEETS))

    def scripts(self, names: Sequence[str]) -> Html:
        if self.inline:
            return Html("".join(f"<script>{asset_text(name)}</script>" for name in names))
        return Html("".join(f'<script src="{esc(self.prefix + name)}"></script>' for name in names))


def png_data_uri(png: bytes) -> str:
    """A PNG as a ``data:`` URI: the image travels inside the page."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


NBSP = "\u00a0"  # between a number and its unit: a narrow column never shows "188." over "GB"


def human_bytes(value: float) -> str:
    """1.2e9 -> '1.2 GB' (the timeline's units), the two kept on one line."""
    return str(EngFormatter(unit="B", places=1, sep=NBSP)(value))


def percent(share: float) -> str:
    return f"{100 * share:.1f}{NBSP}%"


def labels_html(labels: Iterable[str]) -> Html:
    """Labels as chips, each with its vocabulary name in a tooltip."""
    return Html(
        "".join(
            f'<span class="label {esc(label.split("_", 1)[0])}" title="{esc(label)}">'
            f"{esc(display_name(label))}</span>"
            for label in labels
        )
    )


def cell(value: object) -> Html:
    """A table cell's content: numbers right-aligned by CSS, text escaped."""
    return esc("" if value is None else value)


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], css: str = "") -> Html:
    """An HTML table; ``Html`` cells go in as they are, anything else as text."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return scroll(f'<table class="{esc(css)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def facts(pairs: Iterable[tuple[str, object]]) -> Html:
    """A two-column table of named facts."""
    rows = "".join(f"<tr><th>{esc(name)}</th><td>{cell(value)}</td></tr>" for name, value in pairs)
    return scroll(f'<table class="facts"><tbody>{rows}</tbody></table>')


def scroll(markup: str) -> Html:
    """Wide content in a box of its own that scrolls sideways: on a phone the page does not."""
    return Html(f'<div class="scroll">{markup}</div>')


class Series(TypedDict):
    label: str
    values: list[float | None]
    color: str
    style: NotRequired[str]  # "points": a scatter; "plain": a line without fill (the chart's style otherwise)


class Chart(TypedDict, total=False):
    """One uPlot chart as ``charts.js`` reads it."""

    id: str
    title: str
    xlabel: str
    ylabel: str
    unit: str  # of the y values, "B" for bytes
    x: list[float | None]
    series: list[Series]
    style: str  # "line", "steps" or "bars"
    logx: bool
    xrange: list[float]  # [min, max] of the x axis when not the data's own
    time: bool  # x in Unix seconds, shown as dates
    asinhy: bool  # asinh y scale: zero and 1e5 both readable (metadata requests)
    lines: list[dict[str, Any]]  # horizontal thresholds: {"label", "value"}


def numbers(values: np.ndarray) -> list[float | None]:
    """Chart values with SIGNIFICANT_DIGITS digits; NaN and infinities as gaps."""
    out: list[float | None] = []
    for value in np.asarray(values, dtype=float).tolist():  # bounded by report_chart_points
        out.append(float(f"{value:.{SIGNIFICANT_DIGITS}g}") if np.isfinite(value) else None)
    return out


def thinned(
    x: np.ndarray, ys: Sequence[np.ndarray], most: int, reduce: np.ufunc = np.maximum
) -> tuple[np.ndarray, list[np.ndarray], int]:
    """At most ``most`` points: ``reduce`` over each stretch of each series (the peak keeps a
    spike at its height, as in the timeline; the sum keeps every byte), at the stretch's first
    x; and the stretch's width in points."""
    if len(x) <= most:
        return x, list(ys), 1
    thin = [per_stretch(np.asarray(y, dtype=float), most, reduce) for y in ys]
    width = thin[0][1]
    return x[::width], [values for values, _ in thin], width


@dataclass
class Page:
    """One page under construction: its sections, charts and scripts."""

    title: str
    assets: Assets
    nav: Sequence[tuple[str, str]] = ()  # (href, text) links on top
    sections: list[str] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)  # assets
    data_scripts: list[str] = field(default_factory=list)  # page-relative paths, loaded before the assets

    def add(self, heading: str, body: str, anchor: str = "", at: int | None = None) -> None:
        """A section: its heading (text) and body (markup); last, or ``at`` that place."""
        ident = f' id="{esc(anchor)}"' if anchor else ""
        section = f"<section{ident}><h2>{esc(heading)}</h2>{body}</section>"
        self.sections.insert(len(self.sections) if at is None else at, section)

    def chart(self, chart: Chart) -> Html:
        """Register ``chart``; returns the element it is drawn into."""
        self.charts.append(chart)
        return Html(f'<div class="chart" id="{esc(chart["id"])}"></div>')

    def render(self) -> str:
        scripts = list(self.scripts)
        data = ""
        if self.charts:
            # "</" cannot end the block early: JSON allows "<\/" for "</".
            text = json.dumps(self.charts, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
            data = f'<script type="application/json" id="mosaic-charts">{text}</script>'
            scripts = [*CHART_SCRIPTS, *scripts]
        loaded = "".join(f'<script src="{esc(src)}"></script>' for src in self.data_scripts)
        nav = " ".join(f'<a href="{esc(href)}">{esc(text)}</a>' for href, text in self.nav)
        body = (
            f"<body><header><nav>{nav}</nav><h1>{esc(self.title)}</h1></header><main>{''.join(self.sections)}"
            f"</main><footer>mosaic-io {esc(__version__)}: HPC I/O categories from Darshan logs</footer>"
            f"{data}{loaded}{self.assets.scripts(list(dict.fromkeys(scripts)))}</body>"
        )
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(policy(body))}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="mosaic-io {esc(__version__)}">'  # the code that made it
            '<link rel="icon" href="data:,">'  # no request for /favicon.ico
            f"<title>{esc(self.title)}</title>{self.assets.styles()}</head>{body}</html>\n"
        )
