"""FFT periodicity detector (SPEC 3.5) on hand-built operation arrays.

The reference cases are the FTIO paper's examples, plus the two where FTIO's
own sampling fails (20 ms checkpoints, 30 s bursts every 10 min over a day).
"""

import json

import numpy as np
import pytest

from mosaic.analysis.spectrum import (
    SamplingSettings,
    SpectrumSettings,
    bandwidth_signal,
    fft_periodicity,
    power_spectrum,
)
from mosaic.config import Config

CONFIG = Config()


def bursts(period, count, duration, *, offset=1.0, jitter=0.0, seed=0, volume=1e9):
    """``count`` bursts, one per period (gaps drawn around it when jittered).

    Returns ``(starts, ends, nbytes, run_time)``; the run ends one period
    after the last burst starts.
    """
    gaps = (
        np.random.default_rng(seed).normal(period, jitter * period, count)
        if jitter
        else np.full(count, float(period))
    )
    starts = offset + np.concatenate([[0.0], np.cumsum(gaps[:-1])])
    return starts, starts + duration, np.full(count, volume), starts[-1] + period


def poisson(seed, run_time=600.0, rate=0.1, mean_duration=1.0):
    """Bursts at random (Poisson) times with random lengths and volumes."""
    rng = np.random.default_rng(seed)
    starts = np.sort(rng.uniform(0, run_time, rng.poisson(rate * run_time)))
    ends = np.minimum(starts + rng.exponential(mean_duration, starts.size), run_time)
    return starts, ends, rng.lognormal(20, 1, starts.size), run_time


def detect(case, config=CONFIG):
    return fft_periodicity(*case, SamplingSettings.of(config), SpectrumSettings.of(config))


def signal(starts, ends, nbytes, run_time, config):
    return bandwidth_signal(starts, ends, nbytes, run_time, SamplingSettings.of(config))


def assert_period(result, truth, tolerance):
    assert result["periodic"]
    assert result["period"] == pytest.approx(truth, rel=tolerance)


# --- the resampled signal ---------------------------------------------------


def test_signal_spreads_each_operation_over_the_bins_it_covers():
    config = CONFIG.replace(fft_min_samples=10, fft_max_samples=10)
    # 200 B over [0.5, 2.5] is 100 B/s; 40 B in zero time at 3.2 is an impulse
    width, values = signal([0.5, 3.2], [2.5, 3.2], [200.0, 40.0], 10.0, config)
    assert width == 1.0
    np.testing.assert_allclose(values, [50, 100, 50, 40, 0, 0, 0, 0, 0, 0])


def test_overlapping_operations_add_up():
    config = CONFIG.replace(fft_min_samples=4, fft_max_samples=4)
    _, values = signal([0.0, 1.0], [2.0, 4.0], [20.0, 30.0], 4.0, config)
    np.testing.assert_allclose(values, [10, 20, 10, 10])


def test_signal_is_the_exact_overlap_of_operations_and_bins():
    # random operations, edges on and off bin boundaries, zero-length ones,
    # one ending at the run's end: each bin holds rate x overlap, summed
    rng = np.random.default_rng(7)
    starts = np.concatenate([rng.uniform(0, 90, 200), np.arange(10.0), [95.0]])
    ends = np.concatenate([starts[:200] + rng.exponential(3, 200), np.arange(10.0) + 2, [100.0]])
    ends[::17] = starts[::17]  # impulses
    nbytes = rng.uniform(1, 1e6, starts.size)
    config = CONFIG.replace(fft_min_samples=1000, fft_max_samples=1000)
    width, values = signal(starts, ends, nbytes, 100.0, config)
    edges = np.arange(1001) * width
    spread = ends > starts
    overlap = np.clip(
        np.minimum(ends[spread, None], edges[None, 1:]) - np.maximum(starts[spread, None], edges[None, :-1]),
        0,
        None,
    )
    expected = (nbytes[spread, None] / (ends - starts)[spread, None] * overlap).sum(axis=0)
    expected += np.bincount((starts[~spread] / width).astype(int), nbytes[~spread], minlength=1000)
    np.testing.assert_allclose(values * width, expected, rtol=1e-9, atol=1e-3)


