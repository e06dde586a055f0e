"""Fast numpy reader for Darshan logs (formats 3.00-3.41, and 2.x via legacy).

Why not pydarshan: it is several times slower (benchmarks/README.md), cannot
read bzip2 or 2.x logs, and can crash the whole process on corrupt input. This reader validates every offset
and length against the file before slicing, caps decompressed sizes, and turns
any defect into a :class:`LogError` with one of SPEC 3.1's reasons.
"""

from __future__ import annotations

import bz2
import functools
import itertools
import operator
import os
import re
import struct
from array import array
from collections.abc import Callable, Iterator, Mapping
from typing import cast

import numpy as np
from zlib_ng import zlib_ng

from mosaic.config import DEFAULT
from mosaic.darshan import formats as F
from mosaic.darshan.archive import (
    BZIP2_MAGIC,
    GZIP_MAGIC,
    LEADING_BYTES,
    NOT_A_LOG,
    check_leading_bytes,
    read_bytes,
)
from mosaic.darshan.formats import DarshanLog, DxtSegments, Job, ModuleRecords
from mosaic.darshan.job import parse_exe_and_mounts, parse_metadata, validate_job
from mosaic.darshan.legacy import legacy_log, legacy_records
from mosaic.errors import LogError, Reason, internal_error

Raw = bytes | bytearray  # an inflated region: a bytearray when large (see inflate)
# gzip / bzip2 layers a log may be wrapped in: a .darshan.gz, and one more when such a
# file is posted with Content-Encoding: gzip (its name is the hash of the log inside both).
MAX_WRAPPERS = 2
# A log's first bytes, 2.x and 3.x alike: its version string, then the int64 magic number.
VERSION_BYTES, UNWRAPPED_HEAD_BYTES = 8, 16
# Compressed bytes handed to a decompressor at a time: small first (per-rank
# streams are small), doubling while a stream goes on.
INFLATE_CHUNK_FIRST, INFLATE_CHUNK_MAX = 1 << 10, 1 << 20
# Output asked of a decompressor at a time, and what a region may inflate to before its
# pieces are gathered in one growing buffer. A decompressor joins its output's blocks
# at the end of a call, and joining a region's parts copies them: a 434 MB POSIX
# region (647,000 records) peaked at 992 MB when inflated in one call, past a
# worker's 1 GiB bound. Below this size, one call and no copy, as before.
INFLATE_PIECE_BYTES = 32 << 20
# What a decompressor raises on a corrupt stream.
_INFLATE_ERRORS = (cast(type[Exception], zlib_ng.error), OSError, ValueError, EOFError)
# Modules whose records the reader decodes; every other module is only noted.
DECODED_MODULES = (F.POSIX, F.MPIIO, F.STDIO)
IO_MODULES = (F.POSIX, F.STDIO, F.DXT_POSIX)
# Variable-size DXT modules, decoded as their module version says (DXT_MPIIO for API
# users only: the analysis ignores MPI-IO traffic, SPEC 2).
DXT_MODULES = (F.DXT_POSIX, F.DXT_MPIIO)
# Peak memory of reading, building and categorizing a log, per byte of its
# inflated DXT_POSIX region: measured 5.6 (500,000 segments on 64 ranks, a
# 16 MB region: 90 MB peak) and 3.0 for one-segment records; 8 leaves a
# margin. The DXT regions (DXT_POSIX and DXT_MPIIO together) may inflate to
# the memory budget divided by this.
DXT_MEMORY_PER_BYTE = 8


def read_log(
    source: str | os.PathLike[str] | bytes | bytearray,
    name: str = "",
    *,
    max_log_bytes: int = DEFAULT.max_log_bytes,
    max_inflated_bytes: int = DEFAULT.max_inflated_bytes,
    memory_bytes: int = DEFAULT.worker_memory_bytes,
    max_job_bytes: int = DEFAULT.max_job_bytes,
) -> DarshanLog:
    """Read one Darshan log from a path (or ``ARCHIVE/MEMBER``) or from bytes.

    Raises LogError(reason, detail) for anything that is not a usable log,
    and nothing else. ``name`` labels bytes in the detail of unexpected errors.
    Limits (Config's execution section): a file or member larger than
    ``max_log_bytes`` is not read; decompression stops at
    ``max_inflated_bytes`` for the whole log; DXT regions whose analysis
    would need more than ``memory_bytes`` are not inflated past that point;
    nor is the job region (command line, metadata) past ``max_job_bytes``.
    All four are ``too_large``.
    """
    try:
        data = (
            source if isinstance(source, bytes | bytearray) else read_bytes(os.fspath(source), max_log_bytes)
        )
        if len(data) > max_log_bytes:
            raise LogError(Reason.TOO_LARGE, f"{len(data)} bytes > limit {max_log_bytes}")
        return _read_bytes(data, _Budget(max_inflated_bytes, memory_bytes, max_job_bytes))
    except (LogError, MemoryError):  # MemoryError: past a worker's limit, too_large for the caller
        raise
    except Exception as exc:  # last line of defence: a defect must not escape as a crash
        label = name or (source if not isinstance(source, bytes | bytearray) else "bytes")
        raise internal_error(exc, str(label)) from exc


