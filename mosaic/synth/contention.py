"""Jobs sharing a file system's bandwidth: max-min fair shares, simulated by events.

A shared file system (a mount point) has a capacity in bytes/s. A run's I/O is
a sequence of phases; phase k asks ``volume[k]`` bytes at ``demand[k]`` bytes/s
(what the run would move at on an idle file system), after ``gap[k]`` seconds of computation that
follow the previous phase's end (or the run's start). While the phases active
on the file system ask no more than its capacity, each gets its demand. When
they ask more, bandwidth goes by max-min fair sharing (water filling): a level
L with sum(min(d, L)) = capacity, each phase getting min(d, L), so a phase
below the fair share keeps its demand. A phase ends when its bytes are moved:
a throttled phase lasts longer, and the run's later phases start later
(stretched I/O spills into time that looked free). Runs on another file
system, or on a node-local one, are simulated apart or not at all.

Cost: a heap-driven loop over the 2 P events of P phases (starts and ends),
O(P log P) while the file system is not saturated (a start or an end changes
no other phase's rate). In a saturated stretch each event recomputes the k
active phases' rates and predicted ends: O(k log k) numpy work per event. Who
slowed whom is the product of two sparse (saturated interval x run) matrices,
bytes moved and throttled, computed in C by scipy at the end.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

EPS_BYTES = 1e-6  # a phase with less left than this is done (float rounding)
THROTTLED = 1 - 1e-9  # a phase got less than its demand (relative)
FLUSH_ENTRIES = 200_000  # saturated-interval entries kept before they are folded into ``by``


def fair_shares(demand: np.ndarray, capacity: float) -> np.ndarray:
    """Max-min fair rates of phases asking ``demand`` of ``capacity``: min(d, L) with
    sum = capacity, or the demands themselves when they fit (sum <= capacity)."""
    d = np.asarray(demand, np.float64)
    if d.sum() <= capacity:
        return d.copy()
    s = np.sort(d)
    below = np.cumsum(s) - s  # bytes/s of the phases smaller than each
    level = (capacity - below) / (len(s) - np.arange(len(s)))
    first = int(np.argmax(s > level))  # exists: the sum exceeds the capacity
    shares: np.ndarray = np.minimum(d, level[first])
    return shares


@dataclass
class Outcome:
    """Per phase its actual start and end; per run its I/O time, planned I/O time, and
    bytes moved by other runs while it was throttled (sparse, run x other run)."""

    start: np.ndarray
    end: np.ndarray
    io_time: np.ndarray  # per run: sum of its phases' durations
    planned_io_time: np.ndarray  # the same alone on the file system (volume / min(demand, capacity))
    throttled_time: np.ndarray  # per run: seconds some phase of it got less than its demand
    by: sp.csr_matrix  # [run, other]: bytes ``other`` moved while ``run`` was throttled

    @property
    def slowdown(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.planned_io_time > 0, self.io_time / self.planned_io_time, 1.0)


def simulate(
    run: np.ndarray,
    run_start: np.ndarray,
    gap: np.ndarray,
    volume: np.ndarray,
    demand: np.ndarray,
    capacity: float,
    n_runs: int | None = None,
) -> Outcome:
    """Simulate the phases of runs sharing one file system of ``capacity`` bytes/s.

    ``run``: the run index of each phase, phases of a run consecutive and in order;
    ``run_start`` per run (seconds); ``gap``, ``volume``, ``demand`` per phase.
    ``capacity`` may be ``inf`` (the null year: nothing slowed).
    """
    run = np.asarray(run, np.int64)
    gap, volume = np.asarray(gap, np.float64), np.asarray(volume, np.float64)
    demand = np.maximum(np.asarray(demand, np.float64), 1e-12)
    n_runs = int(run.max()) + 1 if n_runs is None else n_runs
    n = len(run)
    start, end = np.zeros(n), np.zeros(n)
    first = np.ones(n, bool)
    first[1:] = run[1:] != run[:-1]
    last = np.ones(n, bool)
    last[:-1] = run[1:] != run[:-1]
    remaining = volume.copy()
    rate = np.zeros(n)
    since = np.zeros(n)  # time ``remaining`` was last brought up to date
    version = np.zeros(n, np.int64)
    throttled_time = np.zeros(n_runs)
    # First phases start at known times: a sorted array read in order (no Python tuple per
    # run); the later phases, whose starts depend on the simulation, go through a heap.
    first_phase = np.flatnonzero(first)
    first_time = np.asarray(run_start, np.float64)[run[first_phase]] + gap[first_phase]
    by_time = np.argsort(first_time, kind="stable")
    first_time, first_phase = first_time[by_time], first_phase[by_time]
    n_first, next_first = len(first_phase), 0
    starts: list[tuple[float, int]] = []
    ends: list[tuple[float, int, int]] = []
    active: set[int] = set()
    total = 0.0  # sum of active demands
    saturated = False
    # Saturated intervals, as sparse rows: bytes moved per run, and who was throttled.
    moved_rows: list[np.ndarray] = []
    moved_cols: list[np.ndarray] = []
    moved_vals: list[np.ndarray] = []
    thr_rows: list[np.ndarray] = []
    thr_cols: list[np.ndarray] = []
    n_intervals = 0

    def settle(t: float) -> None:
        """Bring every active phase to time t (only needed when rates are about to change)."""
        nonlocal n_intervals
        if not active:
            return
        idx = np.fromiter(active, np.int64, len(active))
        dt = t - since[idx]
        moved = rate[idx] * dt
        remaining[idx] -= moved
        since[idx] = t
        if saturated and t > now_settled[0]:
            width = t - now_settled[0]
            cut = rate[idx] < demand[idx] * THROTTLED
            runs = run[idx]
            moved_rows.append(np.full(len(idx), n_intervals))
            moved_cols.append(runs)
            moved_vals.append(rate[idx] * width)
            thr = np.unique(runs[cut])
            thr_rows.append(np.full(len(thr), n_intervals))
            thr_cols.append(thr)
            throttled_time[thr] += width
            n_intervals += 1
            pending[0] += len(idx)
            if pending[0] >= FLUSH_ENTRIES:
                flush()
        now_settled[0] = t

    def flush() -> None:
        """Fold the saturated intervals so far into ``by`` (memory flat in the year's length)."""
        nonlocal n_intervals
        if n_intervals:
            shape = (n_intervals, n_runs)
            moved = sp.csr_matrix(
                (np.concatenate(moved_vals), (np.concatenate(moved_rows), np.concatenate(moved_cols))),
                shape=shape,
            )
            thr = sp.csr_matrix(
                (
                    np.ones(sum(len(r) for r in thr_rows)),
                    (np.concatenate(thr_rows), np.concatenate(thr_cols)),
                ),
                shape=shape,
            )
            by[0] = by[0] + (thr.T @ moved).tocsr()
        for part in (moved_rows, moved_cols, moved_vals, thr_rows, thr_cols):
            part.clear()
        n_intervals = 0
        pending[0] = 0

    now_settled = [0.0]
    pending = [0]
    by = [sp.csr_matrix((n_runs, n_runs))]

    def reallocate(t: float) -> None:
        nonlocal saturated
        idx = np.fromiter(active, np.int64, len(active))
        new = fair_shares(demand[idx], capacity) if len(idx) else np.zeros(0)
        rate[idx] = new
        version[idx] += 1
        for p, g in zip(idx.tolist(), new.tolist()):
            heapq.heappush(ends, (t + max(remaining[p], 0.0) / g, int(version[p]), p))
        saturated = total > capacity

    while starts or ends or next_first < n_first:
        next_start = starts[0][0] if starts else np.inf
        from_first = next_first < n_first and first_time[next_first] <= next_start
        if from_first:
            next_start = float(first_time[next_first])
        while ends and ends[0][1] != version[ends[0][2]]:
            heapq.heappop(ends)  # a prediction made before the rates changed
        next_end = ends[0][0] if ends else np.inf
        if next_start == np.inf and next_end == np.inf:
            break
        if next_end <= next_start:  # ends first: a phase that ends as another starts frees its share
            t, _, p = heapq.heappop(ends)
            was_saturated = saturated
            if was_saturated:
                settle(t)
            active.discard(p)
            total -= demand[p]
            if not active:
                total = 0.0
            end[p] = t
            remaining[p] = 0.0
            version[p] += 1
            if not last[p]:
                heapq.heappush(starts, (t + float(gap[p + 1]), p + 1))
            if was_saturated:
                reallocate(t)
        else:
            if from_first:
                t, p = float(first_time[next_first]), int(first_phase[next_first])
                next_first += 1
            else:
                t, p = heapq.heappop(starts)
            start[p] = t
            since[p] = t
            was_saturated = saturated
            if was_saturated or total + demand[p] > capacity:
                settle(t)
            active.add(p)
            total += demand[p]
            if was_saturated or total > capacity:
                now_settled[0] = t
                reallocate(t)
            else:
                rate[p] = demand[p]
                version[p] += 1
                heapq.heappush(ends, (t + volume[p] / demand[p], int(version[p]), p))
    duration = end - start
    io_time = np.bincount(run, duration, n_runs)
    planned = np.bincount(run, volume / np.minimum(demand, capacity), n_runs)  # alone on the file system
    flush()
    result = by[0].tocsr()
    result.setdiag(0)
    result.eliminate_zeros()
    return Outcome(start, end, io_time, planned, throttled_time, result)


def shares(by: sp.csr_matrix, row: int, floor: float = 0.01) -> list[tuple[int, float]]:
    """(other run, share of the bytes others moved while ``row`` was throttled), largest
    first, shares below ``floor`` left out."""
    lo, hi = by.indptr[row], by.indptr[row + 1]
    cols, vals = by.indices[lo:hi], by.data[lo:hi]
    total = vals.sum()
    if total <= 0:
        return []
    share = vals / total
    keep = np.flatnonzero(share >= floor)
    order = keep[np.argsort(-share[keep], kind="stable")]
    return [(int(cols[i]), float(share[i])) for i in order]
