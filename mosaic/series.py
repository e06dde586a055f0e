"""A run's read and write bandwidth over its run time, at its own resolution (SPEC 3.12).

One representation for every source: a step function of time. Each interval
(start, end, bytes), in seconds from the job's start, spreads its bytes evenly
over [start, end); the run's bandwidth at a time is the sum over the intervals
open then. For DXT segments that is exact (each request's own interval), for
HEATMAP bins it is the bins, for record windows (first to last read or write of
a file) the windows. The breakpoints of the step function are the intervals'
ends, so a run keeps the resolution its log gives; past ``max_points`` steps
it is summed exactly into that many even bins of the run time (the bytes of a
bin are the step function's integral over it, so no byte is lost or moved out
of its bin).

The inputs are the run's activity on its file systems (:mod:`mosaic.activity`: DXT
segments, else HEATMAP bins, else the records' windows, each file system's intervals
together): :func:`series_from_activity`, over :func:`series_from_intervals`'s plain arrays.

Not stored apart: a run's stored activity (``run_activity``, float64 under zlib, written at
validation for every valid run) gives its series exactly, so :func:`load_series` makes the
series of the runs a signature uses (a group's ``signature_max_runs`` most recent) when it is
built, not every run's at validation (docs/method.md 3.12).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from mosaic.config import DEFAULT, Config
from mosaic.darshan.formats import DarshanLog

Source = Literal["dxt", "heatmap", "records", "none"]
SOURCES: tuple[Source, ...] = ("dxt", "heatmap", "records", "none")
MIN_INTERVAL_SECONDS = 1e-6  # Darshan's clock resolution: a zero-length request spreads over this

# The runs of a group with their activity, the most recent first (a group key, a limit: -1 all)
RECENT_RUNS = (
    "FROM run_performance p JOIN run_activity a USING (run) WHERE p.group_key = ? "
    "ORDER BY p.start_epoch DESC, p.run DESC LIMIT ?"
)


@dataclass(frozen=True)
class RunSeries:
    """Bytes moved in each step [edges[i], edges[i+1]) of a run, by direction."""

    source: Source
    run_time: float
    resolution: float  # seconds: the median step that holds bytes (the finest the source gives)
    edges: np.ndarray  # float64, len steps + 1, increasing, seconds from job start
    read: np.ndarray  # float64 bytes per step
    write: np.ndarray

    @property
    def timed(self) -> bool:
        """Whether the run has a run time and bytes placed in time."""
        return self.source != "none" and self.run_time > 0 and len(self.read) > 0

    def total(self, direction: str) -> float:
        return float(self._bytes(direction).sum())

    def _bytes(self, direction: str) -> np.ndarray:
        return self.read if direction == "read" else self.write

    @functools.cached_property
    def _running(self) -> dict[str, np.ndarray]:
        """Bytes moved before each edge, by direction (made once)."""
        return {d: np.concatenate(([0.0], np.cumsum(self._bytes(d)))) for d in ("read", "write")}

    def cumulative(self, direction: str, at: np.ndarray) -> np.ndarray:
        """Bytes moved in direction before each time of ``at`` (the step function's integral)."""
        if len(self.read) == 0:
            return np.zeros(len(at))
        out: np.ndarray = np.interp(at, self.edges, self._running[direction])
        return out

    def binned(self, direction: str, edges: np.ndarray) -> np.ndarray:
        """Bytes in each bin [edges[j], edges[j+1]) (exact under the step function)."""
        return np.diff(self.cumulative(direction, edges))

    def normalized(self, direction: str, points: int) -> np.ndarray:
        """Bandwidth (bytes/s) at ``points`` even bins of the normalized run time [0, 1]."""
        edges = np.linspace(0.0, self.run_time, points + 1)
        return self.binned(direction, edges) / (self.run_time / points)


def empty(run_time: float) -> RunSeries:
    """A run without bytes placed in time (no DXT, HEATMAP nor timestamps)."""
    nothing = np.zeros(0)
    return RunSeries("none", float(run_time), 0.0, np.zeros(1), nothing, nothing)


def series_from_intervals(
    start: np.ndarray,
    end: np.ndarray,
    read: np.ndarray,
    write: np.ndarray,
    run_time: float,
    source: Source,
    max_points: int,
) -> RunSeries:
    """The step function of intervals [start, end) carrying ``read`` and ``write`` bytes.

    Intervals are clipped to [0, run_time]; one that is not finite, ends before it
    starts or carries no byte is left out; a zero-length one is widened to
    :data:`MIN_INTERVAL_SECONDS`.
    """
    run_time = float(run_time)
    start, end = np.asarray(start, np.float64), np.asarray(end, np.float64)
    read, write = np.asarray(read, np.float64), np.asarray(write, np.float64)
    if not (np.isfinite(run_time) and run_time > 0):
        return empty(run_time if np.isfinite(run_time) else 0.0)
    keep = np.isfinite(start) & np.isfinite(end) & np.isfinite(read) & np.isfinite(write) & (end >= start)
    keep &= (read > 0) | (write > 0)
    start, end, read, write = start[keep], end[keep], read[keep], write[keep]
    if len(start) == 0:
        return empty(run_time)
    start = np.clip(start, 0.0, run_time)
    end = np.clip(np.maximum(end, start + MIN_INTERVAL_SECONDS), 0.0, run_time)
    start = np.minimum(start, end - MIN_INTERVAL_SECONDS).clip(0.0)
    width = end - start
    # The slope (bytes/s) rises by an interval's rate at its start and falls at its end.
    points, where = np.unique(np.concatenate(([0.0, run_time], start, end)), return_inverse=True)
    n = len(start)
    up, down = where[2 : 2 + n], where[2 + n :]
    steps: list[np.ndarray] = []
    step_width = np.diff(points)
    for bytes_ in (read, write):
        rate = bytes_ / width
        change = np.bincount(up, rate, len(points)) - np.bincount(down, rate, len(points))
        steps.append(np.maximum(np.cumsum(change)[:-1], 0.0) * step_width)
    series = RunSeries(source, run_time, 0.0, points, steps[0], steps[1])
    if len(step_width) > max_points:
        grid = np.linspace(0.0, run_time, max_points + 1)
        series = RunSeries(
            source, run_time, 0.0, grid, series.binned("read", grid), series.binned("write", grid)
        )
    return _with_resolution(series)


def _with_resolution(series: RunSeries) -> RunSeries:
    busy = (series.read + series.write) > 0
    widths = np.diff(series.edges)[busy]
    resolution = float(np.median(widths)) if len(widths) else 0.0
    return RunSeries(series.source, series.run_time, resolution, series.edges, series.read, series.write)


def series_from_log(log: DarshanLog, max_points: int, config: Config = DEFAULT) -> RunSeries:
    """A log's series, from its per-file-system activity (SPEC 3.10's: DXT_POSIX segments,
    else HEATMAP bins, else the records' windows, of the files SPEC 2 keeps): for a log read
    outside a batch run (the job page)."""
    from mosaic.activity import build_activity

    return series_from_activity(build_activity(log, config), max_points)


class _FsActivity(Protocol):
    start: np.ndarray
    end: np.ndarray
    read: np.ndarray
    write: np.ndarray


class _RunActivity(Protocol):
    source: str
    run_time: float

    @property
    def by_fs(self) -> Mapping[str, _FsActivity]: ...


def series_from_activity(activity: _RunActivity, max_points: int) -> RunSeries:
    """A run's series from its per-file-system activity (``mosaic.activity.RunActivity``:
    ``source``, ``run_time``, ``by_fs`` of arrays ``start``, ``end``, ``read``, ``write``),
    every file system's intervals together: the same step function as :func:`series_from_log`
    makes from the log, once the activity is what the validating worker keeps."""
    parts = list(activity.by_fs.values())
    if not parts:
        return empty(activity.run_time)
    source: Source = next((known for known in SOURCES if known == activity.source), "records")
    return series_from_intervals(
        np.concatenate([p.start for p in parts]),
        np.concatenate([p.end for p in parts]),
        np.concatenate([p.read for p in parts]),
        np.concatenate([p.write for p in parts]),
        activity.run_time,
        source,
        max_points,
    )


# ----- the store -----


def load_series(
    db: sqlite3.Connection,
    group_key: str,
    limit: int = -1,
    max_points: int = DEFAULT.signature_series_max_points,
) -> list[tuple[int, RunSeries]]:
    """The series of a group's ``limit`` most recent runs (-1: all), the most recent first, by
    run identity, from their stored activity (:data:`RECENT_RUNS`). A damaged activity raises
    (``mosaic.activity.DAMAGED``): the caller's group then has no signature."""
    from mosaic.activity import unpack

    cursor = db.cursor()
    cursor.row_factory = None  # BLOBs as bytes (the store's Row gives str)
    try:
        rows = cursor.execute(f"SELECT p.run, a.parts {RECENT_RUNS}", (group_key, limit)).fetchall()
    finally:
        cursor.close()
    return [(int(run), series_from_activity(unpack(parts), max_points)) for run, parts in rows]
