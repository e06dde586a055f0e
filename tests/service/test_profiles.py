"""Profiles through the service: concurrent posts to two real servers sharing one SQLite
store lose no run, and the OpenAPI schema documents the answer (cluster/cli_filter.lua,
which reads the profile's period class: test_cli_filter.py)."""

from __future__ import annotations

import threading

POSTS, CLIENTS = 24, 8
CONCURRENT_UID = 5151


def test_concurrent_posts_of_one_group_lose_no_run(twin_servers, log_factory):
    """CLIENTS threads, each its own HTTP connection to one of two `mosaic serve` processes on
    one store file, post POSTS runs of one group at once: every run counted once."""
    # every third run writes at its end, the others at its start
    logs = [
        log_factory(
            job_id=9000 + i, uid=CONCURRENT_UID, write_window=(90.0, 99.0) if i % 3 == 0 else (1.0, 5.0)
        )
        for i in range(POSTS)
    ]
    statuses: list[int] = []
    start = threading.Barrier(CLIENTS)  # the clients start posting together

    def post(client_index: int) -> None:
        with twin_servers[client_index % 2].client() as client:
            start.wait(timeout=60)
            for i in range(client_index, POSTS, CLIENTS):
                answer = client.post("/v1/categorize", params={"store": "true"}, content=logs[i])
                statuses.append(answer.status_code)

    threads = [threading.Thread(target=post, args=(c,)) for c in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * POSTS
    answers = []
    for server in twin_servers:
        with server.client() as client:
            answers.append(client.get("/v1/applications", params={"uid": CONCURRENT_UID, "app": "/apps/lmp"}))
            assert all(client.get(f"/v1/jobs/{9000 + i}").status_code == 200 for i in range(POSTS))
    assert [a.status_code for a in answers] == [200, 200] and answers[0].json() == answers[1].json()
    answer = answers[0].json()
    profile = answer["profile"]
    assert answer["runs"] == profile["runs"] == POSTS and profile["basis"] == "every_run"
    assert profile["label_shares"] == {
        "metadata_insignificant_load": 1.0,
        "read_insignificant": 1.0,
        "write_on_end": 8 / 24,
        "write_on_start": 16 / 24,
    }
    assert profile["stability"] == 16 / 24
    assert profile["write"]["bytes"]["median"] == 2e8 and profile["period_class"] is None


def test_the_openapi_schema_documents_the_profile(server):
    with server.client() as client:
        schema = client.get("/openapi.json").json()
    answer = schema["paths"]["/v1/applications"]["get"]["responses"]["200"]["content"]["application/json"]
    # with app, one application; without, the list
    refs = [
        {"$ref": "#/components/schemas/ApplicationAnswer"},
        {"$ref": "#/components/schemas/ApplicationList"},
    ]
    assert answer["schema"]["anyOf"] == refs
    models = schema["components"]["schemas"]
    assert "every page" in models["ApplicationList"]["properties"]["total"]["description"]
    profile = models["ApplicationProfile"]["properties"]
    assert "power of ten" in models["PeriodicProfile"]["properties"]["period_class"]["description"].lower()
    assert {"stability", "label_shares", "period_class", "read", "write", "first_seen"} <= set(profile)
    assert set(models["Spread"]["required"]) == {"median", "p10", "p90", "runs"}
