"""Trace building: operations, metadata rows, filtering, cleaning, DXT, validation."""

import struct
import tarfile
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mosaic.analysis.metadata import requests_per_second
from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.darshan.formats import DarshanLog, DxtSegments, Job, ModuleRecords
from mosaic.darshan.reader import NameTable, _name_record_ends, read_log
from mosaic.darshan.writer import heatmap_records, write_log
from mosaic.errors import LogError
from mosaic.trace import (
    META_DTYPE,
    OPS_DTYPE,
    READ,
    WRITE,
    build_trace,
    log_facts,
    read_trace,
    trace_from_bytes,
)
from mosaic_testing.handmade import POSIX_TIMES

RUN_TIME = 100.0
STDIO_F = dict(
    open_start=3,
    close_start=4,
    write_start=5,
    read_start=6,
    open_end=7,
    close_end=8,
    write_end=9,
    read_end=10,
)


def job(**kw):
    base = dict(
        uid=5,
        job_id=77,
        start=1_700_000_000.0,
        end=1_700_000_099.0,
        run_time=RUN_TIME,
        nprocs=8,
        cmdline="/apps/lmp -in in.lj",
        version="3.21",
    )
    base.update(kw)
    return Job(**base)


# module -> (version, counters, fcounters, indices of opens/seeks/bytes read/written, fcounters)
LAYOUTS = {F.POSIX: (4, 69, 17, [0, 5, 14, 15], POSIX_TIMES), F.STDIO: (2, 14, 15, [0, 4, 7, 6], STDIO_F)}


def records(module, rows):
    """Rows: (id, rank, opens, seeks, bytes_read, bytes_written, {fcounter: t})."""
    version, n_c, n_f, cidx, fidx = LAYOUTS[module]
    c = np.zeros((len(rows), n_c), np.int64)
    f = np.zeros((len(rows), n_f))
    for i, (_, _, opens, seeks, nread, nwritten, times) in enumerate(rows):
        c[i, cidx] = opens, seeks, nread, nwritten
        for name, t in times.items():
            f[i, fidx[name]] = t
    return ModuleRecords(
        module,
        version,
        np.array([r[0] for r in rows], np.uint64),
        np.array([r[1] for r in rows], np.int64),
        c,
        f,
    )


NAMES = {
    1: "/scratch/run/out.h5",
    2: "/home/u/in.cfg",
    3: "<STDOUT>",
    4: "/proc/self/maps",
    5: "/scratch2/other",
    6: "/scratch/run/log.txt",
}


def make_log(posix_rows=(), stdio_rows=(), **kw):
    modules = {}
    if posix_rows:
        modules[F.POSIX] = records(F.POSIX, posix_rows)
    if stdio_rows:
        modules[F.STDIO] = records(F.STDIO, stdio_rows)
    kw.setdefault("present_modules", tuple(sorted(modules)))
    return DarshanLog(job=kw.pop("job", job()), names=kw.pop("names", NAMES), modules=modules, **kw)


def ops_list(trace):
    return sorted((int(o["direction"]), o["start"], o["end"], o["bytes"], int(o["ranks"])) for o in trace.ops)


def test_operations_and_metadata_hand_computed():
    log = make_log(
        posix_rows=[
            (
                1,
                -1,
                16,
                4,
                0,
                8_000,
                dict(
                    open_start=0.5,
                    open_end=0.75,
                    write_start=1.0,
                    write_end=9.0,
                    close_start=9.5,
                    close_end=10.0,
                ),
            ),
            (2, 3, 1, 0, 300, 0, dict(open_start=0.1, open_end=0.2, read_start=0.3, read_end=0.4)),
        ],
        stdio_rows=[
            (
                6,
                0,
                2,
                1,
                10,
                20,
                dict(open_start=1.0, read_start=2.0, read_end=3.0, write_start=4.0, write_end=5.0),
            )
        ],
    )
    trace = build_trace(log, "x.darshan", Config())
    assert trace.ops.dtype == OPS_DTYPE and trace.meta.dtype == META_DTYPE
    assert ops_list(trace) == [
        (READ, 0.3, 0.4, 300.0, 1),
        (READ, 2.0, 3.0, 10.0, 1),
        (WRITE, 1.0, 9.0, 8000.0, 8),  # shared record (rank -1) stands for nprocs ranks
        (WRITE, 4.0, 5.0, 20.0, 1),
    ]
    meta = sorted(trace.meta.tolist())
    assert meta == [
        (1.0, 0.0, 0.1, 0.2, 0.0, 0.0),  # never closed: 0 kept as 0
        (2.0, 1.0, 1.0, 0.0, 0.0, 0.0),
        (16.0, 4.0, 0.5, 0.75, 9.5, 10.0),
    ]
    assert trace.dropped_records == 0 and not trace.partial and not trace.has_dxt
    assert trace.total_bytes == 8330.0


@pytest.mark.parametrize(
    "version, reopened", [("2.06", (2.0, 50.0, 2.0, 50.0)), ("3.21", (2.0, 2.0, 50.0, 50.0))]
)
def test_darshan_2_spreads_repeated_opens_over_first_open_to_last_close(version, reopened):
    """SPEC 3.7: 2.x keeps one open and one close time per record. Opened once: its two instants;
    opened 10 times: opens and closes anywhere in [first open 2, last close 50]; never closed
    (close 0): no span, the opens stay at the first open. 3.x windows are Darshan's own."""
    instants = dict(open_start=1.0, open_end=1.0, close_start=5.0, close_end=5.0)
    again = dict(open_start=2.0, open_end=2.0, close_start=50.0, close_end=50.0)
    unclosed = dict(open_start=3.0, open_end=3.0)
    log = make_log(
        posix_rows=[
            (1, 0, 1, 0, 0, 10, instants),
            (5, 0, 10, 0, 0, 10, again),
            (6, 0, 4, 0, 0, 10, unclosed),
        ],
        job=job(version=version),
    )
    meta = build_trace(log, "x.darshan", Config()).meta
    windows = {
        int(row["opens"]): (row["open_start"], row["open_end"], row["close_start"], row["close_end"])
        for row in meta
    }
    assert windows == {1: (1.0, 1.0, 5.0, 5.0), 10: reopened, 4: (3.0, 3.0, 0.0, 0.0)}


