"""The conflict hint on a real Slurm (mosaic_testing.slurm): a job submitted while a known
aggressor runs gets `mosaic_io_conflict=high` in its comment from the shipped cli_filter.lua, run
by Slurm's own cli_filter/lua plugin. The registry row of the aggressor is seeded in the service's
store directly (tests/slurm/test_running.py tests the prolog that writes it), as are the
signatures, the sensitivity and one file system for both (seeded); they are removed after, so
the other tests of the cluster see the store as they left it. (New: fails on e627ff0.)"""

from __future__ import annotations

import json
import pwd
import sqlite3
import time

import pytest

from mosaic_testing.contracts import RUNNING_COLUMNS, signature_body
from mosaic_testing.slurm import SlurmCluster

pytestmark = pytest.mark.slow
ALICE = pwd.getpwnam("nobody")
AGGRESSOR_UID, AGGRESSOR = 7070, "/opt/bulk/hdf_bulk"


def test_a_job_submitted_beside_an_aggressor_gets_a_conflict_hint(slurm_cluster: SlurmCluster):
    cluster = slurm_cluster
    store = cluster.service.folder / "store.sqlite"
    victim = f"{ALICE.pw_uid}:{cluster.application}"
    aggressor = f"{AGGRESSOR_UID}:{AGGRESSOR}"
    db = sqlite3.connect(store, timeout=30)
    try:
        with db:
            # both on one seeded file system: the victim's other stored runs (of the cluster's
            # earlier tests) weigh nothing beside its 1e9 I/O seconds there
            for run, group, seconds in ((-88001, aggressor, 1.0), (-88002, victim, 1e9)):
                db.execute(
                    "INSERT OR REPLACE INTO jobs (run, file, job_id, group_key, start) "
                    "VALUES (?, ?, ?, ?, '')",
                    (run, f"seeded{run}", str(-run), group),
                )
                db.execute(
                    "INSERT OR REPLACE INTO run_load (run, fs, read_rate, write_rate, meta_rate, "
                    "other_jobs, io_seconds, computed_at) VALUES (?, '/seeded', 0, 0, 0, 0, ?, 0)",
                    (run, seconds),
                )
            db.executemany(
                "INSERT OR REPLACE INTO signatures (group_key, runs, body, computed_at) VALUES (?, 8, ?, ?)",
                [
                    # 192 MB/s against the victim's slope of 1 / 256 MB/s: 1.75x, clear of the
                    # 1.5x of high (128 MB/s gave 1.5 exactly, and medium when the phase's
                    # average over bins placed from "now" came out a rounding under it)
                    (aggressor, json.dumps(signature_body([0] * 4, [192e6] * 4, 3600.0)), time.time()),
                    (victim, json.dumps(signature_body([0, 0], [0, 256e6], 40.0)), time.time()),
                ],
            )
            db.execute(
                "INSERT OR IGNORE INTO applications (group_key, uid, application, runs, last_seen, "
                "representative, total_bytes, run_time, categories) VALUES (?, ?, ?, 8, '', '', 0, 0, '[]')",
                (victim, ALICE.pw_uid, str(cluster.application)),
            )
            db.execute(
                "INSERT OR REPLACE INTO app_contention (group_key, label, n, slope) "
                "VALUES (?, 'sensitive', 30, ?)",
                (victim, 1 / 256e6),
            )
            db.execute(
                f"INSERT OR REPLACE INTO running_jobs ({RUNNING_COLUMNS}) "
                "VALUES ('88001', ?, ?, ?, ?, NULL, 'n1', 2, 'running', NULL, ?)",
                (AGGRESSOR_UID, AGGRESSOR, aggressor, time.time() - 10, time.time()),
            )
        script = f"#!/bin/bash\n#SBATCH --job-name=victim\nsrun {cluster.application} -in in.ckpt\n"
        job, filtered = cluster.submit(script, uid=ALICE.pw_uid)
        shown = cluster.show(job)  # the comment holds several words: "Comment=... " up to the next field
        cluster.stage(job, {})  # let its application go on (no log to write: it ends at once)
        cluster.wait_ended(job)
        assert f"mosaic: {cluster.application} has I/O conflict risk high" in filtered, filtered
        assert "mosaic_io_conflict=high" in shown.split(), shown
    finally:
        with db:
            db.execute("DELETE FROM running_jobs WHERE job_id = '88001'")
            db.execute("DELETE FROM run_load WHERE run IN (-88001, -88002)")
            db.execute("DELETE FROM jobs WHERE run IN (-88001, -88002)")
            db.execute("DELETE FROM signatures WHERE group_key IN (?, ?)", (victim, aggressor))
            db.execute("DELETE FROM app_contention WHERE group_key = ?", (victim,))
        db.close()
