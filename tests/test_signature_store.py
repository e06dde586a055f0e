"""Signatures in the store (SPEC 3.12): `mosaic run` keeps every valid run's activity, whose
series each group's signature at its end is built from; lookups carry it, or why there is
none; prune takes both along."""

import json
import sqlite3
from pathlib import Path

import pytest

from mosaic.config import DEFAULT
from mosaic.corpus.pipeline import run
from mosaic.corpus.store import Store
from mosaic.service.lookup_view import render
from mosaic.signature import compute_all, load_signature

LOGS = Path(__file__).parent / "data" / "darshan-logs-interference" / "logs"
VICTIM = "0:/opt/mosaic-ifs/bin/lmp_restart"
PHASE = 2 * 24 * 2**20


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("signatures")
    run([LOGS], out, DEFAULT, workers=0)
    return out


RUNS = "run_performance p JOIN run_activity a USING (run)"


def test_a_run_keeps_every_valid_runs_activity_and_each_groups_signature(out):
    db = sqlite3.connect(out / "store.sqlite")
    counts = dict(db.execute(f"SELECT p.group_key, count(*) FROM {RUNS} GROUP BY p.group_key"))
    assert counts == {
        "0:/opt/mosaic-ifs/bin/hdf_bulk": 8,
        VICTIM: 18,
        "0:/opt/mosaic-ifs/bin/ram_ckpt": 8,
    }
    # the activity of a run is the one its jobs row names, by run identity
    assert db.execute("SELECT count(*) FROM run_activity JOIN jobs USING (run)").fetchone()[0] == 34
    sources = dict(db.execute("SELECT source, count(*) FROM run_activity GROUP BY source"))
    assert sources == {"dxt": 15, "heatmap": 19}  # 15 of the 34 jobs ran with DXT
    rows = db.execute("SELECT group_key, runs, body FROM signatures ORDER BY group_key").fetchall()
    assert [row[0] for row in rows] == sorted(counts)
    victim = json.loads(dict((row[0], row[2]) for row in rows)[VICTIM])
    writes = [b for b in victim["bursts"] if b["direction"] == "write"]
    assert len(writes) == 4 and all(b["bytes"] == pytest.approx(PHASE, rel=0.05) for b in writes)
    with Store(out / "store.sqlite") as store:
        assert load_signature(store, VICTIM) == victim
        assert load_signature(store, "0:/nowhere") is None


def test_lookups_carry_the_signature_in_brief(out):
    with Store(out / "store.sqlite") as store:
        answer = store.application(0, "/opt/mosaic-ifs/bin/lmp_restart")
    shape = answer["signature"]
    assert shape["reason"] is None
    assert set(shape["signature"]) == {
        "runs",
        "resolution",
        "run_time",
        "unslowed_run_time",
        "bursts",
        "absolute",
    }
    assert len(shape["signature"]["bursts"]) == 4
    text = render(answer)
    assert "I/O signature of" in text and text.count("50.3 MB") >= 4


def test_prune_drops_the_runs_and_the_next_run_says_why_there_is_none(out, tmp_path):
    path = tmp_path / "store.sqlite"
    path.write_bytes((out / "store.sqlite").read_bytes())
    with Store(path) as store:
        with store._atomic() as db:  # a group with a reason, not a signature: stale once 3 runs are left
            db.execute("DELETE FROM signatures WHERE group_key = ?", (VICTIM,))
            db.execute("INSERT INTO signature_reasons VALUES (?, 'could not be built (...)', 1.0)", (VICTIM,))
        store.prune(keep=3)
        stale = store.application(0, "/opt/mosaic-ifs/bin/lmp_restart")["signature"]["reason"]
        assert stale == "3 runs with their activity stored; a signature needs 5 (signature_min_runs)"
        with store._snapshot() as db:
            left = db.execute(f"SELECT count(*) FROM {RUNS} WHERE p.group_key = ?", (VICTIM,)).fetchone()[0]
        assert left == 3
        reasons = compute_all(store, DEFAULT)
        assert reasons == {}  # groups under signature_min_runs are not tried: their rows go
        assert load_signature(store, VICTIM) is None
        answer = store.application(0, "/opt/mosaic-ifs/bin/lmp_restart")
    assert answer["signature"] == {
        "signature": None,
        "reason": "3 runs with their activity stored; a signature needs 5 (signature_min_runs)",
    }
    assert "no I/O signature: 3 runs with their activity stored" in render(answer)


