"""OUT/report.md carries the figures' tables and the noteworthy correlations."""

from mosaic.config import Config
from mosaic.report.markdown import render_report


def row_with(report: str, *cells: str) -> str:
    rows = [
        line for line in report.splitlines() if line.startswith("|") and all(f" {c} " in line for c in cells)
    ]
    assert len(rows) == 1, (cells, rows)
    return rows[0]


def correlations(report: str, view: str) -> dict:
    """{(A, B): P(B|A) text} from the report's noteworthy-correlation table of `view`."""
    section = report.split(f"## Noteworthy correlations, {view}")[1].split("## ")[0]
    rows = [
        [cell.strip() for cell in line.split(" | ")]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| if A")
    ]
    return {(a.removeprefix("| "), b): p for a, b, p, _ in rows}


def test_tables_carry_the_summary_shares(summary):
    report = render_report(summary, Config())
    row_with(report, "write", "periodic minute", "12.5 %", "18.5 %")
    row_with(report, "read", "on start", "37.5 %", "84.6 %")  # 3/8; 55/65
    row_with(report, "evicted: truncated", "2", "16.7 %")
    row_with(report, "metadata high density", "12.5 %", "7.7 %")
    assert "mean 81.8 %, median 88.5 %" in report


def test_noteworthy_correlations_follow_the_thresholds(summary):
    report = render_report(summary, Config())
    single = correlations(report, "single run")
    assert single[("read on start", "write on end")] == "66.7 %"
    assert single[("write periodic minute", "write periodic low busy time")] == "100.0 %"
    assert ("write periodic minute", "write periodic") not in single  # true by definition
    assert correlations(report, "all runs")[("read on start", "write on end")] == "78.2 %"
    assert "P(B \\| A)" in report  # an escaped pipe keeps the table's columns
    stricter = correlations(render_report(summary, Config(correlation_min_probability=0.7)), "single run")
    assert ("read on start", "write on end") not in stricter  # 66.7 % < 70 %
    assert stricter[("metadata insignificant load", "write insignificant")] == "75.0 %"


def test_no_stability_and_no_correlations(summary):
    summary = {**summary, "stability": None}
    report = render_report(summary, Config(correlation_min_support=0.9))
    assert "Not computed" in report
    assert report.count("None.") == 2  # both views


def test_the_funnel_says_why_files_and_logs_differ(summary):
    """The sample year's "2,888 files seen" beside "3,000 logs" read as a miscount: 15 day
    archives hold 128 of the logs."""
    from mosaic.report.tables import files_note

    year = {"files_seen": 2888, "non_log_files": 1, "logs": 3000, "partial": 2}
    assert files_note(year) == (
        "2,888 files seen (an archive is one file of many logs), 1 not a log, 2 partial logs kept."
    )
    plain = {"files_seen": 13, "non_log_files": 3, "logs": 10, "partial": 1}
    assert files_note(plain) == "13 files seen, 3 not logs, 1 partial log kept."
    assert "13 files seen, 1 not a log, 1 partial log kept." in render_report(summary, Config())
