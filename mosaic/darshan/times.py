"""Where Darshan's time counters sit, and the time a record's ranks spent.

The writer places these fields; the synthetic corpora fill them. Field
names are darshan-util's without the module prefix (``F_READ_TIME`` is
``read_time``). The per-record rule is the runtime's:

- a per-rank record's ``read_time`` / ``write_time`` / ``meta_time`` are that
  rank's seconds in read, write and metadata calls;
- a shared record (rank -1, reduced at shutdown) holds the sums over its
  ranks, and ``slowest_rank_time`` the largest per-rank total
  (read + write + meta), ``fastest_rank_time`` the smallest, with the ranks
  and their bytes in the ``*_rank`` / ``*_rank_bytes`` counters.

darshan-util's ``agg_time_by_slowest`` of a module (``darshan-parser
--perf``, pydarshan's ``accumulate_records``) is then the largest per-rank
sum over per-rank records plus the sum of ``slowest_rank_time`` over shared
records: :func:`agg_time_by_slowest` computes it the same way.
"""

from __future__ import annotations

import numpy as np

from mosaic.darshan import formats as F

TIME_FIELDS = (
    "read_time",
    "write_time",
    "meta_time",
    "max_read_time",
    "max_write_time",
    "fastest_rank_time",
    "slowest_rank_time",
    "variance_rank_time",
    "variance_rank_bytes",
)
RANK_FIELDS = ("fastest_rank", "fastest_rank_bytes", "slowest_rank", "slowest_rank_bytes")

_F17 = dict(zip(TIME_FIELDS, range(8, 17)))  # POSIX v2-v4, MPI-IO v3
_F15 = dict(zip(TIME_FIELDS, range(6, 15)))  # POSIX v1, MPI-IO v1-v2
_STDIO_F = dict(
    meta_time=0,
    write_time=1,
    read_time=2,
    fastest_rank_time=11,
    slowest_rank_time=12,
    variance_rank_time=13,
    variance_rank_bytes=14,
)  # STDIO keeps no max read / write time


def _last4(n_counters: int) -> dict[str, int]:
    return dict(zip(RANK_FIELDS, range(n_counters - 4, n_counters)))


# (module, version) -> (rank counter -> index, time fcounter -> index)
TIME_INDEX: dict[tuple[int, int], tuple[dict[str, int], dict[str, int]]] = {
    (F.POSIX, 1): (_last4(68), _F15),
    (F.POSIX, 2): (_last4(64), _F17),
    (F.POSIX, 3): (_last4(64), _F17),
    (F.POSIX, 4): (_last4(69), _F17),
    (F.MPIIO, 1): (_last4(51), _F15),
    (F.MPIIO, 2): (_last4(51), _F15),
    (F.MPIIO, 3): (_last4(51), _F17),
    (F.STDIO, 1): (_last4(13), _STDIO_F),
    (F.STDIO, 2): (_last4(14), _STDIO_F),
}

# Darshan 2.x (one POSIX+MPI record, 144 counters, 18 fcounters): CP_F_POSIX_READ_TIME 6,
# _WRITE_TIME 7, _META_TIME 8 (then the MPI-IO times 9-11, left 0), CP_F_MAX_READ_TIME 12,
# _MAX_WRITE_TIME 13, _FASTEST_RANK_TIME 14, _SLOWEST_RANK_TIME 15, _VARIANCE_RANK_TIME 16,
# _VARIANCE_RANK_BYTES 17; CP_FASTEST_RANK 140, _BYTES 141, CP_SLOWEST_RANK 142, _BYTES 143.
LEGACY_TIME_INDEX: tuple[dict[str, int], dict[str, int]] = (
    _last4(F.LEGACY_COUNTERS),
    dict(
        read_time=6,
        write_time=7,
        meta_time=8,
        max_read_time=12,
        max_write_time=13,
        fastest_rank_time=14,
        slowest_rank_time=15,
        variance_rank_time=16,
        variance_rank_bytes=17,
    ),
)


def agg_time_by_slowest(
    ranks: np.ndarray, read: np.ndarray, write: np.ndarray, meta: np.ndarray, slowest: np.ndarray
) -> float:
    """darshan-util's ``agg_time_by_slowest`` of one module's records (see the module doc)."""
    ranks = np.asarray(ranks, np.int64)
    own = ranks >= 0
    per_rank = np.asarray(read, float) + np.asarray(write, float) + np.asarray(meta, float)
    unique = 0.0
    if own.any():
        unique = float(np.bincount(ranks[own], per_rank[own]).max())
    return unique + float(np.asarray(slowest, float)[~own].sum())


def module_perf(mod: F.ModuleRecords) -> dict[str, float | None]:
    """darshan-util's derived totals of one module's records: ``total_bytes``,
    ``agg_time_by_slowest`` (s) and ``agg_perf_by_slowest`` (MiB/s; None at time 0)."""
    cidx = F.CANONICAL_INDEX[(mod.module, mod.version)][0]
    total = 0.0
    for name in ("bytes_read", "bytes_written"):
        at = cidx[name]
        total += float(mod.counters[:, at if isinstance(at, int) else at[0]].sum())
    fidx = TIME_INDEX[(mod.module, mod.version)][1]
    columns = [
        mod.fcounters[:, fidx[name]] for name in ("read_time", "write_time", "meta_time", "slowest_rank_time")
    ]
    time = agg_time_by_slowest(mod.ranks, *columns)
    return {
        "total_bytes": total,
        "agg_time_by_slowest": time,
        "agg_perf_by_slowest": total / 1048576 / time if time > 0 else None,
    }
