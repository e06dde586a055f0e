"""A 200 on ``?store=true`` means stored: visible to every other process, and kept
through a ``kill -9`` of the server, whoever else opens the store meanwhile.

Until this test, ``/healthz``, lookups and posts opened and closed the store file
with a plain ``open()``; closing any descriptor of a file drops all of the
process's POSIX locks on it, SQLite's included. The next process to close its
own connection (an ordinary ``mosaic lookup --store``) then believed itself the
last one, checkpointed and deleted ``-wal`` and ``-shm`` under the server, whose
later posts went into the deleted WAL: answered 200, seen by no other process,
gone after a ``kill -9``. Every part here is real: the server, the lookups and
the batch run are processes of their own, and the count is a fresh sqlite3
reader's.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.service.conftest import MOSAIC, TOKEN, launch, make_log, stop_server, stored_jobs, wait_ready

UID, APP = 7300, "/apps/lmp"
BATCH_JOBS = range(7400, 7404)  # logs of the `mosaic run` into the server's folder
POSTS_PER_STEP = 3


def look_up(store: Path) -> None:
    """What an operator does beside a running server: open the store, read, close."""
    found = subprocess.run(
        [str(MOSAIC), "lookup", "--uid", str(UID), "--app", APP, "--store", str(store)],
        capture_output=True,
        timeout=60,
    )
    assert found.returncode in (0, 1), found.stderr


def test_every_acknowledged_post_survives_lookups_a_batch_run_and_kill_9(tmp_path):
    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    out.mkdir()
    for job in BATCH_JOBS:
        (logs / f"job{job}.darshan").write_bytes(make_log(job_id=job, uid=UID + 1))
    server = wait_ready(launch(tmp_path, TOKEN, store=out / "store.sqlite"))
    acknowledged: list[str] = []
    jobs = iter(range(7000, 7100))
    try:
        with server.client() as client:

            def post_some() -> None:
                for job in [next(jobs) for _ in range(POSTS_PER_STEP)]:
                    response = client.post(
                        "/v1/categorize", params={"store": "true"}, content=make_log(job_id=job, uid=UID)
                    )
                    assert response.status_code == 200, response.text
                    acknowledged.append(str(job))
                assert client.get("/healthz").status_code == 200  # the old code's open()/close()

            post_some()
            look_up(server.store)  # closing its connection, the old code's lookup deleted the WAL
            post_some()
            assert set(acknowledged) <= stored_jobs(server.store)
            batch = subprocess.Popen(
                [str(MOSAIC), "run", str(logs), "--out", str(out), "--workers", "0", "--quiet"],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            post_some()
            look_up(server.store)
            post_some()
            output, _ = batch.communicate(timeout=120)
            assert batch.returncode == 0, output.decode(errors="replace")
            post_some()
            look_up(server.store)
            post_some()
        before_kill = stored_jobs(server.store)
        server.process.kill()
        server.process.wait(timeout=30)
        after_kill = stored_jobs(server.store)
    finally:
        stop_server(server)
    expected = set(acknowledged) | {str(job) for job in BATCH_JOBS}
    assert len(acknowledged) == 6 * POSTS_PER_STEP
    assert expected - before_kill == set()
    assert expected - after_kill == set()
