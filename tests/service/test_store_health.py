"""A store deleted, replaced or damaged under a running `mosaic serve`.

SQLite keeps using the file it opened, so before the fix a deleted store still
answered lookups, recorded posts into a file nobody would see again (200) and
/healthz said ok; a truncated one answered lookups with a plain-text 500.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx
import pytest

from mosaic.corpus.store import Store
from mosaic.errors import ApiError

UID, APP = 6161, "/apps/lmp"


def delete(store: Path) -> None:
    for path in store.parent.glob(store.name + "*"):  # as `rm store.sqlite*` would
        path.unlink()


def replace(store: Path) -> None:
    other = store.with_name("other.sqlite")
    Store(other).close()
    os.replace(other, store)


def truncate(store: Path) -> None:
    os.truncate(store, 0)


def assert_unavailable(response, words: str) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"].startswith("application/json")
    answer = response.json()
    assert (answer["status"], answer["error"]) == ("error", ApiError.STORE_UNAVAILABLE)
    assert words in answer["detail"]


@pytest.mark.parametrize(
    "damage, words",
    [(delete, "was deleted"), (replace, "was replaced"), (truncate, "no SQLite header")],
    ids=["deleted", "replaced", "truncated"],
)
def test_a_store_gone_under_the_server_is_reported_and_never_written(
    fresh_server, log_factory, damage, words
):
    log = log_factory(job_id=6001, uid=UID)
    with fresh_server.client() as client:
        assert client.post("/v1/categorize", params={"store": "true"}, content=log).status_code == 200
        assert client.get("/healthz").json()["status"] == "ok"
        damage(fresh_server.store)
        assert_unavailable(client.get("/healthz"), words)
        assert client.head("/healthz").status_code == 503
        assert_unavailable(client.get("/v1/applications", params={"uid": UID, "app": APP}), words)
        assert_unavailable(client.get("/v1/jobs/6001"), words)
        late = log_factory(job_id=6002, uid=UID)
        assert_unavailable(client.post("/v1/categorize", params={"store": "true"}, content=late), words)
        assert client.post("/v1/categorize", content=late).status_code == 200  # no store involved
    assert fresh_server.process.poll() is None


def test_a_store_cut_in_the_middle_answers_json(fresh_server, log_factory):
    """Damage past the header: the cheap check passes; what a query meets is a JSON 503."""
    with fresh_server.client() as client:
        for job in range(6100, 6140):
            log = log_factory(job_id=job, uid=UID + job)
            assert client.post("/v1/categorize", params={"store": "true"}, content=log).status_code == 200
        store = fresh_server.store
        with Store(store) as checkpointed:  # every page into the main file, then cut it in half
            checkpointed._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        os.truncate(store, os.path.getsize(store) // 2)
        statuses = set()
        for job in range(6100, 6140):
            response = client.get("/v1/applications", params={"uid": UID + job, "app": APP})
            assert response.headers["content-type"].startswith("application/json"), response.text
            statuses.add(response.status_code)
            if response.status_code == 503:
                assert response.json()["error"] == ApiError.STORE_UNAVAILABLE
    assert 503 in statuses and statuses <= {200, 503}


def test_a_store_replaced_by_a_fifo_is_unavailable_and_the_server_still_stops(fresh_server, log_factory):
    """The old check opened the path, and opening a FIFO for reading waits
    for a writer: /healthz, /metrics and every lookup hung with the event loop, and SIGTERM
    was never acted on. Now the path is only stat'ed: a 503 at once, the rest answers."""
    store = fresh_server.store
    with fresh_server.client() as client:
        assert (
            client.post("/v1/categorize", params={"store": "true"}, content=log_factory()).status_code == 200
        )
        os.replace(store, store.with_name("aside.sqlite"))
        os.mkfifo(store)
        client.timeout = httpx.Timeout(5.0)
        assert_unavailable(client.get("/healthz"), "not a regular file")
        assert_unavailable(client.get("/v1/jobs/6001"), "not a regular file")
        assert client.get("/metrics").status_code == 200
    fresh_server.process.terminate()
    assert fresh_server.process.wait(timeout=15) == -signal.SIGTERM  # uvicorn re-raises it once stopped
    assert "Finished server process" in fresh_server.log.read_text()  # a clean stop, not a kill