def test_rate_holds_across_bins_where_it_does_not_change():
    # the running rate is summed only where it changes: a long operation, one
    # inside a single bin (its changes cancel), impulses alone
    config = CONFIG.replace(fft_min_samples=10, fft_max_samples=10)
    _, values = signal([0.5, 3.2, 3.4], [8.5, 3.4, 3.4], [80.0, 2.0, 7.0], 10.0, config)
    np.testing.assert_allclose(values, [5, 10, 10, 19, 10, 10, 10, 10, 5, 0])
    _, impulses = signal([1.0, 1.5], [1.0, 1.5], [3.0, 4.0], 10.0, config)
    np.testing.assert_array_equal(impulses, [0, 7, 0, 0, 0, 0, 0, 0, 0, 0])


def test_a_20ms_burst_in_a_day_keeps_its_volume():
    width, values = signal([40_000.0], [40_000.02], [5e8], 86_400.0, CONFIG)
    assert width > 1.0  # far coarser than the burst
    assert values.sum() * width == pytest.approx(5e8)
    assert np.count_nonzero(values) == 1


def test_bin_width_follows_the_shortest_operation_within_bounds():
    config = CONFIG.replace(
        fft_bins_per_operation=4, fft_min_samples=100, fft_max_samples=1000, fft_min_bin_seconds=0.0
    )
    width, values = signal([0.0, 50.0], [1.0, 60.0], [1.0, 1.0], 100.0, config)
    assert (width, values.size) == (0.25, 400)  # 1 s / 4
    long_ops = signal([0.0], [80.0], [1.0], 100.0, config)[0]
    assert long_ops == 1.0  # 20 s / 4 would leave only 20 bins: floor 100 samples
    tiny_ops = signal([0.0], [0.001], [1.0], 100.0, config)[0]
    assert tiny_ops == 0.1  # capped at 1000 samples


def test_bins_are_no_finer_than_the_minimum_bin_width():
    config = CONFIG.replace(fft_bins_per_operation=4, fft_min_samples=100, fft_max_samples=100_000)
    ops = ([0.0], [0.01], [1.0], 100.0)  # 4 bins per op would be 2.5 ms
    assert signal(*ops, config.replace(fft_min_bin_seconds=0.1))[0] == 0.1
    assert signal(*ops, config.replace(fft_min_bin_seconds=0.01))[0] == 0.01


def test_operations_past_the_run_time_extend_the_window():
    width, values = signal(
        [0.0], [12.0], [12.0], 10.0, CONFIG.replace(fft_min_samples=12, fft_max_samples=12)
    )
    assert width * values.size == pytest.approx(12.0)
    assert values.sum() * width == pytest.approx(12.0)


def test_non_positive_run_time_is_an_error():
    with pytest.raises(ValueError):
        signal([], [], [], 0.0, CONFIG)


def test_power_spectrum_peaks_at_a_cosine_frequency():
    t = np.arange(1000) * 0.1
    freqs, power = power_spectrum(5 + np.cos(2 * np.pi * 0.5 * t), 0.1)
    assert freqs[np.argmax(power)] == pytest.approx(0.5)
    assert power[0] == pytest.approx(0.0, abs=1e-9)  # mean removed


# --- the FTIO paper's cases ---------------------------------------------------


def test_ior_bursts_every_10_86_s_are_found_with_high_confidence():
    result = detect(bursts(10.86, 30, 2.0))
    assert_period(result, 10.86, 0.01)
    assert len(result["candidates"]) == 1  # FTIO's high confidence
    assert result["confidence"] == result["score"] > 0.9
    assert result["score"] > 0.9


