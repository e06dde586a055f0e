"""Names a log's writer chose (issue 45 items 4 and 9): text, never markup, in every
figure and page; long ones shortened for display; file names that are not UTF-8 shown
as \\xNN; bidi controls neutralised. Real logs written with such names, real commands."""

import dataclasses
import html
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mosaic.config import Config
from mosaic.darshan import writer
from mosaic.report.text import in_figure, readable, shortened
from mosaic.trace import bounded_name
from mosaic_testing.written import make_log

from . import test_browser
from .test_browser import open_page

browser = test_browser.browser  # chromium, the fixture of the browser tests

HOSTILE_APPS = {
    "mathtext": "/apps/$x^{$y",  # two dollars: mathtext, a ValueError before
    "deep": "/apps/$" + "{" * 400 + "$",  # RecursionError in matplotlib's parser before
    "long": "/apps/" + "a" * 5000,  # a 5,000-character title: MemoryError before
    "bidi": "/apps/\u202eexe.sh",  # shown reversed before
}
HOSTILE_FILE = b"run-\xff-$a^b$-\xe2\x80\xae.darshan"  # not UTF-8, a mathtext pair, U+202E


def mosaic(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mosaic.cli", *args], cwd=cwd, capture_output=True, timeout=300
    )


def hostile_log(folder: Path, app: str) -> Path:
    """A real log whose command line starts with ``app``, at HOSTILE_FILE in ``folder``
    (darshan-util writes at most 4 KB of job region; a crafted log holds more)."""
    log = make_log()
    log = dataclasses.replace(log, job=dataclasses.replace(log.job, cmdline=f"{app} -in x"))
    path = folder / os.fsdecode(HOSTILE_FILE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writer, "JOB_REGION_MAX", 1 << 20)
        path.write_bytes(writer.write_log(log, "3.41"))
    return path


def test_readable_decodes_escapes_and_neutralises():
    assert readable(HOSTILE_FILE) == "run-\\xff-$a^b$-<U+202E>.darshan"
    assert readable("\ud800") == "\\ud800"  # a lone surrogate that stood for no byte
    assert readable("a\u2066b\u2069\u200f") == "a<U+2066>b<U+2069><U+200F>"
    assert shortened("abcdefghij", 10) == "abcdefghij"
    assert shortened("abcdefghijk", 10) == "abcd\u2026ghijk"  # 10 characters: 4, the ellipsis, 5
    assert in_figure("$x$", 120) == r"\$x\$"


@pytest.mark.slow  # a page each (~5 s on a quiet machine)
@pytest.mark.parametrize("kind", list(HOSTILE_APPS))
def test_explain_shows_hostile_names_as_text(tmp_path, kind):
    """Each crashed `mosaic explain` with a traceback before (ParseSyntaxException,
    RecursionError, "quantization error", and the file name that is not UTF-8 a
    UnicodeEncodeError); now the page holds the names as text, the bidi control as
    <U+202E>, and its timeline is drawn."""
    path = hostile_log(tmp_path, HOSTILE_APPS[kind])
    explained = mosaic("explain", path, "-o", "page.html", cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr.decode()[-2000:]
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "run-\\xff-$a^b$-&lt;U+202E&gt;.darshan" in page
    assert "\u202e" not in page and '<img alt="timeline of' in page
    kept = bounded_name(HOSTILE_APPS[kind], Config().max_name_chars)  # "long": 4,096 characters
    assert html.escape(readable(kept), quote=False) in page


@pytest.mark.parametrize("kind", ["mathtext", "deep"])
def test_plot_draws_mathtext_as_text(tmp_path, kind):
    """`mosaic plot` ended in ParseSyntaxException and RecursionError before."""
    path = hostile_log(tmp_path, HOSTILE_APPS[kind])
    plotted = mosaic("plot", path, "-o", "plot.png", cwd=tmp_path)
    assert plotted.returncode == 0, plotted.stderr.decode()[-2000:]
    assert (tmp_path / "plot.png").stat().st_size > 10_000


@pytest.mark.slow  # a run and a site (~15 s on a quiet machine)
def test_the_report_names_a_gone_log_that_is_not_utf8_as_text(tmp_path):
    """A run over a log with a hostile name and application, the log then removed: the
    application's page said "log no longer at b'...'" (the store keeps such a name as
    bytes); now the name as text, \\xff and <U+202E> included. The application's job
    page, drawn while the log was there, holds its names as text too."""
    logs = tmp_path / "logs"
    logs.mkdir()
    log = hostile_log(logs, HOSTILE_APPS["mathtext"])
    config = tmp_path / "site.toml"
    config.write_text("report_top_applications = 1\nreport_jobs_per_application = 1\n")
    assert mosaic("run", logs, "--out", "out", "--config", config, cwd=tmp_path).returncode == 0
    made = mosaic("report", "out", "--config", config, cwd=tmp_path)
    assert made.returncode == 0, made.stderr.decode()[-2000:]
    (job,) = (tmp_path / "out" / "report" / "jobs").glob("*.html")
    assert "run-\\xff-$a^b$-&lt;U+202E&gt;.darshan" in job.read_text(encoding="utf-8")
    log.unlink()
    made = mosaic("report", "out", "--config", config, cwd=tmp_path)
    assert made.returncode == 0, made.stderr.decode()[-2000:]
    (app,) = (tmp_path / "out" / "report" / "apps").glob("*.html")
    text = app.read_text(encoding="utf-8")
    assert (
        f"(log no longer at {readable(os.fsencode(log))})".replace("<", "&lt;").replace(">", "&gt;") in text
    )
    assert "b&#x27;" not in text and "\u202e" not in text


@pytest.mark.slow  # a page, then chromium
def test_a_page_runs_no_script_but_its_own_and_shows_no_override(browser, tmp_path):
    """Item 9. The page of a log whose application holds U+202E shows the control as
    <U+202E> (before: the name showed reversed). A script a missed escape would let into
    the page (here inserted by hand) does not run: the page's policy names its own
    inline scripts by hash (before: no policy, it ran)."""
    path = hostile_log(tmp_path, HOSTILE_APPS["bidi"])
    assert mosaic("explain", path, "-o", "page.html", cwd=tmp_path).returncode == 0
    page_file = tmp_path / "page.html"
    text = page_file.read_text(encoding="utf-8")
    assert text.count('http-equiv="Content-Security-Policy"') == 1
    injected = tmp_path / "injected.html"
    injected.write_text(
        text.replace("<main>", "<main><script>window.pwned = 1</script>", 1), encoding="utf-8"
    )
    page, problems = open_page(browser, page_file)
    shown = page.evaluate(
        "[...document.querySelectorAll('.facts th')].find(th => th.textContent === 'application')"
        ".nextElementSibling.textContent"
    )
    charts = page.evaluate("document.querySelectorAll('.chart canvas').length")
    assert problems == []
    assert shown == "/apps/<U+202E>exe.sh"
    assert charts > 0  # the page's own scripts ran
    attacked, problems = open_page(browser, injected)
    assert attacked.evaluate("window.pwned") is None
    assert any("Content Security Policy" in problem for problem in problems)
