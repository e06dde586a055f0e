"""Synthetic file records: one row per (file, rank), in canonical fields.

Scenarios produce these rows; :func:`to_darshan_log` turns them into the
:class:`~mosaic.darshan.formats.DarshanLog` the writer serializes, placing
each canonical field at its index for the chosen module version. Keeping
the rows canonical lets the ground truth be computed from exactly what was
written, whatever the format.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from mosaic.darshan import formats as F
from mosaic.darshan.times import TIME_FIELDS, TIME_INDEX
from mosaic.darshan.writer import darshan_hash

DXT_REQUESTS = 4  # traced requests per record and direction in logs with DXT

# Time counters (mosaic.darshan.times): 0 unless :func:`add_times` fills them; all but the
# two variance counters, which have no column (they stay 0).
TIME_COLUMNS = TIME_FIELDS[: TIME_FIELDS.index("slowest_rank_time") + 1]
META_SECONDS = 1e-4  # seconds per open in F_META_TIME (a parallel file system's open: ~0.1 ms)

FILE_DTYPE = np.dtype(
    [("name", "i8"), ("rank", "i8"), ("module", "i8")]
    + [(f, "i8") for f in F.CANONICAL_COUNTERS]
    + [(f, "f8") for f in F.CANONICAL_FCOUNTERS]
    + [(f, "f8") for f in TIME_COLUMNS]
    + [("rank_bytes", "i8")]
)


@dataclass
class FileTable:
    """Rows of FILE_DTYPE plus the path list their ``name`` column indexes."""

    rows: list[np.ndarray] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict)

    def name(self, path: str) -> int:
        """Index of ``path`` in :attr:`paths`, adding it on first use."""
        if path not in self._index:
            self._index[path] = len(self.paths)
            self.paths.append(path)
        return self._index[path]

    def add(self, names: np.ndarray, ranks: ArrayLike, module: int = F.POSIX, **columns: ArrayLike) -> None:
        """Append one row per element of ``names`` (path indices); absent columns are 0."""
        rows = np.zeros(len(names), FILE_DTYPE)
        rows["name"], rows["rank"], rows["module"] = names, ranks, module
        for key, value in columns.items():
            rows[key] = value
        self.rows.append(rows)

    def table(self) -> np.ndarray:
        return np.concatenate(self.rows) if self.rows else np.zeros(0, FILE_DTYPE)


def add_times(
    rows: np.ndarray, nprocs: int, busy: float = 1.0, meta_seconds: float = META_SECONDS
) -> np.ndarray:
    """``rows`` with their time counters: the ranks are I/O-bound in their intervals.

    A rank spends ``busy`` of a direction's span (first start to last end, where
    it moved bytes) in that direction's calls, so its bandwidth is bytes over that
    time, and ``meta_seconds`` per open. A shared record (rank -1) sums its
    ``nprocs`` ranks, each moving an equal part; its slowest and fastest rank
    (rank 0) spend the per-rank total. The truth's busy time is the span, so
    bounding busy time by the time spent never cuts below it (busy 1).
    """
    out = rows.copy()
    shared = out["rank"] < 0
    ranks = np.where(shared, max(nprocs, 1), 1).astype(float)
    per_rank_meta = out["opens"] * meta_seconds / ranks
    spent = []
    for column, prefix in (("bytes_read", "read"), ("bytes_written", "write")):
        span = np.where(out[column] > 0, np.maximum(out[f"{prefix}_end"] - out[f"{prefix}_start"], 0.0), 0.0)
        per_rank = busy * span
        out[f"{prefix}_time"] = per_rank * ranks
        calls = out["reads" if prefix == "read" else "writes"] / ranks
        out[f"max_{prefix}_time"] = per_rank / np.maximum(calls, 1.0)
        spent.append(per_rank)
    out["meta_time"] = out["opens"] * meta_seconds
    total = spent[0] + spent[1] + per_rank_meta
    out["slowest_rank_time"] = np.where(shared, total, 0.0)
    out["fastest_rank_time"] = out["slowest_rank_time"]
    out["rank_bytes"] = np.where(
        shared, (out["bytes_read"] + out["bytes_written"]) // ranks.astype(np.int64), 0
    )
    return out


def module_records(rows: np.ndarray, ids: np.ndarray, module: int, version: int) -> F.ModuleRecords:
    """ModuleRecords of ``module``/``version`` holding ``rows``' canonical values."""
    n_c, n_f = F.RECORD_SHAPES[(module, version)]
    cidx, fidx = F.CANONICAL_INDEX[(module, version)]
    counters = np.zeros((len(rows), n_c), np.int64)
    fcounters = np.zeros((len(rows), n_f), np.float64)
    for name, i in cidx.items():
        if isinstance(i, tuple):  # a sum of counters (MPI-IO independent + collective ...)
            if not i:
                continue
            i = i[0]
        counters[:, i] = rows[name]
    for name, i in fidx.items():
        fcounters[:, i] = rows[name]
    if (module, version) in TIME_INDEX:
        tcidx, tfidx = TIME_INDEX[(module, version)]
        for name, i in tfidx.items():
            if name in TIME_COLUMNS:
                fcounters[:, i] = rows[name]
        shared = rows["rank"] < 0
        for name in ("fastest_rank_bytes", "slowest_rank_bytes"):
            counters[:, tcidx[name]] = np.where(shared, rows["rank_bytes"], 0)
    return F.ModuleRecords(module, version, ids[rows["name"]], rows["rank"].copy(), counters, fcounters)


