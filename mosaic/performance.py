"""Each job's I/O performance (SPEC 3.9): darshan-util's figures and mosaic's own.

Two figures sit side by side in every result object, key ``"performance"``:

* ``darshan_util``: darshan-util's derived metrics per module over every record
  (:mod:`mosaic.darshan.derived`), as ``darshan-parser --perf`` prints them;
* ``job``: mosaic's own figure of the job, from the records SPEC 2 / 3.1 keep (the
  name filter, the record checks, the MPI-IO stand-ins of a partial POSIX module):
  POSIX + STDIO, per direction; ``modules`` gives the same per module, MPI-IO beside
  (POSIX carries MPI-IO's bytes, so MPI-IO never adds to the job's).

The rules (time per direction, I/O mode, request sizes, metadata rate, ranks doing I/O,
partial logs, "not known") are written in docs/method.md section 3.9.
Computed once per log from the reader's counters, vectorized (no per-record loop).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from mosaic.darshan import derived
from mosaic.darshan import formats as F

if TYPE_CHECKING:
    from mosaic.darshan.formats import DarshanLog

MODES = ("N:N", "N:1", "N:M", "1:1")
# Size-histogram buckets whose upper bound is at most 1 KiB (0-100, 100-1K) and 1 MiB (up
# to 100K-1M): darshan-runtime's bounds are inclusive (1,024 bytes is in 100-1K).
UP_TO_1KIB, UP_TO_1MIB = 2, 5


def io_time(perf: dict[str, Any] | None) -> float | None:
    """The job's I/O time in seconds (mosaic's figure, both directions and metadata, the
    slowest rank's path); None when not known or when ``perf`` is None."""
    if not perf:
        return None
    value = perf.get("job", {}).get("total", {}).get("time")
    return None if value is None else float(value)


def direction(nbytes: float, time: float, run_time: float) -> dict[str, float | None]:
    """One direction's figure: a time of 0 with bytes is "not known" (None), never 0."""
    known = not (nbytes > 0 and time <= 0)
    return {
        "bytes": float(nbytes),
        "time": float(time) if known else None,
        "bandwidth": float(nbytes / time) if known and time > 0 and nbytes > 0 else None,
        "time_share": float(time / run_time) if known and run_time > 0 else None,
    }


class RecordColumns(NamedTuple):
    """The per-record columns mosaic's figure reads, one row a record (rank -1: shared)."""

    ranks: np.ndarray
    bytes_read: np.ndarray
    bytes_written: np.ndarray
    read_time: np.ndarray
    write_time: np.ndarray
    meta_time: np.ndarray
    slowest: np.ndarray


def figure(
    ranks: np.ndarray,
    bytes_read: np.ndarray,
    bytes_written: np.ndarray,
    read_time: np.ndarray,
    write_time: np.ndarray,
    meta_time: np.ndarray,
    slowest: np.ndarray,
    run_time: float,
) -> dict[str, dict[str, float | None]]:
    """read / write / total of a set of records (SPEC 3.9 "Time per direction").

    total: darshan-util's rule (the slowest rank's META + READ + WRITE over its own
    records, plus each shared record's F_SLOWEST_RANK_TIME). read (write): the slowest
    rank's READ (WRITE) time over its own records, plus each shared record's slowest
    time times its READ (WRITE) share of READ + WRITE + META (by bytes when the shared
    record has no time of its own).
    """
    groups = np.zeros(len(ranks), np.intp)
    columns = RecordColumns(ranks, bytes_read, bytes_written, read_time, write_time, meta_time, slowest)
    (found,), _ = figures(groups, 1, columns, run_time=run_time)
    return found


DENSE_RANKS = 1 << 16  # ranks below this index per-rank sums directly; past it, by distinct rank


def dense_ranks(ranks: np.ndarray) -> tuple[np.ndarray, int, np.ndarray | None]:
    """Per-rank rows' ranks as indexes 0..n-1, n, and the rank of each index (None: the
    index is the rank). A damaged rank number past DENSE_RANKS sizes no array."""
    if not len(ranks):
        return ranks, 0, None
    top = int(ranks.max())
    if top < DENSE_RANKS:
        return ranks, top + 1, None
    seen, at = np.unique(ranks, return_inverse=True)
    return at.ravel(), len(seen), seen


