"""`mosaic report OUT`: a year as a small static site in OUT/report/.

    report/method.html         docs/method.md, which every reason's "SPEC 3.x" links to
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
from PIL import Image

from mosaic.analysis.labels import ALL_LABELS
from mosaic.config import Config
from mosaic.corpus import perfstore
from mosaic.corpus.stats import VIEWS
from mosaic.html import applications as apps_module
from mosaic.html.applications import Application, slug
from mosaic.html.distributions import plot_distributions, stored_numbers
from mosaic.html.job import job_page
from mosaic.html.load_page import job_load_section
from mosaic.html.method import method_html
from mosaic.html.page import (
    ROOT_NAV,
    SITE_ASSETS,
    Assets,
    Html,
    Page,
    asset_text,
    esc,
    human_bytes,
    labels_html,
    percent,
    table,
)
from mosaic.limits import limit_memory
from mosaic.logfile import log_present
from mosaic.report import tables
from mosaic.report.figures import FIGURES, render_figures
from mosaic.report.summary import load_summary
from mosaic.report.tables import VIEW_NAMES
from mosaic.report.text import display_name
from mosaic.signature import signature_of

SUB_NAV = tuple((f"../{href}", text) for href, text in ROOT_NAV)


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
    progress = Silent() if progress is None else progress  # a tqdm bar of total 0 is falsy
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
    _year_sections(index, summary, drawn, site / "figures")
    if store_path.is_file():
        db = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
        try:
            _store_sections(index, db, site, config, counts, progress)
            _load_section(index, db, site, summary, drawn, config)
        finally:
            db.close()
    else:
        index.add(
            "Applications", Html(f'<p class="note">{esc(store_path)} not found: no application pages.</p>')
        )
    _paper_tables(index, summary, config)
    (site / "index.html").write_text(index.render(), encoding="utf-8")
    method = Page("MOSAIC: the method", Assets(inline=False, prefix="assets/"), ROOT_NAV)
    method.add("docs/method.md, as installed with mosaic", Html(f'<div class="method">{method_html()}</div>'))
    (site / "method.html").write_text(method.render(), encoding="utf-8")
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


FIGURE_PAGE_DPI = 100  # a figure's pixels per inch of matplotlib's on the page (CSS px)


def _figure(folder: Path, name: str, caption: str) -> Html:
    """A figure that opens full size when clicked (a phone shows it shrunk). Its width on the
    page is its width in inches at FIGURE_PAGE_DPI, so every figure's text has one size: shown at
    its pixel width, the metadata figure (half as wide as the others) had text twice as big."""
    path, width = folder / f"{name}.png", ""
    if path.is_file():
        with Image.open(path) as image:
            pixels = image.width * FIGURE_PAGE_DPI / image.info.get("dpi", (FIGURE_PAGE_DPI,))[0]
            width = f' width="{pixels:.0f}"'
    return Html(
        f'<figure><a href="figures/{esc(name)}.png"><img src="figures/{esc(name)}.png"{width} '
        f'alt="{esc(caption)}"></a><figcaption>{esc(caption)}</figcaption></figure>'
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


def _year_sections(page: Page, summary: dict[str, Any], drawn: dict[str, Any], figures: Path) -> None:
    funnel = summary["funnel"]
    traces = {view: summary["distributions"][view]["traces"] for view in VIEWS}
    funnel_rows = tables.funnel_table(summary)
    page.add(
        "Pre-processing funnel",
        Html(
            f'<p class="note">{esc(tables.files_note(funnel))} '
            f"Shares below are of representatives (single run: {traces['single_run']:,.0f}) or of runs "
            f"(all runs: {traces['all_runs']:,.0f}); labels are not exclusive. mosaic "
            f"{esc(summary.get('mosaic_version', '?'))}, configuration "
            f"{esc(summary.get('config_hash', '?'))}.</p>"
        )
        + _figure(figures, "funnel", "Pre-processing funnel: logs kept and evicted at each step")
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
        page.add(title, _figure(figures, name, title) + _shares_html(frame), name)
    cooccurrence = "".join(
        _figure(figures, f"{kind}_{view}", f"{label}, {VIEW_NAMES[view]}")
        for view in VIEWS
        for kind, label in (("jaccard", "Jaccard index of label pairs"), ("conditional", "P(B | A)"))
    )
    page.add(
        "Co-occurrence of labels (paper Fig. 5)",
        Html(f'<div class="grid">{cooccurrence}</div>'),
        "cooccurrence",
    )
    from mosaic.interference.page import year_section  # SPEC 3.11

    if drawn.get("conflicts") is not None and (said := year_section(summary)) is not None:
        page.add(
            "Who slows whom: the categories that conflict",
            _figure(figures, "conflicts", "Added slowdown per 100 MB/s, victim label x aggressor label")
            + said,
            "conflicts",
        )
    if drawn.get("stability") is not None:
        page.add(
            "Per-application stability",
            _figure(figures, "stability", "Share of runs categorized like the representative"),
        )


def _load_section(
    page: Page,
    db: sqlite3.Connection,
    site: Path,
    summary: dict[str, Any],
    drawn: dict[str, Any],
    config: Config,
) -> None:
    """SPEC 3.10: report/load.html and the year page's section linking it, with the load figures."""
    from mosaic.html.load_page import build_load_page

    body = build_load_page(site, db, summary, config)
    if body is None:
        return
    for name, caption in (
        ("load", "Load per day and per hour of each shared file system"),
        ("load_week", "Mean load by hour of the week"),
    ):
        if drawn.get(name) is not None:
            body = Html(body + _figure(site / "figures", name, caption))
    page.add("File-system load", body, "load")


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
        + _figure(site / "figures", "periods", "Periods of periodic runs, by direction")
        + _figure(site / "figures", "busy", "Share of each period spent in I/O, by direction"),
        "distributions",
    )
    every = list(apps_module.applications(db, config))
    counts.applications = len(every)
    top = apps_module.top_applications(every, config.report_top_applications)
    pages = {app.key: f"apps/{slug(app.key)}" for app in top}
    more_work(progress, len(top) + 1)  # and the table's page
    jobs = _job_pages(db, top, site, config, counts, progress)
    for app in top:
        # its own name: ``page`` is the year's, which gets the Applications section below (the
        # loop used to take that name, and the section went to the last application's page)
        app_page = Page(f"{app.name} (uid {app.uid})", Assets(inline=False, prefix="../assets/"), SUB_NAV)
        chart = apps_module.runs_over_time(db, app.key)
        from mosaic.interference.page import load_chart  # SPEC 3.11

        performance = perfstore.history_or_none(db, app.key)  # SPEC 3.9
        shape = signature_of(db, app.key, config.signature_min_runs)  # SPEC 3.12
        text = apps_module.application_page(
            app_page, app, chart, jobs[app.key], config, performance, load_chart(db, app.key), shape
        )
        (site / pages[app.key]).write_text(text, encoding="utf-8")
        counts.application_pages += 1
        progress.update()
    rows = apps_module.table_rows(every, pages, config)
    for name, text in apps_module.table_files(rows, len(top), config.report_table_rows_per_file).items():
        (site / "data" / name).write_text(text, encoding="utf-8")
    table_page = Page("MOSAIC: applications", Assets(inline=False, prefix="assets/"), ROOT_NAV)
    table_page.data_scripts = ["data/applications.js"]
    table_page.scripts = ["table.js"]
    table_page.add(
        f"{len(every):,} applications",
        Html(
            '<p class="note">Every (user, application) group of the store; bytes are over all its '
            "valid runs. Click a column to sort; filter by name, label (runs carrying it, at least "
            f'the share given) or runs. The {len(top)} names marked <span class="has-page">page</span> '
            f"link to their page: the {config.report_top_applications} with the most runs and as many "
            "with the most bytes.</p>"
            '<div class="toolbar"><label>name <input id="filter-name" type="search"></label>'
            '<label>label <select id="filter-label"><option value="">any</option></select></label>'
            '<label>in at least <input id="filter-share" type="number" min="0" max="100" value="50" '
            'step="5" style="width:5em"> % of runs</label>'
            '<label>runs at least <input id="filter-runs" type="number" min="0" value="0" '
            'style="width:6em"></label><span id="shown"></span></div>'
            '<div class="scroll"><table id="apps"><thead></thead><tbody></tbody></table></div>'
            '<p><button id="more" type="button" hidden>load more rows</button></p>'
        ),
    )
    (site / "applications.html").write_text(table_page.render(), encoding="utf-8")
    progress.update()
    page.add(
        "Applications",
        Html(
            f'<p><a href="applications.html">All {len(every):,} applications</a>, sorted and filtered in '
            f"the browser. The top ones, each linked to its page (runs and bytes over its valid "
            "runs):</p>"
        )
        + _top_tables(every, pages, config.report_top_applications),
        "applications",
        at=0,  # first: the year's way to its applications
    )