def unwrap(data: Raw, cap: int) -> tuple[Raw, int]:
    """The log inside its gzip or bzip2 wrappers (``.darshan.gz``, a gzip body; at
    most ``MAX_WRAPPERS`` layers, inflated to ``cap`` bytes at most in all), else
    ``data`` itself; and the bytes the layers inflated to, which count against the
    same ``max_inflated_bytes`` as the log's regions when it is read. A bytearray
    when the log inside is large (:func:`inflate`): it is not copied."""
    inflated = 0
    for _ in range(MAX_WRAPPERS):
        comp = _wrapper(data)
        if comp is None:
            break
        data = inflate(data, comp, cap - inflated, gzip=True, check_head=_check_unwrapped)
        inflated += len(data)
    else:
        if _wrapper(data) is not None:
            raise LogError(Reason.UNREADABLE, f"more than {MAX_WRAPPERS} gzip/bzip2 layers")
    return data, inflated


def _wrapper(data: bytes | bytearray) -> int | None:
    """The compression of a gzip or bzip2 wrapper ``data`` starts with, else None."""
    if data.startswith(GZIP_MAGIC):
        return F.COMP_ZLIB
    if data.startswith(BZIP2_MAGIC):
        return F.COMP_BZIP2
    return None


def _check_unwrapped(head: bytes) -> None:
    """LogError(unreadable) unless what a wrapper holds starts like another wrapper or
    like a log, its version then Darshan's magic number (2.x and 3.x alike, either byte
    order): a layer of anything else (a bomb of zeros behind "3.") is inflated no further."""
    if not head.startswith(LEADING_BYTES):
        raise LogError(Reason.UNREADABLE, NOT_A_LOG)
    if head.startswith((b"2.", b"3.")) and len(head) >= UNWRAPPED_HEAD_BYTES:
        magic = head[VERSION_BYTES:UNWRAPPED_HEAD_BYTES]
        if F.MAGIC not in (int.from_bytes(magic, "little"), int.from_bytes(magic, "big")):
            raise LogError(Reason.UNREADABLE, "bad magic number")


def _read_bytes(data: Raw, budget: _Budget) -> DarshanLog:
    check_leading_bytes(data)
    data, inflated = unwrap(data, budget.left)
    budget.left -= inflated  # the layers count against the inflation budget
    if data.startswith(b"2."):
        records = legacy_records(data)
        # The records hold copies of their columns: an unwrapped log's bytes go first
        # (the bytes of a log that had no wrapper stay held by read_log's caller).
        del data
        return legacy_log(records)
    if data.startswith(b"3."):
        return _read_v3(data, budget)
    raise LogError(Reason.UNREADABLE, NOT_A_LOG)


def inflate(
    region: Raw | memoryview,
    comp: int,
    cap: int,
    gzip: bool = False,
    check_head: Callable[[bytes], None] | None = None,
) -> Raw:
    """Decompress a region made of one or more concatenated streams.

    Darshan writes one stream per rank into a region; ``zlib.decompress``
    would silently stop after the first. Output beyond ``cap`` bytes is an
    error (too_large) rather than an allocation. zlib-ng inflates the same
    streams about 3x faster than the standard zlib (heavy logs: a third of
    reading was inflating). A region past ``INFLATE_PIECE_BYTES`` is inflated
    a piece at a time into one bytearray, so that it is held about once, not
    twice. ``check_head``, if given, sees the first ``UNWRAPPED_HEAD_BYTES`` of the output
    (all of it when shorter) before more is inflated, and may stop it by raising.
    """
    if comp == F.COMP_NONE:
        if len(region) > cap:
            raise LogError(Reason.TOO_LARGE, f"region of {len(region)} bytes > limit {cap}")
        return bytes(region)
    if comp not in (F.COMP_ZLIB, F.COMP_BZIP2):
        raise LogError(Reason.UNREADABLE, f"unknown compression type {comp}")
    view, pos, end = memoryview(region), 0, len(region)
    out = _Inflated(cap, check_head)
    wbits = 16 + zlib_ng.MAX_WBITS if gzip else zlib_ng.MAX_WBITS
    new = (lambda: zlib_ng.decompressobj(wbits)) if comp == F.COMP_ZLIB else bz2.BZ2Decompressor
    while pos < end:
        # The first stream gets the whole region (one call when it is the only
        # one); later ones get bounded chunks: the decompressor copies whatever
        # input is left after a stream ends, which would be quadratic in the
        # number of streams if each were handed the rest of the region.
        d, size = new(), (end if pos == 0 else INFLATE_CHUNK_FIRST)
        while True:
            chunk = view[pos : pos + size]
            given: bytes | memoryview = chunk
            try:
                while True:  # a piece at a time while the output fills what was asked
                    asked = out.asked()
                    piece = d.decompress(given, asked)
                    out.add(piece)
                    if d.eof or len(piece) < asked:
                        break
                    given = getattr(d, "unconsumed_tail", b"")  # bz2 keeps its input itself
            except _INFLATE_ERRORS as exc:
                raise LogError(Reason.CORRUPT_STREAM, f"does not decompress: {exc}") from None
            if d.eof:
                pos += len(chunk) - len(d.unused_data)
                break
            pos += len(chunk)
            if pos >= end:
                raise LogError(Reason.CORRUPT_STREAM, "compressed stream ends early")
            size = min(2 * size, INFLATE_CHUNK_MAX)
    return out.joined()


