"""Trace: one job's cleaned I/O as columnar numpy arrays.

A Trace is what every analysis sees: job facts, one row per I/O operation
(SPEC 3.3 step 1) and one row per file record for metadata requests
(SPEC 3.7), with each row's record id and the log's names (a reference to
the name mapping the reader built, decoded only when a metadata peak's files
are named). It is cheap to pickle to a dispy worker and back (the name
region's bytes ride along).
Building it from a :class:`~mosaic.darshan.formats.DarshanLog` applies the
mount / pseudo-file filter and record-level cleaning (SPEC 2, 3.1).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np
from numpy.typing import NDArray

from mosaic import performance
from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.darshan.formats import DarshanLog
from mosaic.darshan.reader import NameTable, read_log
from mosaic.directions import DIRECTIONS
from mosaic.errors import LogError, Reason

READ, WRITE = 0, 1  # direction codes: indexes into DIRECTIONS, the directions' names

# One row per operation: a record's traffic in one direction, or a DXT segment.
OPS_DTYPE = np.dtype(
    [
        ("start", "f8"),
        ("end", "f8"),  # seconds from job start
        ("bytes", "f8"),
        ("ranks", "i8"),  # ranks it stands for: nprocs for a shared record, else 1
        ("direction", "i1"),  # READ or WRITE
    ]
)

# One row per kept file record: what its metadata requests are and when.
META_DTYPE = np.dtype(
    [
        ("opens", "f8"),
        ("seeks", "f8"),
        ("open_start", "f8"),
        ("open_end", "f8"),
        ("close_start", "f8"),
        ("close_end", "f8"),
    ]
)


@dataclass
class HeatmapSignal:
    """Bytes moved per time bin from job start, one series per direction.

    Summed over ranks and over the POSIX and STDIO heatmaps (never MPI-IO,
    whose traffic POSIX already counts). The FFT detector's second signal
    (SPEC 3.5) and the shares of temporality's quarters (SPEC 3.6); it changes no byte
    total or metadata.
    """

    bin_seconds: float
    read: np.ndarray  # float64 bytes per bin
    write: np.ndarray  # float64, as many bins as read


class Job(TypedDict):
    """A log's job facts, as the result object's ``job`` reports them."""

    uid: int
    job_id: str
    exe: str  # the whole command line
    application: str  # its first token
    nprocs: int
    start: str  # ISO 8601, UTC
    start_epoch: float
    end_epoch: float
    run_time: float
    version: str  # Darshan's log format version


@dataclass
class Trace:
    file: str
    job: Job
    ops: NDArray[np.void]  # OPS_DTYPE
    meta: NDArray[np.void]  # META_DTYPE
    partial: bool = False
    dropped_records: int = 0
    has_dxt: bool = False
    heatmap: HeatmapSignal | None = None  # None: no POSIX or STDIO heatmap records
    info: dict[str, Any] = field(default_factory=dict)  # free-form reader facts (modules, format)
    # The record id of each row of ``meta`` (uint64; empty for a trace built by hand) and
    # the log's names by record id: what names the files behind a metadata peak.
    meta_ids: NDArray[np.uint64] = field(default_factory=lambda: np.zeros(0, np.uint64))
    names: Mapping[int, str] = field(default_factory=dict)
    performance: dict[str, Any] | None = None  # SPEC 3.9 (mosaic.performance); None: built by hand

    @property
    def run_time(self) -> float:
        return float(self.job["run_time"])

    def direction(self, direction: int) -> NDArray[np.void]:
        """Operations of one direction, sorted by start time.

        By ``take``: a boolean mask or an index array copies these packed rows
        field by field, 5-15 times slower (3,045 rows: 100 us against 7 us).
        """
        sel = self.ops.take((self.ops["direction"] == direction).nonzero()[0])
        ordered: NDArray[np.void] = sel.take(np.argsort(sel["start"], kind="stable"))
        return ordered

    @property
    def total_bytes(self) -> float:
        return float(self.ops["bytes"].sum())

    def group_key(self, group_by: str = "app") -> str:
        """SPEC 3.2 dedup key: "uid:application" or "uid:whole command line"."""
        return group_key(self.job, group_by)

    def __repr__(self) -> str:
        """A summary, not the arrays: printed whole, thousands of rows bury the facts."""
        reads = int(np.count_nonzero(self.ops["direction"] == READ))
        parts = [
            f"uid {self.job['uid']}",
            repr(self.job["application"]),
            _counted(self.job["nprocs"], "rank"),
            f"{self.run_time:g} s",
            f"{_counted(len(self.ops), 'operation')} ({reads:,} read, {len(self.ops) - reads:,} write, "
            f"{self.total_bytes:,.0f} bytes)",
            _counted(len(self.meta), "file record"),
        ]
        if self.heatmap is not None:
            parts.append(
                f"heatmap of {_counted(len(self.heatmap.read), 'bin')} of {self.heatmap.bin_seconds:g} s"
            )
        if self.has_dxt:
            parts.append("DXT")
        if self.partial:
            parts.append(f"partial ({_counted(self.dropped_records, 'record')} dropped)")
        return f"Trace({self.file!r}: {', '.join(parts)})"


def _counted(count: int, noun: str) -> str:
    """ "1 rank", "8 ranks"."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def group_key(job: Job, group_by: str = "app") -> str:
    what = job["exe"] if group_by == "cmdline" else job["application"]
    return f"{job['uid']}:{what}"


