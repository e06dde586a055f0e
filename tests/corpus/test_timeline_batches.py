"""The sweep folds the center's timeline in batches of whole runs: the same bits as run by run."""

import numpy as np
import pytest

from mosaic.activity import FsActivity, RunActivity
from mosaic.corpus import timeline
from mosaic.corpus.store import Store


def _runs(n, seed=7):
    """Runs on two shared file systems and a node-local one: spans, points, overlaps."""
    rng = np.random.default_rng(seed)
    runs = {}
    for run in range(1, n + 1):
        t0 = 1_000_000.0 + float(rng.integers(0, 4000))
        by_fs = {}
        for name, shared in (("/a", True), ("/b", True), ("/", False)):
            if rng.random() < 0.3:
                continue
            k = int(rng.integers(1, 6))
            start = np.sort(rng.uniform(0, 900, k))
            end = start + np.where(rng.random(k) < 0.25, 0.0, rng.uniform(0, 400, k))  # some points
            by_fs[name] = FsActivity(
                start,
                end,
                rng.uniform(0, 1e6, k),
                rng.uniform(0, 1e6, k),
                rng.integers(0, 5, k) * 1.0,
                shared,
            )
        runs[run] = RunActivity("records", t0, 1300.0, by_fs)
    return runs


@pytest.mark.parametrize("batch", [1, 7, 1 << 14])
def test_batched_fold_is_the_run_by_run_fold(tmp_path, monkeypatch, batch):
    monkeypatch.setattr(timeline._Fold, "BATCH_ROWS", batch)  # 1: a batch a run; 7: a few runs
    store = Store(tmp_path / "s.sqlite")
    timeline.save_activity(store, [timeline.activity_row(run, a) for run, a in _runs(60).items()])
    _, folded = timeline.loads_and_timeline(store, 60.0, now=1.0)
    again = timeline.center_timeline(store, 60.0)  # run by run (_Bins.add)
    assert list(folded) == list(again) == ["/a", "/b"]
    for name in folded:
        assert folded[name].first == again[name].first
        for column in ("read", "write", "meta", "jobs"):
            assert getattr(folded[name], column).tobytes() == getattr(again[name], column).tobytes()
        assert folded[name].jobs.max() >= 2  # runs overlap in some bins: each counted once a bin


def test_jobs_count_a_run_once_per_bin():
    bins = timeline._Bins(0, 3)
    # run 0 touches bin 1 twice and bin 2 once; run 1 bin 1 once
    bins.add_runs(
        np.array([1, 1, 2, 1]), np.ones(4), np.zeros(4), np.zeros(4), np.array([0, 0, 0, 1], np.int64)
    )
    assert bins.jobs.tolist() == [0, 2, 1, 0] and bins.read.tolist() == [0.0, 3.0, 1.0, 0.0]
