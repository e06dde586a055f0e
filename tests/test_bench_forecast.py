"""The forecast's backtest harness (benchmarks/bench_forecast.py): its scores on a hand-computed
pair of jobs, and on a small synthetic day/week-cycle load made here, where the forecast beats
persistence and the hour-of-week mean and high-risk starts are slowed more often than low-risk
ones. (New: fails on e627ff0.)"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.bench_forecast import WEEK, Year, backtest, cycle, pearson, render, synthetic_year
from mosaic.forecast import MONDAY_EPOCH, Settings
from mosaic_testing.contracts import signature_body

T0 = MONDAY_EPOCH + 2800 * WEEK


def constant(rate: float, run_time: float) -> dict:
    return signature_body([0.0] * 4, [rate] * 4, run_time, runs=10, resolution=1.0)


def test_scores_on_two_hand_computed_jobs():
    """Job 0 writes 100 B/s over [T0, T0 + 1200); job 1 starts at T0 + 600 (held out) and meets
    [100, 0] over its two bins. The forecast says [100, 0]; persistence the 100 B/s of the bin
    before its start; the hour-of-week mean of an empty history 0."""
    origin = T0 - 2 * WEEK
    bins = int((2 * WEEK + 2400) // 600)  # 600 s bins: a week is 1008 of them
    timeline = np.zeros(bins)
    at = int((T0 - origin) // 600)
    timeline[at : at + 3] = [100 * 600, 200 * 600, 100 * 600]
    year = Year(
        starts=np.array([T0, T0 + 600]),
        run_times=np.array([1200.0, 1200.0]),
        groups=np.array([0, 0]),
        time_limits=np.array([np.nan, np.nan]),
        slowdowns=np.array([1.0, 2.0]),
        loads=np.array([[100.0, 100.0], [100.0, 0.0]]),
        origin=origin,
        bin_seconds=600.0,
        timeline=timeline,
        signatures=[constant(100.0, 1200.0)],
        sensitivity=[("sensitive", 0.005)],
    )
    result = backtest(year, T0 + 300, T0 + 1200, settings=Settings(bins=2))
    assert result["starts"] == 1
    scores = result["scores"]
    assert scores["forecast"] == {
        "pearson_median": 1.0,
        "pearson_defined": 1.0,
        "wape": 0.0,
        "peak_error_median": 0.0,
    }
    assert scores["persistence"]["wape"] == 1.0 and scores["persistence"]["pearson_defined"] == 0.0
    assert math.isnan(scores["persistence"]["pearson_median"])
    assert scores["hour_of_week"]["wape"] == 1.0
    # its own slowdown 1 + 0.005 * 50 = 1.25; what it adds to job 0: 0.005 * 100 = +0.5: high
    assert result["confusion"]["high"] == {"starts": 1, "slowed": 1, "slowed_share": 1.0}
    assert result["confusion"]["low"]["starts"] == 0
    assert "| forecast | 1.000 | 100% | 0.000 | 0.000 |" in render(result)


def test_pearson_is_undefined_for_a_flat_series():
    assert math.isnan(pearson(np.ones(3), np.arange(3.0)))
    assert pearson(np.arange(3.0), np.arange(3.0) * 2) == 1.0


def test_the_synthetic_cycle_and_the_forecast_beats_both_baselines():
    assert cycle(np.array([MONDAY_EPOCH + 15 * 3600.0]))[0] > cycle(np.array([MONDAY_EPOCH + 3 * 3600.0]))[0]
    assert (
        cycle(np.array([MONDAY_EPOCH + 15 * 3600.0]))[0]
        > cycle(np.array([MONDAY_EPOCH + 5 * 86400 + 15 * 3600.0]))[0]
    )
    year = synthetic_year(weeks=3, seed=3, jobs_per_day=40.0)
    result = backtest(year, year.origin + 2 * WEEK, year.origin + 3 * WEEK)
    assert result["starts"] > 100
    f, p, h = (result["scores"][name] for name in ("forecast", "persistence", "hour_of_week"))
    assert f["wape"] < h["wape"] and f["wape"] < p["wape"]
    assert f["pearson_median"] > h["pearson_median"]
    assert f["pearson_median"] > (0.0 if math.isnan(p["pearson_median"]) else p["pearson_median"])
    assert f["peak_error_median"] <= min(h["peak_error_median"], p["peak_error_median"])
    high, low = result["confusion"]["high"], result["confusion"]["low"]
    assert high["starts"] > 0 and low["starts"] > 0
    assert high["slowed_share"] > low["slowed_share"]