def test_strong_second_harmonic_is_folded_into_the_fundamental():
    # 20 s bursts every 111.67 s: the second harmonic is a candidate too
    result = detect(bursts(111.67, 12, 20.0))
    assert_period(result, 111.67, 0.01)
    assert result["harmonics"] >= 1
    assert len(result["candidates"]) == 1


def test_two_close_peaks_give_moderate_confidence_and_the_stronger_period():
    # phases every 1/0.1206 s, then every 1/0.1326 s (HACC-IO's drift)
    first = bursts(1 / 0.1206, 14, 2.0)
    second = bursts(1 / 0.1326, 12, 2.0, offset=first[3])
    result = detect(tuple(np.concatenate([a, b]) for a, b in zip(first[:3], second[:3])) + (second[3],))
    assert len(result["candidates"]) == 2  # FTIO's moderate confidence
    assert 0 < result["confidence"] < 1
    assert_period(result, 1 / 0.1206, 0.01)


def test_irregular_dumps_give_their_mean_period():
    starts, ends, nbytes, run_time = bursts(27.38, 20, 3.0, jitter=0.1, seed=3)
    result = detect((starts, ends, nbytes, run_time))
    assert_period(result, np.diff(starts).mean(), 0.05)


def test_20ms_checkpoints_every_25s():
    assert_period(detect(bursts(25.0, 144, 0.02)), 25.0, 0.01)


def test_30s_bursts_every_10_minutes_over_a_day():
    case = bursts(600.0, 144, 30.0, offset=0.0)
    assert case[3] == 86_400.0
    result = detect(case)
    assert_period(result, 600.0, 0.01)
    assert result["busy_fraction"] == pytest.approx(0.05, abs=0.01)


def test_busy_fraction_counts_the_periods_that_hold_the_bursts():
    # 3 s of every 10 s, for 200 s of a 1000 s run: 30 % busy, not 6 %
    starts, ends, nbytes, _ = bursts(10.0, 20, 3.0, offset=400.0)
    result = detect((starts, ends, nbytes, 1000.0))
    assert_period(result, 10.0, 0.01)
    assert result["busy_fraction"] == pytest.approx(0.3, abs=0.01)


@pytest.mark.parametrize("period", [3.7, 42.0, 1234.5])
def test_clean_periods_within_one_percent(period):
    assert_period(detect(bursts(period, 25, period / 5)), period, 0.01)


@pytest.mark.parametrize("seed", range(10))
def test_jittered_periods_within_five_percent(seed):
    starts, ends, nbytes, run_time = bursts(60.0, 30, 5.0, jitter=0.05, seed=seed)
    assert_period(detect((starts, ends, nbytes, run_time)), np.diff(starts).mean(), 0.05)


def test_random_io_is_rarely_periodic():
    periodic = sum(detect(poisson(seed))["periodic"] for seed in range(200))
    assert periodic < 10  # under 5 % of 200


# --- thresholds, both sides -------------------------------------------------------


def test_at_least_min_periods_in_the_window():
    case = bursts(100.0, 4, 10.0, offset=0.0)  # 4 periods in 400 s
    assert detect(case, CONFIG.replace(fft_min_periods=3.5))["periodic"]
    assert not detect(case, CONFIG.replace(fft_min_periods=4.5))["periodic"]


def test_z_threshold():
    case = bursts(10.86, 30, 2.0)
    z = detect(case)["candidates"][0]["z"]
    assert detect(case, CONFIG.replace(fft_z_threshold=z - 0.1))["periodic"]
    result = detect(case, CONFIG.replace(fft_z_threshold=z + 0.1))
    assert not result["periodic"] and result["candidates"] == []


def test_score_and_significance_thresholds():
    case = bursts(27.38, 20, 3.0, jitter=0.1, seed=3)
    result = detect(case)
    score, significance = result["score"], result["significance"]
    assert 0 < score < 1
    assert detect(case, CONFIG.replace(fft_min_score=score - 0.01))["periodic"]
    assert not detect(case, CONFIG.replace(fft_min_score=score + 0.01))["periodic"]
    assert detect(case, CONFIG.replace(fft_min_significance=significance - 0.01))["periodic"]
    assert not detect(case, CONFIG.replace(fft_min_significance=significance + 0.01))["periodic"]


