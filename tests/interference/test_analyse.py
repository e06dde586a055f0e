"""SPEC 3.11 in the store: analyse() over hand-filled contract tables, prune, and the
hook at the end of mosaic run."""

import json

import numpy as np
import pytest
import scipy.stats

from mosaic.config import Config
from mosaic.corpus.store import Store
from mosaic.interference.analyse import analyse, comparable_time, load_contention
from mosaic_testing.contention_tables import fill

CONFIG = Config(contention_min_runs=8)
VICTIM, AGGRESSOR = "1:/bin/victim", "2:/bin/agg"
TIMES = [1.0, 1.0, 1.0, 1.0, 1.0, 1.1, 2.0, 3.0]
LOADS = [0.0, 0.0, 0.0, 0.0, 2e6, 3e6, 4e7, 5e7]


def _rows():
    performance = [(i, VICTIM, 1e9, TIMES[i], 10.0, "N:N", {"job": {"mode": "N:N"}}) for i in range(8)]
    performance += [(100 + i, AGGRESSOR, 4e9, 5.0, 500.0 if i < 4 else 10.0, "N:1", None) for i in range(8)]
    load = [(i, "/scratch", 0.0, LOADS[i], 0.0, 1, 10.0) for i in range(8)]
    load += [(100 + i, "/scratch", 0.0, 0.0, 0.0, 0, 5.0) for i in range(8)]
    overlaps = [
        (6, 100, "/scratch", 3e8, 0.75),
        (6, 100, "/home", 1e8, 1.0),  # two file systems: 4e8 of 5e8 -> share 0.8
        (6, 5, "/scratch", 1e8, 0.25),
        *[(7, other, "/scratch", 1e8, 0.25) for other in (101, 102, 103, 104)],
    ]
    jobs = [(i, f"v{i}.darshan", str(7000 + i), VICTIM, None) for i in range(8)]
    jobs += [(100 + i, f"a{i}.darshan", str(8000 + i), AGGRESSOR, ["write_on_end"]) for i in range(8)]
    return {"performance": performance, "load": load, "overlaps": overlaps, "jobs": jobs}


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "store.sqlite") as opened:
        fill(opened, **_rows())
        with opened._atomic() as db:
            db.execute("INSERT INTO profile_label_sets VALUES (?, ?, ?)", (VICTIM, '["read_on_start"]', 8))
        yield opened


def test_analyse_writes_the_three_tables(store):
    summary = analyse(store, CONFIG, now=5.0)
    assert summary["groups"] == 2 and summary["runs"] == 16 and summary["slow"] == 2
    assert summary["labels"] == {"sensitive": 1, "not exposed": 1}
    with store._snapshot() as db:
        victim = load_contention(db, VICTIM)
        aggressor = load_contention(db, AGGRESSOR)
        runs = {
            r: (d, s, json.loads(c))
            for r, d, s, c in db.execute("SELECT run, slowdown, slow, cause FROM run_contention")
        }
        pairs = {
            (r[0], r[1]): (r[2], r[3])
            for r in db.execute("SELECT victim, aggressor, coef, runs FROM label_conflicts")
        }
    assert victim["label"] == "sensitive" and victim["n"] == 8
    assert victim["rho"] == pytest.approx(scipy.stats.spearmanr(LOADS, TIMES).statistic)
    assert victim["q"] == victim["p"]  # one group tested: BH leaves its p
    assert victim["computed_at"] == 5.0 and victim["words"].startswith("about ")
    # the aggressor: every run met 0 B/s; all N:1; metadata > 300/s in 4 of 8 (half: a trait);
    # bandwidth: its run 100 carried 80 % of the others' bytes beside a slow run
    assert aggressor["label"] == "not exposed" and aggressor["traits"] == ["n1", "metadata", "bandwidth"]
    # baseline: the four runs at load 0 (time 1.0); slow from 1.25x (sigma 0)
    assert [runs[i][1] for i in range(8)] == [0, 0, 0, 0, 0, 0, 1, 1]
    assert runs[6][0] == 2.0 and runs[5][2] is None
    assert runs[6][2] == {
        "kind": "run", "run": 100, "share": 0.8, "others": 2, "traits": ["n1", "metadata", "bandwidth"],
        "job_id": "8000", "group_key": AGGRESSOR, "uid": 2, "application": "/bin/agg",
    }  # fmt: skip
    # run 7: four others of 0.25 each; its load 5e7 is above the 95th percentile (4.65e7)
    assert runs[7][2]["kind"] == "many jobs at once" and runs[7][2]["p95_load"] == pytest.approx(4.65e7)
    # victims took their group's usual labels, the aggressors their own; every pair met fewer
    # than contention_pair_min_runs = 3 victim runs: null, never 0
    assert pairs[("read_on_start", "write_on_end")] == (None, 2)  # runs 6 and 7
    assert pairs[("read_on_start", "read_on_start")] == (None, 1)  # run 5 beside run 6
    # only the sensitive application's runs are victims: the aggressor ("not exposed") is no
    # victim row, whatever its runs' slowdowns
    assert set(pairs) == {("read_on_start", a) for a in ("read_on_start", "write_on_end")}


