"""The writer: record ids, and logs that pydarshan and our reader read back exactly."""

import bz2
import gzip
import struct
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mosaic.darshan import formats as F
from mosaic.darshan import reader
from mosaic.darshan.writer import darshan_hash, record_id, write_legacy_log, write_log
from mosaic_testing.parser_text import COUNTER_NAMES, TIMESTAMP_NAMES, expected_counter

PATHS = ["/scratch/run/out.h5", "<STDOUT>", "/u/sciteam/x/" + "deep/" * 12 + "input.deck"]
# canonical field -> pydarshan column suffix (POSIX and STDIO name them alike)
CANON_PYDARSHAN = {**{field: name for field, (name,) in COUNTER_NAMES["POSIX"].items()}, **TIMESTAMP_NAMES}


THREAD = 139882294634304  # a glibc pthread_t (an address)


def make_log(posix=4, stdio=2, seed=0, version="3.41", partial=False, dxt=False) -> F.DarshanLog:
    rng = np.random.default_rng(seed)
    ids = darshan_hash(PATHS)

    def module(mid, v, rows, ranks):
        n_c, n_f = F.RECORD_SHAPES[(mid, v)]
        return F.ModuleRecords(
            mid,
            v,
            ids[rows],
            np.array(ranks, np.int64),
            rng.integers(0, 1 << 40, (len(rows), n_c)),
            np.round(rng.random((len(rows), n_f)) * 500, 6),
        )

    start = 1_550_000_000.25 if version == "3.41" else 1_550_000_000.0
    job = F.Job(
        uid=4242,
        job_id=77,
        start=start,
        end=start + 600,
        run_time=0.0,
        nprocs=8,
        cmdline="/u/sciteam/x/bin/lmp -in in.lj",
        mounts=[("/scratch", "lustre"), ("/", "rootfs")],
        metadata={"lib_ver": "3.1.6", "h": "romio_no_indep_rw=true"},
        partial=partial,
    )
    log = F.DarshanLog(
        job,
        {int(i): p for i, p in zip(ids, PATHS)},
        {F.POSIX: module(F.POSIX, posix, [0, 2, 0], [0, -1, 5]), F.STDIO: module(F.STDIO, stdio, [1], [0])},
    )
    if dxt:
        log.dxt_posix = F.DxtSegments(
            ids=np.array([ids[0]] * 3, np.uint64),
            ranks=np.array([0, 0, 5]),
            is_write=np.array([True, False, True]),
            offsets=np.array([0, 4096, 8192]),
            lengths=np.array([4096, 100, 7]),
            starts=np.array([1.0, 2.0, 3.0]),
            ends=np.array([1.5, 2.25, 3.75]),
            thread_ids=np.array([THREAD, THREAD, THREAD + 4096], np.uint64),
        )
        log.dxt_mpiio = F.DxtSegments(
            ids=np.array([ids[0]] * 2, np.uint64),
            ranks=np.array([0, 5]),
            is_write=np.array([True, True]),
            offsets=np.array([0, 8192]),
            lengths=np.array([4096, 7]),
            starts=np.array([0.9, 2.9]),
            ends=np.array([1.6, 3.8]),
            thread_ids=np.array([THREAD, THREAD + 4096], np.uint64),
        )
    return log


# --------------------------------------------------------------------------- ids


def test_record_ids_match_real_logs(shared_logs):
    """Ids in real logs are Darshan's hash of the name (anonymized logs excepted)."""
    darshan = pytest.importorskip("darshan")
    matched = 0
    for path in shared_logs:
        if "apmpi" not in str(path) and "hdf5_diagonal" not in str(path):
            continue
        names = darshan.DarshanReport(str(path), read_all=True).name_records
        ours = darshan_hash(list(names.values()))
        assert [int(x) for x in ours] == list(names.keys())
        matched += len(names)
    assert matched >= 10


def test_record_id_of_empty_and_block_edges_differ():
    ids = darshan_hash(["", "a" * 23, "a" * 24, "a" * 25, "a" * 48])
    assert len(set(ids.tolist())) == 5
    assert record_id("a" * 24) == int(ids[2])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=80), min_size=1, max_size=6))