def dxt_segments(
    rows: np.ndarray, ids: np.ndarray, requests: int = DXT_REQUESTS, busy: float = 1.0
) -> F.DxtSegments:
    """DXT_POSIX segments of the POSIX rows: per direction moved, ``requests`` equal
    requests, one at the start of each of ``requests`` equal slots of [start, end],
    lasting ``busy`` of its slot (1: back to back, bytes spread as the record says).
    """
    parts = []
    for is_write, column, prefix in ((False, "bytes_read", "read"), (True, "bytes_written", "write")):
        sel = rows[(rows["module"] == F.POSIX) & (rows[column] > 0)]
        share = np.arange(requests) / requests
        width = (sel[f"{prefix}_end"] - sel[f"{prefix}_start"])[:, None]
        starts = sel[f"{prefix}_start"][:, None] + width * share
        lengths = np.repeat((sel[column] // requests)[:, None], requests, axis=1)
        lengths[:, 0] += sel[column] - lengths.sum(axis=1)
        parts.append(
            (
                np.repeat(ids[sel["name"]], requests),
                np.repeat(sel["rank"], requests),
                np.full(lengths.size, is_write),
                (np.cumsum(lengths, 1) - lengths).ravel(),
                lengths.ravel(),
                starts.ravel(),
                (starts + busy * width / requests).ravel(),
            )
        )
    return F.DxtSegments(*(np.concatenate(column) for column in zip(*parts)))


def to_darshan_log(
    job: F.Job,
    table: FileTable,
    module_versions: dict[int, int],
    id_cache: dict[str, int] | None = None,
    dxt: int = 0,
    dxt_busy: float = 1.0,
) -> F.DarshanLog:
    """The DarshanLog holding ``table``'s rows; modules without a version are left out.

    ``dxt`` > 0: DXT_POSIX segments of every POSIX record (:func:`dxt_segments`).
    """
    rows = table.table()
    ids = path_ids(table.paths, id_cache)
    modules = {}
    for module, version in module_versions.items():
        sel = rows[rows["module"] == module]
        if len(sel):
            modules[module] = module_records(sel, ids, module, version)
    used = np.unique(
        np.concatenate([rows["name"][rows["module"] == m] for m in modules])
        if modules
        else np.zeros(0, np.int64)
    )
    names = {int(ids[i]): table.paths[i] for i in used}
    segments = dxt_segments(rows, ids, dxt, dxt_busy) if dxt and F.POSIX in modules else None
    return F.DarshanLog(job, names, modules, dxt_posix=segments, present_modules=tuple(sorted(modules)))


def path_ids(paths: list[str], cache: dict[str, int] | None = None) -> np.ndarray:
    """Record ids of ``paths``; ``cache`` remembers ids of paths seen in earlier logs."""
    if cache is None:
        return darshan_hash(paths)
    missing = [p for p in paths if p not in cache]
    if missing:
        cache.update(zip(missing, darshan_hash(missing).tolist()))
    return np.fromiter((cache[p] for p in paths), np.uint64, len(paths))
