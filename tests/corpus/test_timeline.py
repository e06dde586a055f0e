"""The center's timeline and each run's concurrent load, on hand-made activity (SPEC 3.10)."""

import csv

import numpy as np
import pytest

from mosaic.activity import FsActivity, RunActivity
from mosaic.corpus import timeline
from mosaic.corpus.store import Store


def fs(rows, shared=True):
    """FsActivity from (start, end, read, write, meta) rows."""
    cols = np.array(rows, float).reshape(-1, 5).T
    return FsActivity(*cols, shared=shared)


# Run A (1000 s): writes 100 B over [0, 10) and 100 B over [20, 30) on /s.
# Run B (1005 s): 400 B over [0, 20) (20 B/s), and 3 opens at its start.
# Run C (1040 s): 50 B over [0, 10), after A and B ended.
# Run D (1000 s): only on the node-local /, 1000 B over [0, 30).
# Run E (1000 s): only metadata on /s, 10 requests over [12, 14).
RUNS = {
    1: RunActivity("dxt", 1000.0, 30.0, {"/s": fs([(0, 10, 0, 100, 0), (20, 30, 0, 100, 0)])}),
    2: RunActivity("records", 1005.0, 20.0, {"/s": fs([(0, 0, 0, 0, 3), (0, 20, 0, 400, 0)])}),
    3: RunActivity("heatmap", 1040.0, 10.0, {"/s": fs([(0, 10, 0, 50, 0)])}),
    4: RunActivity("records", 1000.0, 30.0, {"/": fs([(0, 30, 1000, 0, 0)], shared=False)}),
    5: RunActivity("records", 1000.0, 15.0, {"/s": fs([(12, 14, 0, 0, 10)])}),
}


def stored(path, order=(1, 2, 3, 4, 5), twice=False):
    store = Store(path)
    rows = [timeline.activity_row(run, RUNS[run]) for run in order]
    timeline.save_activity(store, rows)
    if twice:  # a batch sent again
        timeline.save_activity(store, rows[::-1])
    return store


def loads(store):
    with store._snapshot() as db:
        load = {(r[0], r[1]): tuple(r[2:7]) for r in db.execute("SELECT * FROM run_load").fetchall()}
        over = {(r[0], r[1], r[2]): (r[3], r[4]) for r in db.execute("SELECT * FROM run_overlaps").fetchall()}
    return load, over


def test_union_and_inside():
    us, ue = timeline._union(np.array([5.0, 0.0, 2.0, 20.0, 30.0]), np.array([8.0, 3.0, 4.0, 25.0, 30.0]))
    assert us.tolist() == [0.0, 5.0, 20.0, 30.0] and ue.tolist() == [4.0, 8.0, 25.0, 30.0]
    share = timeline._inside(
        us, ue, np.array([2.0, 4.0, 6.0, 7.0, 25.0, 40.0]), np.array([6.0, 5.0, 6.0, 7.0, 25.0, 41.0])
    )
    # [2,6): [2,4) and [5,6), 3 of 4 s inside; [4,5): none; 6: a point inside; 7 too;
    # 25: the closed end of [20,25]; [40,41): out
    assert share.tolist() == [0.75, 0.0, 1.0, 1.0, 1.0, 0.0]


def test_loads_by_hand(tmp_path):
    with stored(tmp_path / "s.sqlite") as store:
        assert timeline.compute_loads(store, now=5.0) == 5
        load, over = loads(store)
    # (read, write, meta rates, other jobs, I/O seconds)
    assert load[(1, "/s")] == (0.0, 10.0, 0.15, 1, 20.0)  # B's 200 B and 3 opens over A's 20 s
    assert load[(2, "/s")] == (0.0, 5.0, 0.5, 2, 20.0)  # A's 100 B, E's 10 requests
    assert load[(3, "/s")] == (0.0, 0.0, 0.0, 0, 10.0)
    assert load[(4, "/")] == (0.0, 0.0, 0.0, 0, 30.0)  # node-local: no one else known on it
    assert load[(5, "/s")] == (0.0, 20.0, 0.0, 1, 2.0)  # metadata only: its open windows are its I/O time
    assert over == {
        (1, 2, "/s"): (200.0, 1.0),
        (2, 1, "/s"): (100.0, 1.0),
        (2, 5, "/s"): (0.0, 0.0),  # did I/O (metadata) then, moved no byte
        (5, 2, "/s"): (40.0, 1.0),
    }


