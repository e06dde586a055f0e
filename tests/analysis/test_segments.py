"""Segmentation, mean-shift periodicity and periodicity labels (SPEC 3.4)."""

import numpy as np
import pytest

from mosaic.analysis import segments
from mosaic.analysis.segments import MeanShiftSettings, meanshift_periodicity
from mosaic.config import Config

CFG = Config()
SETTINGS = MeanShiftSettings.of(CFG)


def changed(**fields):
    """The mean-shift settings of a Config with these fields changed (checked as Config checks them)."""
    return MeanShiftSettings.of(CFG.replace(**fields))


def series(count, period=100.0, duration=10.0, nbytes=1e9, start=0.0):
    starts = start + period * np.arange(count)
    return starts, starts + duration, np.full(count, nbytes)


def joined(*parts):
    return tuple(np.concatenate(cols) for cols in zip(*parts))


def test_segments_run_from_start_to_next_start_and_last_copies_previous():
    durations, nbytes = segments.segments([0, 10, 20], [2, 12, 23], [1, 2, 3])
    assert durations.tolist() == [10, 10, 10]
    assert nbytes.tolist() == [1, 2, 3]


def test_last_segment_takes_its_own_duration_when_longer():
    durations, _ = segments.segments([0, 10, 20], [2, 12, 35], [1, 1, 1])
    assert durations.tolist() == [10, 10, 15]


def test_single_and_no_operation_segments():
    assert segments.segments([5], [9], [1])[0].tolist() == [4]
    assert segments.segments([], [], [])[0].tolist() == []


def test_no_operations_is_not_periodic():
    result = meanshift_periodicity([], [], [], SETTINGS)
    assert result["periodic"] is False and result["operations"] == []


def test_two_equal_operations_are_not_a_period_and_skip_clustering(monkeypatch):
    def fail(*args):
        raise AssertionError("MeanShift must not run below min_periodic_segments")

    monkeypatch.setattr(segments, "cluster", fail)
    result = meanshift_periodicity(*series(2), SETTINGS)
    assert result["periodic"] is False
    assert result["segments"]["cluster"].tolist() == [-1, -1]


def test_three_equal_operations_are_a_period_with_hand_computed_figures():
    result = meanshift_periodicity(*series(3, period=100, duration=10, nbytes=5e8, start=7), SETTINGS)
    assert result["periodic"] is True and result["share"] == 1.0
    [op] = result["operations"]
    assert op["period"] == 100 and op["occurrences"] == 3
    assert op["bytes_per_occurrence"] == 5e8
    assert op["busy_fraction"] == pytest.approx(0.1)
    assert (op["start"], op["end"]) == (7, 217)


def outliers(count, start):
    """Operations 100 s apart whose bytes differ tenfold: each is its own cluster."""
    starts = start + 100.0 * np.arange(count)
    return starts, starts + 10, 10.0 ** np.arange(2, 2 + count)


@pytest.mark.parametrize("regular, periodic", [(3, True), (21, True), (20, False), (2, False)])
def test_periodic_segment_share_threshold(regular, periodic):
    # 3 of 4 and 21 of 28 segments = 75 %; 20 of 27 = 74 %; 2 regular ones are no cluster
    extra = 1 if regular == 3 else 7
    ops = joined(series(regular), outliers(extra, 100.0 * regular))
    result = meanshift_periodicity(*ops, SETTINGS)
    assert result["periodic"] is periodic
    if periodic:
        assert result["share"] == pytest.approx(regular / (regular + extra))
    else:
        assert result["share"] < 0.75


def test_jittered_series_stays_one_cluster():
    rng = np.random.default_rng(1)
    starts = np.cumsum(rng.uniform(95, 105, 40))
    nbytes = rng.uniform(0.95e9, 1.05e9, 40)
    result = meanshift_periodicity(starts, starts + 5, nbytes, SETTINGS)
    assert result["periodic"] is True
    assert [op["occurrences"] for op in result["operations"]] == [40]


def test_two_periodic_operations_are_reported_dominant_first():
    early = series(10, period=100, nbytes=1e8)
    late = series(5, period=1000, nbytes=1e10, start=1000)
    result = meanshift_periodicity(*joined(early, late), SETTINGS)
    assert result["periodic"] is True
    periods = [(op["period"], op["occurrences"]) for op in result["operations"]]
    assert periods == [(1000, 5), (100, 10)]


def test_zero_durations_and_bytes_are_floored_not_crashing():
    ids = segments.cluster(np.array([0.0, 0.0, 0.0, 5.0]), np.array([0.0, 0.0, 0.0, 1e6]), SETTINGS)
    assert ids[0] == ids[1] == ids[2] != ids[3]


