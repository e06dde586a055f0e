"""The small-array median and mean give numpy's floats."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mosaic.analysis import small


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.floats(-1e12, 1e12), min_size=1, max_size=20)
    | st.lists(st.sampled_from([0.0, 1.5, 2.0, 1e9]), min_size=300, max_size=700),
)
def test_median_is_numpys_on_both_sides_of_the_selection_size(values):
    """Sorted below MEDIAN_BY_SELECTION, selected from it on: the same float either way,
    on plateaus too."""
    array = np.array(values)
    assert small.median(array) == float(np.median(array))


@pytest.mark.parametrize("size", [small.MEDIAN_BY_SELECTION - 1, small.MEDIAN_BY_SELECTION, 3045])
def test_median_at_the_selection_size(size):
    values = np.random.default_rng(size).random(size) * 1e9
    assert small.median(values) == float(np.median(values))
    assert small.median(np.arange(size, dtype=float)) == (size - 1) / 2  # by hand: the middle
