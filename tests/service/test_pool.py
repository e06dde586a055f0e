"""The worker-side functions of the service, in process (no server)."""

from __future__ import annotations

import asyncio
import json

import pytest

from mosaic.config import Config
from mosaic.logfile import evicted_result
from mosaic.service import pool as service_pool
from mosaic.service.pool import WorkerPool, categorize_posted, encode


def test_encode_keeps_a_finite_result():
    answer = encode({"file": "f", "status": "ok", "score": 0.5})
    assert (answer.status, answer.reason) == ("ok", "")
    assert json.loads(answer.body) == {"file": "f", "status": "ok", "score": 0.5}


def test_encode_evicts_a_result_with_nan_or_infinity():
    for bad in (float("nan"), float("inf")):
        answer = encode({"file": "f", "status": "ok", "read": {"score": bad}})
        assert (answer.status, answer.reason) == ("evicted", "internal_error")
        assert json.loads(answer.body)["detail"].startswith("result holds a non-finite")


def test_a_good_log_is_categorized(log_bytes):
    answer = categorize_posted(log_bytes, Config())
    assert answer.status == "ok"
    assert json.loads(answer.body)["categories"] == [
        "read_insignificant",
        "write_on_start",
        "metadata_insignificant_load",
    ]


def test_log_errors_keep_their_reason(log_bytes):
    assert categorize_posted(log_bytes[:100], Config()).reason == "truncated"
    assert categorize_posted(b"3.41", Config()).status == "evicted"


def test_an_unexpected_exception_is_an_internal_error(log_bytes, monkeypatch):
    def broken(*_):
        raise RuntimeError("reader bug")

    monkeypatch.setattr(service_pool, "build_trace", broken)
    answer = categorize_posted(log_bytes, Config())
    result = json.loads(answer.body)
    assert (answer.status, answer.reason) == ("evicted", "internal_error")
    assert result["file"] == service_pool.posted_name(log_bytes)
    assert result["detail"].startswith("RuntimeError: reader bug [at ")


@pytest.mark.parametrize(
    "reason, starts", [("unreadable", True), ("worker_crash", False), ("timeout", False)]
)
def test_warm_up_fails_only_when_workers_fail(reason, starts):
    pool = WorkerPool.__new__(WorkerPool)  # no processes: the answer is faked

    async def fake_run(source):
        return encode(evicted_result("warm-up", reason, "empty file"))

    pool._run = fake_run
    if starts:
        asyncio.run(pool.warm_up())
    else:
        with pytest.raises(RuntimeError, match="workers do not work"):
            asyncio.run(pool.warm_up())