def test_job_fields():
    trace = build_trace(make_log([(1, 0, 1, 0, 1, 0, {})]), "f", Config())
    assert trace.job == {
        "uid": 5,
        "job_id": "77",
        "exe": "/apps/lmp -in in.lj",
        "application": "/apps/lmp",
        "nprocs": 8,
        "start": "2023-11-14T22:13:20Z",
        "start_epoch": 1_700_000_000.0,
        "end_epoch": 1_700_000_099.0,
        "run_time": 100.0,
        "version": "3.21",
    }
    assert trace.group_key() == "5:/apps/lmp"
    assert trace.info["format"] == "3.21" and trace.info["modules"] == ["POSIX"]
    empty_cmd = build_trace(make_log([(1, 0, 1, 0, 1, 0, {})], job=job(cmdline="")), "f", Config())
    assert empty_cmd.job["application"] == ""


def test_default_filter_drops_pseudo_files_and_system_prefixes():
    rows = [(i, 0, 1, 0, 10 * i, 0, {}) for i in (1, 2, 3, 4, 5)]
    trace = build_trace(make_log(rows), "f", Config())
    assert sorted(trace.ops["bytes"].tolist()) == [10.0, 20.0, 50.0]  # not <STDOUT>, /proc
    assert len(trace.meta) == 3


def test_mount_filter_keeps_only_files_under_the_prefix():
    rows = [(i, 0, 1, 0, 10 * i, 0, {}) for i in (1, 2, 3, 5, 6)]
    trace = build_trace(make_log(rows), "f", Config(mounts=("/scratch/",)))
    assert sorted(trace.ops["bytes"].tolist()) == [10.0, 60.0]  # /scratch2 is not /scratch
    both = build_trace(make_log(rows), "f", Config(mounts=("/scratch", "/home/u")))
    assert sorted(both.ops["bytes"].tolist()) == [10.0, 20.0, 60.0]


def test_name_filter_edges():
    """Equal to a prefix or under it is listed; a longer name, or '<' not closed by '>', is not."""
    from mosaic.trace import _name_filter

    paths = [
        "/proc",
        "/proc/",
        "/procx/a",
        "/dev/shm/x",
        "<STDERR>",
        "<a>b",
        "x<a>",
        "<",
        "",
        "/scratch",
        "/scratch/",
        "/scratch2/a",
        "/home/a/scratch/b",
    ]
    assert _name_filter(Config()).keep(paths).tolist() == [
        False,
        False,
        True,
        False,
        False,
        True,
        True,
        True,
        True,
        True,
        True,
        True,
        True,
    ]
    assert _name_filter(Config(mounts=("/scratch/",))).keep(paths).tolist() == [False] * 9 + [
        True,
        True,
        False,
        False,
    ]
    assert _name_filter(Config()).keep([]).tolist() == []
    assert _name_filter(Config(mounts=("/",))).keep(["/a", "rel", "", "<STDOUT>"]).tolist() == [
        True,
        False,
        True,
        False,
    ]  # "/" holds every absolute path; no name is the empty path
    assert _name_filter(Config(excluded_prefixes=())).keep(["/proc/x", "<STDIN>"]).tolist() == [
        True,
        False,
    ]  # streams are never files


def _table(records: list[tuple[int, bytes]]) -> NameTable:
    """The reader's table of a large name region holding these (id, path bytes) records."""
    raw = b"".join(struct.pack("<Q", rid) + path + b"\0" for rid, path in records)
    ends = _name_record_ends(raw)
    assert ends is not None
    return NameTable(raw, ends, "<")


def _kept(names, config: Config) -> tuple[bool, set[int]]:
    """What the filter decides for a log with these names: unnamed files kept, and the odd ids
    beside the standard streams' (odd whenever unnamed files are kept: test below)."""
    from mosaic.trace import _KeptFiles

    kept = _KeptFiles(SimpleNamespace(names=names, record_mounts=None), config)
    return kept.unnamed, set(kept.odd_ids.tolist()) - set(F.STD_STREAM_IDS)


@pytest.mark.parametrize("mounts", [(), ("/scratch",)])
def test_the_standard_streams_are_left_out_by_id_whatever_their_name(mounts):
    """An anonymized log renames <STDIN> (record id 14734109647742566553) "4232606288": still a
    stream, never a file (SPEC 2), with or without mounts; another numeric name is kept
    (without mounts: unnamed and unlisted files are kept)."""
    from mosaic.trace import _KeptFiles

    streams = sorted(F.STD_STREAM_IDS)
    names = {streams[0]: "4232606288", streams[1]: "/scratch/x", 7: "4232606289", 8: "/scratch/y"}
    kept = _KeptFiles(SimpleNamespace(names=names, record_mounts=None), Config(mounts=mounts))
    rows = np.array([*streams, 7, 8], np.uint64)
    assert kept(rows).tolist() == [False, False, False, not mounts, True]


_BASE_ID = 0x0101010101010100  # ids without NUL bytes: the tables are cut by numpy


def test_a_name_table_is_filtered_on_its_bytes():
    """Prefixes of one word and of three, streams, a byte that is not UTF-8 after a
    prefix; the text filter lists the same paths."""
    from mosaic.trace import _name_filter

    paths = [
        b"/proc",
        b"/proc/1/maps",
        b"/process",
        b"/pro",
        b"<STDOUT>",
        b"<",
        b"<>",
        b"/proc\xff",
        b"/scratch/projects",
        b"/scratch/projects/a",
        b"/scratch/projectsX",
        b"/scratch/proj",
    ]
    table = _table([(_BASE_ID + k, path) for k, path in enumerate(paths)])
    texts = [path.decode("utf-8", "replace") for path in paths]
    for config, listed in [(Config(), [0, 1, 4, 6]), (Config(mounts=("/scratch/projects/",)), [8, 9])]:
        assert _name_filter(config).listed_records(table).tolist() == listed
        assert _name_filter(config).listed(texts).tolist() == listed
    assert table._names is None  # nothing was decoded


