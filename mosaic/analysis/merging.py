"""Concurrent and neighbor merging of one direction's operations (SPEC 3.3).

Merging turns the per-rank, slightly desynchronized operations of a Darshan
trace into the application-level operations that segmentation reasons about.
Operations far slower than the direction's median rate (a log file written
all run long) are *minor*: they would swallow everything they overlap, so
they are left out of merging (their bytes still count elsewhere).

Neighbor merging must be repeated until stable, because a merge lengthens the
merged operation and so loosens the "1 % of the merged duration" test for its
neighbors. Merges only ever make further merges easier, so the stable result
does not depend on the order in which gaps are merged; we merge every
qualifying gap at once (a numpy pass) a few times, which settles real traces,
and finish an adversarial cascade with one linear stack pass. A few
operations (most directions of a year of logs) go straight to the stack pass:
on plain floats it costs less than one numpy pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mosaic.analysis import small

# Vectorized passes tried before the linear stack pass takes over: real traces
# settle in one or two; only a cascade of gaps growing with the merged length
# needs more.
_VECTORIZED_PASSES = 4
# Up to this many operations, neighbor merging is the stack pass alone.
STACK_ONLY_MAX = 32
Floats = NDArray[np.float64]
Columns = tuple[Floats, Floats, Floats, Floats]  # starts, ends, bytes, rank seconds


@dataclass
class MergedOperations:
    """Merged operations (sorted by start) and how the input maps onto them."""

    starts: np.ndarray
    ends: np.ndarray
    bytes: np.ndarray
    rank_seconds: np.ndarray  # sum over members of ranks x duration
    minor: np.ndarray  # bool per input operation: left out of merging
    group: np.ndarray  # per input operation: index of its merged operation, -1 if minor

    def __len__(self) -> int:
        return len(self.starts)


def minor_mask(
    starts: ArrayLike, ends: ArrayLike, nbytes: ArrayLike, *, minor_rate_fraction: float
) -> np.ndarray:
    """Operations too slow and too light to be an I/O phase of their own (SPEC 3.3).

    Slow: a rate under ``minor_rate_fraction`` x the median rate (over
    operations with a positive duration; a zero-length operation has no
    finite rate and is never minor: it cannot swallow anything either).
    A slow operation is minor when judged by volume it is light: it moves
    less than ``minor_rate_fraction`` x the median operation's bytes (a few
    kB of start-up reads), or less than the operations that are not slow
    and overlap it (a log file written all run long, which merging would
    let swallow them). A checkpoint stalled on a shared file system is slow
    but moves a checkpoint's bytes beside no faster traffic: it stays (the
    runtime log ``pub_ckpt_newfile_7s``: checkpoint 6, 8 MiB per rank at
    7.7 MB/s against a median 1.4 GB/s, was dropped by rate alone).
    """
    begin, finish = np.asarray(starts, dtype=float), np.asarray(ends, dtype=float)
    volumes = np.asarray(nbytes, dtype=float)
    durations = finish - begin
    timed = durations > 0
    slow = np.zeros(len(durations), dtype=bool)
    if not timed.any():
        return slow
    rates = volumes[timed] / durations[timed]
    slow[timed] = rates < minor_rate_fraction * small.median(rates)
    at = slow.nonzero()[0]
    if not len(at):  # the usual case
        return slow
    light = volumes[at] < minor_rate_fraction * small.median(volumes)
    minor = np.zeros(len(durations), dtype=bool)
    minor[at] = light | (volumes[at] < _overlapping_bytes(begin, finish, volumes, ~slow, at))
    return minor


def _overlapping_bytes(
    starts: Floats, ends: Floats, nbytes: Floats, others: np.ndarray, at: np.ndarray
) -> Floats:
    """Per operation ``at``, the bytes of the ``others`` operations overlapping it: those
    started before its end, less those ended by its start (two sorted passes, no pairs)."""
    by_start, by_end = np.argsort(starts[others]), np.argsort(ends[others])
    moved = nbytes[others]
    started = np.concatenate([[0.0], np.cumsum(moved[by_start])])
    ended = np.concatenate([[0.0], np.cumsum(moved[by_end])])
    before_end = started[np.searchsorted(starts[others][by_start], ends[at], side="left")]
    done = ended[np.searchsorted(ends[others][by_end], starts[at], side="right")]
    overlapping: Floats = before_end - done
    return overlapping


def merge(
    starts: ArrayLike,
    ends: ArrayLike,
    nbytes: ArrayLike,
    ranks: ArrayLike,
    run_time: float,
    *,
    minor_rate_fraction: float,
    neighbor_gap_runtime_fraction: float,
    neighbor_gap_duration_fraction: float,
) -> MergedOperations:
    """Concurrent merging of the non-minor operations, then neighbor merging until stable."""
    starts, ends, nbytes = (np.asarray(a, dtype=float) for a in (starts, ends, nbytes))
    ranks = np.asarray(ranks, dtype=float)
    if len(starts) < 2:  # nothing to merge, and a lone operation is never minor
        return MergedOperations(
            starts,
            ends,
            nbytes,
            ranks * (ends - starts),
            np.zeros(len(starts), dtype=bool),
            np.arange(len(starts), dtype=np.int64),
        )
    minor = minor_mask(starts, ends, nbytes, minor_rate_fraction=minor_rate_fraction)
    # ndarray methods, not np.flatnonzero / np.argsort / np.cumsum: their Python wrappers
    # cost more than the work on the few operations most directions have
    kept = (~minor).nonzero()[0]
    order = kept[starts[kept].argsort(kind="stable")]
    s, e, b = starts[order], ends[order], nbytes[order]
    rank_seconds = ranks[order] * (e - s)

    opens_group = _opens_group(s, e)
    member_group = opens_group.cumsum() - 1
    s, e, b, rank_seconds = _reduce(opens_group.nonzero()[0], s, e, b, rank_seconds)
    member_group, s, e, b, rank_seconds = _neighbor_merge(
        member_group,
        s,
        e,
        b,
        rank_seconds,
        run_time,
        neighbor_gap_runtime_fraction=neighbor_gap_runtime_fraction,
        neighbor_gap_duration_fraction=neighbor_gap_duration_fraction,
    )
    group = np.full(len(starts), -1, dtype=np.int64)
    group[order] = member_group
    return MergedOperations(s, e, b, rank_seconds, minor, group)


def _opens_group(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Per start-sorted operation: does it start a new concurrent group?

    It does when it starts after the latest end seen so far (touching
    intervals count as overlapping).
    """
    opens = np.ones(len(s), dtype=bool)
    opens[1:] = s[1:] > np.maximum.accumulate(e)[:-1]
    return opens


