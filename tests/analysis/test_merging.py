"""Concurrent and neighbor merging (SPEC 3.3) with hand-computed cases."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mosaic.analysis import merging
from mosaic.analysis.merging import merge, minor_mask
from mosaic.config import Config

CFG = Config()


def run(ops, run_time=1000.0):
    """ops: list of (start, end, bytes[, ranks])."""
    ops = [tuple(op) + (1,) * (4 - len(op)) for op in ops]
    s, e, b, r = (np.array(col, dtype=float) for col in zip(*ops)) if ops else [np.zeros(0)] * 4
    return merge(
        s,
        e,
        b,
        r,
        run_time,
        minor_rate_fraction=CFG.minor_rate_fraction,
        neighbor_gap_runtime_fraction=CFG.neighbor_gap_runtime_fraction,
        neighbor_gap_duration_fraction=CFG.neighbor_gap_duration_fraction,
    )


def spans(merged):
    return list(zip(merged.starts.tolist(), merged.ends.tolist(), merged.bytes.tolist()))


def test_no_operations():
    merged = run([])
    assert len(merged) == 0 and merged.minor.size == 0 and merged.group.size == 0


def test_single_operation():
    merged = run([(5, 7, 100)])
    assert spans(merged) == [(5, 7, 100)]
    assert merged.group.tolist() == [0]


def test_overlapping_and_nested_operations_merge_into_one():
    merged = run([(0, 10, 1), (2, 5, 2), (8, 12, 4), (200, 210, 8)])
    assert spans(merged) == [(0, 12, 7), (200, 210, 8)]


def test_touching_operations_merge():
    assert spans(run([(0, 10, 1), (10, 20, 2)])) == [(0, 20, 3)]


def test_input_order_does_not_matter_and_group_maps_input_rows():
    merged = run([(200, 210, 8), (0, 10, 1), (2, 5, 2)])
    assert spans(merged) == [(0, 10, 3), (200, 210, 8)]
    assert merged.group.tolist() == [1, 0, 0]


def test_rank_seconds_sum_ranks_times_duration_shared_record():
    # A shared record (rank -1 in Darshan) stands for nprocs ranks.
    merged = run([(0, 10, 1, 64), (5, 20, 1, 1)])
    assert merged.rank_seconds.tolist() == [64 * 10 + 15]


@pytest.mark.parametrize("gap, merged_count", [(1.0, 2), (0.999, 1)])
def test_gap_at_one_thousandth_of_run_time(gap, merged_count):
    # run 1000 s: gap must be below 1.0 s; the 1 % duration rule needs < 0.02 s here
    assert len(run([(0, 1, 1), (1 + gap, 2 + gap, 1)], run_time=1000.0)) == merged_count


@pytest.mark.parametrize("gap, merged_count", [(6.0, 2), (5.9, 1)])
def test_gap_at_one_percent_of_merged_duration(gap, merged_count):
    # merged operation would last 600 s -> gap must be below 6 s (run rule: below 1 s)
    assert len(run([(0, 300, 1), (300 + gap, 600, 1)], run_time=1000.0)) == merged_count


def test_neighbor_merging_repeats_until_stable():
    # B joins A (gap 1.5 < 1 % of 200); only the merged AB reaches C
    # (gap 2.5 < 1 % of 260 but not < 1 % of B..C = 158.5).
    merged = run([(0, 100, 1), (101.5, 200, 2), (202.5, 260, 4)], run_time=1000.0)
    assert spans(merged) == [(0, 260, 7)]


def cascade(count):
    """Each op can join only the whole group before it: one merge per vectorized pass."""
    ops, end = [(0.0, 100.0, 1.0)], 100.0
    for _ in range(count):
        gap = 0.009 * (end + 1) / 0.991
        ops.append((end + gap, end + gap + 1, 1.0))
        end += gap + 1
    return ops, end


@pytest.mark.parametrize("count", [30, 3 * merging.STACK_ONLY_MAX])  # stack pass alone, numpy first
def test_long_cascade_reaches_the_fixpoint(count):
    ops, end = cascade(count)
    merged = run(ops, run_time=500.0)
    assert spans(merged) == [(0.0, end, count + 1.0)]
    assert merged.group.tolist() == [0] * (count + 1)


def test_cascade_stops_at_a_gap_too_wide():
    ops, end = cascade(10)
    ops.append((end + 50, end + 51, 1.0))
    merged = run(ops, run_time=500.0)
    assert spans(merged) == [(0.0, end, 11.0), (end + 50, end + 51, 1.0)]
    assert merged.group.tolist() == [0] * 11 + [1]


@pytest.mark.parametrize("light_bytes, minor", [(1000, False), (999, True)])
def test_minor_rate_exclusion_edge(light_bytes, minor):
    # rates 100, 100 and light/1000 s: median 100, minor below 1 B/s
    ops = [(0, 10, 1000), (20, 30, 1000), (0, 1000, light_bytes)]
    merged = run(ops, run_time=1000.0)
    assert merged.minor.tolist() == [False, False, minor]
    if minor:
        assert spans(merged) == [(0, 10, 1000), (20, 30, 1000)]
        assert merged.group.tolist() == [0, 1, -1]
    else:
        assert spans(merged) == [(0, 1000, 2000 + light_bytes)]


def test_minor_is_judged_by_volume_among_slow_operations():
    """Three checkpoints of 100 B in 1 s, one stalled (100 B over 1,000 s), a log over the run
    (50 B) and start-up reads (0.5 B over 100 s): median rate 50.05 B/s, all three slow. The
    stall moves a checkpoint's bytes beside no faster traffic: not minor; the log moves less
    than the 300 B of checkpoints it overlaps, the reads under 1 % of the median 100 B: minor
    (SPEC 3.3)."""
    ops = [(0, 1, 100), (2, 3, 100), (4, 5, 100), (6, 1006, 100), (0, 2000, 50), (0, 100, 0.5)]
    starts, ends, nbytes = (np.array(column, float) for column in zip(*ops))
    found = minor_mask(starts, ends, nbytes, minor_rate_fraction=0.01)
    assert found.tolist() == [False, False, False, False, True, True]


@pytest.mark.parametrize("slow_bytes, minor", [(100, False), (99, True)])
def test_a_slow_operation_is_minor_under_the_bytes_it_overlaps(slow_bytes, minor):
    """The slow one (rate < 1 B/s, 1 % of the median 100 B/s) overlaps the last checkpoint's
    100 B only: minor when it moves less."""
    ops = [(0, 1, 100), (2, 3, 100), (4, 5, 100), (4.5, 1004.5, slow_bytes)]
    starts, ends, nbytes = (np.array(column, float) for column in zip(*ops))
    assert minor_mask(starts, ends, nbytes, minor_rate_fraction=0.01).tolist() == [False] * 3 + [minor]


@pytest.mark.parametrize("slow_bytes, minor", [(1.0, False), (0.99, True)])
def test_a_lone_slow_operation_is_minor_under_one_percent_of_the_median_bytes(slow_bytes, minor):
    ops = [(0, 1, 100), (2, 3, 100), (4, 5, 100), (10, 1010, slow_bytes)]
    starts, ends, nbytes = (np.array(column, float) for column in zip(*ops))
    assert minor_mask(starts, ends, nbytes, minor_rate_fraction=0.01).tolist() == [False] * 3 + [minor]


def test_zero_length_operations_are_never_minor_and_merge_when_inside():
    assert (
        minor_mask([0, 5, 5], [10, 5, 5], [1000, 1, 1], minor_rate_fraction=CFG.minor_rate_fraction).tolist()
        == [False] * 3
    )
    merged = run([(0, 10, 1000), (5, 5, 1), (500, 500, 2)])
    assert spans(merged) == [(0, 10, 1001), (500, 500, 2)]


def test_all_zero_length_operations():
    assert minor_mask([1, 2], [1, 2], [5, 5], minor_rate_fraction=CFG.minor_rate_fraction).tolist() == [
        False,
        False,
    ]


def reference_merge(ops, run_time, config):
    """Slow, obviously right: merge any qualifying pair, one at a time, until none."""
    columns = [np.array([op[k] for op in ops], dtype=float) for k in range(3)]
    minor = minor_mask(*columns, minor_rate_fraction=config.minor_rate_fraction)
    items = [list(op[:3]) for op, m in zip(ops, minor) if not m]
    changed = True
    while changed:
        changed = False
        items.sort(key=lambda x: x[0])
        for i in range(len(items)):
            for j in range(i + 1, len(items)):
                a, b = items[i], items[j]
                overlap = b[0] <= a[1] and a[0] <= b[1]
                near = (
                    j == i + 1
                    and b[0] > a[1]
                    and (
                        b[0] - a[1] < config.neighbor_gap_runtime_fraction * run_time
                        or b[0] - a[1] < config.neighbor_gap_duration_fraction * (max(a[1], b[1]) - a[0])
                    )
                )
                if overlap or near:
                    items[i] = [min(a[0], b[0]), max(a[1], b[1]), a[2] + b[2]]
                    del items[j]
                    changed = True
                    break
            if changed:
                break
    return sorted(tuple(x) for x in items)


operations = st.lists(
    st.tuples(st.integers(0, 4000), st.integers(0, 400), st.integers(1, 10**6)).map(
        lambda t: (t[0] / 4, (t[0] + t[1]) / 4, float(t[2]))
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(operations, st.sampled_from([200.0, 1000.0, 5000.0]))
def test_matches_the_one_pair_at_a_time_reference(ops, run_time):
    expected = reference_merge(ops, run_time, CFG)
    for stack_only_max in (merging.STACK_ONLY_MAX, 0):  # the stack pass alone; numpy passes first
        with mock.patch.object(merging, "STACK_ONLY_MAX", stack_only_max):
            merged = run(ops, run_time=run_time)
        # quarter-second times and whole bytes: every sum and difference is exact
        assert spans(merged) == expected


@settings(max_examples=150, deadline=None)
@given(operations)
def test_never_loses_or_invents_bytes(ops):
    merged = run(ops)
    nbytes = np.array([op[2] for op in ops])
    assert merged.bytes.sum() + nbytes[merged.minor].sum() == pytest.approx(nbytes.sum())
    kept = ~merged.minor
    assert np.bincount(merged.group[kept], weights=nbytes[kept], minlength=len(merged)) == pytest.approx(
        merged.bytes
    )
