"""Application profiles: hand-computed numbers, period classes, single runs, incremental
posts against a batch rebuild, and an older store's upgrade."""

import json
import math
import sqlite3

import numpy as np
import pytest

from mosaic.corpus import profiles
from mosaic.corpus.profiles import period_class
from mosaic.corpus.store import Store
from mosaic_testing.stored import APP, PERIODIC, UID, trace

# Five runs: three write every 100-400 s, two do not.
FIVE = [
    trace("a", 1e9, (100.0, 0.1, 1e8), 10.0, "2019-01-05T00:00:00Z", PERIODIC, 5.0),
    trace("b", 2e9, (200.0, 0.2, 2e8), 20.0, "2019-01-01T00:00:00Z", PERIODIC, 10.0),
    trace("c", 3e9, (400.0, 0.3, 4e8), 30.0, "2019-03-01T00:00:00Z", PERIODIC, 20.0),
    trace("d", 4e9, None, 40.0, "2019-02-01T00:00:00Z", ["write_on_end"], 40.0),
    trace("e", 10e9, None, 50.0, "2019-01-03T00:00:00Z", ["write_steady"], 80.0),
]


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "store.sqlite") as opened:
        yield opened


def spread(median, p10, p90, runs):
    return {
        "median": pytest.approx(median),
        "p10": pytest.approx(p10),
        "p90": pytest.approx(p90),
        "runs": runs,
    }


def test_profile_of_five_posted_runs_by_hand(store):
    for result in FIVE:
        store.record(result)
    answer = store.application(UID, APP)
    assert answer["runs"] == 5 and answer["representative"] == "e"  # heaviest: 10 GB
    profile = answer["profile"]
    assert (profile["runs"], profile["basis"]) == (5, "every_run")
    assert profile["label_shares"] == {
        "write_on_end": 0.2,
        "write_periodic": 0.6,
        "write_periodic_minute": 0.6,
        "write_steady": 0.8,
    }
    assert profile["stability"] == 0.6 and profile["usual_categories"] == sorted(PERIODIC)
    # numpy's linear interpolation: p10 of 5 sorted values sits at rank 0.4, p90 at rank 3.6
    assert profile["write"]["bytes"] == spread(3e9, 1.4e9, 7.6e9, 5)
    assert profile["read"]["bytes"] == spread(0.0, 0.0, 0.0, 5)
    periodic = profile["write"]["periodic"]
    assert (periodic["runs"], periodic["share"]) == (3, 0.6)
    # three periodic runs: p10 at rank 0.2, p90 at rank 1.8
    assert periodic["period_seconds"] == spread(200.0, 120.0, 360.0, 3)
    assert periodic["busy_fraction"] == spread(0.2, 0.12, 0.28, 3)
    assert periodic["bytes_per_occurrence"] == spread(2e8, 1.2e8, 3.6e8, 3)
    assert periodic["period_class"] == 2  # 100 <= 200 < 1000
    assert (profile["period_class"], profile["period_direction"]) == (2, "write")
    assert profile["read"]["periodic"] == {
        "runs": 0,
        "share": 0.0,
        "period_seconds": None,
        "period_class": None,
        "busy_fraction": None,
        "bytes_per_occurrence": None,
    }
    assert profile["run_time_seconds"] == spread(30.0, 14.0, 46.0, 5)
    assert profile["metadata_peak_per_second"] == spread(20.0, 7.0, 64.0, 5)
    assert (profile["first_seen"], profile["last_seen"]) == ("2019-01-01T00:00:00Z", "2019-03-01T00:00:00Z")


def test_period_class_needs_the_minimum_share_of_periodic_runs(store):
    for result in FIVE:  # writes periodic in 3 of 5 runs
        store.record(result)
    assert store.application(UID, APP, min_periodic_share=0.6)["profile"]["period_class"] == 2
    above = store.application(UID, APP, min_periodic_share=0.61)["profile"]
    assert (above["period_class"], above["period_direction"]) == (None, None)
    assert above["write"]["periodic"]["period_class"] == 2  # the direction's own class stays


@pytest.mark.parametrize("k", range(-3, 9))
def test_period_class_edges_at_powers_of_ten(k):
    power = 10.0**k
    assert period_class(power) == k
    assert period_class(math.nextafter(power, 0.0)) == k - 1
    assert period_class(math.nextafter(power, math.inf)) == k
    assert period_class(power * 9.999) == k


