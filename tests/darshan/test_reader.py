"""Reader edge cases on hand-built logs: formats, byte orders, compressions, bad input."""

import bz2
import gzip
import struct
import tracemalloc
import zlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mosaic.darshan import formats as F
from mosaic.darshan import reader
from mosaic.darshan.reader import inflate, read_log
from mosaic.errors import LogError
from mosaic_testing.handmade import (
    dxt_record,
    job_region,
    posix_v4,
    record,
    v3_log,
)

NAMES = {11: "/scratch/a.dat", 22: "/scratch/b.dat", 33: "<STDOUT>"}


def simple(version="3.41", e="<", comp=0, streams=1, **kw):
    posix = [
        posix_v4(11, 0, opens=2, bytes_read=100, times={"read_start": 1.0, "read_end": 2.0}, e=e),
        posix_v4(22, -1, opens=4, bytes_written=4096, e=e),
    ]
    if version < "3.20" and version >= "3.10":
        posix = [
            record("POSIX", 3, 11, 0, {0: 2, 9: 100}, {1: 1.0, 5: 2.0}, e),
            record("POSIX", 3, 22, -1, {0: 4, 10: 4096}, {}, e),
        ]
    modules = {
        "POSIX": (4 if version >= "3.20" else 3, posix),
        "STDIO": (2, [record("STDIO", 2, 33, 0, {0: 1, 6: 10}, {}, e)]),
    }
    return v3_log(
        version,
        e=e,
        comp=comp,
        names=NAMES,
        modules=modules,
        job=kw.pop("job", None) or job_region(version, e=e),
        streams=streams,
        **kw,
    )


def raises(data, reason):
    with pytest.raises(LogError) as err:
        read_log(data)
    assert err.value.reason == reason, err.value.detail
    return err.value


@pytest.mark.parametrize("version", ["3.10", "3.21", "3.41"])
@pytest.mark.parametrize("e", ["<", ">"])
@pytest.mark.parametrize("comp", [0, 1, 2])
def test_formats_byte_orders_compressions(version, e, comp):
    log = read_log(simple(version, e, comp, streams=2))
    assert log.job.version == version
    assert (log.job.uid, log.job.job_id, log.job.nprocs) == (1000, 42, 4)
    assert log.job.cmdline == "/bin/app -x 1"
    assert log.job.mounts == [("/scratch", "lustre"), ("/", "ext4")]
    assert log.job.metadata == {"lib_ver": "3.4.1", "h": "romio"}
    assert log.job.run_time == (100.0 if version == "3.41" else 101.0)
    assert log.names == NAMES
    posix = log.modules[F.POSIX]
    order = np.argsort(posix.ids)  # streams interleave records
    c = posix.canonical()
    assert posix.ids[order].tolist() == [11, 22]
    assert posix.ranks[order].tolist() == [0, -1]
    assert c["opens"][order].tolist() == [2, 4]
    assert c["bytes_read"][order].tolist() == [100, 0]
    assert c["bytes_written"][order].tolist() == [0, 4096]
    assert c["read_start"][order].tolist() == [1.0, 0.0]
    stdio = log.modules[F.STDIO].canonical()  # stored id shifts by format
    assert stdio["opens"].tolist() == [1] and stdio["bytes_written"].tolist() == [10]
    assert log.present_modules == (F.POSIX, F.STDIO)


def test_format_300_names_have_a_length_prefix():
    posix = record("POSIX", 1, 11, 0, {0: 1, 13: 7, 14: 9}, {0: 0.5, 5: 3.0})
    log = read_log(v3_log("3.00", names={11: "/scratch/x"}, modules={"POSIX": (1, [posix])}))
    c = log.modules[F.POSIX].canonical()
    assert log.names == {11: "/scratch/x"}
    assert (c["bytes_read"][0], c["bytes_written"][0]) == (7, 9)
    assert (c["open_start"][0], c["open_end"][0], c["close_end"][0]) == (0.5, 0.5, 3.0)


