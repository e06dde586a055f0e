"""The real `mosaic serve` over loopback: every endpoint, the token, limits, bad bodies."""

from __future__ import annotations

import gzip
import os
import re
import socket
import threading
from urllib.parse import quote

import pytest

import mosaic
from mosaic.analysis.categorize import categorize_trace
from mosaic.config import Config
from mosaic.darshan import writer
from mosaic.logfile import categorize_file
from mosaic.trace import bounded_name, trace_from_bytes
from mosaic_testing.faulty_service import CRASH_MARKER, DEFECT_MARKER, HANG_MARKER

# make_log()'s defaults, by hand: 200 MB (>= 1e8) written in [1, 5] s of a
# 100 s run, all in q0 (0 > 2 x 0 ... q0 > 2 (q1+q2+q3)); no reads; 4 opens
# and 4 closes, far under 50 requests in any second.
EXPECTED_CATEGORIES = ["read_insignificant", "write_on_start", "metadata_insignificant_load"]
UID, JOB_ID, APP = 4242, "777", "/apps/lmp"
REAL_LOGS = 6  # real logs posted and compared with `mosaic categorize`
HEAD_LIMIT = Config().service_max_header_bytes


def post(client, body: bytes, **kwargs):
    return client.post(
        "/v1/categorize",
        content=body,
        headers={"Content-Type": "application/octet-stream", **kwargs.pop("headers", {})},
        **kwargs,
    )