class _Inflated:
    """A region's output so far: a list of parts while small (joined once, with no copy
    when there is one), one growing bytearray past ``INFLATE_PIECE_BYTES``; its head
    checked once ``UNWRAPPED_HEAD_BYTES`` are out (``check_head``), before more is asked."""

    def __init__(self, cap: int, check_head: Callable[[bytes], None] | None = None):
        self.cap, self.total = cap, 0
        self.parts: list[bytes] = []
        self.buffer: bytearray | None = None
        self.check_head = check_head

    def asked(self) -> int:
        """Output to ask for next: the head, a piece, or one byte past the cap (then too_large)."""
        if self.check_head is not None:
            return min(UNWRAPPED_HEAD_BYTES - self.total, self.cap - self.total + 1)
        return min(INFLATE_PIECE_BYTES, self.cap - self.total + 1)

    def add(self, piece: bytes) -> None:
        self.total += len(piece)
        if self.total > self.cap:
            raise LogError(Reason.TOO_LARGE, f"decompresses past the limit of {self.cap} bytes")
        if self.check_head is not None and self.total >= UNWRAPPED_HEAD_BYTES:  # parts: a few bytes
            check, self.check_head = self.check_head, None
            check(b"".join([*self.parts, piece])[:UNWRAPPED_HEAD_BYTES])
        if self.buffer is not None:
            self.buffer += piece
            return
        self.parts.append(piece)
        if self.total > INFLATE_PIECE_BYTES:
            self.buffer = bytearray()
            for part in self.parts:
                self.buffer += part
            self.parts = []

    def joined(self) -> Raw:
        if self.check_head is not None:  # all of it is shorter than a head
            self.check_head(b"".join(self.parts))
        return self.buffer if self.buffer is not None else b"".join(self.parts)


class Header:
    """The uncompressed 3.x header: version, byte order, region map.

    Public for the writers of broken logs, which find a region to damage here
    rather than by a second copy of the header layout.
    """

    def __init__(self, data: bytes | bytearray):
        self.version = data[:8].split(b"\0", 1)[0].decode("ascii", "replace")
        if self.version not in F.SUPPORTED_VERSIONS:
            raise LogError(Reason.UNSUPPORTED_VERSION, f"format {self.version!r}")
        layout = F.header_struct(self.version)
        if len(data) < layout.size:
            raise LogError(Reason.TRUNCATED, f"header needs {layout.size} bytes, file has {len(data)}")
        for endian in "<>":
            _, magic, self.comp, partial, name_off, name_len, *rest = F.header_struct(
                self.version, endian
            ).unpack_from(data)
            if magic == F.MAGIC:
                break
        else:
            raise LogError(Reason.UNREADABLE, "bad magic number")
        self.endian, self.size = endian, layout.size
        slots = F.header_slots(self.version)
        maps, versions = rest[: 2 * slots], rest[2 * slots :]
        self.names = (name_off, name_len)
        # current id -> (offset, length, module version) of the slots holding a region
        # (slot 0 is Darshan's NULL module); compress() skips the empty ones at C speed.
        current = _current_ids(self.version)
        self.modules = {
            current[i]: (maps[2 * i], maps[2 * i + 1], versions[i])
            for i in itertools.compress(range(1, slots), maps[3::2])
        }
        self.partial_modules = [current[i] for i in range(1, slots) if partial >> i & 1] if partial else []
        self._check_regions(len(data))

    def _check_regions(self, file_size: int) -> None:
        regions = [self.names] + [(off, n) for off, n, _ in self.modules.values()]
        for off, n in regions:
            if n and (off < self.size or off + n > file_size):
                if off + n > file_size:
                    raise LogError(
                        Reason.TRUNCATED, f"region [{off}, {off + n}) past end of file ({file_size})"
                    )
                raise LogError(Reason.UNREADABLE, f"region at {off} overlaps the header")

    def job_region_end(self, file_size: int) -> int:
        """The job region has no map entry: it ends where the next region starts."""
        starts = [off for off, n in [self.names] + [m[:2] for m in self.modules.values()] if n]
        return min(starts) if starts else file_size