def test_nanoseconds_in_341_run_time():
    job = job_region("3.41", start=100, end=100, start_nsec=250_000_000, end_nsec=750_000_000)
    assert read_log(simple(job=job)).job.run_time == pytest.approx(0.5)


def test_first_non_empty_name_wins_across_streams():
    raw = b"".join(struct.pack("<Q", 11) + n + b"\0" for n in (b"", b"/a", b"/b"))
    assert reader._parse_names(raw, reader.Header(simple())) == {11: "/a"}


def test_an_id_with_only_empty_names_maps_to_empty():
    records = ((11, b"/a"), (12, b""), (13, b"/c"), (12, b""))
    raw = b"".join(struct.pack("<Q", rid) + n + b"\0" for rid, n in records)
    assert reader._parse_names(raw, reader.Header(simple())) == {11: "/a", 12: "", 13: "/c"}


def test_record_without_a_name_is_kept():
    log = read_log(v3_log("3.41", names={11: "/a"}, modules={"POSIX": (4, [posix_v4(11), posix_v4(99)])}))
    assert log.modules[F.POSIX].ids.tolist() == [11, 99]
    assert 99 not in log.names


def test_partial_bits_map_to_current_module_ids():
    log = read_log(simple("3.21", partial_bits=1 << 8))  # stored STDIO of 3.21
    assert log.job.partial and log.partial_modules == (F.STDIO,)
    log = read_log(simple("3.41", e=">", partial_bits=1 << 1))
    assert log.partial_modules == (F.POSIX,)
    assert not read_log(simple()).job.partial


def test_opens_leave_out_filenos_and_dups_where_the_format_counts_them():
    """POSIX v4's POSIX_OPENS includes POSIX_FILENOS (1) and POSIX_DUPS (2): 10 - 3 - 2 = 5
    opens; all of them filenos and dups (4 - 4 - 1) floor at 0; -1 (unknown) subtracts
    nothing. POSIX v3's counter 1 is POSIX_READS, and stays out of the opens (SPEC 3.7)."""
    v4 = np.zeros((3, 69), np.int64)
    v4[0, :3], v4[1, :3], v4[2, :3] = (10, 3, 2), (4, 4, 1), (5, -1, -1)
    ids, ranks = np.array([1, 2, 3], np.uint64), np.zeros(3, np.int64)
    posix = F.ModuleRecords(F.POSIX, 4, ids, ranks, v4, np.zeros((3, 17)))
    assert posix.canonical()["opens"].tolist() == [5, 0, 5]
    assert v4[:, 0].tolist() == [10, 4, 5]  # the raw counters are left as read
    v3 = np.zeros((1, 64), np.int64)
    v3[0, :3] = (10, 3, 2)
    old = F.ModuleRecords(F.POSIX, 3, ids[:1], ranks[:1], v3, np.zeros((1, 17)))
    assert old.canonical()["opens"].tolist() == [10]


def test_dxt_segments_writes_then_reads():
    dxt = [
        dxt_record(11, 0, [(0, 10, 1.0, 1.5), (10, 10, 2.0, 2.5)], [(0, 5, 3.0, 3.25)]),
        dxt_record(22, 1, [], [(0, 7, 4.0, 4.5)]),
    ]
    log = read_log(v3_log("3.41", names=NAMES, modules={"POSIX": (4, [posix_v4(11)]), "DXT_POSIX": (1, dxt)}))
    d = log.dxt_posix
    assert d.ids.tolist() == [11, 11, 11, 22]
    assert d.ranks.tolist() == [0, 0, 0, 1]
    assert d.is_write.tolist() == [True, True, False, False]
    assert d.lengths.tolist() == [10, 10, 5, 7]
    assert d.starts.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_dxt_only_log_has_io():
    dxt = [dxt_record(11, 0, [(0, 10, 1.0, 1.5)], [])]
    log = read_log(v3_log("3.21", names=NAMES, modules={"DXT_POSIX": (1, dxt)}))
    assert log.modules == {} and len(log.dxt_posix.ids) == 1


