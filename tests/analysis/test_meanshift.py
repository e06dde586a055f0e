"""The numpy mean shift gives scikit-learn's labels (the reference), ties and edges included."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import MeanShift

from mosaic.analysis.meanshift import _squared_norms, mean_shift_labels, unique_rows

BANDWIDTH = math.log(1.25)


def reference(points, seeds, bandwidth):
    model = MeanShift(bandwidth=bandwidth, seeds=seeds, cluster_all=False).fit(points)
    return model.labels_.tolist()


def grid_seeds(points, bandwidth):
    """Seeds as segments.cluster makes them (one per occupied grid cell)."""
    return np.unique(np.round(points / bandwidth), axis=0) * bandwidth


def check(points, seeds=None, bandwidth=BANDWIDTH):
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    seeds = grid_seeds(points, bandwidth) if seeds is None else np.asarray(seeds, dtype=float)
    try:
        expected = reference(points, seeds, bandwidth)
    except ValueError:  # no point within reach of any seed
        with pytest.raises(ValueError):
            mean_shift_labels(points, seeds, bandwidth)
        return
    assert mean_shift_labels(points, seeds, bandwidth).tolist() == expected


# Integer points with bandwidth 1 or 5: exact distances, so ties between modes,
# points at exactly one bandwidth (3-4-5 triangles) and duplicates are common.
lattice = st.lists(st.tuples(st.integers(-6, 6), st.integers(-6, 6)), min_size=1, max_size=40)
reals = st.lists(st.tuples(st.floats(-3, 3), st.floats(-3, 3)), min_size=1, max_size=60)


@settings(max_examples=150, deadline=None)
@given(lattice, st.sampled_from([1.0, 2.0, 5.0]), st.booleans())
def test_lattice_points_match_sklearn(points, bandwidth, own_seeds):
    seeds = np.array(points, dtype=float) if own_seeds else None
    check(points, seeds, bandwidth)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([-1.5, -1.0, -0.0, 0.0, 0.5, 2.0]), st.sampled_from([-0.0, 0.0, 1.0, 3.5])),
        min_size=1,
        max_size=30,
    )
)
def test_unique_rows_is_np_unique_over_rows(points):
    points = np.array(points, dtype=float)
    rows, first = unique_rows(points)
    expected_rows, expected_first = np.unique(points, axis=0, return_index=True)
    assert rows.tolist() == expected_rows.tolist() and first.tolist() == expected_first.tolist()


@settings(max_examples=100, deadline=None)
@given(reals)
def test_real_points_match_sklearn(points):
    check(points)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=50), st.floats(-1, 1), st.floats(-2, 2))
def test_collinear_points_match_sklearn(xs, slope, offset):
    check([(x, slope * x + offset) for x in xs])


def test_one_point_is_its_own_cluster():
    check([(3.0, 4.0)])
    assert mean_shift_labels([[3.0, 4.0]], [[3.0, 4.0]], 1.0).tolist() == [0]


def test_point_at_exactly_one_bandwidth_is_in_reach():
    points = [(0.0, 0.0), (3.0, 4.0)]  # 5 apart
    assert mean_shift_labels(points, [(0.0, 0.0)], 5.0).tolist() == reference(points, [(0.0, 0.0)], 5.0)
    # the seed at (0, 0) reaches both and moves to their mean; both are 2.5 from it: one cluster
    assert mean_shift_labels(points, [(0.0, 0.0)], 5.0).tolist() == [0, 0]


def test_a_mode_one_bandwidth_from_a_stronger_one_goes_as_blas_rounds_it():
    """Three modes of 3 points at (-8/3, -10/3), (-11/3, -4), (-14/3, -10/3): the last is 2
    from the first, 4.000000000000002 squared by plain differences but 4.0 by BLAS's
    |a|^2 + |b|^2 - 2 a.b (scikit-learn's brute radius query), so the strongest mode takes
    both others and the two points near the dropped ones have no mode within reach."""
    points = [(-2, -2), (-2, -4), (-4, -4), (-5, -2), (-5, -4)]
    seeds = [(-4, -4), (-4, -2), (-2, -4), (-2, -2)]
    expected = [0, 0, 0, -1, -1]
    assert mean_shift_labels(points, seeds, 2.0).tolist() == expected == reference(points, seeds, 2.0)


def test_a_point_is_at_distance_zero_from_itself_as_blas_rounds_it():
    """Modes (16/3, 13/3) and (16/3, 7/3), 3 points each, exactly 2 apart: scikit-learn's
    one-row query finds the second at 4.0 squared (the first at 0.0 from itself) and drops
    it; a stacked one-row product per query rounded the first's own distance to 1.4e-14."""
    points = [(4, 5), (5, 2), (5, 2), (6, 3), (6, 5)]
    expected = [0, -1, -1, 0, 0]
    assert mean_shift_labels(points, points, 2.0).tolist() == expected == reference(points, points, 2.0)


def fused(first: float, second: float) -> float:
    """first^2 + second^2 with only second^2 rounded before the sum: one fused multiply-add,
    computed exactly (Fractions never round), so the same on every machine."""
    return float(Fraction(first) ** 2 + Fraction(second * second))


def test_squared_norms_round_as_blas_dot():
    """The norms equal this machine's BLAS dot, whichever rounding its kernel uses: the
    plain sum (two products rounded, then their sum), or a fused multiply-add in either
    order. The rows tell the three apart by exact arithmetic, not by this machine's kernel
    (a kernel without FMA made the earlier self-check fail), so an implementation rounding
    one way fails on every machine whose BLAS rounds another."""
    rows = np.random.default_rng(2).integers(-400, 400, size=(1000, 2)) / np.arange(1, 1001)[:, None]
    blas = np.array([np.dot(row, row) for row in rows])
    assert _squared_norms(rows).tolist() == blas.tolist()
    plain = (rows[:, 0] * rows[:, 0] + rows[:, 1] * rows[:, 1]).tolist()
    first_fused = [fused(x, y) for x, y in rows.tolist()]
    second_fused = [fused(y, x) for x, y in rows.tolist()]
    # each pair of roundings differs on some row (on this seed: 168, 160 and 226 rows of 1,000)
    assert plain != first_fused and plain != second_fused and first_fused != second_fused


def test_two_equal_modes_are_ordered_by_coordinates():
    points = [(0.0, 0.0), (0.0, 0.1), (10.0, 0.0), (10.0, 0.1)]
    assert mean_shift_labels(points, points, 1.0).tolist() == [1, 1, 0, 0] == reference(points, points, 1.0)


def test_duplicates_and_many_points_match_sklearn():
    rng = np.random.default_rng(7)
    points = np.round(rng.normal(size=(3000, 2)) * 4) / 2  # thousands of points, many duplicates
    check(points, bandwidth=1.0)


def test_seed_out_of_reach_is_dropped_and_none_in_reach_raises():
    points = [(0.0, 0.0), (0.5, 0.0)]
    assert mean_shift_labels(points, [(0.0, 0.0), (50.0, 50.0)], 1.0).tolist() == [0, 0]
    with pytest.raises(ValueError):
        mean_shift_labels(points, [(50.0, 50.0)], 1.0)


def test_both_implementations_give_one_periodicity():
    from mosaic.analysis.segments import MeanShiftSettings, meanshift_periodicity
    from mosaic.config import Config

    rng = np.random.default_rng(3)
    starts = np.sort(np.concatenate([100.0 * np.arange(40), rng.uniform(0, 4000, 30)]))
    nbytes = np.where(np.isin(starts, 100.0 * np.arange(40)), 1e9, rng.uniform(1e6, 1e9, len(starts)))
    results = [
        meanshift_periodicity(
            starts, starts + 5, nbytes, MeanShiftSettings.of(Config(meanshift_implementation=name))
        )
        for name in ("numpy", "sklearn")
    ]
    assert results[0]["segments"]["cluster"].tolist() == results[1]["segments"]["cluster"].tolist()
    assert results[0]["operations"] == results[1]["operations"] and results[0]["operations"]