def test_peak_fraction_decides_whether_the_close_peak_is_a_rival():
    first = bursts(1 / 0.1206, 14, 2.0)
    second = bursts(1 / 0.1326, 12, 2.0, offset=first[3])
    case = tuple(np.concatenate([a, b]) for a, b in zip(first[:3], second[:3])) + (second[3],)
    z = sorted(c["z"] for c in detect(case)["candidates"])
    ratio = z[0] / z[1]  # about 0.83
    assert len(detect(case, CONFIG.replace(fft_peak_fraction=ratio - 0.01))["candidates"]) == 2
    assert len(detect(case, CONFIG.replace(fft_peak_fraction=ratio + 0.01))["candidates"]) == 1


def test_oversampling_keeps_a_fundamental_between_two_bins():
    # 62.5 periods in the window: the fundamental falls between two bins and,
    # unpadded, sinks below its second harmonic (which sits on a bin)
    starts = 1 + np.arange(62) * 57.6
    case = (starts, starts + 0.02, np.full(62, 1e9), 62.5 * 57.6)
    assert detect(case, CONFIG.replace(fft_oversampling=1))["period"] == pytest.approx(28.8, rel=0.01)
    assert_period(detect(case, CONFIG.replace(fft_oversampling=2)), 57.6, 0.01)


def test_smoothing_keeps_jittered_bursts_correlated():
    case = bursts(27.38, 20, 3.0, jitter=0.1, seed=3)
    assert detect(case)["score"] > detect(case, CONFIG.replace(fft_score_smoothing=0.01))["score"] + 0.1
    assert 0 < detect(case, CONFIG.replace(fft_score_smoothing=0.0))["score"] < 1  # no smoothing


def test_a_few_early_bursts_in_a_long_quiet_run_are_not_significant():
    # three reads ~1250 s apart, then 16,000 s of nothing: well correlated at
    # the lag, but with one period's worth of evidence
    starts = np.array([100.0, 1381.0, 2600.0])
    result = detect((starts, starts + 30, np.full(3, 5e7), 19_000.0))
    assert result["score"] > 0.5 and result["significance"] == 0.0
    assert not result["periodic"]
    starts = 100 + np.arange(15) * 1250.0  # the same spacing all run long
    assert_period(detect((starts, starts + 30, np.full(15, 5e7), 19_000.0)), 1250.0, 0.01)


def test_three_rival_frequencies_are_not_periodic():
    t = np.arange(0, 600, 0.5)
    rate = 3 + sum(np.cos(2 * np.pi * t / p) for p in (6.0, 10.0, 15.0))  # no two in an integer ratio
    result = detect((t, t + 0.5, rate * 0.5, 600.0))
    assert len(result["candidates"]) == 3  # more than FTIO's two: no confidence
    assert result["confidence"] == 0.0
    assert not result["periodic"]


# --- degenerate input ---------------------------------------------------------


def test_no_operations_is_not_periodic():
    result = detect((np.array([]), np.array([]), np.array([]), 100.0))
    assert not result["periodic"] and result["period"] is None
    assert result["busy_fraction"] == 0.0


def test_constant_bandwidth_is_not_periodic():
    result = detect(([0.0], [100.0], [1e9], 100.0))
    assert not result["periodic"]
    assert result["busy_fraction"] == 0.0


def test_flat_signal_whose_mean_rounds_below_it_is_not_periodic():
    # one write over the whole run: every bin holds the same bandwidth, and the
    # mean of the 1024 equal values rounds below it
    result = detect(([0.0], [23_469.0], [1.7e11], 23_469.0))
    assert not result["periodic"] and result["period"] is None
    assert result["busy_fraction"] == 0.0


