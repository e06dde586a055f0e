"""report/load.html on the interference logs: the chart thinned, the coverage, the busiest hour's
heaviest runs named (SPEC 3.10)."""

import json
import re
import sqlite3
from pathlib import Path

import pytest

from mosaic.config import Config
from mosaic.corpus.pipeline import run
from mosaic.html.load_page import build_load_page

DATA = Path(__file__).parents[1] / "data" / "darshan-logs-interference"


@pytest.fixture(scope="module")
def interference(tmp_path_factory):
    out = tmp_path_factory.mktemp("load_site")
    config = Config(
        shared_file_systems=("/mnt/mosaic-ifs",), timeline_bin_seconds=1.0, report_chart_points=50
    )
    summary = run([DATA / "logs"], out, config, workers=0)
    return out, summary, config


def test_the_load_page(interference, tmp_path):
    out, summary, config = interference
    (tmp_path / "jobs").mkdir()
    db = sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True)
    try:
        section = build_load_page(tmp_path, db, summary, config)
    finally:
        db.close()
    assert 'href="load.html"' in section
    text = (tmp_path / "load.html").read_text()
    charts = json.loads(re.search(r'id="mosaic-charts">(.*?)</script>', text).group(1))
    assert [c["id"] for c in charts] == ["load-0", "meta-0"]
    # ~300 one-second bins thinned to at most 50 points, each the peak of its stretch
    assert 0 < len(charts[0]["x"]) <= 50
    peak = max(v for v in charts[0]["series"][1]["values"] if v is not None)
    # about the 60 MB/s throttle: blkio lets a short burst through, and a heatmap's 0.1 s bins
    # and DXT's request times put a request's bytes in a second a little off the device's
    assert 50e6 < peak <= 70e6
    assert "34 runs with a Darshan log (15 from dxt, 19 from heatmap)" in text
    assert "0 evicted logs" in text and "lower bound" in text
    # the run is one 300 s hour or two: its heaviest runs are named (no job pages here: not linked)
    heavy = re.findall(r"job (\d+) \(/opt/mosaic-ifs/bin/(\w+), uid 0\)", text)
    assert heavy and {app for _, app in heavy} <= {"hdf_bulk", "lmp_restart"}
    assert "ram_ckpt" not in text and "/mnt/mosaic-fast" not in text
    assert '<a href="jobs/' not in text


def test_what_is_shared_was_decided_at_validation(interference, tmp_path):
    """The stored activity carries its shared flag: a report under another setting draws the same
    file systems (validating again is what changes them)."""
    out, summary, _ = interference
    db = sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True)
    try:
        assert build_load_page(tmp_path, db, summary, Config()) is not None
    finally:
        db.close()
    assert "/mnt/mosaic-ifs" in (tmp_path / "load.html").read_text()


def test_a_job_pages_concurrent_load(interference):
    from mosaic.html.load_page import job_load_section

    out, _, _ = interference
    truth = {
        json.loads(line)["job_id"]: json.loads(line)
        for line in (DATA / "truth.jsonl").read_text().splitlines()
    }
    db = sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True)
    try:
        victim = job_load_section(db, truth[70007]["file"])
        alone = job_load_section(db, truth[70012]["file"])
        control = job_load_section(db, truth[70004]["file"])
        assert job_load_section(db, "no-such-file") == ""
    finally:
        db.close()
    assert "4 other jobs moved" in victim and "on /mnt/mosaic-ifs" in victim
    assert "no other job moved data on /mnt/mosaic-ifs" in alone
    assert "no other job moved data on /" in control
