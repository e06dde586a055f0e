"""The writer's time counters: pydarshan's accumulator gives the agg_time_by_slowest designed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mosaic.darshan import formats as F
from mosaic.darshan.times import LEGACY_TIME_INDEX, agg_time_by_slowest, module_perf
from mosaic.darshan.writer import write_legacy_log, write_log
from mosaic.synth.records import FileTable, add_times, to_darshan_log

MB = 1_000_000


def _table() -> FileTable:
    """rank 0 writes 100 MB in [10, 20] s; rank 1 reads 50 MB in [5, 9] s; the 4 ranks write
    400 MB to one shared file in [30, 35] s. One open per rank and file."""
    t = FileTable()
    t.add(
        np.array([t.name("/scratch/a")]),
        [0],
        opens=1,
        writes=100,
        bytes_written=100 * MB,
        write_start=10.0,
        write_end=20.0,
        open_start=9.0,
        close_end=21.0,
    )
    t.add(
        np.array([t.name("/scratch/b")]),
        [1],
        opens=1,
        reads=50,
        bytes_read=50 * MB,
        read_start=5.0,
        read_end=9.0,
        open_start=4.0,
        close_end=9.5,
    )
    t.add(
        np.array([t.name("/scratch/c")]),
        [-1],
        opens=4,
        writes=400,
        bytes_written=400 * MB,
        write_start=30.0,
        write_end=35.0,
        open_start=29.0,
        close_end=36.0,
    )
    t.rows = [add_times(t.table(), nprocs=4)]
    return t


# By hand: rank 0 10 s + 1e-4, rank 1 4 s + 1e-4; the shared file's slowest rank
# 5 s + 1e-4 (its 4 opens over 4 ranks): 10.0001 + 5.0001.
DESIGNED = 15.0002


def test_add_times_by_hand() -> None:
    rows = _table().table()
    assert rows["write_time"].tolist() == [10.0, 0.0, 20.0]  # shared: the sum over 4 ranks
    assert rows["read_time"].tolist() == [0.0, 4.0, 0.0]
    assert rows["meta_time"].tolist() == pytest.approx([1e-4, 1e-4, 4e-4])
    assert rows["slowest_rank_time"].tolist() == pytest.approx([0.0, 0.0, 5.0001])
    assert rows["rank_bytes"].tolist() == [0, 0, 100 * MB]
    assert agg_time_by_slowest(
        rows["rank"], rows["read_time"], rows["write_time"], rows["meta_time"], rows["slowest_rank_time"]
    ) == pytest.approx(DESIGNED, abs=1e-12)


def _job(version: str) -> F.Job:
    return F.Job(
        uid=1,
        job_id=7,
        start=1.6e9,
        end=1.6e9 + 40,
        run_time=40.0,
        nprocs=4,
        cmdline="ior",
        mounts=[("/scratch", "lustre"), ("/tmp", "xfs"), ("/", "rootfs")],
        version=version,
    )


@pytest.mark.parametrize("version, posix, stdio", [("3.41", 4, 2), ("3.10", 3, 1)])
def test_pydarshan_accumulator_gives_the_designed_time(
    tmp_path: Path, version: str, posix: int, stdio: int
) -> None:
    darshan = pytest.importorskip("darshan")
    from darshan.backend.cffi_backend import accumulate_records

    log = to_darshan_log(_job(version), _table(), {F.POSIX: posix, F.STDIO: stdio})
    path = tmp_path / "t.darshan"
    path.write_bytes(write_log(log, version))
    report = darshan.DarshanReport(str(path), read_all=True)
    assert report.metadata["job"]["nprocs"] == 4
    assert ("/tmp", "xfs") in [(m[0], m[1]) for m in report.mounts]
    acc = accumulate_records(report.records["POSIX"].to_df(), "POSIX", 4)
    derived = acc.derived_metrics
    assert derived.agg_time_by_slowest == pytest.approx(DESIGNED, rel=1e-12)
    assert derived.total_bytes == 550 * MB
    mine = module_perf(log.modules[F.POSIX])
    assert mine["agg_time_by_slowest"] == pytest.approx(derived.agg_time_by_slowest, rel=1e-12)
    assert mine["agg_perf_by_slowest"] == pytest.approx(derived.agg_perf_by_slowest, rel=1e-9)
    assert mine["agg_perf_by_slowest"] == pytest.approx(550 * MB / 1048576 / DESIGNED)
    df = report.records["POSIX"].to_df()["fcounters"]
    shared = df[df["rank"] == -1].iloc[0]
    assert shared["POSIX_F_SLOWEST_RANK_TIME"] == pytest.approx(5.0001)
    assert shared["POSIX_F_WRITE_TIME"] == 20.0


def test_legacy_log_carries_the_posix_times() -> None:
    log = to_darshan_log(_job("2.06"), _table(), {F.POSIX: 4})
    raw = write_legacy_log(log, "2.06", "none")
    rec = np.frombuffer(raw[F.LEGACY_JOB_RECORD_SIZE :], F.legacy_record_dtype())
    cidx, fidx = LEGACY_TIME_INDEX
    assert rec["fcounters"][:, fidx["write_time"]].tolist() == [10.0, 0.0, 20.0]  # CP_F_POSIX_WRITE_TIME
    assert rec["fcounters"][:, fidx["read_time"]].tolist() == [0.0, 4.0, 0.0]
    assert rec["fcounters"][:, fidx["slowest_rank_time"]].tolist() == pytest.approx([0, 0, 5.0001])
    assert rec["counters"][:, cidx["slowest_rank_bytes"]].tolist() == [0, 0, 100 * MB]
    assert (fidx["read_time"], fidx["slowest_rank_time"], cidx["slowest_rank"]) == (6, 15, 142)


def test_rows_without_times_write_zeros_as_before() -> None:
    t = FileTable()
    t.add(np.array([t.name("/scratch/a")]), [0], opens=1, bytes_written=5, write_start=1.0, write_end=2.0)
    mod = to_darshan_log(_job("3.41"), t, {F.POSIX: 4}).modules[F.POSIX]
    assert mod.fcounters[:, 8:].sum() == 0 and mod.counters[:, -4:].sum() == 0


@pytest.mark.parametrize("version, posix", [("3.10", 3), ("3.41", 4)])
def test_big_endian_times_read_back(tmp_path: Path, version: str, posix: int) -> None:
    """Our reader reads the times of a big-endian log as written. (pydarshan 3.5 reads
    F_META_TIME and F_MAX_*_TIME of a big-endian POSIX v3 log unswapped: 1e-4 as 1.17e-90;
    3.41's POSIX v4 it reads right.)"""
    from mosaic.darshan.reader import read_log

    log = to_darshan_log(_job(version), _table(), {F.POSIX: posix})
    path = tmp_path / "be.darshan"
    path.write_bytes(write_log(log, version, big_endian=True))
    mod = read_log(str(path)).modules[F.POSIX]
    assert mod.fcounters[:, 10].tolist() == pytest.approx([1e-4, 1e-4, 4e-4])  # F_META_TIME
    assert mod.fcounters[:, 14].tolist() == pytest.approx([0.0, 0.0, 5.0001])  # F_SLOWEST_RANK_TIME
    assert module_perf(mod)["agg_time_by_slowest"] == pytest.approx(DESIGNED)
