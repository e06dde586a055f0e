"""Backing up, restoring and pruning the store beside a running ``mosaic serve`` while
posts arrive: every part real (the server, the `mosaic store` commands and the
posting client are processes or threads of their own; the checks are a fresh
sqlite3 connection's)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import threading

import pytest

from tests.service.conftest import MOSAIC, TOKEN, launch, make_log, stop_server, stored_jobs, wait_ready

UID, APP = 7500, "/apps/upkeep"


def log(job: int) -> bytes:
    return make_log(job_id=job, uid=UID, cmdline=APP)


class Poster(threading.Thread):
    """Posts logs of new job ids with store=true until stopped; keeps what was acknowledged."""

    def __init__(self, server, first_job: int) -> None:
        super().__init__(daemon=True)
        self.server, self.next_job = server, first_job
        self.acknowledged: list[str] = []
        self.failed: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        with self.server.client() as client:
            while not self.stop.is_set():
                job = self.next_job
                self.next_job += 1
                answer = client.post("/v1/categorize", params={"store": "true"}, content=log(job))
                (self.acknowledged if answer.status_code == 200 else self.failed).append(str(job))

    def wait_for(self, count: int) -> None:
        while len(self.acknowledged) < count and self.is_alive():
            self.stop.wait(0.05)


@pytest.fixture
def posting(tmp_path):
    """A server of its own, and a thread posting to it (started, stopped after the test)."""
    server = wait_ready(launch(tmp_path, TOKEN))
    poster = Poster(server, 20000)
    poster.start()
    try:
        yield server, poster
    finally:
        poster.stop.set()
        poster.join(timeout=60)
        stop_server(server)


def mosaic_store(*args: str) -> dict:
    done = subprocess.run([str(MOSAIC), "store", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_backup_while_posting_holds_every_post_acknowledged_before_it_and_restores_in_place(
    tmp_path, posting
):
    server, poster = posting
    poster.wait_for(10)
    before_backup = set(poster.acknowledged)
    copy = mosaic_store("backup", str(server.store), str(tmp_path / "backup.sqlite"))
    poster.wait_for(len(before_backup) + 10)  # posts go on after the backup
    poster.stop.set()
    poster.join(timeout=60)
    assert poster.failed == []
    assert not (tmp_path / "backup.sqlite-wal").exists()  # one self-contained file
    backup = sqlite3.connect(tmp_path / "backup.sqlite")
    assert backup.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    assert backup.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    backup.close()
    in_backup = stored_jobs(tmp_path / "backup.sqlite")
    assert before_backup <= in_backup and copy["runs"] == len(in_backup)
    later = set(poster.acknowledged) - in_backup
    assert later and later <= stored_jobs(server.store)
    # restore in place under the running server: it answers from the backup from then on
    mosaic_store("restore", str(tmp_path / "backup.sqlite"), str(server.store))
    with server.client() as client:
        assert client.get("/healthz").status_code == 200
        known = client.get(f"/v1/jobs/{min(before_backup)}")
        assert known.status_code == 200
        assert client.get(f"/v1/jobs/{max(later)}").status_code == 404
        answer = client.get("/v1/applications", params={"uid": UID, "app": APP}).json()
        assert answer["runs"] == len(in_backup)
        again = client.post("/v1/categorize", params={"store": "true"}, content=log(int(max(later))))
        assert again.status_code == 200
    assert max(later) in stored_jobs(server.store)


def test_prune_while_serving_keeps_the_service_answering_and_the_counts_right(posting):
    server, poster = posting
    poster.wait_for(30)
    pruned = mosaic_store("prune", str(server.store), "--keep", "5")
    poster.wait_for(len(poster.acknowledged) + 5)
    poster.stop.set()
    poster.join(timeout=60)
    assert poster.failed == [] and pruned["dropped"]["runs"] >= 25
    assert pruned["store"]["free_bytes"] == 0
    with server.client() as client:
        answer = client.get("/v1/applications", params={"uid": UID, "app": APP}).json()
    # 5 kept, then every post acknowledged after the prune began counted on top
    stored = stored_jobs(server.store)
    assert answer["runs"] == answer["profile"]["runs"] == len(stored)
    assert len(stored) == len(poster.acknowledged) - pruned["dropped"]["runs"]
