"""Per-run series (SPEC 3.12): the step function of intervals, hand-computed; the log
adapter against the logs' own byte counts; packing; the store table and prune."""

import zlib
from pathlib import Path

import numpy as np
import pytest

from mosaic.activity import build_activity
from mosaic.config import Config
from mosaic.corpus import profiles
from mosaic.corpus.store import Store
from mosaic.darshan.reader import read_log
from mosaic.series import (
    MIN_INTERVAL_SECONDS,
    load_series,
    pack,
    save_series,
    series_fact,
    series_from_activity,
    series_from_intervals,
    series_from_log,
    series_row,
    unpack,
)
from mosaic_testing.stored import APP, UID, trace

LOGS = Path(__file__).parent / "data" / "darshan-logs-interference" / "logs"
VICTIM = sorted(LOGS.glob("*lmp_restart*"))


def arrays(*rows: tuple[float, float, float, float]) -> tuple[np.ndarray, ...]:
    return tuple(np.array(column, np.float64) for column in zip(*rows))


def test_overlapping_intervals_add_their_rates_exactly():
    # [0, 2) writes 100 B (50 B/s), [1, 3) writes 200 B (100 B/s), [0.5, 1) reads 10 B
    start, end, read, write = arrays((0, 2, 0, 100), (1, 3, 0, 200), (0.5, 1, 10, 0))
    series = series_from_intervals(start, end, read, write, 4.0, "dxt", 100)
    assert series.edges.tolist() == [0, 0.5, 1, 2, 3, 4]
    assert series.write.tolist() == [25, 25, 150, 100, 0]
    assert series.read.tolist() == [0, 10, 0, 0, 0]
    assert series.resolution == 0.75  # median of the steps that hold bytes: 0.5, 0.5, 1, 1
    assert series.cumulative("write", np.array([1.5, 4.0])).tolist() == [125, 300]
    # normalized: 4 bins of 1 s: bandwidth 50, 150, 100, 0 B/s
    assert series.normalized("write", 4).tolist() == [50, 150, 100, 0]


def test_intervals_are_clipped_to_the_run_and_keep_their_bytes():
    start, end, read, write = arrays((3, 5, 0, 80), (-1, 1, 40, 0), (2, 2, 0, 7), (1, 0.5, 9, 9))
    series = series_from_intervals(start, end, read, write, 4.0, "records", 100)
    assert series.total("write") == pytest.approx(87)  # the reversed interval is left out
    assert series.total("read") == pytest.approx(40)
    # the zero-length write at 2 s spreads over one microsecond
    assert series.binned("write", np.array([2.0, 2.0 + MIN_INTERVAL_SECONDS])).tolist() == pytest.approx([7])
    assert series.binned("write", np.array([3.0, 4.0])).tolist() == pytest.approx([80])


def test_past_max_points_steps_become_even_bins_with_the_same_bytes():
    starts = np.arange(10.0)
    series = series_from_intervals(starts, starts + 0.5, np.zeros(10), np.full(10, 3.0), 10.0, "dxt", 4)
    assert len(series.write) == 4
    assert series.edges.tolist() == [0, 2.5, 5, 7.5, 10]
    # bins [0, 2.5): writes at 0, 1, 2 = 9 B; [2.5, 5): 3, 4 = 6 B; [5, 7.5): 5, 6, 7 = 9 B
    assert series.write.tolist() == [9, 6, 9, 6]
    assert series.resolution == 2.5


@pytest.mark.parametrize("run_time", [0.0, -1.0, float("nan")])
def test_a_run_without_run_time_has_no_timed_series(run_time):
    start, end, read, write = arrays((0, 1, 5, 5))
    assert not series_from_intervals(start, end, read, write, run_time, "dxt", 10).timed


def test_a_run_without_bytes_in_time_is_untimed():
    empty = np.zeros(0)
    series = series_from_intervals(empty, empty, empty, empty, 10.0, "records", 10)
    assert series.source == "none" and not series.timed


