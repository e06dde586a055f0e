"""Signatures (SPEC 3.12) against designed ones and two baselines, their steps on
hand-computed inputs, and the runs that give no signature."""

import json
import math

import numpy as np
import pytest

from mosaic.config import DEFAULT, Config
from mosaic.series import empty, series_from_intervals
from mosaic.signature import (
    SignatureSettings,
    best_lags,
    build,
    clique,
    find_bursts,
    local_outlier_factor,
    normalized_cross_correlation,
    outliers,
    shift_rows,
    split_merged,
    unslowed_length,
)
from mosaic.synth.signatures import DESIGNS, designed_curve, noisy_runs

SETTINGS = SignatureSettings.of(DEFAULT)
K = SETTINGS.signature_points
LAG = int(SETTINGS.signature_max_lag_share * K)  # the measure's lags: as far as the runs may shift
RUNS = 12


def heaviest(runs):
    return max(runs, key=lambda s: s.total("read") + s.total("write"))


def scores(design, runs, built):
    """The bytes-weighted cross-correlation with the designed signature of: the signature's
    p50, the heaviest run alone, and the plain mean of the lag-aligned runs; and each
    direction's signature score."""
    weights = {d: sum(b.bytes for b in design.bursts if b.direction == d) for d in ("read", "write")}
    total = sum(weights.values())
    out = np.zeros(3)
    alone = {}
    for direction, weight in weights.items():
        if weight == 0:
            continue
        truth = designed_curve(design, direction, K)
        curves = (
            np.array(built.body["normalized"][direction]["p50"]),
            heaviest(runs).normalized(direction, K),
            built.lagged[direction].mean(axis=0),
        )
        got = np.array([normalized_cross_correlation(c, truth, LAG) for c in curves])
        alone[direction] = got[0]
        out += weight / total * got
    return out, alone


CASES = [(design, bins) for design in DESIGNS for bins in (None, 200)]


@pytest.mark.parametrize(
    ("design", "bins"), CASES, ids=[f"{d.name}-{'heatmap' if b else 'dxt'}" for d, b in CASES]
)
def test_signature_matches_the_design_and_beats_both_baselines(design, bins):
    rng = np.random.default_rng(11)
    runs = noisy_runs(design, RUNS, rng, bin_seconds=design.run_time / bins if bins else None)
    built = build(runs, SETTINGS)
    assert built.reason is None
    (signature, heavy, mean), alone = scores(design, runs, built)
    assert min(alone.values()) >= 0.9
    assert signature > heavy and signature > mean
    # no designed burst missed: one found at its start (+- 2 % of the run) with its bytes (+- 10 %)
    for burst in design.bursts:
        found = [
            b
            for b in built.body["bursts"]
            if b["direction"] == burst.direction
            and abs(b["start"] - burst.start) <= 0.02
            and abs(b["bytes"] / burst.bytes - 1) <= 0.1
        ]
        assert len(found) == 1, burst
        assert found[0]["runs"] >= math.ceil(SETTINGS.signature_kappa * len(built.kept)) - 1
    assert len(built.body["bursts"]) == len(design.bursts)  # nothing of the background


def test_the_body_holds_contract_six():
    runs = noisy_runs(DESIGNS[1], RUNS, np.random.default_rng(5))
    body = build(runs, SETTINGS).body
    assert json.loads(json.dumps(body)) == body
    assert body["runs"] == RUNS - body["outliers"]
    assert set(body["run_time"]) == {"p10", "p50", "p90"}
    assert body["normalized"]["points"] == K
    for direction in ("read", "write"):
        assert set(body["normalized"][direction]) == {"p10", "p50", "p90"}
        p10, p50, p90 = (np.array(body["normalized"][direction][q]) for q in ("p10", "p50", "p90"))
        assert len(p50) == K and (p10 <= p50).all() and (p50 <= p90).all()
    for burst in body["bursts"]:
        assert set(burst) >= {"direction", "start", "duration", "bytes", "bandwidth", "runs"}
        assert 0 <= burst["start"] <= 1 and 0 < burst["duration"] <= 1
    # resolution: the runs' own steps, or the signature's points if coarser
    assert body["resolution"] == pytest.approx(max(body["run_time"]["p50"] / K, body["resolution"]))
    assert body["sources"] == ["dxt"]


