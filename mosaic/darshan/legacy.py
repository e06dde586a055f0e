"""Darshan 2.x logs (formats 2.05 / 2.06), which pydarshan cannot read.

The whole file is one job block of 4,096 bytes (job struct, command line,
mount table) followed by fixed-size file records; the reader has already
removed any gzip / bzip2 wrapper. Records are converted to the POSIX v4
layout so that everything downstream sees one kind of POSIX record.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from mosaic.darshan import formats as F
from mosaic.darshan.formats import DarshanLog, Job, ModuleRecords
from mosaic.darshan.job import parse_metadata, validate_job
from mosaic.errors import LogError, Reason

TARGET_VERSION = 4  # POSIX module version the records are converted to


@dataclass
class LegacyRecords:
    """A 2.x log's job and the columns of its records the analysis reads, copied out
    of the log's bytes (a tenth of a record): the bytes can go before the POSIX v4
    tables are built (a 600 MB log of 473,000 records then peaks at its bytes alone,
    not at its bytes plus 325 MB of tables)."""

    job: Job
    devices: dict[int, tuple[str, str]]  # device -> (mount point, fs type)
    ids: np.ndarray
    ranks: np.ndarray
    counters: np.ndarray  # int64, COPIED_COUNTERS order
    times: np.ndarray  # float64, LEGACY_INDEX["fcounters"] order, as stored
    suffixes: np.ndarray  # the name suffix field, bytes
    device: np.ndarray
    # CP_F_POSIX_READ_TIME, _WRITE_TIME, _META_TIME, CP_F_SLOWEST_RANK_TIME (float64 [n, 4])
    # and CP_SIZE_READ_* then CP_SIZE_WRITE_* (int64 [n, 20]): SPEC 3.9's time and sizes.
    perf_times: np.ndarray | None = None
    perf_sizes: np.ndarray | None = None


# The counters the analysis reads; a 2.x record has ~150.
COPIED_COUNTERS = ("opens", "seeks", "reads", "writes", "bytes_read", "bytes_written")


def legacy_records(raw: bytes | bytearray) -> LegacyRecords:
    """The job and the record columns of a 2.x log; raises LogError for a bad one."""
    version = raw[:8].split(b"\0", 1)[0].decode("ascii", "replace")
    if version not in F.LEGACY_VERSIONS:
        raise LogError(Reason.UNSUPPORTED_VERSION, f"format {version!r}")
    if len(raw) < F.LEGACY_JOB_RECORD_SIZE:
        raise LogError(Reason.TRUNCATED, f"job block needs {F.LEGACY_JOB_RECORD_SIZE} bytes")
    if struct.unpack_from("<q", raw, 8)[0] == F.MAGIC:
        e = "<"
    elif struct.unpack_from(">q", raw, 8)[0] == F.MAGIC:
        e = ">"
    else:
        raise LogError(Reason.UNREADABLE, "bad magic number")
    fields = dict(zip(F.LEGACY_JOB_FIELDS, struct.unpack_from(e + "6q", raw, 8)))
    struct_end = 8 + 8 * len(F.LEGACY_JOB_FIELDS) + F.JOB_METADATA_LEN
    exe, devices = _exe_and_devices(raw[struct_end : F.LEGACY_JOB_RECORD_SIZE])
    job = Job(
        uid=fields["uid"],
        job_id=fields["jobid"],
        start=float(fields["start_sec"]),
        end=float(fields["end_sec"]),
        run_time=float(fields["end_sec"] - fields["start_sec"] + 1),
        nprocs=fields["nprocs"],
        cmdline=exe,
        mounts=sorted(set(devices.values()), key=lambda m: -len(m[0])),
        metadata=parse_metadata(raw[8 + 8 * len(F.LEGACY_JOB_FIELDS) : struct_end]),
        version=version,
    )
    validate_job(job)

    body = memoryview(raw)[F.LEGACY_JOB_RECORD_SIZE :]
    dtype = F.legacy_record_dtype(e == ">")
    if len(body) % dtype.itemsize:
        raise LogError(Reason.TRUNCATED, "last file record cut short")
    rec = np.frombuffer(body, dtype)
    if not len(rec):
        raise LogError(Reason.NO_IO_MODULES, "no file records")
    src_c, src_f = F.LEGACY_INDEX["counters"], F.LEGACY_INDEX["fcounters"]
    counters = rec["counters"][:, [src_c[name] for name in COPIED_COUNTERS]].astype(np.int64)
    for column, name in enumerate(COPIED_COUNTERS):  # stream calls are calls (a 3.x STDIO record's)
        if name in F.LEGACY_STREAM_COUNTERS:
            counters[:, column] += rec["counters"][:, F.LEGACY_STREAM_COUNTERS[name]]
    return LegacyRecords(  # copies only: nothing here keeps the log's bytes
        job=job,
        devices=devices,
        ids=rec["id"].astype(np.uint64),
        ranks=rec["rank"].astype(np.int64),
        counters=counters,
        times=rec["fcounters"][:, list(src_f.values())].astype(np.float64),
        suffixes=rec["name_suffix"].copy(),
        device=rec["counters"][:, src_c["device"]].astype(np.int64),
        perf_times=rec["fcounters"][:, list(_LEGACY_TIMES)].astype(np.float64),
        perf_sizes=rec["counters"][:, list(_LEGACY_SIZES)].astype(np.int64),
    )


_LP = F.LEGACY_PERF
_LEGACY_TIMES = (_LP.read_time, _LP.write_time, _LP.meta_time, _LP.slowest_rank_time)
assert _LP.size_read is not None and _LP.size_write is not None
_LEGACY_SIZES = tuple(range(_LP.size_read, _LP.size_read + F.SIZE_BUCKETS)) + tuple(
    range(_LP.size_write, _LP.size_write + F.SIZE_BUCKETS)
)


def legacy_log(records: LegacyRecords) -> DarshanLog:
    """The log of :func:`legacy_records`: one POSIX v4 module, names and mounts by record."""
    posix = _to_posix(records)
    names: dict[int, str] = {}
    for rid, suffix in zip(posix.ids.tolist(), records.suffixes.tolist()):
        names.setdefault(rid, suffix.split(b"\0", 1)[0].decode("utf-8", "replace"))
    devices = records.devices
    mounts = {rid: devices.get(d, ("", ""))[0] for rid, d in zip(posix.ids.tolist(), records.device.tolist())}
    return DarshanLog(
        job=records.job,
        names=names,
        modules={F.POSIX: posix},
        present_modules=(F.POSIX,),
        record_mounts=mounts,
    )


def _exe_and_devices(raw: bytes | bytearray) -> tuple[str, dict[int, tuple[str, str]]]:
    """Command line, then ``\\n<device>\\t<fstype>\\t<mount point>`` lines."""
    exe, *lines = raw.split(b"\0", 1)[0].decode("utf-8", "replace").split("\n")
    devices = {}
    for line in lines:
        parts = line.split("\t")
        if len(parts) == 3 and parts[0].lstrip("-").isdigit():
            devices[int(parts[0])] = (parts[2], parts[1])
    return exe, devices


def _to_posix(records: LegacyRecords) -> ModuleRecords:
    """2.x counters in the POSIX v4 layout (canonical fields only; the rest stay 0)."""
    n = len(records.ids)
    n_c, n_f = F.RECORD_SHAPES[(F.POSIX, TARGET_VERSION)]
    cidx, fidx = F.CANONICAL_INDEX[(F.POSIX, TARGET_VERSION)]
    counters = np.zeros((n, n_c), np.int64)
    fcounters = np.zeros((n, n_f), np.float64)
    raw_f, job_start = records.times, records.job.start
    # Some 2.x runtimes stored absolute epoch timestamps: make them job-relative.
    raw_f = np.where((raw_f >= job_start) & (job_start > 0), raw_f - job_start, raw_f)
    times = dict(zip(F.LEGACY_INDEX["fcounters"], raw_f.T))
    for column, name in enumerate(COPIED_COUNTERS):
        counters[:, cidx[name]] = records.counters[:, column]
    opened, closed = times["open"], times["close"]
    for name in ("open_start", "open_end"):
        fcounters[:, fidx[name]] = opened
    for name in ("close_start", "close_end"):
        fcounters[:, fidx[name]] = closed
    for direction in ("read", "write"):
        start, end = times[direction + "_start"], times[direction + "_end"]
        # Writers that kept only open/close times leave these 0: the file's
        # open..close interval is then the best bound on its traffic.
        missing = (start == 0) & (end == 0)
        fcounters[:, fidx[direction + "_start"]] = np.where(missing, opened, start)
        fcounters[:, fidx[direction + "_end"]] = np.where(missing, closed, end)
    target = F.PERF_INDEX[(F.POSIX, TARGET_VERSION)]
    if records.perf_times is not None:  # 2.x's POSIX times where POSIX v4 keeps them
        for column, at in enumerate((target.read_time, target.write_time, target.meta_time)):
            fcounters[:, at] = records.perf_times[:, column]
        fcounters[:, target.slowest_rank_time] = records.perf_times[:, 3]
    sizes, buckets = records.perf_sizes, F.SIZE_BUCKETS
    if sizes is not None and target.size_read is not None and target.size_write is not None:
        counters[:, target.size_read : target.size_read + buckets] = sizes[:, :buckets]
        counters[:, target.size_write : target.size_write + buckets] = sizes[:, buckets:]
    return ModuleRecords(
        module=F.POSIX,
        version=TARGET_VERSION,
        ids=records.ids,
        ranks=records.ranks,
        counters=counters,
        fcounters=fcounters,
    )
