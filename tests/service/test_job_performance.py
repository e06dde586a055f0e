"""GET /v1/jobs/{id} shows each stored run's performance (SPEC 3.9), from a real server."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
HDF_BULK = DATA / "darshan-logs-interference" / "logs" / "root_hdf_bulk_id70001-0_12-1-6-7_1.darshan"


def test_a_posted_run_shows_its_performance_under_its_job(fresh_server):
    with fresh_server.client() as client:
        answer = client.post(
            "/v1/categorize",
            params={"store": "true"},
            content=HDF_BULK.read_bytes(),
            headers={"Content-Type": "application/octet-stream"},
        )
        assert answer.status_code == 200
        assert answer.json()["performance"]["job"]["mode"] == "N:1"
        (stored,) = client.get("/v1/jobs/70001").json()["runs"]
    perf = stored["performance"]
    assert perf["job"]["write"]["bytes"] == 335544320.0
    assert perf["job"]["read"]["bandwidth"] is None  # nothing read: no bandwidth, never 0
    assert perf["darshan_util"]["POSIX"]["agg_time_by_slowest"] == 5.530827045440674