def test_a_group_without_periodic_runs(store):
    store.record(trace("x", 5e8, None, categories=["write_on_end"]))
    store.record(trace("y", 7e8, None, categories=["write_on_end"], job_id="2"))
    profile = store.application(UID, APP)["profile"]
    assert (profile["period_class"], profile["period_direction"]) == (None, None)
    for direction in ("read", "write"):
        periodic = profile[direction]["periodic"]
        assert (periodic["runs"], periodic["share"], periodic["period_seconds"]) == (0, 0.0, None)
        assert periodic["period_class"] is None
    assert profile["stability"] == 1.0 and profile["write"]["bytes"] == spread(6e8, 5.2e8, 6.8e8, 2)


def test_a_single_run_profile(store):
    store.record(trace("only", 3e9, (60.0, 0.5, 1e9), categories=PERIODIC))
    profile = store.application(UID, APP)["profile"]
    assert (profile["runs"], profile["basis"], profile["stability"]) == (1, "every_run", 1.0)
    assert profile["write"]["periodic"]["period_seconds"] == spread(60.0, 60.0, 60.0, 1)
    assert profile["period_class"] == 1


def test_a_reposted_run_replaces_its_contribution(store):
    store.record(trace("a", 1e9, categories=["write_steady"]))
    store.record(trace("b", 2e9, categories=["write_steady"], job_id="2"))
    store.record(trace("a", 1e9, categories=["write_on_end"]))  # the same log, other thresholds
    profile = store.application(UID, APP)["profile"]
    assert profile["runs"] == 2
    assert profile["label_shares"] == {"write_on_end": 0.5, "write_steady": 0.5}
    assert profile["stability"] == 0.5


def counters(path) -> dict:
    with sqlite3.connect(path) as db:
        return {
            table: sorted(db.execute(f"SELECT * FROM {table}").fetchall())
            for table in ("profile_groups", "profile_labels", "profile_label_sets")
        }


