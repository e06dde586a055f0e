"""POST /v1/running/start and /end and GET /v1/running on a real `mosaic serve` process with
a read and a separate write (operator) token: who may post, the visibility rule, clear
answers to bad posts, a restart, and 10,000 starts in a burst against a bounded registry."""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
import time

import httpx
import pytest

from .conftest import launch, stop_server, wait_ready

READ, WRITE = "read-token-of-the-registry", "write-token-of-the-registry"
MAX_JOBS = 4000
BURST, CONNECTIONS, PIPELINED = 10_000, 8, 20


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    server = wait_ready(
        launch(tmp_path_factory.mktemp("registry"), READ, write_token=WRITE, running_max_jobs=MAX_JOBS)
    )
    try:
        yield server
    finally:
        stop_server(server)


def post(server, route: str, token: str = WRITE, **params) -> httpx.Response:
    with server.client(token) as client:
        return client.post(f"/v1/running/{route}", params=params)


def listed(server, token: str = WRITE, **params) -> dict:
    with server.client(token) as client:
        answer = client.get("/v1/running", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_posts_need_the_write_token(registry):
    assert post(registry, "start", READ, job_id="1", uid=5).status_code == 401
    assert post(registry, "end", READ, job_id="1", uid=5).status_code == 401
    assert post(registry, "start", "wrong", job_id="1", uid=5).status_code == 401


def test_a_job_seen_by_the_operator_by_its_user_and_by_others(registry):
    now = time.time()
    started = post(
        registry,
        "start",
        job_id="500",
        uid=5,
        application="/apps/a b",
        start=now - 5,
        time_limit="UNLIMITED",
        nodes="n[1-2]",
        tasks=8,
    )
    assert started.status_code == 200 and started.json() == {
        "status": "ok",
        "outcome": "recorded",
        "job_id": "500",
    }
    [job] = [job for job in listed(registry)["jobs"] if job["job_id"] == "500"]
    assert (job["application"], job["time_limit"], job["unlimited"], job["nodes"], job["tasks"]) == (
        "/apps/a b",
        None,
        True,
        "n[1-2]",
        8,
    )
    own = listed(registry, READ, uid=5)
    assert [job["job_id"] for job in own["jobs"]] == ["500"]
    other = listed(registry, READ, uid=6)
    assert other["jobs"] == [] and other["jobs_running"] >= 1
    assert "500" not in str(other) and "/apps/a b" not in str(other)
    assert post(registry, "end", job_id="500", uid=5, end=now).json()["outcome"] == "ended"
    assert not [job for job in listed(registry)["jobs"] if job["job_id"] == "500"]


@pytest.mark.parametrize(
    "params, status, error",
    [
        ({"job_id": "12_3", "uid": 5}, 422, "invalid_request"),  # an array's name, not SLURM_JOB_ID
        ({"job_id": "12", "uid": -1}, 422, "invalid_request"),
        ({"job_id": "12", "uid": 5, "time_limit": "soon"}, 422, "invalid_request"),
        ({"job_id": "12", "uid": 5, "start": "nan"}, 422, "invalid_request"),
        ({"job_id": "12", "uid": 5, "start": time.time() + 86400}, 422, "invalid_request"),
        ({"job_id": "12", "uid": 5, "tasks": 0}, 422, "invalid_request"),
    ],
)
def test_bad_starts_get_a_clear_answer(registry, params, status, error):
    answer = post(registry, "start", **params)
    assert (answer.status_code, answer.json()["error"]) == (status, error), answer.text


def test_duplicate_forged_late_and_endless_posts(registry):
    now = time.time()
    first = {"job_id": "600", "uid": 5, "start": now - 100, "time_limit": "10"}
    assert post(registry, "start", **first).json()["outcome"] == "recorded"
    assert post(registry, "start", **first).json()["outcome"] == "duplicate"
    forged = post(registry, "start", **{**first, "uid": 0})
    assert (forged.status_code, forged.json()["error"]) == (409, "job_mismatch")
    assert post(registry, "end", job_id="600", uid=0).status_code == 409
    assert post(registry, "end", job_id="600", uid=5, end=now - 50).json()["outcome"] == "ended"
    late = post(registry, "start", **first)  # spooled through an outage, after its end
    assert (late.status_code, late.json()["error"]) == (409, "job_finished")
    assert "after it" in late.json()["detail"]
    orphan = post(registry, "end", job_id="601", uid=5)
    assert orphan.json()["outcome"] == "ended_without_start"
    ids = [job["job_id"] for job in listed(registry)["jobs"]]
    assert "600" not in ids and "601" not in ids


def test_the_registry_survives_a_restart_of_the_service(tmp_path):
    server = wait_ready(launch(tmp_path, READ, write_token=WRITE))
    try:
        assert post(server, "start", job_id="77", uid=5, time_limit="60").status_code == 200
    finally:
        stop_server(server)
    again = wait_ready(launch(tmp_path, READ, write_token=WRITE))
    try:
        assert [job["job_id"] for job in listed(again)["jobs"]] == ["77"]
    finally:
        stop_server(again)


def burst(url: str, count: int, base: int) -> list[tuple[int, bytes]]:
    """``count`` starts sent at once over CONNECTIONS keep-alive connections, PIPELINED
    requests in flight on each (a raw HTTP/1.1 client: httpx's own cost per request would
    be most of the test's time): each answer's status and body, in the order sent."""
    host, port = url.removeprefix("http://").split(":")
    jobs = [base + i for i in range(count)]
    shares = [jobs[i::CONNECTIONS] for i in range(CONNECTIONS)]
    answers: list[list[tuple[int, bytes]]] = [[] for _ in shares]

    def request(job: int) -> bytes:
        return (
            f"POST /v1/running/start?job_id={job}&uid=9&tasks=1 HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {WRITE}\r\nContent-Length: 0\r\n\r\n"
        ).encode()

    def connection(index: int) -> None:
        mine = shares[index]
        with socket.create_connection((host, int(port)), timeout=120) as sock:
            reader = sock.makefile("rb")
            for first in range(0, len(mine), PIPELINED):
                batch = mine[first : first + PIPELINED]
                sock.sendall(b"".join(request(job) for job in batch))
                for _ in batch:
                    status = int(reader.readline().split()[1])
                    length = 0
                    while (line := reader.readline()) not in (b"\r\n", b""):
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    answers[index].append((status, reader.read(length)))

    threads = [threading.Thread(target=connection, args=(i,)) for i in range(CONNECTIONS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [answer for share in answers for answer in share]


def test_ten_thousand_starts_in_a_burst_are_bounded(registry):
    held = listed(registry)["jobs_running"]
    began = time.monotonic()
    answers = burst(registry.url, BURST, 1_000_000)
    seconds = time.monotonic() - began
    print(f"{BURST} starts over {CONNECTIONS} connections: {seconds:.1f} s, {BURST / seconds:.0f}/s")
    statuses = [status for status, _ in answers]
    assert {json.loads(body)["error"] for status, body in answers if status != 200} == {"registry_full"}
    assert len(statuses) == BURST
    assert statuses.count(200) == MAX_JOBS - held
    assert statuses.count(503) == BURST - (MAX_JOBS - held)
    assert listed(registry)["jobs_running"] == MAX_JOBS
    db = sqlite3.connect(registry.store)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT count(*) FROM running_jobs WHERE uid = 9").fetchone()[0] == MAX_JOBS - held
    finally:
        db.close()
