"""`mosaic report`'s page on the shared file systems over the year (SPEC 3.10): report/load.html.

Per shared file system, a zoomable chart of its timeline (``timeline_bin_seconds``
bins, thinned to ``report_chart_points``: each point is the peak of its stretch, so a
burst keeps its height), the coverage (what the timeline counts, and what it cannot),
and the heaviest runs of the busiest hours, linked to their job page where the site has
one and named otherwise. The site is the operator's: it names jobs (docs/security.md).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from mosaic.activity import unpack
from mosaic.config import Config
from mosaic.corpus import timeline as tl
from mosaic.html.applications import slug
from mosaic.html.page import ROOT_NAV, Assets, Chart, Html, Page, esc, numbers, table, thinned

BUSIEST_HOURS = 5  # hours shown, the busiest by bytes moved
JOBS_PER_HOUR = 5  # runs shown per hour, the heaviest in it
HOUR = 3600.0


def _human(value: float, unit: str) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


class _StoreView:
    """The few store reads this page needs, on the site's read-only connection."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def _snapshot(self) -> Any:
        return _Borrowed(self.db)


class _Borrowed:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        return self.db

    def __exit__(self, *exc: object) -> None:
        return None


def heaviest_in(
    db: sqlite3.Connection, fs: str, start: float, end: float, count: int
) -> list[dict[str, Any]]:
    """The ``count`` runs that moved the most bytes on ``fs`` within [start, end)."""
    rows = db.execute(
        "SELECT a.run, a.parts, l.file, l.job_id, l.application, l.uid FROM run_activity a "
        "LEFT JOIN logs l ON l.run = a.run AND l.status = 'ok' "
        "WHERE a.start_epoch < ? AND a.end_epoch + 1 >= ? GROUP BY a.run ORDER BY a.run",
        (end, start),
    ).fetchall()
    found = []
    window = (np.array([start]), np.array([end]))
    for run, parts, file, job_id, application, uid in rows:
        activity = unpack(parts if isinstance(parts, bytes) else bytes(parts))
        mine = activity.by_fs.get(fs)
        if mine is None:
            continue
        t0 = activity.start_epoch
        share = tl._inside(*window, mine.start + t0, mine.end + t0)
        moved = float(((mine.read + mine.write) * share).sum())
        if moved > 0:
            found.append(
                {
                    "run": run,
                    "file": file,
                    "job_id": job_id,
                    "application": application,
                    "uid": uid,
                    "bytes": moved,
                }
            )
    found.sort(key=lambda r: (-r["bytes"], r["run"]))
    return found[:count]


