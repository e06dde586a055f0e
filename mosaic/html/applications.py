"""The report's applications: the table over every group, and a page per top application.

The numbers are the store's (:mod:`mosaic.corpus.profiles`), the ones a
scheduler's lookup answers: each row's label shares, stability and period
class come from :func:`profiles.profile`, so the table and the API cannot
disagree. The table's data is one script file (a JSON object assigned to
``window.MOSAIC_APPLICATIONS``: a ``<script src>`` loads it from a page opened
as a file, where a browser refuses ``fetch``), read once; sorting and
filtering happen in the browser (``assets/table.js``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mosaic.analysis.labels import ALL_LABELS
from mosaic.config import Config
from mosaic.corpus import profiles
from mosaic.directions import DIRECTIONS
from mosaic.html.page import Chart, Html, Page, esc, facts, human_bytes, labels_html, numbers, percent, table
from mosaic.report.text import readable

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
DAY = 86400.0


def slug(name: str) -> str:
    """A file name for ``name``'s page: readable, and unique by a digest of the whole name."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"{_UNSAFE.sub('_', name)[-60:].strip('_.') or 'page'}-{digest}.html"


StoredName = str | bytes  # a file name as the store keeps it: one that is not UTF-8 as its bytes


@dataclass
class Application:
    """One group's row of the table."""

    key: str
    uid: int
    name: str
    runs: int  # valid runs of the group
    bytes: float  # over its valid runs of the last batch run
    representative: StoredName
    profile: profiles.ApplicationProfile | None


def applications(db: sqlite3.Connection, config: Config) -> Iterator[Application]:
    """Every group of the store with its profile, by group key."""
    totals = dict(
        db.execute(
            "SELECT group_key, sum(total_bytes) FROM logs WHERE status = 'ok' AND "
            "seen = (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'run') GROUP BY group_key"
        )
    )
    rows = db.execute(
        "SELECT group_key, uid, application, runs, representative, total_bytes FROM applications "
        "ORDER BY group_key"
    ).fetchall()
    for key, uid, name, runs, representative, heaviest in rows:
        yield Application(
            key,
            int(uid),
            str(name),
            int(runs),
            float(totals.get(key) or heaviest or 0.0),
            representative,
            profiles.profile(db, key, int(runs), config.profile_min_periodic_share),
        )


def table_data(apps: list[Application], pages: dict[str, str]) -> dict[str, Any]:
    """The table's one data object: column names, the label vocabulary, one list per row.

    Label shares go as flat [label index, percent, ...] pairs of the labels a
    group carries: a row of a 25,000-group year stays ~150 bytes.
    """
    index = {label: i for i, label in enumerate(ALL_LABELS)}
    rows = []
    for app in apps:
        profile = app.profile
        shares: list[int] = []
        if profile is not None:
            for label, share in profile["label_shares"].items():
                shares += [index[label], round(100 * share)]
        rows.append(
            [
                readable(app.name),
                app.uid,
                app.runs,
                app.bytes,
                # one run is alike with itself: its stability says nothing, shown as "-"
                None if profile is None or profile["runs"] < 2 else round(profile["stability"], 3),
                None if profile is None else profile["period_class"],
                None if profile is None else profile["period_direction"],
                shares,
                pages.get(app.key, ""),
            ]
        )
    return {
        "columns": [
            "application",
            "uid",
            "runs",
            "bytes",
            "stability",
            "period_class",
            "period_direction",
            "labels",
            "page",
        ],
        "labels": list(ALL_LABELS),
        "rows": rows,
    }


def table_script(data: dict[str, Any]) -> str:
    """The data object as the script file the table page loads."""
    return f"window.MOSAIC_APPLICATIONS = {json.dumps(data, separators=(',', ':'))};\n"


def top_applications(apps: list[Application], count: int) -> list[Application]:
    """The ``count`` applications with the most runs, then the ``count`` with the most bytes
    not already among them (ties by group key)."""
    by_runs = sorted(apps, key=lambda a: (-a.runs, a.key))[:count]
    chosen = {a.key for a in by_runs}
    by_bytes = [a for a in sorted(apps, key=lambda a: (-a.bytes, a.key)) if a.key not in chosen][:count]
    return by_runs + by_bytes


def job_choices(db: sqlite3.Connection, app: Application, count: int) -> list[tuple[str, str, str | None]]:
    """(file, location, start) of the runs to give a page: the representative, then the latest."""
    rows = db.execute(
        "SELECT p.file, l.location, p.start FROM profile_runs p JOIN logs l USING (file) "
        "WHERE p.group_key = ? ORDER BY p.file = ? DESC, p.start DESC, p.file LIMIT ?",
        (app.key, app.representative, count),
    ).fetchall()
    # a name that is not UTF-8 is kept as bytes (the store's rule): back to the str it was
    return [(os.fsdecode(file), os.fsdecode(location), start) for file, location, start in rows]


