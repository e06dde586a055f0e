"""Per-run series (SPEC 3.12): the step function of intervals, hand-computed; the log
adapter against the logs' own byte counts; the series from the stored activity, and prune."""

from pathlib import Path

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.corpus.pipeline import run
from mosaic.corpus.store import Store
from mosaic.darshan.reader import read_log
from mosaic.series import (
    MIN_INTERVAL_SECONDS,
    load_series,
    series_from_activity,
    series_from_intervals,
    series_from_log,
)

LOGS = Path(__file__).parent / "data" / "darshan-logs-interference" / "logs"
VICTIM = sorted(LOGS.glob("*lmp_restart*"))
VICTIM_KEY = "0:/opt/mosaic-ifs/bin/lmp_restart"


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


def test_a_runs_series_comes_back_from_its_stored_activity_exactly(tmp_path):
    """Two victim logs through `mosaic run`: the series load_series makes from their stored
    activity are the ones the logs give (float64 throughout), the most recent run first;
    prune takes them along."""
    folder = tmp_path / "logs"
    folder.mkdir()
    for path in VICTIM[:2]:
        (folder / path.name).write_bytes(path.read_bytes())
    run([folder], tmp_path / "out", Config(), workers=0)
    own = {path.name: series_from_log(read_log(path), 4096) for path in VICTIM[:2]}
    with Store(tmp_path / "out" / "store.sqlite") as store:
        with store._snapshot() as db:
            loaded = load_series(db, VICTIM_KEY, max_points=4096)
            order = [row[0] for row in db.execute("SELECT run FROM jobs ORDER BY start DESC")]
        assert [identity for identity, _ in loaded] == order
        by_run = dict(loaded)
        with store._snapshot() as db:
            names = dict(db.execute("SELECT run, file FROM jobs"))
        for identity, series in by_run.items():
            mine = own[names[identity]]
            assert series.source == mine.source
            assert series.edges.tolist() == mine.edges.tolist()
            assert series.write.tolist() == mine.write.tolist() and series.resolution == mine.resolution
        with store._snapshot() as db:
            assert [identity for identity, _ in load_series(db, VICTIM_KEY, limit=1)] == order[:1]
        store.prune(keep=0)
        with store._snapshot() as db:
            assert load_series(db, VICTIM_KEY) == []


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