# --------------------------------------------------------------------------- building

TRACE_MODULES = (F.POSIX, F.STDIO)  # MPI-IO traffic already appears in POSIX (SPEC 2)
HEATMAP_APIS = ("heatmap:POSIX", "heatmap:STDIO")  # the same rule for heatmaps (SPEC 3.5)
# Timestamp pairs (open, read, write, close) whose end is always recorded: for
# open and close, an end of exactly 0 means "never recorded" (SPEC 2), not inverted.
END_ALWAYS_RECORDED = np.array([False, True, True, False])
OPS_COLUMNS = ("start", "end", "bytes", "ranks", "direction")
OpColumns = tuple[np.ndarray, ...]  # one array per name of OPS_COLUMNS


def read_trace(path: str | os.PathLike[str], config: Config) -> Trace:
    """Read and validate one log (a file or ``ARCHIVE/MEMBER``); LogError if evicted."""
    return build_trace(read_bounded(path, config), os.fspath(path), config)


def trace_from_bytes(data: bytes | bytearray, file: str, config: Config, inflated: int = 0) -> Trace:
    """Same as :func:`read_trace` for a log already in memory (e.g. an archive member).

    ``inflated``: bytes already inflated to get ``data`` out of its wrappers
    (:func:`~mosaic.darshan.reader.unwrap`), counted against ``max_inflated_bytes``
    as a wrapped file's layers are.
    """
    return build_trace(read_bounded(data, config, file, inflated), file, config)


def read_bounded(
    source: str | os.PathLike[str] | bytes | bytearray, config: Config, name: str = "", inflated: int = 0
) -> DarshanLog:
    """``read_log`` under the execution settings' size limits (too_large past them);
    ``inflated`` bytes of the inflation budget are spent already."""
    return read_log(
        source,
        name,
        max_log_bytes=config.max_log_bytes,
        max_inflated_bytes=config.max_inflated_bytes - inflated,
        memory_bytes=config.worker_memory_bytes,
        max_job_bytes=config.max_job_bytes,
    )


@dataclass
class _CleanRecords:
    """SPEC 2 / 3.1's one cleaned, filtered set of records of a log, before any analysis array."""

    ids: np.ndarray  # record ids (POSIX, STDIO, MPI-IO stand-ins)
    ranks: np.ndarray
    stands_for: np.ndarray  # ranks each record stands for (SPEC 3.3 step 1)
    fields: F.CanonicalColumns  # canonical counters and fcounters
    kept: np.ndarray  # filtered and valid
    from_records: np.ndarray  # kept, and not replaced by DXT segments
    dropped: int  # records dropped by SPEC 3.1's checks
    dxt_ops: OpColumns  # operation columns from DXT_POSIX segments
    dxt_files: np.ndarray  # file ids DXT segments cover
    dropped_segments: int
    stand_ins: int  # MPI-IO records standing in for lost POSIX records
    posix_rows: int  # rows 0 .. posix_rows - 1 are the POSIX module's records
    bounds: tuple[float, float]  # SPEC 3.1's valid times: the run and its clock slack
    stand_in_rows: slice  # the MPI-IO stand-ins' rows (last, after POSIX and STDIO)
    kept_files: _KeptFiles | None = None  # SPEC 2's name filter (SPEC 3.9 filters MPI-IO by it)
    # the module records behind the rows, in their order (POSIX, STDIO, the MPI-IO stand-ins),
    # each with "is of the POSIX layer": SPEC 3.9 gathers its time counters from them
    row_modules: list[tuple[F.ModuleRecords, bool]] = field(default_factory=list)

    @property
    def dropped_rows(self) -> int:
        """What ``dropped_records`` reports: records and DXT segments SPEC 3.1's checks
        dropped (a segment is one request of a record, as a record's traffic is one)."""
        return self.dropped + self.dropped_segments


def _clean(log: DarshanLog, config: Config) -> _CleanRecords:
    """Filter records by name (SPEC 2), drop those failing SPEC 3.1's checks, let MPI-IO
    records stand in for those a partial POSIX module lost (SPEC 2), and mark the POSIX
    records whose files DXT_POSIX traced (their segments replace them)."""
    job = log.job
    if job.run_time > config.max_run_time_seconds:
        # A bogus end time would size per-second arrays in the analysis.
        raise LogError(
            Reason.BAD_JOB,
            f"run time {job.run_time:.0f} s exceeds max_run_time_seconds {config.max_run_time_seconds:.0f}",
        )
    if job.partial and config.strict:
        raise LogError(Reason.PARTIAL, "a module ran out of record memory (--strict)")
    lo, hi = _bounds(job.run_time, config)
    kept_files = _KeptFiles(log, config)
    dxt_ops, dxt_files, dropped_segments = _dxt_operations(log, kept_files, lo, hi)
    stand_ins = _mpiio_stand_ins(log)
    ids, ranks, stands_for, fields, times, stdio_rows = _file_records(log, stand_ins)
    kept = kept_files(ids) & (stands_for > 0)  # a stand-in for no rank is no record
    valid = _valid_records(fields, times, lo, hi)
    filtered_in = np.count_nonzero(kept)
    kept &= valid
    dropped = int(filtered_in - np.count_nonzero(kept))
    from_records = kept
    if len(dxt_files):
        traced = _members(ids, dxt_files)
        traced[stdio_rows] = False
        from_records = kept & ~traced
    return _CleanRecords(
        ids,
        ranks,
        stands_for,
        fields,
        kept,
        from_records,
        dropped,
        dxt_ops,
        dxt_files,
        dropped_segments,
        0 if stand_ins is None else int(np.count_nonzero(stands_for[len(ids) - len(stand_ins.ids) :])),
        stdio_rows.start,
        (lo, hi),
        slice(stdio_rows.stop, len(ids)),
        kept_files,
        [(log.modules[m], m == F.POSIX) for m in TRACE_MODULES if m in log.modules]
        + ([(stand_ins, False)] if stand_ins is not None and stdio_rows.stop < len(ids) else []),
    )