def figures(
    groups: np.ndarray,
    n_groups: int,
    columns: RecordColumns,
    run_time: float,
    union_groups: int | None = None,
    raw: dict[str, Any] | None = None,
) -> tuple[list[dict[str, dict[str, float | None]]], dict[str, dict[str, float | None]]]:
    """:func:`figure` of each group of rows (``groups``: 0..n_groups-1 per row) and of the
    rows of groups below ``union_groups`` (default: all) together (a rank's records of
    those groups add up), in a few numpy calls. ``raw``, when given, receives per group
    darshan-util's parts: ``unique`` (the slowest rank's time), ``slowest_rank``,
    ``shared``, ``bytes`` (read + written) and ``records``; the figures are then those of
    the groups below ``union_groups`` only."""
    ranks, bytes_read, bytes_written, read_time, write_time, meta_time, slowest = columns
    joined = n_groups if union_groups is None else union_groups
    per = ranks >= 0
    totals = np.zeros((3, n_groups))  # total, read, write time per group
    union = np.zeros(3)
    shared_time = np.zeros(n_groups)
    best = np.full(n_groups, -1)
    rank_of: np.ndarray | None = None
    if per.any():
        at, width, rank_of = dense_ranks(ranks[per])
        key = groups[per] * width + at
        size = n_groups * width
        rt, wt = read_time[per], write_time[per]
        # the three sums in one bincount over three key ranges: each bin adds the same rows
        # in the same order as three bincounts would (the same bits)
        by_rank = np.bincount(
            np.concatenate((key, key + size, key + 2 * size)),
            np.concatenate((meta_time[per] + rt + wt, rt, wt)),
            3 * size,
        ).reshape(3, n_groups, width)
        totals = by_rank.max(axis=2)
        union = by_rank[:, :joined].sum(axis=1).max(axis=1)
        best = by_rank[0].argmax(axis=1)  # the first of equal sums: the lowest rank
    unique = totals[0].copy()  # the slowest rank's time, before the shared records' time
    shared = ~per
    if shared.any():
        st, rt, wt, mt = slowest[shared], read_time[shared], write_time[shared], meta_time[shared]
        br, bw = bytes_read[shared].astype(np.float64), bytes_written[shared].astype(np.float64)
        spent, moved = rt + wt + mt, br + bw
        timed = spent > 0
        spent[~timed] = 1.0  # no division by 0: those rows split by bytes (or not at all)
        moved[moved <= 0] = 1.0
        read_share = np.where(timed, rt / spent, br / moved)
        write_share = np.where(timed, wt / spent, bw / moved)
        g = groups[shared]
        added = np.bincount(
            np.concatenate((g, g + n_groups, g + 2 * n_groups)),
            np.concatenate((st, st * read_share, st * write_share)),
            3 * n_groups,
        ).reshape(3, n_groups)
        totals = totals + added
        union = union + added[:, :joined].sum(axis=1)
        shared_time = added[0]
    moved_bytes = np.bincount(
        np.concatenate((groups, groups + n_groups)),
        np.concatenate((bytes_read, bytes_written)).astype(np.float64),
        2 * n_groups,
    ).reshape(2, n_groups)

    def made(times: Sequence[float], nbytes: Sequence[float]) -> dict[str, dict[str, float | None]]:
        read, write = nbytes[0], nbytes[1]
        return {
            "read": direction(read, times[1], run_time),
            "write": direction(write, times[2], run_time),
            "total": direction(read + write, times[0], run_time),
        }

    if raw is not None:
        raw.update(
            unique=unique,
            slowest_rank=[
                None if unique[g] <= 0 else int(best[g] if rank_of is None else rank_of[best[g]])
                for g in range(n_groups)
            ],
            shared=shared_time,
            bytes=moved_bytes.sum(axis=0),
            records=np.bincount(groups, minlength=n_groups),
        )
    # the figures of the groups in the union (the others are darshan-util's, read from ``raw``)
    shown = n_groups if raw is None else joined
    times, nbytes = totals.T.tolist(), moved_bytes.T.tolist()  # Python floats: the same values
    per_group = [made(times[i], nbytes[i]) for i in range(shown)]
    return per_group, made(union.tolist(), moved_bytes[:, :joined].sum(axis=1).tolist())