def test_an_id_with_listed_and_unlisted_paths_is_decided_by_its_name():
    """The dict keeps an id's first path: the byte test steps aside for it."""
    from mosaic.trace import _name_filter

    table = _table([(_BASE_ID + 1, b"/proc/a"), (_BASE_ID + 1, b"/home/a"), (_BASE_ID + 2, b"/home/b")])
    assert _name_filter(Config()).listed_records(table) is None
    assert _kept(table, Config()) == (True, {_BASE_ID + 1})


_PATHS = [
    b"/proc",
    b"/proc/",
    b"/proc/1/maps",
    b"/process",
    b"",
    b"<STDOUT>",
    b"<",
    b"<>",
    b"<a>b",
    b"/dev/shm/x",
    b"/scratch",
    b"/scratch/projects/a",
    b"/scratch/projectsX",
    b"/scratch2/a",
    b"/home/u/x",
    b"/pr\xc3\xb6c/x",
    b"/proc\xff",
    b"\xff/proc",
    b"rel/path",
    b"/a/very/long/prefix/x",
]
_CONFIGS = [
    Config(),
    Config(mounts=("/scratch/",)),
    Config(mounts=("/",)),
    Config(mounts=("/scratch/projects", "/home/u")),
    Config(excluded_prefixes=()),
    Config(excluded_prefixes=("/pr\u00f6c", "/a/very/long/prefix")),
]


@settings(max_examples=300, deadline=None)
@given(
    records=st.lists(st.tuples(st.integers(1, 6), st.sampled_from(_PATHS)), max_size=15),
    config=st.sampled_from(_CONFIGS),
)
def test_the_byte_filter_decides_as_the_text_filter(records, config):
    """Whatever the ids, repeats and empty paths: the same unnamed answer and odd ids
    as filtering the decoded names; and with ids all distinct the bytes decide."""
    from mosaic.trace import _name_filter

    records = [(_BASE_ID + k, path) for k, path in records]
    if not records:
        return
    assert _kept(_table(records), config) == _kept(dict(_table(records)), config)
    if len({rid for rid, _ in records}) == len(records):
        assert _name_filter(config).listed_records(_table(records)) is not None


@pytest.mark.parametrize("filtered", [1, 16, 17, 40])  # a few filtered files, or many
def test_filter_with_few_or_many_files_answered_otherwise(filtered):
    # ids 100.. are under /proc (dropped), 200..202 under /scratch (kept), 99 has no name
    names = {100 + i: f"/proc/{i}/maps" for i in range(filtered)}
    names.update({200: "/scratch/a", 201: "/scratch/b", 202: "/scratch/c"})
    rows = [(rid, 0, 1, 0, 1, 0, {}) for rid in names] + [(99, 0, 1, 0, 1000, 0, {})]
    trace = build_trace(make_log(rows, names=names), "f", Config())
    assert sorted(trace.ops["bytes"].tolist()) == [1.0, 1.0, 1.0, 1000.0]
    mounted = build_trace(make_log(rows, names=names), "f", Config(mounts=("/scratch",)))
    assert sorted(mounted.ops["bytes"].tolist()) == [1.0, 1.0, 1.0]  # no name: not under it


def test_sorted_unique_is_numpys_unique():
    from mosaic.trace import sorted_unique

    rng = np.random.default_rng(3)
    for values in (
        rng.integers(0, 2**63, 500).astype(np.uint64),
        np.repeat(np.array([7, 3, 3, 9], np.uint64), [2, 1, 4, 3]),
        np.zeros(0, np.uint64),
        np.array([5], np.uint64),
    ):
        assert sorted_unique(values).tolist() == np.unique(values).tolist()


def test_record_without_a_name():
    rows = [(99, 0, 1, 0, 10, 0, {})]
    assert len(build_trace(make_log(rows), "f", Config()).ops) == 1
    assert len(build_trace(make_log(rows), "f", Config(mounts=("/scratch",))).ops) == 0


def test_all_records_filtered_away_is_still_a_trace():
    trace = build_trace(make_log([(3, 0, 1, 0, 10, 0, {})]), "f", Config())
    assert len(trace.ops) == 0 and len(trace.meta) == 0 and trace.dropped_records == 0


# Slack at RUN_TIME = 100 s: max(1 s, 1 % of 100 s) = 1 s; at 1,000 s it is 10 s.
@pytest.mark.parametrize(
    "run_time, t, kept",
    [
        (100.0, 101.0, True),
        (100.0, 101.001, False),
        (1000.0, 1010.0, True),
        (1000.0, 1010.01, False),
        (100.0, -1.0, True),
        (100.0, -1.001, False),
    ],
)
def test_timestamp_slack_edge(run_time, t, kept):
    rows = [
        (
            1,
            0,
            1,
            0,
            0,
            50,
            dict(write_start=0.5, write_end=t) if t > 0 else dict(write_start=t, write_end=0.5),
        )
    ]
    trace = build_trace(make_log(rows, job=job(run_time=run_time)), "f", Config())
    assert (len(trace.ops) == 1) == kept
    assert trace.dropped_records == (0 if kept else 1)


def test_slack_settings_come_from_config():
    rows = [(1, 0, 1, 0, 0, 50, dict(write_start=0.5, write_end=104.0))]
    assert build_trace(make_log(rows), "f", Config()).dropped_records == 1
    assert build_trace(make_log(rows), "f", Config(clock_slack_seconds=4.0)).dropped_records == 0
    assert build_trace(make_log(rows), "f", Config(clock_slack_fraction=0.04)).dropped_records == 0


