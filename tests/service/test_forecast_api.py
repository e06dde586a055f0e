"""GET /v1/forecast on a real `mosaic serve` (a read token and an operator's write token) over a
store seeded by hand with the contract tables, and `mosaic forecast` on the store and on the
server: the hand-computed case of tests/test_forecast.py through the store and HTTP, the
visibility rule, the unknown application, and a store without any contract table. (The route
and the command are new: every test here fails on e627ff0.)"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from mosaic.service.commands import forecast as forecast_command
from mosaic_testing.contracts import READ_TOKEN as READ
from mosaic_testing.contracts import WRITE_TOKEN as WRITE
from mosaic_testing.contracts import seed_store, serve_store, signature_body

NOW = 1_764_000_000.0
A_BURSTS = [
    {"direction": "write", "start": 0.0, "duration": 0.25, "bytes": 1280, "bandwidth": 128, "runs": 8},
    {"direction": "write", "start": 0.75, "duration": 0.25, "bytes": 1280, "bandwidth": 128, "runs": 8},
]
SETTINGS = "forecast_bins = 4\nforecast_medium_slowdown = 1.25\nforecast_high_slowdown = 1.5\n"


def seeded(path: Path, tables: bool = True) -> Path:
    """The case of tests/test_forecast.py: a (sensitive, 1/512) writes 128 B/s in its first and
    last quarters; b reads 64 B/s in its first half; the candidate c writes 256 B/s in its
    second half and is sensitive (1/256)."""
    return seed_store(
        path,
        applications=[(1, "/a", 8), (2, "/b", 8), (3, "/c", 8), (4, "/d", 2)],
        signatures=[
            ("1:/a", signature_body([0, 0, 0, 0], [128, 0, 0, 128], 40.0, A_BURSTS)),
            ("2:/b", signature_body([64, 0], [0, 0], 20.0)),
            ("3:/c", signature_body([0, 0], [0, 256], 40.0)),
        ],
        running=[
            (101, 1, "/a", NOW - 10, None),
            (102, 2, "/b", NOW, 10.0),
            (103, 2, "/b", NOW - 100, 50.0),  # past its time limit: not running
            (104, 2, "/b", NOW - 5, None, NOW - 1),  # ended
        ],
        contention=[
            ("1:/a", "sensitive", 1 / 512),
            ("2:/b", "insensitive", 0.0),
            ("3:/c", "sensitive", 1 / 256),
        ],
        run_times=[("4:/d", 30.0), ("4:/d", 50.0)],
        tables=tables,
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("forecast")
    store = seeded(tmp / "store.sqlite")
    with serve_store(tmp, store, SETTINGS) as url:
        yield url, store, tmp


def ask(url: str, token: str, **params) -> httpx.Response:
    return httpx.get(
        url + "/v1/forecast", params={"at": NOW, **params}, headers={"Authorization": f"Bearer {token}"}
    )


def test_the_hand_computed_case_over_http(served):
    url, _, _ = served
    answer = ask(url, READ, uid=3, app="/c").json()
    assert answer["status"] == "ok" and answer["group_key"] == "3:/c"
    assert answer["inputs"] == {
        "signatures": True,
        "running_jobs": True,
        "app_contention": True,
        "run_load": True,
    }
    ahead = answer["load_ahead"]["*"]
    assert ahead["read"] == [32.0, 0.0, 0.0, 0.0] and ahead["write"] == [0.0, 0.0, 128.0, 0.0]
    assert answer["running"] == {"jobs": 2, "with_signature": 2, "without_signature": 0}
    assert answer["candidate"]["expected_slowdown"] == 1.25
    assert answer["caused"] == [{"job": "another job", "added_load_bps": 256.0, "extra_slowdown": 0.5}]
    assert answer["conflicts"] == [{"job": "another job", "share": 1.0}]
    assert answer["risk"] == {"class": "high", "score": 1.5, "why": None}
    # a 20 s time limit: the horizon is 20 s, the candidate's I/O (its second half) at [10, 20)
    capped = ask(url, READ, uid=3, app="/c", time_limit=20).json()
    assert capped["expected_run_time"] == 20.0 and capped["run_time_basis"] == "time limit"
    assert capped["candidate"]["phases"][0]["start"] == 10.0


def test_visibility_read_token_and_operator(served):
    url, _, _ = served
    assert ask(url, READ, uid=3, app="/c").json()["conflicts"] == [{"job": "another job", "share": 1.0}]
    operator = ask(url, WRITE, uid=3, app="/c").json()
    assert operator["conflicts"] == [{"job": "101", "uid": 1, "application": "/a", "share": 1.0}]
    assert operator["caused"][0]["job"] == "101"
    # the read token naming uid 1 sees uid 1's job: a's own user asking about a's application
    own = ask(url, READ, uid=1, app="/a").json()
    assert {c["job"] for c in own["conflicts"]} <= {"101", "another job"}
    assert all(c.get("uid") in (None, 1) for c in own["conflicts"] + own["caused"])
    assert "102" not in json.dumps(ask(url, READ, uid=1, app="/a").json()["conflicts"])
    assert ask(url, "wrong-token-0123456789", uid=3, app="/c").status_code == 401


def test_unknown_and_too_few_runs_are_answers(served):
    url, _, _ = served
    unknown = ask(url, READ, uid=3, app="/nowhere")
    assert unknown.status_code == 200
    assert unknown.json()["status"] == "unknown_application" and unknown.json()["risk"]["class"] is None
    # the load ahead still, over the default horizon (3600 s: bins of 900 s): a's 1280 B in bin 0
    assert unknown.json()["expected_run_time"] == 3600.0
    assert unknown.json()["load_ahead"]["*"]["write"] == [1280 / 900, 0.0, 0.0, 0.0]
    few = ask(url, READ, uid=4, app="/d").json()
    assert few["status"] == "too_few_runs" and "2 stored run(s)" in few["why"]
    assert few["expected_run_time"] == 40.0  # the median of its stored runs' 30 and 50 s
    assert ask(url, READ, uid=3).status_code == 422  # app missing


def test_a_damaged_signature_is_a_reason(tmp_path):
    store = seed_store(tmp_path / "s.sqlite", applications=[(3, "/c", 8)], signatures=[("3:/c", "{not json")])
    result = CliRunner().invoke(
        forecast_command, ["--uid", "3", "--app", "/c", "--store", str(store), "--at", str(NOW), "--json"]
    )
    answer = json.loads(result.output)
    assert answer["status"] == "no_signature" and "not JSON" in answer["why"]


def test_the_command_on_a_store_and_on_the_server(served):
    url, store, tmp = served
    config = str(tmp / "forecast.toml")
    base = ["--uid", "3", "--app", "/c", "--at", str(NOW), "--config", config]
    on_store = CliRunner().invoke(forecast_command, [*base, "--store", str(store)])
    assert on_store.exit_code == 0, on_store.output
    assert "risk high (expected slowdown 1.50x)" in on_store.output
    assert "101" in on_store.output  # the store is read as the operator reads it
    on_server = CliRunner().invoke(
        forecast_command, [*base[:-2], "--server", url, "--token-file", str(tmp / "read"), "--json"]
    )
    assert on_server.exit_code == 0, on_server.output
    assert json.loads(on_server.output)["conflicts"] == [{"job": "another job", "share": 1.0}]
    unknown = CliRunner().invoke(forecast_command, ["--uid", "3", "--app", "/x", "--store", str(store)])
    assert unknown.exit_code == 1 and "unknown_application" in unknown.output
    down = CliRunner().invoke(
        forecast_command, ["--uid", "3", "--app", "/c", "--server", "http://127.0.0.1:9"]
    )
    assert down.exit_code == 3


def test_what_a_connection_keeps_is_read_again_after_another_commits(tmp_path):
    """The running jobs and groups a read connection has read are kept until another connection
    commits: a job started (a prolog's post) and a signature recomputed show in the next answer."""
    import sqlite3

    from mosaic.corpus.store import Store
    from mosaic.forecast_store import store_forecast

    store_path = seeded(tmp_path / "s.sqlite")
    with Store(store_path) as store:
        assert store_forecast(store, 3, "/c", NOW)["running"]["jobs"] == 2
        assert store_forecast(store, 3, "/c", NOW)["running"]["jobs"] == 2  # from what it kept
        db = sqlite3.connect(store_path)
        with db:
            db.execute(
                "INSERT INTO running_jobs (job_id, uid, application, group_key, start_epoch) "
                "VALUES ('105', 2, '/b', '2:/b', ?)",
                (NOW - 1,),
            )
            db.execute(
                "UPDATE signatures SET body = ?, computed_at = 1 WHERE group_key = '3:/c'",
                (json.dumps(signature_body([0, 0], [0, 512], 80.0)),),
            )
        db.close()
        again = store_forecast(store, 3, "/c", NOW)
    assert again["running"]["jobs"] == 3 and again["expected_run_time"] == 80.0