THREAD_A, THREAD_B = 139882294634304, 2**64 - 1  # a glibc pthread_t; the largest uint64


def dxt_v2_log(e="<", comp=0, streams=1, posix_version=2, mpiio_version=3):
    """POSIX records, DXT_POSIX v2 and DXT_MPIIO v3 segments (40 bytes, with thread ids)."""
    dxt = [
        dxt_record(
            11, 0, [(0, 10, 1.0, 1.5, THREAD_A), (10, 10, 2.0, 2.5, THREAD_B)], [(0, 5, 3.0, 3.25, 7)], e
        ),
        dxt_record(22, 1, [], [(0, 7, 4.0, 4.5, THREAD_A)], e),
    ]
    mpiio = [dxt_record(22, 1, [(64, 32, 5.0, 5.5, THREAD_B)], [], e)]
    modules = {
        "POSIX": (4, [posix_v4(11, e=e)]),
        "DXT_POSIX": (posix_version, dxt),
        "DXT_MPIIO": (mpiio_version, mpiio),
    }
    return v3_log("3.41", e=e, comp=comp, names=NAMES, modules=modules, streams=streams)


@pytest.mark.parametrize("e", ["<", ">"])
@pytest.mark.parametrize("comp", [0, 1, 2])
def test_dxt_v2_segments_keep_their_thread_ids(e, comp):
    log = read_log(dxt_v2_log(e, comp, streams=2 if comp != 2 else 1))
    d = log.dxt_posix
    order = np.lexsort((d.starts, d.ids))  # streams may interleave records
    assert d.ids[order].tolist() == [11, 11, 11, 22]
    assert d.ranks[order].tolist() == [0, 0, 0, 1]
    assert d.is_write[order].tolist() == [True, True, False, False]
    assert d.offsets[order].tolist() == [0, 10, 0, 0]
    assert d.lengths[order].tolist() == [10, 10, 5, 7]
    assert d.starts[order].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert d.ends[order].tolist() == [1.5, 2.5, 3.25, 4.5]
    assert d.thread_ids.dtype == np.uint64
    assert d.thread_ids[order].tolist() == [THREAD_A, THREAD_B, 7, THREAD_A]
    m = log.dxt_mpiio
    assert (m.ids.tolist(), m.ranks.tolist(), m.is_write.tolist()) == ([22], [1], [True])
    assert (m.offsets.tolist(), m.lengths.tolist(), m.starts.tolist(), m.ends.tolist()) == (
        [64],
        [32],
        [5.0],
        [5.5],
    )
    assert m.thread_ids.tolist() == [THREAD_B]


@pytest.mark.parametrize("mpiio_version", [1, 2])
def test_dxt_v1_segments_have_no_thread(mpiio_version):
    """DXT_POSIX v1 and DXT_MPIIO v1-v2 segments are 32 bytes: thread id DXT_NO_THREAD.
    DXT_MPIIO v1 recorded no offsets: DXT_NO_OFFSET, as darshan-util reads them."""
    posix = [dxt_record(11, 0, [(0, 10, 1.0, 1.5)], [(0, 5, 3.0, 3.25)])]
    mpiio = [dxt_record(22, 1, [], [(8, 16, 2.0, 2.5)])]
    modules = {"POSIX": (4, [posix_v4(11)]), "DXT_POSIX": (1, posix), "DXT_MPIIO": (mpiio_version, mpiio)}
    log = read_log(v3_log("3.41", names=NAMES, modules=modules))
    assert log.dxt_posix.thread_ids.tolist() == [F.DXT_NO_THREAD] * 2 == [0, 0]
    assert log.dxt_posix.ends.tolist() == [1.5, 3.25]
    m = log.dxt_mpiio
    assert (m.offsets.tolist(), m.lengths.tolist(), m.ends.tolist(), m.thread_ids.tolist()) == (
        [-1 if mpiio_version == 1 else 8],
        [16],
        [2.5],
        [0],
    )


