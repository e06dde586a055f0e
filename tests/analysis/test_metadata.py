"""Metadata requests per second and the four metadata labels (SPEC 3.7)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mosaic.analysis import metadata
from mosaic.config import Config
from mosaic.trace import META_DTYPE

CFG = Config()


def requests_per_second(rows, run_time, seeks=False):
    return metadata.requests_per_second(rows, run_time, metadata_seeks=seeks)


def statistics(per_second):
    return metadata.statistics(per_second, metadata_spike_level=CFG.metadata_spike_level)


def labels(per_second):
    """The labels as analyze() gives them: from the run's statistics."""
    return metadata.summary_labels(
        statistics(per_second),
        metadata_high_spike=CFG.metadata_high_spike,
        metadata_min_spikes=CFG.metadata_min_spikes,
        metadata_density_mean=CFG.metadata_density_mean,
    )


def meta(*records):
    """records: (opens, seeks, open_start, open_end, close_start, close_end)."""
    return np.array(list(records), dtype=META_DTYPE)


def never_closed(opens, at, seeks=0):
    return (opens, seeks, at, 0, 0, 0)


def test_opens_spread_over_the_open_window_closes_over_the_close_window_seeks_not_counted():
    per_second = requests_per_second(meta((80, 20, 0.5, 2.5, 3.0, 0)), 5.0)
    # 80 opens over [0.5, 2.5]: 20, 40, 20; 80 closes at the instant 3.0; 20 seeks: no request
    assert per_second.tolist() == [20, 40, 20, 80, 0]


def test_the_papers_rule_counts_seeks_with_the_opens():
    per_second = requests_per_second(meta((80, 20, 0.5, 2.5, 3.0, 0)), 5.0, seeks=True)
    # 100 opens+seeks over [0.5, 2.5]: 25, 50, 25; 80 closes at the instant 3.0
    assert per_second.tolist() == [25, 50, 25, 80, 0]


@pytest.mark.parametrize("seeks, expected", [(False, ["metadata_insignificant_load"]), (True, None)])
def test_a_seek_heavy_reader_is_no_metadata_load_unless_seeks_count(seeks, expected):
    # 4 opens and 40,000 seeks in [1, 2]: one file read in 4 handles, one lseek per MiB
    per_second = requests_per_second(meta((4, 40_000, 1.0, 2.0, 9.0, 9.0)), 10.0, seeks=seeks)
    assert labels(per_second) == (expected or ["metadata_high_spike"])
    assert per_second.sum() == (8 if not seeks else 40_008)


def test_window_with_one_recorded_end_is_an_instant_there():
    per_second = requests_per_second(meta((10, 0, 1.2, 0, 0, 3.7)), 5.0)
    assert per_second.tolist() == [0, 10, 0, 10, 0]


def test_unrecorded_close_window_adds_nothing():
    assert requests_per_second(meta(never_closed(7, 2.5, seeks=3)), 4.0).tolist() == [0, 0, 7, 0]
    assert requests_per_second(meta(never_closed(7, 2.5, seeks=3)), 4.0, seeks=True).tolist() == [0, 0, 10, 0]


def test_open_start_zero_is_job_start_not_unrecorded():
    assert requests_per_second(meta((4, 0, 0, 0, 1.5, 1.5)), 2.0).tolist() == [4, 4]


def test_windows_are_clipped_to_the_run_and_conserve_requests():
    # run of 2.5 s has 3 bins; the window [2, 4] keeps its 30 requests in the run
    per_second = requests_per_second(meta((30, 0, 2.0, 4.0, 0, 0)), 2.5)
    assert per_second.tolist() == [0, 0, 30]
    # a window starting before the job (within the reader's clock slack) starts at 0
    per_second = requests_per_second(meta((20, 0, -1.0, 1.0, 0, 0)), 2.5)
    assert per_second.tolist() == [20, 0, 0]


def test_fractional_overlap_is_exact_per_bin():
    per_second = requests_per_second(meta((10, 0, 0.75, 3.25, 0, 0)), 4.0)
    assert per_second.tolist() == [1, 4, 4, 1]


def test_no_records():
    per_second = requests_per_second(meta(), 3.2)
    assert per_second.tolist() == [0, 0, 0, 0] and per_second.dtype == float
    assert labels(np.zeros(4)) == ["metadata_insignificant_load"]