@functools.cache
def _current_ids(version: str) -> tuple[int, ...]:
    """Today's module id of each header slot of a log of ``version``."""
    return tuple(F.current_module_id(version, i) for i in range(F.header_slots(version)))


class _Budget:
    """Decompressed bytes still allowed for this log, for its DXT regions together, and
    for its job region."""

    def __init__(self, max_inflated_bytes: int, memory_bytes: int, max_job_bytes: int):
        self.left = max_inflated_bytes
        self.dxt_left = memory_bytes // DXT_MEMORY_PER_BYTE
        self.max_job_bytes = max_job_bytes

    def inflate(self, region: bytes | memoryview, comp: int, cap: int | None = None) -> Raw:
        out = inflate(region, comp, self.left if cap is None else min(cap, self.left))
        self.left -= len(out)
        return out

    def _inflate_within(self, region: memoryview, comp: int, cap: int, past: str) -> Raw:
        """A region inflated at most to its own ``cap``; past it, too_large saying ``past``
        (past the whole log's budget, the usual detail)."""
        try:
            return self.inflate(region, comp, cap=cap)
        except LogError as error:
            if error.reason == Reason.TOO_LARGE and cap < self.left:
                raise LogError(Reason.TOO_LARGE, past) from None
            raise

    def inflate_job(self, region: memoryview, comp: int) -> Raw:
        """The job region: a log's command line and metadata are text a writer may
        inflate at will (a 53 KB log held a 50 MB command line), bounded alike in batch
        and service."""
        cap = self.max_job_bytes
        return self._inflate_within(
            region, comp, cap, f"job region (command line, metadata, mounts) over max_job_bytes = {cap}"
        )

    def inflate_dxt(self, region: memoryview, comp: int, label: str, segment_size: int) -> Raw:
        """A DXT region, within what the memory budget leaves for DXT (both DXT modules
        share it: their segments are held together)."""
        cap = self.dxt_left
        out = self._inflate_within(
            region,
            comp,
            cap,
            f"{label} region over {cap} bytes (more than {cap // segment_size} segments) "
            "would need more than the memory budget",
        )
        self.dxt_left -= len(out)
        return out


def _versioned_region(
    hdr: Header, view: memoryview, module: int, versions: tuple[int, ...], label: str
) -> memoryview:
    """A variable-size module's region, once its version is one we can parse."""
    off, n, ver = hdr.modules[module]
    if ver not in versions:
        raise LogError(Reason.UNSUPPORTED_VERSION, f"{label} version {ver}")
    return view[off : off + n]


def _read_dxt(hdr: Header, view: memoryview, module: int, budget: _Budget) -> DxtSegments:
    """The segments of one DXT module, laid out as its version says."""
    label = F.MODULE_NAMES[module]
    region = _versioned_region(hdr, view, module, F.DXT_VERSIONS[module], label)
    version, big_endian = hdr.modules[module][2], hdr.endian == ">"
    segment_size = F.dxt_segment_dtype(module, version, big_endian).itemsize
    return parse_dxt(budget.inflate_dxt(region, hdr.comp, label, segment_size), big_endian, module, version)


def read_job(data: bytes | bytearray) -> Job:
    """The job record of a log's bytes (id, uid, times, command line), inflating nothing
    past it in a 3.x log: the epilog checks whose job a file claims before posting it.
    LogError as :func:`read_log`."""
    try:
        budget = _Budget(DEFAULT.max_inflated_bytes, DEFAULT.worker_memory_bytes, DEFAULT.max_job_bytes)
        check_leading_bytes(data)
        data, inflated = unwrap(data, budget.left)
        budget.left -= inflated
        if data.startswith(b"3."):
            return _job_v3(Header(data), memoryview(data), budget)
        return _read_bytes(data, budget).job  # 2.x (and not a log: its LogError)
    except (LogError, MemoryError):
        raise
    except Exception as exc:
        raise internal_error(exc, "bytes") from exc


def _job_v3(hdr: Header, view: memoryview, budget: _Budget) -> Job:
    job_end = hdr.job_region_end(len(view))
    if job_end <= hdr.size:
        raise LogError(Reason.TRUNCATED, "no job region")
    return _parse_job(budget.inflate_job(view[hdr.size : job_end], hdr.comp), hdr)