def test_loads_of_some_runs_also_refresh_their_neighbours(tmp_path):
    with stored(tmp_path / "s.sqlite", order=(1, 3, 4, 5)) as store:
        timeline.compute_loads(store, now=1.0)
        assert loads(store)[0][(1, "/s")] == (0.0, 0.0, 0.0, 0, 20.0)
        timeline.save_activity(store, [timeline.activity_row(2, RUNS[2])])  # B posted late
        # B and the runs whose wall window meets its own: A, D (node-local, yet recomputed) and E
        assert timeline.compute_loads(store, runs=[2], now=2.0) == 4
        load, _ = loads(store)
        assert load[(1, "/s")] == (0.0, 10.0, 0.15, 1, 20.0)
        with store._snapshot() as db:
            when = dict(db.execute("SELECT run, computed_at FROM run_load").fetchall())
    assert when == {1: 2.0, 2: 2.0, 3: 1.0, 4: 2.0, 5: 2.0}


def test_center_timeline_by_hand(tmp_path):
    with stored(tmp_path / "s.sqlite") as store:
        (tl,) = timeline.center_timeline(store, 10.0).values()
    assert tl.fs == "/s" and tl.first == 1000.0 and tl.width == 10.0  # / is node-local: not in it
    assert tl.write.tolist() == [200.0, 200.0, 200.0, 0.0, 50.0]
    assert tl.read.tolist() == [0.0] * 5
    assert tl.meta.tolist() == [3.0, 10.0, 0.0, 0.0, 0.0]
    assert tl.jobs.tolist() == [2, 2, 2, 0, 1]


def test_bin_edges_are_multiples_of_the_width():
    bins, (amount,) = timeline.spread(
        np.array([95.0, 100.0]), np.array([105.0, 100.0]), [np.array([10.0, 4.0])], 10.0
    )
    assert bins.tolist() == [9, 10, 10] and amount.tolist() == [5.0, 5.0, 4.0]


def test_same_bits_whatever_the_order_and_a_batch_sent_twice(tmp_path):
    with stored(tmp_path / "a.sqlite") as a, stored(tmp_path / "b.sqlite", (5, 3, 1, 4, 2), twice=True) as b:
        ta, tb = timeline.center_timeline(a, 7.0), timeline.center_timeline(b, 7.0)
        assert list(ta) == list(tb)
        for name in ta:
            for column in ("read", "write", "meta", "jobs"):
                assert getattr(ta[name], column).tobytes() == getattr(tb[name], column).tobytes()
        assert timeline.coverage(b)["runs"] == 5


def test_export_npz_and_csv_load_in_one_line(tmp_path):
    with stored(tmp_path / "s.sqlite") as store:
        assert timeline.export(store, 10.0, tmp_path / "t.npz") == {"/s": 5}
        timeline.export(store, 10.0, tmp_path / "t.csv")
    data = np.load(tmp_path / "t.npz")
    assert data["file_systems"].tolist() == ["/s"]
    assert data["/s/start"].tolist() == [1000.0, 1010.0, 1020.0, 1030.0, 1040.0]
    assert data["/s/write"].tolist() == [200.0, 200.0, 200.0, 0.0, 50.0]
    assert float(data["bin_seconds"]) == 10.0
    rows = list(csv.DictReader(open(tmp_path / "t.csv")))
    assert [float(r["write_bytes"]) for r in rows] == [200.0, 200.0, 200.0, 0.0, 50.0]
    assert [int(r["jobs"]) for r in rows] == [2, 2, 2, 0, 1] and {r["fs"] for r in rows} == {"/s"}


