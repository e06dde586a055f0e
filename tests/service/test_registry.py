"""The running-jobs registry (mosaic.service.registry) on a real SQLite store, with hand-set
times: starts and ends, their bad forms, expiry at time limit + grace and after the
UNLIMITED maximum, a restart, pruning, file systems from the load table, and the
visibility rule of GET /v1/running."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from mosaic.config import DEFAULT
from mosaic.corpus.store import Store
from mosaic.errors import ApiError
from mosaic.service.registry import Refusal, record_end, record_start, running, time_limit_seconds, view

NOW = 1_800_000_000.0
GRACE, UNLIMITED_MAX = DEFAULT.running_grace_seconds, DEFAULT.running_unlimited_max_seconds


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "store.sqlite") as opened:
        yield opened


def start(store: Store, job_id: str = "101", uid: int = 5, **given):
    fields = {
        "application": "/apps/a",
        "start": NOW - 1000.0,
        "time_limit": 3600.0,
        "nodes": "n[1-2]",
        "tasks": 4,
        "now": NOW,
        **given,
    }
    return record_start(store, job_id=job_id, uid=uid, **fields)


def ids(store: Store, now: float = NOW) -> list[str]:
    return [job["job_id"] for job in running(store, now)]


def refused(call, *args, **kwargs) -> tuple[int, ApiError]:
    with pytest.raises(Refusal) as caught:
        call(*args, **kwargs)
    return caught.value.status, caught.value.error


@pytest.mark.parametrize(
    "text, seconds",
    [
        (None, None),
        ("UNLIMITED", None),
        ("infinite", None),
        ("30", 1800.0),  # a bare number is minutes, as Slurm reads it
        ("1:30", 90.0),
        ("00:01:00", 60.0),  # scontrol's TimeLimit
        ("01:00:00", 3600.0),
        ("1-0", 86400.0),
        ("1-02:03", 93780.0),
        ("2-00:00:01", 172801.0),
    ],
)
def test_time_limits_in_slurm_s_formats(text, seconds):
    assert time_limit_seconds(text) == seconds


@pytest.mark.parametrize("text", ["abc", "1:2:3:4", "-5", "1-", ""])
def test_a_time_limit_slurm_would_not_write_is_refused(text):
    with pytest.raises(ValueError, match="time_limit"):
        time_limit_seconds(text)


def test_a_job_runs_from_its_start_to_its_end(store):
    assert start(store) == "recorded"
    [job] = running(store, NOW)
    assert job == {
        "job_id": "101",
        "uid": 5,
        "application": "/apps/a",
        "group_key": "5:/apps/a",
        "start_epoch": NOW - 1000.0,
        "time_limit": 3600.0,
        "nodes": "n[1-2]",
        "tasks": 4,
        "state": "running",
        "ended_epoch": None,
        "updated": NOW,
        "expires_epoch": NOW - 1000.0 + 3600.0 + GRACE,
        "file_systems": None,
    }
    assert ids(store, NOW - 1000.0) == ["101"]  # at its start
    assert ids(store, NOW - 1000.5) == []  # before it
    assert record_end(store, job_id="101", uid=5, end=NOW, now=NOW) == "ended"
    assert ids(store) == []
    assert record_end(store, job_id="101", uid=5, end=NOW, now=NOW) == "already_ended"


def test_a_job_whose_end_never_came_leaves_at_its_limit_plus_the_grace(store):
    start(store, "1", time_limit=60.0)
    start(store, "2", time_limit=None)  # UNLIMITED
    began = NOW - 1000.0
    assert ids(store, began + 60.0 + GRACE - 0.001) == ["1", "2"]
    assert ids(store, began + 60.0 + GRACE) == ["2"]  # the edge: gone
    assert ids(store, began + UNLIMITED_MAX - 0.001) == ["2"]
    assert ids(store, began + UNLIMITED_MAX) == []


def test_a_job_without_application_says_so(store):
    start(store, application=None)
    [job] = running(store, NOW)
    assert job["application"] is None and job["group_key"] is None and job["file_systems"] is None
    assert view([job], NOW, True, None)["without_application"] == 1


def test_the_registry_survives_a_restart(tmp_path):
    with Store(tmp_path / "s.sqlite") as first:
        start(first)
    with Store(tmp_path / "s.sqlite") as again:
        assert ids(again) == ["101"]


def test_duplicate_restarted_and_late_starts(store):
    assert start(store) == "recorded"
    assert start(store, start=NOW - 999.5) == "duplicate"  # within a second: the same start
    assert ids(store) == ["101"]
    # a start earlier than the registered one: a stale post
    assert refused(start, store, start=NOW - 2000.0) == (409, ApiError.JOB_FINISHED)
    record_end(store, job_id="101", uid=5, end=NOW - 500.0, now=NOW)
    # a start spooled through an outage that comes after the end it preceded
    assert refused(start, store, start=NOW - 1000.0) == (409, ApiError.JOB_FINISHED)
    assert refused(start, store, start=NOW - 500.0) == (409, ApiError.JOB_FINISHED)  # the edge
    assert ids(store) == []
    assert start(store, start=NOW - 100.0) == "restarted"  # requeued by Slurm after its end
    assert [job["start_epoch"] for job in running(store, NOW)] == [NOW - 100.0]


def test_an_end_without_a_start_is_kept_so_that_a_late_start_is_refused(store):
    assert record_end(store, job_id="7", uid=5, end=NOW - 10.0, now=NOW) == "ended_without_start"
    assert refused(start, store, "7", start=NOW - 20.0) == (409, ApiError.JOB_FINISHED)
    assert ids(store) == []


def test_a_forged_uid_is_refused(store):
    start(store, "101", uid=5)
    assert refused(start, store, "101", uid=6) == (409, ApiError.JOB_MISMATCH)
    assert refused(record_end, store, job_id="101", uid=6, end=NOW, now=NOW) == (409, ApiError.JOB_MISMATCH)
    with store._atomic() as db:  # job 202's Darshan log is stored under uid 8
        db.execute("INSERT INTO jobs (run, file, job_id, group_key) VALUES (1, 'f', '202', '8:/apps/b')")
    assert refused(start, store, "202", uid=9) == (409, ApiError.JOB_CONFLICT)
    assert refused(record_end, store, job_id="202", uid=9, end=NOW, now=NOW) == (409, ApiError.JOB_CONFLICT)
    assert start(store, "202", uid=8) == "recorded"
    assert [(job["job_id"], job["uid"]) for job in running(store, NOW)] == [("101", 5), ("202", 8)]


def test_times_past_the_clock_skew_or_not_times_are_refused(store):
    skew = DEFAULT.running_clock_skew_seconds
    assert start(store, "1", start=NOW + skew) == "recorded"  # the edge: taken
    assert refused(start, store, "2", start=NOW + skew + 1.0) == (422, ApiError.INVALID_REQUEST)
    assert refused(start, store, "3", start=float("nan")) == (422, ApiError.INVALID_REQUEST)
    assert refused(start, store, "4", start=0.0) == (422, ApiError.INVALID_REQUEST)
    assert refused(record_end, store, job_id="1", uid=5, end=NOW + skew + 1.0, now=NOW)[0] == 422


def test_the_registry_is_bounded_and_expired_jobs_do_not_count(store):
    config = DEFAULT.replace(running_max_jobs=2)
    start(store, "1", config=config, time_limit=60.0, start=NOW - 60.0 - GRACE)  # expired at NOW
    start(store, "2", config=config)
    assert start(store, "3", config=config) == "recorded"  # 1 has expired: 2 held
    assert refused(start, store, "4", config=config) == (503, ApiError.REGISTRY_FULL)
    record_end(store, job_id="2", uid=5, end=NOW, now=NOW)
    assert start(store, "4", config=config) == "recorded"
    assert ids(store) == ["3", "4"]


def test_prune_drops_what_no_longer_runs_after_the_keep(store):
    keep = DEFAULT.running_keep_ended_seconds
    start(store, "1", start=1000.0, now=1000.0)  # UNLIMITED? no: 3600 s; expired long ago
    start(store, "2", now=NOW)
    record_end(store, job_id="3", uid=5, end=NOW - keep - 1.0, now=NOW)  # ended past the keep
    record_end(store, job_id="4", uid=5, end=NOW - 10.0, now=NOW)  # ended lately: kept
    with store._atomic() as db:
        from mosaic.corpus import running_jobs

        assert running_jobs.prune(db, NOW, None, keep, GRACE, UNLIMITED_MAX) == 2
        left = [row[0] for row in db.execute("SELECT job_id FROM running_jobs ORDER BY job_id")]
        assert left == ["2", "4"]
        # --before: ended rows that started (or ended) before it go too; a running one never
        assert running_jobs.prune(db, NOW, "2100-01-01", keep, GRACE, UNLIMITED_MAX) == 1
        assert [row[0] for row in db.execute("SELECT job_id FROM running_jobs")] == ["2"]


def test_store_prune_prunes_the_registry(tmp_path):
    now = time.time()
    with Store(tmp_path / "s.sqlite") as opened:
        record_end(opened, job_id="3", uid=5, end=1000.0, now=1000.0)  # ended in 1970
        start(opened, "2", start=1000.0, now=1000.0, time_limit=None)  # UNLIMITED, expired in 1970
        start(opened, "1", start=now - 10.0, now=now)  # running now
        assert opened.prune(keep=5)["runs"] == 0  # no --before: past running_keep_ended_seconds
        assert [
            row[0] for row in sqlite3.connect(opened.path).execute("SELECT job_id FROM running_jobs")
        ] == ["1"]


def add_load(store: Store, run: int, group_key: str, fs: str) -> None:
    """A run of the group with I/O on ``fs``, as the file-system load's table holds it."""
    with store._atomic() as db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS run_load (run INTEGER, fs TEXT, read_rate REAL, write_rate REAL, "
            "meta_rate REAL, other_jobs INTEGER, io_seconds REAL, computed_at REAL, PRIMARY KEY (run, fs))"
        )
        db.execute(
            "INSERT INTO jobs (run, file, job_id, group_key) VALUES (?, ?, ?, ?)",
            (run, f"f{run}", f"9{run}", group_key),
        )
        db.execute("INSERT INTO run_load (run, fs) VALUES (?, ?)", (run, fs))


