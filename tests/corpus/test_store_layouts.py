"""Stores of older layouts open with nothing lost; a newer layout is refused, never misread.

The stores in tests/data/stores were written by the code of their time
(tests/data/stores/build.py, at the commits their names give): ``mosaic run
--all-runs`` over three real logs, the same three logs posted, two hand-made posts.
"""

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from mosaic.corpus.store import LOOKUP_SCHEMA, Store, restore
from mosaic.errors import NewerStore
from mosaic_testing.stored import trace

STORES = Path(__file__).resolve().parents[1] / "data" / "stores"
LAYOUTS = {1: "layout-1-5d7b578.sqlite", 2: "layout-2-1181d4f.sqlite"}
HAND = (4242, "/opt/hand/made")


def held(path: Path) -> dict:
    """What an old store answers, read with plain SQL before any upgrade."""
    db = sqlite3.connect(path)
    try:
        return {
            "applications": sorted(db.execute("SELECT * FROM applications").fetchall()),
            "jobs": sorted(db.execute("SELECT file, job_id, group_key, categories FROM jobs").fetchall()),
        }
    finally:
        db.close()


@pytest.fixture(params=sorted(LAYOUTS))
def old_store(request, tmp_path):
    copy = tmp_path / "store.sqlite"
    shutil.copy(STORES / LAYOUTS[request.param], copy)
    return request.param, copy


def test_an_older_layout_opens_with_every_group_run_and_job(old_store):
    layout, path = old_store
    before = held(path)
    assert len(before["applications"]) == 4 and len(before["jobs"]) == 8
    with Store(path) as store:
        for group_key, uid, app, runs, last_seen, representative, *_ in before["applications"]:
            answer = store.application(uid, app)
            assert (answer["group_key"], answer["runs"]) == (group_key, runs)
            assert (answer["last_seen"], answer["representative"]) == (last_seen, representative)
            assert answer["profile"]["runs"] == runs  # every run was categorized
        for file, job_id, group_key, categories in before["jobs"]:
            stored = [run for run in store.job(job_id) if run["file"] == file]
            assert [run["categories"] for run in stored] == [json.loads(categories)]
            assert stored[0]["application"]["group_key"] == group_key
        hand = store.application(*HAND)["profile"]
        assert hand["label_shares"] == {"write_steady": 1.0}
        first_seen = None if layout == 1 else "2019-03-01T10:00:00Z"  # layout 1 kept no start
        assert (hand["first_seen"], hand["last_seen"]) == (first_seen, "2019-03-02T10:00:00Z")
        # layout 2 kept each run's numbers: the spreads survive; layout 1 never had them
        assert (hand["write"]["bytes"] is None) == (layout == 1)
        if layout == 2:
            assert hand["write"]["bytes"]["median"] == pytest.approx(7e8)
        store.record(trace("hand-3.darshan", 1e9, uid=HAND[0], application=HAND[1], job_id="9003"))
        assert store.application(*HAND)["runs"] == 3
    after = held(path)
    assert set(before["jobs"]) <= set(after["jobs"])
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'lookup_schema'").fetchone() == (
            str(LOOKUP_SCHEMA),
        )
        assert db.execute("PRAGMA auto_vacuum").fetchone() == (2,)  # incremental: prune can shrink it


def test_a_newer_layout_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        store.record(trace("a"))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'lookup_schema'", (str(LOOKUP_SCHEMA + 1),))
    db.close()
    written = path.read_bytes()
    with pytest.raises(NewerStore, match=f"lookup layout {LOOKUP_SCHEMA + 1}, written by a newer mosaic"):
        Store(path)
    assert path.read_bytes() == written


def test_mosaic_store_info_refuses_a_newer_layout_with_status_1(tmp_path):
    from click.testing import CliRunner

    from mosaic.cli import main

    path = tmp_path / "store.sqlite"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'lookup_schema'")
    db.close()
    result = CliRunner().invoke(main, ["store", "info", str(path)])
    assert result.exit_code == 1 and "lookup layout 99" in result.output


def test_a_backup_of_an_older_layout_is_upgraded_before_it_reaches_a_served_store(
    old_store, tmp_path, monkeypatch
):
    """`mosaic store restore` of an old backup under a running server: the server's file
    only ever holds the current layout (until 2026-11-29 the old pages were copied in
    and upgraded there, and the server read the old layout meanwhile)."""
    _, backup = old_store
    expected = held(backup)["jobs"]
    target = tmp_path / "served.sqlite"
    upgraded: list[Path] = []
    real_upgrade = Store._upgrade

    def recorded(self: Store, layout: int) -> None:
        upgraded.append(self.path)
        real_upgrade(self, layout)

    with Store(target) as served:  # the server's connection, open throughout
        served.record(trace("later.darshan", 1e9, job_id="9999"))
        monkeypatch.setattr(Store, "_upgrade", recorded)
        info = restore(backup, target)
        assert upgraded == [target.with_name("served.sqlite.upgrading")]
        assert served.job("9999") == [] and len(served.job(expected[0][1])) >= 1
    assert info["lookup_schema"] == LOOKUP_SCHEMA and info["runs"] == len(expected)
    assert sorted(p.name for p in tmp_path.iterdir() if "upgrading" in p.name) == []
