"""The store's applications listed: filters, sorts, pages, and period classes equal to the lookup's."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mosaic.corpus.listing import MAX_LIMIT, Filters, group_medians
from mosaic.corpus.store import Store
from mosaic_testing.stored import PERIODIC, trace

LMP, GMX, HOME_GMX = "/bin/lmp", "/opt/gromacs/bin/gmx_mpi", "/home/u7/gmx_mpi"
ON_END = ["write_on_end"]


def runs(uid, app, *specs):
    """One trace per (bytes, period or None, categories), job ids apart per group."""
    return [
        trace(
            f"{uid}{app}-{i}",
            nbytes,
            period and (period, 0.1, 1e6),
            100.0,
            f"2019-01-0{i + 1}T00:00:00Z",
            categories,
            job_id=f"{uid}{app}{i}",
            uid=uid,
            application=app,
        )
        for i, (nbytes, period, categories) in enumerate(specs)
    ]


GROUPS = [
    # 5 runs, writes periodic in 3 (share 0.6), periods 100, 200, 400: median 200, class 2
    *runs(
        42,
        LMP,
        (1e9, 100.0, PERIODIC),
        (2e9, 200.0, PERIODIC),
        (3e9, 400.0, PERIODIC),
        (4e9, None, ON_END),
        (10e9, None, ON_END),
    ),
    # 2 runs, both periodic, periods 5 and 7: median 6, class 0
    *runs(42, GMX, (1e9, 5.0, PERIODIC), (2e9, 7.0, PERIODIC)),
    # 1 run, not periodic
    *runs(7, HOME_GMX, (3e9, None, ON_END)),
    # 4 runs, periodic in 2 (share 0.5: the minimum, included), periods 10 and 1000: median 505, class 2;
    # its heaviest run moves 5 GB
    *runs(7, LMP, (5e9, 10.0, PERIODIC), (1e9, 1000.0, PERIODIC), (1e9, None, ON_END), (1e9, None, ON_END)),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with Store(tmp_path_factory.mktemp("listing") / "store.sqlite") as opened:
        for result in GROUPS:
            opened.record(result)
        yield opened


def names(store, **filters):
    return [
        (item["uid"], item["application"]) for item in store.applications(Filters(**filters))["applications"]
    ]


def test_every_group_with_the_lookups_numbers(store):
    listed = store.applications(Filters())
    assert listed["total"] == 4 and (listed["offset"], listed["limit"], listed["sort"]) == (0, 50, "runs")
    by_name = {(item["uid"], item["application"]): item for item in listed["applications"]}
    lmp = by_name[(42, LMP)]
    assert (lmp["runs"], lmp["profile_runs"], lmp["heaviest_bytes"]) == (5, 5, 10e9)
    assert lmp["label_shares"] == {
        "write_on_end": 0.4,
        "write_periodic": 0.6,
        "write_periodic_minute": 0.6,
        "write_steady": 0.6,
    }
    assert (lmp["period_class"], lmp["period_direction"]) == (2, "write")
    assert lmp["categories"] == ON_END and lmp["last_seen"] == "2019-01-05T00:00:00Z"
    assert (by_name[(42, GMX)]["period_class"], by_name[(7, LMP)]["period_class"]) == (0, 2)
    assert (by_name[(7, HOME_GMX)]["period_class"], by_name[(7, HOME_GMX)]["period_direction"]) == (
        None,
        None,
    )
    for (uid, app), item in by_name.items():  # the listing says what each lookup says
        profile = store.application(uid, app)["profile"]
        assert (item["period_class"], item["period_direction"]) == (
            profile["period_class"],
            profile["period_direction"],
        )
        assert item["label_shares"] == profile["label_shares"]


def test_sorts_largest_first_and_missing_last(store):
    assert names(store) == [(42, LMP), (7, LMP), (42, GMX), (7, HOME_GMX)]  # runs 5, 4, 2, 1
    assert names(store, sort="bytes") == [(42, LMP), (7, LMP), (7, HOME_GMX), (42, GMX)]  # 10, 5, 3, 2 GB
    # classes 2, 2 (ties by uid then app), 0, none
    assert names(store, sort="period_class") == [(7, LMP), (42, LMP), (42, GMX), (7, HOME_GMX)]
    # reversed, ties still in (uid, app) order
    assert names(store, sort="period_class", reverse=True) == [(7, HOME_GMX), (42, GMX), (7, LMP), (42, LMP)]
    # write_periodic shares 1.0, 0.6, 0.5, 0
    assert names(store, sort="write_periodic") == [(42, GMX), (42, LMP), (7, LMP), (7, HOME_GMX)]
    assert names(store, sort="last_seen") == [(42, LMP), (7, LMP), (42, GMX), (7, HOME_GMX)]  # 5, 4, 2, 1 Jan
    assert names(store, sort="app") == [(7, LMP), (42, LMP), (7, HOME_GMX), (42, GMX)]  # /bin, /home, /opt
    assert names(store, sort="uid") == [(7, LMP), (7, HOME_GMX), (42, LMP), (42, GMX)]
    assert names(store, sort="uid", reverse=True) == [(42, LMP), (42, GMX), (7, LMP), (7, HOME_GMX)]


def test_filters(store):
    assert names(store, uid=7) == [(7, LMP), (7, HOME_GMX)]
    assert names(store, match="gmx_mpi") == [(42, GMX), (7, HOME_GMX)]
    assert names(store, match="gmx", uid=42) == [(42, GMX)]
    assert names(store, match="GMX") == []  # paths are case-sensitive
    assert names(store, label="write_on_end") == [(42, LMP), (7, LMP), (7, HOME_GMX)]
    assert names(store, label="read_periodic") == []
    assert names(store, periodic=True) == [(42, LMP), (7, LMP), (42, GMX)]
    assert names(store, periodic=False) == [(7, HOME_GMX)]


def test_the_minimum_periodic_share_edges(store):
    """(7, lmp) is periodic in 2 of 4 runs: a class at a minimum share of 0.5, none past it."""
    at = store.applications(Filters(uid=7, match="lmp"), min_periodic_share=0.5)["applications"]
    past = store.applications(Filters(uid=7, match="lmp"), min_periodic_share=0.5000001)["applications"]
    assert (at[0]["period_class"], past[0]["period_class"]) == (2, None)
    # the filter draws the same line: shares 1.0, 0.6, 0.5 periodic, 0 not
    assert store.applications(Filters(periodic=True), min_periodic_share=0.5)["total"] == 3
    assert store.applications(Filters(periodic=True), min_periodic_share=0.5000001)["total"] == 2
    assert store.applications(Filters(periodic=False), min_periodic_share=0.5000001)["total"] == 2
    assert store.applications(Filters(periodic=True), min_periodic_share=0.61)["total"] == 1  # gmx: 2 of 2


def test_pages(store):
    first = store.applications(Filters(limit=3))
    second = store.applications(Filters(limit=3, offset=3))
    assert (first["total"], second["total"]) == (4, 4)
    assert [len(first["applications"]), len(second["applications"])] == [3, 1]
    assert store.applications(Filters(offset=4))["applications"] == []
    # the page beyond the first gets its period class too
    assert second["applications"][0]["application"] == HOME_GMX
    assert store.applications(Filters(limit=1, offset=1))["applications"][0]["period_class"] == 2


@pytest.mark.parametrize(
    "filters, message",
    [
        ({"sort": "size"}, "sort by 'size': choose from runs, bytes"),
        ({"label": "write_periodical"}, "label 'write_periodical'"),
        ({"limit": 0}, "1 <= limit"),
        ({"limit": MAX_LIMIT + 1}, "1 <= limit"),
        ({"offset": -1}, "0 <= offset"),
        ({"offset": 2**63}, "offset <= 9223372036854775807"),  # past SQLite's int64
    ],
)
def test_bad_filters_are_refused(filters, message):
    with pytest.raises(ValueError, match=message):
        Filters(**filters)
    Filters(limit=MAX_LIMIT, offset=0)  # the edges themselves are allowed
    Filters(offset=2**63 - 1)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.one_of(st.just(np.nan), st.floats(1e-3, 1e6))), max_size=40))
def test_group_medians_are_numpys_nanquantile(pairs):
    groups = np.array([g for g, _ in pairs], dtype=np.intp)
    values = np.array([v for _, v in pairs], dtype=float)
    medians = group_medians(groups, values, 5)
    for g in range(5):
        mine = values[groups == g]
        if np.isnan(mine).all():
            assert np.isnan(medians[g])
        else:
            assert medians[g] == np.nanquantile(mine, 0.5)
