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

from typing import TYPE_CHECKING, Any

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
    per = ranks >= 0
    shared = ~per
    br, bw = bytes_read.astype(np.float64), bytes_written.astype(np.float64)
    times = {}
    if per.any():
        r = np.unique(ranks[per], return_inverse=True)[1].ravel()  # dense: a damaged rank sizes nothing
        times["total"] = _max(np.bincount(r, meta_time[per] + read_time[per] + write_time[per]))
        times["read"] = _max(np.bincount(r, read_time[per]))
        times["write"] = _max(np.bincount(r, write_time[per]))
    else:
        times = {"total": 0.0, "read": 0.0, "write": 0.0}
    if shared.any():
        st, rt, wt, mt = slowest[shared], read_time[shared], write_time[shared], meta_time[shared]
        spent = rt + wt + mt
        moved = br[shared] + bw[shared]
        with np.errstate(invalid="ignore", divide="ignore"):
            read_share = np.where(spent > 0, rt / spent, np.where(moved > 0, br[shared] / moved, 0.0))
            write_share = np.where(spent > 0, wt / spent, np.where(moved > 0, bw[shared] / moved, 0.0))
        times["total"] += float(st.sum())
        times["read"] += float((st * read_share).sum())
        times["write"] += float((st * write_share).sum())
    nbytes = {"read": float(br.sum()), "write": float(bw.sum())}
    nbytes["total"] = nbytes["read"] + nbytes["write"]
    return {name: direction(nbytes[name], times[name], run_time) for name in ("read", "write", "total")}


def _max(values: np.ndarray) -> float:
    return float(values.max()) if len(values) else 0.0


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
    files, at = np.unique(ids[moved], return_inverse=True)
    file_bytes = np.bincount(at, nbytes[moved].astype(np.float64), minlength=len(files))
    rows_ranks = ranks[moved]
    has_shared = np.bincount(at, rows_ranks < 0, minlength=len(files)) > 0
    pairs = np.unique(np.stack([at[rows_ranks >= 0], rows_ranks[rows_ranks >= 0]], axis=1), axis=0)
    rank_count = np.bincount(pairs[:, 0], minlength=len(files)) if len(pairs) else np.zeros(len(files), int)
    every = has_shared | (rank_count >= max(nprocs, 2)) | np.isin(files, all_ranks_files)
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
        return 1, "records"
    own = np.unique(ranks[moved & (ranks >= 0)])
    if not (moved & (ranks < 0)).any():
        return int(len(own)), "records"
    heatmaps = log.heatmaps
    if heatmaps is not None and len(heatmaps.ranks):
        apis = np.isin(heatmaps.apis, ("heatmap:POSIX", "heatmap:STDIO"))
        rows = heatmaps.record_of_bin()
        busy = np.zeros(len(heatmaps.ranks), bool)
        bins = heatmaps.write_bins + heatmaps.read_bins
        np.logical_or.at(busy, rows[bins > 0], True)
        seen = np.unique(heatmaps.ranks[busy & apis & (heatmaps.ranks >= 0)])
        return int(len(np.union1d(own, seen))), "heatmap"
    dxt = log.dxt_posix
    if dxt is not None and len(dxt.ranks):
        seen = np.unique(dxt.ranks[(dxt.lengths > 0) & (dxt.ranks >= 0)])
        return int(len(np.union1d(own, seen))), "dxt"
    return None, None