@pytest.mark.parametrize(
    "row, dropped",
    [
        ((1, 0, 1, 0, -1, 0, {}), 1),  # negative bytes read
        ((1, 0, 1, 0, 0, -5, {}), 1),  # negative bytes written
        ((1, 0, 1, 0, 10, 0, dict(read_start=5.0, read_end=4.0)), 1),  # inverted read
        ((1, 0, 1, 0, 10, 0, dict(read_start=5.0, read_end=5.0)), 0),  # zero-length is fine
        ((1, 0, 1, 0, 0, 10, dict(write_start=2.0, write_end=1.999)), 1),
        ((1, 0, 1, 0, 0, 0, dict(open_start=3.0, open_end=2.0)), 1),
        ((1, 0, 1, 0, 0, 0, dict(open_start=3.0, open_end=0.0)), 0),  # open end never recorded
        ((1, 0, 1, 0, 0, 0, dict(close_start=9.0, close_end=0.0)), 0),  # never closed
        ((1, 0, 1, 0, 0, 0, dict(close_start=9.0, close_end=8.0)), 1),
        ((1, 0, 1, 0, 10, 0, dict(read_start=np.nan, read_end=1.0)), 1),
    ],
)
def test_record_cleaning_rules(row, dropped):
    trace = build_trace(make_log([row, (6, 0, 1, 0, 7, 0, {})]), "f", Config())
    assert trace.dropped_records == dropped
    assert len(trace.meta) == 2 - dropped


def test_filtered_records_are_not_counted_as_dropped():
    trace = build_trace(make_log([(3, 0, 1, 0, -1, 0, {})]), "f", Config())
    assert trace.dropped_records == 0


def test_mpiio_records_never_make_operations():
    log = make_log([(1, 0, 1, 0, 10, 0, {})])
    mpi = records(F.POSIX, [(1, 0, 1, 0, 10, 0, {})])
    log.modules[F.MPIIO] = ModuleRecords(
        F.MPIIO, 3, mpi.ids, mpi.ranks, np.full((1, 51), 999, np.int64), np.zeros((1, 17))
    )
    assert len(build_trace(log, "f", Config()).ops) == 1


def dxt(rows, partial=False):
    """Rows: (id, rank, is_write, length, start, end)."""
    a = np.array(rows, dtype=object)
    return DxtSegments(
        ids=a[:, 0].astype(np.uint64),
        ranks=a[:, 1].astype(np.int64),
        is_write=a[:, 2].astype(bool),
        offsets=np.zeros(len(rows), np.int64),
        lengths=a[:, 3].astype(np.int64),
        starts=a[:, 4].astype(float),
        ends=a[:, 5].astype(float),
    )


def test_dxt_segments_replace_posix_operations_of_traced_files():
    rows = [
        (1, -1, 1, 0, 0, 300, dict(write_start=1.0, write_end=9.0)),
        (6, 0, 1, 0, 0, 40, dict(write_start=2.0, write_end=3.0)),
    ]
    segs = dxt(
        [
            (1, 0, True, 100, 1.0, 2.0),
            (1, 1, True, 200, 8.0, 9.0),
            (1, 1, False, 0, 5.0, 5.5),  # zero bytes: no operation
            (3, 0, True, 10, 1.0, 1.1),  # <STDOUT>: filtered like records
            (1, 0, True, 5, 50.0, 40.0),
        ]
    )  # inverted segment: dropped
    log = make_log(rows, dxt_posix=segs, present_modules=(F.POSIX, F.DXT_POSIX))
    trace = build_trace(log, "f", Config())
    assert ops_list(trace) == [
        (WRITE, 1.0, 2.0, 100.0, 1),
        (WRITE, 2.0, 3.0, 40.0, 1),
        (WRITE, 8.0, 9.0, 200.0, 1),
    ]
    assert trace.has_dxt and trace.info["dxt"] and trace.info["dropped_segments"] == 1
    assert len(trace.meta) == 2  # metadata still comes from the POSIX records


def test_a_file_without_a_valid_dxt_segment_keeps_its_posix_totals():
    """Segments that are all invalid replaced the file's POSIX totals
    with nothing (0 bytes, dropped_records 0). Through a log written by the writer."""
    rows = [
        (1, -1, 1, 0, 0, 300, dict(write_start=1.0, write_end=9.0)),
        (6, 0, 1, 0, 0, 40, dict(write_start=2.0, write_end=3.0)),
    ]
    segs = dxt(
        [
            (1, 0, True, 100, np.nan, 2.0),
            (1, 0, True, 100, -5.0, 2.0),  # before the run by more than the 1 s slack
            (1, 1, True, 100, 5.0, 4.0),  # inverted
            (1, 1, True, 100, 6.0, 7.0),  # its offset, -4096 (below)
            (6, 0, True, 40, 2.0, 2.5),  # the one valid segment: file 6 is DXT-traced
            (6, 0, True, 40, np.inf, 2.5),
        ]
    )
    segs.offsets[3] = -4096
    log = make_log(rows, dxt_posix=segs, present_modules=(F.POSIX, F.DXT_POSIX), job=job(version="3.41"))
    data = write_log(log, "3.41", dxt_versions={F.DXT_POSIX: 1})
    trace = trace_from_bytes(data, "f", Config())
    assert ops_list(trace) == [(WRITE, 1.0, 9.0, 300.0, 8), (WRITE, 2.0, 2.5, 40.0, 1)]
    assert trace.dropped_records == 5 and trace.info["dropped_segments"] == 5 and trace.has_dxt
    facts = log_facts(read_log(data), Config())
    assert (facts.total_bytes, facts.dropped_records) == (340.0, 5)


def test_partial_dxt_is_not_used():
    rows = [(1, -1, 1, 0, 0, 300, dict(write_start=1.0, write_end=9.0))]
    log = make_log(
        rows,
        dxt_posix=dxt([(1, 0, True, 100, 1.0, 2.0)]),
        partial_modules=(F.DXT_POSIX,),
        job=job(partial=True),
    )
    trace = build_trace(log, "f", Config())
    assert ops_list(trace) == [(WRITE, 1.0, 9.0, 300.0, 8)] and not trace.has_dxt
    assert trace.partial


def test_partial_logs_are_evicted_only_when_strict():
    log = make_log([(1, 0, 1, 0, 10, 0, {})], job=job(partial=True), partial_modules=(F.POSIX,))
    assert build_trace(log, "f", Config()).partial
    with pytest.raises(LogError) as err:
        build_trace(log, "f", Config(strict=True))
    assert err.value.reason == "partial"


def test_start_time_out_of_range_is_a_bad_job():
    log = make_log([(1, 0, 1, 0, 10, 0, {})], job=job(start=1e300, end=1e300 + 1))
    with pytest.raises(LogError) as err:
        build_trace(log, "f", Config())
    assert err.value.reason == "bad_job"