def test_period_is_the_recurrence_interval_when_other_operations_cut_the_segments():
    # a 1 GB data file every 1000 s, each followed 300 s later by a 1 MB index file
    data = series(8, period=1000, duration=60, nbytes=1e9)
    index = series(8, period=1000, duration=1, nbytes=1e6, start=300)
    order = np.argsort(np.concatenate([data[0], index[0]]))
    ops = [col[order] for col in joined(data, index)]
    result = meanshift_periodicity(*ops, SETTINGS)
    assert result["periodic"] is True
    dominant = result["operations"][0]
    assert dominant["period"] == 1000 and dominant["occurrences"] == 8
    # SPEC's busy fraction: operation over segment (data file to its index file)
    assert dominant["busy_fraction"] == pytest.approx(60 / 300)


def test_one_long_pause_does_not_stretch_the_period():
    # 10 checkpoints every 100 s, a 2,000 s wait, 10 more every 100 s
    result = meanshift_periodicity(*joined(series(10), series(10, start=2900)), SETTINGS)
    assert [(op["period"], op["occurrences"]) for op in result["operations"]] == [(100, 19)]


def test_period_counts_only_operations_of_the_same_volume():
    # small writes every 100 s for 12,500 s, a 100x larger one 25 s after every 24th
    hourly = series(125, period=100, duration=5, nbytes=1e8)
    daily = series(5, period=2400, duration=20, nbytes=1e10, start=2325)
    order = np.argsort(np.concatenate([hourly[0], daily[0]]))
    result = meanshift_periodicity(*[col[order] for col in joined(hourly, daily)], SETTINGS)
    assert result["periodic"] is True
    dominant = result["operations"][0]
    assert (dominant["bytes_per_occurrence"], dominant["occurrences"]) == (1e10, 5)
    assert dominant["period"] == 2400  # its segments last 75 s: SPEC's mean would say 75
    assert dominant["busy_fraction"] == pytest.approx(20 / 75)


# --- recurrence: a periodic cluster's members come back at a steady pace ---


def test_recurrence_share_threshold_both_sides():
    # gaps 100, 100, 100, 300: median 100, three of four alike -> share 0.75
    starts = np.array([0.0, 100, 200, 300, 600])
    bandwidth = CFG.meanshift_bandwidth
    assert segments._recurs(starts, meanshift_bandwidth=bandwidth, periodic_regular_share=0.75)
    assert not segments._recurs(starts, meanshift_bandwidth=bandwidth, periodic_regular_share=0.76)


def test_alike_means_within_one_bandwidth_of_the_median_gap():
    # gaps 100, 100, 125 (ratio exactly 1.25 = one bandwidth) and 100, 100, 126
    bandwidth_edge = np.array([0.0, 100, 200, 325])
    just_beyond = np.array([0.0, 100, 200, 326])
    strict = {"meanshift_bandwidth": CFG.meanshift_bandwidth, "periodic_regular_share": 1.0}
    assert segments._recurs(bandwidth_edge, **strict)
    assert not segments._recurs(just_beyond, **strict)


def test_equal_writes_at_random_times_are_not_periodic():
    """Chance clusters of comparable segments (SPEC 3.4's flat kernel) are not a period."""
    rng = np.random.default_rng(7)
    starts = np.cumsum(rng.exponential(120.0, 143))
    ends = starts + 2.0
    nbytes = np.full(143, 24.6e6)
    spec_literal = meanshift_periodicity(starts, ends, nbytes, changed(periodic_regular_share=0.0))
    assert spec_literal["periodic"]  # the rule as written is fooled
    assert not meanshift_periodicity(starts, ends, nbytes, SETTINGS)["periodic"]


def test_a_series_with_one_long_pause_still_recurs():
    starts = np.concatenate([100.0 * np.arange(6), 2000 + 100.0 * np.arange(6)])
    result = meanshift_periodicity(starts, starts + 10, np.full(12, 1e9), SETTINGS)
    assert result["periodic"]


@pytest.mark.parametrize("period, periodic", [(1.0, True), (0.99, False), (84e-3, False)])
def test_a_period_under_min_period_seconds_is_request_cadence(period, periodic):
    result = meanshift_periodicity(*series(20, period=period, duration=period / 10), SETTINGS)
    assert result["periodic"] is periodic
    assert [op["period"] for op in result["operations"]] == ([period] if periodic else [])
    assert result["share"] == (1.0 if periodic else 0.0)
    assert result["segments"]["cluster"].max() == 0  # still one cluster, just not a periodic one