def test_incremental_posts_leave_the_counters_of_a_batch_rebuild(tmp_path):
    path = tmp_path / "store.sqlite"
    rng = np.random.default_rng(5)
    labels = ["write_steady", "write_on_end", "write_periodic", "metadata_high_spike", "read_on_start"]
    with Store(path) as store:
        for i in range(60):
            chosen = [label for label in labels if rng.random() < 0.5]
            app = f"/bin/app{i % 3}"
            result = trace(f"run{i % 50}", float(rng.integers(1, 10**9)), categories=chosen, job_id=str(i))
            result["job"]["application"] = app
            result["job"]["start"] = f"2019-01-{1 + i % 28:02d}T00:00:00Z"
            store.record(result)  # runs 50-59 post run0-run9 again, maybe elsewhere
    incremental = counters(path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    profiles.rebuild_all(db)
    db.execute("COMMIT")
    db.close()
    assert counters(path) == incremental
    assert sum(runs for _, runs, _, _ in incremental["profile_groups"]) == 50


def test_batch_all_runs_profiles_match_the_traces_and_incremental_posts(reference_all_runs, tmp_path):
    """`mosaic run --all-runs` publishes each group's profile; the label shares are those of
    its traces in traces.jsonl, and posting the same traces one by one gives the same profile."""
    traces = [json.loads(line) for line in (reference_all_runs / "traces.jsonl").read_text().splitlines()]
    by_group: dict[str, list[dict]] = {}
    for obj in traces:
        by_group.setdefault(obj["group"]["key"], []).append(obj)
    with Store(tmp_path / "posted.sqlite") as posted:
        for obj in traces:
            posted.record(obj)
        with Store(reference_all_runs / "store.sqlite") as batch:
            for key, members in by_group.items():
                uid, app = key.split(":", 1)
                from_batch = batch.application(int(uid), app)["profile"]
                assert from_batch["runs"] == len(members)
                shares = {
                    label: sum(label in m["categories"] for m in members) / len(members)
                    for label in {label for m in members for label in m["categories"]}
                }
                assert from_batch["label_shares"] == pytest.approx(shares)
                from_posts = posted.application(int(uid), app)["profile"]
                for part in ("basis", "first_seen", "last_seen"):  # batch: every valid run's start
                    from_batch.pop(part), from_posts.pop(part)
                assert from_posts == from_batch


def test_batch_single_run_profile_rests_on_the_representative(reference_run):
    with Store(reference_run / "store.sqlite") as store:
        groups = store._db.execute("SELECT uid, application, runs FROM applications").fetchall()
        several = 0
        for uid, app, runs in groups:
            profile = store.application(uid, app)["profile"]
            assert profile["runs"] == 1
            assert profile["basis"] == ("representative" if runs > 1 else "every_run")
            several += runs > 1
        assert several > 0


def test_an_older_store_gets_profiles_from_its_jobs(tmp_path):
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        for result in FIVE:
            store.record(result)
    with sqlite3.connect(path) as db:  # as the store was before the profiles (lookup schema 1)
        for table in ("profile_runs", "profile_groups", "profile_labels", "profile_label_sets"):
            db.execute(f"DROP TABLE {table}")
        db.execute("DELETE FROM meta WHERE key = 'lookup_schema'")
    with Store(path) as store:
        profile = store.application(UID, APP)["profile"]
    assert profile["runs"] == 5 and profile["stability"] == 0.6
    assert profile["label_shares"]["write_periodic"] == 0.6
    assert profile["write"]["bytes"] is None and profile["write"]["periodic"]["runs"] == 3
    assert profile["write"]["periodic"]["period_seconds"] is None  # never kept before
    assert (profile["first_seen"], profile["last_seen"]) == (None, "2019-03-01T00:00:00Z")


def numbers(result: dict) -> dict[str, float]:
    labels, packed = profiles.run_summary(result)
    return dict(zip(profiles.NUMBERS, np.frombuffer(packed, profiles.PACKED).tolist()))


def test_run_summary_numbers():
    by_meanshift = trace("m", 6e9, (300.0, 0.25, 5e8), run_time=3000.0, peak=12.0)
    extra = {"period": 50.0, "busy_fraction": 0.9, "bytes_per_occurrence": 7.0}
    by_meanshift["write"]["periodicity"]["meanshift"]["operations"].insert(0, extra)
    summary = numbers(by_meanshift)
    assert (summary["run_time"], summary["write_bytes"], summary["metadata_peak_per_second"]) == (
        3000,
        6e9,
        12,
    )
    assert summary["write_period"] == 300.0 and summary["write_busy_fraction"] == 0.25
    assert summary["write_bytes_per_occurrence"] == 5e8  # the operation behind the verdict's period
    by_fft = trace("f", 6e9, (300.0, 0.25, 5e8), run_time=3000.0, fft_only=True)
    summary = numbers(by_fft)
    assert summary["write_bytes_per_occurrence"] == 6e8  # 6 GB over 10 periods
    assert math.isnan(summary["read_period"]) and summary["read_bytes"] == 0.0
    assert profiles.run_summary(by_fft)[0] == '["write_steady"]'
    assert profiles.run_summary({"file": "z", "status": "evicted", "reason": "timeout"}) == (None, None)


def test_lookup_prints_the_profile_as_a_table(tmp_path):
    from click.testing import CliRunner

    from mosaic.service.commands import lookup

    with Store(tmp_path / "store.sqlite") as store:
        for result in FIVE:
            store.record(result)
    shown = CliRunner().invoke(
        lookup, ["--uid", str(UID), "--app", APP, "--store", str(tmp_path / "store.sqlite")]
    )
    assert shown.exit_code == 0, shown.output
    lines = [" ".join(line.split()) for line in shown.output.splitlines()]
    for expected in (
        "profile of 5 runs: every stored run",
        "seen 2019-01-01T00:00:00Z .. 2019-03-01T00:00:00Z",
        "stability 60%: runs with the usual categories (write_periodic write_periodic_minute write_steady)",
        "period write, minute: 30 s-30 min (median 3.33 min)",  # the median of 120, 200, 360 s
        "run time 5 30 s 14 s 46 s",  # in the notation of the period line above
        "write bytes per run 5 3 GB 1.4 GB 7.6 GB",
        "write periodic: 60% of runs 3",
        "write period 3 3.33 min 2 min 6 min",
        "write busy fraction 3 0.20 0.12 0.28",
        "write bytes per occurrence 3 200 MB 120 MB 360 MB",
        "read periodic: 0% of runs 0",
        "write_steady 80%",
        "write_on_end 20%",
    ):
        assert expected in lines, (expected, shown.output)