def test_log_adapter_reads_dxt_then_heatmap_then_records_with_the_logs_bytes():
    """From the run's activity (SPEC 3.10): the files SPEC 2 keeps, so IOR's console output on
    <STDOUT> (a STDIO record and heatmap bins) is in none of the three."""
    log = read_log(VICTIM[0])  # job 70002: 2 ranks x 4 phases x 24 MiB, DXT and HEATMAP
    written = 2 * 4 * 24 * 2**20
    dxt = series_from_log(log, 4096)
    assert dxt.source == "dxt"
    assert dxt.total("write") == pytest.approx(written, rel=1e-12)  # DXT_POSIX: the writes' lengths exactly
    assert dxt.run_time == log.job.run_time
    log.dxt_posix = None
    binned = series_from_log(log, 4096)
    assert binned.source == "heatmap"
    assert binned.total("write") == pytest.approx(written, rel=1e-12)
    assert binned.resolution == pytest.approx(0.1)  # the HEATMAP's bins
    log.heatmaps = None
    windows = series_from_log(log, 4096)
    assert windows.source == "records"
    assert windows.total("write") == pytest.approx(written, rel=1e-12)


def test_pack_keeps_the_series_in_float32():
    start, end, read, write = arrays((0, 2, 0, 100), (1, 3, 0, 200), (0.5, 1, 10, 0))
    series = series_from_intervals(start, end, read, write, 4.0, "dxt", 100)
    back = unpack(pack(series), series.source, series.run_time, series.resolution)
    assert back.edges.tolist() == series.edges.tolist()
    assert back.write.tolist() == series.write.tolist()
    assert back.source == "dxt" and back.resolution == 0.75
    with pytest.raises(ValueError, match="a run series of 5 steps holds 2 values"):
        unpack(zlib.compress(b"\x05\x00\x00\x00" + b"\x00" * 8), "dxt", 4.0, 1.0)


def test_series_fact_is_the_row_the_validating_worker_ships():
    fact = series_fact(build_activity(read_log(VICTIM[0]), Config()), 4096)
    assert fact is not None and fact[0] == "dxt" and fact[4] == pytest.approx(2 * 4 * 24 * 2**20)


def test_store_keeps_series_by_run_and_prune_drops_them(tmp_path):
    result = trace("a.darshan", 1e9, None, run_time=10.0, start="2019-01-01T00:00:00Z", job_id="7")
    identity = profiles.run_identity(result["job"])
    start, end, read, write = arrays((0, 2, 0, 100))
    series = series_from_intervals(start, end, read, write, 10.0, "dxt", 100)
    with Store(tmp_path / "store.sqlite") as store:
        store.record(result)
        key = f"{UID}:{APP}"
        with store._atomic() as db:
            save_series(db, [series_row(identity, key, series)])
        with store._snapshot() as db:
            ((run, back),) = load_series(db, key)
        assert run == identity and back.total("write") == 100
        store.prune(keep=0)
        with store._snapshot() as db:
            assert load_series(db, key) == []


def test_per_file_system_activity_gives_the_same_series_as_its_intervals():
    """Contract 2's RunActivity, filled by hand: its file systems' intervals together."""
    from dataclasses import dataclass, field

    @dataclass
    class Fs:
        start: np.ndarray
        end: np.ndarray
        read: np.ndarray
        write: np.ndarray
        meta: np.ndarray = field(default_factory=lambda: np.zeros(0))
        shared: bool = False

    @dataclass
    class Activity:
        source: str
        start_epoch: float
        run_time: float
        by_fs: dict

    scratch = Fs(np.array([0.0]), np.array([2.0]), np.array([0.0]), np.array([100.0]))
    home = Fs(np.array([1.0, 0.5]), np.array([3.0, 1.0]), np.array([0.0, 10.0]), np.array([200.0, 0.0]))
    series = series_from_activity(Activity("dxt", 1e9, 4.0, {"/scratch": scratch, "/home": home}), 100)
    assert series.source == "dxt"
    assert series.edges.tolist() == [0, 0.5, 1, 2, 3, 4]
    assert series.write.tolist() == [25, 25, 150, 100, 0]  # as test_overlapping_intervals_...
    assert series.read.tolist() == [0, 10, 0, 0, 0]
    assert not series_from_activity(Activity("heatmap", 1e9, 4.0, {}), 100).timed