def runs_over_time(db: sqlite3.Connection, key: str) -> Chart | None:
    """Runs per day of the group's stored runs (None when no run has a start time)."""
    starts = pd.to_datetime(
        [start for (start,) in db.execute("SELECT start FROM profile_runs WHERE group_key = ?", (key,))],
        utc=True,
        errors="coerce",
    )
    days = starts.dropna().tz_localize(None).to_numpy().astype("datetime64[D]")
    if not len(days):
        return None
    first, last = days.min(), days.max()
    counts = np.bincount((days - first).astype(int), minlength=int((last - first).astype(int)) + 1)
    x = (first + np.arange(len(counts))).astype("datetime64[s]").astype(float)
    return {
        "id": "runs",
        "title": "Runs per day",
        "xlabel": "day",
        "ylabel": "runs",
        "unit": "",
        "x": numbers(x),
        "series": [{"label": "runs", "values": numbers(counts), "color": "#0173b2"}],
        "style": "bars",
        "time": True,
    }


def _spread(spread: profiles.Spread | None, show: Any = str) -> str:
    if spread is None:
        return "-"
    return f"{show(spread['median'])} ({show(spread['p10'])} - {show(spread['p90'])}, {spread['runs']} runs)"


def _seconds(value: float) -> str:
    return f"{value:,.4g} s"


def application_page(
    page: Page, app: Application, chart: Chart | None, jobs: list[tuple[str, str | None, str]]
) -> str:
    """The page of one application; ``jobs``: (file, start, link or "" when its log is gone)."""
    profile = app.profile
    page.add(
        "Application",
        facts(
            [
                ("application", app.name),
                ("user id", app.uid),
                ("valid runs", f"{app.runs:,}"),
                ("bytes over its runs", human_bytes(app.bytes)),
                ("heaviest run", app.representative),
            ]
        ),
    )
    if profile is None:
        page.add("Profile", Html('<p class="note">No run of this group is categorized in the store.</p>'))
        return page.render()
    period = (
        f"10^{profile['period_class']} s, {profile['period_direction']}"
        if profile["period_class"] is not None
        else "none (no direction periodic in enough runs)"
    )
    page.add(
        "Profile",
        facts(
            [
                ("categorized runs", f"{profile['runs']:,} ({profile['basis'].replace('_', ' ')})"),
                (
                    "stability",
                    f"{percent(profile['stability'])} of runs carry the usual categories"
                    if profile["runs"] > 1
                    else "unknown: one run, nothing to compare it with",
                ),
                ("usual categories", labels_html(profile["usual_categories"])),
                ("period class", period),
                ("run time", _spread(profile["run_time_seconds"], _seconds)),
                ("metadata peak per second", _spread(profile["metadata_peak_per_second"], "{:,.0f}".format)),
                ("first seen", profile["first_seen"]),
                ("last seen", profile["last_seen"]),
            ]
        )
        + table(
            ["direction", "bytes per run", "periodic in", "period", "busy", "bytes per occurrence"],
            [
                [
                    d,
                    _spread(profile[d]["bytes"], human_bytes),
                    f"{profile[d]['periodic']['runs']:,} runs ({percent(profile[d]['periodic']['share'])})",
                    _spread(profile[d]["periodic"]["period_seconds"], _seconds),
                    _spread(profile[d]["periodic"]["busy_fraction"], percent),
                    _spread(profile[d]["periodic"]["bytes_per_occurrence"], human_bytes),
                ]
                for d in DIRECTIONS
            ],
            "numbers",
        ),
    )
    if chart is not None:
        page.add("Runs over time", page.chart(chart))
    shares = sorted(profile["label_shares"].items(), key=lambda item: (-item[1], item[0]))
    page.add(
        "Label shares",
        table(
            ["label", "share of runs", ""],
            [
                [
                    labels_html([label]),
                    percent(share),
                    Html(f'<span class="bar" style="width:{200 * share:.0f}px"></span>'),
                ]
                for label, share in shares
            ],
        ),
    )
    links = [
        [Html(f'<a href="{esc(link)}">{esc(file)}</a>') if link else file, start or "-"]
        for file, start, link in jobs
    ]
    page.add(
        "Jobs",
        (table(["log", "start"], links) if links else Html(""))
        + Html(
            f'<p class="note">Pages for the heaviest run and the latest ones, {len(links)} of '
            f"{profile['runs']:,} categorized runs.</p>"
        ),
    )
    return page.render()
