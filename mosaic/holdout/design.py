"""Designed records, the scenario design, and the constants every module shares."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from mosaic.config import Config
from mosaic.darshan import formats as F

MB = 1e6
HOUR, DAY = 3600.0, 86400.0
EPOCH = 1_700_000_000  # job start of every log (whole seconds: every format can hold it)
MOUNTS = [("/scratch", "lustre"), ("/home", "nfs"), ("/", "rootfs")]
TIMESTAMP_EPSILON = 1e-3  # an open precedes, a close follows its traffic by this much
MAGNITUDES = ("periodic_second", "periodic_minute", "periodic_hour", "periodic_day_or_more")
Span = tuple[ArrayLike, ArrayLike, ArrayLike]  # (start, end, bytes) of traffic, scalars or per path
Window = tuple[ArrayLike, ArrayLike]  # (start, end) of the opens or of the closes
ZLIB_LEVEL = 1  # the reader cannot tell; level 6 spends most of the generation time


RECORD_FIELDS = (
    "rank",
    "bytes_read",
    "bytes_written",
    "read_start",
    "read_end",
    "write_start",
    "write_end",
    "opens",
    "seeks",
    "open_start",
    "open_end",
    "close_start",
    "close_end",
    "stdio",
    "lost",
)


def moving(direction: str, span: Span) -> dict[str, Any]:
    """:meth:`Records.add`'s keyword for traffic in ``direction`` ("read" or "write")."""
    return {direction: span}


class Records:
    """Darshan file records being designed: one row per (file, rank), as columns."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.columns: dict[str, list[np.ndarray]] = {name: [] for name in RECORD_FIELDS}
        self.dxt: list[dict[str, Any]] = []  # per-request segments, one dict of arrays per call

    def add(
        self,
        paths: str | Iterable[str],
        rank: ArrayLike = 0,
        read: Span | None = None,
        write: Span | None = None,
        opens: ArrayLike = 1,
        seeks: ArrayLike = 0,
        open_window: Window | None = None,
        close_window: Window | None = None,
        stdio: ArrayLike = False,
        lost: ArrayLike = False,
    ) -> None:
        """Rows for ``paths`` (str or list); ``read`` / ``write`` are (start, end, bytes).

        Scalars broadcast. The open window defaults to just before the first
        traffic, the close window to just after the last. ``lost``: a POSIX
        record the partial POSIX module dropped, written only as MPI-IO.
        """
        names = [paths] if isinstance(paths, str) else list(paths)
        n = len(names)
        none = (0.0, 0.0, 0.0)
        rs, re, rb = (np.broadcast_to(np.asarray(v, float), n) for v in (read or none))
        ws, we, wb = (np.broadcast_to(np.asarray(v, float), n) for v in (write or none))
        first = np.where(rb > 0, rs, np.inf)
        first = np.minimum(first, np.where(wb > 0, ws, np.inf))
        last = np.maximum(np.where(rb > 0, re, -np.inf), np.where(wb > 0, we, -np.inf))
        if open_window is None:
            open_window = (np.maximum(first - TIMESTAMP_EPSILON, 0.0), first)
        if close_window is None:
            close_window = (last, last + TIMESTAMP_EPSILON)
        values = dict(
            rank=rank,
            bytes_read=rb,
            bytes_written=wb,
            read_start=rs,
            read_end=re,
            write_start=ws,
            write_end=we,
            opens=opens,
            seeks=seeks,
            open_start=open_window[0],
            open_end=open_window[1],
            close_start=close_window[0],
            close_end=close_window[1],
            stdio=stdio,
            lost=lost,
        )
        for name, value in values.items():
            self.columns[name].append(np.broadcast_to(np.asarray(value, float), n).copy())
        self.paths += names

    def add_dxt(
        self, path: str, rank: int, is_write: bool, starts: ArrayLike, ends: ArrayLike, lengths: ArrayLike
    ) -> None:
        """DXT_POSIX requests of one (file, rank) plus the POSIX record they aggregate."""
        begin, finish, sizes = (np.asarray(v, float) for v in (starts, ends, lengths))
        self.dxt.append(
            dict(path=path, rank=rank, is_write=is_write, starts=begin, ends=finish, lengths=sizes)
        )
        span = (begin.min(), finish.max(), sizes.sum())
        self.add(path, rank, write=span if is_write else None, read=None if is_write else span, opens=1)

    def table(self) -> dict[str, np.ndarray]:
        out = {name: np.concatenate(parts) if parts else np.zeros(0) for name, parts in self.columns.items()}
        out["path"] = np.array(self.paths, dtype=object)
        return out


@dataclass
class Series:
    """One designed periodic operation: its period, busy fraction, total bytes and occurrences."""

    period: float
    busy: float | None  # None: not asserted (several series cut each other's segments)
    total_bytes: float
    count: int


@dataclass(frozen=True)
class Periodicity:
    """What the design says about one direction's periodicity."""

    claim: bool | None  # periodic / not periodic / too close to call
    series: list[Series] = field(default_factory=list)


NOT_PERIODIC = Periodicity(False)
UNKNOWN = Periodicity(None)


@dataclass
class Design:
    """One log's records and what its design claims; ``params`` go to the truth line as they are."""

    run_time: float
    nprocs: int
    records: Records
    params: dict[str, Any]
    read: Periodicity = NOT_PERIODIC
    write: Periodicity = NOT_PERIODIC
    posix_only: bool = True  # representable as a Darshan 2.x log
    heatmap: F.HeatmapRecords | None = None  # HEATMAP module (formats 3.21 / 3.41 only)


def claimed(config: Config, *series: Series, other_ops: int = 0) -> Periodicity:
    """The claim for a direction whose ``series`` run one after another (:func:`periodic_claim`)."""
    return Periodicity(periodic_claim([s.count for s in series], other_ops, config), list(series))


def periodic_claim(series_counts: list[int], other_ops: int, config: Config) -> bool | None:
    """SPEC 3.4's 75 % rule, applied with margin to the designed segment counts.

    Series are laid out one after the other; each series but the last loses
    its last segment to the gap before the next, and each other (non-minor)
    operation adds an irregular segment and may cut one regular segment.
    """
    if not series_counts:
        return False if other_ops < config.min_periodic_segments else None
    if min(series_counts) < config.truth_min_occurrences:
        return None
    regular = sum(series_counts) - (len(series_counts) - 1) - other_ops
    total = sum(series_counts) + other_ops
    return True if regular >= config.truth_periodic_share * total else None
