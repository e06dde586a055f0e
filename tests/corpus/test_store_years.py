"""A store kept for years: bounded lookups (a window of recent runs), pruning against a
store built from the remaining runs alone, vacuum, readers beside the writer, durable
writes."""

import asyncio
import threading
import warnings

import numpy as np
import pytest

from mosaic.corpus import profiles
from mosaic.corpus.listing import Filters
from mosaic.corpus.store import VACUUM_STEP_PAGES, Store
from mosaic.errors import StoreUnavailable
from mosaic_testing.stored import APP, PERIODIC, UID, trace

QUANTILES = {"median": 0.5, "p10": 0.1, "p90": 0.9}


def runs(count: int, seed: int = 3, app: str = APP, uid: int = UID) -> list[dict]:
    """``count`` runs of one group, one a day from 2019-01-01, with random numbers; a third
    write periodically (periods 60-6,000 s)."""
    rng = np.random.default_rng(seed)
    made = []
    for i in range(count):
        day = np.datetime64("2019-01-01") + i
        periodic = (float(rng.uniform(60, 6000)), float(rng.uniform(0.05, 0.5)), 1e8) if i % 3 == 0 else None
        made.append(
            trace(
                f"{app}-{uid}-run{i:05d}",
                float(rng.uniform(1e6, 1e10)),
                periodic,
                run_time=float(rng.uniform(10, 1e4)),
                start=f"{day}T{i % 24:02d}:00:00Z",
                categories=PERIODIC if periodic else ["write_steady"],
                peak=float(rng.uniform(1, 100)),
                job_id=str(i),
                uid=uid,
                application=app,
            )
        )
    return made


def exact(values: list[float]) -> dict:
    array = np.array(values)
    return {name: pytest.approx(float(np.quantile(array, q))) for name, q in QUANTILES.items()} | {
        "runs": len(values)
    }


def test_spreads_are_exact_over_the_window_of_most_recent_runs_and_counts_over_all(tmp_path):
    made = runs(300)
    window = 120
    with Store(tmp_path / "store.sqlite", window=window) as store:
        for result in reversed(made):  # posted newest first: the window is by start, not arrival
            store.record(result)
        profile = store.application(UID, APP)["profile"]
        listed = store.applications(Filters(), 0.3)["applications"][0]
    recent = made[-window:]
    assert profile["runs"] == 300 and profile["label_shares"]["write_periodic"] == 100 / 300
    assert profile["write"]["bytes"] == exact([r["write"]["bytes"] for r in recent])
    assert profile["run_time_seconds"] == exact([r["job"]["run_time"] for r in recent])
    periods = [r["write"]["periodicity"]["verdict"]["period"] for r in recent if r["write"]["periodicity"]]
    assert len(periods) == 40 and profile["write"]["periodic"]["period_seconds"] == exact(periods)
    assert (profile["first_seen"], profile["last_seen"]) == (
        made[0]["job"]["start"],
        made[-1]["job"]["start"],
    )
    # the listing's period class is the lookup's, from the same window
    expected_class = profiles.period_class(float(np.median(periods)))
    assert listed["period_class"] == profile["write"]["periodic"]["period_class"] == expected_class


def test_a_group_within_the_window_is_answered_over_every_run(tmp_path):
    made = runs(50)
    with Store(tmp_path / "store.sqlite", window=50) as store:
        for result in made:
            store.record(result)
        profile = store.application(UID, APP)["profile"]
    assert profile["write"]["bytes"] == exact([r["write"]["bytes"] for r in made])


def answers(store: Store, groups: list[tuple[int, str]]) -> dict:
    found = {group: store.application(*group) for group in groups}
    listing = store.applications(Filters(limit=1000), 0.5)
    jobs = {job_id: store.job(job_id) for job_id in map(str, range(200))}
    return {"applications": found, "listing": listing, "jobs": jobs}


GROUPS = [(UID, APP), (UID, "/bin/other"), (7, APP)]


def fill(store: Store, keep_only=lambda result: True) -> None:
    for seed, (uid, app) in enumerate(GROUPS):
        for result in runs(60 + 40 * seed, seed, app, uid):
            if keep_only(result):
                store.record(result)


@pytest.mark.parametrize(
    ("before", "keep", "kept"),
    [
        ("2019-02-15", None, lambda r: r["job"]["start"] >= "2019-02-15"),
        (None, 25, lambda r: int(r["job"]["job_id"]) >= r["_count"] - 25),
        (
            "2019-03-20",
            10,
            lambda r: int(r["job"]["job_id"]) >= r["_count"] - 10 and r["job"]["start"] >= "2019-03-20",
        ),
        ("2020-01-01", None, lambda r: False),  # every run of every group goes
    ],
)
def test_pruned_store_answers_as_a_store_built_from_the_remaining_runs(tmp_path, before, keep, kept):
    with Store(tmp_path / "pruned.sqlite", window=30) as pruned:
        fill(pruned)
        dropped = pruned.prune(before=before, keep=keep)
        after_prune = answers(pruned, GROUPS)
    with Store(tmp_path / "rebuilt.sqlite", window=30) as rebuilt:

        def remains(result: dict) -> bool:
            count = next(
                60 + 40 * s
                for s, g in enumerate(GROUPS)
                if g[1] == result["job"]["application"] and g[0] == result["job"]["uid"]
            )
            return bool(kept({**result, "_count": count}))

        fill(rebuilt, remains)
        expected = answers(rebuilt, GROUPS)
    assert after_prune == expected
    total = sum(60 + 40 * s for s in range(3))
    remaining = sum(a["runs"] for a in expected["applications"].values() if a)
    assert dropped["runs"] == total - remaining > 0