def test_dxt_mpiio_and_thread_ids_are_read_but_not_analyzed():
    """SPEC 2: MPI-IO traffic is not the analysis' business, nor which thread issued a
    request: the trace is the same without the DXT_MPIIO region and as v1 segments."""
    from mosaic.config import Config
    from mosaic.trace import build_trace

    v1 = [
        dxt_record(11, 0, [(0, 10, 1.0, 1.5), (10, 10, 2.0, 2.5)], [(0, 5, 3.0, 3.25)]),
        dxt_record(22, 1, [], [(0, 7, 4.0, 4.5)]),
    ]
    with_mpiio = read_log(dxt_v2_log())
    without = read_log(
        v3_log("3.41", names=NAMES, modules={"POSIX": (4, [posix_v4(11)]), "DXT_POSIX": (1, v1)})
    )
    assert with_mpiio.dxt_mpiio is not None and without.dxt_mpiio is None
    a, b = build_trace(with_mpiio, "a", Config()), build_trace(without, "b", Config())
    assert a.has_dxt and len(a.ops) >= 4
    assert np.array_equal(a.ops, b.ops)


def test_dxt_mpiio_alone_is_no_io():
    mpiio = [dxt_record(22, 1, [], [(8, 16, 2.0, 2.5, 3)])]
    modules = {"MPIIO": (3, [record("MPIIO", 3, 22, 1)]), "DXT_MPIIO": (3, mpiio)}
    raises(v3_log("3.41", names=NAMES, modules=modules), "no_io_modules")


# --------------------------------------------------------------------------- bad input


def test_empty_and_random_bytes():
    raises(b"", "unreadable")
    rng = np.random.default_rng(1)
    for _ in range(50):
        data = rng.bytes(int(rng.integers(1, 3000)))
        if data[:1] not in (b"2", b"3", b"\x1f", b"B"):
            raises(data, "unreadable")


def test_bad_magic_and_versions():
    data = bytearray(simple())
    data[8:16] = b"\0" * 8
    raises(bytes(data), "unreadable")
    raises(b"3.99".ljust(2000, b"\0"), "unsupported_version")
    raises(b"2.04".ljust(5000, b"\0"), "unsupported_version")
    raises(b"3.41", "truncated")  # header cut short


def test_unknown_module_version_is_unsupported():
    data = v3_log("3.41", names=NAMES, modules={"POSIX": (4, [posix_v4(11)])})
    bad = bytearray(data)
    struct.pack_into("<I", bad, 1072 + 4 * 1, 9)  # mod_ver[POSIX] = 9
    raises(bytes(bad), "unsupported_version")
    struct.pack_into("<I", bad, 1072 + 4 * 1, 0)
    raises(bytes(bad), "unsupported_version")


def test_region_past_end_of_file_is_truncated():
    data = simple()
    raises(data[:-10], "truncated")
    raises(data[:1328], "truncated")  # header only: no job region
    bad = bytearray(data)
    struct.pack_into("<QQ", bad, 48 + 16 * 1, 2**63, 2**63)  # absurd POSIX map
    raises(bytes(bad), "truncated")


def test_region_inside_header_is_unreadable():
    bad = bytearray(simple())
    struct.pack_into("<QQ", bad, 48 + 16 * 1, 8, 16)
    raises(bytes(bad), "unreadable")


def test_corrupt_stream():
    data = bytearray(simple())
    off, n = struct.unpack_from("<QQ", data, 48 + 16 * 1)
    data[off + 2 : off + 6] = b"\xff\xff\xff\xff"
    raises(bytes(data), "corrupt_stream")


def test_unknown_compression_type():
    data = bytearray(simple())
    data[16] = 7
    raises(bytes(data), "unreadable")


def test_records_not_a_whole_number():
    posix = posix_v4(11)[:-8]
    raises(v3_log("3.41", names=NAMES, modules={"POSIX": (4, [posix])}), "corrupt_stream")


