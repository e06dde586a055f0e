"""The I/O signature (SPEC 3.12) on the report's pages: the application's bandwidth over its
normalized run time with the runs' spread (p10-p90 around the median), its common bursts;
and one run against it on a job page."""

from __future__ import annotations

from typing import Any

import numpy as np

from mosaic.directions import DIRECTIONS
from mosaic.html.page import Chart, Html, Page, Series, esc, human_bytes, numbers, percent, table
from mosaic.periods import duration
from mosaic.report.text import counted
from mosaic.series import RunSeries

COLORS = {"read": "#0173b2", "write": "#de8f05"}
SPREAD = "#999999"


def _x(points: int) -> list[float | None]:
    """Point centres as % of the run."""
    return numbers((np.arange(points) + 0.5) * 100.0 / points)


def charts(body: dict[str, Any], prefix: str, run: RunSeries | None = None) -> list[Chart]:
    """One chart per direction that moves bytes: p90, median, p10 of the runs (and ``run``'s
    own bandwidth over its normalized run time, when given)."""
    normalized = body["normalized"]
    points = int(normalized["points"])
    out: list[Chart] = []
    for direction in DIRECTIONS:
        side = normalized[direction]
        if max(side["p90"], default=0.0) < 1.0:  # no byte a second in this direction (float dust)
            continue
        series: list[Series] = [
            {"label": "p90 of runs", "values": numbers(np.array(side["p90"])), "color": SPREAD},
            {"label": "median run", "values": numbers(np.array(side["p50"])), "color": COLORS[direction]},
            {"label": "p10 of runs", "values": numbers(np.array(side["p10"])), "color": SPREAD},
        ]
        if run is not None and run.timed:
            series.append(
                {
                    "label": "this run",
                    "values": numbers(run.normalized(direction, points)),
                    "color": "#029e73",
                }
            )
        out.append(
            {
                "id": f"{prefix}-{direction}",
                "title": f"{direction.capitalize()} bandwidth over the run ({body['runs']} runs)",
                "xlabel": "% of run time",
                "ylabel": "bandwidth",
                "unit": "B/s",
                "x": _x(points),
                "series": series,
                "style": "line",
            }
        )
    return out


def bursts_table(body: dict[str, Any]) -> Html:
    rows = [
        [
            burst["direction"],
            percent(burst["start"]),
            percent(burst["duration"]),
            human_bytes(burst["bytes"]),
            human_bytes(burst["bandwidth"]) + "/s",
            f"{burst['runs']} of {body['runs']}",
            duration(burst["seconds"]["p50"]) if "seconds" in burst else "-",
        ]
        for burst in body["bursts"]
    ]
    headers = ["burst", "starts at", "lasts", "bytes", "bandwidth", "runs", "seconds (median)"]
    return (
        table(headers, rows, "numbers") if rows else Html('<p class="note">No burst common to its runs.</p>')
    )


def section(
    page: Page, body: dict[str, Any] | None, reason: str | None, run: RunSeries | None = None
) -> Html:
    """The signature's section body: its charts and bursts, or why there is none."""
    if body is None:
        return Html(f'<p class="note">No I/O signature: {esc(reason or "none stored")}.</p>')
    time = body["run_time"]
    head = Html(
        f'<p class="note">From {body["runs"]} runs ({counted(body["outliers"], "outlier")} left out), at '
        f"{esc(duration(body['resolution']))}; run time {esc(duration(time['p50']))} "
        f"({esc(duration(time['p10']))} - {esc(duration(time['p90']))}), "
        f"{esc(duration(body['unslowed_run_time']))} unslowed. Grey: the runs' p10 and p90 at each "
        "point; bursts start and last as shares of the unslowed run (docs/method.md 3.12).</p>"
    )
    drawn = Html("".join(page.chart(chart) for chart in charts(body, "signature", run)))
    return Html(head + drawn + bursts_table(body))
