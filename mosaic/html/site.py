"""`mosaic report OUT`: a year as a small static site in OUT/report/.

    report/index.html          funnel, label shares, co-occurrence, period and busy-time
                               distributions, stability, the paper's tables
    report/applications.html   every group, sorted and filtered in the browser
    report/data/applications.js  the table's data, loaded once
    report/apps/*.html         the top report_top_applications by runs and by bytes
    report/jobs/*.html         report_jobs_per_application job pages of each
    report/figures/*.png       the corpus figures (`mosaic figures`) and the distributions
    report/assets/             stylesheet, scripts, uPlot and its licence

Sizes are bounded whatever the year: the pages of applications and jobs by
the config, the table's data at ~150 bytes a group. The site is built in
OUT/report.tmp and then put in place of the previous one, so a reader never
sees half of it. Only the job pages read logs again, from the locations
the store recorded (the run's inputs): a log moved since gets a line saying
so instead of a link.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from mosaic.config import Config
from mosaic.corpus.stats import VIEWS
from mosaic.html import applications as apps_module
from mosaic.html.applications import Application, slug
from mosaic.html.distributions import plot_distributions, stored_numbers
from mosaic.html.job import job_page
from mosaic.html.page import SITE_ASSETS, Assets, Html, Page, asset_text, esc, human_bytes, percent, table
from mosaic.limits import limit_memory
from mosaic.logfile import log_present
from mosaic.report import tables
from mosaic.report.figures import FIGURES, render_figures
from mosaic.report.summary import load_summary
from mosaic.report.tables import VIEW_NAMES, display_name

ROOT_NAV = (("index.html", "Year"), ("applications.html", "Applications"))
SUB_NAV = (("../index.html", "Year"), ("../applications.html", "Applications"))


@dataclass
class SiteCounts:
    """What a build wrote, for the command's line and the benchmark."""

    applications: int
    application_pages: int
    job_pages: int
    evicted_job_pages: int
    bytes: int
    files: int
    pages: int = 0  # HTML files


class Progress(Protocol):
    """What a build reports its work to (a tqdm bar): the steps known so far, each one done."""

    total: float | None

    def update(self, n: float | None = 1) -> bool | None: ...


class Silent:
    """No progress shown."""

    total: float | None = 0

    def update(self, n: float | None = 1) -> bool | None:
        return None


def more_work(progress: Progress, steps: int) -> None:
    """``steps`` more steps known (a build learns the pages' count from the store)."""
    progress.total = (progress.total or 0) + steps


def build_site(out: Path, config: Config, progress: Progress | None = None) -> SiteCounts:
    """Build OUT/report/ from OUT/summary.json, OUT/figures and OUT/store.sqlite; one step of
    ``progress`` per figure and per page."""
    progress = progress or Silent()
    summary = load_summary(out)
    site = out / "report.tmp"
    shutil.rmtree(site, ignore_errors=True)
    for folder in ("assets", "figures", "data", "apps", "jobs"):
        (site / folder).mkdir(parents=True)
    for name in SITE_ASSETS:
        (site / "assets" / name).write_text(asset_text(name), encoding="utf-8")
    more_work(progress, len(FIGURES) + 1)  # the figures and the year's page
    drawn = render_figures(out, config, summary, on_drawn=lambda _: progress.update())
    for name, data in drawn.items():
        if data is not None:
            shutil.copyfile(out / "figures" / f"{name}.png", site / "figures" / f"{name}.png")
    store_path = out / "store.sqlite"
    counts = SiteCounts(0, 0, 0, 0, 0, 0)
    index = Page("MOSAIC: the year", Assets(inline=False, prefix="assets/"), ROOT_NAV)
    _year_sections(index, summary, drawn)
    if store_path.is_file():
        db = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
        try:
            _store_sections(index, db, site, config, counts, progress)
        finally:
            db.close()
    else:
        index.add(
            "Applications", Html(f'<p class="note">{esc(store_path)} not found: no application pages.</p>')
        )
    _paper_tables(index, summary, config)
    (site / "index.html").write_text(index.render(), encoding="utf-8")
    progress.update()
    final = out / "report"
    shutil.rmtree(final, ignore_errors=True)
    os.replace(site, final)
    for path in final.rglob("*"):
        if path.is_file():
            counts.files += 1
            counts.pages += path.suffix == ".html"
            counts.bytes += path.stat().st_size
    return counts


