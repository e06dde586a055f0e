"""A run's activity per file system (SPEC 3.10): DXT segments, HEATMAP bins, record windows."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from mosaic.activity import SOURCES, build_activity, pack, unpack
from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.darshan.reader import read_log
from mosaic.darshan.writer import heatmap_records, record_id

INTERFERENCE = Path(__file__).parent / "data" / "darshan-logs-interference"
MOUNTS = [("/scratch2", "lustre"), ("/scratch", "lustre"), ("/", "ext4")]
TIMES = dict(open_start=0, read_start=1, write_start=2, close_start=3, open_end=4, read_end=5, write_end=6)


def records_log(rows, nprocs=2, run_time=100.0):
    """POSIX v4 records: (path, rank, opens, bytes read, bytes written, {time name: s})."""
    n_c, n_f = F.RECORD_SHAPES[(F.POSIX, 4)]
    counters, fcounters = np.zeros((len(rows), n_c), np.int64), np.zeros((len(rows), n_f))
    for i, (_, _, opens, read, written, times) in enumerate(rows):
        counters[i, [0, 14, 15]] = opens, read, written
        for name, t in times.items():
            fcounters[i, TIMES[name]] = t
    ids = np.array([record_id(r[0]) for r in rows], np.uint64)
    job = F.Job(
        1, 7, 1.6e9, 1.6e9 + run_time, run_time, nprocs, "/bin/app", mounts=list(MOUNTS), version="3.41"
    )
    posix = F.ModuleRecords(F.POSIX, 4, ids, np.array([r[1] for r in rows], np.int64), counters, fcounters)
    return F.DarshanLog(
        job, {record_id(r[0]): r[0] for r in rows}, {F.POSIX: posix}, present_modules=(F.POSIX,)
    )


ROWS = [
    ("/scratch/a", 0, 2, 0, 1000, dict(open_start=9.0, open_end=9.5, write_start=10.0, write_end=20.0)),
    ("/scratch2/b", 1, 1, 500, 0, dict(open_start=29.0, open_end=29.0, read_start=30.0, read_end=40.0)),
    ("/scratchy/c", 0, 0, 0, 300, dict(write_start=50.0, write_end=50.0)),  # a point, under /
]


def test_record_windows_per_mount_point():
    activity = build_activity(records_log(ROWS), Config())
    assert activity.source == "records"
    assert activity.start_epoch == 1.6e9 and activity.run_time == 100.0
    assert sorted(activity.by_fs) == ["/", "/scratch", "/scratch2"]
    a = activity.by_fs["/scratch"]
    assert a.shared and a.fs_type == "lustre"
    # sorted by start: the open window (2 requests), then the write window
    assert a.start.tolist() == [9.0, 10.0] and a.end.tolist() == [9.5, 20.0]
    assert a.write.tolist() == [0.0, 1000.0] and a.meta.tolist() == [2.0, 0.0] and a.read.tolist() == [0, 0]
    b = activity.by_fs["/scratch2"]
    assert b.start.tolist() == [29.0, 30.0] and b.end.tolist() == [29.0, 40.0]
    assert b.read.tolist() == [0.0, 500.0] and b.meta.tolist() == [1.0, 0.0]
    root = activity.by_fs["/"]
    assert not root.shared
    assert root.start.tolist() == [50.0] and root.end.tolist() == [50.0] and root.write.tolist() == [300.0]


def test_shared_names_only_the_listed_mount_points():
    activity = build_activity(records_log(ROWS), Config(shared_file_systems=("/scratch",)))
    assert activity.by_fs["/scratch"].shared
    assert not activity.by_fs["/scratch2"].shared  # lustre, but not listed


def test_seeks_count_as_metadata_only_under_metadata_seeks():
    log = records_log(ROWS[:1])
    log.modules[F.POSIX].counters[0, 5] = 3  # POSIX_SEEKS
    assert build_activity(log, Config()).by_fs["/scratch"].requests == 2.0
    assert build_activity(log, Config(metadata_seeks=True)).by_fs["/scratch"].requests == 5.0


def test_dxt_segments_replace_the_records_of_their_files():
    log = records_log(ROWS[:2])
    rid = record_id("/scratch/a")
    log.dxt_posix = F.DxtSegments(
        ids=np.array([rid, rid, rid], np.uint64),
        ranks=np.zeros(3, np.int64),
        is_write=np.array([True, True, False]),
        offsets=np.array([0, 600, 0]),
        lengths=np.array([600, 400, 50]),
        starts=np.array([10.0, 15.0, 18.0]),
        ends=np.array([12.0, 19.0, 18.5]),
    )
    log.present_modules = (F.POSIX, F.DXT_POSIX)
    activity = build_activity(log, Config())
    assert activity.source == "dxt"
    a = activity.by_fs["/scratch"]
    assert a.start.tolist() == [9.0, 10.0, 15.0, 18.0]
    assert a.end.tolist() == [9.5, 12.0, 19.0, 18.5]
    assert a.write.tolist() == [0.0, 600.0, 400.0, 0.0] and a.read.tolist() == [0.0, 0.0, 0.0, 50.0]
    # the untraced file keeps its record window
    assert activity.by_fs["/scratch2"].read.tolist() == [0.0, 500.0]


def test_heatmap_bins_split_in_proportion_to_the_records_bytes():
    # 1000 B written on /scratch and 3000 B on /scratch2; the heatmap counts 2 + 6 units
    rows = [
        ("/scratch/a", 0, 1, 0, 1000, dict(open_start=0.0, open_end=0.0, write_start=0.0, write_end=0.4)),
        ("/scratch2/b", 1, 1, 0, 3000, dict(open_start=0.0, open_end=0.0, write_start=0.0, write_end=0.4)),
    ]
    log = records_log(rows, run_time=1.0)
    log.heatmaps = heatmap_records(
        ["heatmap:POSIX", "heatmap:POSIX", "heatmap:MPIIO"],
        [0, 1, 0],
        [0.1, 0.1, 0.1],
        [[2, 0, 0], [0, 6, 0], [9, 9, 9]],  # MPI-IO is POSIX's traffic again: never counted
        [[0, 0, 0], [0, 0, 0], [0, 0, 0]],
    )
    activity = build_activity(log, Config())
    assert activity.source == "heatmap"
    a, b = activity.by_fs["/scratch"], activity.by_fs["/scratch2"]
    data = a.write > 0
    np.testing.assert_allclose(a.start[data], [0.0, 0.1])
    np.testing.assert_allclose(a.end[data], [0.1, 0.2])
    # bin 0: 2 of 8 units, bin 1: 6 of 8; /scratch's 1000 B split so, /scratch2's 3000 B too
    np.testing.assert_allclose(a.write[data], [250.0, 750.0])
    np.testing.assert_allclose(b.write[b.write > 0], [750.0, 2250.0])


def test_a_heatmap_without_bytes_leaves_the_record_windows():
    log = records_log(ROWS[:1], run_time=30.0)
    log.heatmaps = heatmap_records(["heatmap:POSIX"], [0], [0.1], [[0, 0]], [[0, 0]])
    activity = build_activity(log, Config())
    assert activity.source == "records"
    assert activity.by_fs["/scratch"].write.tolist() == [0.0, 1000.0]


def test_pack_round_trips_bit_for_bit():
    activity = build_activity(records_log(ROWS), Config())
    again = unpack(pack(activity))
    assert (again.source, again.start_epoch, again.run_time) == ("records", 1.6e9, 100.0)
    for name, fs in activity.by_fs.items():
        got = again.by_fs[name]
        assert (got.shared, got.fs_type) == (fs.shared, fs.fs_type)
        for column in ("start", "end", "read", "write", "meta"):
            assert getattr(got, column).tobytes() == getattr(fs, column).tobytes()
    assert pack(again) == pack(activity)


def _perf_bytes():
    with open(INTERFERENCE / "darshan-parser-perf.tsv") as fh:
        return {(r["file"], r["module"]): int(r["total_bytes"]) for r in csv.DictReader(fh, delimiter="\t")}


def test_interference_logs_bytes_and_windows():
    """Every log's bytes on its file system are darshan-parser's POSIX total; its intervals
    lie in its run (a heatmap's last bin may pass its end by less than a bin, a DXT segment
    by a few ms: the run's end is taken before the last close returns); the source
    is DXT exactly where the job ran with DXT."""
    config = Config(shared_file_systems=("/mnt/mosaic-ifs",))
    perf = _perf_bytes()
    truth = [json.loads(line) for line in (INTERFERENCE / "truth.jsonl").read_text().splitlines()]
    assert len(truth) == 34
    for row in truth:
        log = read_log(INTERFERENCE / "logs" / row["file"])
        activity = build_activity(log, config)
        assert activity.source in SOURCES
        assert activity.source == ("dxt" if row["dxt"] else "heatmap")
        (fs,) = activity.by_fs.values()
        assert fs.bytes_read + fs.bytes_written == pytest.approx(perf[(row["file"], "POSIX")], rel=1e-12)
        assert fs.start.min() >= 0.0
        assert fs.end.max() <= activity.run_time + (0.1 if activity.source == "heatmap" else 0.005)
        # the wall window (driver's clock) holds the run: Darshan's run time is shorter
        assert activity.run_time <= row["wall"][1] - row["wall"][0]
        assert fs.requests == (2 if row["app"] == "hdf_bulk" else 8)  # one open per rank per file