def test_absolute_time_only_where_the_run_lengths_agree():
    design = DESIGNS[0]
    steady = noisy_runs(design, RUNS, np.random.default_rng(2), jitter=0.02, stretch_probability=0.0)
    built = build(steady, SETTINGS)
    absolute = built.body["absolute"]
    assert absolute["agree"] and absolute["spread"] <= SETTINGS.signature_length_agree
    # bins of one width up to the p90 run time; the bursts' bytes at their seconds
    assert absolute["points"] * absolute["resolution"] >= built.body["run_time"]["p90"]
    read = np.array(absolute["read"]["p50"]) * absolute["resolution"]
    assert read.sum() == pytest.approx(8000 * 2**20, rel=0.05)
    stretched = noisy_runs(design, RUNS, np.random.default_rng(2), jitter=0.2)
    absolute = build(stretched, SETTINGS).body["absolute"]
    assert not absolute["agree"] and "signature_length_agree" in absolute["reason"]


# ----- no signature, and why -----


def test_too_few_runs_give_no_signature_and_say_why():
    runs = noisy_runs(DESIGNS[0], SETTINGS.signature_min_runs - 1, np.random.default_rng(1), missing=0)
    built = build(runs, SETTINGS)
    assert built.body is None
    assert built.reason == "4 runs stored; a signature needs 5 (signature_min_runs)"
    assert build(runs, SignatureSettings.of(Config(signature_min_runs=4))).body is not None


def test_runs_without_timing_give_no_signature_and_say_why():
    timed = noisy_runs(DESIGNS[0], 4, np.random.default_rng(1))
    runs = timed + [empty(600.0), empty(0.0)]
    built = build(runs, SETTINGS)
    assert built.body is None
    assert built.reason == (
        "4 of 6 runs place their bytes in time (DXT, HEATMAP or timestamps); "
        "a signature needs 5 (signature_min_runs)"
    )
    nothing = np.zeros(0)
    untimed = [series_from_intervals(nothing, nothing, nothing, nothing, 10.0, "records", 16)] * 6
    assert "0 of 6 runs place their bytes in time" in build(untimed, SETTINGS).reason


def test_outliers_that_leave_too_few_runs_say_so():
    runs = noisy_runs(DESIGNS[0], 5, np.random.default_rng(1), missing=0)
    start, end = np.array([0.0]), np.array([1.0])
    odd = series_from_intervals(start, end, np.array([1e15]), np.zeros(1), 60_000.0, "dxt", 16)
    settings = SignatureSettings.of(Config(signature_min_runs=6))
    built = build(runs + [odd], settings)
    assert built.body is None
    assert built.reason == (
        "5 of 6 timed runs left once 1 outliers (LOF) are dropped; a signature needs 6 (signature_min_runs)"
    )
    assert build(runs + [odd], SETTINGS).body["outliers"] == 1


# ----- the steps -----


def test_cross_correlation_finds_the_lag_and_ignores_scale():
    x = np.zeros(100)
    x[20:30] = 1.0
    y = np.roll(x, 4) * 7.0
    assert normalized_cross_correlation(x, y, 4) == pytest.approx(1.0)
    # no lag: 6 of the 10 points overlap; Pearson (6 - 10 * 10 / 100) / (10 - 10 * 10 / 100)
    assert normalized_cross_correlation(x, y, 0) == pytest.approx(5 / 9)
    assert normalized_cross_correlation(x, np.ones(100), 5) == 0.0  # a constant has no shape


def test_lof_drops_the_far_run_and_keeps_close_ones():
    run_time = np.array([100.0, 101, 99, 102, 98, 100, 400])
    volume = np.array([1e9, 1.01e9, 0.99e9, 1e9, 1.02e9, 0.98e9, 1e9])
    assert outliers(run_time, volume, 10, 1.5).tolist() == [False] * 6 + [True]
    # within 10 % of each other no run is an outlier, however tight the rest
    assert not outliers(np.array([100.0, 100, 100, 100, 108]), np.full(5, 1e9), 10, 1.5).any()