def test_hash_does_not_depend_on_batch(paths):
    """Batching pads to the longest path: each id must stay what it is alone."""
    batch = darshan_hash(paths)
    assert [int(x) for x in batch] == [record_id(p) for p in paths]


# --------------------------------------------------------------------------- pydarshan


VARIANTS = [  # version, posix, stdio, big endian, compression, streams
    ("3.41", 4, 2, False, "zlib", 1),
    ("3.41", 4, 2, True, "zlib", 3),
    ("3.21", 4, 2, False, "none", 1),
    ("3.10", 4, 2, False, "zlib", 2),
    ("3.10", 3, 1, True, "zlib", 1),
]


@pytest.mark.parametrize("version,posix,stdio,big,compression,streams", VARIANTS)
def test_pydarshan_reads_back_what_was_written(tmp_path, version, posix, stdio, big, compression, streams):
    darshan = pytest.importorskip("darshan")
    log = make_log(posix, stdio, version=version, dxt=version == "3.41")
    path = tmp_path / "x.darshan"
    # pydarshan 3.5.0 reads DXT_POSIX v1 and DXT_MPIIO v1-v2 only
    path.write_bytes(
        write_log(log, version, big, compression, streams, dxt_versions={F.DXT_POSIX: 1, F.DXT_MPIIO: 2})
    )
    report = darshan.DarshanReport(str(path), read_all=True)
    job = report.metadata["job"]
    assert (job["uid"], job["nprocs"], job["jobid"], job["log_ver"]) == (4242, 8, 77, version)
    assert job["start_time_sec"] == 1_550_000_000
    expected_run = 600.0 if version == "3.41" else 601.0
    assert job["run_time"] == pytest.approx(expected_run)
    assert job["metadata"] == {"lib_ver": "3.1.6", "h": "romio_no_indep_rw=true"}
    assert report.metadata["exe"] == log.job.cmdline
    assert dict(report.name_records) == log.names
    for mid, prefix in ((F.POSIX, "POSIX"), (F.STDIO, "STDIO")):
        ours = log.modules[mid]
        frames = report.records[prefix].to_df()
        counters = frames["counters"].set_index(["id", "rank"])
        fcounters = frames["fcounters"].set_index(["id", "rank"])
        canon = ours.canonical()
        for i, (rid, rank) in enumerate(zip(ours.ids, ours.ranks)):
            row = counters.loc[(int(rid), int(rank))]
            named = {name.removeprefix(f"{prefix}_"): value for name, value in row.items()}
            for field, suffix in CANON_PYDARSHAN.items():
                if suffix.startswith("F_"):
                    assert fcounters.loc[(int(rid), int(rank)), f"{prefix}_{suffix}"] == canon[field][i]
                else:
                    assert expected_counter(prefix, field, named) == canon[field][i]
            if (mid, ours.version) in ((F.POSIX, 4), (F.STDIO, 2)):  # current versions: all fields
                assert counters.loc[(int(rid), int(rank))].to_numpy().tolist() == ours.counters[i].tolist()
                assert fcounters.loc[(int(rid), int(rank))].to_numpy().tolist() == ours.fcounters[i].tolist()
    if log.dxt_posix is not None:
        segs = report.records["DXT_POSIX"].to_df()
        by_rank = {s["rank"]: s for s in segs}
        assert by_rank[0]["write_segments"]["length"].tolist() == [4096]
        assert by_rank[0]["read_segments"]["end_time"].tolist() == [2.25]
        assert by_rank[5]["write_segments"]["start_time"].tolist() == [3.0]
        mpiio = {s["rank"]: s for s in report.records["DXT_MPIIO"].to_df()}
        assert mpiio[0]["write_segments"]["end_time"].tolist() == [1.6]
        assert mpiio[5]["write_segments"]["offset"].tolist() == [8192]


# --------------------------------------------------------------------------- our reader


def assert_same_records(got: F.DarshanLog, log: F.DarshanLog):
    for mid, ours in log.modules.items():
        theirs = got.modules[mid]
        order = np.lexsort((theirs.ranks, theirs.ids))
        mine = np.lexsort((ours.ranks, ours.ids))
        assert theirs.version == ours.version
        assert np.array_equal(theirs.ids[order], ours.ids[mine])
        assert np.array_equal(theirs.ranks[order], ours.ranks[mine])
        assert np.array_equal(theirs.counters[order], ours.counters[mine])
        assert np.array_equal(theirs.fcounters[order], ours.fcounters[mine])