def _linked(app: Application, pages: dict[str, str]) -> Html:
    link = pages.get(app.key)
    return Html(f'<a href="{esc(link)}">{esc(app.name)}</a>') if link else esc(app.name)


def _top_tables(every: list[Application], pages: dict[str, str], count: int) -> Html:
    """The year's way to its applications: the top by runs, by bytes, and per label the
    application whose runs carry it most often."""
    headers = ["application", "user id", "runs", "bytes"]

    def rows(chosen: list[Application]) -> list[list[object]]:
        return [[_linked(a, pages), a.uid, f"{a.runs:,}", human_bytes(a.bytes)] for a in chosen]

    by_runs = sorted(every, key=lambda a: (-a.runs, a.key))[:count]
    by_bytes = sorted(every, key=lambda a: (-a.bytes, a.key))[:count]
    carriers: dict[str, tuple[float, int, Application]] = {}
    for app in every:  # by group key: a tie in runs carrying it and valid runs goes to the first
        for label, share in (app.profile["label_shares"] if app.profile else {}).items():
            carried = share * (app.profile["runs"] if app.profile else 0)
            if (carried, app.runs) > carriers.get(label, (0.0, 0, app))[:2]:
                carriers[label] = (carried, app.runs, app)
    by_label = [
        [labels_html([label]), _linked(app, pages), f"{carried:,.0f}", f"{runs:,}", app.uid]
        for label in ALL_LABELS
        if label in carriers
        for carried, runs, app in [carriers[label]]
    ]
    one_each = all(app.profile["runs"] == 1 for app in every if app.profile)  # a run without --all-runs
    return Html(
        '<div class="grid">'
        f"<div><h3>By runs</h3>{table(headers, rows(by_runs), 'numbers')}</div>"
        f"<div><h3>By bytes</h3>{table(headers, rows(by_bytes), 'numbers')}</div></div>"
        "<h3>By label: the application with the most categorized runs carrying it</h3>"
        '<p class="note">A tie goes to the application with the most valid runs.'
        + (
            " One run of each application is categorized, its heaviest (<code>mosaic run --all-runs</code>"
            " categorizes every run), so every count here is 1.</p>"
            if one_each
            else "</p>"
        )
        + table(["label", "application", "runs carrying it", "valid runs", "user id"], by_label)
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
    # each job page links to the year, the table and its application's page
    navs = {
        location: (*SUB_NAV, (f"../apps/{slug(app.key)}", app.name))
        for app in top
        for _, location, _ in chosen[app.key]
        if location in todo
    }
    assets = Assets(inline=False, prefix="../assets/")
    more_work(progress, len(todo))
    with ProcessPoolExecutor(
        max_workers=min(os.cpu_count() or 1, max(len(todo), 1)),
        initializer=limit_memory,
        initargs=(config.worker_memory_bytes,),
    ) as pool:
        shapes = {
            location: signature_of(db, app.key, config.signature_min_runs)
            for app in top
            for _, location, _ in chosen[app.key]
            if location in todo
        }
        pages = pool.map(
            _job_page,
            todo,
            repeat(config),
            repeat(assets),
            [navs[x] for x in todo],
            [shapes[x] for x in todo],
        )
        files = {location: file for runs in chosen.values() for file, location, _ in runs}
        for (location, name), (text, evicted) in zip(todo.items(), pages, strict=True):
            section = job_load_section(db, files[location])  # SPEC 3.10, from the store
            if section:
                text = text.replace("</main>", section + "</main>", 1)
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


def _job_page(
    location: str,
    config: Config,
    assets: Assets,
    nav: tuple[tuple[str, str], ...],
    signature: dict[str, Any] | None = None,
) -> tuple[str, bool]:
    """One job page in a pool worker: its text, and whether the log was evicted."""
    text, evicted = job_page(location, config, assets, nav, method="../method.html", signature=signature)
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