@pytest.mark.parametrize("n, k", [(5, 2), (12, 5), (30, 10), (30, 29), (7, 20)])
def test_the_local_outlier_factor_is_scikit_learns(n, k):
    """scikit-learn as the oracle: its scores on random 2-D points (and on a cluster with a
    far point), to 1e-9, k capped at n - 1 as it caps it."""
    import warnings

    from sklearn.neighbors import LocalOutlierFactor

    rng = np.random.default_rng(n * 100 + k)
    for points in (rng.normal(size=(n, 2)), np.vstack([rng.normal(0, 0.1, size=(n - 1, 2)), [[5.0, 5.0]]])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # its note that k > n - 1 was capped
            oracle = LocalOutlierFactor(n_neighbors=k).fit(points)
        expected = -oracle.negative_outlier_factor_
        assert local_outlier_factor(points, k) == pytest.approx(expected, rel=1e-9)


def test_the_local_outlier_factor_by_hand():
    """Points 0, 1, 3 and 10 on a line, k = 1: nearest neighbours 1, 0, 1, 3 at 1, 1, 2, 7;
    reach-dists max(d, k-dist of the neighbour): 1, 1, 2, 7; densities 1, 1, 1/2, 1/7; LOF
    = density of the neighbour / own: 1, 1, 2, 3.5."""
    points = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0], [10.0, 0.0]])
    assert local_outlier_factor(points, 1) == pytest.approx([1.0, 1.0, 2.0, 3.5], rel=1e-8)


def test_rows_shift_by_their_lag_with_zeros_in():
    rows = np.array([[1.0, 2, 3, 4], [1, 2, 3, 4]])
    assert shift_rows(rows, np.array([1, -2])).tolist() == [[0, 1, 2, 3], [3, 4, 0, 0]]
    base = np.zeros(64)
    base[20:26] = 1
    curves = np.vstack([np.roll(base, lag) for lag in (0, 0, 0, 3, -2)])
    assert best_lags(curves, 4).tolist() == [0, 0, 0, -3, 2]


def test_bursts_are_found_with_the_wavelet_and_trimmed_to_the_raw_points():
    curve = np.zeros(256)
    curve[40:60] = 10.0
    curve[150:155] = 4.0
    curve[200] = 0.3  # under the line: background
    found = find_bursts(curve, 0.1)
    assert found[:, :2].tolist() == [[40, 60], [150, 155]]
    assert (found[:, 2] <= found[:, 0]).all() and (found[:, 3] >= found[:, 1]).all()
    assert len(find_bursts(np.zeros(256), 0.1)) == 0


def test_clique_needs_a_dense_unit_and_a_dense_neighbourhood():
    # 10 runs; a burst near 0.3 in 9 of them, one near 0.6 in 5, and stray points
    x = np.array([0.30, 0.31, 0.29, 0.30, 0.32, 0.30, 0.31, 0.33, 0.28] + [0.6] * 5 + [0.9])
    y = np.array([0.5] * 9 + [0.5] * 5 + [0.1])
    run = np.array(list(range(9)) + [0, 1, 2, 3, 4] + [9])
    labels = clique(x, y, run, 10, 0.5, 0.9, 0.05, 0.25)
    assert (labels[:9] == labels[0]).all() and labels[0] >= 0  # 9 of 10 >= ceil(0.9 * 10)
    assert (labels[9:] == -1).all()  # 5 runs: a dense unit (>= 5), not a dense neighbourhood (< 9)
    assert (clique(x, y, run, 10, 0.5, 1.0, 0.05, 0.25) == -1).all()  # kappa 1: all 10 runs needed


def test_a_common_burst_holding_two_bursts_of_its_runs_splits_in_order():
    run = np.array([0, 0, 1, 1, 2, 2, 3])
    centre = np.array([0.40, 0.50, 0.41, 0.52, 0.39, 0.49, 0.51])
    labels = split_merged(np.zeros(7, np.int64), run, centre)
    assert labels.tolist() == [0, 1, 0, 1, 0, 1, 1]  # run 3's one burst goes to the nearer part