def test_aggregates_daily_hourly_and_hour_of_week():
    day = 86400.0
    tl = timeline.Timeline(
        "/s",
        3600.0,
        0.0,
        np.array([3600.0, 7200.0] + [0.0] * 23 + [1.0]),
        np.zeros(26),
        np.zeros(26),
        np.zeros(26, np.int64),
    )
    (entry,) = timeline.aggregates({"/s": tl}).values()
    assert entry["daily"]["first"] == 0.0 and entry["daily"]["read"] == [3600.0 + 7200.0, 1.0]
    assert entry["hourly"]["read"][:2] == [3600.0, 7200.0] and len(entry["hourly"]["read"]) == 26
    # 1970-01-01 00:00 UTC was a Thursday: hour of the week 3 * 24 (Monday 00 h = 0)
    rates = entry["hour_of_week"]["read_rate"]
    assert rates[72] == 1.0 and rates[73] == 2.0 and rates[72 + 24 + 1] == 1.0 / 3600.0
    assert entry["hour_of_week"]["hours"][72] == 1 and sum(entry["hour_of_week"]["hours"]) == 26
    assert entry["read_bytes"] == 10801.0 and day == 24 * 3600.0


def test_prune_drops_the_runs_rows(tmp_path):
    with stored(tmp_path / "s.sqlite") as store:
        timeline.compute_loads(store)
        with store._atomic() as db:
            db.execute(
                "INSERT INTO jobs (run, file, job_id, group_key, start) "
                "VALUES (2, 'b', '9', '1:app', '2020-01-01')"
            )
        assert store.prune(before="2021-01-01")["runs"] == 1
        with store._snapshot() as db:
            assert [r[0] for r in db.execute("SELECT run FROM run_activity ORDER BY run")] == [1, 3, 4, 5]
            assert not db.execute("SELECT 1 FROM run_load WHERE run = 2").fetchall()
            assert not db.execute("SELECT 1 FROM run_overlaps WHERE run = 2 OR other = 2").fetchall()


@pytest.mark.parametrize("width", [60.0, 1.0])
def test_timeline_keeps_every_byte(tmp_path, width):
    with stored(tmp_path / "s.sqlite") as store:
        (tl,) = timeline.center_timeline(store, width).values()
    assert tl.write.sum() == 650.0 and tl.meta.sum() == 13.0  # A 200, B 400, C 50; 3 + 10 requests


def test_the_sweep_folds_the_same_timeline(tmp_path):
    with stored(tmp_path / "s.sqlite") as store:
        _, folded = timeline.loads_and_timeline(store, 10.0, now=1.0)
        again = timeline.center_timeline(store, 10.0)
        assert list(folded) == list(again) == ["/s"]
        for column in ("read", "write", "meta", "jobs"):
            assert getattr(folded["/s"], column).tobytes() == getattr(again["/s"], column).tobytes()
        assert folded["/s"].first == again["/s"].first
        assert loads(store)[0][(1, "/s")] == (0.0, 10.0, 0.15, 1, 20.0)


def test_a_runs_stored_end_covers_its_last_interval():
    late = RunActivity("heatmap", 1000.0, 5.0, {"/s": fs([(4.9, 5.3, 0, 10, 0)])})
    assert timeline.activity_row(9, late)[1:3] == (1000.0, 1005.3)


def test_run_overlaps_keeps_the_heaviest_others(tmp_path):
    with stored(tmp_path / "s.sqlite") as store:
        timeline.compute_loads(store, now=1.0, kept=1)
        load, over = loads(store)
    assert load[(2, "/s")] == (0.0, 5.0, 0.5, 2, 20.0)  # both others still counted
    assert over == {(1, 2, "/s"): (200.0, 1.0), (2, 1, "/s"): (100.0, 1.0), (5, 2, "/s"): (40.0, 1.0)}
    with stored(tmp_path / "t.sqlite") as store:
        timeline.compute_loads(store, kept=0)
        assert loads(store)[1] == {}