def _figure(name: str, caption: str) -> Html:
    return Html(
        f'<figure><img src="figures/{esc(name)}.png" alt="{esc(caption)}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def _shares_html(frame: pd.DataFrame) -> Html:
    """One row per (group, category), one column per view (as report.md)."""
    wide = frame.pivot_table(
        index=["group", "category"], columns="view", values="share", sort=False
    ).reset_index()
    views = list(VIEW_NAMES.values())
    return table(
        ["group", "category", *views],
        [[row["group"], row["category"], *(percent(row[v]) for v in views)] for _, row in wide.iterrows()],
        "numbers",
    )


def _year_sections(page: Page, summary: dict[str, Any], drawn: dict[str, Any]) -> None:
    funnel = summary["funnel"]
    traces = {view: summary["distributions"][view]["traces"] for view in VIEWS}
    funnel_rows = tables.funnel_table(summary)
    page.add(
        "Pre-processing funnel",
        Html(
            f'<p class="note">{funnel.get("files_seen", funnel["logs"]):,} files seen, '
            f"{tables.non_log_files(funnel):,} not logs, "
            f"{tables.counted(funnel.get('partial', 0), 'partial log')} kept. "
            f"Shares below are of representatives (single run: {traces['single_run']:,.0f}) or of runs "
            f"(all runs: {traces['all_runs']:,.0f}); labels are not exclusive. mosaic "
            f"{esc(summary.get('mosaic_version', '?'))}, configuration "
            f"{esc(summary.get('config_hash', '?'))}.</p>"
        )
        + _figure("funnel", "Pre-processing funnel: logs kept and evicted at each step")
        + table(
            ["stage", "logs", "share"],
            [
                [stage, f"{logs:,}", percent(share)]
                for stage, logs, share in zip(funnel_rows["stage"], funnel_rows["logs"], funnel_rows["share"])
            ],
            "numbers",
        ),
        "funnel",
    )
    for name, title, frame in (
        ("periodicity", "Periodicity (paper Table II)", tables.periodicity_table(summary)),
        ("temporality", "Temporality (paper Table III)", tables.temporality_table(summary)),
        ("metadata", "Metadata load (paper Fig. 4)", tables.metadata_table(summary)),
    ):
        page.add(title, _figure(name, title) + _shares_html(frame), name)
    cooccurrence = "".join(
        _figure(f"{kind}_{view}", f"{label}, {VIEW_NAMES[view]}")
        for view in VIEWS
        for kind, label in (("jaccard", "Jaccard index of label pairs"), ("conditional", "P(B | A)"))
    )
    page.add(
        "Co-occurrence of labels (paper Fig. 5)",
        Html(f'<div class="grid">{cooccurrence}</div>'),
        "cooccurrence",
    )
    if drawn.get("stability") is not None:
        page.add(
            "Per-application stability",
            _figure("stability", "Share of runs categorized like the representative"),
        )


def _store_sections(
    page: Page,
    db: sqlite3.Connection,
    site: Path,
    config: Config,
    counts: SiteCounts,
    progress: Progress,
) -> None:
    values = stored_numbers(db)
    plot_distributions(values, config, site / "figures")
    page.add(
        "Periods and busy time of periodic runs",
        Html(
            f'<p class="note">The verdict\'s period and busy fraction of each periodic direction, over the '
            f"{len(values):,} categorized runs in the store; dashed: the thresholds between labels.</p>"
        )
        + _figure("periods", "Periods of periodic runs, by direction")
        + _figure("busy", "Share of each period spent in I/O, by direction"),
        "distributions",
    )
    every = list(apps_module.applications(db, config))
    counts.applications = len(every)
    top = apps_module.top_applications(every, config.report_top_applications)
    pages = {app.key: f"apps/{slug(app.key)}" for app in top}
    more_work(progress, len(top) + 1)  # and the table's page
    jobs = _job_pages(db, top, site, config, counts, progress)
    for app in top:
        page = Page(f"{app.name} (uid {app.uid})", Assets(inline=False, prefix="../assets/"), SUB_NAV)
        text = apps_module.application_page(page, app, apps_module.runs_over_time(db, app.key), jobs[app.key])
        (site / pages[app.key]).write_text(text, encoding="utf-8")
        counts.application_pages += 1
        progress.update()
    (site / "data" / "applications.js").write_text(
        apps_module.table_script(apps_module.table_data(every, pages)), encoding="utf-8"
    )
    table_page = Page("MOSAIC: applications", Assets(inline=False, prefix="assets/"), ROOT_NAV)
    table_page.data_scripts = ["data/applications.js"]
    table_page.scripts = ["table.js"]
    table_page.add(
        f"{len(every):,} applications",
        Html(
            '<p class="note">Every (user, application) group of the store. Click a column to sort; '
            "filter by name, label (runs carrying it, at least the share given) or runs. Linked "
            "names have a page.</p>"
            '<div class="toolbar"><label>name <input id="filter-name" type="search"></label>'
            '<label>label <select id="filter-label"><option value="">any</option></select></label>'
            '<label>in at least <input id="filter-share" type="number" min="0" max="100" value="50" '
            'step="5" style="width:5em"> % of runs</label>'
            '<label>runs at least <input id="filter-runs" type="number" min="0" value="0" '
            'style="width:6em"></label><span id="shown"></span></div>'
            '<table id="apps"><thead></thead><tbody></tbody></table>'
        ),
    )
    (site / "applications.html").write_text(table_page.render(), encoding="utf-8")
    progress.update()
    page.add(
        "Applications",
        Html(
            f'<p><a href="applications.html">All {len(every):,} applications</a>, sortable and filtered in '
            f"the browser. Pages for the {len(top)} with the most runs and bytes:</p>"
        )
        + table(
            ["application", "user id", "runs", "bytes"],
            [
                [
                    Html(f'<a href="{esc(pages[a.key])}">{esc(a.name)}</a>'),
                    a.uid,
                    f"{a.runs:,}",
                    human_bytes(a.bytes),
                ]
                for a in top
            ],
            "numbers",
        ),
        "applications",
    )


def _job_pages(
    db: sqlite3.Connection,
    top: list[Application],
    site: Path,
    config: Config,
    counts: SiteCounts,
    progress: Progress,
) -> dict[str, list[tuple[str, str | None, str]]]:
    """The job pages of the top applications, written by a process per core (a page costs ~1.5 s,
    most of it the timeline); per application, its jobs as (file, start, link or "")."""
    chosen = {app.key: apps_module.job_choices(db, app, config.report_jobs_per_application) for app in top}
    todo = {
        location: slug(file)
        for runs in chosen.values()
        for file, location, _ in runs
        if log_present(location)
    }
    assets = Assets(inline=False, prefix="../assets/")
    more_work(progress, len(todo))
    with ProcessPoolExecutor(
        max_workers=min(os.cpu_count() or 1, max(len(todo), 1)),
        initializer=limit_memory,
        initargs=(config.worker_memory_bytes,),
    ) as pool:
        pages = pool.map(_job_page, todo, repeat(config), repeat(assets))
        for name, (text, evicted) in zip(todo.values(), pages, strict=True):
            (site / "jobs" / name).write_text(text, encoding="utf-8")
            counts.job_pages += 1
            counts.evicted_job_pages += evicted
            progress.update()
    return {
        key: [
            (file, start, f"../jobs/{todo[location]}")
            if location in todo
            else (f"{file} (log no longer at {location})", start, "")
            for file, location, start in runs
        ]
        for key, runs in chosen.items()
    }


def _job_page(location: str, config: Config, assets: Assets) -> tuple[str, bool]:
    """One job page in a pool worker: its text, and whether the log was evicted."""
    text, evicted = job_page(location, config, assets, SUB_NAV)
    return text, evicted is not None


def _paper_tables(page: Page, summary: dict[str, Any], config: Config) -> None:
    """Fig. 5 as text: the label pairs above the display threshold, per view."""
    parts = []
    for view in VIEWS:
        pairs = tables.jaccard_pairs(summary, view, config.heatmap_display_min)
        parts.append(
            f"<h3>{esc(VIEW_NAMES[view])}</h3>"
            + table(
                ["A", "B", "Jaccard"],
                [
                    [display_name(a), display_name(b), percent(value)]
                    for a, b, value in zip(pairs["A"], pairs["B"], pairs["jaccard"])
                ],
                "numbers",
            )
        )
    page.add(
        f"Label pairs with a Jaccard index above {percent(config.heatmap_display_min)}",
        Html("".join(parts)),
        "pairs",
    )
