"""SPEC 3.11.1: the sensitivity statistics, labels at their edges, and the statistics'
claims: false positives on null data against BH's q, recall on designed effects."""

import math

import numpy as np
import pytest
import scipy.stats

from mosaic.config import Config
from mosaic.interference import sensitivity as s

CONFIG = Config(contention_min_runs=8)


def test_normalized_time_is_seconds_per_byte_and_nan_where_unknown():
    out = s.normalized_time(np.array([2.0, np.nan, 0.0, 3.0, 1.0]), np.array([4.0, 1.0, 1.0, 0.0, -1.0]))
    assert out[0] == 0.5
    assert np.isnan(out[1:]).all()


def test_benjamini_hochberg_by_hand():
    # sorted .01 .03 .04 .2 -> .04, .06, .0533, .2 -> running minimum from the top
    q = s.benjamini_hochberg([0.01, 0.04, 0.03, 0.2])
    assert q == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.2])
    assert s.benjamini_hochberg([]).size == 0


def test_spearman_switches_from_permutation_to_asymptotic_at_the_edge():
    rng = np.random.default_rng(0)
    x = np.arange(10.0)
    y = np.array([1, 0, 2, 4, 3, 5, 7, 6, 9, 8.0])
    rho, p, method = s.spearman_greater(x, y, 11, 999, rng)
    assert method == "permutation"
    assert rho == pytest.approx(scipy.stats.spearmanr(x, y).statistic)
    assert 1 / 1000 <= p < 0.01  # never 0; the resolution is 1 / (1 + permutations)
    rho2, p2, method2 = s.spearman_greater(x, y, 10, 999, rng)
    assert method2 == "asymptotic"
    assert p2 == pytest.approx(scipy.stats.spearmanr(x, y, alternative="greater").pvalue)
    # a constant side: no rho, p = 1
    assert s.spearman_greater(x, np.ones(10), 5, 99, rng)[1:] == (1.0, "none")


def test_permutation_p_counts_ties_of_the_observed_rho():
    # n = 3, y in x's order: rho = 1 is reached by 1 of 6 orders: p ~ 1/6
    rng = np.random.default_rng(1)
    _, p, _ = s.spearman_greater(np.arange(3.0), np.arange(3.0), 10, 9999, rng)
    assert p == pytest.approx(1 / 6, abs=0.015)


def test_side_statistics():
    x = np.arange(20.0)
    assert s.distance_correlation(x, 3 * x + 1) == pytest.approx(1.0)
    assert s.distance_correlation(x, -x) == pytest.approx(1.0)
    assert math.isnan(s.distance_correlation(x, np.ones(20)))
    assert s.normalized_mutual_information(x, x) == pytest.approx(1.0)
    # 20 runs: 2 bins; y alternates across x's halves -> no information
    assert s.normalized_mutual_information(x, np.tile([0.0, 1.0], 10)) == pytest.approx(0.0, abs=1e-12)


def test_slope_interval_of_an_exact_line_collapses_on_it():
    load = np.array([0.0, 1e7, 2e7, 3e7, 4e7, 5e7])
    slowdown = 1 + 2e-8 * load
    a, b, lo, hi = s.slope_interval(load, slowdown, 199, np.random.default_rng(0))
    assert (a, b) == pytest.approx((1.0, 2e-8))
    assert lo == pytest.approx(2e-8) and hi == pytest.approx(2e-8)
    assert all(math.isnan(v) for v in s.slope_interval(np.ones(6), slowdown, 99, np.random.default_rng(0)))


