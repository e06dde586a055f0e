"""Who slows whom on the report's pages (SPEC 3.11): an application's scatter of its runs'
slowdown against the load they met with the fitted slope and its interval, and the year
page's conflict section (the matrix figure, its sentence). Read from the tables the
analysis wrote; nothing is computed here."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import numpy as np

from mosaic.html.page import Chart, Html, Series, esc, numbers
from mosaic.interference.tables import ContentionSummary, load_contention

MB = 1e6
MAX_POINTS = 2000  # runs drawn on a page (the most recent by run number beyond it)


def load_chart(db: sqlite3.Connection, group_key: str) -> tuple[Chart | None, Html]:
    """(the scatter, the facts above it) for one application, or (None, a note)."""
    contention = load_contention(db, group_key)
    if contention is None:
        return None, Html('<p class="note">Not analysed: no run with its I/O time and load in the store.</p>')
    try:
        rows = db.execute(
            "SELECT c.slowdown, (SELECT CASE WHEN sum(io_seconds) > 0 THEN "
            "sum(io_seconds * (coalesce(read_rate, 0) + coalesce(write_rate, 0))) / sum(io_seconds) END "
            "FROM run_load l WHERE l.run = c.run) "
            "FROM run_contention c WHERE c.group_key = ? ORDER BY c.run DESC LIMIT ?",
            (group_key, MAX_POINTS),
        ).fetchall()
    except sqlite3.OperationalError:  # no run_load table
        rows = []
    body = db.execute("SELECT body FROM app_contention WHERE group_key = ?", (group_key,)).fetchone()
    details: dict[str, Any] = json.loads(body[0]) if body and body[0] else {}
    text = _facts(contention, details)
    points = np.array(
        [(load, slow) for slow, load in rows if slow is not None and load is not None], dtype=float
    )
    if points.size == 0:
        return None, text
    points = points[np.argsort(points[:, 0], kind="stable")]
    x = points[:, 0] / MB
    series: list[Series] = [
        {"label": "runs", "values": numbers(points[:, 1]), "color": "#0173b2", "style": "points"}
    ]
    intercept, slope = details.get("intercept"), contention["slope"]
    if intercept is not None and slope is not None:
        fit = numbers(intercept + slope * points[:, 0])
        series.append({"label": "fit", "values": fit, "color": "#d55e00", "style": "plain"})
        for bound in (contention["slope_lo"], contention["slope_hi"]):
            if bound is not None:
                values = numbers(intercept + bound * points[:, 0])
                series.append(
                    {"label": "slope's 95 % interval", "values": values, "color": "#e69f00", "style": "plain"}
                )
    chart: Chart = {
        "id": "contention",
        "title": f"Slowdown (x its low-load time) against other jobs' load: {len(points):,} runs",
        "xlabel": "other jobs' load during its I/O (MB/s)",
        "ylabel": "slowdown (x)",
        "unit": "",
        "x": numbers(x),
        "series": series,
        "style": "line",
        "lines": [{"label": "no slowdown", "value": 1.0}],
    }
    return chart, text


def _facts(contention: ContentionSummary, details: dict[str, Any]) -> Html:
    label = contention["label"]
    parts = [f"<strong>{esc(label)}</strong> over {contention['n']:,} measured runs"]
    if contention["rho"] is not None:
        parts.append(
            f"Spearman {contention['rho']:.2f} (one-sided p {contention['p'] or 0:.2g}, "
            f"BH q {contention['q'] or 0:.2g})"
        )
    if details.get("pearson") is not None:
        parts.append(
            f"beside it: Pearson {details['pearson']:.2f}, distance correlation "
            f"{details.get('distance_correlation') or 0:.2f}, NMI {details.get('nmi') or 0:.2f}"
        )
    if contention["words"]:
        parts.append(esc(contention["words"]))
    if details.get("reason"):
        parts.append(esc(details["reason"]))
    if contention["traits"]:
        parts.append("aggressor traits: " + esc(", ".join(contention["traits"])))
    if details.get("slow_runs"):
        parts.append(f"{details['slow_runs']:,} slow runs")
    return Html(f'<p class="note">{"; ".join(parts)}.</p>')


def year_section(summary: dict[str, Any]) -> Html | None:
    """The sentence answering "which categories conflict", for the year page (None when the
    run computed no matrix)."""
    contention = summary.get("contention")
    if not isinstance(contention, dict) or contention.get("status") != "ok":
        return None
    return Html(
        f'<p class="note">{esc(contention.get("sentence", ""))} {contention.get("conflicting_pairs", 0)} '
        "conflicting pairs (simultaneous lower bound above 0); cells marked n/a had no evidence "
        "(docs/method.md 3.11).</p>"
    )
