"""Running sums of mostly-zero step arrays (mosaic.analysis.steps), bit for bit."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mosaic.analysis.steps import add_running_sum


def with_running_sum(totals, steps):
    add_running_sum(totals, steps)
    return totals


def test_running_sum_by_hand():
    steps = np.array([0.0, 2.0, 0.0, 0.0, -2.0, 0.5, 0.0])
    assert with_running_sum(np.ones(7), steps).tolist() == [1.0, 3.0, 3.0, 3.0, 1.0, 1.5, 1.5]
    assert with_running_sum(np.ones(3), np.zeros(3)).tolist() == [1.0, 1.0, 1.0]
    assert with_running_sum(np.zeros(0), np.zeros(0)).size == 0


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 60),
            st.integers(0, 60),
            st.one_of(st.floats(-1e6, 1e6), st.sampled_from([0.1, -0.1, 1e-300, np.inf, -np.inf, np.nan])),
        ),
        max_size=30,
    ),
    st.integers(1, 80),
)
def test_running_sum_is_cumsum_bit_for_bit(windows, size):
    """Totals and steps built as metadata._spread builds them (bincount; +w where a window
    starts, -w where it ends): the same bits as adding a cumsum over every bin, whether
    the running sum returns to zero, underflows or is not finite."""
    starts = np.array([min(a, b, size - 1) for a, b, _ in windows], np.int64)
    ends = np.array([min(max(a, b), size - 1) for a, b, _ in windows], np.int64)
    weights = np.array([w for _, _, w in windows], float)
    steps = np.bincount(np.concatenate([starts, ends]), np.concatenate([weights, -weights]), minlength=size)
    totals = np.bincount(starts, weights, minlength=size)  # the instants, in metadata._spread
    with np.errstate(invalid="ignore"):  # inf - inf, in both
        expected = totals + steps.cumsum()
        found = with_running_sum(totals, steps)
    nan = np.isnan(expected)  # a NaN's sign bit may differ: no output shows it
    assert np.array_equal(np.isnan(found), nan)
    assert found[~nan].tobytes() == expected[~nan].tobytes()