def _read_v3(data: bytes | bytearray, budget: _Budget) -> DarshanLog:
    hdr = Header(data)
    view = memoryview(data)
    job = _job_v3(hdr, view, budget)
    io_present = [m for m in IO_MODULES if m in hdr.modules]
    if not io_present:
        raise LogError(Reason.NO_IO_MODULES, "no POSIX, STDIO or DXT_POSIX data")
    off, n = hdr.names
    names = _parse_names(budget.inflate(view[off : off + n], hdr.comp), hdr) if n else {}
    modules = {}
    for mod in DECODED_MODULES:
        if mod in hdr.modules:
            off, n, ver = hdr.modules[mod]
            modules[mod] = _parse_records(
                budget.inflate(view[off : off + n], hdr.comp), mod, ver, hdr.endian == ">"
            )
    dxt = {mod: _read_dxt(hdr, view, mod, budget) for mod in DXT_MODULES if mod in hdr.modules}
    heatmaps = None
    if F.HEATMAP in hdr.modules:
        region = _versioned_region(hdr, view, F.HEATMAP, F.HEATMAP_VERSIONS, "HEATMAP")
        heatmaps = parse_heatmap(budget.inflate(region, hdr.comp), hdr.endian == ">", names)
    return DarshanLog(
        job=job,
        names=names,
        modules=modules,
        dxt_posix=dxt.get(F.DXT_POSIX),
        dxt_mpiio=dxt.get(F.DXT_MPIIO),
        heatmaps=heatmaps,
        present_modules=tuple(sorted(hdr.modules)),
        partial_modules=tuple(sorted(hdr.partial_modules)),
    )


def _parse_job(raw: Raw, hdr: Header) -> Job:
    layout = F.job_struct(hdr.version, hdr.endian)
    if len(raw) < layout.size:
        raise LogError(Reason.BAD_JOB, f"job record has {len(raw)} bytes, needs {layout.size}")
    *numbers, meta_raw = layout.unpack_from(raw)
    values = dict(zip(F.job_fields(hdr.version), numbers))
    start = values["start_sec"] + values.get("start_nsec", 0) * 1e-9
    end = values["end_sec"] + values.get("end_nsec", 0) * 1e-9
    # SPEC 2: whole-second formats count both the first and the last second.
    run_time = end - start if hdr.version >= "3.41" else end - start + 1
    exe, mounts = parse_exe_and_mounts(raw[layout.size :])
    job = Job(
        uid=values["uid"],
        job_id=values["jobid"],
        start=float(start),
        end=float(end),
        run_time=float(run_time),
        nprocs=values["nprocs"],
        cmdline=exe,
        mounts=mounts,
        metadata=parse_metadata(meta_raw),
        version=hdr.version,
        partial=bool(hdr.partial_modules),
    )
    validate_job(job)
    return job


# A 3.10+ name record: the uint64 id (any 8 bytes, NULs included), then a NUL-terminated path.
_NAME_RECORD = re.compile(rb"(.{8})([^\0]*)\0", re.DOTALL)
_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_ID_BYTES = np.arange(8)
_NAME_SEPARATOR = "\0" * 9  # a path's NUL, then the next record's id bytes set to NUL
# From this size on (~140 names), a name region is cut into records by numpy and kept
# undecoded (a NameTable: 3,050 names took 1.06 ms by the regular expression, 0.61 ms
# cut by numpy and decoded, 0.1 ms kept); below it the regular expression's single call
# costs less than numpy's several.
NAMES_BY_NUMPY_BYTES = 6144
# ...unless more of its NULs than this share lie within ids (or end empty paths
# right after them): those are decided one by one in Python.
NAMES_CLOSE_NULS_MAX_SHARE = 0.25


def _parse_names(raw: Raw, hdr: Header) -> Mapping[int, str]:
    """Name records; an id may repeat across per-rank streams: keep the first non-empty name.

    3.10+ records are cut by numpy (large regions, kept as a :class:`NameTable`)
    or matched in one regular-expression pass (C speed either way:
    file-per-process logs have tens of thousands of names); the records must
    tile the region exactly, else one is cut short or unterminated.
    """
    if hdr.version < "3.10":
        ids, paths = _parse_names_300(raw, hdr.endian)
        return _first_names(ids, _decoded(paths))
    if raw and len(raw) >= NAMES_BY_NUMPY_BYTES and (ends := _name_record_ends(raw)) is not None:
        return NameTable(raw, ends, hdr.endian)
    # Ending in NUL, every match attempt succeeds, so the pass is linear (no rescans).
    records = _NAME_RECORD.findall(raw) if raw.endswith(b"\0") else []
    paths = list(map(_SECOND, records))
    if 9 * len(records) + sum(map(len, paths)) != len(raw):
        raise LogError(Reason.CORRUPT_STREAM, "name record cut short or unterminated")
    ids = np.frombuffer(b"".join(map(_FIRST, records)), hdr.endian + "u8").tolist()
    return _first_names(ids, _decoded(paths))