@pytest.mark.parametrize("run_time, evicted", [(100.0, False), (100.5, True)])
def test_run_time_beyond_the_limit_is_a_bad_job(run_time, evicted):
    log = make_log([(1, 0, 1, 0, 10, 0, {})], job=job(run_time=run_time))
    config = Config(max_run_time_seconds=100.0)
    if not evicted:
        assert build_trace(log, "f", config).run_time == run_time
        return
    with pytest.raises(LogError) as err:
        build_trace(log, "f", config)
    assert err.value.reason == "bad_job" and "max_run_time_seconds" in err.value.detail


def test_read_trace_on_a_real_log(shared_logs):
    path = next(p for p in shared_logs if p.name == "mpi-io-test-x86_64-3.4.1.darshan")
    trace = read_trace(path, Config())
    assert trace.file == str(path)
    assert trace.job["version"] == "3.41" and trace.job["nprocs"] == 4
    # mpi-io-test: one shared file written then read by all 4 ranks
    assert sorted(trace.ops["direction"].tolist()) == [READ, WRITE]
    assert trace.ops["ranks"].tolist() == [4, 4]


def test_dxt_and_posix_agree_on_bytes_in_real_logs(shared_logs):
    """Each real DXT log moves the same bytes per direction with and without DXT."""
    checked = 0
    for path in shared_logs:
        try:
            log = read_log(path)
        except LogError:
            continue
        if log.dxt_posix is None or F.DXT_POSIX in log.partial_modules:
            continue
        with_dxt = build_trace(log, "x", Config())
        without = build_trace(replace(log, dxt_posix=None), "x", Config())
        assert with_dxt.has_dxt and not without.has_dxt
        for d in (READ, WRITE):
            assert with_dxt.direction(d)["bytes"].sum() == without.direction(d)["bytes"].sum()
        checked += 1
    assert checked >= 10


def test_trace_from_bytes_and_from_an_archive_member(shared_logs, tmp_path):
    path = next(p for p in shared_logs if p.name == "mpi-io-test-x86_64-3.4.1.darshan")
    direct = read_trace(path, Config())
    in_memory = trace_from_bytes(path.read_bytes(), "m.darshan", Config())
    archive = tmp_path / "day.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(path, arcname="logs/m.darshan")
    member = read_trace(f"{archive}/logs/m.darshan", Config())
    assert in_memory.file == "m.darshan" and member.file == f"{archive}/logs/m.darshan"
    for other in (in_memory, member):
        assert np.array_equal(other.ops, direct.ops) and other.job == direct.job


# --------------------------------------------------------------------------- heatmap

# (API, rank, bin width, write bins, read bins)
HEATMAP_ROWS = [
    ("heatmap:POSIX", 0, 0.1, [1, 2, 3, 4], [0, 0, 0, 5]),
    ("heatmap:POSIX", 1, 0.1, [10, 0, 0, 0], [0, 0, 0, 0]),
    ("heatmap:STDIO", 0, 0.2, [100, 200], [7, 0]),
    ("heatmap:MPIIO", 0, 0.2, [1000, 1000], [1000, 1000]),
]


def heatmap_log(rows):
    return make_log(
        [(1, 0, 1, 0, 10, 20, dict(read_start=1.0, read_end=2.0, write_start=3.0, write_end=4.0))],
        heatmaps=heatmap_records(*zip(*rows)),
    )


def test_heatmap_sums_posix_and_stdio_on_the_coarser_bins():
    signal = build_trace(heatmap_log(HEATMAP_ROWS), "f", Config()).heatmap
    # POSIX 0.1 s bins pair up into 0.2 s bins: rank 0 [1+2, 3+4], rank 1 [10, 0];
    # STDIO adds [100, 200]; MPI-IO (the same traffic as POSIX) is left out.
    assert signal.bin_seconds == 0.2
    assert signal.write.dtype == np.float64 and signal.write.tolist() == [113.0, 207.0]
    assert signal.read.tolist() == [7.0, 5.0]


def test_heatmap_of_equal_widths_is_a_plain_sum_and_odd_bins_keep_their_tail():
    rows = [
        ("heatmap:POSIX", 0, 0.4, [1, 2, 3], [0, 0, 0]),
        ("heatmap:STDIO", 2, 0.1, [1, 1, 1, 1, 1], [0, 0, 0, 0, 9]),
    ]
    signal = build_trace(heatmap_log(rows), "f", Config()).heatmap
    # STDIO's five 0.1 s bins: four fall into [0, 0.4), the fifth into [0.4, 0.8).
    assert signal.bin_seconds == 0.4
    assert signal.write.tolist() == [5.0, 3.0, 3.0] and signal.read.tolist() == [0.0, 9.0, 0.0]


@pytest.mark.parametrize(
    "rows",
    [
        [],  # no HEATMAP module
        [HEATMAP_ROWS[3]],  # MPI-IO only
        [("heatmap:DFS", 0, 0.1, [5], [5])],  # DFS only
        [("heatmap:POSIX", 0, 0.1, [5, -1], [0, 0])],  # the only record is corrupt
    ],
)
def test_no_posix_or_stdio_heatmap_is_none(rows):
    log = heatmap_log(rows) if rows else make_log([(1, 0, 1, 0, 10, 0, {})])
    assert build_trace(log, "f", Config()).heatmap is None


def test_record_with_a_negative_bin_is_left_out():
    rows = HEATMAP_ROWS[:1] + [("heatmap:POSIX", 1, 0.1, [99, 99], [0, -1])]
    assert build_trace(heatmap_log(rows), "f", Config()).heatmap.write.tolist() == [1, 2, 3, 4]


def test_heatmap_changes_nothing_else():
    with_map = build_trace(heatmap_log(HEATMAP_ROWS), "f", Config())
    without = build_trace(replace(heatmap_log(HEATMAP_ROWS), heatmaps=None), "f", Config())
    assert np.array_equal(with_map.ops, without.ops) and np.array_equal(with_map.meta, without.meta)
    assert with_map.job == without.job and with_map.info == without.info
    assert without.heatmap is None