def _bounds(run_time: float, config: Config) -> tuple[float, float]:
    """SPEC 3.1: times outside the run, beyond the clock slack, are corrupt."""
    slack = max(config.clock_slack_seconds, config.clock_slack_fraction * run_time)
    return -slack, run_time + slack


def build_trace(log: DarshanLog, file: str, config: Config) -> Trace:
    """SPEC 3.3 step 1 operations and SPEC 3.7 metadata rows of one log, cleaned
    (:func:`_clean`); DXT_POSIX segments replace the POSIX operations of their files."""
    clean = _clean(log, config)
    job = log.job
    ops = [clean.dxt_ops] + _record_operations(clean.fields, clean.stands_for, clean.from_records)
    has_dxt = len(clean.dxt_files) > 0
    meta, meta_ids = _meta_rows(clean, log)
    return Trace(
        file=file,
        job=_job_dict(log, config.max_name_chars),
        ops=_assemble(ops),
        meta=meta,
        partial=job.partial,
        dropped_records=clean.dropped_rows,
        has_dxt=has_dxt,
        heatmap=heatmap_signal(log.heatmaps),
        info={
            "modules": [F.MODULE_NAMES.get(m, str(m)) for m in log.present_modules],
            "format": job.version,
            "dxt": has_dxt,
            "dropped_segments": clean.dropped_segments,
            "mpiio_stand_ins": clean.stand_ins,
            "partial_modules": [F.MODULE_NAMES.get(m, str(m)) for m in log.partial_modules],
            "stand_in_bytes": _stand_in_bytes(clean),
        },
        meta_ids=meta_ids,
        names=log.names,
        performance=performance.compute(log, clean, config.metadata_seeks),
    )


def _stand_in_bytes(clean: _CleanRecords) -> dict[str, float]:
    """Bytes per direction that MPI-IO stand-ins carry: inferred, not counted by POSIX
    (the reasons of a partial log say how much of a direction's bytes they are)."""
    rows = clean.stand_in_rows
    kept = clean.from_records[rows]
    return {
        name: float(clean.fields[f"bytes_{'read' if code == READ else 'written'}"][rows][kept].sum())
        for code, name in enumerate(DIRECTIONS)
    }


@dataclass
class LogFacts:
    """What deduplication and the funnel need of a log (SPEC 3.1-3.2), without the
    analysis arrays: validating a year of logs builds no operations, metadata rows
    or heatmap signal."""

    job: Job
    total_bytes: float  # bytes read + written, as the sum of the trace's operations
    partial: bool
    dropped_records: int
    performance: dict[str, Any] | None = None  # SPEC 3.9 (mosaic.performance)

    def group_key(self, group_by: str = "app") -> str:
        return group_key(self.job, group_by)


def log_facts(log: DarshanLog, config: Config, clean: _CleanRecords | None = None) -> LogFacts:
    """The :class:`LogFacts` of a log; raises the same LogError as :func:`build_trace`.
    ``clean``: its :func:`_clean` records, when the caller has them (SPEC 3.10's activity)."""
    clean = _clean(log, config) if clean is None else clean
    fields, sel = clean.fields, clean.from_records
    dxt = float(clean.dxt_ops[2].sum()) if len(clean.dxt_ops[2]) else 0.0
    total = dxt + float(fields["bytes_read"][sel].sum()) + float(fields["bytes_written"][sel].sum())
    return LogFacts(
        _job_dict(log, config.max_name_chars),
        total,
        log.job.partial,
        clean.dropped_rows,
        performance.compute(log, clean, config.metadata_seeks),
    )