def _first_names(ids: list[int], texts: list[str]) -> dict[int, str]:
    """Each id's first non-empty name (or the empty one), in the order ids first appear."""
    names = dict(zip(ids, texts))
    if len(names) == len(ids) and "" not in names.values():  # the usual case: no repeats
        return names
    names = dict.fromkeys(ids, "")
    names.update(pair for pair in reversed(list(zip(ids, texts))) if pair[1])
    return names


class NameTable(Mapping[int, str]):
    """A large 3.10+ name region, cut into records, its paths decoded only when asked for.

    Building a trace needs only which records lie under SPEC 2's prefixes,
    which ``mosaic.trace`` tests on the bytes (:meth:`path_words`): decoding
    3,050 paths and indexing them in a dict took 0.45 ms of the 1.4 ms that
    reading their log took. As a mapping it is the dict :func:`_parse_names`
    gives for a small region, built on first use (one name is looked up alone).
    """

    def __init__(self, raw: Raw, ends: np.ndarray, endian: str):
        self.raw = raw
        self.ends = ends  # offset of each record's closing NUL
        self.path_starts = np.empty_like(ends)
        self.path_starts[0], self.path_starts[1:] = 8, ends[:-1] + 9  # past each record's id
        self.ids: np.ndarray = np.frombuffer(raw, np.uint8)[self._id_bytes()].view(endian + "u8")
        self._names: dict[int, str] | None = None

    def _id_bytes(self) -> np.ndarray:
        """Offsets of every record's 8 id bytes, record after record."""
        at: np.ndarray = (self.path_starts[:, None] - 8 + _ID_BYTES).ravel()
        return at

    def path_words(self, count: int) -> np.ndarray:
        """The first ``8 * count`` bytes of every path as little-endian uint64 words,
        ``(records, count)``. A path's NUL follows it, then the next record's bytes
        (zeros past the region): a shorter path never equals a longer text."""
        padded = np.zeros(len(self.raw) + 8 * count, np.uint8)
        padded[: len(self.raw)] = np.frombuffer(self.raw, np.uint8)
        at_every_byte = np.ndarray((padded.size - 7,), "<u8", padded, strides=(1,))
        words: np.ndarray = at_every_byte[self.path_starts[:, None] + 8 * np.arange(count)]
        return words

    def last_bytes(self) -> np.ndarray:
        """Every path's last byte (an id byte for an empty path)."""
        codes: np.ndarray = np.frombuffer(self.raw, np.uint8)[self.ends - 1]
        return codes

    @property
    def decoded(self) -> dict[int, str]:
        """The id -> path dict, decoded on first use."""
        if self._names is None:
            self._names = _first_names(self.ids.tolist(), self._paths())
        return self._names

    def _paths(self) -> list[str]:
        """Every record's path, decoded in one call.

        The ids' bytes are set to NUL in one copy of the region, so that after the
        decode nine NULs separate each path from the next (ids may hold any byte,
        and must not reach the decoder).
        """
        # A NUL first, so that the first path too follows nine; the region's last NUL
        # only ends the last path: the same length as the region.
        text = bytearray(len(self.raw))
        text[1:] = self.raw[:-1]
        np.frombuffer(text, np.uint8)[self._id_bytes() + 1] = 0
        return text.decode("utf-8", "replace").split(_NAME_SEPARATOR)[1:]

    def __getitem__(self, rid: int) -> str:
        if self._names is not None:
            return self._names[rid]
        # One name (a HEATMAP record's API) without decoding them all: the first
        # non-empty one of the id's records, as in the dict.
        key = int(rid) if isinstance(rid, (int, np.integer)) else -1  # as a dict hashes numpy ints
        at = (self.ids == key).nonzero()[0] if 0 <= key < 1 << 64 else None
        if at is None or not at.size:
            raise KeyError(rid)
        named = at[self.ends[at] > self.path_starts[at]]
        if not named.size:
            return ""
        i = int(named[0])
        return self.raw[self.path_starts[i] : self.ends[i]].decode("utf-8", "replace")

    def __iter__(self) -> Iterator[int]:
        return iter(self.decoded)

    def __len__(self) -> int:
        return len(self.decoded)

    def __repr__(self) -> str:
        return f"NameTable({self.decoded!r})"


def _decoded(paths: list[Raw]) -> list[str]:
    """Paths as text, decoded in one call: NUL cannot occur inside a path, so it separates them."""
    return b"\0".join(paths).decode("utf-8", "replace").split("\0") if paths else []


