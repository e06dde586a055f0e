"""Darshan logs written by mosaic's own writer, shared by test folders.

``with_heatmaps`` builds a log with HEATMAP records; ``dxt_log`` one file's
POSIX record with DXT segments (``dxt_region`` sizes the region it inflates to);
``longest_run_log`` the longest run a log may have.
"""

import numpy as np

from mosaic.darshan import formats as F
from mosaic.darshan.writer import heatmap_records, record_id, write_log


def app_job(seconds: float, nprocs: int) -> F.Job:
    """Job 2 of uid 1, ``/bin/app`` on ``nprocs`` ranks for ``seconds`` (run time from start and end)."""
    return F.Job(
        uid=1,
        job_id=2,
        start=1.6e9,
        end=1.6e9 + seconds,
        run_time=0.0,
        nprocs=nprocs,
        cmdline="/bin/app",
        mounts=[("/scratch", "lustre")],
    )


# Rows (API, rank, bin width, write bins, read bins); STDIO has fewer, wider bins.
ROWS = [
    ("heatmap:POSIX", 0, 0.1, [1, 2, 3], [0, 0, 1]),
    ("heatmap:POSIX", 5, 0.1, [4, 5, 1 << 40], [2, 0, 0]),
    ("heatmap:STDIO", 0, 0.2, [7, 8], [3, 3]),
    ("heatmap:MPIIO", 3, 0.1, [9, 10, 11], [5, 5, 5]),
]


def make_log() -> F.DarshanLog:
    """One POSIX v4 record of 1 MB written by rank 0 between 1 s and 2 s."""
    n_c, n_f = F.RECORD_SHAPES[(F.POSIX, 4)]
    counters, fcounters = np.zeros((1, n_c), np.int64), np.zeros((1, n_f))
    counters[0, 15], fcounters[0, [2, 6]] = 1 << 20, (1.0, 2.0)
    path = "/scratch/out"
    job = app_job(seconds=10, nprocs=8)
    posix = F.ModuleRecords(
        F.POSIX, 4, np.array([record_id(path)], np.uint64), np.zeros(1, np.int64), counters, fcounters
    )
    return F.DarshanLog(job, {record_id(path): path}, {F.POSIX: posix})


def with_heatmaps(rows=ROWS):
    log = make_log()
    log.heatmaps = heatmap_records(*zip(*rows))
    return log


def heatmap_log(bins: int) -> bytes:
    """1 MB written in [1, 2] s of a 10 s run, and a POSIX HEATMAP record of ``bins`` bins
    (16 bytes each once inflated; they compress to almost nothing): with millions of
    bins, a log of a few hundred KB that needs hundreds of MB to analyse."""
    heatmap = [("heatmap:POSIX", 0, 10.0 / bins, np.ones(bins, np.int64), np.zeros(bins, np.int64))]
    return write_log(with_heatmaps(heatmap), level=1)


def dxt_log(segments: int, dxt_version: int = 2, mpiio_segments: int = 0) -> bytes:
    """One file's POSIX record and its DXT_POSIX segments (in ``dxt_version``), with
    ``mpiio_segments`` of them as DXT_MPIIO segments too (its newest version)."""
    path = "/scratch/big.dat"
    rid = record_id(path)
    rng = np.random.default_rng(0)
    starts = np.sort(rng.random(segments) * 100)
    dxt = F.DxtSegments(
        ids=np.full(segments, rid, np.uint64),
        ranks=np.arange(segments) % 4,
        is_write=np.ones(segments, bool),
        offsets=np.arange(segments) * 4096,
        lengths=np.full(segments, 4096),
        starts=starts,
        ends=starts + 1e-3,
    )
    n_c, n_f = F.RECORD_SHAPES[(F.POSIX, 4)]
    posix = F.ModuleRecords(
        F.POSIX,
        4,
        np.array([rid], np.uint64),
        np.array([-1]),
        np.zeros((1, n_c), np.int64),
        np.zeros((1, n_f)),
    )
    job = app_job(seconds=100, nprocs=4)
    mpiio = F.DxtSegments(**{k: v[:mpiio_segments] for k, v in vars(dxt).items()}) if mpiio_segments else None
    log = F.DarshanLog(job, {rid: path}, {F.POSIX: posix}, dxt_posix=dxt, dxt_mpiio=mpiio)
    return write_log(log, level=1, dxt_versions={F.DXT_POSIX: dxt_version})


def dxt_region(module: int, version: int, segments: int) -> int:
    """Inflated bytes of a DXT region holding ``segments`` over 4 ranks (one record each)."""
    return 4 * F.dxt_header_dtype().itemsize + segments * F.dxt_segment_dtype(module, version).itemsize


def longest_run_log() -> bytes:
    """One POSIX record of a 399-day run (max_run_time_seconds is 400): 1 GiB written
    in its first hours, ten opens over 5 days, their closes over 2 days."""
    n_c, n_f = F.RECORD_SHAPES[(F.POSIX, 4)]
    counters, fcounters = np.zeros((1, n_c), np.int64), np.zeros((1, n_f))
    counters[0, [0, 15]] = (10, 1 << 30)  # opens, bytes written
    fcounters[0, [0, 4, 2, 6, 3, 7]] = (5.5, 432000.7, 100.0, 5000.0, 3.0e7, 3.02e7)
    path = "/scratch/out"
    ids = np.array([record_id(path)], np.uint64)
    posix = F.ModuleRecords(F.POSIX, 4, ids, np.zeros(1, np.int64), counters, fcounters)
    return write_log(F.DarshanLog(app_job(399 * 86400, 8), {record_id(path): path}, {F.POSIX: posix}))
