"""The pages in a real browser: Debian's chromium, headless, driven by playwright.

No browser is downloaded: playwright launches /usr/bin/chromium (the
Makefile and .ci/run install it with apt where they can). Without it, or
without playwright, these tests skip and say so. Pages are opened as files,
as a reader opens OUT/report/index.html.
"""

import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest
from PIL import Image

from .test_site import DATA, EMPTY_LOG, table_data

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
EXPLAINED = [
    DATA / "darshan-logs-runtime" / "darshan-main" / "pub_dxt_cadence.darshan",
    DATA / "darshan-logs-runtime" / "darshan-main" / "pub_heatmap_append_7s.darshan",
    DATA / "darshan-logs-runtime" / "darshan-2.3.1" / "pub_ckpt_newfile_7s.darshan.gz",
    DATA
    / "darshan-logs"
    / "dlio_logs"
    / "snyder_python3_id3116902-2110365_12-19-66957-188958432683465822_1.darshan",
    *sorted((DATA / "darshan-logs" / "e3sm_io_heatmaps_and_dxt").glob("*.darshan")),
    EMPTY_LOG,
]


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip(
        "playwright.sync_api", reason="playwright not installed (pip: playwright)"
    )
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no chromium at {CHROMIUM}: `apt-get install chromium` (make venv does it as root)")
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


WIDTHS = (1400, 420)  # a desk's screen and a phone's