def test_prune_drops_the_runs_rows(store):
    analyse(store, CONFIG)
    store.prune(keep=7)
    with store._snapshot() as db:
        left = {row[0] for row in db.execute("SELECT run FROM run_contention")}
    assert 0 not in left and 100 not in left and len(left) == 14


def test_analysing_again_replaces_the_rows(store):
    analyse(store, CONFIG, now=1.0)
    analyse(store, CONFIG, now=2.0)
    with store._snapshot() as db:
        assert tuple(db.execute("SELECT count(*), min(computed_at) FROM app_contention").fetchone()) == (
            2,
            2.0,
        )


def test_the_lookup_answer_carries_the_label_and_traits(store):
    from mosaic.service.lookup_view import render

    with store._atomic() as db:
        for key in (VICTIM, AGGRESSOR):
            uid, app = key.split(":", 1)
            db.execute(
                "INSERT INTO applications (group_key, uid, application, runs, representative) "
                "VALUES (?, ?, ?, 8, 'x')",
                (key, int(uid), app),
            )
    before = store.application(1, "/bin/victim")
    assert before is not None and before["contention"] is None  # not computed yet
    analyse(store, CONFIG, now=3.0)
    victim, aggressor = store.application(1, "/bin/victim"), store.application(2, "/bin/agg")
    assert victim["contention"]["label"] == "sensitive" and victim["contention"]["computed_at"] == 3.0
    text = render(victim)
    assert "file-system load: sensitive over 8 runs (Spearman 0.93, q 0." in text
    assert ": about " in text and "x at the load of a busy hour" in text
    assert "aggressor traits: n1, metadata, bandwidth" in render(aggressor)
    assert "file-system load: not exposed over 8 runs\n" in render(aggressor)


def test_a_jobs_runs_carry_their_slowdown_and_a_cause_without_another_users_identity(store):
    assert store.job("7006")[0]["contention"] is None  # not analysed yet
    analyse(store, CONFIG)
    [slow] = store.job("7006")
    assert slow["contention"] == {
        "slowdown": 2.0,
        "slow": True,
        "cause": {"kind": "run", "share": 0.8, "others": 2, "traits": ["n1", "metadata", "bandwidth"],
                  "job": "another job"},
    }  # fmt: skip
    [calm] = store.job("7001")
    assert calm["contention"] == {"slowdown": 1.0, "slow": False, "cause": None}


def test_the_application_page_scatter_and_facts(store):
    from mosaic.interference.page import load_chart, year_section

    with store._snapshot() as db:
        assert load_chart(db, VICTIM)[0] is None  # not analysed yet
    summary = analyse(store, CONFIG)
    with store._snapshot() as db:
        chart, said = load_chart(db, VICTIM)
    assert chart["x"] == [0.0, 0.0, 0.0, 0.0, 2.0, 3.0, 40.0, 50.0]  # MB/s, sorted
    assert [s["label"] for s in chart["series"]] == [
        "runs",
        "fit",
        "slope's 95 % interval",
        "slope's 95 % interval",
    ]
    assert chart["series"][0]["values"] == TIMES and chart["series"][0]["style"] == "points"
    assert "<strong>sensitive</strong> over 8 measured runs; Spearman 0.93" in said
    assert "2 slow runs" in said
    assert "0 conflicting pairs" in year_section({"contention": summary})
    assert year_section({"contention": {"status": "skipped"}}) is None


