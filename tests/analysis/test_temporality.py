"""Quarter-chunk temporality (SPEC 3.6): chunk bytes and every label on both sides."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mosaic.analysis.temporality import (
    TemporalitySettings,
    chunk_bytes,
    coefficient_of_variation,
    heatmap_chunk_bytes,
    labels,
)
from mosaic.config import Config

SETTINGS = TemporalitySettings.of(Config())
M = 1e7  # chunk values below are in units of 10 MB: every case is significant


def chunks(ops, run_time=100.0):
    s, e, b = (np.array(col, dtype=float) for col in zip(*ops)) if ops else [np.zeros(0)] * 3
    return chunk_bytes(s, e, b, run_time).tolist()


def test_no_operations_give_empty_chunks():
    assert chunks([]) == [0, 0, 0, 0]


def test_bytes_are_spread_uniformly_over_the_interval():
    assert chunks([(0, 100, 400)]) == [100, 100, 100, 100]
    assert chunks([(10, 30, 200)]) == [150, 50, 0, 0]


def test_zero_length_operations_land_in_the_chunk_of_their_instant():
    assert chunks([(0, 0, 1), (24.9, 24.9, 2), (60, 60, 4), (100, 100, 8)]) == [3, 0, 4, 8]


def test_an_instant_on_a_boundary_belongs_to_the_later_chunk():
    assert chunks([(25, 25, 1), (50, 50, 2), (75, 75, 4)]) == [0, 1, 2, 4]


def test_operations_reaching_past_the_run_are_clipped_to_it():
    # within the reader's clock slack: all bytes stay, in the chunks the run has
    assert chunks([(90, 110, 100), (101, 102, 5), (-1, 1, 10)]) == [10, 0, 0, 105]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1000), st.floats(0, 500), st.floats(1, 1e12)), min_size=1, max_size=40),
    st.floats(1, 1000),
)
def test_chunks_sum_to_the_direction_bytes(ops, run_time):
    ops = [(s, s + d, b) for s, d, b in ops]
    assert sum(chunks(ops, run_time)) == pytest.approx(sum(b for _, _, b in ops), rel=1e-9)


def test_coefficient_of_variation_is_population_std_over_mean():
    assert coefficient_of_variation([5, 3, 5, 3]) == 0.25
    assert coefficient_of_variation([2, 2]) == 0.0
    assert coefficient_of_variation([0, 0, 0]) == float("inf")


def label_set(*values):
    return labels(np.array(values) * M, sum(values) * M, SETTINGS)


@pytest.mark.parametrize(
    "values, expected",
    [
        ((200, 50, 25, 25), []),
        ((201, 50, 25, 25), ["on_start"]),
    ],
)
def test_on_start(values, expected):
    assert [x for x in label_set(*values) if x == "on_start"] == expected


@pytest.mark.parametrize("values, expected", [((25, 25, 50, 200), False), ((25, 25, 50, 201), True)])
def test_on_end(values, expected):
    assert ("on_end" in label_set(*values)) is expected


@pytest.mark.parametrize(
    "values, expected",
    [
        ((60, 100, 100, 100), False),  # q0 exactly a fifth of q1 + q2 + q3
        ((59.9, 100, 100, 100), True),
        ((1, 125, 75, 100), True),  # CV(q1, q2, q3) = 0.2041
        ((1, 130, 70, 100), True),  # CV = 0.2449
        ((1, 131, 69, 100), False),  # CV = 0.2531
    ],
)
def test_after_start(values, expected):
    assert ("after_start" in label_set(*values)) is expected


@pytest.mark.parametrize(
    "values, expected",
    [
        ((100, 100, 100, 60), False),
        ((100, 100, 100, 59.9), True),
        ((100, 131, 69, 1), False),
        ((100, 130, 70, 1), True),
    ],
)
def test_before_end(values, expected):
    assert ("before_end" in label_set(*values)) is expected


@pytest.mark.parametrize("values, expected", [((10, 40, 40, 10), False), ((10, 40, 40.1, 10), True)])
def test_after_start_before_end(values, expected):
    assert ("after_start_before_end" in label_set(*values)) is expected


@pytest.mark.parametrize(
    "values, expected",
    [
        ((40, 10, 10, 40), False),  # q0 + q3 exactly 4 x (q1 + q2)
        ((40, 10, 9.9, 40), True),
        ((50, 1, 1, 30), False),  # CV(50, 30) = 0.25 exactly
        ((50, 1, 1, 30.1), True),  # CV = 0.2484
    ],
)
def test_on_start_and_end(values, expected):
    assert ("on_start_and_end" in label_set(*values)) is expected


@pytest.mark.parametrize(
    "values, expected",
    [
        ((50, 30, 50, 30), False),  # CV 0.25 exactly
        ((50, 30.1, 50, 30.1), True),  # CV 0.2484
        ((50, 29.9, 50, 29.9), False),  # CV 0.2516
    ],
)
def test_steady(values, expected):
    assert ("steady" in label_set(*values)) is expected


def test_unclassified_when_no_rule_holds():
    assert label_set(100, 0, 50, 10) == ["unclassified"]


def test_labels_are_non_exclusive_and_in_vocabulary_order():
    # q0 = 59.9 < 300/5 with even q1..q3 and overall CV 0.193: after_start and steady
    assert label_set(59.9, 100, 100, 100) == ["after_start", "steady"]


@pytest.mark.parametrize("total, expected", [(1e8 - 1, ["insignificant"]), (1e8, ["steady"])])
def test_significance_threshold(total, expected):
    assert labels(np.full(4, total / 4), total, SETTINGS) == expected


@settings(max_examples=200, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.floats(0, 100), st.floats(1e-6, 60), st.floats(0, 1e12)), min_size=1, max_size=300
    )
)
def test_chunks_add_the_operations_one_after_another(ops):
    """Bit for bit the sum of each operation's share taken in order (a reference loop):
    the result object's chunk bytes must not change with how numpy orders the adds."""
    starts = np.array([s for s, _, _ in ops])
    ends = starts + np.array([d for _, d, _ in ops])
    nbytes = np.array([b for _, _, b in ops])
    run_time = 200.0
    width = run_time / 4
    totals = None
    for s, e, b in zip(starts.tolist(), np.minimum(ends, run_time).tolist(), nbytes.tolist()):
        shares = [max(min(e, (k + 1) * width) - max(s, k * width), 0.0) / (e - s) * b for k in range(4)]
        totals = shares if totals is None else [t + x for t, x in zip(totals, shares)]
    assert chunk_bytes(starts, ends, nbytes, run_time).tolist() == totals


def test_heatmap_quarters_split_a_bin_across_a_quarter_line_by_time():
    """1 s bins, run 4.5 s (quarters of 1.125 s). Bin [1, 2) holds 10: 0.125 s in q0, 0.875 s
    in q1; bin [3, 4) holds 30: 0.375 s in q2, 0.625 s in q3; bin [4, 5) holds 20, its part
    in the run [4, 4.5] all in q3: 1.25 / 8.75 / 11.25 / 38.75, scaled to the records' 120
    bytes (x2): the heatmap gives the shares, the records the total (SPEC 3.6)."""
    bins = np.array([0.0, 10.0, 0.0, 30.0, 20.0])
    chunks = heatmap_chunk_bytes(bins, 1.0, 4.5, 120.0)
    assert chunks.tolist() == pytest.approx([2.5, 17.5, 22.5, 77.5])


def test_heatmap_quarters_of_an_empty_heatmap_are_zero():
    assert heatmap_chunk_bytes(np.zeros(3), 1.0, 3.0, 0.0).tolist() == [0.0] * 4