def _file_records(
    log: DarshanLog, stand_ins: F.ModuleRecords | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, F.CanonicalColumns, np.ndarray, slice]:
    """POSIX, STDIO and MPI-IO stand-in records as one table.

    Returns ids, ranks, the ranks each record stands for, the canonical fields
    (columns of two tables, whose timestamps table SPEC 3.1's checks use whole),
    the timestamps table, and the rows of STDIO records (a slice: every other
    row is of the POSIX layer, POSIX records and their stand-ins, which
    DXT_POSIX segments replace). A shared stand-in counts only what the POSIX
    layer's records of its file do not (:func:`_shared_stand_ins`).
    """
    mods = [log.modules[m] for m in TRACE_MODULES if m in log.modules]
    if stand_ins is not None:
        mods.append(stand_ins)
    if not mods:
        counts = np.zeros((0, len(F.CANONICAL_COUNTERS)), np.int64)
        times = np.zeros((0, len(F.CANONICAL_FCOUNTERS)))
        return (
            np.zeros(0, np.uint64),
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            F.CanonicalColumns(counts, times),
            times,
            slice(0, 0),
        )
    tables = [m.canonical_tables() for m in mods]
    if len(mods) == 1:
        ((counts, times),) = tables
        ids, ranks = mods[0].ids, mods[0].ranks
    else:
        counts = np.concatenate([c for c, _ in tables])
        times = np.concatenate([t for _, t in tables])
        ids = np.concatenate([m.ids for m in mods])
        ranks = np.concatenate([m.ranks for m in mods])
    posix = log.modules.get(F.POSIX)
    stdio = log.modules.get(F.STDIO)
    first_stdio = 0 if posix is None else len(posix.ids)
    stdio_rows = slice(first_stdio, first_stdio + (0 if stdio is None else len(stdio.ids)))
    stands_for = np.where(ranks == -1, log.job.nprocs, 1)
    if stand_ins is not None and (stand_ins.ranks == -1).any():
        layer = np.r_[np.arange(stdio_rows.start), np.arange(stdio_rows.stop, len(ids))]
        _shared_stand_ins(ids, ranks, counts, stands_for, layer, len(ids) - len(stand_ins.ids))
    return ids, ranks, stands_for, F.CanonicalColumns(counts, times), times, stdio_rows


def _shared_stand_ins(
    ids: np.ndarray,
    ranks: np.ndarray,
    counts: np.ndarray,
    stands_for: np.ndarray,
    layer: np.ndarray,
    first_stand_in: int,
) -> None:
    """A shared MPI-IO stand-in stands in only for the ranks of its file without a record.

    Its counters are every rank's; the POSIX layer's records of the same file
    and a rank (``layer``: POSIX records and per-rank stand-ins) already count
    theirs, so the stand-in keeps the rest (never below 0) and stands for the
    ranks left (``counts`` and ``stands_for`` change in place; 0 ranks: it
    stands for none and is no record). Real log ``imbalanced_io/``: ranks
    1-495 have their POSIX records of two collectively written files and
    rank 0 lost its: 496 opens each (992 requests counted twice) become 1,
    and 25,098,793,816 bytes less ranks 1-495's 78,480 are rank 0's.
    """
    shared = first_stand_in + (ranks[first_stand_in:] == -1).nonzero()[0]
    order = np.argsort(ids[shared], kind="stable")
    sorted_ids = ids[shared][order]
    ranked = layer[ranks[layer] >= 0]
    at = np.minimum(np.searchsorted(sorted_ids, ids[ranked]), len(sorted_ids) - 1)
    hit = sorted_ids[at] == ids[ranked]
    owner = order[at[hit]]  # index into shared of each hit's stand-in
    covered = np.zeros((len(shared), counts.shape[1]), np.int64)
    np.add.at(covered, owner, counts[ranked[hit]])
    counts[shared] = np.maximum(counts[shared] - covered, 0)
    stands_for[shared] = np.maximum(stands_for[shared] - np.bincount(owner, minlength=len(shared)), 0)


def _mpiio_stand_ins(log: DarshanLog) -> F.ModuleRecords | None:
    """MPI-IO records standing in for the POSIX records a partial POSIX module lost (SPEC 2).

    An MPI-IO record stands in when no POSIX record has its (file, rank) and
    no POSIX record of rank -1 (which covers every rank) has its file. Its
    canonical fields carry bytes, read/write start and end, opens and
    open/close times; MPI-IO has no seeks (0). A stand-in of rank -1 stands
    in only for the ranks without a record of its file
    (:func:`_shared_stand_ins`).
    """
    mpiio = log.modules.get(F.MPIIO)
    if F.POSIX not in log.partial_modules or mpiio is None:
        return None
    key = np.dtype([("id", "u8"), ("rank", "i8")])
    posix = log.modules.get(F.POSIX)
    ids = posix.ids if posix is not None else np.zeros(0, np.uint64)
    ranks = posix.ranks if posix is not None else np.zeros(0, np.int64)
    have = np.zeros(len(ids), key)
    have["id"], have["rank"] = ids, ranks
    wanted = np.zeros(len(mpiio.ids), key)
    wanted["id"], wanted["rank"] = mpiio.ids, mpiio.ranks
    lost = ~np.isin(wanted, have) & ~np.isin(mpiio.ids, ids[ranks == -1])
    return F.ModuleRecords(
        F.MPIIO,
        mpiio.version,
        mpiio.ids[lost],
        mpiio.ranks[lost],
        mpiio.counters[lost],
        mpiio.fcounters[lost],
    )


NAME_HASH_CHARS = 16  # hex digits of SHA-256 closing a shortened name
NAME_CUT = "\u2026#"  # between a shortened name's start and its hash


