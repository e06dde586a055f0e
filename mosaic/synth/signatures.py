"""Designed I/O signatures and noisy runs of them, to test and measure SPEC 3.12.

A :class:`Design` is an application's clean run: its run time and its bursts (direction,
start and duration as fractions of the run, bytes). :func:`noisy_runs` makes runs of it
as a shared machine would: run lengths jitter, each burst starts a little earlier or
later (``shift``, a share of the run), some bursts stretch as under contention (their
bytes kept, their bandwidth lower, everything after them later), background I/O runs at
a small share of each direction's peak bandwidth, and a few runs miss a burst. Each run
is the per-run series (:mod:`mosaic.series`) of DXT-like requests, or of HEATMAP-like
bins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mosaic.series import RunSeries, series_from_intervals

MIB = float(1 << 20)


@dataclass(frozen=True)
class Burst:
    direction: str  # "read" | "write"
    start: float  # fraction of the run time
    duration: float  # fraction of the run time
    bytes: float


@dataclass(frozen=True)
class Design:
    name: str
    run_time: float  # seconds
    bursts: tuple[Burst, ...]

    def peak_bandwidth(self, direction: str) -> float:
        """The highest bandwidth of a burst in direction (0 without one)."""
        rates = [b.bytes / (b.duration * self.run_time) for b in self.bursts if b.direction == direction]
        return max(rates, default=0.0)


DESIGNS = (
    Design(  # a restart read, then three checkpoints
        "checkpoint",
        600.0,
        (
            Burst("read", 0.02, 0.04, 8000 * MIB),
            Burst("write", 0.20, 0.05, 4000 * MIB),
            Burst("write", 0.45, 0.05, 4000 * MIB),
            Burst("write", 0.70, 0.05, 4000 * MIB),
        ),
    ),
    Design(  # a long input read, a small output, a large final write
        "pipeline",
        120.0,
        (
            Burst("read", 0.10, 0.20, 2000 * MIB),
            Burst("write", 0.50, 0.05, 500 * MIB),
            Burst("write", 0.82, 0.10, 3000 * MIB),
        ),
    ),
    Design(  # five short writes of unequal size, and reads between two of them
        "uneven",
        1800.0,
        (
            Burst("write", 0.08, 0.02, 1000 * MIB),
            Burst("write", 0.25, 0.03, 3000 * MIB),
            Burst("read", 0.35, 0.06, 1500 * MIB),
            Burst("write", 0.50, 0.02, 1000 * MIB),
            Burst("write", 0.70, 0.03, 3000 * MIB),
            Burst("write", 0.90, 0.02, 1000 * MIB),
        ),
    ),
)


def designed_curve(design: Design, direction: str, points: int) -> np.ndarray:
    """The clean run's bandwidth at ``points`` even bins of its normalized run time."""
    bursts = [b for b in design.bursts if b.direction == direction]
    t = design.run_time
    start = np.array([b.start * t for b in bursts])
    end = np.array([(b.start + b.duration) * t for b in bursts])
    moved = np.array([b.bytes for b in bursts])
    series = series_from_intervals(start, end, moved * 0, moved, t, "dxt", 1 << 20)
    return series.normalized("write", points)


def noisy_runs(
    design: Design,
    count: int,
    rng: np.random.Generator,
    *,
    jitter: float = 0.05,
    shift: float = 0.005,
    stretch_probability: float = 0.25,
    stretch: tuple[float, float] = (1.3, 2.0),
    noise_share: float = 0.02,
    missing: int = 1,
    requests: int = 64,
    bin_seconds: float | None = None,
    max_points: int = 4096,
) -> list[RunSeries]:
    """``count`` noisy runs of a design (module doc); ``bin_seconds``: as HEATMAP bins of
    that width, else as DXT requests (``requests`` per burst, of one size, their times
    jittered)."""
    missed = {int(i): int(rng.integers(len(design.bursts))) for i in rng.permutation(count)[:missing]}
    peak = {d: design.peak_bandwidth(d) for d in ("read", "write")}
    runs = []
    for i in range(count):
        t = design.run_time * (1 + rng.uniform(-jitter, jitter))
        delay = 0.0
        starts, ends, reads, writes = [], [], [], []
        for j, burst in enumerate(sorted(design.bursts, key=lambda b: b.start)):
            begin = max(burst.start * t + delay + rng.uniform(-shift, shift) * t, 0.0)
            factor = rng.uniform(*stretch) if rng.random() < stretch_probability else 1.0
            length = burst.duration * t * factor
            delay += burst.duration * t * (factor - 1)
            if missed.get(i) == j:
                continue
            # requests of one transfer size, each taking its share of the burst +- 30 %
            took = rng.uniform(0.7, 1.3, requests)
            edges = begin + np.concatenate(([0.0], np.cumsum(took))) * (length / took.sum())
            share = np.full(requests, burst.bytes / requests)
            starts.append(edges[:-1])
            ends.append(edges[1:])
            reads.append(share if burst.direction == "read" else np.zeros(requests))
            writes.append(share if burst.direction == "write" else np.zeros(requests))
        run_time = t + delay
        noise = max(int(run_time / (0.01 * design.run_time)), 1)
        at = rng.uniform(0, run_time, noise)
        lasting = rng.uniform(0.002, 0.01, noise) * design.run_time
        level = noise_share * rng.uniform(0.2, 1.8, noise) * lasting
        starts.append(at)
        ends.append(at + lasting)
        reads.append(level * peak["read"] * (rng.random(noise) < 0.5))
        writes.append(level * peak["write"] * (rng.random(noise) < 0.5))
        series = series_from_intervals(
            np.concatenate(starts),
            np.concatenate(ends),
            np.concatenate(reads),
            np.concatenate(writes),
            run_time,
            "dxt",
            max_points,
        )
        if bin_seconds is not None:
            series = as_bins(series, bin_seconds, max_points)
        runs.append(series)
    return runs


def as_bins(series: RunSeries, bin_seconds: float, max_points: int) -> RunSeries:
    """The series a HEATMAP of ``bin_seconds`` bins would give of the same run."""
    edges = np.arange(0.0, series.run_time + bin_seconds, bin_seconds)
    return series_from_intervals(
        edges[:-1],
        edges[1:],
        series.binned("read", edges),
        series.binned("write", edges),
        series.run_time,
        "heatmap",
        max_points,
    )