def build_load_page(
    site: Path, db: sqlite3.Connection, summary: dict[str, Any], config: Config
) -> Html | None:
    """Write site/load.html; returns the year page's section body (None: no shared file system)."""
    timelines = tl.center_timeline(_StoreView(db), config.timeline_bin_seconds)  # type: ignore[arg-type]
    if not timelines:
        return None
    page = Page("MOSAIC: the shared file systems", Assets(inline=False, prefix="assets/"), ROOT_NAV)
    coverage = summary.get("timeline", {}).get("coverage", {})
    page.add(
        "What the timeline counts",
        Html(
            f'<p class="note">{coverage.get("runs", 0):,} runs with a Darshan log '
            f"({esc(', '.join(f'{n:,} from {s}' for s, n in coverage.get('sources', {}).items()))}); "
            f"{coverage.get('evicted_logs', 0):,} evicted logs, whose bytes are unknown, are not in it; "
            f"{coverage.get('partial_logs', 0):,} partial logs are, as a lower bound "
            f"({esc(_human(float(coverage.get('partial_bytes', 0.0)), 'B'))} counted of them). Jobs without "
            "Darshan are not in it either: every number here is a lower bound. Node-local file systems "
            "(not in <code>shared_file_systems</code>) are left out.</p>"
        ),
    )
    for i, (name, line) in enumerate(timelines.items()):
        starts = line.starts
        rates = [line.read / line.width, line.write / line.width]
        x, (read, write), width = thinned(starts, rates, config.report_chart_points, np.maximum)
        _, (meta,), _ = thinned(starts, [line.meta / line.width], config.report_chart_points, np.maximum)
        note = f"each point the peak of {width} bins" if width > 1 else "every bin"
        chart: Chart = {
            "id": f"load-{i}",
            "title": f"{name}: bytes per second",
            "xlabel": "time (UTC)",
            "ylabel": "bytes/s",
            "unit": "B/s",
            "x": [float(v) for v in x],
            "series": [
                {"label": "read", "values": numbers(read), "color": "#0173b2"},
                {"label": "written", "values": numbers(write), "color": "#de8f05"},
            ],
            "style": "steps",
            "time": True,
        }
        meta_chart: Chart = {
            "id": f"meta-{i}",
            "title": f"{name}: metadata requests per second",
            "xlabel": "time (UTC)",
            "ylabel": "requests/s",
            "unit": "",
            "x": [float(v) for v in x],
            "series": [{"label": "metadata", "values": numbers(meta), "color": "#029e73"}],
            "style": "steps",
            "time": True,
            "asinhy": True,
        }
        hour_of_bin = np.floor(starts / HOUR).astype(np.int64)  # bins never straddle an hour (60 s)
        hourly = np.bincount(hour_of_bin - hour_of_bin[0], line.read + line.write)
        hour0 = float(hour_of_bin[0]) * HOUR
        busiest = [h for h in np.argsort(-hourly, kind="stable")[:BUSIEST_HOURS].tolist() if hourly[h] > 0]
        rows = []
        for h in busiest:
            begin = hour0 + h * HOUR
            label = np.datetime_as_string(np.datetime64(int(begin), "s"), unit="m") + " UTC"
            for run in heaviest_in(db, name, begin, begin + HOUR, JOBS_PER_HOUR):
                file = _text(run["file"])
                job_id, application = _text(run["job_id"]) or "?", _text(run["application"]) or "?"
                who = f"job {job_id} ({application}, uid {run['uid']})"
                page_file = site / "jobs" / slug(file) if file else None
                cell = (
                    Html(f'<a href="jobs/{esc(slug(file))}">{esc(who)}</a>')
                    if page_file is not None and page_file.is_file()
                    else who
                )
                rows.append([label, cell, _human(run["bytes"], "B"), f"{run['bytes'] / hourly[h]:.0%}"])
        page.add(
            f"{name}",
            Html(
                f'<p class="note">{esc(_human(float(line.read.sum()), "B"))} read, '
                f"{esc(_human(float(line.write.sum()), 'B'))} written, {line.meta.sum():,.0f} metadata "
                f"requests over {len(line.read):,} bins of {line.width:g} s; at most "
                f"{int(line.jobs.max()):,} runs doing I/O in one bin. Charts: {esc(note)}; drag across "
                "one to zoom in, double-click to zoom out.</p>"
            )
            + page.chart(chart)
            + page.chart(meta_chart)
            + Html(f"<h3>The heaviest runs of the {len(busiest)} busiest hours</h3>")
            + table(["hour", "run", "bytes in the hour", "share of the hour"], rows, "numbers"),
        )
    (site / "load.html").write_text(page.render(), encoding="utf-8")
    return Html(
        '<p><a href="load.html">The shared file systems over the year</a>: a zoomable timeline per file '
        "system, its coverage, and the heaviest runs of its busiest hours.</p>"
    )


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def job_load_section(db: sqlite3.Connection, file: str) -> str:
    """The "Concurrent load" section of a job page of the site (the operator's: other jobs
    named), from the store's ``run_load`` and ``run_overlaps``; "" when the store has none."""
    from mosaic.corpus.store import _params as store_params
    from mosaic.service.visibility import sentence, shown_other

    loads = db.execute(
        "SELECT r.run, r.fs, r.read_rate, r.write_rate, r.meta_rate, r.other_jobs, r.io_seconds "
        "FROM logs l JOIN run_load r ON r.run = l.run WHERE l.file = ? ORDER BY r.fs",
        store_params((file,)),  # a name that is not UTF-8 is stored as its bytes
    ).fetchall()
    items = []
    for run, fs, rr, wr, mr, others, seconds in loads:
        rows = db.execute(
            "SELECT o.other, o.bytes, o.share, (SELECT job_id FROM logs WHERE run = o.other LIMIT 1), "
            "(SELECT group_key FROM logs WHERE run = o.other LIMIT 1) FROM run_overlaps o "
            "WHERE o.run = ? AND o.fs = ? ORDER BY o.bytes DESC, o.other",
            (run, fs),
        ).fetchall()
        shown = [
            shown_other({"job_id": j, "group_key": g, "bytes": b, "share": sh}, operator=True, uid=None)
            for _, b, sh, j, g in rows
        ]
        load = tl.load_fields((fs, rr, wr, mr, others, seconds))
        items.append(f"<li>{esc(sentence(load, shown))}</li>")
    if not items:
        return ""
    return (
        '<section id="load"><h2>Concurrent load</h2><p class="note">The other runs of the store on '
        "each file system this run used, during its I/O (docs/method.md, section 3.10); a lower "
        f"bound: runs without a log are not in it.</p><ul>{''.join(items)}</ul></section>"
    )