def bounded_name(name: str, max_chars: int) -> str:
    """``name`` if it has at most ``max_chars`` characters, else its start, then
    :data:`NAME_CUT` and the hash of the whole: exactly ``max_chars`` characters, and
    names alike in their start stay apart (another group) by the hash.

    Why: a log may claim a command line of ``max_job_bytes`` (1 MB); stored as its
    group's name it was kept in several tables and indexes (~15.5 MB a post in the
    store), and listed 30 at a time it was 30 MB an answer.
    """
    if len(name) <= max_chars:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:NAME_HASH_CHARS]
    return name[: max_chars - len(NAME_CUT) - NAME_HASH_CHARS] + NAME_CUT + digest


def _job_dict(log: DarshanLog, max_name_chars: int) -> Job:
    job = log.job
    try:
        start = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(job.start))
    except (OverflowError, OSError, ValueError):
        start = ""
    if len(start) != len("2019-01-01T00:00:00Z"):  # no time before year 1 or after 9999
        raise LogError(Reason.BAD_JOB, f"start time {job.start} out of range")
    tokens = job.cmdline.split(maxsplit=1)
    return {
        "uid": int(job.uid),
        "job_id": str(job.job_id),
        "exe": bounded_name(job.cmdline, max_name_chars),
        "application": bounded_name(tokens[0] if tokens else "", max_name_chars),
        "nprocs": int(job.nprocs),
        "start": start,
        "start_epoch": float(job.start),
        "end_epoch": float(job.end),
        "run_time": float(job.run_time),
        "version": job.version,
    }


class _NameFilter:
    """SPEC 2's file filter over a list of paths, by one regular-expression pass over
    the paths joined in one string.

    A path is under a prefix when it equals it or continues with ``/`` after
    it (``/scratch`` does not hold ``/scratch2``). The paths are joined with
    NUL (which no path holds), so "starts with P" is NUL + P, followed by
    ``/`` or NUL: one C-speed scan whatever the number of paths and prefixes,
    where per-path tests cost ~1 us each on a file-per-process log's tens of
    thousands of names. A name table's records are tested on their bytes
    instead (:meth:`listed_records`), without decoding them.
    """

    def __init__(self, mounts: tuple[str, ...], excluded_prefixes: tuple[str, ...]):
        self.keep_listed = bool(mounts)
        self.streams = not self.keep_listed
        prefixes = mounts or excluded_prefixes
        self.pattern = _listed_pattern(prefixes, streams=self.streams)
        self.unnamed_listed = bool(len(self.listed([""])))  # a file without a name
        self.heads = _byte_heads(prefixes)

    def keep(self, paths: list[str]) -> np.ndarray:
        """Keep mask of `paths`."""
        listed = np.zeros(len(paths), bool)
        listed[self.listed(paths)] = True
        return listed if self.keep_listed else ~listed

    def listed(self, paths: list[str]) -> np.ndarray:
        """Ascending indices of the paths equal to or under a listed prefix (or streams)."""
        text = "\0" + "\0".join(paths) + "\0"
        hits = [match.start() for match in self.pattern.finditer(text)]
        if len(hits) <= FEW_HITS:  # a path's index is the count of NULs before it
            # Counted from one hit to the next: one pass over the text, whatever the hits.
            between = map(text.count, itertools.repeat("\0"), [0, *hits], hits)
            return np.fromiter(itertools.accumulate(between), np.int64, count=len(hits))
        lengths = np.fromiter(map(len, paths), np.int64, count=len(paths))
        leading_nul = np.cumsum(lengths + 1) - lengths - 1
        return np.searchsorted(leading_nul, np.array(hits, np.int64))

    def listed_records(self, table: NameTable) -> np.ndarray | None:
        """:meth:`listed` of a name table's records, tested on their bytes (nothing
        decoded); None where that test could differ from the text's, so the caller
        takes :meth:`listed` of the decoded names.

        A UTF-8 path starts with a prefix's text exactly when its bytes start with
        the prefix's UTF-8 bytes, and ``<``, ``>``, ``/`` and NUL are single bytes
        however the rest decodes. Not so for a prefix that does not encode to plain
        UTF-8, nor for an id with listed and unlisted records (the decoded names
        keep one path per id).
        """
        if self.heads is None:
            return None
        words = table.path_words(max((len(value) for value, _ in self.heads), default=1))
        listed = np.zeros(len(words), bool)
        for value, mask in self.heads:
            listed |= _starts_with(words, value, mask)
        if self.streams:
            listed |= ((words[:, 0] & 0xFF) == ord("<")) & (table.last_bytes() == ord(">"))
        found: np.ndarray = listed.nonzero()[0]
        if 0 < found.size < listed.size and _shared(table.ids[listed], table.ids[~listed]):
            return None
        return found