def test_baseline_is_the_median_of_the_low_load_runs():
    normalized = np.array([1.0, 3.0, 2.0, 10.0, 20.0, 30.0, 40.0, 50.0])
    load = np.array([0.0, 0.0, 1.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    # the 25 % quantile of the loads is 0.75: the two runs at 0
    assert s.baseline(normalized, load, 0.25) == 2.0


def test_words():
    assert s.words(1.84, 2.9e7) == "about 1.8x at the load of a busy hour (29 MB/s from other jobs)"
    assert s.words(math.nan, 0.0).startswith("no slope")


def _group(key, n, exposed, slope=0.0, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    load = np.zeros(n)
    load[:exposed] = np.linspace(2e6, 5e7, exposed) if exposed else []
    t = (1 + slope * load) * np.exp(noise * rng.standard_normal(n))
    return s.GroupRuns(key, t, np.ones(n), load)


def test_labels_at_their_edges():
    groups = [
        _group("few", 7, 7, slope=2e-8),  # one run short of contention_min_runs = 8
        _group("unexposed", 8, 2, slope=2e-8),  # 2 runs above 1 MB/s: one short of 3
        _group("exposed", 8, 3, slope=2e-8),  # exactly 3: tested
        _group("flat", 30, 30, slope=0.0, noise=0.01, seed=2),
        _group("noisy", 10, 10, slope=0.0, noise=0.6, seed=3),
    ]
    out = {g["group_key"]: g for g in s.sensitivity(groups, CONFIG, busy=5e7)}
    assert out["few"]["label"] == "not enough runs" and out["few"]["p"] is None
    assert out["unexposed"]["label"] == "not exposed" and out["unexposed"]["exposed"] == 2
    assert out["exposed"]["label"] == "sensitive"
    assert out["exposed"]["busy_slowdown"] == pytest.approx(2.0)
    assert out["flat"]["label"] == "insensitive"
    assert out["noisy"]["label"] == "inconclusive"
    # one run at exactly the exposure floor (1 MB/s) is not exposed: the rule is "above"
    at_floor = s.GroupRuns("floor", np.ones(8), np.ones(8), np.array([1e6, 1e6, 1e6, 0, 0, 0, 0, 0.0]))
    assert s.sensitivity([at_floor], CONFIG)[0]["label"] == "not exposed"


def _described(q, lo, hi, rho=0.5):
    return {"n": 8, "exposed": 8, "rho": rho, "slope_lo": lo, "slope_hi": hi, "busy_load": 1e8}


def test_label_rule_edges_of_q_and_of_the_bound():
    assert s.label(_described(0, 0, 0), 0.05, CONFIG) == "sensitive"  # q == contention_fdr_q
    assert s.label(_described(0, 0, 0), 0.0500001, CONFIG) == "insensitive"
    assert s.label(_described(0, 0, 0, rho=-0.5), 0.01, CONFIG) == "insensitive"  # slower when idle: not it
    # bound: |slope x busy| < 0.25, strictly
    assert s.label(_described(0, -2.4e-9, 2.4e-9), 0.5, CONFIG) == "insensitive"
    assert s.label(_described(0, -2.4e-9, 2.5e-9), 0.5, CONFIG) == "inconclusive"
    assert s.label(_described(0, -2.5e-9, 2.4e-9), 0.5, CONFIG) == "inconclusive"
    assert s.label(_described(0, None, None), 0.5, CONFIG) == "inconclusive"


def _designed(rng, key, n, rho):
    r = 2 * math.sin(math.pi * rho / 6)  # a Gaussian copula's Pearson r for Spearman rho
    z = rng.standard_normal((n, 2))
    zt = r * z[:, 0] + math.sqrt(1 - r * r) * z[:, 1]
    return s.GroupRuns(key, 10 * np.exp(0.3 * zt), np.full(n, 10.0), 5e7 * np.exp(z[:, 0]))


def test_null_false_positive_share_stays_within_q():
    """Load independent of I/O time, 3 seeds x 100 groups of 20, 30 and 60 runs (both
    p-value paths): the share called sensitive stays within q = 0.05 (measured: 0 of 300)."""
    config = Config()
    called = 0
    for seed in range(3):
        rng = np.random.default_rng(seed)
        groups = [_designed(rng, f"g{i}", (20, 30, 60)[i % 3], 0.0) for i in range(100)]
        called += sum(g["label"] == "sensitive" for g in s.sensitivity(groups, config))
    assert called / 300 <= config.contention_fdr_q


def test_power_on_designed_strong_effects():
    """Designed Spearman rho in {0.6, 0.7, 0.8} x runs in {30, 60}, 30 groups each among as
    many null groups: recall >= 0.95 pooled (measured 0.98 over these cells)."""
    config = Config()
    found = total = false = 0
    for rho in (0.6, 0.7, 0.8):
        for n in (30, 60):
            rng = np.random.default_rng(int(rho * 100) + n)
            groups = [_designed(rng, f"e{i}", n, rho) for i in range(30)]
            groups += [_designed(rng, f"z{i}", n, 0.0) for i in range(30)]
            out = s.sensitivity(groups, config)
            found += sum(g["label"] == "sensitive" for g in out[:30])
            false += sum(g["label"] == "sensitive" for g in out[30:])
            total += 30
    assert found / total >= 0.95
    assert false / max(found + false, 1) <= 0.1  # the false discovery share, near q


def test_nmi_is_scikit_learns_on_the_same_bins():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(4)
    x = rng.lognormal(size=500)
    y = x * rng.lognormal(sigma=0.5, size=500)
    bins = int(min(10, max(2, math.sqrt(500 / 5))))
    expected = metrics.normalized_mutual_info_score(s._quantile_codes(x, bins), s._quantile_codes(y, bins))
    assert s.normalized_mutual_information(x, y) == pytest.approx(expected, rel=1e-9)