def test_dxt_counts_beyond_region():
    bad = dxt_record(11, 0, [(0, 10, 1.0, 1.5)], [])[:-8]
    raises(v3_log("3.41", names=NAMES, modules={"DXT_POSIX": (1, [bad])}), "corrupt_stream")
    neg = dxt_record(11, 0, [], [])[:-16] + struct.pack("<qq", -1, 0)
    raises(v3_log("3.41", names=NAMES, modules={"DXT_POSIX": (1, [neg])}), "corrupt_stream")


@pytest.mark.parametrize(
    "posix_version, mpiio_version, detail",
    [
        (0, 3, "DXT_POSIX version 0"),
        (3, 3, "DXT_POSIX version 3"),
        (2, 0, "DXT_MPIIO version 0"),
        (2, 4, "DXT_MPIIO version 4"),
    ],
)
def test_unknown_dxt_version_is_unsupported(posix_version, mpiio_version, detail):
    data = dxt_v2_log(posix_version=posix_version, mpiio_version=mpiio_version)
    assert raises(data, "unsupported_version").detail == detail


@pytest.mark.parametrize("module", ["DXT_POSIX", "DXT_MPIIO"])
def test_dxt_segment_size_follows_the_version(module):
    """The same record bytes read as the other version do not tile the region."""
    v1 = dxt_record(11, 0, [(0, 10, 1.0, 1.5)] * 4, [])  # 4 x 32 bytes of segments
    v2 = dxt_record(11, 0, [(0, 10, 1.0, 1.5, 1)] * 4, [])  # 4 x 40
    old, new = (1, 2) if module == "DXT_POSIX" else (2, 3)
    for version, rec in ((new, v1), (old, v2)):
        data = v3_log("3.41", names=NAMES, modules={"POSIX": (4, [posix_v4(11)]), module: (version, [rec])})
        raises(data, "corrupt_stream")


@pytest.mark.parametrize("module", ["DXT_POSIX", "DXT_MPIIO"])
def test_truncated_or_corrupt_dxt_v2_region(module):
    data = dxt_v2_log()
    off, n = struct.unpack_from("<QQ", data, 48 + 16 * {"DXT_POSIX": 10, "DXT_MPIIO": 11}[module])
    raises(data[: off + n - 1], "truncated")
    bad = bytearray(data)
    bad[off + 2 : off + 6] = b"\xff\xff\xff\xff"
    raises(bytes(bad), "corrupt_stream")
    cut = dxt_record(11, 0, [(0, 10, 1.0, 1.5, 1)], [])[:-8]  # the last segment loses its thread id
    raises(
        v3_log(
            "3.41",
            names=NAMES,
            modules={"POSIX": (4, [posix_v4(11)]), module: (3 if module == "DXT_MPIIO" else 2, [cut])},
        ),
        "corrupt_stream",
    )


def test_names_cut_short():
    raw = struct.pack("<Q", 11) + b"/no/terminator"
    with pytest.raises(LogError) as err:
        reader._parse_names(raw, reader.Header(simple()))
    assert err.value.reason == "corrupt_stream"


@pytest.mark.parametrize(
    "job_kw, detail",
    [
        (dict(start=200, end=100), "before it starts"),
        (dict(nprocs=0), "nprocs"),
        (dict(start=100, end=100), "run time"),  # 3.41 run time = end - start = 0
    ],
)
def test_bad_job(job_kw, detail):
    assert detail in raises(simple(job=job_region("3.41", **job_kw)), "bad_job").detail


def test_same_second_is_a_one_second_job_before_341():
    assert read_log(simple("3.21", job=job_region("3.21", start=5, end=5))).job.run_time == 1.0


def test_job_region_shorter_than_the_job_struct():
    raises(simple(job=b"\0" * 100), "bad_job")