@pytest.mark.parametrize("version", ["3.21", "3.41"])
def test_heatmap_through_a_written_log(version):
    log = heatmap_log(HEATMAP_ROWS)
    log.job = job(version=version)
    trace = trace_from_bytes(write_log(log, version, streams_per_region=2), "f", Config())
    assert trace.heatmap.bin_seconds == 0.2
    assert trace.heatmap.write.tolist() == [113.0, 207.0]


def test_heatmap_of_real_logs(shared_logs):
    """mpi-io-test 3.4.1: one 0.1 s bin; POSIX moved 64 MiB each way, STDIO wrote 322 bytes
    (pydarshan's heatmaps); MPI-IO's 64 MiB are not added again."""
    path = next(p for p in shared_logs if p.name == "mpi-io-test-x86_64-3.4.1.darshan")
    signal = read_trace(path, Config()).heatmap
    assert signal.bin_seconds == 0.1
    assert signal.write.tolist() == [(64 << 20) + 322] and signal.read.tolist() == [64 << 20]
    older = next(p for p in shared_logs if p.name == "mpi-io-test-x86_64-3.2.1.darshan")
    assert read_trace(older, Config()).heatmap is None  # before Darshan 3.3


# --------------------------------------------------------------------------- partial POSIX


def mpiio(rows):
    """MPI-IO v3 records; rows: (id, rank, indep opens, coll opens, bytes read, written, times)."""
    c, f = np.zeros((len(rows), 51), np.int64), np.zeros((len(rows), 17))
    for i, (_, _, indep, coll, nread, nwritten, times) in enumerate(rows):
        c[i, [0, 1, 14, 15]] = indep, coll, nread, nwritten
        c[i, 10] = 7  # MPIIO_SYNCS: not a seek
        for name, t in times.items():
            f[i, POSIX_TIMES[name]] = t
    return ModuleRecords(
        F.MPIIO, 3, np.array([r[0] for r in rows], np.uint64), np.array([r[1] for r in rows], np.int64), c, f
    )


W = dict(open_start=1.0, open_end=1.5, write_start=2.0, write_end=3.0, close_start=3.5, close_end=4.0)
# POSIX has file 1 at rank 0 and file 6 shared (rank -1); 5 seeks each.
POSIX_KEPT = [(1, 0, 1, 5, 0, 10, W), (6, -1, 1, 5, 0, 20, W)]
MPIIO_ROWS = [
    (1, 0, 1, 0, 0, 1000, W),  # (file 1, rank 0) has its POSIX record
    (1, 3, 0, 2, 0, 3000, dict(W, write_start=10.0, write_end=20.0)),  # rank 3 lost
    # no POSIX -1: stands in for the 6 ranks of 8 without a record of file 1 (0 and 3 have
    # one), less what those records count (opens 8 - 1 - 2, bytes 4000 - 10 - 3000)
    (1, -1, 0, 8, 0, 4000, dict(W, write_start=30.0, write_end=40.0)),
    (6, 2, 1, 0, 0, 5000, W),  # file 6's rank -1 POSIX record covers rank 2
    (6, -1, 0, 8, 0, 6000, W),  # ... and rank -1
    (2, 5, 1, 1, 700, 0, dict(W, read_start=50.0, read_end=60.0)),
]  # no POSIX at all


def partial_log(partial=(F.POSIX,)):
    log = make_log(POSIX_KEPT, partial_modules=partial, job=job(partial=bool(partial)))
    log.modules[F.MPIIO] = mpiio(MPIIO_ROWS)
    return log


def test_mpiio_stands_in_for_records_a_partial_posix_module_lost():
    trace = build_trace(partial_log(), "f", Config())
    assert trace.info["mpiio_stand_ins"] == 3 and trace.info["partial_modules"] == ["POSIX"]
    # what the reasons say of a partial log: the stand-ins' bytes, 3000 + 990 written and 700 read
    assert trace.info["stand_in_bytes"] == {"read": 700.0, "write": 3990.0}
    assert ops_list(trace) == [
        (READ, 50.0, 60.0, 700.0, 1),
        (WRITE, 2.0, 3.0, 10.0, 1),
        (WRITE, 2.0, 3.0, 20.0, 8),
        (WRITE, 10.0, 20.0, 3000.0, 1),
        (WRITE, 30.0, 40.0, 990.0, 6),
    ]
    # Metadata: opens are independent + collective opens, seeks 0 (MPI-IO has none).
    rows = sorted(zip(trace.meta["opens"].tolist(), trace.meta["seeks"].tolist()))
    # ... and file 6's one open is collective (SPEC 3.7): a row of its own, the seeks stay.
    assert rows == [(0.0, 5.0), (1.0, 0.0), (1.0, 5.0), (2.0, 0.0), (2.0, 0.0), (5.0, 0.0)]


def test_a_shared_stand_in_whose_ranks_all_have_records_stands_for_none():
    """Every rank of the file has its POSIX record: the shared MPI-IO record adds nothing."""
    log = make_log([(1, rank, 1, 0, 0, 10, W) for rank in range(8)], partial_modules=(F.POSIX,))
    log.modules[F.MPIIO] = mpiio([(1, -1, 0, 8, 0, 80, W)])
    trace = build_trace(log, "f", Config())
    assert trace.info["mpiio_stand_ins"] == 0
    assert trace.ops["bytes"].sum() == 80.0 and trace.meta["opens"].sum() == 8.0


@pytest.mark.parametrize("partial", [(), (F.STDIO,), (F.DXT_POSIX,)])
def test_mpiio_is_ignored_unless_posix_is_partial(partial):
    trace = build_trace(partial_log(partial), "f", Config())
    assert ops_list(trace) == [(WRITE, 2.0, 3.0, 10.0, 1), (WRITE, 2.0, 3.0, 20.0, 8)]
    assert trace.info["mpiio_stand_ins"] == 0 and trace.meta["opens"].tolist() == [1.0, 0.0, 1.0]
    assert len(trace.meta) == 3  # file 6's open is collective (SPEC 3.7): in a row of its own