def assert_error(response, status: int, error: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    answer = response.json()
    assert answer["status"] == "error" and answer["error"] == error
    return answer


def assert_evicted(response, reason: str) -> dict:
    assert response.status_code == 422, response.text
    answer = response.json()
    assert answer["status"] == "evicted" and answer["reason"] == reason, answer
    return answer


def test_categorize_answers_the_trace_object(server, log_bytes):
    with server.client() as client:
        response = post(client, log_bytes)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["status"] == "ok"
    assert answer["categories"] == EXPECTED_CATEGORIES
    assert answer["job"]["uid"] == UID and answer["job"]["job_id"] == JOB_ID
    assert answer["job"]["application"] == APP
    assert answer["group"]["key"] == f"{UID}:{APP}"
    assert answer["file"].startswith("posted/sha256-")
    local = categorize_trace(trace_from_bytes(log_bytes, answer["file"], Config()), Config())
    assert answer == local


def test_gzip_content_encoding_is_accepted(server, log_bytes):
    with server.client() as client:
        response = post(client, gzip.compress(log_bytes), headers={"Content-Encoding": "gzip"})
    assert response.status_code == 200, response.text
    assert response.json()["categories"] == EXPECTED_CATEGORIES


def test_real_logs_match_the_command_line(server, shared_logs):
    small = [path for path in shared_logs if path.stat().st_size < server.max_body]
    small = small[:: max(1, len(small) // REAL_LOGS)]  # spread over the collection's folders
    assert small
    with server.client() as client:
        for path in small:
            response = post(client, path.read_bytes())
            answer = response.json()
            local = categorize_file(path, Config())
            assert response.status_code == (200 if local["status"] == "ok" else 422)
            assert answer["status"] == local["status"]
            assert answer.get("categories") == local.get("categories")
            assert answer.get("reason") == local.get("reason")


def test_store_true_records_groups_and_jobs(server, log_factory):
    uid = 5151
    light = log_factory(write_bytes=2e8, job_id=901, uid=uid)
    heavy = log_factory(write_bytes=3e8, job_id=902, uid=uid, write_window=(90.0, 99.0))
    with server.client() as client:
        query = {"uid": uid, "app": APP}
        assert_error(client.get("/v1/applications", params=query), 404, "unknown_application")
        assert post(client, light).status_code == 200  # store=false: nothing recorded
        assert client.get("/v1/applications", params=query).status_code == 404

        first = post(client, light, params={"store": "true"}).json()
        group = client.get("/v1/applications", params=query).json()
        assert group["runs"] == 1 and group["uid"] == uid and group["application"] == APP
        assert group["categories"] == EXPECTED_CATEGORIES
        assert group["representative"] == first["file"]

        post(client, light, params={"store": "true"})  # the same log again: not a new run
        assert client.get("/v1/applications", params=query).json()["runs"] == 1

        second = post(client, heavy, params={"store": "true"}).json()
        group = client.get("/v1/applications", params=query).json()
        assert group["runs"] == 2
        assert group["representative"] == second["file"]  # 300 MB beats 200 MB
        assert group["categories"] == ["read_insignificant", "write_on_end", "metadata_insignificant_load"]

        job = client.get("/v1/jobs/901").json()
        assert job["job_id"] == "901"
        assert [run["file"] for run in job["runs"]] == [first["file"]]
        assert job["runs"][0]["categories"] == EXPECTED_CATEGORIES
        assert_error(client.get("/v1/jobs/903"), 404, "unknown_job")


def test_token_is_required_except_for_healthz(server):
    with server.client(token=None) as anonymous:
        health = anonymous.get("/healthz").json()
        assert (health["status"], health["workers"], health["version"]) == ("ok", 2, mosaic.__version__)
        for path in ("/metrics", "/v1/jobs/1", "/v1/applications?uid=1&app=x", "/nowhere"):
            response = anonymous.get(path)
            assert_error(response, 401, "unauthorized")
            assert response.headers["www-authenticate"] == "Bearer"
        assert_error(post(anonymous, b"x"), 401, "unauthorized")
    with server.client(token=server.token + "x") as wrong:
        assert_error(wrong.get("/v1/jobs/1"), 401, "unauthorized")
    with server.client(token=server.token[:-1]) as prefix:
        assert_error(prefix.get("/v1/jobs/1"), 401, "unauthorized")
    with server.client() as client:
        assert_error(client.get("/v1/jobs/1"), 404, "unknown_job")


def test_open_server_on_loopback_needs_no_token(open_server, log_bytes):
    with open_server.client() as client:
        assert post(client, log_bytes).status_code == 200
        assert client.get("/metrics").status_code == 200


def test_size_limit_on_both_sides(server):
    at_limit = os.urandom(server.max_body)
    with server.client() as client:
        assert_evicted(post(client, at_limit), "unreadable")  # read, then refused as a log
        assert_error(post(client, at_limit + b"x"), 413, "too_large")

        def chunks():  # no Content-Length: the limit must hold while reading
            for _ in range(server.max_body // 1000 + 1):
                yield b"\0" * 1000

        assert_error(post(client, chunks()), 413, "too_large")
    assert server.alive()


def test_bad_bodies_get_clear_errors(server, log_bytes):
    with server.client() as client:
        assert_evicted(post(client, b""), "unreadable")  # as `mosaic run` evicts an empty log
        assert_evicted(post(client, os.urandom(5000)), "unreadable")
        assert_evicted(post(client, log_bytes[: len(log_bytes) // 2]), "truncated")
        assert_error(post(client, log_bytes, headers={"Content-Encoding": "gzip"}), 400, "bad_encoding")
        assert_error(post(client, log_bytes, headers={"Content-Encoding": "br"}), 415, "unsupported_encoding")
        assert_evicted(
            post(client, gzip.compress(log_bytes)[:-40], headers={"Content-Encoding": "gzip"}),
            "corrupt_stream",
        )
        # Query and path parameters are validated too; every error has the same shape.
        invalid = assert_error(
            client.get("/v1/applications", params={"uid": 1 << 63, "app": APP}), 422, "invalid_request"
        )
        assert invalid["detail"][0]["loc"] == ["query", "uid"]
        assert_error(client.get("/v1/applications", params={"app": APP}), 422, "invalid_request")  # no uid
        assert_error(client.get("/v1/jobs/" + "9" * 257), 422, "invalid_request")
        assert_error(client.get("/v1/nowhere"), 404, "not_found")
        not_allowed = client.get("/v1/categorize")
        assert_error(not_allowed, 405, "method_not_allowed")
        assert not_allowed.headers["allow"] == "POST"
    assert server.alive()


def test_crash_and_hang_are_evicted_and_the_server_goes_on(server, log_factory, log_bytes):
    crashing = log_factory(extra_path="/scratch/" + CRASH_MARKER.decode(), compression="none")
    hanging = log_factory(extra_path="/scratch/" + HANG_MARKER.decode(), compression="none")
    with server.client() as client:
        answer = assert_evicted(post(client, crashing), "worker_crash")
        assert "exit code" in answer["detail"]
        assert post(client, log_bytes).status_code == 200

        hung = {}
        thread = threading.Thread(target=lambda: hung.update(response=post(client, hanging)))
        thread.start()
        meanwhile = post(client, log_bytes)  # the other worker still answers
        thread.join()
        assert meanwhile.status_code == 200
        assert_evicted(hung["response"], "timeout")
        assert post(client, log_bytes).status_code == 200

        with server.client(token=None) as anonymous:
            anonymous.request("TRACE", "/v1/jobs/1")
        metrics = client.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    text = metrics.text
    assert 'mosaic_evictions_total{reason="worker_crash"}' in text
    assert 'mosaic_evictions_total{reason="timeout"}' in text
    assert 'endpoint="/v1/categorize",method="POST",status="200"' in text
    assert 'endpoint="unrouted",method="other",status="401"' in text  # the TRACE request
    assert 'mosaic_request_duration_seconds_bucket{endpoint="/v1/categorize",le="+Inf"}' in text
    assert server.alive()
    log = (server.store.parent / "server.log").read_text()
    assert "worker_crash (worker process died" in log and "timeout (no result within 2 s)" in log


def test_the_server_itself_has_no_fault_hook(open_server, log_factory):
    marked = log_factory(extra_path="/scratch/" + CRASH_MARKER.decode(), compression="none")
    with open_server.client() as client:
        assert post(client, marked).status_code == 200


def test_a_defect_met_on_a_log_is_a_500_internal_error_not_the_logs_fault(server, log_factory, log_bytes):
    broken = log_factory(extra_path="/scratch/" + DEFECT_MARKER.decode(), compression="none")
    with server.client() as client:
        response = post(client, broken)
        assert response.status_code == 500, response.text
        answer = response.json()
        assert (answer["status"], answer["reason"]) == ("evicted", "internal_error")
        assert answer["detail"].startswith("ZeroDivisionError: an injected defect [at faulty_service.py:")
        assert post(client, log_bytes).status_code == 200  # the worker goes on
        assert 'mosaic_evictions_total{reason="internal_error"}' in client.get("/metrics").text


def test_openapi_schema_lists_every_endpoint(open_server):
    with open_server.client() as client:
        paths = client.get("/openapi.json").json()["paths"]
    assert set(paths) == {
        "/v1/categorize",
        "/v1/applications",
        "/v1/applications/query",
        "/v1/jobs/{job_id}",
        "/v1/running",
        "/v1/running/start",
        "/v1/running/end",
        "/v1/forecast",
        "/healthz",
        "/metrics",
    }
    assert "application/octet-stream" in paths["/v1/categorize"]["post"]["requestBody"]["content"]


def test_the_docs_page_lists_the_endpoints_and_fetches_nothing(open_server):
    """FastAPI's own /docs loaded its scripts from a CDN: blank on a machine offline."""
    with open_server.client() as client:
        page = client.get("/docs")
        assert client.get("/redoc").status_code == 404
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert not re.search(r"(src|href)=\"(https?:)?//", page.text)  # nothing from elsewhere
    assert "<code>/v1/jobs/{job_id}</code>" in page.text and 'href="openapi.json"' in page.text
    # the header, then GET|HEAD /healthz as two rows; /v1/running: 3; /v1/forecast
    assert page.text.count("<tr>") == 1 + 11
    # each row says what the endpoint is for (FastAPI's default was the function's name: "Healthz")
    assert "<td>The stored runs of one scheduler job, with their groups&#x27; categories</td>" in page.text
    assert "Healthz" not in page.text and "Application Query" not in page.text


@pytest.mark.parametrize("count", [1, 3])
def test_concurrent_posts_all_answer(server, log_bytes, count):
    results = []
    with server.client() as client:
        threads = [
            threading.Thread(target=lambda: results.append(post(client, log_bytes))) for _ in range(count)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert [r.status_code for r in results] == [200] * count


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


@pytest.mark.parametrize(
    "uid, app",
    [
        (-1, "/apps/uid-all-ones"),  # a log claiming uid 2^64 - 1 reads it as -1
        (INT64_MIN, "/apps/int64-min"),
        (INT64_MAX, "/apps/int64-max"),
        (5353, "/" + "a" * 4096),  # 4,097 characters: one past the former limit
        (5354, "/" + "b" * 20_000),
        (5355, ""),  # an empty command line: the application is ""
        (5356, "/" + "c" * 100_000),  # past what a request head carries: POST only
        (5357, "/\ufffd" * 10_000),  # 9 URL characters each: POST only
    ],
    ids=[
        "uid -1",
        "uid int64 min",
        "uid int64 max",
        "app 4097 chars",
        "app 20001 chars",
        "empty app",
        "app 100001 chars",
        "app 20000 non-ASCII chars",
    ],
)
def test_whatever_is_stored_can_be_looked_up(server, log_factory, monkeypatch, uid, app):
    """A negative uid or an application over 4,096 characters was stored
    but refused by the lookup's validation (422); a longer one is stored by its bounded
    name, and found by its whole one. darshan-util writes at most 4 KB of job
    region; a crafted log holds more (the writer's cap lifted here)."""
    monkeypatch.setattr(writer, "JOB_REGION_MAX", 1 << 20)
    log = log_factory(job_id=abs(uid) % 10**9 + len(app), uid=uid, cmdline=f"{app} -in in.lj" if app else "")
    with server.client() as client:
        stored = post(client, log, params={"store": "true"})
        assert stored.status_code == 200, stored.text
        kept = bounded_name(app, Config().max_name_chars)  # past 4,096 characters: start and hash
        assert (stored.json()["job"]["uid"], stored.json()["job"]["application"]) == (uid, kept)
        queried = client.post("/v1/applications/query", json={"uid": uid, "app": app})
        assert queried.status_code == 200, queried.text
        group = queried.json()
        assert (group["uid"], group["application"], group["runs"]) == (uid, kept, 1)
        if len(quote(app)) < HEAD_LIMIT - 1000:  # a request head carries it: GET answers too
            assert client.get("/v1/applications", params={"uid": uid, "app": app}).json() == group


@pytest.mark.parametrize(
    "body",
    [
        b'{"uid": 1}',
        b'{"app": "/apps/lmp"}',
        b'{"uid": "1", "app": "/apps/lmp"}',
        b'{"uid": 9223372036854775808, "app": "/apps/lmp"}',
        b'{"uid": 1, "app": 5}',
        b'{"uid": 1, "app": "/apps/lmp", "other": 1}',
        b"not json",
    ],
    ids=["no app", "no uid", "uid as text", "uid past int64", "app not text", "extra field", "not json"],
)
def test_an_invalid_query_body_is_refused(server, body):
    with server.client() as client:
        response = client.post("/v1/applications/query", content=body)
    assert_error(response, 422, "invalid_request")


@pytest.mark.parametrize("uid", [INT64_MIN - 1, INT64_MAX + 1])
def test_a_uid_outside_int64_is_invalid(server, uid):
    with server.client() as client:
        invalid = assert_error(
            client.get("/v1/applications", params={"uid": uid, "app": APP}), 422, "invalid_request"
        )
    assert invalid["detail"][0]["loc"] == ["query", "uid"]


# ----- A query never holds, nor sends back, more than a storable application -----

MAX_JOB = Config().max_job_bytes  # big_server's: no longer an application is ever stored
QUERY_LIMIT = 6 * MAX_JOB + 64  # every byte as \u00XX, plus the object around it
ANSWER_BYTES = 1024  # an error answer names the application by an excerpt


@pytest.mark.parametrize(
    "length, status, error",
    [(MAX_JOB, 404, "unknown_application"), (MAX_JOB + 1, 413, "too_large")],
    ids=["max_job_bytes", "one more"],
)
def test_a_query_for_an_application_too_long_to_be_stored_is_413(big_server, length, status, error):
    """Before the fix: 404 for both, the answer holding the whole application (~1 MB)."""
    with big_server.client() as client:
        response = client.post("/v1/applications/query", json={"uid": 1, "app": "a" * length})
    assert_error(response, status, error)
    assert len(response.content) < ANSWER_BYTES


@pytest.mark.parametrize(
    "size, status", [(QUERY_LIMIT, 404), (QUERY_LIMIT + 1, 413)], ids=["limit", "one more byte"]
)
def test_a_query_body_is_read_up_to_what_a_storable_application_takes(big_server, size, status):
    """The longest JSON of a storable application: each of its bytes escaped; spaces after
    the object fill the body to ``size``. One byte more is refused unread (64 MB before)."""
    body = b'{"uid":1,"app":"' + b"\\u0001" * MAX_JOB + b'"}'
    body += b" " * (size - len(body))
    with big_server.client() as client:
        response = client.post("/v1/applications/query", content=body)
    assert (response.status_code, len(response.content) < ANSWER_BYTES) == (status, True), response.text[:300]


def test_a_query_announcing_too_long_a_body_is_refused_before_it_is_sent(big_server):
    """A Content-Length past the limit: 413 at once (before the fix the server waited for
    the 60 MB, here until its 10 s deadline: 408)."""
    host, port = big_server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(
            b"POST /v1/applications/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 60000000\r\n\r\n{"
        )
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