def test_min_period_seconds_is_a_setting():
    case = series(20, period=0.5, duration=0.05)
    assert meanshift_periodicity(*case, changed(min_period_seconds=0.5))["periodic"]
    assert not meanshift_periodicity(*case, changed(min_period_seconds=0.51))["periodic"]


def token_ring(checkpoints=8, ranks=6, spacing=20.0, period=1200.0):
    """Ranks write one after another ``spacing`` apart; a checkpoint every ``period``."""
    starts = (period * np.arange(checkpoints)[:, None] + spacing * np.arange(ranks)[None, :]).ravel()
    return starts, starts + spacing / 2, np.full(starts.size, 1e9)


def test_token_ring_checkpoints_take_the_checkpoint_period():
    result = meanshift_periodicity(*token_ring(), SETTINGS)
    assert result["periodic"]
    assert {op["period"] for op in result["operations"]} == {1200.0}


def test_trains_end_at_gaps_over_train_gap_factor_times_the_median():
    # The dominant cluster is ranks 0-4 of each train (20 s segments; rank 5's 1,100 s
    # segments are the other cluster), cut by no other volume: its own occurrences are
    # 20 s apart (x4) and 1,120 s between trains, 56 times the median.
    case = token_ring()

    def period(factor):
        return meanshift_periodicity(*case, changed(train_gap_factor=factor))["operations"][0]["period"]

    assert period(55.9) == 1200.0
    assert period(56.0) == 20.0


def test_too_few_trains_or_single_occurrences_keep_the_median_interval():
    two = meanshift_periodicity(*token_ring(checkpoints=2, ranks=12), SETTINGS)  # 2 trains < 3
    assert {op["period"] for op in two["operations"]} == {20.0}
    paused = series(30, period=100.0)  # a plain series with one long pause
    starts = np.where(np.arange(30) < 15, paused[0], paused[0] + 5000.0)
    result = meanshift_periodicity(starts, starts + 10.0, paused[2], SETTINGS)
    assert [op["period"] for op in result["operations"]] == [100.0]


def test_trains_at_no_steady_pace_keep_the_median_interval():
    starts, ends, nbytes = token_ring(checkpoints=6)
    # trains 4200, 1700, 6700, 1300, 12100 apart
    shift = np.repeat([0.0, 3000.0, 3500.0, 9000.0, 9100.0, 20000.0], 6)
    result = meanshift_periodicity(starts + shift, ends + shift, nbytes, SETTINGS)
    assert {op["period"] for op in result["operations"]} == {20.0}


def test_a_series_weighs_every_operation_of_its_volume():
    """19 checkpoints of 560 MB (10.64 GB) among 158 logs of 20 MB (3.16 GB): a cluster of 5
    checkpoints (2.8 GB) outweighs the logs' cluster of 158 (3.16 GB) through its series; 560 and
    600 MB are within one bandwidth (log 1.25) of each other, 20 MB far from both."""
    nbytes = np.array([5.6e8] * 19 + [2e7] * 158)

    def op(volume: float, occurrences: int) -> dict:
        return {"bytes_per_occurrence": volume, "occurrences": occurrences}

    weights = segments._series_weights(
        [op(5.6e8, 5), op(2e7, 158), op(6e8, 3)],
        nbytes,
        meanshift_bandwidth=CFG.meanshift_bandwidth,
        meanshift_min_bytes=CFG.meanshift_min_bytes,
    )
    assert weights == [
        (pytest.approx(1.064e10), 2.8e9),
        (pytest.approx(3.16e9), 3.16e9),
        (pytest.approx(1.064e10), 1.8e9),
    ]


def test_two_operations_of_one_volume_each_recur_at_their_own_period():
    """DLIO 2110720: two reads of ~0.9 GB per 8 s epoch, 4.8 s apart (segments 4.8 s and 3.2 s,
    two clusters). Nothing of another volume cuts their segments, so each cluster's period is
    its own recurrence, 8 s, not the 4 s between operations of the volume (SPEC 3.4)."""
    first = series(6, period=8.0, duration=4.0, nbytes=0.91e9)
    second = series(6, period=8.0, duration=1.6, nbytes=0.89e9, start=4.8)
    order = np.argsort(np.concatenate([first[0], second[0]]))
    result = meanshift_periodicity(*[col[order] for col in joined(first, second)], SETTINGS)
    assert result["periodic"] is True
    assert sorted((op["occurrences"], op["period"]) for op in result["operations"]) == [(5, 8.0), (7, 8.0)]