def test_stand_ins_are_filtered_and_cleaned_like_posix_records():
    log = partial_log()
    log.modules[F.MPIIO] = mpiio(
        [
            (3, 0, 1, 0, 0, 99, W),  # <STDOUT>: not a file
            (2, 0, 1, 0, 0, 99, dict(W, write_end=1.0)),
        ]
    )  # inverted
    trace = build_trace(log, "f", Config())
    assert trace.info["mpiio_stand_ins"] == 2 and trace.dropped_records == 1
    assert trace.info["stand_in_bytes"] == {"read": 0.0, "write": 0.0}  # neither stand-in was kept
    assert ops_list(trace) == [(WRITE, 2.0, 3.0, 10.0, 1), (WRITE, 2.0, 3.0, 20.0, 8)]


def test_stand_in_of_a_dxt_traced_file_gives_way_to_its_segments():
    log = partial_log()
    log.dxt_posix = dxt([(2, 5, False, 700, 55.0, 56.0)])
    trace = build_trace(log, "f", Config())
    assert [o for o in ops_list(trace) if o[0] == READ] == [(READ, 55.0, 56.0, 700.0, 1)]


@pytest.mark.parametrize("version", ["3.10", "3.21", "3.41"])
def test_stand_ins_through_a_written_log(version):
    log = partial_log()
    log.job = job(version=version, partial=True)
    trace = trace_from_bytes(write_log(log, version, partial=True), "f", Config())
    assert trace.partial and trace.info["mpiio_stand_ins"] == 3
    assert sorted(trace.ops["bytes"].tolist()) == [10.0, 20.0, 700.0, 990.0, 3000.0]
    unmarked = trace_from_bytes(write_log(log, version, partial=False), "f", Config())
    assert sorted(unmarked.ops["bytes"].tolist()) == [10.0, 20.0]


def test_real_partial_log_recovers_the_lost_writes(shared_logs):
    """imbalanced-io: rank 0's POSIX records of two shared files were lost; their
    MPI-IO records hold 26.6 GB written between 277 s and 948 s. Ranks 1-495 have
    their POSIX records of both files (495 opens and 6,128 / 78,480 bytes each file):
    the stand-ins count rank 0 alone, one open and the rest of the bytes. The standard
    streams (anonymized names, known by record id) are no files: their 2,781 + 402 bytes
    written through STDIO and 14,689 + 24 + 36 POSIX opens, all filenos, and 2 STDIO opens
    are not counted (SPEC 2, 3.7)."""
    path = next(p for p in shared_logs if p.name == "imbalanced-io.darshan")
    trace = read_trace(path, Config())
    assert trace.partial and trace.info["mpiio_stand_ins"] == 2
    assert trace.info["stand_in_bytes"]["write"] == 1_486_659_348.0 - 6_128 + 25_098_793_816.0 - 78_480
    writes = trace.direction(WRITE)
    lost = writes[writes["bytes"] > 1e9][:2]
    assert lost["bytes"].tolist() == [1_486_659_348.0 - 6_128, 25_098_793_816.0 - 78_480]
    assert lost["ranks"].tolist() == [1, 1]
    assert lost["start"][0] == pytest.approx(276.78, abs=0.01)
    assert lost["end"][1] == pytest.approx(947.81, abs=0.01)
    assert writes["bytes"].sum() == 79_525_075_654.0 - 6_128 - 78_480 - 2_781 - 402
    # POSIX and STDIO, and rank 0 once per file (not 2 x 496); no streams
    assert trace.meta["opens"].sum() == 16_757 + 2 - (14_689 + 24 + 36) - 2


@pytest.mark.parametrize(
    "start, iso",
    [
        (-1.5, "1969-12-31T23:59:58Z"),
        (1_700_000_000.9, "2023-11-14T22:13:20Z"),
        (253_402_300_799.0, "9999-12-31T23:59:59Z"),
        (253_402_300_800.0, None),
        (1e20, None),
        (float("nan"), None),
    ],
)
def test_start_time_in_iso_or_bad_job(start, iso):
    """Start times print as UTC seconds; outside years 1-9999 the job is bad_job."""
    log = make_log([(1, 0, 1, 0, 1, 0, {})], job=job(start=start, end=start + 99))
    if iso is None:
        with pytest.raises(LogError) as raised:
            build_trace(log, "f", Config())
        assert raised.value.reason == "bad_job"
    else:
        assert build_trace(log, "f", Config()).job["start"] == iso


def test_within_rejects_nan_and_infinities_with_finite_or_infinite_bounds():
    """With finite bounds the comparisons alone reject NaN and ±inf; with an infinite bound
    the finiteness test is still made."""
    from mosaic.trace import _within

    t = np.array([np.nan, np.inf, -np.inf, 0.0, 0.5, 1.0, 1.5])
    assert _within(t, 0.0, 1.0).tolist() == [False, False, False, True, True, True, False]
    assert _within(t, -np.inf, np.inf).tolist() == [False, False, False, True, True, True, True]
    assert _within(t, 0.0, np.inf).tolist() == [False, False, False, True, True, True, True]


def test_mount_root_keeps_unnamed_records_and_drops_relative_names():
    """Under mounts=("/",) the empty path of an id without a name record is listed (kept),
    so the odd ids are the names that are not listed: a relative name and a stream."""
    names = {1: "/scratch/a", 2: "rel/b", 3: "<STDOUT>"}
    rows = [
        (1, 0, 1, 0, 10, 0, {}),
        (2, 0, 1, 0, 20, 0, {}),
        (3, 0, 1, 0, 40, 0, {}),
        (9, 0, 1, 0, 80, 0, {}),
    ]  # id 9 has no name record
    trace = build_trace(make_log(rows, names=names), "f", Config(mounts=("/",)))
    assert sorted(trace.ops["bytes"].tolist()) == [10.0, 80.0]
    kept_default = build_trace(make_log(rows, names=names), "f", Config())
    assert sorted(kept_default.ops["bytes"].tolist()) == [10.0, 20.0, 80.0]  # streams only


