"""SPEC 3.11.2: slowdown, the slow rule at its edges, causes and their visibility."""

import math

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.interference import slow_runs as sr

CONFIG = Config(contention_min_runs=8)


def test_slowdown_and_the_slow_threshold_edges():
    # low load (<= 25 % quantile of the loads, 0): runs 0-3 with times 1, 1, 1, 1 -> sigma 0;
    # the threshold is contention_slow_min_ratio = 1.25, reached with >=
    normalized = np.array([1.0, 1.0, 1.0, 1.0, 1.25, 1.2499, 3.0, np.nan, 2.0])
    load = np.array([0.0, 0.0, 0.0, 0.0, 5e7, 5e7, 9e7, 1e7, 6e7])
    out = sr.slowdowns(normalized, load, CONFIG)
    assert out["threshold"] == 1.25 and out["sigma"] == 0.0
    assert out["slow"].tolist() == [False] * 4 + [True, False, True, False, True]
    assert math.isnan(out["slowdown"][7])
    assert out["slowdown"][6] == 3.0


def test_the_spread_of_the_low_load_runs_raises_the_threshold():
    normalized = np.array([1.0, 1.2, 1 / 1.2, 1.0, 2.0, 2.5, 2.0, 2.0])
    load = np.array([0.0, 0.0, 0.0, 0.0, 1e7, 1e7, 1e7, 1e7])
    out = sr.slowdowns(normalized, load, CONFIG)
    # log slowdowns 0, .182, -.182, 0: MAD .0912 -> sigma .1352 -> exp(3 sigma) = 1.500
    sigma = 1.4826 * np.median(np.abs(np.log([1.0, 1.2, 1 / 1.2, 1.0])))
    assert out["sigma"] == pytest.approx(sigma)
    assert out["threshold"] == pytest.approx(math.exp(3 * sigma))
    assert out["slow"].tolist() == [False] * 4 + [True] * 4


def test_too_few_runs_are_never_judged():
    out = sr.slowdowns(np.ones(7), np.zeros(7), CONFIG)
    assert out["threshold"] is None and not out["slow"].any() and np.isnan(out["slowdown"]).all()


def test_top_overlaps_sums_file_systems_and_breaks_ties_by_id():
    run = np.array([1, 1, 1, 2, 2, 3])
    other = np.array([7, 8, 7, 9, 5, 4])
    moved = np.array([10.0, 25.0, 20.0, 5.0, 5.0, 0.0])
    top = sr.top_overlaps(run, other, moved)
    assert top["run"].tolist() == [1, 2, 3]
    assert top["other"].tolist() == [7, 5, 4]  # 7: 10 + 20 on two file systems > 25; a 5-5 tie: id 5
    assert top["share"] == pytest.approx([30 / 55, 0.5, 0.0])
    assert top["others"].tolist() == [2, 2, 1]
    assert sr.top_overlaps(np.zeros(0), np.zeros(0), np.zeros(0))["run"].size == 0


def test_traits_at_their_edges():
    assert sr.run_traits("N:1", 300.0, 65536.0, CONFIG) == ["n1"]  # 300 is not > 300; 64 KiB is not < 64 KiB
    assert sr.run_traits("N:N", 300.5, 65535.0, CONFIG) == ["metadata", "small_requests"]
    assert sr.run_traits(None, None, None, CONFIG) == []
    assert (
        sr.mean_request_bytes({"job": {"read": {"bytes": 100, "requests": 4}, "write": {"bytes": 0}}}) == 25.0
    )
    assert sr.mean_request_bytes({"job": {"mean_request_bytes": 7}}) == 7.0
    assert sr.mean_request_bytes({"job": {"read": {"bytes": 1.0}}}) is None
    assert sr.mean_request_bytes(None) is None


def test_cause_rules():
    top = {"other": 9, "share": 0.3, "others": 3}
    named = sr.cause(1e6, 5e7, top, ["n1"], CONFIG)
    assert named == {
        "kind": "run",
        "run": 9,
        "share": 0.3,
        "others": 3,
        "traits": ["n1"],
    }  # share == 0.3: named
    assert sr.cause(1e6, 5e7, {**top, "share": 0.5}, ["n1"], CONFIG)["traits"] == ["n1", "bandwidth"]
    below = {**top, "share": 0.2999}
    assert sr.cause(5.1e7, 5e7, below, [], CONFIG)["kind"] == "many jobs at once"
    assert (
        sr.cause(5e7, 5e7, below, [], CONFIG)["kind"] == "not explained"
    )  # at the 95th percentile: not above
    assert sr.cause(0.0, None, None, [], CONFIG) == {"kind": "not explained", "others": 0, "load": 0.0}


def test_visibility_rule():
    stored = {"kind": "run", "run": 5, "job_id": "70009", "uid": 1000, "application": "/bin/x",
              "group_key": "1000:/bin/x", "share": 0.6, "traits": ["n1"]}  # fmt: skip
    assert sr.visible_cause(stored, operator=True) == stored
    shown = sr.visible_cause(stored, operator=False, caller_uid=42)
    assert shown == {"kind": "run", "job": "another job", "share": 0.6, "traits": ["n1"]}
    assert sr.visible_cause(stored, operator=False, caller_uid=1000) == stored
    crowd = {"kind": "many jobs at once", "others": 4, "load": 1.0}
    assert sr.visible_cause(crowd, operator=False) == crowd
