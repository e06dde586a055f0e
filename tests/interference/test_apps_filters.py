"""`mosaic apps --sensitive / --aggressor` and the API's list filters (SPEC 3.11)."""

import json

from click.testing import CliRunner

from mosaic.cli import main
from mosaic.corpus.listing import Filters
from mosaic.corpus.store import Store

GROUPS = {
    "1:/bin/victim": ("sensitive", []),
    "2:/bin/agg": ("not exposed", ["n1"]),
    "3:/bin/calm": ("insensitive", []),
}


def _store(path):
    with Store(path) as store, store._atomic() as db:
        for key, (label, traits) in GROUPS.items():
            uid, app = key.split(":", 1)
            db.execute(
                "INSERT INTO applications (group_key, uid, application, runs, total_bytes) "
                "VALUES (?, ?, ?, 1, 1.0)",
                (key, int(uid), app),
            )
            db.execute(
                "INSERT INTO app_contention (group_key, label, n, traits) VALUES (?, ?, 10, ?)",
                (key, label, json.dumps(traits)),
            )
        db.execute(
            "INSERT INTO applications (group_key, uid, application, runs) "
            "VALUES ('4:/bin/new', 4, '/bin/new', 1)"
        )


def _keys(store, **filters):
    listed = store.applications(Filters(sort="uid", **filters), 0.5)
    return [f"{item['uid']}:{item['application']}" for item in listed["applications"]]


def test_filters(tmp_path):
    _store(tmp_path / "s.sqlite")
    with Store(tmp_path / "s.sqlite") as store:
        assert _keys(store, sensitive=True) == ["1:/bin/victim"]
        assert _keys(store, sensitive=False) == ["2:/bin/agg", "3:/bin/calm", "4:/bin/new"]
        assert _keys(store, aggressor=True) == ["2:/bin/agg"]
        assert _keys(store, aggressor=False, sensitive=False) == ["3:/bin/calm", "4:/bin/new"]


def test_cli(tmp_path):
    _store(tmp_path / "s.sqlite")
    result = CliRunner().invoke(
        main, ["apps", "--store", str(tmp_path / "s.sqlite"), "--aggressor", "--pairs"]
    )
    assert result.exit_code == 0, result.output
    assert result.output == "2\t/bin/agg\n"
    none = CliRunner().invoke(
        main, ["apps", "--store", str(tmp_path / "s.sqlite"), "--sensitive", "--uid", "2"]
    )
    assert none.exit_code == 1
