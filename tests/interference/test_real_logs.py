"""SPEC 3.11 on the 34 real darshan-runtime logs of jobs that shared one throttled file
system (tests/data/darshan-logs-interference).

The interim test builds the per-run inputs from darshan-util's own measure (POSIX
agg_time_by_slowest of darshan-parser --perf) and the truth's wall windows; the
acceptance test builds them through ``mosaic run``: the per-run performance (SPEC 3.9) and
the load on /mnt/mosaic-ifs (SPEC 3.10) that the run computes itself."""

import json
from pathlib import Path

from mosaic.config import Config
from mosaic.corpus.store import Store
from mosaic.interference.analyse import analyse
from mosaic_testing.contention_tables import (
    INTERFERENCE,
    THROTTLED,
    fill,
    interference_rows,
    interference_truth,
)

CONFIG = Config(contention_min_runs=8)
VICTIM, AGGRESSOR, CONTROL = (
    f"0:/opt/mosaic-ifs/bin/{app}" for app in ("lmp_restart", "hdf_bulk", "ram_ckpt")
)


def _results(store):
    with store._snapshot() as db:
        apps = {row[0]: row for row in db.execute("SELECT group_key, label, n, rho, q FROM app_contention")}
        runs = {row[0]: (row[1], bool(row[2]), json.loads(row[3])) for row in
                db.execute("SELECT run, slowdown, slow, cause FROM run_contention")}  # fmt: skip
    return apps, runs


def _check(apps, runs, by_job):
    truth = interference_truth()
    assert apps[VICTIM][1] == "sensitive"
    assert apps[CONTROL][1] in ("not exposed", "insensitive")
    victims = [t for t in truth if t["app"] == "lmp_restart"]
    alone = [t for t in victims if not t["overlaps"]]
    assert alone and all(not runs[by_job[t["job_id"]]][1] for t in alone)
    slow = [t for t in victims if runs[by_job[t["job_id"]]][1]]
    assert slow
    named = 0
    for t in slow:
        cause = runs[by_job[t["job_id"]]][2]
        if cause["kind"] == "run":
            named += 1
            assert int(cause["job_id"]) in t["overlaps"]
            if t["aggressors"]:
                assert cause["application"] == "/opt/mosaic-ifs/bin/hdf_bulk"
                assert "n1" in cause["traits"]
    assert named >= 1
    return slow


def test_interim_inputs_from_darshan_util_and_wall_windows(tmp_path):
    rows = interference_rows()
    with Store(tmp_path / "store.sqlite") as store:
        fill(store, **rows)
        summary = analyse(store, CONFIG, now=1.0)
        apps, runs = _results(store)
    assert summary["status"] == "ok" and summary["groups"] == 3
    slow = _check(apps, runs, {t["job_id"]: t["job_id"] for t in interference_truth()})
    # every victim run beside an aggressor is slow (5.16-9.61 s against 3.11-3.24 s alone)
    victims = [t for t in interference_truth() if t["app"] == "lmp_restart"]
    assert {t["job_id"] for t in victims if t["aggressors"]} <= {t["job_id"] for t in slow}
    assert apps[VICTIM][2] == 18 and apps[VICTIM][3] > 0.9  # rho of the 18 runs, measured 0.92
    # the control's runs all met 0 B/s on their own file system
    assert apps[CONTROL][1] == "not exposed"


def test_acceptance_through_mosaic_run(tmp_path):
    from mosaic.corpus import pipeline, timeline

    config = Config(contention_min_runs=8, shared_file_systems=(THROTTLED,))
    out = Path(tmp_path / "out")
    pipeline.run([INTERFERENCE / "logs"], out, config, workers=0)
    with Store(out / "store.sqlite") as store:
        timeline.compute_loads(store)  # a no-op where mosaic run already did it
        analyse(store, config)
        apps, runs = _results(store)
        with store._snapshot() as db:
            by_job = {int(job): run for run, job in db.execute("SELECT run, job_id FROM jobs")}
    _check(apps, runs, by_job)
