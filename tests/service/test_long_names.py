"""Huge application names (issue 45 item 5): bounded where the application is derived,
for `mosaic run` and posts alike, by its start and a hash of the whole."""

from __future__ import annotations

import hashlib

import pytest

from mosaic.config import Config
from mosaic.darshan import writer
from mosaic.trace import NAME_CUT, bounded_name, trace_from_bytes

from .conftest import make_log

LIMIT = Config().max_name_chars  # 4096
STEM = "/apps/" + "a" * 300_000  # a 300 kB first token: the log's job region allows 1 MB


@pytest.fixture(autouse=True)
def crafted(monkeypatch):
    """darshan-util writes at most 4 KB of job region; a crafted log holds up to
    max_job_bytes (the writer's cap lifted)."""
    monkeypatch.setattr(writer, "JOB_REGION_MAX", 1 << 20)


def whole_hash(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:16]


def test_a_name_at_the_bound_is_kept_and_one_past_it_is_cut_to_the_bound():
    at = "x" * LIMIT
    past = "x" * (LIMIT + 1)
    assert bounded_name(at, LIMIT) == at
    cut = bounded_name(past, LIMIT)
    assert len(cut) == LIMIT
    assert cut == "x" * (LIMIT - 2 - 16) + "\u2026#" + whole_hash(past)
    assert NAME_CUT == "\u2026#"


def test_a_huge_name_in_a_real_log_is_bounded_and_groups_stay_apart():
    """Two logs whose 300 kB first tokens differ only in their last character: before the
    fix each application was stored whole (~15.5 MB a post for 1 MB); now both are 4,096
    characters and differ by their hash."""
    one, other = STEM + "1", STEM + "2"
    jobs = [
        trace_from_bytes(make_log(cmdline=f"{app} -in x", job_id=45100 + i), f"{i}.darshan", Config()).job
        for i, app in enumerate((one, other))
    ]
    assert [job["application"] for job in jobs] == [bounded_name(one, LIMIT), bounded_name(other, LIMIT)]
    assert all(len(job["application"]) == LIMIT and len(job["exe"]) == LIMIT for job in jobs)
    assert jobs[0]["application"].endswith(whole_hash(one))
    assert jobs[0]["application"] != jobs[1]["application"]
    assert jobs[0]["exe"].endswith(whole_hash(one + " -in x"))


def test_the_service_stores_and_answers_the_bounded_name(server):
    """A post with a 100 kB application answers and stores 4,096 characters; a lookup by
    the whole name (POST /v1/applications/query) finds the group; the listing answers
    the bounded name."""
    app = STEM[:100_000] + "-service"  # the test server's bodies: 200 kB at most
    log = make_log(cmdline=f"{app} -in x", job_id=45110, uid=45110)
    with server.client() as client:
        posted = client.post("/v1/categorize?store=true", content=log)
        found = client.post("/v1/applications/query", json={"uid": 45110, "app": app})
        listed = client.get("/v1/applications", params={"uid": 45110})
    assert posted.status_code == 200
    assert posted.json()["job"]["application"] == bounded_name(app, LIMIT)
    assert len(posted.content) < 3 * LIMIT + 4096  # the name twice (application, exe), and the rest
    assert found.status_code == 200 and found.json()["runs"] == 1
    assert [item["application"] for item in listed.json()["applications"]] == [bounded_name(app, LIMIT)]