def test_busy_parts_of_the_median_level():
    from mosaic.analysis.spectrum import _parts_of_median

    assert _parts_of_median(np.array([4.0, 4.0, 2.0])) == 2.5  # median 4: 1 + 1 + 0.5
    assert _parts_of_median(np.array([1.0, 2.0, 6.0, 8.0])) == pytest.approx(0.25 + 0.5 + 2)  # median 4
    assert _parts_of_median(np.array([3.0])) == 1.0
    assert _parts_of_median(np.array([5.0, 5.0, 5.0, 1.0, 5.0])) == 4.2  # ties at the median count 1


@pytest.mark.parametrize("size, oversampling", [(1000, 2), (999, 1), (1000, 1)])
def test_amplitude_spread_from_parseval_equals_the_direct_one(size, oversampling):
    from mosaic.analysis.spectrum import _Amplitudes

    signal = np.random.default_rng(size).lognormal(0, 2, size)
    signal -= signal.mean()
    n = oversampling * size
    spectrum = np.fft.rfft(signal, n=n)
    amplitudes = _Amplitudes.of(spectrum, n, float(signal @ signal))
    assert amplitudes.mean == pytest.approx(np.abs(spectrum[1:]).mean())
    assert amplitudes.spread == pytest.approx(np.abs(spectrum[1:]).std(), rel=1e-9)


def test_result_is_json_serializable():
    result = detect(bursts(10.86, 30, 2.0))
    assert json.loads(json.dumps(result)) == result
    assert set(result) >= {
        "periodic",
        "period",
        "frequency",
        "confidence",
        "score",
        "candidates",
        "busy_fraction",
        "bin_width",
        "samples",
    }


def test_a_period_under_min_period_seconds_is_rejected_at_the_edge():
    case = bursts(2.0, 40, 0.2)
    period = detect(case)["period"]
    assert detect(case, CONFIG.replace(min_period_seconds=period))["periodic"]
    result = detect(case, CONFIG.replace(min_period_seconds=period * 1.01))
    assert not result["periodic"]
    assert result["period"] == period  # found, but too fast


def test_sub_second_cadence_is_not_a_period_but_a_slower_one_still_is():
    assert not detect(bursts(0.084, 120, 0.02))["periodic"]  # 84 ms requests in one phase
    fast = bursts(0.084, 12, 0.02)
    slow = tuple(np.concatenate([fast[i] + 30.0 * k for k in range(10)]) for i in range(3))
    assert_period(detect((*slow, 300.0)), 30.0, 0.01)  # 12-request phases every 30 s


# --- aliases of I/O faster than the bins -------------------------------------


def request_train(cadence, run_time=600.0):
    """20 ms requests of 1 MB every ``cadence`` seconds, all run long."""
    starts = np.arange(0.5, run_time - 1, cadence)
    return starts, starts + 0.02, np.full(starts.size, 1e6), run_time


def test_exact_coefficient_in_closed_form():
    from mosaic.analysis.spectrum import _exact_coefficient

    # 100 B/s over [1, 3] and 50 B at t = 2, in a 10 s window, at 0.25 Hz
    # (omega = pi / 2): 100 (e^-i pi/2 - e^-i 3pi/2) / (i pi/2) = -400 / pi;
    # the removed mean (25 B/s) adds -25 (1 - e^-i 5pi) / (i pi/2) = 100i / pi;
    # the impulse 50 e^-i pi = -50
    value = _exact_coefficient(
        np.array([1.0, 2.0]), np.array([3.0, 2.0]), np.array([200.0, 50.0]), 10.0, 0.25
    )
    assert value == pytest.approx(complex(-400 / np.pi - 50, 100 / np.pi))