def sizes(histogram: np.ndarray) -> dict[str, Any] | None:
    """Request sizes of one direction from a summed SIZE_* histogram (10 buckets):
    None when it counts no request."""
    total = int(histogram.sum())
    if total <= 0:
        return None
    cumulative = np.cumsum(histogram)
    median = int(np.searchsorted(cumulative, total / 2.0))  # first bucket reaching half
    return {
        "requests": total,
        "share_up_to_1KiB": float(cumulative[UP_TO_1KIB - 1] / total),
        "share_up_to_1MiB": float(cumulative[UP_TO_1MIB - 1] / total),
        "median_bucket": F.SIZE_BUCKET_NAMES[median],
        "buckets": {name: int(count) for name, count in zip(F.SIZE_BUCKET_NAMES, histogram.tolist())},
    }


def io_mode(
    ids: np.ndarray,
    ranks: np.ndarray,
    nbytes: np.ndarray,
    nprocs: int,
    ranks_doing_io: int | None,
    all_ranks_files: np.ndarray,
) -> tuple[str | None, dict[str, float]]:
    """SPEC 3.9 I/O mode and the bytes behind each file kind.

    A file is shared by all ranks when it has a rank -1 record, records of every rank,
    or is in ``all_ranks_files`` (an MPI-IO shared record: collective buffering writes
    through a few aggregators, the application's view is all ranks on one file); unique
    when one rank alone has records of it; else shared by a subset. The kind with the
    most bytes decides (ties: N:1, then N:M, then N:N); a one-rank job, or one rank
    doing I/O, is 1:1; no bytes: None.
    """
    moved = nbytes > 0
    kinds = {"unique": 0.0, "all": 0.0, "subset": 0.0}
    if not moved.any():
        return None, kinds
    ids, ranks, nbytes = ids[moved], ranks[moved], nbytes[moved].astype(np.float64)
    if nprocs <= 1:  # one rank: 1:1; a rank -1 record's files count as all ranks' (its one)
        shared = ranks < 0
        kinds = {"unique": float(nbytes[~shared].sum()), "all": float(nbytes[shared].sum()), "subset": 0.0}
        return "1:1", kinds
    order = np.lexsort((ranks, ids))  # by file, then rank
    ids, ranks, nbytes = ids[order], ranks[order], nbytes[order]
    new_file = np.ones(len(ids), bool)
    new_file[1:] = ids[1:] != ids[:-1]
    new_pair = new_file.copy()
    new_pair[1:] |= ranks[1:] != ranks[:-1]
    at = new_file.cumsum(dtype=np.int64) - 1  # (np.cumsum of a bool array: the same ints, slower)
    files = int(at[-1]) + 1
    file_bytes = np.bincount(at, nbytes, files)
    has_shared = np.bincount(at, ranks < 0, files) > 0
    rank_count = np.bincount(at, new_pair & (ranks >= 0), files)
    every = has_shared | (rank_count >= max(nprocs, 2))
    if len(all_ranks_files):
        every |= np.isin(ids[new_file], all_ranks_files)
    unique = ~every & (rank_count == 1)
    subset = ~every & ~unique
    kinds = {
        "unique": float(file_bytes[unique].sum()),
        "all": float(file_bytes[every].sum()),
        "subset": float(file_bytes[subset].sum()),
    }
    if nprocs <= 1 or ranks_doing_io == 1:
        return "1:1", kinds
    best = max(("all", "subset", "unique"), key=lambda kind: kinds[kind])  # first wins a tie
    return {"all": "N:1", "subset": "N:M", "unique": "N:N"}[best], kinds