def test_runs_of_different_input_sizes_agree_on_their_bursts():
    """Twelve runs of one shape (writes over 20-30 % and 60-70 % of 600 s, 1 GiB each at
    scale 1) whose inputs scale their bytes from 0.001x to 1.5x (log-even: no run is an
    outlier): a burst's share of its own run's bytes (0.5 each) places it on the CLIQUE grid,
    so both are common to all twelve. As shares of the median run's bytes (before
    2026-12-02) the bursts of the small runs sat near 0 and of the large near 1.5: no
    dense unit held 90 % of the runs, and the contention year's background groups showed 7
    of their 222 designed bursts."""
    scales = np.geomspace(1e-3, 1.5, 12)
    start, end = np.array([120.0, 360.0]), np.array([180.0, 420.0])
    runs = [
        series_from_intervals(start, end, np.zeros(2), np.full(2, 2.0**30 * s), 600.0, "dxt", 1 << 12)
        for s in scales
    ]
    body = build(runs, SETTINGS).body
    assert body["outliers"] == 0
    bursts = [b for b in body["bursts"] if b["direction"] == "write"]
    assert [b["runs"] for b in bursts] == [12, 12]
    assert [round(b["start"], 2) for b in bursts] == [0.2, 0.6]
    assert [round(b["duration"], 2) for b in bursts] == [0.1, 0.1]


def test_unslowed_length_leaves_out_the_slowed_tail_only():
    # median 1.0, MAD 0.25 (x 1.4826): the cut is 1.0 + 3 x 0.37065 = 2.11195
    lengths = np.array([1.0, 1.25, 0.75, 1.0, 3.0, np.nan])
    assert unslowed_length(lengths) == pytest.approx(1.0)  # (1 + 1.25 + 0.75 + 1) / 4
    cut = 1.0 + 3.0 * (1.4826 * 0.25)
    assert unslowed_length(np.array([1.0, 1.25, 0.75, 1.0, cut])) == pytest.approx((4.0 + cut) / 5)  # kept
    assert unslowed_length(np.array([1.0, 1.25, 0.75, 1.0, cut + 1e-9])) == pytest.approx(1.0)  # slowed
    # every run the same length (MAD 0): the spread is taken as a thousandth of the median,
    # so a run past 2.0 + 3 x 0.002 is slowed
    assert unslowed_length(np.array([2.0, 2.0, 2.0, 2.006 + 1e-9])) == 2.0
    assert unslowed_length(np.array([2.0, 2.0, 2.0, 2.006 - 1e-9])) == pytest.approx(2.0015)


def test_a_burst_of_jittered_runs_lasts_its_design_slowed_runs_left_out():
    """Ten runs of 1,000 s at design: compute 300 s, a 100 s write, 600 s more; the compute
    before the write jitters 0.85-1.15x (evenly), and two runs' writes were slowed to 200 s.
    In shares of each run's time outside its bursts the write lasts 100 / (300 f + 600):
    their mean over the eight unslowed runs is the design's 1/9, and the layout gives back
    start 0.3 and duration 0.1. The 25th percentile (before 2026-12-02) gave 0.098; a
    plain mean of all ten (slowed ones in) 0.118."""
    factors = np.linspace(0.85, 1.15, 10)
    runs = []
    for i, f in enumerate(factors):
        write = 200.0 if i in (3, 6) else 100.0
        begin = 300.0 * f
        runs.append(
            series_from_intervals(
                np.array([begin]),
                np.array([begin + write]),
                np.zeros(1),
                np.array([2.0**30]),
                begin + write + 600.0,
                "dxt",
                1 << 12,
            )
        )
    body = build(runs, SETTINGS).body
    (burst,) = [b for b in body["bursts"] if b["direction"] == "write"]
    assert burst["runs"] == 10
    assert burst["start"] == pytest.approx(0.3, abs=0.003)
    assert burst["duration"] == pytest.approx(0.1, abs=0.001)
