"""cluster/cli_filter.lua's forecast hint under each Lua interpreter, against a real `mosaic serve`
over a store seeded with the contract tables: a job submitted while an aggressor writes on its
file system gets `mosaic_io_conflict=high`, one on an idle file system `low`, the job's time
limit is passed along, an unknown application adds nothing, and a dead or silent server leaves
the job as it was (but for its mosaic_app= word) within MOSAIC_TIMEOUT (the profile and the
forecast are asked side by side, not in turn). (The hint is new: every test here but the
dead-server ones fails on e627ff0.)"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from mosaic_testing.contracts import RUNNING_COLUMNS, seed_store, serve_store, signature_body

AGGRESSOR, VICTIM, HOMEBODY = "/apps/hdf_bulk", "/apps/lmp_restart", "/apps/home_ckpt"
SENSITIVE = "mosaic_io_sensitive=1"  # the who-slows-whom hint (docs/method.md 3.11)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The aggressor (uid 1) writes 192 B/s through an hour-long run on /scratch; the victim
    (uid 3, sensitive, 1/256 per B/s) writes 256 B/s in the second half of its 40 s runs on
    /scratch; the homebody (uid 5, same signature and slope) on /home."""
    tmp = tmp_path_factory.mktemp("filter")
    store = seed_store(
        tmp / "store.sqlite",
        applications=[(1, AGGRESSOR, 8), (3, VICTIM, 8), (5, HOMEBODY, 8)],
        signatures=[
            (f"1:{AGGRESSOR}", signature_body([0] * 4, [192] * 4, 3600.0)),
            (f"3:{VICTIM}", signature_body([0, 0], [0, 256], 40.0)),
            (f"5:{HOMEBODY}", signature_body([0, 0], [0, 256], 40.0)),
        ],
        contention=[(f"3:{VICTIM}", "sensitive", 1 / 256), (f"5:{HOMEBODY}", "sensitive", 1 / 256)],
        run_loads=[
            (f"1:{AGGRESSOR}", "/scratch", 5.0),
            (f"3:{VICTIM}", "/scratch", 3.0),
            (f"5:{HOMEBODY}", "/home", 3.0),
        ],
    )
    with serve_store(tmp, store) as url:
        yield url, store, tmp


def running(store: Path, limit: float | None = None) -> None:
    """The registry holds the aggressor alone, started 10 s ago (with ``limit``)."""
    db = sqlite3.connect(store)
    with db:
        db.execute("DELETE FROM running_jobs")
        db.execute(
            f"INSERT INTO running_jobs ({RUNNING_COLUMNS}) "
            "VALUES ('9001', 1, ?, ?, ?, ?, 'n1', 2, 'running', NULL, 0)",
            (AGGRESSOR, f"1:{AGGRESSOR}", time.time() - 10, limit),
        )
    db.close()


@pytest.fixture
def lua(cli_filter, served):
    url, _, tmp = served

    def run(app: str, uid: int, comment: str = "", **extra: str):
        env = {"PATH": os.environ["PATH"], "MOSAIC_URL": url, "MOSAIC_TOKEN_FILE": str(tmp / "read"), **extra}
        began = time.monotonic()
        code, after, logged = cli_filter("srun", uid, comment, [app], env, tmp)
        return code, after, logged, time.monotonic() - began

    return run


def test_a_victim_beside_an_aggressor_is_high_and_on_an_idle_file_system_low(lua, served):
    running(served[1])
    code, comment, logged, _ = lua(VICTIM, 3, "nightly")
    # the victim and the homebody are sensitive (their store rows): that hint comes first
    assert (code, comment) == (0, f"nightly {SENSITIVE} mosaic_io_conflict=high mosaic_app={VICTIM}")  # 1.75
    assert logged == [
        f"mosaic: {VICTIM} is sensitive to the file system's load",
        f"mosaic: {VICTIM} has I/O conflict risk high",
    ]
    assert lua(HOMEBODY, 5)[1] == f"{SENSITIVE} mosaic_io_conflict=low mosaic_app={HOMEBODY}"


def test_the_time_limit_is_passed_along(lua, served):
    """The aggressor ends 15 s from now (a 25 s limit). The victim's I/O, the second half of
    its run: over [20, 40) s it meets nobody (low); with --time 0:20 over [10, 20) s it meets
    192 B/s for its first ~5 s, a mean near 96 B/s: 1 + 96/256 = 1.375, medium."""
    for limit, hint in (("", "low"), ("0:20", "medium"), ("UNLIMITED", "low")):
        running(served[1], limit=25.0)  # the aggressor started 10 s before each submission
        assert (
            lua(VICTIM, 3, HARNESS_TIME_LIMIT=limit)[1]
            == f"{SENSITIVE} mosaic_io_conflict={hint} mosaic_app={VICTIM}"
        ), limit


def test_unknown_application_adds_nothing(lua, served):
    running(served[1])
    assert lua("/apps/never_seen", 3)[:3] == (0, "mosaic_app=/apps/never_seen", [])


def test_a_silent_or_dead_server_never_holds_the_submission_past_the_timeout(lua, silent_server):
    code, comment, logged, seconds = lua(VICTIM, 3, "x", MOSAIC_URL=silent_server, MOSAIC_TIMEOUT="1")
    assert (code, comment, logged) == (0, f"x mosaic_app={VICTIM}", [])
    assert 0.9 <= seconds < 1.9  # both requests waited 1 s side by side, not 2 s in turn
    code, comment, _, seconds = lua(VICTIM, 3, "x", MOSAIC_URL="http://127.0.0.1:9")
    assert (code, comment) == (0, f"x mosaic_app={VICTIM}") and seconds < 1.0