@pytest.mark.parametrize(
    "version,posix,stdio", [("3.41", 4, 2), ("3.21", 4, 2), ("3.10", 3, 1), ("3.10", 4, 2)]
)
@pytest.mark.parametrize("big", [False, True])
@pytest.mark.parametrize("compression", ["zlib", "bzip2", "none"])
def test_our_reader_reads_every_variant(version, posix, stdio, big, compression):
    log = make_log(posix, stdio, version=version, partial=big, dxt=True)
    got = reader.read_log(write_log(log, version, big, compression, streams_per_region=2))
    assert (got.job.uid, got.job.job_id, got.job.nprocs, got.job.version) == (4242, 77, 8, version)
    assert got.job.run_time == pytest.approx(600.0 if version == "3.41" else 601.0)
    assert got.job.cmdline == log.job.cmdline
    assert got.job.partial is big
    assert got.names == log.names
    assert_same_records(got, log)
    dxt = got.dxt_posix
    assert sorted(dxt.lengths.tolist()) == [7, 100, 4096]
    assert dxt.is_write[dxt.lengths == 100].tolist() == [False]
    # The newest DXT versions of the format: thread ids from 3.41 on (DXT_POSIX v2, DXT_MPIIO v3).
    threads = [THREAD, THREAD, THREAD + 4096] if version == "3.41" else [F.DXT_NO_THREAD] * 3
    assert dxt.thread_ids[np.argsort(dxt.starts)].tolist() == threads
    assert got.dxt_mpiio.lengths.tolist() == [4096, 7]
    assert got.dxt_mpiio.thread_ids.tolist() == threads[1:]


@pytest.mark.parametrize("posix_version, mpiio_version", [(1, 1), (1, 2), (1, 3), (2, 2), (2, 3)])
@pytest.mark.parametrize("big", [False, True])
def test_every_dxt_version_round_trips(posix_version, mpiio_version, big):
    log = make_log(dxt=True)
    data = write_log(log, "3.41", big, dxt_versions={F.DXT_POSIX: posix_version, F.DXT_MPIIO: mpiio_version})
    hdr = reader.Header(data)
    assert hdr.modules[F.DXT_POSIX][2] == posix_version and hdr.modules[F.DXT_MPIIO][2] == mpiio_version
    got = reader.read_log(data)
    for module, ours, theirs, threaded in (
        ("DXT_POSIX", log.dxt_posix, got.dxt_posix, posix_version == 2),
        ("DXT_MPIIO", log.dxt_mpiio, got.dxt_mpiio, mpiio_version == 3),
    ):
        order = np.argsort(theirs.starts)
        for column in ("ids", "ranks", "is_write", "lengths", "starts", "ends"):
            assert getattr(theirs, column)[order].tolist() == getattr(ours, column).tolist(), (module, column)
        offsetless = module == "DXT_MPIIO" and mpiio_version == 1  # v1 recorded none (darshan-util: -1)
        want = [-1] * len(ours.ids) if offsetless else ours.offsets.tolist()
        assert theirs.offsets[order].tolist() == want, module
        want = ours.thread_ids.tolist() if threaded else [0] * len(ours.ids)
        assert theirs.thread_ids[order].tolist() == want, module


def test_streams_are_separate_compressed_streams():
    """Several ranks' streams: zlib.decompress alone sees only the first one."""
    log = make_log()
    one = write_log(log, "3.41", streams_per_region=1)
    many = write_log(log, "3.41", streams_per_region=4)
    offset, length = struct.unpack_from("<QQ", many, 48 + 16 * F.POSIX)
    region = many[offset : offset + length]
    first = zlib.decompressobj()
    head = first.decompress(region)
    assert first.unused_data  # more streams follow
    assert len(head) < 3 * F.record_dtype(F.POSIX, 4).itemsize
    assert len(many) > len(one)


