"""Darshan logs built byte by byte with struct, for reader tests.

Deliberately independent of mosaic.darshan (no shared tables): if the
reader's layout knowledge were wrong, logs built from the same tables would
hide it. Layouts follow darshan's headers (see docs/darshan-format.md).
"""

import bz2
import gzip
import struct
import zlib

MAGIC = 6567223
COMPRESSORS = {0: lambda b: zlib.compress(b, 6), 1: bz2.compress, 2: lambda b: b}
SHAPES = {
    ("POSIX", 4): (69, 17),
    ("POSIX", 3): (64, 17),
    ("POSIX", 1): (68, 15),
    ("STDIO", 2): (14, 15),
    ("STDIO", 1): (13, 15),
    ("MPIIO", 3): (51, 17),
}
# Stored module ids per format generation.
STORED = {
    "3.41": {"POSIX": 1, "MPIIO": 2, "STDIO": 9, "DXT_POSIX": 10, "DXT_MPIIO": 11},
    "3.21": {"POSIX": 1, "MPIIO": 2, "STDIO": 8, "DXT_POSIX": 9, "DXT_MPIIO": 10},
    "3.10": {"POSIX": 1, "MPIIO": 2, "STDIO": 7, "DXT_POSIX": 8, "DXT_MPIIO": 9},
    "3.00": {"POSIX": 1, "MPIIO": 2},
}


def record(module, version, rid, rank, counters=None, fcounters=None, e="<"):
    """One fixed-size record; counters/fcounters given as {index: value}."""
    n_c, n_f = SHAPES[(module, version)]
    c, f = [0] * n_c, [0.0] * n_f
    for i, v in (counters or {}).items():
        c[i] = v
    for i, v in (fcounters or {}).items():
        f[i] = v
    return struct.pack(f"{e}Qq{n_c}q{n_f}d", rid, rank, *c, *f)


def dxt_record(rid, rank, writes, reads, e="<"):
    """writes/reads: lists of (offset, length, start, end) (DXT_POSIX v1, DXT_MPIIO v1-v2),
    or of (offset, length, start, end, pthread id) (DXT_POSIX v2, DXT_MPIIO v3)."""
    head = struct.pack(e + "Qqq", rid, rank, rank) + b"host".ljust(64, b"\0")
    head += struct.pack(e + "qq", len(writes), len(reads))
    return head + b"".join(struct.pack(e + ("qqddQ" if len(s) == 5 else "qqdd"), *s) for s in writes + reads)


def job_region(
    version,
    uid=1000,
    start=1_600_000_000,
    end=1_600_000_100,
    nprocs=4,
    jobid=42,
    cmdline="/bin/app -x 1",
    mounts=(("/scratch", "lustre"), ("/", "ext4")),
    metadata="lib_ver=3.4.1\nh=romio\n",
    e="<",
    start_nsec=0,
    end_nsec=0,
):
    if version >= "3.41":
        head = struct.pack(e + "7q", uid, start, start_nsec, end, end_nsec, nprocs, jobid)
    else:
        head = struct.pack(e + "5q", uid, start, end, nprocs, jobid)
    tail = "".join(f"\n{fs}\t{mnt}" for mnt, fs in mounts)
    return head + metadata.encode().ljust(1024, b"\0") + (cmdline + tail).encode() + b"\0"


def names_region(names, version, e="<"):
    if version < "3.10":
        return b"".join(struct.pack(e + "QI", i, len(n)) + n.encode() for i, n in names.items())
    return b"".join(struct.pack(e + "Q", i) + n.encode() + b"\0" for i, n in names.items())


