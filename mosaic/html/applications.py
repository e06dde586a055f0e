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
from mosaic.html import signature_view
from mosaic.html.page import Chart, Html, Page, esc, facts, human_bytes, labels_html, numbers, percent, table
from mosaic.periods import duration, median_period, period_text
from mosaic.report.text import counted, readable

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
DAY = 86400.0
# The valid logs of the store's last batch run (`seen` is the run that last found a log).
VALID = "status = 'ok' AND seen = (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'run')"


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
        db.execute(f"SELECT group_key, sum(total_bytes) FROM logs WHERE {VALID} GROUP BY group_key")
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
            profiles.profile(
                db, key, int(runs), config.profile_min_periodic_share, config.profile_window_runs
            ),
        )


COLUMNS = (
    "application",
    "uid",
    "runs",
    "bytes",
    "stability",
    "period_seconds",
    "period",
    "labels",
    "page",
)


def table_rows(apps: list[Application], pages: dict[str, str], config: Config) -> list[list[Any]]:
    """One list per group (COLUMNS), most runs first: the order the first data file holds.

    Label shares go as flat [label index, percent, ...] pairs of the labels a
    group carries: a row of a 25,000-group year stays ~150 bytes.
    """
    index = {label: i for i, label in enumerate(ALL_LABELS)}
    rows = []
    for app in sorted(apps, key=lambda a: (-a.runs, a.key)):
        profile = app.profile
        shares: list[int] = []
        period = None
        if profile is not None:
            for label, share in profile["label_shares"].items():
                shares += [index[label], round(100 * share)]
            period = median_period(profile)
        direction = None if profile is None else profile["period_direction"]
        rows.append(
            [
                readable(app.name),
                app.uid,
                app.runs,
                app.bytes,
                # one run is alike with itself: its stability says nothing, shown as "-"
                None if profile is None or profile["runs"] < 2 else round(profile["stability"], 3),
                period,
                None if period is None else period_text(period, direction, config),
                shares,
                pages.get(app.key, ""),
            ]
        )
    return rows


def table_files(rows: list[list[Any]], pages: int, per_file: int) -> dict[str, str]:
    """The table's data as script files (name -> text), ``per_file`` rows each.

    ``applications.js`` assigns the object (columns, label vocabulary, total,
    the other files' names and its rows) to ``window.MOSAIC_APPLICATIONS``;
    each further file appends its rows there. A page opened as a file loads
    them with ``<script src>`` (a browser refuses ``fetch`` there), the first
    at once and the next on demand: a year of 250,000 groups does not send
    40 MB before the first row shows.
    """
    chunks = [rows[i : i + per_file] for i in range(0, len(rows), per_file)] or [[]]
    names = ["applications.js", *(f"applications-{n}.js" for n in range(2, len(chunks) + 1))]
    head = {
        "columns": list(COLUMNS),
        "labels": list(ALL_LABELS),
        "total": len(rows),
        "pages": pages,
        "files": names[1:],
        "rows": chunks[0],
    }
    files = {names[0]: f"window.MOSAIC_APPLICATIONS = {_json(head)};\n"}
    for name, chunk in zip(names[1:], chunks[1:], strict=True):
        files[name] = f"window.MOSAIC_APPLICATIONS.more({_json(chunk)});\n"
    return files


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/")


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
    """Runs per day of every valid run of the group in the last batch run (categorized or
    not: a default run categorizes one), over the days they span (None without a start)."""
    starts = pd.to_datetime(
        [start for (start,) in db.execute(f"SELECT start FROM logs WHERE group_key = ? AND {VALID}", (key,))],
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
        "title": f"Runs per day: {len(days):,} valid runs with a start time",
        "xlabel": "day",
        "ylabel": "runs",
        "unit": "",
        "x": x.tolist(),  # whole days in Unix seconds: 5 significant digits would move them by hours
        "xrange": [float(x[0]) - DAY, float(x[-1]) + 2 * DAY],  # a lone day still shows as a bar
        "series": [{"label": "runs", "values": numbers(counts), "color": "#0173b2"}],
        "style": "bars",
        "time": True,
    }


