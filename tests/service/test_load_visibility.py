"""Posted runs join the timeline, their load and their neighbours' are recomputed, and
/v1/jobs/{id} names other jobs only to the operator's token (docs/security.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mosaic_testing.ports import free_port

from .conftest import MOSAIC, Server, stop_server, wait_ready, write_secret

DATA = Path(__file__).parents[1] / "data" / "darshan-logs-interference"
READ, WRITE = "read-token-users-know", "write-token-of-the-operator"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("load")
    port = free_port()
    (tmp / "service.toml").write_text('shared_file_systems = ["/mnt/mosaic-ifs"]\n')
    args = [str(MOSAIC), "serve", "--create", "--store", str(tmp / "store.sqlite"), "--port", str(port)]
    args += ["--workers", "1", "--config", str(tmp / "service.toml")]
    args += ["--token-file", str(write_secret(tmp / "read", READ))]
    args += ["--write-token-file", str(write_secret(tmp / "write", WRITE))]
    with open(tmp / "server.log", "wb") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", tmp / "store.sqlite", process, READ, log=tmp / "server.log")
    try:
        yield wait_ready(server)
    finally:
        stop_server(server)


def truth():
    return [json.loads(line) for line in (DATA / "truth.jsonl").read_text().splitlines()]


def post_all(server, files):
    with server.client(WRITE) as client:
        for f in files:
            r = client.post(
                "/v1/categorize", params={"store": "true"}, content=(DATA / "logs" / f).read_bytes()
            )
            assert r.status_code == 200, r.text


def test_a_late_post_raises_the_load_of_the_run_it_overlapped(served):
    rows = {t["job_id"]: t for t in truth()}
    victim, aggressor = rows[70007], rows[70009]  # the victim overlapped the aggressor 70009
    post_all(served, [victim["file"]])
    with served.client(WRITE) as operator:
        (run,) = operator.get("/v1/jobs/70007").json()["runs"]
        (load,) = run["load"]
        assert load["fs"] == "/mnt/mosaic-ifs" and load["other_jobs"] == 0 and load["write_rate"] == 0.0
        post_all(served, [aggressor["file"]])  # posted later: the victim's load follows
        (load,) = operator.get("/v1/jobs/70007").json()["runs"][0]["load"]
        assert load["other_jobs"] == 1 and 15e6 < load["write_rate"] < 60e6  # 19.9 MB/s of the 60
        (other,) = load["others"]
        assert other["job"] == "70009" and other["uid"] == 0 and other["application"].endswith("hdf_bulk")
        assert other["share"] == 1.0 and other["bytes"] > 100e6
        assert load["summary"].startswith("while it did I/O (")
        assert "1 other job moved 72 GB/h on /mnt/mosaic-ifs" in load["summary"]


def test_the_read_token_sees_another_job_and_its_share(served):
    rows = {t["job_id"]: t for t in truth()}
    post_all(served, [rows[70007]["file"], rows[70009]["file"]])
    with served.client(READ) as user:
        (load,) = user.get("/v1/jobs/70007").json()["runs"][0]["load"]
        (other,) = load["others"]
        assert other == {"job": "another job", "bytes": other["bytes"], "share": 1.0, "own": False}
        (load,) = user.get("/v1/jobs/70007", params={"uid": 1000}).json()["runs"][0]["load"]
        assert load["others"][0]["job"] == "another job"  # uid 1000 does not own it
        # the caller's own job (all these jobs ran as uid 0) is named to it
        (load,) = user.get("/v1/jobs/70007", params={"uid": 0}).json()["runs"][0]["load"]
        assert load["others"][0]["job"] == "70009" and load["others"][0]["own"] is True
        assert "70009" not in user.get("/v1/jobs/70007").text
        assert "hdf_bulk" not in json.dumps(user.get("/v1/jobs/70007").json()["runs"][0]["load"])


def test_posted_runs_join_the_center_timeline(served):
    import sqlite3

    from mosaic.corpus import timeline
    from mosaic.html.load_page import _StoreView

    rows = {t["job_id"]: t for t in truth()}
    post_all(served, [rows[70007]["file"], rows[70009]["file"]])
    db = sqlite3.connect(f"file:{served.store}?mode=ro", uri=True)
    try:
        (line,) = timeline.center_timeline(_StoreView(db), 1.0).values()
    finally:
        db.close()
    assert line.fs == "/mnt/mosaic-ifs"
    assert line.write.sum() == 4 * 2 * 24 * 2**20 + 2 * 160 * 2**20  # the victim's and the aggressor's bytes
    assert line.jobs.max() == 2
