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

Stored per run (table ``run_series``, keyed by the store's run identity) as
float32 arrays under zlib: :func:`pack` and :func:`unpack`.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import struct
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from mosaic.config import DEFAULT, Config
from mosaic.darshan.formats import DarshanLog

Source = Literal["dxt", "heatmap", "records", "none"]
SOURCES: tuple[Source, ...] = ("dxt", "heatmap", "records", "none")
MIN_INTERVAL_SECONDS = 1e-6  # Darshan's clock resolution: a zero-length request spreads over this

SERIES_TABLE = """
CREATE TABLE IF NOT EXISTS run_series (
    run INTEGER PRIMARY KEY, group_key TEXT, source TEXT, run_time REAL, resolution REAL,
    read_bytes REAL, write_bytes REAL, points INTEGER, series BLOB);
CREATE INDEX IF NOT EXISTS run_series_by_group ON run_series (group_key);
"""
SERIES_COLUMNS = "run, group_key, source, run_time, resolution, read_bytes, write_bytes, points, series"
_HEAD = struct.Struct("<I")  # number of steps, before the three float32 arrays


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

    def time_at(self, direction: str, moved: np.ndarray) -> np.ndarray:
        """The first time by which ``moved`` bytes had moved in direction (the inverse of
        :meth:`cumulative`; a step without bytes is skipped, never a time inside it)."""
        bytes_ = self._bytes(direction)
        if len(bytes_) == 0:
            return np.zeros(len(moved))
        running = self._running[direction]
        target = np.clip(moved, 0.0, running[-1])
        step = np.searchsorted(running, target, side="left").clip(1, len(bytes_))
        before = running[step - 1]
        inside = np.where(
            bytes_[step - 1] > 0,
            (target - before) / np.where(bytes_[step - 1] > 0, bytes_[step - 1], 1.0),
            1.0,
        )
        out: np.ndarray = self.edges[step - 1] + inside.clip(0, 1) * (self.edges[step] - self.edges[step - 1])
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


def pack(series: RunSeries) -> bytes:
    """The series as zlib-compressed float32 edges, read bytes, write bytes."""
    steps = len(series.read)
    body = np.concatenate((series.edges, series.read, series.write)).astype("<f4").tobytes()
    return zlib.compress(_HEAD.pack(steps) + body, 6)


def unpack(blob: bytes | str, source: str, run_time: float, resolution: float) -> RunSeries:
    """:func:`pack`'s series back (a str: the store's rows give BLOBs as ``os.fsdecode`` does)."""
    raw = zlib.decompress(os.fsencode(blob) if isinstance(blob, str) else blob)
    (steps,) = _HEAD.unpack_from(raw)
    values = np.frombuffer(raw, "<f4", offset=_HEAD.size).astype(np.float64)
    if len(values) != 3 * steps + 1:
        raise ValueError(f"a run series of {steps} steps holds {len(values)} values")
    edges, read, write = values[: steps + 1], values[steps + 1 : 2 * steps + 1], values[2 * steps + 1 :]
    kind: Source = next((known for known in SOURCES if known == source), "none")
    return RunSeries(kind, float(run_time), float(resolution), edges, read, write)


def series_row(run: int, group_key: str, series: RunSeries) -> tuple[Any, ...]:
    """The ``run_series`` row of a run (:data:`SERIES_COLUMNS`)."""
    return (
        run,
        group_key,
        series.source,
        series.run_time,
        series.resolution,
        series.total("read"),
        series.total("write"),
        len(series.read),
        pack(series),
    )


def save_series(db: sqlite3.Connection, rows: Iterable[Sequence[Any]]) -> None:
    db.executemany(f"INSERT OR REPLACE INTO run_series ({SERIES_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)", rows)


def load_series(db: sqlite3.Connection, group_key: str, limit: int = -1) -> list[tuple[int, RunSeries]]:
    """The stored series of a group, by run identity: its ``limit`` most recent runs (by
    their start in ``jobs``; -1: all), the most recent first."""
    rows = db.execute(
        "SELECT s.run, s.source, s.run_time, s.resolution, s.series FROM run_series s "
        "LEFT JOIN jobs j ON j.run = s.run WHERE s.group_key = ? "
        "ORDER BY coalesce(j.start, '') DESC, s.run DESC LIMIT ?",
        (group_key, limit),
    ).fetchall()
    return [(int(row[0]), unpack(row[4], row[1], row[2], row[3])) for row in rows]


def series_fact(activity: _RunActivity, max_points: int) -> tuple[Any, ...] | None:
    """A run's ``run_series`` row less its run and group (:data:`SERIES_COLUMNS` from
    ``source``), made in the validating worker from the activity it built; None when the
    intervals cannot be read as a series (the run then has no series: it never stops the
    log's validation)."""
    try:
        return series_row(0, "", series_from_activity(activity, max_points))[2:]
    except (ValueError, TypeError, IndexError, KeyError, OverflowError) as error:
        del error
        return None
