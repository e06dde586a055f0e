"""`mosaic lookup`, `mosaic apps` and `mosaic report`'s table on a store answer as
`mosaic serve --config` would: the same configuration's profile window, periodic share
and name bound (before 2026-11-29 they read the store with the defaults whatever
--config said)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from mosaic.config import Config
from mosaic.corpus.store import Store
from mosaic.html.applications import applications
from mosaic.service.commands import apps, lookup
from mosaic.trace import bounded_name
from mosaic_testing.stored import PERIODIC, trace

UID = 31
APP = "/apps/" + "x" * 200  # longer than the configuration's 64-character bound below
STORED_APP = bounded_name(APP, 64)  # what `mosaic run --config` with that bound stored


def stored(name: str, day: int, run_time: float, period: float | None = None) -> dict:
    """A run of the group on 2026-01-0DAY, writing periodically when ``period`` is given."""
    return trace(
        name,
        1e8 if period else 0.0,
        (period, 0.2, 1e7) if period else None,
        run_time=run_time,
        start=f"2026-01-0{day}T00:00:00Z",
        categories=PERIODIC if period else ("write_steady",),
        uid=UID,
        application=STORED_APP,
        job_id=str(day),
    )


# Three runs, a day apart; the last two are periodic (periods 600 and 6,000 s).
RUNS = [stored("a", 1, 10.0), stored("b", 2, 20.0, 600.0), stored("c", 3, 40.0, 6000.0)]


@pytest.fixture
def store_and_config(tmp_path):
    store = tmp_path / "store.sqlite"
    with Store(store) as opened:
        for run in RUNS:
            opened.record(run)
    config = tmp_path / "reader.toml"
    # a window of the last run; a period class only when periodic in 3 of 4 runs; names of 64
    config.write_text("profile_window_runs = 1\nprofile_min_periodic_share = 0.75\nmax_name_chars = 64\n")
    return store, config


def run(command, *args: str) -> dict:
    result = CliRunner().invoke(command, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_lookup_on_a_store_takes_the_window_share_and_name_bound_of_its_config(store_and_config):
    store, config = store_and_config
    answer = run(lookup, "--uid", str(UID), "--app", APP, "--store", str(store), "--config", str(config))
    profile = answer["profile"]
    # window 1: the spreads are the latest run's alone (by default: the median of 10, 20, 40)
    assert profile["run_time_seconds"] == {"median": 40.0, "p10": 40.0, "p90": 40.0, "runs": 1}
    assert profile["write"]["periodic"]["period_seconds"]["median"] == 6000.0
    # periodic in 2 of 3 runs (0.667): a period class at the default share 0.5, none at 0.75
    assert profile["runs"] == 3 and profile["period_class"] is None
    default = run(lookup, "--uid", str(UID), "--app", STORED_APP, "--store", str(store))["profile"]
    assert default["run_time_seconds"]["median"] == 20.0 and default["period_class"] == 3  # 3,300 s
    # the full name finds nothing with the default bound (4,096: kept whole, never stored so)
    unknown = CliRunner().invoke(lookup, ["--uid", str(UID), "--app", APP, "--store", str(store), "--json"])
    assert unknown.exit_code == 1


def test_apps_on_a_store_takes_the_window_and_share_of_its_config(store_and_config):
    store, config = store_and_config
    listed = run(apps, "--store", str(store), "--config", str(config))["applications"]
    assert [(item["application"], item["period_class"], item["period_seconds"]) for item in listed] == [
        (STORED_APP, None, None)
    ]
    periodic = run(apps, "--store", str(store), "--config", str(config), "--not-periodic")
    assert periodic["total"] == 1  # the share is the filter's too
    # the default configuration: share 0.5 (2 of 3 periodic), window 2,000 (median of 600, 6,000)
    (default,) = run(apps, "--store", str(store))["applications"]
    assert (default["period_class"], default["period_seconds"]) == (3, 3300.0)


def test_apps_with_a_bad_config_stops_with_a_usage_error(tmp_path, store_and_config):
    store, _ = store_and_config
    (tmp_path / "bad.toml").write_text("profile_window_runs = 0\n")
    result = CliRunner().invoke(apps, ["--store", str(store), "--config", str(tmp_path / "bad.toml")])
    assert result.exit_code == 2 and "profile_window_runs" in result.output


def test_the_report_table_takes_the_window_of_its_config(store_and_config):
    store, _ = store_and_config
    db = sqlite3.connect(store)
    try:
        (windowed,) = applications(db, Config(profile_window_runs=1))
        (default,) = applications(db, Config())
    finally:
        db.close()
    assert windowed.profile is not None and default.profile is not None
    assert windowed.profile["run_time_seconds"]["median"] == 40.0  # the latest run alone
    assert default.profile["run_time_seconds"]["median"] == 20.0
