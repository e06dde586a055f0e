"""Store layout 4 (SPEC 3.9): run_performance, filled for every valid run, upgraded into
from stores of layouts 1, 2 and 3 written by the code of their time, deleted by prune."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from mosaic.cli import main as cli
from mosaic.config import DEFAULT, Config
from mosaic.corpus import perfstore
from mosaic.corpus.pipeline import run
from mosaic.corpus.store import LOOKUP_SCHEMA, Store
from mosaic.logfile import categorize_file

DATA = Path(__file__).resolve().parents[1] / "data"
STORES = DATA / "stores"
LAYOUTS = {1: "layout-1-5d7b578.sqlite", 2: "layout-2-1181d4f.sqlite", 3: "layout-3-e627ff0.sqlite"}
INTERFERENCE = DATA / "darshan-logs-interference" / "logs"
HDF_BULK = "root_hdf_bulk_id70001-0_12-1-6-7_1.darshan"
VICTIMS = ("root_lmp_restart_id70002-1_12-1-11-7_1.darshan", "root_lmp_restart_id70003-2_12-1-13-7_1.darshan")
IMBALANCED = DATA / "darshan-logs" / "imbalanced_io" / "imbalanced-io.darshan"


def test_layout_4_is_this_releases():
    assert LOOKUP_SCHEMA == 4


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_older_layout_gets_run_performance_and_keeps_every_job(layout, tmp_path):
    path = tmp_path / "store.sqlite"
    shutil.copy(STORES / LAYOUTS[layout], path)
    with sqlite3.connect(path) as db:
        found = db.execute("SELECT value FROM meta WHERE key = 'lookup_schema'").fetchone()
        assert (found or ("1",)) == (str(layout),)  # layout 1 wrote no lookup_schema
        jobs = set(db.execute("SELECT file, job_id, group_key, categories FROM jobs").fetchall())
        assert db.execute("SELECT 1 FROM sqlite_master WHERE name = 'run_performance'").fetchone() is None
    with Store(path) as store:
        for file, job_id, _, categories in jobs:
            stored = [r for r in store.job(job_id) if r["file"] == file]
            assert [r["categories"] for r in stored] == [json.loads(categories)]
            assert stored[0]["performance"] is None  # stored before layout 4: no counters kept
        posted = categorize_file(INTERFERENCE / HDF_BULK, DEFAULT)
        store.record(posted)
        (answer,) = store.job("70001")
        assert answer["performance"]["job"]["mode"] == "N:1"
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'lookup_schema'").fetchone() == ("4",)
        assert set(db.execute("SELECT file, job_id, group_key, categories FROM jobs").fetchall()) >= jobs
        (count,) = db.execute("SELECT count(*) FROM run_performance").fetchone()
        assert count == 1


def _rows(path: Path) -> dict[str, sqlite3.Row]:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    try:
        return {
            row["job_id"]: row
            for row in db.execute(
                "SELECT j.job_id, p.* FROM run_performance p JOIN jobs j USING (run) ORDER BY j.job_id"
            ).fetchall()
        }
    finally:
        db.close()


def test_mosaic_run_stores_the_performance_of_every_valid_run_and_prune_deletes_it(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in (HDF_BULK, *VICTIMS):
        shutil.copy(INTERFERENCE / name, logs / name)
    shutil.copy(IMBALANCED, logs / IMBALANCED.name)
    (logs / "broken.darshan").write_bytes(b"not a log")
    out = tmp_path / "out"
    run([logs], out, Config(), workers=0)
    rows = _rows(out / "store.sqlite")
    # the two victims are one group: one representative categorized, both runs stored
    assert sorted(rows) == ["1452113755", "70001", "70002", "70003"]
    bulk = rows["70001"]
    assert (bulk["mode"], bulk["lower_bound"], bulk["read_bytes"], bulk["write_bytes"]) == (
        "N:1",
        0,
        0.0,
        335544320.0,
    )
    assert bulk["io_time"] == pytest.approx(5.530827045440674)
    assert bulk["group_key"] == "0:/opt/mosaic-ifs/bin/hdf_bulk"
    assert bulk["end_epoch"] - bulk["start_epoch"] == pytest.approx(5.5354, abs=1e-3)
    body = json.loads(bulk["body"])
    assert body["darshan_util"]["POSIX"]["agg_perf_by_slowest"] == pytest.approx(57.857531, rel=1e-6)
    assert rows["1452113755"]["lower_bound"] == 1  # a partial log: a lower bound
    # traces.jsonl: each categorized run's result object carries it
    traced = [json.loads(line) for line in open(out / "traces.jsonl")]
    assert len(traced) == 3 and all(t["performance"]["job"]["total"]["bytes"] > 0 for t in traced)
    with Store(out / "store.sqlite") as store:
        # the application's history: over both victims, though one alone was categorized
        answer = store.application(0, "/opt/mosaic-ifs/bin/lmp_restart")
        assert answer is not None and answer["profile"]["runs"] == 1
        history = answer["performance"]
        assert (history["runs"], history["complete_runs"]) == (2, 2)
        bandwidths = sorted(rows[j]["write_bytes"] / rows[j]["write_time"] for j in ("70002", "70003"))
        write = history["metrics"]["write_bandwidth"]
        assert write["p50"] == pytest.approx(sum(bandwidths) / 2) and "values" not in write
        assert write["p10"] == pytest.approx(bandwidths[0] + 0.1 * (bandwidths[1] - bandwidths[0]))
        done = CliRunner().invoke(
            cli,
            [
                "lookup",
                "--uid",
                "0",
                "--app",
                "/opt/mosaic-ifs/bin/lmp_restart",
                "--store",
                str(out / "store.sqlite"),
            ],
        )
        assert "performance over 2 whole run(s) of 2 stored" in done.output
        assert "write bandwidth" in done.output and "read bandwidth" not in done.output
        store.prune(keep=1)  # one run per group: one of the two victims goes
    assert len(_rows(out / "store.sqlite")) == 3


def test_the_application_history_is_p10_p50_p90_over_its_runs_and_places_a_run(tmp_path):
    """Hand-filled: 10 runs writing 1..10 MB/s (1 s each); one partial run left out."""
    path = tmp_path / "store.sqlite"
    with Store(path):
        pass
    db = sqlite3.connect(path)
    for i in range(1, 11):
        perf = {
            "job": {
                "read": {"bytes": 0.0, "time": 0.0},
                "write": {"bytes": i * 1e6, "time": 1.0},
                "total": {"time": 1.0},
                "metadata_per_second": None,
                "mode": "N:N",
                "lower_bound": False,
            }
        }
        db.execute(perfstore.INSERT, perfstore.row(i, "1:/a", {"start_epoch": float(i)}, perf))
    partial = {
        "job": {
            "read": {"bytes": 0.0, "time": 0.0},
            "write": {"bytes": 1e9, "time": 1.0},
            "total": {"time": 1.0},
            "lower_bound": True,
        }
    }
    db.execute(perfstore.INSERT, perfstore.row(99, "1:/a", {}, partial))
    db.commit()
    found = perfstore.history(db, "1:/a", values=True)
    db.close()
    assert (found["runs"], found["complete_runs"]) == (11, 10)
    write = found["metrics"]["write_bandwidth"]
    assert write["runs"] == 10
    # numpy's linear percentiles of 1..10 MB/s: 1.9, 5.5, 9.1
    assert (write["p10"], write["p50"], write["p90"]) == pytest.approx((1.9e6, 5.5e6, 9.1e6))
    assert "read_bandwidth" not in found["metrics"]  # no run read: no figure, never 0
    placed = perfstore.placement(3e6, write, "write_bandwidth")
    assert placed == {"value": 3e6, "runs": 10, "slower_than": 0.7, "faster_than": 0.2, "median": 5.5e6}
    # a time: higher is slower
    time_placed = perfstore.placement(0.5, found["metrics"]["io_time"], "io_time")
    assert time_placed is not None and time_placed["faster_than"] == 1.0
    assert perfstore.placement(None, write, "write_bandwidth") is None