def _spread(spread: profiles.Spread | None, show: Any = str) -> str:
    if spread is None:
        return "-"
    runs = counted(spread["runs"], "run")
    return f"{show(spread['median'])} ({show(spread['p10'])} - {show(spread['p90'])}, {runs})"


def basis_note(app: Application, profile: profiles.ApplicationProfile) -> Html:
    """How many runs the profile figures stand on: one of 120 looks like all 120 otherwise."""
    more = (
        "; <code>mosaic run --all-runs</code> categorizes every run"
        if profile["basis"] == "representative" and app.runs > profile["runs"]
        else ""
    )
    return Html(
        f'<p class="note basis">Built from {profile["runs"]:,} of {app.runs:,} valid runs '
        f"categorized ({esc(profile['basis'].replace('_', ' '))}){more}.</p>"
    )


def _performance(history: dict[str, Any]) -> Html:
    """SPEC 3.9: p10 / p50 / p90 of each metric over the application's stored runs."""
    from mosaic.perfwords import history_rows

    rows = history_rows(history, short=True)
    note = (
        f'<p class="note">Over the {history["complete_runs"]:,} of its {history["runs"]:,} valid runs with '
        "a whole log (partial logs give lower bounds, left out); bandwidth per direction over the "
        "slowest rank's time; metadata rate: metadata requests per second of I/O time (SPEC 3.9).</p>"
    )
    if not rows:
        return Html(note + "<p>No figure is known: no run timed its I/O.</p>")
    return Html(note + table(["metric", "runs", "p10", "p50", "p90"], rows, "numbers"))


def application_page(
    page: Page,
    app: Application,
    chart: Chart | None,
    jobs: list[tuple[str, str | None, str]],
    config: Config,
    performance: dict[str, Any] | None = None,
    contention: tuple[Chart | None, Html] | None = None,
    signature: dict[str, Any] | None = None,
) -> str:
    """The page of one application; ``jobs``: (file, start, link or "" when its log is gone);
    ``performance``: its runs' history (SPEC 3.9, corpus/perfstore.history); ``contention``: its
    scatter of slowdown against load and facts (SPEC 3.11), if analysed; ``signature``: what
    :func:`mosaic.signature.answer` says of it (SPEC 3.12)."""
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
    if performance is not None:
        page.add("Performance", _performance(performance), "performance")
    if profile is None:
        page.add("Profile", Html('<p class="note">No run of this group is categorized in the store.</p>'))
        return page.render()
    period = (
        period_text(median_period(profile), profile["period_direction"], config)
        if profile["period_direction"] is not None
        else "none (no direction periodic in enough runs)"
    )
    basis = basis_note(app, profile)
    page.add(
        "Profile",
        basis
        + facts(
            [
                ("categorized runs", f"{profile['runs']:,} ({profile['basis'].replace('_', ' ')})"),
                (
                    "stability",
                    f"{percent(profile['stability'])} of runs carry the usual categories"
                    if profile["runs"] > 1
                    else "unknown: one run, nothing to compare it with",
                ),
                ("usual categories", labels_html(profile["usual_categories"])),
                ("period", period),
                ("run time", _spread(profile["run_time_seconds"], duration)),
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
                    f"{counted(profile[d]['periodic']['runs'], 'run')} "
                    f"({percent(profile[d]['periodic']['share'])})",
                    _spread(profile[d]["periodic"]["period_seconds"], duration),
                    _spread(profile[d]["periodic"]["busy_fraction"], percent),
                    _spread(profile[d]["periodic"]["bytes_per_occurrence"], human_bytes),
                ]
                for d in DIRECTIONS
            ],
            "numbers",
        ),
    )
    if chart is not None:
        page.add(
            "Runs over time",
            page.chart(chart) + Html('<p class="note">Every valid run, categorized or not.</p>'),
        )
    if contention is not None:
        scatter, said = contention
        page.add("File-system load", said + (page.chart(scatter) if scatter is not None else Html("")))
    if signature is not None:
        page.add("I/O signature", signature_view.section(page, signature["body"], signature["reason"]))
    shares = sorted(profile["label_shares"].items(), key=lambda item: (-item[1], item[0]))
    page.add(
        "Label shares",
        basis
        + table(
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