def ranks_doing_io(log: DarshanLog, ranks: np.ndarray, moved: np.ndarray) -> tuple[int | None, str | None]:
    """How many ranks moved bytes, and from what: per-rank records alone when no shared
    record moved bytes; else the HEATMAP's POSIX / STDIO records (one per rank) or the
    DXT_POSIX segments, with the per-rank records; else not known (None)."""
    if log.job.nprocs == 1:
        return (1 if moved.any() else 0), "records"
    at, width, seen = dense_ranks(ranks[moved & (ranks >= 0)])
    if not (moved & (ranks < 0)).any():
        return (int(np.count_nonzero(np.bincount(at, minlength=width))) if seen is None else width), "records"
    heatmaps = log.heatmaps
    dxt = log.dxt_posix
    if (heatmaps is None or not len(heatmaps.ranks)) and (dxt is None or not len(dxt.ranks)):
        return None, None  # most such logs: no per-rank source (and no np.unique to make)
    own = np.unique(ranks[moved & (ranks >= 0)])
    if heatmaps is not None and len(heatmaps.ranks):
        apis = np.isin(heatmaps.apis, ("heatmap:POSIX", "heatmap:STDIO"))
        rows = heatmaps.record_of_bin()
        busy = np.zeros(len(heatmaps.ranks), bool)
        bins = heatmaps.write_bins + heatmaps.read_bins
        np.logical_or.at(busy, rows[bins > 0], True)
        seen = np.unique(heatmaps.ranks[busy & apis & (heatmaps.ranks >= 0)])
        return int(len(np.union1d(own, seen))), "heatmap"
    if dxt is not None and len(dxt.ranks):
        seen = np.unique(dxt.ranks[(dxt.lengths > 0) & (dxt.ranks >= 0)])
        return int(len(np.union1d(own, seen))), "dxt"
    return None, None


def compute(log: DarshanLog, clean: Any, metadata_seeks: bool) -> dict[str, Any]:
    """The ``performance`` object of a log (SPEC 3.9) from its cleaned records
    (``trace._CleanRecords``: the rows of POSIX, STDIO and MPI-IO stand-ins, kept or not)."""
    job = log.job
    run_time = float(job.run_time)
    read_t, write_t, meta_t, slowest = _perf_columns(clean.row_modules)
    kept = clean.kept
    fields = clean.fields
    br, bw = fields["bytes_read"], fields["bytes_written"]
    ranks, ids = clean.ranks, clean.ids
    stdio = slice(clean.posix_rows, clean.stand_in_rows.start)
    groups = np.zeros(len(ids), np.intp)  # 0: the POSIX layer (POSIX records, stand-ins), 1: STDIO
    groups[stdio] = 1
    rows = kept.nonzero()[0]
    # darshan-util's figures in the same pass: groups 2 and 3 are every POSIX and STDIO record
    # (its own rows, unchanged by the stand-ins), kept or not
    own = np.arange(clean.stand_in_rows.start)
    every = np.concatenate([rows, own])
    groups = np.concatenate([groups[rows], groups[own] + 2])
    raw: dict[str, Any] = {}
    (posix_figure, stdio_figure), job_figure = figures(
        groups,
        4,
        RecordColumns(*(column[every] for column in (ranks, br, bw, read_t, write_t, meta_t, slowest))),
        run_time=run_time,
        union_groups=2,
        raw=raw,
    )
    moved = kept & ((br > 0) | (bw > 0))
    count, source = ranks_doing_io(log, ranks, moved)
    mode, kinds = io_mode(ids[rows], ranks[rows], (br + bw)[rows], job.nprocs, count, _mpiio_all_ranks(log))
    requests = int(fields["opens"][rows].sum()) + (int(fields["seeks"][rows].sum()) if metadata_seeks else 0)
    total_time = job_figure["total"]["time"]
    summed = _posix_sizes(log, kept[: clean.posix_rows])
    result: dict[str, Any] = dict(job_figure)
    result.update(
        {
            "lower_bound": bool(job.partial),
            "mode": mode,
            "mode_bytes": kinds,
            "metadata_requests": requests,
            "metadata_per_second": float(requests / total_time) if total_time else None,
            "ranks_doing_io": count,
            "ranks_source": source,
            "nprocs": int(job.nprocs),
            "run_time": run_time,
            "sizes": {"read": sizes(summed[: F.SIZE_BUCKETS]), "write": sizes(summed[F.SIZE_BUCKETS :])},
        }
    )
    modules: dict[str, Any] = {}
    if F.POSIX in log.modules or clean.stand_ins:
        modules["POSIX"] = posix_figure
    if F.STDIO in log.modules:
        modules["STDIO"] = stdio_figure
    mpiio = log.modules.get(F.MPIIO)
    if mpiio is not None and (F.MPIIO, mpiio.version) in F.PERF_INDEX:
        keep = clean.kept_files(mpiio.ids) if clean.kept_files is not None else np.ones(len(mpiio.ids), bool)
        r, w, m, s = derived.record_times(mpiio)
        mr, mw = derived.record_bytes(mpiio)
        modules["MPI-IO"] = figure(
            mpiio.ranks[keep], mr[keep], mw[keep], r[keep], w[keep], m[keep], s[keep], run_time
        )
        modules["MPI-IO"]["sizes"] = {
            "read": sizes(_histogram(mpiio, "read")[keep].sum(axis=0)),
            "write": sizes(_histogram(mpiio, "write")[keep].sum(axis=0)),
        }
    util: dict[str, Any] = {}
    for group, module in ((2, F.POSIX), (3, F.STDIO)):
        if module in log.modules:
            util[F.MODULE_NAMES[module]] = derived.metrics(
                int(raw["records"][group]),
                float(raw["bytes"][group]),
                float(raw["unique"][group]),
                raw["slowest_rank"][group],
                float(raw["shared"][group]),
            )
    if mpiio is not None and (F.MPIIO, mpiio.version) in F.PERF_INDEX:
        util["MPI-IO"] = derived.module_metrics(mpiio, job.nprocs)
    left_out = (~kept).nonzero()[0]
    return {
        "job": result,
        "modules": modules,
        "darshan_util": util,
        "left_out": {
            "records": len(left_out),
            "bytes": float(br[left_out].sum() + bw[left_out].sum()),
            "stand_ins": int(clean.stand_ins),
        },
    }