def test_no_io_modules():
    mpiio = record("MPIIO", 3, 11, 0)
    raises(v3_log("3.41", names=NAMES, modules={"MPIIO": (3, [mpiio])}), "no_io_modules")
    raises(v3_log("3.41"), "no_io_modules")


def test_decompression_is_capped():
    bomb = zlib.compress(b"\0" * 1_000_000)
    assert len(inflate(bomb, F.COMP_ZLIB, 1_000_000)) == 1_000_000
    with pytest.raises(LogError) as err:
        inflate(bomb, F.COMP_ZLIB, 999_999)
    assert err.value.reason == "too_large"
    with pytest.raises(LogError) as err:  # the job region alone is ~1.1 kB
        read_log(simple(), max_inflated_bytes=2000)
    assert err.value.reason == "too_large"


def test_inflate_many_streams_and_early_end():
    streams = b"".join(zlib.compress(bytes([i % 256]) * 3000) for i in range(300))
    out = inflate(streams, F.COMP_ZLIB, 10**7)
    assert len(out) == 900_000 and out[-1] == 299 % 256 and out[3000] == 1
    with pytest.raises(LogError):
        inflate(streams[:-3], F.COMP_ZLIB, 10**7)


@pytest.mark.parametrize("comp", [F.COMP_ZLIB, F.COMP_BZIP2])
def test_a_large_region_is_inflated_a_piece_at_a_time(comp, monkeypatch):
    # Pieces of 1,000 bytes: streams of 2,500 and 700 bytes end mid-piece, at a piece's
    # end and past the point where the parts become one buffer.
    monkeypatch.setattr(reader, "INFLATE_PIECE_BYTES", 1000)
    pack = zlib.compress if comp == F.COMP_ZLIB else bz2.compress
    texts = [bytes(range(256)) * 10, b"x" * 700, b"y" * 1000, np.arange(800, dtype="u1").tobytes()]
    region = b"".join(pack(text) for text in texts)
    whole = b"".join(texts)
    out = inflate(region, comp, len(whole))
    assert isinstance(out, bytearray) and out == whole
    with pytest.raises(LogError) as err:
        inflate(region, comp, len(whole) - 1)
    assert err.value.reason == "too_large"
    small = pack(b"z" * 999)  # under a piece: one call, bytes as before
    assert inflate(small, comp, 10**6) == b"z" * 999 and isinstance(inflate(small, comp, 10**6), bytes)


