"""The load figures (SPEC 3.10) draw summary.json's timeline, and refuse a bad one by name."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from mosaic.corpus import timeline
from mosaic.report import load_figures
from mosaic.report.summary import SummaryError


def summary_of(hours=48):
    """Two days of hourly bins on /scratch: hour h reads h * 3600 B (h MB/s... / 1e6)."""
    read = np.arange(hours, dtype=float) * 3600.0 * 1e6  # hour h: h MB/s
    tl = timeline.Timeline(
        "/scratch", 3600.0, 0.0, read, np.zeros(hours), np.full(hours, 36.0), np.ones(hours, np.int64)
    )
    coverage = {"runs": 3, "sources": {"dxt": 1, "records": 2}, "evicted_logs": 1, "partial_logs": 0}
    return {"timeline": {"coverage": coverage, "file_systems": timeline.aggregates({"/scratch": tl})}}


def test_both_figures_draw_the_timeline(tmp_path):
    summary = summary_of()
    plots = load_figures.plots(summary)
    assert set(plots) == {"load", "load_week"}
    load = plots["load"](tmp_path)
    hourly = load["/scratch"]["hourly"]
    assert (hourly["read"] / hourly["seconds"] / 1e6).tolist() == list(range(48))
    daily = load["/scratch"]["daily"]
    assert (daily["read"] / daily["seconds"] / 1e6).tolist() == [11.5, 35.5]  # means of 0..23, 24..47
    week = plots["load_week"](tmp_path)["/scratch"]
    # 1970-01-01 was a Thursday: hour 0 is Thursday 00 h, each hour of the week seen once
    assert week.shape == (7, 24) and week[3, 0] == 0.0 and week[3, 5] == 5.0 and week[4, 0] == 24.0
    assert week[0, 0] == 0.0  # Monday: no hour of it in these two days
    for name in ("load", "load_week"):
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert ET.parse(tmp_path / f"{name}.svg").getroot().tag.endswith("svg")
    assert "3 runs (1 from dxt, 2 from records); 1 evicted logs not in it" in load_figures.coverage_line(
        summary
    )


def test_no_timeline_no_figure():
    assert load_figures.plots({}) == {}
    assert load_figures.plots({"timeline": {"file_systems": {}}}) == {}


@pytest.mark.parametrize(
    "field, value, says",
    [("read", ["x"], "hourly.read: expected numbers"), ("seconds", 0, "hourly.seconds: expected a positive")],
)
def test_a_bad_timeline_is_refused_by_name(tmp_path, field, value, says):
    summary = summary_of()
    summary["timeline"]["file_systems"]["/scratch"]["hourly"][field] = value
    with pytest.raises(SummaryError, match=says):
        load_figures.plots(summary)["load"](tmp_path)