def _perf_columns(mods: list[tuple[F.ModuleRecords, bool]]) -> tuple[np.ndarray, ...]:
    """Per row: READ, WRITE, META and SLOWEST_RANK times (one gather a module)."""
    parts = [
        records.fcounters[:, _time_index(records.module, records.version)]
        if (records.module, records.version) in F.PERF_INDEX
        else np.zeros((len(records.ids), 4))
        for records, _ in mods
    ]
    # one check over all rows (elementwise: as each module's alone)
    times = derived.sane_times(
        parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros((0, 4))
    )
    return times[:, 0], times[:, 1], times[:, 2], times[:, 3]


@cache
def _time_index(module: int, version: int) -> list[int]:
    at = F.PERF_INDEX[(module, version)]
    return [at.read_time, at.write_time, at.meta_time, at.slowest_rank_time]


@cache
def _size_index(module: int, version: int) -> list[int] | None:
    at = F.PERF_INDEX.get((module, version))
    if at is None or at.size_read is None or at.size_write is None:
        return None
    return list(range(at.size_read, at.size_read + F.SIZE_BUCKETS)) + list(
        range(at.size_write, at.size_write + F.SIZE_BUCKETS)
    )


def _posix_sizes(log: DarshanLog, kept: np.ndarray) -> np.ndarray:
    """The SIZE_READ_* then SIZE_WRITE_* counters summed over the kept POSIX records (20)."""
    posix = log.modules.get(F.POSIX)
    index = None if posix is None else _size_index(posix.module, posix.version)
    if posix is None or index is None or not kept.any():
        return np.zeros(2 * F.SIZE_BUCKETS, np.int64)
    summed: np.ndarray = np.maximum(posix.counters[kept][:, index], 0).sum(axis=0)
    return summed


def _histogram(records: F.ModuleRecords, name: str) -> np.ndarray:
    at = F.PERF_INDEX[(records.module, records.version)]
    first = at.size_read if name == "read" else at.size_write
    if first is None:
        return np.zeros((len(records.ids), F.SIZE_BUCKETS), np.int64)
    histogram: np.ndarray = np.maximum(records.counters[:, first : first + F.SIZE_BUCKETS], 0)
    return histogram


def _mpiio_all_ranks(log: DarshanLog) -> np.ndarray:
    """Files of a shared (rank -1) MPI-IO record: every rank opened them collectively."""
    mpiio = log.modules.get(F.MPIIO)
    if mpiio is None:
        return np.zeros(0, np.uint64)
    return np.unique(mpiio.ids[mpiio.ranks < 0])
