"""From built records to log bytes: job facts, on-disk format, and broken logs.

One place decides how a synthetic log is serialized (format version, module
versions, byte order, compression, streams) and how an invalid log is made
for each eviction reason of SPEC 3.1, so the scenario corpus and the year
profile stay consistent.
"""

from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from mosaic.darshan import formats as F
from mosaic.darshan.reader import Header
from mosaic.darshan.times import TIME_INDEX
from mosaic.darshan.writer import ZLIB_LEVEL, write_legacy_log, write_log
from mosaic.errors import Reason
from mosaic.synth.records import FileTable, to_darshan_log

INVALID_REASONS = (
    Reason.UNREADABLE,
    Reason.TRUNCATED,
    Reason.CORRUPT_STREAM,
    Reason.UNSUPPORTED_VERSION,
    Reason.BAD_JOB,
    Reason.NO_IO_MODULES,
)
UNSUPPORTED_VERSION = "3.99"
YEAR_START = 1546300800  # 2019-01-01T00:00:00Z: the Blue Waters year of the paper
MOUNTS = [("/scratch", "lustre"), ("/projects", "lustre"), ("/u", "lustre"), ("/", "rootfs")]
LIB_VERSION = {"3.10": "3.1.3", "3.21": "3.2.1", "3.41": "3.4.4", "2.05": "2.3.0", "2.06": "2.3.1"}


@dataclass(frozen=True)
class Format:
    """How one log is written."""

    version: str = "3.10"
    posix: int = 3
    stdio: int = 1
    big_endian: bool = False
    compression: str = "zlib"  # 3.x: zlib / bzip2 / none; 2.x: none / gzip / bzip2
    streams: int = 1

    @property
    def legacy(self) -> bool:
        return self.version.startswith("2.")

    @property
    def suffix(self) -> str:
        if self.legacy and self.compression != "none":
            return ".darshan." + ("gz" if self.compression == "gzip" else "bz2")
        return ".darshan"

    def describe(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "posix": self.posix,
            "stdio": self.stdio,
            "big_endian": self.big_endian,
            "compression": self.compression,
            "streams": self.streams,
        }


# Darshan 2.x logs were mostly gzipped files (.darshan.gz).
LEGACY_COMPRESSIONS, LEGACY_P = ["gzip", "none", "bzip2"], [0.7, 0.15, 0.15]
# (weight, version, posix, stdio): the mix of the Blue Waters era (mostly 3.1.x).
FORMAT_MIX = (
    (0.50, "3.10", 3, 1),
    (0.26, "3.10", 4, 2),
    (0.05, "3.21", 4, 2),
    (0.05, "3.41", 4, 2),
    (0.08, "2.06", 0, 0),
    (0.06, "2.05", 0, 0),
)


def choose_format(
    rng: np.random.Generator,
    allow_legacy: bool = True,
    exotic: float = 0.1,
    versions: tuple[str, ...] | None = None,
) -> Format:
    """A format from FORMAT_MIX (only ``versions`` if given); ``exotic``: chance of
    big-endian, bzip2 / none, many streams."""
    mix = [
        m
        for m in FORMAT_MIX
        if (allow_legacy or not m[1].startswith("2.")) and (versions is None or m[1] in versions)
    ]
    weights = np.array([m[0] for m in mix])
    _, version, posix, stdio = mix[rng.choice(len(mix), p=weights / weights.sum())]
    if version.startswith("2."):
        return Format(version, 0, 0, False, str(rng.choice(LEGACY_COMPRESSIONS, p=LEGACY_P)), 1)
    odd = rng.random(4) < exotic
    return Format(
        version,
        posix,
        stdio,
        bool(odd[0]),
        str(rng.choice(["bzip2", "none"])) if odd[1] else "zlib",
        int(rng.integers(2, 9)) if odd[2] else 1,
    )


def make_job(
    uid: int,
    job_id: int,
    start: int,
    run_time: float,
    nprocs: int,
    cmdline: str,
    fmt: Format,
    partial: bool = False,
) -> F.Job:
    """Job facts whose run time, by the format's rule (SPEC 2), is ``run_time``."""
    whole_seconds = fmt.version != "3.41"
    end = start + run_time - (1 if whole_seconds else 0)
    return F.Job(
        uid=uid,
        job_id=job_id,
        start=float(start),
        end=float(end),
        run_time=run_time,
        nprocs=nprocs,
        cmdline=cmdline,
        mounts=list(MOUNTS),
        metadata={"lib_ver": LIB_VERSION[fmt.version], "h": "romio_no_indep_rw=true"},
        version=fmt.version,
        partial=partial,
    )


def darshan_log(
    job: F.Job,
    table: FileTable,
    fmt: Format,
    id_cache: dict[str, int] | None = None,
    dxt: int = 0,
    dxt_busy: float = 1.0,
) -> F.DarshanLog:
    """The DarshanLog of ``table`` with the module versions of ``fmt``.

    ``dxt``: DXT_POSIX requests per record and direction (3.x only; 0: none).
    """
    # 2.x: POSIX v4 only carries the canonical values; the 2.x writer keeps what 2.x has.
    # MPI-IO rows (files lost from a partial POSIX module) in the version of that era.
    versions = (
        {F.POSIX: 4}
        if fmt.legacy
        else {F.POSIX: fmt.posix, F.STDIO: fmt.stdio, F.MPIIO: 2 if fmt.posix == 3 else 3}
    )
    return to_darshan_log(job, table, versions, id_cache, 0 if fmt.legacy else dxt, dxt_busy)