@pytest.mark.parametrize("version", ["2.05", "2.06"])
@pytest.mark.parametrize(
    "compression,opener", [("none", lambda b: b), ("gzip", gzip.decompress), ("bzip2", bz2.decompress)]
)
def test_legacy_logs(version, compression, opener):
    log = make_log()
    data = write_legacy_log(log, version, compression)
    raw = opener(data)
    assert raw[:4] == version.encode() and len(raw) == 4096 + 3 * 1328
    got = reader.read_log(data)
    assert (got.job.uid, got.job.nprocs, got.job.version) == (4242, 8, version)
    assert got.job.run_time == 601.0
    canon, theirs = log.modules[F.POSIX].canonical(), got.modules[F.POSIX].canonical()
    for field in ("opens", "seeks", "bytes_read", "bytes_written", "open_start", "close_end"):
        assert sorted(theirs[field].tolist()) == sorted(canon[field].tolist())


def test_rejects_what_a_format_cannot_hold():
    with pytest.raises(ValueError, match="POSIX v3"):
        write_log(make_log(posix=3, stdio=1), "3.41")
    with pytest.raises(ValueError, match="format"):
        write_log(make_log(), "3.00")
    with pytest.raises(ValueError, match="compression"):
        write_log(make_log(), "3.41", compression="lz4")
    with pytest.raises(ValueError):
        write_legacy_log(make_log(), "2.04")
    with pytest.raises(ValueError, match="DXT_POSIX v2 does not exist in format 3.21"):
        write_log(make_log(dxt=True), "3.21", dxt_versions={F.DXT_POSIX: 2})
    with pytest.raises(ValueError, match="DXT_MPIIO v3 does not exist in format 3.10"):
        write_log(make_log(posix=3, stdio=1, dxt=True), "3.10", dxt_versions={F.DXT_MPIIO: 3})
    with pytest.raises(ValueError, match="DXT_POSIX v3"):
        write_log(make_log(dxt=True), "3.41", dxt_versions={F.DXT_POSIX: 3})


records = st.integers(1, 12).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(-1, 64), min_size=n, max_size=n),
        st.lists(st.integers(0, 1 << 50), min_size=n * 69, max_size=n * 69),
        st.lists(st.floats(0, 1e6, allow_nan=False), min_size=n * 17, max_size=n * 17),
    )
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records,
    st.sampled_from(["3.41", "3.21", "3.10"]),
    st.booleans(),
    st.sampled_from(["zlib", "bzip2", "none"]),
    st.integers(1, 5),
)
def test_any_records_round_trip(recs, version, big, compression, streams):
    ranks, counters, fcounters = recs
    n = len(ranks)
    paths = [f"/scratch/f{i}" for i in range(n)]
    ids = darshan_hash(paths)
    log = make_log(version=version)
    log.names = {int(i): p for i, p in zip(ids, paths)}
    log.modules = {
        F.POSIX: F.ModuleRecords(
            F.POSIX,
            4,
            ids,
            np.array(ranks, np.int64),
            np.array(counters, np.int64).reshape(n, 69),
            np.array(fcounters).reshape(n, 17),
        )
    }
    got = reader.read_log(write_log(log, version, big, compression, streams))
    assert_same_records(got, log)


def test_dxt_records_group_by_file_and_rank_as_numpy_unique_does():
    """The writer groups DXT segments by (file id, rank) without np.unique(axis=0), which
    sorted the pairs as opaque records (3.3 s for 2 M segments); same pairs, same order."""
    from mosaic.darshan.writer import _file_rank_pairs

    rng = np.random.default_rng(3)
    ids = np.array([0, 2**64 - 1, 5, 5, 0, 2**63], np.uint64)[rng.integers(0, 6, 500)]
    ranks = rng.integers(-1, 4, 500).astype(np.int64).view(np.uint64)  # -1: a shared record
    pairs, inverse = _file_rank_pairs(ids, ranks)
    expected, expected_inverse = np.unique(np.stack([ids, ranks], 1), axis=0, return_inverse=True)
    assert pairs.tolist() == expected.tolist() and inverse.tolist() == expected_inverse.ravel().tolist()
    assert pairs[inverse].tolist() == np.stack([ids, ranks], 1).tolist()
    empty = np.zeros(0, np.uint64)
    assert [a.shape for a in _file_rank_pairs(empty, empty)] == [(0, 2), (0,)]