def open_page(browser, path: Path, width: int = 1280):
    """The page at ``path``, loaded; with the problems it met (console errors, uncaught
    exceptions, failed requests)."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    problems = []
    page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"exception: {error}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url} {r.failure}"))
    page.goto(path.resolve().as_uri(), wait_until="load")
    return page, problems


def check_page(browser, path: Path, screenshot: Path) -> object:
    """At each of WIDTHS: loads clean, never scrolls sideways (wide tables and the timeline
    scroll in their own box); every image decoded, every local link resolves, not blank on
    screen. Returns the page at the first width."""
    for width in WIDTHS[1:]:
        narrow, problems = open_page(browser, path, width)
        overflow = narrow.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        # the year's top applications, side by side on a desk: each fits a phone whole, its
        # paths broken (its bytes column was off screen, in the box's sideways scroll)
        hidden = narrow.evaluate(
            "[...document.querySelectorAll('.grid .scroll')].map(s => s.scrollWidth - s.clientWidth)"
        )
        if problems or overflow > 0 or any(pixels > 0 for pixels in hidden):
            # the whole page as it failed, to look at (~2 s a page)
            narrow.screenshot(path=str(screenshot.with_suffix(f".{width}.png")), full_page=True)
        assert problems == [], (path, width)
        assert overflow <= 0, (path, width, overflow)
        assert all(pixels <= 0 for pixels in hidden), (path, width, hidden)
        narrow.close()
    page, problems = open_page(browser, path, WIDTHS[0])
    assert problems == [], path
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0, path
    broken = page.evaluate(
        "[...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src.slice(0, 80))"
    )
    assert broken == [], path
    for href in page.evaluate("[...document.links].map(a => a.href)"):
        target = urlsplit(href)
        assert target.scheme == "file", f"{path}: link out of the site: {href}"
        assert Path(unquote(target.path)).is_file(), f"{path}: broken link {href}"
    page.screenshot(path=str(screenshot), full_page=False)
    pixels = np.asarray(Image.open(screenshot).convert("L"), dtype=float)
    assert pixels.std() > 10 and len(np.unique(pixels)) > 20, f"{path}: blank screenshot"
    return page


def test_every_page_of_the_report_loads_clean(browser, site, tmp_path):
    report, *_ = site
    pages = sorted(report.rglob("*.html"))
    kinds = {p.parent.name if p.parent != report else p.stem for p in pages}
    assert '<div class="grid">' in (report / "index.html").read_text()  # the tables checked at 420 px
    assert kinds == {"index", "applications", "apps", "jobs", "method", "load"}
    for number, path in enumerate(pages):
        page = check_page(browser, path, tmp_path / f"{number}.png")
        if path.parent.name == "jobs":  # every chart drawn by uPlot; a way back to its application
            charts = page.evaluate("JSON.parse(document.getElementById('mosaic-charts').textContent).length")
            assert page.locator(".uplot").count() == charts >= 3
            navigation = page.evaluate(
                "[...document.querySelectorAll('nav a')].map(a => a.getAttribute('href'))"
            )
            assert navigation[:3] == ["../index.html", "../applications.html", "../method.html"]
            assert navigation[3].startswith("../apps/") and len(navigation) == 4
            # every reason's rule links to its section of the method
            rules = page.evaluate(
                "[...document.querySelectorAll('.rule a')].map(a => a.getAttribute('href'))"
            )
            assert rules and all(re.fullmatch(r"\.\./method\.html#3\d-[a-z-]+", href) for href in rules)
            sections = page.evaluate(
                "[...document.querySelectorAll('.rule a')].map(a => new URL(a.href).hash)"
            )
            assert all(f'id="{hash[1:]}"' in (report / "method.html").read_text() for hash in sections)
        page.close()


@pytest.fixture(scope="module")
def explained(tmp_path_factory):
    """`mosaic explain` of every EXPLAINED log, two at a time (CI's two cores) while the tests
    check the pages already written: {log: future of (the command's run, its page)}."""
    folder = tmp_path_factory.mktemp("explained")

    def explain(log: Path) -> tuple[subprocess.CompletedProcess, Path]:
        output = folder / f"{log.name}.html"
        command = [sys.executable, "-m", "mosaic.cli", "explain", str(log), "-o", str(output)]
        return subprocess.run(command, capture_output=True, text=True, timeout=120), output

    with ThreadPoolExecutor(max_workers=2) as pool:
        yield {log: pool.submit(explain, log) for log in EXPLAINED}


def test_explain_pages_of_real_and_runtime_logs_load_clean(browser, explained, tmp_path):
    for log in EXPLAINED:
        done, output = explained[log].result()
        assert done.returncode == (1 if log == EMPTY_LOG else 0), done.stderr
        page = check_page(browser, output, tmp_path / f"{log.name}.png")
        if log != EMPTY_LOG:
            assert page.locator(".uplot").count() >= 3
            assert page.locator("img").evaluate("i => i.naturalWidth") > 1000  # the timeline
        page.close()


def time_under_pointer(page, chart: str, fraction: float) -> float:
    """The time (s) the chart's legend shows with the pointer at ``fraction`` of its width."""
    plot = page.locator(f"#{chart} .u-over")
    box = plot.bounding_box()
    page.mouse.move(box["x"] + fraction * box["width"], box["y"] + box["height"] / 2)
    return float(page.locator(f"#{chart} .u-legend .u-series").first.locator(".u-value").inner_text())


def test_a_timeline_chart_zooms_on_a_drag_and_shows_values_on_hover(browser, explained):
    done, output = explained[EXPLAINED[1]].result()  # 86 s of writes, HEATMAP bins of 0.8 s
    assert done.returncode == 0, done.stderr
    page, problems = open_page(browser, output)
    page.locator("#ranks").scroll_into_view_if_needed()
    assert time_under_pointer(page, "ranks", 0.5) == pytest.approx(43.0, abs=1.0)  # mid-run
    box = page.locator("#ranks .u-over").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 0.2 * box["width"], y)  # drag across 20-40 % of the run: 17-34 s
    page.mouse.down()
    page.mouse.move(box["x"] + 0.4 * box["width"], y, steps=5)
    page.mouse.up()
    assert time_under_pointer(page, "ranks", 0.5) == pytest.approx(25.8, abs=1.0)
    assert problems == []
    page.close()


def shown_rows(page) -> list[list[str]]:
    return page.evaluate(
        "[...document.querySelectorAll('#apps tbody tr')]"
        ".map(r => [...r.cells].map(c => (c.querySelector('a') || c).textContent))"
    )


def test_the_applications_table_sorts_and_filters(browser, site):
    report, *_ = site
    data = table_data(report)
    column = {name: i for i, name in enumerate(data["columns"])}
    rows = data["rows"]
    page, problems = open_page(browser, report / "applications.html")
    # the rows come in files of 10 (SITE_CONFIG): the first at once, the next on demand
    page.locator("#apps tbody tr").first.wait_for()  # its script ran (no eval: the page's CSP)
    assert len(shown_rows(page)) == 10 < len(rows)
    partial = (
        f"(loaded: those with the most runs, of {len(rows)} in all; "
        "\u201cload more rows\u201d below the table adds more)."
    )
    assert page.inner_text("#shown") == f"10 loaded applications {partial}"
    page.fill("#filter-runs", str(rows[0][column["runs"]]))  # the first file's rows: the most runs
    matching = sum(r[column["runs"]] >= rows[0][column["runs"]] for r in rows[:10])
    assert page.inner_text("#shown") == f"{matching} of 10 loaded applications match {partial}"
    page.fill("#filter-runs", "")
    for _ in data["files"]:
        page.click("#more")
    # every row in (a locator waits without eval; wait_for_function's polling evals a string,
    # which the page's CSP refuses once the rows come later than its first check)
    page.locator("#apps tbody tr").nth(len(rows) - 1).wait_for()
    assert page.locator("#apps tbody tr").count() == len(rows)
    assert page.locator("#more").is_hidden()
    marked = page.evaluate(
        "[...document.querySelectorAll('#apps a')].map(a => a.nextElementSibling.textContent)"
    )
    assert marked == ["page"] * data["pages"] and data["pages"] == 4
    # sorted by runs, most first; a click on "runs" turns the order round
    runs = [int(r[2].replace(",", "")) for r in shown_rows(page)]
    assert runs == sorted((r[column["runs"]] for r in rows), reverse=True)
    page.click("#apps th[data-key=runs]")
    assert [int(r[2].replace(",", "")) for r in shown_rows(page)] == sorted(r[column["runs"]] for r in rows)
    page.click("#apps th[data-key=application]")
    assert [r[0] for r in shown_rows(page)] == sorted(r[column["application"]] for r in rows)
    # by name: the rows whose application contains the text, whatever the case
    name = rows[0][column["application"]].rsplit("/", 1)[-1]
    page.fill("#filter-name", name.upper())
    expected = sorted(r[column["application"]] for r in rows if name in r[column["application"]])
    assert [r[0] for r in shown_rows(page)] == expected and 0 < len(expected) < len(rows)
    assert page.inner_text("#shown") == f"{len(expected)} of {len(rows)} applications match."
    page.fill("#filter-name", "")
    # by label: runs carrying write_insignificant in at least 100 % of their runs, then 50 %
    label = data["labels"].index("write_insignificant")

    def share(row):
        pairs = row[column["labels"]]
        return dict(zip(pairs[::2], pairs[1::2])).get(label, 0)

    page.select_option("#filter-label", str(label))
    for least in (100, 50):
        page.fill("#filter-share", str(least))
        expected = sorted(r[column["application"]] for r in rows if share(r) >= least)
        assert [r[0] for r in shown_rows(page)] == expected
    assert 0 < len(expected) < len(rows)
    # and runs: at least 3 runs as well
    page.fill("#filter-runs", "3")
    expected = sorted(r[column["application"]] for r in rows if share(r) >= 50 and r[column["runs"]] >= 3)
    assert [r[0] for r in shown_rows(page)] == expected
    assert problems == []
    page.close()