def _reduce(first: np.ndarray, s: Floats, e: Floats, b: Floats, rank_seconds: Floats) -> Columns:
    """Collapse consecutive runs starting at ``first`` into one operation each."""
    if len(s) == 0:
        return s, e, b, rank_seconds
    return (
        s[first],
        np.maximum.reduceat(e, first),
        np.add.reduceat(b, first),
        np.add.reduceat(rank_seconds, first),
    )


@overload
def _joins(
    gap: float,
    merged_duration: float,
    run_time: float,
    *,
    neighbor_gap_runtime_fraction: float,
    neighbor_gap_duration_fraction: float,
) -> bool: ...
@overload
def _joins(
    gap: Floats,
    merged_duration: Floats,
    run_time: float,
    *,
    neighbor_gap_runtime_fraction: float,
    neighbor_gap_duration_fraction: float,
) -> NDArray[np.bool_]: ...
def _joins(
    gap: Any,
    merged_duration: Any,
    run_time: float,
    *,
    neighbor_gap_runtime_fraction: float,
    neighbor_gap_duration_fraction: float,
) -> Any:
    """SPEC 3.3 step 3: a gap below 0.1 % of the run or 1 % of the merged duration."""
    return (gap < neighbor_gap_runtime_fraction * run_time) | (
        gap < neighbor_gap_duration_fraction * merged_duration
    )


def _neighbor_merge(
    member_group: NDArray[np.int64],
    s: Floats,
    e: Floats,
    b: Floats,
    rank_seconds: Floats,
    run_time: float,
    *,
    neighbor_gap_runtime_fraction: float,
    neighbor_gap_duration_fraction: float,
) -> tuple[NDArray[np.int64], Floats, Floats, Floats, Floats]:
    """Merge neighbors until no gap qualifies; also remap the members' group ids.

    Input operations are sorted and disjoint, so each one's end is also the
    latest end of everything before it.
    """
    if len(s) < 2:
        return member_group, s, e, b, rank_seconds
    for _ in range(_VECTORIZED_PASSES if len(s) > STACK_ONLY_MAX else 0):
        joins = _joins(
            s[1:] - e[:-1],
            e[1:] - s[:-1],
            run_time,
            neighbor_gap_runtime_fraction=neighbor_gap_runtime_fraction,
            neighbor_gap_duration_fraction=neighbor_gap_duration_fraction,
        )
        if not joins.any():
            break
        first = np.concatenate(([True], ~joins)).nonzero()[0]
        member_group = np.concatenate(([False], ~joins)).cumsum()[member_group]
        s, e, b, rank_seconds = _reduce(first, s, e, b, rank_seconds)
        if len(s) < 2:
            break
    else:
        first = _stack_merge(
            s.tolist(),
            e.tolist(),
            run_time,
            neighbor_gap_runtime_fraction=neighbor_gap_runtime_fraction,
            neighbor_gap_duration_fraction=neighbor_gap_duration_fraction,
        )
        if len(first) < len(s):
            remap = np.zeros(len(s), dtype=np.int64)
            remap[first[1:]] = 1
            member_group = remap.cumsum()[member_group]
            s, e, b, rank_seconds = _reduce(first, s, e, b, rank_seconds)
    return member_group, s, e, b, rank_seconds


def _stack_merge(
    s: list[float],
    e: list[float],
    run_time: float,
    *,
    neighbor_gap_runtime_fraction: float,
    neighbor_gap_duration_fraction: float,
) -> NDArray[np.int64]:
    """Linear-time fixpoint of neighbor merging; returns each group's first index.

    A stack holds the first member of each group so far. A new operation may
    join the top group, and each join lengthens the top, which may let it join
    the group below: every operation is pushed and popped at most once.
    """
    firsts: list[int] = []
    for i in range(len(s)):
        firsts.append(i)
        while len(firsts) > 1 and _joins(
            s[firsts[-1]] - e[firsts[-1] - 1],
            e[i] - s[firsts[-2]],
            run_time,
            neighbor_gap_runtime_fraction=neighbor_gap_runtime_fraction,
            neighbor_gap_duration_fraction=neighbor_gap_duration_fraction,
        ):
            firsts.pop()
    return np.asarray(firsts, dtype=np.int64)