def test_per_file_system_where_the_profile_names_one_and_the_visibility_rule(store):
    add_load(store, 1, "5:/apps/a", "/scratch")
    add_load(store, 2, "5:/apps/a", "/home")
    add_load(store, 3, "6:/apps/b", "/scratch")
    start(store, "101", uid=5, tasks=4)
    start(store, "102", uid=6, application="/apps/b", tasks=12)
    start(store, "103", uid=7, application="/apps/c", tasks=None)  # no stored run: unknown
    jobs = running(store, NOW)
    assert [job["file_systems"] for job in jobs] == [["/home", "/scratch"], ["/scratch"], None]
    operator = view(jobs, NOW, True, None)
    assert operator["tasks_running"] == 17 and operator["jobs_running"] == 3
    assert operator["file_systems"] == [
        {"file_system": "/home", "jobs": 1, "tasks": 4, "share": 4 / 17},
        {"file_system": "/scratch", "jobs": 2, "tasks": 16, "share": 16 / 17},
    ]
    assert operator["unknown_file_system"] == {"jobs": 1, "tasks": 1}
    assert [job["job_id"] for job in operator["jobs"]] == ["101", "102", "103"]
    assert operator["others"] == []
    # The read token naming uid 5: its own job whole, the others as "another job".
    own = view(jobs, NOW, False, 5)
    assert own["visibility"] == "own jobs"
    assert [job["job_id"] for job in own["jobs"]] == ["101"]
    assert own["others"] == [
        {"job": "another job", "tasks": 12, "share": 12 / 17, "file_systems": ["/scratch"]},
        {"job": "another job", "tasks": 1, "share": 1 / 17, "file_systems": None},
    ]
    text = json.dumps(own)
    assert not any(secret in text for secret in ("102", "103", "/apps/b", "/apps/c", '"uid": 6', '"uid": 7'))
    counts = view(jobs, NOW, False, None)
    assert (
        counts["jobs"] == []
        and len(counts["others"]) == 3
        and counts["file_systems"] == operator["file_systems"]
    )