def test_an_alias_of_a_faster_request_train_is_not_a_period():
    # 0.11 s cadence binned every 0.1 s folds onto 1 / (1 / 0.1 - 1 / 0.11) = 1.1 s
    config = CONFIG.replace(fft_min_bin_seconds=0.1)
    result = detect(request_train(0.11), config)
    assert result["period"] == pytest.approx(1.1, rel=0.01)
    share = result["exact_share"]
    assert share < 0.05 and not result["periodic"]
    assert result["significance"] > 10  # what the check removes
    assert detect(request_train(0.11), config.replace(fft_min_exact_share=share))["periodic"]
    assert not detect(request_train(0.11), config.replace(fft_min_exact_share=share + 0.01))["periodic"]
    # 0.3 s binned every 0.25 s (the default) folds onto 1.5 s
    result = detect(request_train(0.3))
    assert result["period"] == pytest.approx(1.5, rel=0.01) and not result["periodic"]


def test_a_real_period_keeps_its_whole_exact_share():
    result = detect(bursts(25.0, 144, 0.02))  # bursts far shorter than the bins: checked
    assert result["periodic"]
    assert result["exact_share"] == pytest.approx(1.0, abs=0.02)


def test_bins_that_resolve_every_operation_need_no_check():
    result = detect(bursts(10.86, 30, 2.0))  # 2 s bursts: 0.5 s bins are 4 per burst
    assert result["periodic"] and result["exact_share"] is None


# --- the HEATMAP signal (SPEC 3.5) -------------------------------------------


def heatmap_bins(period_bins, count, burst=1e9, bins=None):
    values = np.zeros(bins or period_bins * count)
    values[::period_bins] = burst
    return values


def test_heatmap_bins_show_the_period_of_appends_to_one_record():
    from mosaic.analysis.spectrum import heatmap_periodicity

    result = heatmap_periodicity(
        heatmap_bins(6, 30), 100.0, SpectrumSettings.of(CONFIG)
    )  # a checkpoint every 600 s
    assert_period(result, 600.0, 0.01)
    assert result["signal"] == "heatmap" and result["bin_width"] == 100.0
    assert result["exact_share"] is None  # no operations to check against


def test_heatmap_needs_bins_for_three_periods():
    from mosaic.analysis.spectrum import heatmap_periodicity

    settings = SpectrumSettings.of(CONFIG)
    assert heatmap_periodicity(heatmap_bins(2, 3, bins=5), 10.0, settings) is None  # < 2 x 3 bins
    assert heatmap_periodicity(heatmap_bins(2, 3), 10.0, settings) is not None  # exactly 6
    fewer = SpectrumSettings.of(CONFIG.replace(fft_min_periods=3.5))
    assert heatmap_periodicity(heatmap_bins(2, 3, bins=6), 10.0, fewer) is None


def test_the_more_significant_signal_wins_and_operations_on_ties():
    from mosaic.analysis.spectrum import more_significant

    ops, heat = {"significance": 4.0, "signal": "operations"}, {"significance": 4.0, "signal": "heatmap"}
    assert more_significant(ops, heat) is ops
    assert more_significant(ops, None) is ops
    assert more_significant(ops, {**heat, "significance": 4.01})["signal"] == "heatmap"


@pytest.mark.parametrize("rule", ["meanshift_or_significant_fft", "meanshift_or_strong_fft"])
def test_random_heatmaps_are_not_periodic_by_the_fft_alone(rule):
    """Random bursts in 20-400 bins: the FFT's own verdict may say periodic now and
    then, but never past the gate the verdict rule sets for the FFT alone."""
    from mosaic.analysis.spectrum import heatmap_periodicity
    from mosaic.analysis.verdict import RULES, VerdictSettings

    settings, gate = SpectrumSettings.of(CONFIG), VerdictSettings.of(CONFIG)
    found = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        bins = rng.integers(20, 400)
        values = np.where(rng.random(bins) < rng.uniform(0.02, 0.3), rng.lognormal(20, 1, bins), 0.0)
        result = heatmap_periodicity(values, float(rng.uniform(0.1, 100)), settings)
        found += bool(result and RULES[rule](False, result, gate))
    assert found == 0
