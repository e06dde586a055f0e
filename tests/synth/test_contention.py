"""Max-min fair sharing of a file system's bandwidth, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from mosaic.synth.contention import fair_shares, shares, simulate


def test_two_jobs_split_the_capacity() -> None:
    assert fair_shares(np.array([40.0, 40.0]), 60.0).tolist() == [30.0, 30.0]


def test_a_job_below_the_fair_share_keeps_its_demand() -> None:
    # 60 among 3: the fair share is 20; the 10 takes 10, the other two split 50.
    assert fair_shares(np.array([10.0, 40.0, 40.0]), 60.0).tolist() == [10.0, 25.0, 25.0]


def test_exactly_at_capacity_nobody_is_throttled() -> None:
    assert fair_shares(np.array([20.0, 40.0]), 60.0).tolist() == [20.0, 40.0]
    assert fair_shares(np.array([20.0, 40.0 + 1e-9]), 60.0)[1] < 40.0 + 1e-9


def test_a_small_ask_of_a_big_file_system_is_not_slowed() -> None:
    assert fair_shares(np.array([10e6, 30e9]), 40e9).tolist() == [10e6, 30e9]


def test_overlap_stretches_both_and_the_later_phase_spills() -> None:
    # A: 400 B at 40 B/s from t=0, then 5 s of compute, then 40 B at 40 B/s.
    # B: 400 B at 40 B/s from t=5. Capacity 60. A alone moves 200 B by t=5; both get 30:
    # A's 200 B left end at 5 + 200/30 = 11.667; B has moved 200 B, alone again at 40:
    # done at 11.667 + 5 = 16.667. A's second phase starts at 16.667 (not 15), alone: 1 s.
    out = simulate(
        run=np.array([0, 0, 1]),
        run_start=np.array([0.0, 5.0]),
        gap=np.array([0.0, 5.0, 0.0]),
        volume=np.array([400.0, 40.0, 400.0]),
        demand=np.array([40.0, 40.0, 40.0]),
        capacity=60.0,
    )
    a1 = 5 + 200 / 30
    assert out.start.tolist() == pytest.approx([0.0, a1 + 5, 5.0])
    assert out.end.tolist() == pytest.approx([a1, a1 + 6, a1 + 5])
    assert out.io_time.tolist() == pytest.approx([a1 + 1, a1])
    assert out.planned_io_time.tolist() == pytest.approx([11.0, 10.0])
    assert out.slowdown.tolist() == pytest.approx([(a1 + 1) / 11, a1 / 10])
    assert out.throttled_time.tolist() == pytest.approx([a1 - 5, a1 - 5])
    # While each was throttled, the other moved 30 B/s x 6.667 s = 200 B: all of the others' bytes.
    assert out.by[0, 1] == pytest.approx(200.0) and out.by[1, 0] == pytest.approx(200.0)
    assert shares(out.by, 0) == [(1, pytest.approx(1.0))]


def test_three_jobs_one_below_fair_share() -> None:
    # Capacity 60; all start at 0: demands 10, 40, 40, volumes 100, 250, 500.
    # Rates 10, 25, 25: job 0 ends at 10 (never throttled), job 1 at 10 (250/25);
    # then job 2 alone at 40: 500 - 250 = 250 B left, 6.25 s: ends at 16.25.
    out = simulate(
        run=np.array([0, 1, 2]),
        run_start=np.zeros(3),
        gap=np.zeros(3),
        volume=np.array([100.0, 250.0, 500.0]),
        demand=np.array([10.0, 40.0, 40.0]),
        capacity=60.0,
    )
    assert out.end.tolist() == pytest.approx([10.0, 10.0, 16.25])
    assert out.slowdown.tolist() == pytest.approx([1.0, 10 / 6.25, 16.25 / 12.5])
    assert out.throttled_time.tolist() == pytest.approx([0.0, 10.0, 10.0])
    # Job 1 throttled 10 s: job 0 moved 100 B, job 2 250 B -> shares 250/350, 100/350.
    assert shares(out.by, 1) == [(2, pytest.approx(250 / 350)), (0, pytest.approx(100 / 350))]
    assert shares(out.by, 0) == []


def test_exactly_at_capacity_in_time_and_unbounded_capacity() -> None:
    args = dict(
        run=np.array([0, 1]),
        run_start=np.zeros(2),
        gap=np.zeros(2),
        volume=np.array([200.0, 400.0]),
        demand=np.array([20.0, 40.0]),
    )
    at = simulate(**args, capacity=60.0)  # type: ignore[arg-type]
    assert at.end.tolist() == [10.0, 10.0] and at.slowdown.tolist() == [1.0, 1.0]
    assert at.by.nnz == 0
    null = simulate(**args, capacity=float("inf"))  # type: ignore[arg-type]
    assert null.end.tolist() == [10.0, 10.0] and null.throttled_time.tolist() == [0.0, 0.0]


def test_one_ends_as_another_starts_no_overlap() -> None:
    out = simulate(
        run=np.array([0, 1]),
        run_start=np.array([0.0, 10.0]),
        gap=np.zeros(2),
        volume=np.array([400.0, 400.0]),
        demand=np.array([40.0, 40.0]),
        capacity=60.0,
    )
    assert out.end.tolist() == [10.0, 20.0] and out.slowdown.tolist() == [1.0, 1.0]


def test_asking_more_than_the_capacity_alone_is_not_slowed() -> None:
    # 900 B at 90 B/s of a 60 B/s file system: alone it gets 60 (15 s), its uncontended time.
    out = simulate(np.array([0]), np.zeros(1), np.zeros(1), np.array([900.0]), np.array([90.0]), 60.0)
    assert out.end.tolist() == [15.0] and out.slowdown.tolist() == [1.0] and out.by.nnz == 0


def test_folding_the_intervals_early_gives_the_same_shares(monkeypatch: pytest.MonkeyPatch) -> None:
    import mosaic.synth.contention as C

    rng = np.random.default_rng(3)
    n = 60
    args = (
        np.arange(n),
        rng.uniform(0, 100, n),
        np.zeros(n),
        rng.uniform(100, 1000, n),
        rng.uniform(10, 40, n),
    )
    whole = simulate(*args, capacity=100.0)
    monkeypatch.setattr(C, "FLUSH_ENTRIES", 1)
    folded = simulate(*args, capacity=100.0)
    assert whole.by.nnz > 0
    assert abs(whole.by - folded.by).max() < 1e-9 * whole.by.max()
    assert folded.end.tolist() == whole.end.tolist()