def _name_record_ends(raw: Raw) -> np.ndarray | None:
    """Offsets of the NULs that end the 3.10+ name records of ``raw``; None when too many
    NULs must be decided one by one (then the regular expression is the linear way).

    A NUL at least 9 bytes past the previous NUL ends a record: whether that one
    ended a record or lay in an id, this one lies past the 8 id bytes of its
    record, and no NUL comes between. A closer NUL lies in an id, or ends an
    empty path after an id holding NULs: decided from its record's start.
    """
    nuls = (np.frombuffer(raw, np.uint8) == 0).nonzero()[0]
    if not nuls.size or nuls[-1] != len(raw) - 1:
        raise LogError(Reason.CORRUPT_STREAM, "name record cut short or unterminated")
    ends = np.diff(nuls, prepend=-1) >= 9
    close = (~ends).nonzero()[0]
    if close.size > NAMES_CLOSE_NULS_MAX_SHARE * nuls.size:
        return None
    start = 0  # of the record holding the NUL being decided
    for i in close.tolist():
        if i and ends[i - 1]:
            start = int(nuls[i - 1]) + 1
        ends[i] = nuls[i] >= start + 8
    if not ends[-1]:  # the last NUL lies in an id: that record is cut short
        raise LogError(Reason.CORRUPT_STREAM, "name record cut short or unterminated")
    found: np.ndarray = nuls[ends]
    return found


def _parse_names_300(raw: Raw, e: str) -> tuple[list[int], list[Raw]]:
    """Format 3.00 name records: uint64 id, uint32 length, then the bytes."""
    ids, paths, pos, n = [], [], 0, len(raw)
    while pos < n:
        if pos + 12 > n:
            raise LogError(Reason.CORRUPT_STREAM, "name record cut short")
        rid, length = struct.unpack_from(e + "QI", raw, pos)
        if pos + 12 + length > n:
            raise LogError(Reason.CORRUPT_STREAM, "name longer than its region")
        ids.append(rid)
        paths.append(raw[pos + 12 : pos + 12 + length].split(b"\0", 1)[0])  # a C string
        pos += 12 + length
    return ids, paths


def _parse_records(raw: Raw, module: int, version: int, big_endian: bool) -> ModuleRecords:
    """Fixed-size records as views of one table of 8-byte words (id, rank, counters,
    fcounters): a few views cost less than a copy per field on a year of small logs."""
    if (module, version) not in F.RECORD_SHAPES:
        raise LogError(Reason.UNSUPPORTED_VERSION, f"{F.MODULE_NAMES[module]} version {version}")
    n_counters, n_fcounters = F.RECORD_SHAPES[(module, version)]
    width = 2 + n_counters + n_fcounters
    if len(raw) % (8 * width):
        raise LogError(
            Reason.CORRUPT_STREAM, f"{F.MODULE_NAMES[module]} region is not a whole number of records"
        )
    words = np.frombuffer(raw, ">i8" if big_endian else "<i8").reshape(-1, width)
    if big_endian:
        words = words.astype(np.int64)  # native byte order, once
    return ModuleRecords(
        module=module,
        version=version,
        ids=words[:, 0].view(np.uint64),
        ranks=words[:, 1],
        counters=words[:, 2 : 2 + n_counters],
        fcounters=words[:, 2 + n_counters :].view(np.float64),
    )