def test_a_signature_rests_on_the_groups_most_recent_runs(out, tmp_path):
    path = tmp_path / "store.sqlite"
    path.write_bytes((out / "store.sqlite").read_bytes())
    with Store(path) as store:
        compute_all(store, DEFAULT.replace(signature_max_runs=6))
        body = load_signature(store, VICTIM)
        with store._snapshot() as db:
            latest = [
                row[0]
                for row in db.execute(
                    "SELECT job_id FROM jobs WHERE group_key = ? ORDER BY start DESC LIMIT 6", (VICTIM,)
                )
            ]
    assert body["runs"] + body["outliers"] + body["untimed"] == 6
    assert latest == ["70034", "70033", "70031", "70030", "70025", "70023"]  # job ids run in start order
    times = sorted(float(r) for r in body["run_time"].values())
    assert times[0] >= 11.0 and len(set(times)) >= 2  # the p10-p90 of those six, not of all 18


def test_a_damaged_activity_costs_its_group_its_signature_not_the_run(out, tmp_path):
    path = tmp_path / "store.sqlite"
    path.write_bytes((out / "store.sqlite").read_bytes())
    with Store(path) as store:
        with store._atomic() as db:
            db.execute(
                "UPDATE run_activity SET parts = X'00' WHERE run IN "
                "(SELECT run FROM run_performance WHERE group_key = ?)",
                (VICTIM,),
            )
            db.execute("DELETE FROM signatures")  # none kept: every group is built again
        reasons = compute_all(store, DEFAULT)
        assert list(reasons) == [VICTIM]
        assert reasons[VICTIM] == (
            "could not be built (error: Error -5 while decompressing data: incomplete or truncated stream)"
        )
        assert load_signature(store, VICTIM) is None
        assert load_signature(store, "0:/opt/mosaic-ifs/bin/hdf_bulk") is not None
        # the lookup says why, as compute_all said it
        assert store.application(0, "/opt/mosaic-ifs/bin/lmp_restart")["signature"] == {
            "signature": None,
            "reason": reasons[VICTIM],
        }


def test_a_rerun_keeps_the_signatures_whose_runs_did_not_change(out, tmp_path):
    path = tmp_path / "store.sqlite"
    path.write_bytes((out / "store.sqlite").read_bytes())
    with Store(path) as store:

        def stamps():
            with store._snapshot() as db:
                return dict(db.execute("SELECT group_key, computed_at FROM signatures"))

        made = stamps()  # by the run
        assert len(made) == 3
        compute_all(store, DEFAULT, now=2.0)  # same runs, settings and code: every row kept
        assert stamps() == made
        compute_all(store, DEFAULT.replace(signature_burst_level=0.2), now=3.0)  # other settings
        assert set(stamps().values()) == {3.0}
        with store._atomic() as db:  # one run of the victim gone: its group alone is redone
            db.execute(
                "DELETE FROM run_activity WHERE run = "
                "(SELECT min(run) FROM run_performance WHERE group_key = ?)",
                (VICTIM,),
            )
        compute_all(store, DEFAULT.replace(signature_burst_level=0.2), now=4.0)
        assert stamps() == {
            VICTIM: 4.0,
            "0:/opt/mosaic-ifs/bin/hdf_bulk": 3.0,
            "0:/opt/mosaic-ifs/bin/ram_ckpt": 3.0,
        }
