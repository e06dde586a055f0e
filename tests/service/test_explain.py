"""The API's explain: POST /v1/categorize?explain=true answers the reasons of the labels
(computed in the worker, as `mosaic categorize --explain` computes them); a stored job has
none, and GET /v1/jobs/{id}?explain=true says why."""

from __future__ import annotations

from mosaic.analysis.reasons import categorize_explained
from mosaic.config import Config
from mosaic.service.routes import NO_STORED_REASONS
from mosaic.trace import trace_from_bytes

UID = 6161


def post(client, body: bytes, **params: str):
    return client.post(
        "/v1/categorize", content=body, headers={"Content-Type": "application/octet-stream"}, params=params
    )


def test_categorize_with_explain_answers_the_reasons(server, log_bytes):
    with server.client() as client:
        plain = post(client, log_bytes)
        explained = post(client, log_bytes, explain="true")
    assert plain.status_code == explained.status_code == 200, explained.text
    assert "reasons" not in plain.json()
    answer = explained.json()
    expected = categorize_explained(trace_from_bytes(log_bytes, answer["file"], Config()), Config())
    assert answer == expected
    # make_log: 200 MB written in [1, 5] s of 100 s, all in the first quarter
    assert [r["text"] for r in answer["reasons"] if r["label"] == "write_on_start"] == [
        "write on_start: quarters 100/0/0/0 % of 200 MB; "
        "the first quarter (100 %) is more than 2 x the other three (0 %)"
    ]
    assert {k: v for k, v in answer.items() if k != "reasons"} == plain.json()


def test_an_evicted_log_is_evicted_with_explain_too(server):
    with server.client() as client:
        response = post(client, b"not a darshan log", explain="true")
    assert response.status_code == 422 and response.json()["status"] == "evicted"


def test_a_stored_job_says_why_it_has_no_reasons(server, log_factory):
    log = log_factory(job_id=931, uid=UID)
    with server.client() as client:
        stored = post(client, log, store="true", explain="true")
        assert stored.status_code == 200 and stored.json()["reasons"]
        plain = client.get("/v1/jobs/931").json()
        explained = client.get("/v1/jobs/931", params={"explain": "true"}).json()
    assert "explain" not in plain and "reasons" not in plain["runs"][0]
    assert explained == {
        "job_id": "931",
        "runs": [{**run, "reasons": None} for run in plain["runs"]],
        "explain": NO_STORED_REASONS,
    }