def test_prune_gives_the_pages_back(tmp_path):
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        for result in runs(2000):
            result["file"] = result["file"] + "-" + "x" * 200  # bulk, so pages are freed
            store.record(result)
        store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        full = path.stat().st_size
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        transactions: list[str] = []
        store._db.set_trace_callback(
            lambda sql: transactions.append(sql) if "BEGIN IMMEDIATE" in sql else None
        )
        dropped = store.prune(keep=100)
        store._db.set_trace_callback(None)
        store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        freed = pages - store._db.execute("PRAGMA page_count").fetchone()[0]
        # the pages given back, counted right, VACUUM_STEP_PAGES a transaction (before
        # 2026-11-29: one page a transaction, and the count a sum of the free pages left):
        # one transaction drops the runs, then one a step of the vacuum
        assert dropped["runs"] == 1900 and dropped["pages_freed"] == freed > VACUUM_STEP_PAGES
        assert len(transactions) == 1 + -(-freed // VACUUM_STEP_PAGES)
        assert store.info()["free_bytes"] == 0
    assert path.stat().st_size < full / 3


def test_a_lookup_and_a_listing_never_wait_for_the_write_lock(tmp_path):
    with Store(tmp_path / "store.sqlite") as store:
        store.record(trace("a"))
        answered: list[object] = []
        reader = threading.Thread(
            target=lambda: answered.extend(
                [
                    store.application(UID, APP)["runs"],
                    store.applications(Filters(), 0.5)["total"],
                    store.job("1"),
                ]
            )
        )
        with store._lock:  # a post holding the writer's lock for as long as it likes
            reader.start()
            reader.join(timeout=30)
            assert not reader.is_alive()
    assert answered[:2] == [1, 1] and answered[2][0]["file"] == "a"


def test_a_listing_past_its_time_bound_is_stopped(tmp_path):
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        for i in range(300):
            store.record(
                trace(f"r{i}", 1e6 * i, (600.0, 0.1, 1e6), categories=PERIODIC, application=f"/a/{i}")
            )
    with Store(path, listing_seconds=1e-6) as bounded:
        with pytest.raises(StoreUnavailable, match="listing stopped after 1e-06 s"):
            bounded.applications(Filters(sort="period_class"), 0.5)
        assert bounded.application(UID, "/a/7")["runs"] == 1  # a lookup is not a listing
    with Store(path, listing_seconds=60) as patient:
        assert patient.applications(Filters(sort="period_class"), 0.5)["total"] == 300


@pytest.mark.parametrize(("durable", "level"), [(True, 2), (False, 1)])
def test_durable_writes_sync_every_commit(tmp_path, durable, level):
    with Store(tmp_path / "store.sqlite", durable=durable) as store:
        assert store._db.execute("PRAGMA synchronous").fetchone()[0] == level  # FULL = 2, NORMAL = 1
        assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_the_service_opens_its_store_durable(tmp_path):
    from mosaic.config import Config
    from mosaic.service.app import ServiceSettings, create_app

    settings = ServiceSettings(store=str(tmp_path / "store.sqlite"), config=Config(), workers=1)
    app = create_app(settings)

    async def started() -> tuple[int, float | None]:
        async with app.router.lifespan_context(app):
            store = app.state.store
            return store._db.execute("PRAGMA synchronous").fetchone()[0], store.listing_seconds

    assert asyncio.run(started()) == (2, Config().store_listing_seconds)


@pytest.mark.parametrize("count", [1, 2, 3, 10, 11, 2000])
def test_spreads_are_numpys_nanquantile_bit_for_bit(count):
    """The lookup's one-sort quantiles equal np.nanquantile's linear method exactly (ties,
    missing values, a column without any), so windowed answers are the exact ones."""
    rng = np.random.default_rng(count)
    values = rng.lognormal(5, 3, (count, len(profiles.NUMBERS)))
    values[rng.random(values.shape) < 0.3] = np.nan
    values[:, 1] = np.nan  # never measured
    values[:, 2] = 7.0  # all tied
    found = profiles.spreads(values)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the all-NaN column
        expected = np.nanquantile(values, profiles.QUANTILES, axis=0)
    for column, spread in enumerate(found):
        if spread is None:
            assert np.isnan(expected[:, column]).all()
            continue
        assert [spread["median"], spread["p10"], spread["p90"]] == expected[:, column].tolist()
        assert spread["runs"] == int((~np.isnan(values[:, column])).sum())