def write(log: F.DarshanLog, fmt: Format, level: int = ZLIB_LEVEL) -> bytes:
    """Bytes of ``log`` in ``fmt``."""
    if fmt.legacy:
        return write_legacy_log(log, fmt.version, fmt.compression, level)
    return write_log(log, fmt.version, fmt.big_endian, fmt.compression, fmt.streams, level=level)


def scaled(log: F.DarshanLog, job: F.Job, scale: float) -> F.DarshanLog:
    """``log`` for another run: new job facts, byte counters times ``scale`` (rounded down)."""
    modules = {}
    for mid, mod in log.modules.items():
        counters = mod.counters.copy()
        cidx = F.CANONICAL_INDEX[(mid, mod.version)][0]
        for name in ("bytes_read", "bytes_written"):
            counters[:, cidx[name]] = np.floor(counters[:, cidx[name]] * scale)
        if (mid, mod.version) in TIME_INDEX:  # a shared record's bytes of its fastest / slowest rank
            for name in ("fastest_rank_bytes", "slowest_rank_bytes"):
                at = TIME_INDEX[(mid, mod.version)][0][name]
                counters[:, at] = np.floor(counters[:, at] * scale)
        modules[mid] = F.ModuleRecords(mid, mod.version, mod.ids, mod.ranks, counters, mod.fcounters)
    dxt, heatmaps = log.dxt_posix, log.heatmaps
    if dxt is not None:
        dxt = dataclasses.replace(dxt, lengths=np.floor(dxt.lengths * scale).astype(np.int64))
    if heatmaps is not None:
        heatmaps = dataclasses.replace(
            heatmaps,
            write_bins=np.floor(heatmaps.write_bins * scale).astype(np.int64),
            read_bins=np.floor(heatmaps.read_bins * scale).astype(np.int64),
        )
    return F.DarshanLog(
        job, log.names, modules, dxt_posix=dxt, heatmaps=heatmaps, present_modules=log.present_modules
    )


def invalid_log(
    reason: str, log: F.DarshanLog, fmt: Format, rng: np.random.Generator, level: int = ZLIB_LEVEL
) -> bytes:
    """Bytes of ``log`` broken so that SPEC 3.1 evicts it with ``reason`` (``fmt``: 3.x).

    ``log`` holds the module versions of ``fmt`` (see :func:`darshan_log`).
    """
    if reason == Reason.BAD_JOB:
        job = log.job
        broken = dict(end=job.start - float(rng.integers(1, 3600))) if rng.random() < 0.5 else dict(nprocs=0)
        return write(dataclasses.replace(log, job=dataclasses.replace(job, **broken)), fmt, level)
    if reason == Reason.NO_IO_MODULES:
        posix = log.modules[F.POSIX]
        if rng.random() < 0.5:  # MPI-IO records only: traffic Darshan saw, but no POSIX/STDIO
            n_c, n_f = F.RECORD_SHAPES[(F.MPIIO, 3)]
            n = len(posix.ids)
            mpiio = F.ModuleRecords(
                F.MPIIO, 3, posix.ids, posix.ranks, np.zeros((n, n_c), np.int64), np.zeros((n, n_f))
            )
            log = dataclasses.replace(log, modules={F.MPIIO: mpiio})
        else:
            log = dataclasses.replace(log, names={}, modules={})
        return write_log(log, fmt.version, fmt.big_endian, "zlib", level=level)
    if reason == Reason.UNREADABLE:
        kind = rng.integers(3)
        if kind == 0:
            return b""
        if kind == 1:
            return rng.integers(0, 256, int(rng.integers(1, 4096)), dtype=np.uint8).tobytes()
        data = bytearray(write(log, fmt, level))
        data[8:16] = struct.pack("<q", F.MAGIC + 1)  # bad magic in either byte order
        return bytes(data)
    compressed = (
        fmt
        if fmt.compression != "none"
        else Format(fmt.version, fmt.posix, fmt.stdio, fmt.big_endian, "zlib", fmt.streams)
    )
    data = bytearray(write(log, compressed, level))
    if reason == Reason.UNSUPPORTED_VERSION:
        data[:8] = UNSUPPORTED_VERSION.encode().ljust(8, b"\0")
        return bytes(data)
    # The POSIX region, or as often the DXT_POSIX one where there is one (its
    # segment layout depends on the DXT version the format writes: v1, or v2 in 3.41).
    regions = Header(bytes(data)).modules
    target = F.DXT_POSIX if F.DXT_POSIX in regions and rng.random() < 0.5 else F.POSIX
    offset, length = regions[target][:2]
    if reason == Reason.TRUNCATED:
        return bytes(data[: offset + int(rng.integers(0, max(length - 1, 1)))])
    if reason == Reason.CORRUPT_STREAM:
        garbage = rng.integers(0, 256, length, dtype=np.uint8)
        garbage[0] = 0xFF  # neither a zlib nor a bzip2 stream header
        data[offset : offset + length] = garbage.tobytes()
        return bytes(data)
    raise ValueError(f"unknown eviction reason {reason!r}")