def parse_dxt(raw: Raw, big_endian: bool, module: int = F.DXT_POSIX, version: int = 1) -> DxtSegments:
    """Variable-size DXT records: a header, then its write segments, then its reads.

    The segment layout is that of ``module``'s ``version`` (40 bytes with a
    pthread id from DXT_POSIX v2 / DXT_MPIIO v3, else 32; DXT_MPIIO v1 offsets
    are DXT_NO_OFFSET, as darshan-util reads them). Only the walk from
    header to header is a Python loop (one unpack and one append per record);
    headers and segments are then gathered in one step each.
    """
    head_t, seg_t = F.dxt_header_dtype(big_endian), F.dxt_segment_dtype(module, version, big_endian)
    counts_at, head_size, seg_size = _offset(head_t, "write_count"), head_t.itemsize, seg_t.itemsize
    unpack_counts = struct.Struct((">" if big_endian else "<") + "qq").unpack_from
    at = array("q")
    pos, n = 0, len(raw)
    while pos < n:
        if pos + head_size > n:
            raise LogError(Reason.CORRUPT_STREAM, "DXT record header cut short")
        n_write, n_read = unpack_counts(raw, pos + counts_at)
        if n_write < 0 or n_read < 0 or pos + head_size + (n_write + n_read) * seg_size > n:
            raise LogError(Reason.CORRUPT_STREAM, "DXT segment counts exceed the region")
        at.append(pos)
        pos += head_size + (n_write + n_read) * seg_size
    starts = np.frombuffer(at, np.int64)
    heads = _strided(raw, head_t)[starts // 8]
    writes = heads["write_count"].astype(np.int64)
    counts = writes + heads["read_count"].astype(np.int64)
    within = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    seg = _strided(raw, seg_t)[np.repeat((starts + head_size) // 8, counts) + within * (seg_size // 8)]
    threaded = "thread" in (seg_t.names or ())
    return DxtSegments(
        ids=np.repeat(heads["id"].astype(np.uint64), counts),
        ranks=np.repeat(heads["rank"].astype(np.int64), counts),
        is_write=within < np.repeat(writes, counts),
        offsets=(
            np.full(len(seg), F.DXT_NO_OFFSET, np.int64)
            if (module, version) in F.DXT_OFFSETLESS
            else seg["offset"].astype(np.int64)
        ),
        lengths=seg["length"].astype(np.int64),
        starts=seg["start"].astype(np.float64),
        ends=seg["end"].astype(np.float64),
        thread_ids=seg["thread"].astype(np.uint64)
        if threaded
        else np.full(len(seg), F.DXT_NO_THREAD, np.uint64),
    )


def _offset(dtype: np.dtype[np.void], name: str) -> int:
    """Byte offset of field ``name`` in a structured dtype."""
    assert dtype.fields is not None
    return int(dtype.fields[name][1])


def _strided(raw: Raw, dtype: np.dtype) -> np.ndarray:
    """Every 8-byte-aligned position of ``raw`` read as one ``dtype`` item (a view, no copy)."""
    count = max((len(raw) - dtype.itemsize) // 8 + 1, 0)
    return np.ndarray((count,), dtype, buffer=raw, strides=(8,))


def parse_heatmap(raw: Raw, big_endian: bool, names: Mapping[int, str]) -> F.HeatmapRecords:
    """Variable-size HEATMAP records; the API of each comes from its name record.

    Records of one log normally share one bin count: then the region is one
    structured array. Otherwise headers are walked one by one and the bins
    gathered in one step.
    """
    head_t = F.heatmap_header_dtype(big_endian)
    heads, starts = _heatmap_heads(raw, head_t)
    words = np.frombuffer(raw, head_t["nbins"], count=len(raw) // 8)
    nbins = heads["nbins"].astype(np.int64)
    write_at = F.ragged_index(starts // 8, nbins)
    bins = words[np.concatenate([write_at, write_at + np.repeat(nbins, nbins)])]
    widths = heads["bin_seconds"].astype(np.float64)
    if not (np.isfinite(widths) & (widths > 0)).all():
        raise LogError(Reason.CORRUPT_STREAM, "HEATMAP bin width not a positive number")
    ids = heads["id"].astype(np.uint64)
    api_of = {i: names.get(i) or F.HEATMAP_API_IDS.get(i, "") for i in set(ids.tolist())}
    apis = np.array([api_of[i] for i in ids.tolist()] or [""], dtype=str)[: len(ids)]
    split = len(write_at)
    return F.HeatmapRecords(
        ids=ids,
        ranks=heads["rank"].astype(np.int64),
        apis=apis,
        bin_seconds=widths,
        nbins=nbins,
        write_bins=bins[:split].astype(np.int64),
        read_bins=bins[split:].astype(np.int64),
    )


@functools.cache
def _with_bins(head_t: np.dtype, nbins: int) -> np.dtype:
    """A whole HEATMAP record of ``nbins`` bins: the header, then write and read bins."""
    return np.dtype(head_t.descr + [("bins", head_t["nbins"], (2 * nbins,))])


def _heatmap_heads(raw: Raw, head_t: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Record headers and the byte offset of each record's bins."""
    n, size = len(raw), head_t.itemsize
    nbins_at = _offset(head_t, "nbins")
    if n >= size:  # the runtime's case: every record has the first record's bin count
        first = int(np.frombuffer(raw, head_t, count=1)["nbins"][0])
        if first >= 0 and n % (size + 16 * first) == 0:
            whole = _with_bins(head_t, first)
            heads = np.frombuffer(raw, whole)
            if (heads["nbins"] == first).all():
                return heads, np.arange(len(heads), dtype=np.int64) * whole.itemsize + size
    e = ">" if head_t["nbins"].byteorder == ">" else "<"
    offsets, pos = [], 0
    while pos < n:
        if pos + size > n:
            raise LogError(Reason.CORRUPT_STREAM, "HEATMAP record header cut short")
        nbins = struct.unpack_from(e + "q", raw, pos + nbins_at)[0]
        if nbins < 0 or pos + size + 16 * nbins > n:
            raise LogError(Reason.CORRUPT_STREAM, "HEATMAP bin count exceeds the region")
        offsets.append(pos)
        pos += size + 16 * nbins
    heads = np.frombuffer(b"".join(raw[o : o + size] for o in offsets), head_t)
    return heads, np.array(offsets, np.int64) + size