def test_canonical_columns_are_views_made_on_demand():
    counts = np.arange(12, dtype=np.int64).reshape(2, 6)
    times = np.arange(16, dtype=np.float64).reshape(2, 8)
    columns = F.CanonicalColumns(counts, times)
    assert list(columns) == list(F.CANONICAL_COUNTERS + F.CANONICAL_FCOUNTERS)
    assert len(columns) == 14
    assert columns["bytes_written"].tolist() == [5, 11]
    assert columns["close_end"].tolist() == [7.0, 15.0]
    assert np.shares_memory(columns["opens"], counts)
    with pytest.raises(KeyError):
        columns["no_such_field"]


def test_a_trace_prints_as_a_summary_not_its_arrays():
    from mosaic.trace import trace_from_bytes
    from mosaic_testing.written import dxt_log, heatmap_log

    trace = trace_from_bytes(heatmap_log(4), "h.darshan", Config())
    assert (
        repr(trace)
        == str(trace)
        == (
            "Trace('h.darshan': uid 1, '/bin/app', 8 ranks, 10 s, 1 operation (0 read, 1 write, "
            "1,048,576 bytes), 1 file record, heatmap of 4 bins of 2.5 s)"
        )
    )
    traced = trace_from_bytes(dxt_log(3), "d.darshan", Config())
    assert repr(traced).endswith(", DXT)") and "heatmap" not in repr(traced)
    assert repr(replace(trace, partial=True, dropped_records=1234)).endswith(
        "heatmap of 4 bins of 2.5 s, partial (1,234 records dropped))"
    )
    one = replace(trace, partial=True, dropped_records=1, job={**trace.job, "nprocs": 1})
    assert ", 1 rank, " in repr(one) and repr(one).endswith("partial (1 record dropped))")


# --------------------------------------------------------------------------- collective opens

# POSIX record of file 1 shared by the 8 ranks: 10 opens spread over 0-4 s, closes over 5-9 s.
TIMES = dict(open_start=0.0, open_end=4.0, write_start=4.0, write_end=5.0, close_start=5.0, close_end=9.0)
SHARED = (1, -1, 10, 3, 0, 80, TIMES)
COLLECTIVE = dict(open_start=3.5, open_end=3.75, close_start=8.25, close_end=8.5)


def collective_log(posix_rows, mpiio_rows):
    log = make_log(posix_rows)
    log.modules[F.MPIIO] = mpiio(mpiio_rows)
    return log


def meta_rows(trace):
    return sorted(trace.meta.tolist())


def test_collective_opens_of_a_shared_record_happen_in_the_mpiio_windows():
    """SPEC 3.7: 8 of the 10 POSIX opens (MPI-IO: 2 independent + 6 collective) happen in the
    MPI-IO open window, their 8 closes in its close window; 2 opens and closes (and the
    seeks) stay spread over the POSIX windows."""
    trace = build_trace(collective_log([SHARED], [(1, -1, 2, 6, 0, 80, COLLECTIVE)]), "f", Config())
    assert meta_rows(trace) == [(2.0, 3.0, 0.0, 4.0, 5.0, 9.0), (8.0, 0.0, 3.5, 3.75, 8.25, 8.5)]
    per_second = requests_per_second(trace.meta, RUN_TIME, metadata_seeks=False)
    assert per_second[:10].tolist() == pytest.approx([0.5, 0.5, 0.5, 8.5, 0, 0.5, 0.5, 0.5, 8.5, 0])
    assert per_second.sum() == 20.0


@pytest.mark.parametrize(
    "posix_rank, mpiio_rank", [(0, -1), (-1, 0), (0, 0)], ids=["per-rank posix", "per-rank mpiio", "both"]
)
def test_only_a_shared_record_with_a_shared_mpiio_record_moves(posix_rank, mpiio_rank):
    trace = build_trace(
        collective_log([(1, posix_rank, *SHARED[2:])], [(1, mpiio_rank, 0, 8, 0, 80, COLLECTIVE)]),
        "f",
        Config(),
    )
    assert meta_rows(trace) == [(10.0, 3.0, 0.0, 4.0, 5.0, 9.0)]


def test_more_collective_opens_than_posix_opens_move_them_all():
    """16 MPI-IO opens against 10 POSIX opens: all 10 move, the POSIX row keeps its seeks."""
    trace = build_trace(collective_log([SHARED], [(1, -1, 0, 16, 0, 80, COLLECTIVE)]), "f", Config())
    assert meta_rows(trace) == [(0.0, 3.0, 0.0, 4.0, 5.0, 9.0), (10.0, 0.0, 3.5, 3.75, 8.25, 8.5)]


def test_an_unrecorded_mpiio_close_keeps_the_posix_close_window():
    """MPI-IO never recorded its close (0, 0): the moved closes stay in the POSIX window."""
    never_closed = dict(COLLECTIVE, close_start=0.0, close_end=0.0)
    trace = build_trace(collective_log([SHARED], [(1, -1, 0, 8, 0, 80, never_closed)]), "f", Config())
    assert meta_rows(trace) == [(2.0, 3.0, 0.0, 4.0, 5.0, 9.0), (8.0, 0.0, 3.5, 3.75, 5.0, 9.0)]


def test_an_invalid_or_filtered_mpiio_record_moves_nothing():
    """An MPI-IO window outside the run (SPEC 3.1) is no evidence; nor is another file's."""
    late = dict(COLLECTIVE, close_end=RUN_TIME + 1e6)
    for rows in ([(1, -1, 0, 8, 0, 80, late)], [(6, -1, 0, 8, 0, 80, COLLECTIVE)]):
        trace = build_trace(collective_log([SHARED], rows), "f", Config())
        assert meta_rows(trace) == [(10.0, 3.0, 0.0, 4.0, 5.0, 9.0)]


def test_every_metadata_row_carries_its_record_id():
    """The record id of each metadata row, the split-off collective row included (it is
    its file's): what names the files behind a metadata peak (issue 46 item 16)."""
    other = (2, 0, 4, 0, 0, 10, TIMES)
    trace = build_trace(collective_log([SHARED, other], [(1, -1, 2, 6, 0, 80, COLLECTIVE)]), "f", Config())
    assert trace.meta["opens"].tolist() == [2.0, 4.0, 8.0]  # file 1's POSIX rest, file 2, file 1's collective
    assert trace.meta_ids.tolist() == [1, 2, 1]
    assert trace.meta_ids.dtype == np.uint64
