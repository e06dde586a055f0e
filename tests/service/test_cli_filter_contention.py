"""cluster/cli_filter.lua's who-slows-whom hints (docs/method.md 3.11) under each real
interpreter, against a live `mosaic serve`: "mosaic_io_sensitive=1" for an application
labelled sensitive, "mosaic_io_aggressor=TRAITS" for one with aggressor traits, from the
lookup's ``contention`` object; nothing for the others, and never a failed submission."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

BOTH, SENSITIVE, AGGRESSOR, CALM = 5501, 5502, 5503, 5504
APP = "/apps/lmp"  # what the service's make_log runs
NAMED = f"mosaic_app={APP}"  # for the prolog, whatever the answer


@pytest.fixture(scope="module")
def labelled(server, log_factory):
    """Four groups in the shared server's store, each with its contention row written as
    `mosaic run` writes it."""
    rows = {
        BOTH: ("sensitive", ["n1", "metadata"]),
        SENSITIVE: ("sensitive", []),
        AGGRESSOR: ("not exposed", ["bandwidth"]),
        CALM: ("insensitive", []),
    }
    with server.client() as client:
        for uid in rows:
            data = log_factory(uid=uid, job_id=uid)
            assert client.post("/v1/categorize", params={"store": "true"}, content=data).status_code == 200
    db = sqlite3.connect(server.store, timeout=30)
    with db:
        db.executemany(
            "INSERT OR REPLACE INTO app_contention (group_key, label, n, rho, q, traits, body, computed_at) "
            "VALUES (?, ?, 30, 0.7, 0.001, ?, ?, 1.0)",
            [(f"{uid}:{APP}", label, json.dumps(traits), json.dumps({"words": "about 1.8x"}))
             for uid, (label, traits) in rows.items()],
        )  # fmt: skip
    db.close()
    with server.client() as client:
        answer = client.get("/v1/applications", params={"uid": BOTH, "app": APP}).json()
    assert answer["contention"]["label"] == "sensitive" and answer["contention"]["traits"] == [
        "n1",
        "metadata",
    ]
    return server


@pytest.fixture
def lua(cli_filter, labelled, tmp_path, write_secret):
    write_secret(tmp_path / "token", labelled.token + "\n")
    env = {
        "PATH": os.environ["PATH"],
        "MOSAIC_URL": labelled.url,
        "MOSAIC_TOKEN_FILE": str(tmp_path / "token"),
    }

    def run(uid: int, comment: str = "", **extra: str):
        return cli_filter("srun", uid, comment, [APP], {**env, **extra}, tmp_path)[:2]

    return run


def test_the_hints_go_in_the_comment(lua):
    assert lua(BOTH, "nightly") == (
        0,
        f"nightly mosaic_io_sensitive=1 mosaic_io_aggressor=n1,metadata {NAMED}",
    )
    assert lua(SENSITIVE) == (0, f"mosaic_io_sensitive=1 {NAMED}")
    assert lua(AGGRESSOR) == (0, f"mosaic_io_aggressor=bandwidth {NAMED}")
    assert lua(CALM, "x") == (0, f"x {NAMED}")


def test_no_answer_leaves_the_job_alone_but_for_its_application(lua, silent_server):
    assert lua(BOTH, MOSAIC_URL="http://127.0.0.1:9") == (0, NAMED)  # nobody there
    assert lua(BOTH, MOSAIC_URL=silent_server, MOSAIC_TIMEOUT="0.5") == (0, NAMED)  # no answer in time
