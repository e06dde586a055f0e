"""`mosaic report` and `mosaic explain` without a browser: what the files hold."""

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from mosaic.corpus import profiles
from mosaic.html.applications import slug
from mosaic.html.site import build_site
from mosaic.periods import median_period
from mosaic.report.figures import FIGURES

from .conftest import SITE_CONFIG

DATA = Path(__file__).parents[1] / "data"
EMPTY_LOG = DATA / "darshan-logs" / "empty_log" / "empty_log.darshan"
RUNTIME_LOG = DATA / "darshan-logs-runtime" / "darshan-main" / "pub_two_series.darshan"


def table_data(report: Path) -> dict:
    """The table's data object with the rows of every data file."""
    text = (report / "data" / "applications.js").read_text()
    prefix = "window.MOSAIC_APPLICATIONS = "
    assert text.startswith(prefix) and text.endswith(";\n")
    data = json.loads(text[len(prefix) : -2])
    for name in data["files"]:
        more = (report / "data" / name).read_text()
        data["rows"] += json.loads(more.removeprefix("window.MOSAIC_APPLICATIONS.more(").removesuffix(");\n"))
    return data


def test_the_table_holds_every_group_with_the_lookups_numbers(site, year_run):
    report, counts, _ = site
    data = table_data(report)
    column = {name: i for i, name in enumerate(data["columns"])}
    db = sqlite3.connect(year_run / "store.sqlite")
    groups = db.execute(
        "SELECT group_key, uid, application, runs FROM applications ORDER BY runs DESC, group_key"
    ).fetchall()
    assert counts.applications == len(groups) == len(data["rows"]) == data["total"] > 10
    assert len(data["files"]) == -(-len(groups) // SITE_CONFIG.report_table_rows_per_file) - 1 > 0
    for (key, uid, application, runs), row in zip(groups, data["rows"], strict=True):
        profile = profiles.profile(db, key, runs, SITE_CONFIG.profile_min_periodic_share)
        assert (row[column["application"]], row[column["uid"]], row[column["runs"]]) == (
            application,
            uid,
            runs,
        )
        pairs = row[column["labels"]]
        shares = {data["labels"][i]: percent for i, percent in zip(pairs[::2], pairs[1::2])}
        assert shares == {label: round(100 * s) for label, s in profile["label_shares"].items()}
        # one run is alike with itself: no stability to show
        expected = round(profile["stability"], 3) if profile["runs"] > 1 else None
        assert row[column["stability"]] == expected
        assert row[column["period_seconds"]] == median_period(profile)
        assert (row[column["period"]] is None) == (profile["period_direction"] is None)
    # bytes: the group's valid runs of this batch run, summed
    totals = dict(
        db.execute("SELECT group_key, sum(total_bytes) FROM logs WHERE status = 'ok' GROUP BY group_key")
    )
    assert [row[column["bytes"]] for row in data["rows"]] == [totals[g[0]] for g in groups]


def test_pages_for_the_top_applications_and_their_jobs_exist(site):
    report, counts, _ = site
    data = table_data(report)
    linked = [row[-1] for row in data["rows"] if row[-1]]
    # 2 by runs and 2 more by bytes (SITE_CONFIG), one job page each
    assert counts.application_pages == len(linked) == 4
    assert counts.job_pages == 4 and counts.evicted_job_pages == 0
    assert sorted(p.name for p in (report / "apps").iterdir()) == sorted(Path(link).name for link in linked)
    for link in linked:
        text = (report / link).read_text()
        jobs = re.findall(r'href="\.\./jobs/([^"]+)"', text)
        assert len(jobs) == 1 and (report / "jobs" / jobs[0]).is_file()
    assert counts.files == sum(1 for p in report.rglob("*") if p.is_file())
    assert counts.pages == sum(1 for p in report.rglob("*.html"))
    assert counts.bytes == sum(p.stat().st_size for p in report.rglob("*") if p.is_file())


def test_the_year_page_leads_to_the_top_applications_by_runs_bytes_and_label(site, year_run):
    report, *_ = site
    index = (report / "index.html").read_text()
    first = index.index("<section")
    assert index[first:].startswith('<section id="applications">')  # the first section
    for page in (report / "apps").iterdir():
        assert f'href="apps/{page.name}"' in index
    # by label: the application whose categorized runs carry it most often (a tie: the most
    # valid runs, then the first key)
    db = sqlite3.connect(year_run / "store.sqlite")
    carried = db.execute(
        "SELECT p.group_key, p.runs, a.runs FROM profile_labels p JOIN applications a USING (group_key) "
        "WHERE p.label = 'write_insignificant' ORDER BY p.runs DESC, a.runs DESC, p.group_key LIMIT 1"
    ).fetchone()
    application = carried[0].split(":", 1)[1]
    row = re.search(
        r'title="write_insignificant">write insignificant</span></td><td>(.*?)</td><td>(\d+)</td>'
        r"<td>([\d,]+)</td>",
        index,
    )
    assert application in row.group(1) and (int(row.group(2)), int(row.group(3))) == carried[1:]
    assert "every count here is 1" not in index  # every run categorized (--all-runs)


def test_runs_per_day_counts_every_valid_run_over_the_days_they_span(year_run):
    from mosaic.html.applications import runs_over_time

    db = sqlite3.connect(year_run / "store.sqlite")
    key, valid = db.execute(
        "SELECT group_key, count(*) FROM logs WHERE status = 'ok' GROUP BY group_key ORDER BY 2 DESC, 1"
    ).fetchone()
    chart = runs_over_time(db, key)
    assert sum(chart["series"][0]["values"]) == valid and chart["title"].startswith(f"Runs per day: {valid} ")
    day = 86400
    assert chart["xrange"] == [chart["x"][0] - day, chart["x"][-1] + 2 * day]  # the axis fits the data


def test_the_build_reports_a_step_per_figure_and_page(site):
    """The progress bar's steps: every figure, the year's page, 4 application pages, the
    table's page and 4 job pages; all announced are done (the bar ends at 100 %)."""
    _, counts, bar = site
    assert bar.total == bar.n == len(FIGURES) + 1 + 4 + 1 + 4
    assert counts.job_pages == 4


def test_report_ends_with_one_line_saying_what_it_wrote_and_where_to_open_it(year_run, tmp_path):
    for name in ("summary.json", "store.sqlite"):
        shutil.copyfile(year_run / name, tmp_path / name)
    (tmp_path / "small.toml").write_text("report_top_applications = 0\n")
    done = _mosaic("report", tmp_path, "--config", tmp_path / "small.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    pages = sorted((tmp_path / "report").rglob("*.html"))
    assert re.fullmatch(
        rf"{len(pages)} pages \(0 of applications among \d+, 0 of jobs, 0 evicted\), \d+ files, "
        rf"[\d.]+ MB in \d+ s: open {re.escape(str(tmp_path / 'report' / 'index.html'))}\n",
        done.stdout,
    ), done.stdout
    assert done.stderr == ""  # no bar when stderr is not a terminal


def test_a_rebuild_replaces_the_site_whole(year_run, site, tmp_path):
    for name in ("summary.json", "store.sqlite"):
        shutil.copyfile(year_run / name, tmp_path / name)
    shutil.copytree(site[0], tmp_path / "report")
    stale = tmp_path / "report" / "apps" / slug("gone")
    stale.write_text("old")
    build_site(tmp_path, SITE_CONFIG.replace(report_top_applications=0))
    assert not stale.exists() and not any((tmp_path / "report" / "apps").iterdir())
    assert (tmp_path / "report" / "index.html").is_file() and not (tmp_path / "report.tmp").exists()


def _mosaic(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "mosaic.cli", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_explain_writes_one_self_contained_page(tmp_path):
    done = _mosaic("explain", RUNTIME_LOG.resolve(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    page = tmp_path / "pub_two_series.darshan.html"
    assert done.stdout.strip() == page.name
    text = page.read_text()
    assert not re.search(r'<(script|img|link)[^>]+(src|href)="(?!data:)', text)  # nothing fetched
    assert "write periodic" in text  # a label and its reason, its rule linked to the method inside
    assert '(<a href="#34-periodicity-by-mean-shift">SPEC 3.4</a>)' in text
    assert '<h3 id="34-periodicity-by-mean-shift">3.4 Periodicity by mean shift</h3>' in text


def test_explain_of_an_evicted_log_says_why_and_fails(tmp_path):
    done = _mosaic("explain", EMPTY_LOG.resolve(), "-o", tmp_path / "empty.html", cwd=tmp_path)
    assert done.returncode == 1
    assert "evicted (no_io_modules)" in done.stderr
    assert "no_io_modules" in (tmp_path / "empty.html").read_text()


def test_explain_of_a_missing_file_writes_nothing(tmp_path):
    """A typo used to leave a junk missing.darshan.html behind."""
    done = _mosaic("explain", "missing.darshan", cwd=tmp_path)
    assert done.returncode == 2 and "missing.darshan: no such file" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_report_without_a_run_says_what_to_do(tmp_path):
    done = _mosaic("report", tmp_path, cwd=tmp_path)
    assert done.returncode == 1 and "run `mosaic run" in done.stderr
