"""darshan-util's own derived metrics of a log, per module (``darshan-parser --perf``).

What pydarshan's ``accumulate_records`` and ``darshan-parser --perf`` print, computed
over EVERY record of a module (standard streams, /proc and every other file mosaic's
filters leave out included), from the counters the reader already holds:

* ``total_bytes``: bytes read + written, summed over records;
* ``unique_slowest_rank_io_time``: over the per-rank records (rank >= 0), each rank's
  META + READ + WRITE time summed, then the largest of those sums (0 when no rank has one);
* ``shared_time_by_slowest``: F_SLOWEST_RANK_TIME summed over the shared (rank -1)
  records (the runtime's reduction sets it to the slowest rank's time in that file);
* ``agg_time_by_slowest``: the two added;
* ``agg_perf_by_slowest``: total_bytes / 2^20 / agg_time_by_slowest, MiB/s. darshan-util
  prints 0 when the time is 0; here it is None (not known) when there are bytes and no
  time, and None when there are no bytes either (SPEC 3.9: a missing value is never 0).

Modules: POSIX, MPI-IO, STDIO (the three darshan-util accumulates and mosaic reads).
Pure numpy, one pass of a few vectorized calls per module; no per-record loop.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from mosaic.darshan import formats as F
from mosaic.darshan.formats import DarshanLog, ModuleRecords

MIB = 1048576.0
MAX_SECONDS = 1e12  # a time counter above this (31,700 years), or an infinity, is damage
DERIVED_MODULES = (F.POSIX, F.MPIIO, F.STDIO)


class DerivedMetrics(TypedDict):
    """One module's derived metrics, as darshan-util computes them."""

    records: int
    total_bytes: float
    unique_slowest_rank_io_time: float  # seconds
    slowest_rank: int | None  # the rank of that time (None: no per-rank record has time)
    shared_time_by_slowest: float  # seconds
    agg_time_by_slowest: float  # seconds
    agg_perf_by_slowest: float | None  # MiB/s; None: no time (or no bytes)


def record_times(records: ModuleRecords) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """READ, WRITE, META and SLOWEST_RANK times of every record (float64 columns; a time
    that is not a finite number >= 0, which no runtime writes, reads as 0: see
    :func:`sane_times`)."""
    at = F.PERF_INDEX[(records.module, records.version)]
    times = sane_times(
        records.fcounters[:, [at.read_time, at.write_time, at.meta_time, at.slowest_rank_time]]
    )
    return times[:, 0], times[:, 1], times[:, 2], times[:, 3]


def sane_times(times: np.ndarray) -> np.ndarray:
    """``times`` with every value that is not a number in [0, MAX_SECONDS) set to 0 (in place when
    it is a copy already): a damaged log's NaN or infinity would make the result object
    no JSON (the service evicts such a result) and a negative duration means nothing."""
    bad = ~((times >= 0) & (times < MAX_SECONDS))  # NaN fails both
    if bad.any():
        times = np.where(bad, 0.0, times)
    return times


def record_bytes(records: ModuleRecords) -> tuple[np.ndarray, np.ndarray]:
    """Bytes read and written of every record (int64 columns)."""
    counts = records.canonical()
    return counts["bytes_read"], counts["bytes_written"]


def module_metrics(records: ModuleRecords, nprocs: int) -> DerivedMetrics:
    """darshan-util's derived metrics of one module's records (see the module docstring).

    ``nprocs``: the job's ranks (darshan-util sizes its per-rank sums by it and asserts
    on a rank past it); here a record of such a rank still counts, under its rank.
    """
    del nprocs  # the sums are by rank seen
    read, write, meta, slowest = record_times(records)
    bytes_read, bytes_written = record_bytes(records)
    return metrics_of(records.ranks, bytes_read, bytes_written, read, write, meta, slowest)


DENSE_RANKS = 1 << 16  # below it a rank indexes the per-rank sums; past it, by distinct rank


def metrics_of(
    ranks: np.ndarray,
    bytes_read: np.ndarray,
    bytes_written: np.ndarray,
    read: np.ndarray,
    write: np.ndarray,
    meta: np.ndarray,
    slowest: np.ndarray,
) -> DerivedMetrics:
    """:func:`module_metrics` of a module's records given as columns."""
    total = float(int(bytes_read.sum()) + int(bytes_written.sum()))
    shared = ranks < 0
    per_rank = ~shared
    shared_time = float(slowest[shared].sum()) if shared.any() else 0.0
    unique, slowest_rank = 0.0, None
    if per_rank.any():
        # darshan-util adds META + READ + WRITE per record, then the records per rank; the
        # lowest rank wins a tie (its strict comparison keeps the first)
        io = meta[per_rank] + read[per_rank] + write[per_rank]
        own = ranks[per_rank]
        top = int(own.max())
        if top < DENSE_RANKS:
            sums = np.bincount(own, io, top + 1)
            best = int(np.argmax(sums))
            rank = best
        else:  # a damaged rank number sizes no array
            seen, at = np.unique(own, return_inverse=True)
            sums = np.bincount(at.ravel(), io, len(seen))
            best = int(np.argmax(sums))
            rank = int(seen[best])
        if sums[best] > 0:  # darshan-util keeps a rank only strictly above 0
            unique, slowest_rank = float(sums[best]), rank
    return metrics(len(ranks), total, unique, slowest_rank, shared_time)


def metrics(
    records: int, total_bytes: float, unique: float, slowest_rank: int | None, shared_time: float
) -> DerivedMetrics:
    """The derived metrics from their parts (what darshan-util's accumulator emits)."""
    agg = unique + shared_time
    return {
        "records": records,
        "total_bytes": total_bytes,
        "unique_slowest_rank_io_time": unique,
        "slowest_rank": slowest_rank,
        "shared_time_by_slowest": shared_time,
        "agg_time_by_slowest": agg,
        "agg_perf_by_slowest": total_bytes / MIB / agg if agg > 0 and total_bytes > 0 else None,
    }


def log_metrics(log: DarshanLog) -> dict[str, DerivedMetrics]:
    """darshan-util's derived metrics of each of POSIX, MPI-IO and STDIO the log holds,
    by darshan-util's module name ("POSIX", "MPI-IO", "STDIO")."""
    return {
        F.MODULE_NAMES[module]: module_metrics(log.modules[module], log.job.nprocs)
        for module in DERIVED_MODULES
        if module in log.modules and (module, log.modules[module].version) in F.PERF_INDEX
    }