def v3_log(version="3.41", e="<", comp=0, job=None, names=None, modules=None, partial_bits=0, streams=1):
    """modules: {"POSIX": (module version, [record bytes...]), "DXT_POSIX": (2, [...])}.

    Each region is split into ``streams`` independently compressed streams.
    """
    job = job if job is not None else job_region(version, e=e)
    names = names or {}
    modules = modules or {}
    size, slots = (1328, 64) if version >= "3.41" else (360, 16)
    pack = COMPRESSORS[comp]

    def region(parts):
        chunks = [parts[i::streams] for i in range(streams)] if streams > 1 else [parts]
        return b"".join(pack(b"".join(c)) for c in chunks if c)

    job_z = pack(job)
    names_z = region([names_region({i: n}, version, e) for i, n in names.items()])
    blobs, offset = [], size + len(job_z) + len(names_z)
    mod_map, mod_ver = [(0, 0)] * slots, [0] * slots
    gen = (
        "3.41"
        if version >= "3.41"
        else "3.21"
        if version >= "3.20"
        else "3.10"
        if version >= "3.10"
        else "3.00"
    )
    for name, (ver, recs) in sorted(modules.items(), key=lambda kv: STORED[gen][kv[0]]):
        blob = region(recs)
        sid = STORED[gen][name]
        mod_map[sid], mod_ver[sid] = (offset, len(blob)), ver
        blobs.append(blob)
        offset += len(blob)
    name_map = (size + len(job_z), len(names_z)) if names_z else (0, 0)
    head = version.encode().ljust(8, b"\0") + struct.pack(e + "q", MAGIC)
    if version >= "3.41":
        head += struct.pack(e + "B7xQ", comp, partial_bits)
    else:
        head += struct.pack(e + "B3xI", comp, partial_bits)
    head += struct.pack(e + "QQ", *name_map)
    head += b"".join(struct.pack(e + "QQ", *m) for m in mod_map)
    head += struct.pack(e + f"{slots}I", *mod_ver)
    assert len(head) == size
    return head + job_z + names_z + b"".join(blobs)


# POSIX fcounter index of each timestamp MOSAIC reads (darshan-posix-log-format.h), written
# here from the header, not from mosaic/darshan/formats.py: the tests check the reader against it.
POSIX_TIMES = dict(
    open_start=0, read_start=1, write_start=2, close_start=3, open_end=4, read_end=5, write_end=6, close_end=7
)


def posix_v4(rid, rank=0, opens=1, seeks=0, bytes_read=0, bytes_written=0, times=None, e="<"):
    """POSIX v4 record from the fields MOSAIC uses; times: canonical name -> seconds."""
    return record(
        "POSIX",
        4,
        rid,
        rank,
        {0: opens, 5: seeks, 14: bytes_read, 15: bytes_written},
        {POSIX_TIMES[k]: v for k, v in (times or {}).items()},
        e,
    )


def legacy_log(
    version="2.06",
    e="<",
    uid=7,
    start=1_300_000_000,
    end=1_300_000_009,
    nprocs=2,
    jobid=99,
    cmdline="/bin/old -i in",
    mounts=((5, "lustre", "/scratch"), (1, "ext3", "/")),
    records=(),
    wrap=None,
):
    """A 2.x log. records: (hash, rank, suffix, {counter: v}, {fcounter: v})."""
    head = version.encode().ljust(8, b"\0")
    head += struct.pack(e + "6q", MAGIC, uid, start, end, nprocs, jobid)
    head += b"lib_ver=2.2.9\n".ljust(1024, b"\0")
    head += (cmdline + "".join(f"\n{d}\t{fs}\t{m}" for d, fs, m in mounts)).encode()
    head = head.ljust(4096, b"\0")
    body = b""
    for rid, rank, suffix, counters, fcounters in records:
        c, f = [0] * 144, [0.0] * 18
        for i, v in counters.items():
            c[i] = v
        for i, v in fcounters.items():
            f[i] = v
        body += struct.pack(e + "Qq16s144q18d", rid, rank, suffix.encode(), *c, *f)
    raw = head + body
    if wrap == "gz":
        return gzip.compress(raw)
    if wrap == "bz2":
        return bz2.compress(raw)
    return raw