def _byte_heads(prefixes: tuple[str, ...]) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """What a name table's path must begin with to be listed: each prefix, then NUL
    (equal to it) or ``/`` (under it), as little-endian uint64 words and their masks;
    None when a prefix does not encode to plain UTF-8 (then the text filter decides)."""
    try:
        wanted = [p.rstrip("/").encode() for p in prefixes]
    except UnicodeEncodeError:
        return None
    if any(b"\0" in p or _REPLACEMENT in p for p in wanted):
        return None
    heads = []
    for head in (p + end for p in wanted for end in (b"\0", b"/")):
        size = -(-len(head) // 8) * 8
        value = np.frombuffer(head.ljust(size, b"\0"), "<u8")
        mask = np.frombuffer((b"\xff" * len(head)).ljust(size, b"\0"), "<u8")
        heads.append((value, mask))
    return heads


def _starts_with(words: np.ndarray, value: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Rows of :meth:`NameTable.path_words` whose bytes under ``mask`` are ``value``'s."""
    found: np.ndarray = (words[:, 0] & mask[0]) == value[0]
    for j in range(1, value.size):
        found &= (words[:, j] & mask[j]) == value[j]
    return found


def _shared(some: np.ndarray, others: np.ndarray) -> bool:
    """Whether an id is in both arrays."""
    few, many = (some, others) if some.size <= others.size else (others, some)
    return bool(_is_in(many, few).any())


def _is_in(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``np.isin(values, ids)``; with few ids one comparison pass each (np.isin costs ~0.1 ms)."""
    if len(ids) <= FEW_ODD_IDS:
        found: np.ndarray = (values[:, None] == ids).any(axis=1)
        return found
    return np.isin(values, ids)


_REPLACEMENT = "\ufffd".encode()  # what a path's undecodable bytes become


def _name_filter(config: Config) -> _NameFilter:
    """The filter of a config's prefixes, built once per prefix list."""
    return _filter_of(config.mounts, config.excluded_prefixes)


@functools.cache
def _filter_of(mounts: tuple[str, ...], excluded_prefixes: tuple[str, ...]) -> _NameFilter:
    return _NameFilter(mounts, excluded_prefixes)


FEW_HITS = 8  # up to this many listed paths, counting NULs beats indexing every path


@functools.cache
def _listed_pattern(prefixes: tuple[str, ...], streams: bool) -> re.Pattern[str]:
    """NUL, then a path equal to or under one of `prefixes`; with `streams`, also
    NUL then ``<...>`` (<STDOUT>, <STDERR>, ...: not files). Matches start at a
    path's leading NUL and never consume the next path's. Never empty: without
    mounts (no prefixes at all), the streams are still looked for."""
    under = "|".join(re.escape(p.rstrip("/")) for p in prefixes)
    alternatives = [f"\0(?:{under})(?=[/\0])"] if prefixes else []
    if streams:
        alternatives.append("\0<[^\0]*>(?=\0)")
    return re.compile("|".join(alternatives))


class _KeptFiles:
    """SPEC 2's filter decided once per named file of a log; rows are then looked up by id.

    The test runs over the log's name table (one C-level string pass), not per
    row, and serves both the records and the DXT segments. An id without a
    name record has the empty path. Rows are matched only against the few ids
    whose answer differs from an unnamed id's (usually the three standard streams, by id).
    """

    def __init__(self, log: DarshanLog, config: Config):
        names, mounts = log.names, log.record_mounts
        name_filter = _name_filter(config)
        table = names if isinstance(names, NameTable) and not mounts else None
        listed = name_filter.listed_records(table) if table is not None else None
        if table is None or listed is None:  # the decoded names
            table = None
            paths = list(names.values())
            if mounts:  # 2.x names are path suffixes: prefix their mount for the filter
                paths = [
                    mounts[rid].rstrip("/") + "/" + path.lstrip("/") if mounts.get(rid) else path
                    for rid, path in zip(names, paths)
                ]
            listed = name_filter.listed(paths)
        self.unnamed = name_filter.unnamed_listed == name_filter.keep_listed
        odd = listed  # the ids whose answer differs from an unnamed id's
        if name_filter.unnamed_listed:  # then the names not listed
            unlisted = np.ones(len(names) if table is None else len(table.ids), bool)
            unlisted[listed] = False
            odd = unlisted.nonzero()[0]
        if not len(odd):
            odd_ids = np.zeros(0, np.uint64)
        elif table is None:
            odd_ids = np.fromiter(names, np.uint64, count=len(names))[odd]
        else:  # a table's ids may repeat (then all their records agree): matching is the same
            odd_ids = table.ids[odd].astype(np.uint64)
        # The standard streams are left out by id whatever their name (an anonymized log
        # renames them): odd when an unnamed id is kept, never odd (kept) otherwise.
        others = odd_ids[~_is_in(odd_ids, _STREAM_IDS)] if len(odd_ids) else odd_ids
        self.odd_ids = np.concatenate([others, _STREAM_IDS]) if self.unnamed else others

    def __call__(self, rids: np.ndarray) -> np.ndarray:
        """Keep mask of rows with record ids `rids`."""
        if not len(self.odd_ids):
            return np.full(len(rids), self.unnamed)
        keep: np.ndarray = _is_in(rids, self.odd_ids) != self.unnamed
        return keep


FEW_ODD_IDS = 16
_STREAM_IDS = np.array(sorted(F.STD_STREAM_IDS), np.uint64)


def _valid_records(fields: F.CanonicalColumns, times: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """SPEC 3.1 record cleaning: no negative bytes, no inverted or out-of-run timestamps.

    ``times``: the canonical timestamps table (start and end pairs, ``CANONICAL_FCOUNTERS``).
    """
    starts, ends = times[:, 0::2], times[:, 1::2]
    inverted = (ends < starts) & ((ends != 0) | END_ALWAYS_RECORDED)
    valid: np.ndarray = _within(times, lo, hi).all(axis=1) & ~inverted.any(axis=1)
    valid &= np.minimum(fields["bytes_read"], fields["bytes_written"]) >= 0
    return valid


def _within(t: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Finite and in [lo, hi]; with finite bounds the comparisons alone reject NaN and ±inf."""
    inside: np.ndarray = (t >= lo) & (t <= hi)
    return inside if math.isfinite(lo) and math.isfinite(hi) else inside & np.isfinite(t)


def _meta_rows(clean: _CleanRecords, log: DarshanLog) -> tuple[np.ndarray, np.ndarray]:
    """SPEC 3.7's metadata rows of the kept records and the record id of each: one row
    per record, and a second one for a shared POSIX record's opens and closes made by
    collective MPI-IO calls (:func:`_collective_opens`)."""
    kept = clean.kept
    rows = np.zeros(int(kept.sum()), META_DTYPE)
    for name in META_DTYPE.names or ():
        rows[name] = clean.fields[name][kept]
    ids = clean.ids[kept]
    if log.job.version in F.LEGACY_VERSIONS:
        _spread_reopened(rows)
        return rows, ids
    collective = _shared_mpiio_windows(log, clean.bounds)
    if collective is None:
        return rows, ids
    shared = kept & (clean.ranks == -1)
    shared[clean.posix_rows :] = False  # POSIX records (not STDIO, not stand-ins)
    rows, added = _collective_opens(rows, (np.cumsum(kept) - 1)[shared], clean.ids[shared], collective)
    return rows, np.concatenate([ids, added])


def _shared_mpiio_windows(log: DarshanLog, bounds: tuple[float, float]) -> np.ndarray | None:
    """The MPI-IO records of rank -1 passing SPEC 3.1's checks, sorted by id, as rows of
    ``_COLLECTIVE_DTYPE``; None when there are none."""
    mpiio = log.modules.get(F.MPIIO)
    if mpiio is None or F.POSIX not in log.modules:
        return None
    sel = (mpiio.ranks == -1).nonzero()[0]
    if not len(sel):
        return None
    records = F.ModuleRecords(
        F.MPIIO, mpiio.version, mpiio.ids[sel], mpiio.ranks[sel], mpiio.counters[sel], mpiio.fcounters[sel]
    )
    counts, times = records.canonical_tables()
    fields = F.CanonicalColumns(counts, times)
    valid = _valid_records(fields, times, *bounds)
    windows = np.zeros(int(valid.sum()), _COLLECTIVE_DTYPE)
    windows["id"] = records.ids[valid]
    for name in META_DTYPE.names or ():
        if name != "seeks":
            windows[name] = fields[name][valid]
    windows.sort(order="id", kind="stable")
    return windows if len(windows) else None


# A shared MPI-IO record's opens and windows (SPEC 3.7's collective opens).
_COLLECTIVE_DTYPE = np.dtype(
    [("id", "u8")] + [(name, "f8") for name in META_DTYPE.names or () if name != "seeks"]
)


def _collective_opens(
    rows: np.ndarray, at: np.ndarray, ids: np.ndarray, collective: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Split each shared POSIX record's row whose file has a shared MPI-IO record (SPEC 3.7).

    MPI-IO opens and closes are collective: the POSIX opens and closes they
    cause happen inside the MPI-IO record's open and close windows. So as
    many of the POSIX record's opens as the MPI-IO record has (at most all
    of them) move to a new row with the MPI-IO windows; the rest, and the
    seeks, keep the POSIX windows. An MPI-IO record that never recorded its
    close (0, 0) leaves the moved closes in the POSIX close window. Real
    logs: e3sm's 514 POSIX opens of its input spread over 0.03-5.42 s made
    five false spikes of 95/s where its 512 collective opens took
    5.376-5.420 s; skew-app's 65,537 closes spread over 754 s (87/s) where
    the collective close took 0.3 s.

    ``at``: the rows of the shared POSIX records; ``ids``: their file ids;
    ``collective``: :func:`_shared_mpiio_windows`. Returns the new rows and the
    record ids of the rows added.
    """
    place = np.minimum(np.searchsorted(collective["id"], ids), len(collective) - 1)
    match = collective[place]
    moved = np.where(match["id"] == ids, np.minimum(match["opens"], rows["opens"][at]), 0.0)
    has = moved > 0
    if not has.any():
        return rows, ids[:0]
    at, match = at[has], match[has]
    extra = np.zeros(len(at), META_DTYPE)
    extra["opens"] = moved[has]
    extra["open_start"], extra["open_end"] = match["open_start"], match["open_end"]
    closed = (match["close_start"] != 0) | (match["close_end"] != 0)
    for name in ("close_start", "close_end"):
        extra[name] = np.where(closed, match[name], rows[name][at])
    rows["opens"][at] -= extra["opens"]
    return np.concatenate([rows, extra]), ids[has]


def _spread_reopened(rows: np.ndarray) -> None:
    """Darshan 2.x keeps a record's first open and last close only (SPEC 3.7).

    A record opened more than once had its opens and closes somewhere in
    [first open, last close]: both windows become that span, where putting
    every open at the first open would invent a spike (80 files reopened
    every second for 58 s read as 4,640 opens in one second). A record opened
    once keeps its two instants; without a recorded close (0) there is no
    span, and the opens stay at the first open (a window with one timestamp).
    """
    reopened = (rows["opens"] > 1) & (rows["close_end"] != 0)
    rows["open_end"] = np.where(reopened, rows["close_end"], rows["open_end"])
    rows["close_start"] = np.where(reopened, rows["open_start"], rows["close_start"])


def _assemble(parts: list[OpColumns]) -> np.ndarray:
    """One OPS_DTYPE array from column tuples (start, end, bytes, ranks, direction)."""
    columns = [np.concatenate([p[i] for p in parts]) for i in range(len(OPS_COLUMNS))]
    ops = np.zeros(len(columns[0]), OPS_DTYPE)
    for name, column in zip(OPS_COLUMNS, columns):
        ops[name] = column
    return ops


def _record_operations(fields: F.CanonicalColumns, ranks: np.ndarray, kept: np.ndarray) -> list[OpColumns]:
    """One operation per record and direction with bytes > 0 (SPEC 3.3 step 1);
    ``ranks``: the ranks each record stands for."""
    out: list[OpColumns] = []
    for direction, name in enumerate(DIRECTIONS):
        nbytes = fields[f"bytes_{'read' if direction == READ else 'written'}"]
        sel = kept & (nbytes > 0)
        start = fields[f"{name}_start"][sel]
        out.append(
            (
                start,
                fields[f"{name}_end"][sel],
                nbytes[sel],
                ranks[sel],
                np.full(len(start), direction, np.int8),
            )
        )
    return out


def _dxt_operations(
    log: DarshanLog, kept_files: _KeptFiles, lo: float, hi: float
) -> tuple[OpColumns, np.ndarray, int]:
    """Operations from DXT_POSIX segments, the file ids they cover, segments dropped.

    A partial DXT module lost segments, so its files keep their POSIX
    aggregates instead; so does a file none of whose segments passes SPEC 3.1's
    checks (no negative length or offset, no inverted or out-of-run time): its
    POSIX totals are all that is left of its traffic.
    """
    dxt = log.dxt_posix
    if dxt is None or not len(dxt.ids) or F.DXT_POSIX in log.partial_modules:
        empty = np.zeros(0)
        return (empty,) * len(OPS_COLUMNS), np.zeros(0, np.uint64), 0
    # Segments come grouped by record: filter and collect files once per record.
    first = np.flatnonzero(np.r_[True, dxt.ids[1:] != dxt.ids[:-1]])
    kept_first = kept_files(dxt.ids[first])
    kept = np.repeat(kept_first, np.diff(np.r_[first, len(dxt.ids)]))
    valid = (
        (dxt.lengths >= 0)
        & (dxt.offsets >= 0)
        & (dxt.ends >= dxt.starts)
        & _within(dxt.starts, lo, hi)
        & _within(dxt.ends, lo, hi)
    )
    survives = kept & valid
    dropped = int(np.count_nonzero(kept) - np.count_nonzero(survives))
    traced = np.logical_or.reduceat(survives, first)  # a group with a segment left
    files = sorted_unique(dxt.ids[first][traced])
    sel = survives & (dxt.lengths > 0)
    direction = np.where(dxt.is_write[sel], WRITE, READ)
    ranks = np.ones(len(direction), np.int64)  # a segment is one rank's request
    return (dxt.starts[sel], dxt.ends[sel], dxt.lengths[sel], ranks, direction), files, dropped


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` for a 1-d array by one sort: numpy 2.4's unique costs
    ~10x as much on a few thousand record ids."""
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


def _members(values: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """``np.isin(values, distinct)`` for sorted, non-empty, distinct values, by binary search."""
    at = np.minimum(np.searchsorted(distinct, values), len(distinct) - 1)
    found: np.ndarray = distinct[at] == values
    return found


def heatmap_signal(heatmaps: F.HeatmapRecords | None) -> HeatmapSignal | None:
    """The POSIX and STDIO heatmap records summed into one series per direction.

    Records with different bin widths are put on the coarsest width (the
    runtime's widths are power-of-two multiples of each other, so a finer bin
    falls whole into one coarse bin: the one holding its centre). A record
    with a negative bin is corrupt and left out, like a record with negative
    bytes (SPEC 3.1).
    """
    if heatmaps is None:
        return None
    row = heatmaps.record_of_bin()
    negative = (heatmaps.write_bins < 0) | (heatmaps.read_bins < 0)
    corrupt = np.bincount(row, weights=negative, minlength=len(heatmaps.nbins)) > 0
    used = np.isin(heatmaps.apis, HEATMAP_APIS) & ~corrupt
    if not used.any():
        return None
    widths = heatmaps.bin_seconds
    coarse = float(widths[used].max())
    sel = used[row]
    within = np.arange(len(row)) - np.repeat(heatmaps.offsets, heatmaps.nbins)
    target = np.floor((within[sel] + 0.5) * (widths[row[sel]] / coarse)).astype(np.int64)
    size = int(target.max()) + 1 if len(target) else 0
    return HeatmapSignal(
        bin_seconds=coarse,
        read=np.bincount(target, weights=heatmaps.read_bins[sel], minlength=size),
        write=np.bincount(target, weights=heatmaps.write_bins[sel], minlength=size),
    )