def test_empty_contract_tables_give_empty_results(tmp_path):
    with Store(tmp_path / "e.sqlite") as empty:
        fill(empty)
        out = analyse(empty, CONFIG)
    assert out["status"] == "ok" and out["groups"] == 0 and out["runs"] == 0 and out["matrix"]["pairs"] == []


def test_unknown_times_and_loads_are_left_out_and_counted(tmp_path):
    rows = _rows()
    rows["performance"][0] = (0, VICTIM, 1e9, None, 10.0, "N:N", None)  # time unknown
    rows["load"] = rows["load"][1:]  # run 0 has no load either
    with Store(tmp_path / "u.sqlite") as store:
        fill(store, **rows)
        analyse(store, CONFIG)
        with store._snapshot() as db:
            assert load_contention(db, VICTIM)["label"] == "not enough runs"  # 7 of 8 measured
        with store._atomic() as db:  # run 1's log is partial: its time a lower bound, as unknown
            db.execute("UPDATE run_performance SET lower_bound = 1 WHERE run = 1")
        analyse(store, CONFIG)
        with store._snapshot() as db:
            victim = load_contention(db, VICTIM)
            body = json.loads(
                db.execute("SELECT body FROM app_contention WHERE group_key = ?", (VICTIM,)).fetchone()[0]
            )
    assert victim["label"] == "not enough runs" and victim["n"] == 6 and body["unmeasured"] == 2


def test_a_failure_is_reported_and_never_raised(store):
    from mosaic.interference.analyse import analyse_safely

    with store._atomic() as db:
        db.execute("DROP TABLE run_overlaps")
        db.execute("CREATE VIEW run_overlaps AS SELECT 1 AS run, 2 AS other, 'x' AS fs")  # no bytes column
    out = analyse_safely(store, CONFIG)
    assert out["status"] == "failed" and out["reason"].startswith("OperationalError: no such column: bytes")


def test_a_run_far_below_its_group_s_bytes_has_no_comparable_time():
    """At exactly 1 % of the group's median bytes a run counts; just below, its time is unknown
    (the contention year's test runs: 100-2,594x their group's time per byte)."""
    io_time = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    moved = np.array([100.0, 100.0, 100.0, 1.0, 0.99, 50.0, 0.0])  # group a: median 100; b: 25
    out = comparable_time(io_time, moved, [("a", slice(0, 5)), ("b", slice(5, 7))], 0.01)
    assert np.array_equal(np.isnan(out), [False, False, False, False, True, False, True])
    assert out[:4].tolist() == [1.0, 2.0, 3.0, 4.0] and out[5] == 6.0


def test_no_victim_rows_without_a_sensitive_application(tmp_path):
    """The victim's long runs (6 and 7) met no load of their own (its loads reversed: the
    high times at 0 B/s), so its Spearman says nothing: not sensitive. Its runs still have
    slowdowns and 6 and 7 overlap the aggressor, and with contention_pair_min_runs = 1 they
    would fit its pairs; as no application is sensitive, no label pair has a victim row, so none
    is fitted, let alone conflicting (before 2026-12-02 the plain 3,000-log sample year got
    four conflicting pairs this way, "+3,758 to their slowdown per 100 MB/s")."""
    rows = _rows()
    reversed_loads = LOADS[::-1]
    rows["load"] = [(i, "/scratch", 0.0, reversed_loads[i], 0.0, 1, 10.0) for i in range(8)] + rows["load"][
        8:
    ]
    config = Config(contention_min_runs=8, contention_pair_min_runs=1)
    with Store(tmp_path / "store.sqlite") as opened:
        fill(opened, **rows)
        with opened._atomic() as db:
            db.execute("INSERT INTO profile_label_sets VALUES (?, ?, ?)", (VICTIM, '["read_on_start"]', 8))
        summary = analyse(opened, config, now=5.0)
        with opened._snapshot() as db:
            victim = load_contention(db, VICTIM)
            measured = db.execute(
                "SELECT count(*) FROM run_contention WHERE run < 100 AND slowdown IS NOT NULL"
            ).fetchone()[0]
            fitted = db.execute("SELECT count(*) FROM label_conflicts").fetchone()[0]
    assert victim["label"] != "sensitive" and "sensitive" not in summary["labels"]
    assert measured == 8  # its runs have slowdowns all the same
    assert fitted == 0