def test_a_month_long_run_is_one_array():
    month = 30 * 86400.0
    per_second = requests_per_second(meta((86400 * 30, 0, 0.0, month, 0, 0)), month)
    assert per_second.shape == (2592000,)
    assert per_second.min() == per_second.max() == 1.0


@pytest.mark.parametrize("count, spike", [(250, False), (251, True)])
def test_high_spike_is_more_than_250_in_one_second(count, spike):
    per_second = requests_per_second(meta(never_closed(count, 10.5)), 20.0)
    assert ("metadata_high_spike" in labels(per_second)) is spike


def test_spread_that_is_whole_in_exact_arithmetic_is_not_a_spike():
    # 500 requests over [10.1, 12.1]: 250 in each second they touch, give or take float dust
    per_second = requests_per_second(meta((500, 0, 10.1, 12.1, 0, 0)), 20.0)
    assert per_second.max() == pytest.approx(250)
    assert statistics(per_second)["peak_per_second"] == 250
    assert "metadata_high_spike" not in labels(per_second)
    assert "metadata_high_spike" not in labels(np.array([250 + 1e-9]))


@pytest.mark.parametrize("seconds, level, multiple", [(5, 50, True), (4, 50, False), (5, 49, False)])
def test_multiple_spikes_need_five_seconds_of_at_least_50(seconds, level, multiple):
    records = [never_closed(level, 10.0 * k + 0.5) for k in range(seconds)]
    per_second = requests_per_second(meta(*records), 100.0)
    assert ("metadata_multiple_spikes" in labels(per_second)) is multiple


@pytest.mark.parametrize(
    "last, expected",
    [
        (50, ["metadata_multiple_spikes", "metadata_high_density"]),  # mean 50.0
        (49, ["metadata_multiple_spikes"]),  # mean 49.9
    ],
)
def test_high_density_needs_a_mean_of_50_per_second(last, expected):
    records = [never_closed(50, k + 0.5) for k in range(9)] + [never_closed(last, 9.5)]
    per_second = requests_per_second(meta(*records), 10.0)
    assert labels(per_second) == expected


def test_density_mean_is_the_mean_of_the_seconds_the_peak_is_the_max_of():
    # 550 requests in a 10.5 s run: 11 bins of 50, so the mean is 50.0 (not 550 / 10.5 = 52.4)
    per_second = requests_per_second(meta(*[never_closed(50, k + 0.25) for k in range(11)]), 10.5)
    assert statistics(per_second) == {
        "requests": 550.0,
        "peak_per_second": 50.0,
        "spikes": 11,
        "mean_per_second": 50.0,
    }


@pytest.mark.parametrize("run_time", [0.07, 0.5, 1.0])
def test_a_run_under_a_second_has_a_mean_no_higher_than_its_peak(run_time):
    # 31 opens and their closes in the one bin: peak 62, mean 62 (62 / 0.07 s made 886/s)
    per_second = requests_per_second(meta((31, 0, 0.01, 0.02, 0.05, 0.06)), run_time)
    found = statistics(per_second)
    assert found["peak_per_second"] == found["mean_per_second"] == 62.0


def test_high_density_without_five_spikes_is_not_given():
    per_second = np.array([400.0, 0, 0, 0])  # mean 100/s, one spike
    assert labels(per_second) == ["metadata_high_spike"]


times = st.one_of(st.just(0.0), st.floats(0, 120))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 500), st.integers(0, 500), times, times, times, times), max_size=20),
    st.floats(1, 100),
    st.booleans(),
)
def test_every_request_is_counted_once(records, run_time, seeks):
    rows = meta(*records)
    closed = (rows["close_start"] != 0) | (rows["close_end"] != 0)
    expected = (rows["opens"] + seeks * rows["seeks"]).sum() + rows["opens"][closed].sum()
    per_second = requests_per_second(rows, run_time, seeks)
    assert per_second.sum() == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert per_second.min(initial=0) >= 0


def test_spikes_round_like_the_peak_near_the_level():
    # 50 - 1e-9 rounds to a spike of 50; 49.9999994 rounds to 49.999999, not a spike
    per_second = np.array([50 - 1e-9, 49.9999994, 49.0, 50.0, 0.0])
    assert statistics(per_second)["spikes"] == 2