def test_a_large_region_is_held_about_once_while_inflated():
    # 96 MiB of zeros inflated in one call peaked at twice that (the decompressor's
    # blocks joined at the end); a 434 MB POSIX region so passed a worker's 1 GiB bound.
    region = zlib.compress(bytes(96 << 20))
    tracemalloc.start()
    try:
        out = inflate(region, F.COMP_ZLIB, 1 << 30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(out) == 96 << 20 and not any(out[:: 1 << 20])
    assert peak < 1.5 * len(out)


def test_gzip_wrapping_garbage_and_a_3x_log():
    raises(gzip.compress(b"hello world"), "unreadable")
    cut_short = gzip.compress(b"3.41\0\0\0\0" + MAGIC_LE + b"x" * 100)[:-5]  # a log's head, then cut
    raises(cut_short, "corrupt_stream")
    assert read_log(gzip.compress(simple())).job.version == "3.41"


ZEROS = bytes(1 << 20)
CAP = 64 << 10  # far below the zeros
MAGIC_LE, MAGIC_BE = F.MAGIC.to_bytes(8, "little"), F.MAGIC.to_bytes(8, "big")


@pytest.mark.parametrize(
    "body",
    [gzip.compress(bz2.compress(ZEROS)), bz2.compress(ZEROS), gzip.compress(gzip.compress(ZEROS))],
    ids=["gzip of bzip2", "bzip2", "gzip of gzip"],
)
def test_a_wrapper_of_anything_but_a_log_is_inflated_no_further_than_its_first_bytes(body):
    """Inflated whole, the zeros would pass the cap (too_large, after the CPU it takes:
    3.3 s for 1 GB under bzip2); their first bytes say unreadable at once."""
    with pytest.raises(LogError) as err:
        read_log(body, max_inflated_bytes=CAP)
    assert (err.value.reason, err.value.detail) == ("unreadable", "not a Darshan log (unknown leading bytes)")
    with mock.patch.object(reader, "UNWRAPPED_HEAD_BYTES", 1 << 30):  # head never checked: the cap stops it
        with pytest.raises(LogError, match="too_large"):
            read_log(body, max_inflated_bytes=CAP)


@pytest.mark.parametrize(
    "inside, reason",
    [
        (b"", "unreadable"),  # shorter than a head: all of it is checked
        (b"3", "unreadable"),
        (b"4." + ZEROS, "unreadable"),
        (b"x3." + ZEROS, "unreadable"),
        (b"3." + ZEROS, "unreadable"),  # a version, then no magic number: inflated no further
        (b"2." + ZEROS, "unreadable"),
        (b"3.41\0\0\0\0" + MAGIC_LE + ZEROS, "too_large"),  # a log's head: inflated on, up to the cap
        (b"2.06\0\0\0\0" + MAGIC_BE + ZEROS, "too_large"),  # either byte order
        (b"3.41\0\0\0\0" + (F.MAGIC + 1).to_bytes(8, "little") + ZEROS, "unreadable"),
        (b"BZh" + ZEROS, "too_large"),  # like a second wrapper
        (b"\x1f\x8b" + ZEROS, "too_large"),
    ],
)
def test_the_first_bytes_of_a_wrapper_s_content_decide_whether_it_is_inflated_on(inside, reason):
    with pytest.raises(LogError) as err:
        read_log(gzip.compress(inside), max_inflated_bytes=CAP)
    assert err.value.reason == reason, err.value.detail


def test_paths_and_missing_files(tmp_path):
    p = tmp_path / "x.darshan"
    p.write_bytes(simple())
    assert read_log(p).job.nprocs == 4
    assert read_log(str(p)).job.nprocs == 4
    raises(str(tmp_path / "missing.darshan"), "unreadable")


def test_internal_errors_become_log_errors(monkeypatch):
    def broken(*_):
        raise RuntimeError("boom")

    monkeypatch.setattr(reader, "_read_v3", broken)
    err = raises(simple(), "internal_error")  # a defect of ours, never passed off as bad data
    assert err.detail.startswith("RuntimeError on bytes: boom [at test_reader.py:")


def _names_by_hand(raw: bytes, endian: str) -> list[tuple[int, str]] | None:
    """Reference walk of 3.10+ name records, one record at a time: the id's 8 bytes
    (any, NULs included), then the path up to the next NUL; None when the records do
    not tile the region."""
    records, at = [], 0
    while at < len(raw):
        end = raw.find(b"\0", at + 8)
        if end < 0:
            return None
        (rid,) = struct.unpack_from(endian + "Q", raw, at)
        records.append((rid, raw[at + 8 : end].decode("utf-8", "replace")))
        at = end + 1
    return records


@settings(max_examples=400, deadline=None)
@given(
    records=st.lists(
        st.tuples(
            st.binary(min_size=8, max_size=8)
            | st.sampled_from([b"\0" * 8, b"\0abc\0\0\0\0", b"\x01" * 7 + b"\0"]),
            st.binary(max_size=12).map(lambda path: path.replace(b"\0", b"")),
        ),
        max_size=12,
    ),
    cut=st.integers(0, 3),
    endian=st.sampled_from("<>"),
)
@pytest.mark.parametrize(
    "numpy_from, close_share",
    [(1 << 30, 0.25), (0, 0.25), (0, 1.0)],
    ids=["regular expression", "numpy", "numpy, every close NUL decided in the loop"],
)
def test_name_records_parse_as_a_record_by_record_walk_does(numpy_from, close_share, records, cut, endian):
    """Ids holding NULs (even all eight), empty paths, bytes that are not UTF-8, either
    byte order, and regions cut short: the same names, or corrupt_stream, as walking
    the records one by one, by each of the parser's ways."""
    raw = b"".join(rid + path + b"\0" for rid, path in records)
    raw = raw[: len(raw) - cut]
    header = reader.Header(simple(e=endian))
    expected = _names_by_hand(raw, endian)
    with (
        mock.patch.object(reader, "NAMES_BY_NUMPY_BYTES", numpy_from),
        mock.patch.object(reader, "NAMES_CLOSE_NULS_MAX_SHARE", close_share),
    ):
        if expected is None:
            with pytest.raises(LogError) as err:
                reader._parse_names(raw, header)
            assert err.value.reason == "corrupt_stream"
            return
        names = dict.fromkeys((rid for rid, _ in expected), "")
        names.update((rid, path) for rid, path in reversed(expected) if path)
        assert reader._parse_names(raw, header) == names


def test_a_large_name_region_is_cut_by_numpy_as_by_the_regular_expression():
    """3,000 records over NAMES_BY_NUMPY_BYTES, ids with NULs among them (as ~3 % of
    random ids have), one empty path after an id ending in NUL, and non-UTF-8 bytes."""
    rng = np.random.default_rng(5)
    ids = [bytes(rng.integers(0, 256, 8, dtype=np.uint8)) for _ in range(3000)]
    ids[7] = b"\1" * 7 + b"\0"
    paths = [f"/scratch/run/rank{i:05d}.dat".encode() for i in range(3000)]
    paths[7], paths[8] = b"", b"/scratch/\xff\xfe"
    raw = b"".join(rid + path + b"\0" for rid, path in zip(ids, paths))
    assert len(raw) > reader.NAMES_BY_NUMPY_BYTES
    assert reader._name_record_ends(raw) is not None  # the numpy way is taken
    header = reader.Header(simple())
    expected = dict(_names_by_hand(raw, "<"))
    assert reader._parse_names(raw, header) == expected
    assert expected[struct.unpack("<Q", ids[8])[0]] == "/scratch/\ufffd\ufffd"


def test_a_name_region_of_mostly_nuls_goes_to_the_regular_expression():
    raw = (b"\0" * 8 + b"/a\0") * 1000 + b"\0" * 8 + b"\0"  # every id NUL: 8 close NULs a record
    assert reader._name_record_ends(raw) is None
    assert reader._parse_names(raw, reader.Header(simple())) == {0: "/a"}


def _id(k: int) -> int:
    """A record id with no NUL byte, so that the test regions are cut by numpy."""
    return 0x0101010101010100 + k


def test_a_large_name_region_is_kept_undecoded_until_asked():
    """The table looks one name up as the dict does (the first non-empty path of the
    id, else the empty one), decodes nothing for it, and equals the dict as a mapping."""
    raw = b"".join(
        struct.pack("<Q", _id(k)) + path + b"\0"
        for k, path in [(1, b""), (1, b"/a"), (2, b""), (3, b"/c\xff"), (3, b"/other")]
    )
    with mock.patch.object(reader, "NAMES_BY_NUMPY_BYTES", 0):
        table = reader._parse_names(raw, reader.Header(simple()))
    assert isinstance(table, reader.NameTable)
    assert (table[_id(1)], table[_id(2)], table[_id(3)]) == ("/a", "", "/c\ufffd")
    assert table.get(_id(4)) is None and table.get(-1) is None and table.get("x") is None
    assert table[np.uint64(_id(1))] == "/a"  # numpy ints find their name, as in a dict
    assert table._names is None  # nothing decoded yet
    assert table == {_id(1): "/a", _id(2): "", _id(3): "/c\ufffd"}
    assert list(table) == [_id(1), _id(2), _id(3)] and len(table) == 3
    assert table[_id(3)] == "/c\ufffd" and table.get(_id(4)) is None  # from the dict now