def compute(log: DarshanLog, clean: Any, metadata_seeks: bool) -> dict[str, Any]:
    """The ``performance`` object of a log (SPEC 3.9) from its cleaned records
    (``trace._CleanRecords``: the rows of POSIX, STDIO and MPI-IO stand-ins, kept or not)."""
    job = log.job
    run_time = float(job.run_time)
    mods = _row_modules(log, clean)
    read_t, write_t, meta_t, slowest, size_r, size_w, is_posix = _perf_columns(mods)
    kept = clean.kept
    fields = clean.fields
    br, bw = fields["bytes_read"], fields["bytes_written"]
    ranks, ids = clean.ranks, clean.ids

    def part(rows: np.ndarray) -> dict[str, dict[str, float | None]]:
        return figure(
            ranks[rows],
            br[rows],
            bw[rows],
            read_t[rows],
            write_t[rows],
            meta_t[rows],
            slowest[rows],
            run_time,
        )

    job_figure: dict[str, Any] = part(kept)
    moved = kept & ((br > 0) | (bw > 0))
    count, source = ranks_doing_io(log, ranks, moved)
    mode, kinds = io_mode(ids[kept], ranks[kept], (br + bw)[kept], job.nprocs, count, _mpiio_all_ranks(log))
    requests = int(fields["opens"][kept].sum()) + (int(fields["seeks"][kept].sum()) if metadata_seeks else 0)
    total_time = job_figure["total"]["time"]
    posix_kept = kept & is_posix
    job_figure.update(
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
            "sizes": {
                "read": sizes(size_r[posix_kept].sum(axis=0)),
                "write": sizes(size_w[posix_kept].sum(axis=0)),
                "source": "POSIX (STDIO records no request sizes)",
            },
        }
    )
    modules: dict[str, Any] = {}
    stdio_rows = np.zeros(len(ids), bool)
    stdio_rows[clean.posix_rows : clean.stand_in_rows.start] = True
    if F.POSIX in log.modules or clean.stand_ins:
        modules["POSIX"] = part(kept & ~stdio_rows)
    if F.STDIO in log.modules:
        modules["STDIO"] = part(kept & stdio_rows)
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
    left_out = ~kept
    return {
        "job": job_figure,
        "modules": modules,
        "darshan_util": derived.log_metrics(log),
        "left_out": {
            "records": int(np.count_nonzero(left_out)),
            "bytes": float((br + bw)[left_out].astype(np.float64).sum()),
            "stand_ins": int(clean.stand_ins),
        },
    }


def _row_modules(log: DarshanLog, clean: Any) -> list[tuple[F.ModuleRecords, bool]]:
    """The module records behind the cleaned rows, in their order: POSIX, STDIO, then the
    MPI-IO stand-ins (rows ``clean.stand_in_rows``), each with "is of the POSIX layer"."""
    from mosaic.trace import TRACE_MODULES, _mpiio_stand_ins

    mods = [(log.modules[m], m == F.POSIX) for m in TRACE_MODULES if m in log.modules]
    stand_ins = _mpiio_stand_ins(log)
    if stand_ins is not None:
        mods.append((stand_ins, False))
    return mods


def _perf_columns(mods: list[tuple[F.ModuleRecords, bool]]) -> tuple[np.ndarray, ...]:
    """Per row: READ, WRITE, META, SLOWEST_RANK times, the read and write size histograms
    (zeros where the module keeps none), and whether the row is a POSIX record."""
    parts: list[tuple[np.ndarray, ...]] = []
    for records, posix in mods:
        n = len(records.ids)
        if (records.module, records.version) not in F.PERF_INDEX:
            zero = np.zeros(n)
            parts.append(
                (
                    zero,
                    zero,
                    zero,
                    zero,
                    np.zeros((n, F.SIZE_BUCKETS), np.int64),
                    np.zeros((n, F.SIZE_BUCKETS), np.int64),
                    np.full(n, posix),
                )
            )
            continue
        r, w, m, s = derived.record_times(records)
        parts.append(
            (r, w, m, s, _histogram(records, "read"), _histogram(records, "write"), np.full(n, posix))
        )
    if not parts:
        empty = np.zeros(0)
        return (
            empty,
            empty,
            empty,
            empty,
            np.zeros((0, F.SIZE_BUCKETS), np.int64),
            np.zeros((0, F.SIZE_BUCKETS), np.int64),
            np.zeros(0, bool),
        )
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(7))


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
