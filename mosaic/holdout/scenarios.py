"""The held-out scenarios: :data:`SCENARIOS`, a table of rows, and the shapes they name.

A row (:class:`Scenario`) names a shape, a function laying out one log's
records, and the parameters passed to it: fixed values, or :class:`Draw` s
drawn per log in the row's order before the shape runs. The shape draws the
rest (what depends on those values, the ranks' and bursts' jitter) while it
lays the records out. A log is a function of its seed through that order
alone, so a row lists its draws in the order the shape once made them.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.darshan import writer
from mosaic.holdout.design import (
    DAY,
    HOUR,
    NOT_PERIODIC,
    TIMESTAMP_EPSILON,
    UNKNOWN,
    Design,
    Periodicity,
    Records,
    Series,
    claimed,
    moving,
    periodic_claim,
)
from mosaic.holdout.truth import heatmap_series

Rng = np.random.Generator


def loguniform(rng: Rng, low: float, high: float) -> float:
    return float(np.exp(rng.uniform(np.log(low), np.log(high))))


class Draw(ABC):
    """A parameter drawn per log from the scenario's random stream."""

    @abstractmethod
    def __call__(self, rng: Rng) -> Any: ...


@dataclass(frozen=True)
class Uniform(Draw):
    low: float
    high: float

    def __call__(self, rng: Rng) -> float:
        return rng.uniform(self.low, self.high)


@dataclass(frozen=True)
class LogUniform(Draw):
    """Log-uniform; ``whole``: truncated to an int (a count of ranks or of seeks)."""

    low: float
    high: float
    whole: bool = False

    def __call__(self, rng: Rng) -> float:
        value = loguniform(rng, self.low, self.high)
        return int(value) if self.whole else value


@dataclass(frozen=True)
class Integers(Draw):
    """A whole number in [low, high): ``high`` is excluded, as by ``rng.integers``."""

    low: int
    high: int

    def __call__(self, rng: Rng) -> int:
        return int(rng.integers(self.low, self.high))


@dataclass(frozen=True)
class Choice(Draw):
    options: tuple[str, ...]

    def __call__(self, rng: Rng) -> str:
        return str(rng.choice(self.options))


@dataclass(frozen=True)
class Coin(Draw):
    """``heads`` or ``tails``, even odds."""

    heads: float
    tails: float

    def __call__(self, rng: Rng) -> float:
        return self.heads if rng.random() < 0.5 else self.tails


@dataclass(frozen=True)
class UniformIn(Draw):
    """Uniform in one of ``ranges``, picked first at even odds."""

    ranges: tuple[tuple[float, float], ...]

    def __call__(self, rng: Rng) -> float:
        return rng.uniform(*self.ranges[rng.integers(len(self.ranges))])


@dataclass(frozen=True)
class Scenario:
    """A row of the table: a shape and its parameters, fixed or drawn (in this order)."""

    shape: Callable[..., Design]
    params: dict[str, Any] = field(default_factory=dict)
    spec_limit: bool = False  # truth says what an analyst expects where SPEC 3.4's rule disagrees

    def __call__(self, rng: Rng, config: Config) -> Design:
        drawn = {name: v(rng) if isinstance(v, Draw) else v for name, v in self.params.items()}
        return self.shape(rng, config, **drawn)


# --------------------------------------------------------------------------- building blocks


def phase(
    records: Records,
    rng: Rng,
    direction: str,
    start: float,
    total: float,
    duration: float,
    ranks: int,
    layout: str,
    path: str,
    desync: float = 0.3,
    seeks: int = 0,
) -> tuple[float, float]:
    """``ranks`` ranks move ``total`` bytes from ``start``; returns the phase's span.

    Ranks start up to ``desync`` x ``duration`` late. ``layout``: ``shared``
    (one rank -1 record, as Darshan reduces a file all ranks opened),
    ``per_rank`` (one record per rank of the same file) or ``fpp`` (a file
    per rank). Each rank seeks ``seeks`` times in its file.
    """
    starts = start + rng.uniform(0, desync * duration, ranks)
    starts[0] = start
    ends = starts + duration * rng.uniform(0.8, 1.0, ranks)
    weights = rng.uniform(0.9, 1.1, ranks)
    nbytes = np.floor(total * weights / weights.sum())
    if layout == "shared":
        traffic = moving(direction, (starts.min(), ends.max(), nbytes.sum()))
        records.add(
            path,
            -1 if ranks > 1 else 0,
            opens=ranks,
            seeks=ranks * seeks,
            open_window=(max(starts.min() - TIMESTAMP_EPSILON, 0.0), starts.max()),
            close_window=(ends.min(), ends.max() + TIMESTAMP_EPSILON),
            **traffic,
        )
    else:
        paths = [f"{path}.{r:05d}" for r in range(ranks)] if layout == "fpp" else [path] * ranks
        records.add(paths, np.arange(ranks), seeks=seeks, **moving(direction, (starts, ends, nbytes)))
    return float(starts.min()), float(ends.max())


def series(
    records: Records,
    rng: Rng,
    direction: str,
    times: np.ndarray,
    sizes: np.ndarray | list[float],
    durations: ArrayLike,
    ranks: int,
    layout: str,
    path: str,
    desync: float = 0.3,
    seeks: int = 0,
) -> Series:
    """One phase per time; the designed period, busy fraction and bytes of the series."""
    each_duration = np.broadcast_to(np.asarray(durations, float), len(times))
    spans = np.array(
        [
            phase(records, rng, direction, t, s, d, ranks, layout, f"{path}{k:04d}", desync, seeks)
            for k, (t, s, d) in enumerate(zip(times, sizes, each_duration))
        ]
    )
    return series_truth(spans, float(np.sum(sizes)))


def series_truth(spans: np.ndarray, total_bytes: float) -> Series:
    """Period and busy fraction as SPEC 3.4 measures them on merged operations."""
    starts, ends = spans[:, 0], spans[:, 1]
    segments = np.diff(starts)
    segments = np.append(segments, max(segments[-1], ends[-1] - starts[-1]))
    return Series(
        period=float(segments.mean()),
        busy=float(np.mean((ends - starts) / segments)),
        total_bytes=total_bytes,
        count=len(spans),
    )


def latest_timestamp(records: Records) -> float:
    table = records.table()
    ends = [table[name] for name in ("read_end", "write_end", "open_end", "close_end")]
    ends += [s["ends"] for s in records.dxt]
    return float(max(np.max(e, initial=0.0) for e in ends))


def end_of_run(records: Records, planned: float) -> float:
    """The planned end, pushed past the last recorded timestamp when an op runs late."""
    return max(planned, latest_timestamp(records) + 10 * TIMESTAMP_EPSILON)


def regular_times(rng: Rng, first: float, period: float, count: int, jitter: float = 0.0) -> np.ndarray:
    steps = period * (1 + rng.uniform(-jitter, jitter, count - 1))
    return first + np.concatenate([[0.0], np.cumsum(steps)])


def small_input(records: Records, rng: Rng, ranks: int) -> None:
    """An input deck every rank reads at start: real, but far below 100 MB."""
    phase(
        records, rng, "read", 0.01, loguniform(rng, 1e4, 2e7), 0.5, ranks, "shared", "/home/user/input.deck"
    )


# --------------------------------------------------------------------------- checkpoints

CHECKPOINT_DRAWS: dict[str, Draw] = dict(
    ranks=LogUniform(16, 1024, whole=True),
    count=Integers(6, 25),
    period=LogUniform(5, 7200),
    busy=Uniform(0.05, 0.9),
    layout=Choice(("shared", "per_rank")),
    size=LogUniform(2e8, 5e10),
)


def checkpoints(
    rng: Rng, config: Config, jitter: float = 0.0, size_spread: float = 0.0, **given: Any
) -> Design:
    """A small input read, then ``count`` checkpoints of ``size`` (± ``size_spread``) bytes
    every ``period`` (± ``jitter``).

    What the row leaves out of :data:`CHECKPOINT_DRAWS` is drawn here, after the row's draws.
    """
    p = {name: given[name] if name in given else draw(rng) for name, draw in CHECKPOINT_DRAWS.items()}
    ranks, count, period, busy, layout, size = (p[name] for name in CHECKPOINT_DRAWS)
    sizes = size * rng.uniform(1 - size_spread, 1 + size_spread, count)
    records = Records()
    small_input(records, rng, ranks)
    times = regular_times(rng, period * rng.uniform(0.3, 1.0), period, count, jitter)
    desync = 0.3
    duration = busy * period / (1 + desync)
    write = series(records, rng, "write", times, sizes, duration, ranks, layout, "/scratch/run/ckpt", desync)
    run_time = end_of_run(records, times[-1] + period * rng.uniform(0.6, 1.0))
    return Design(run_time, ranks, records, p, write=claimed(config, write))


def log_plus_ckpt(rng: Rng, config: Config) -> Design:
    """Rank 0 writes a log all run long next to periodic checkpoints (SPEC 3.3's minor op)."""
    design = checkpoints(rng, config)
    table = design.records.table()
    wrote = table["bytes_written"] > 0
    rates = table["bytes_written"][wrote] / (table["write_end"] - table["write_start"])[wrote]
    start, end = 0.002 * design.run_time, 0.998 * design.run_time
    share = rng.uniform(0.0005, 0.004)  # of the median rate: well under SPEC's 1 %
    log_bytes = max(np.floor(share * np.median(rates) * (end - start)), 1.0)
    # Kept open until the job ended: Darshan never recorded its close (SPEC 2).
    design.records.add(
        "/scratch/run/simulation.log", 0, write=(start, end, log_bytes), close_window=(0.0, 0.0)
    )
    design.records.add(
        "<STDOUT>", 0, write=(start, end, loguniform(rng, 1e8, 1e9)), stdio=True, close_window=(0.0, 0.0)
    )
    design.posix_only = False
    design.params.update(log_bytes=log_bytes, log_rate_share=share)
    return design


def stalled_checkpoints(rng: Rng, config: Config) -> Design:
    """Six checkpoints every ``period``, the second and fourth stalled by a shared file
    system: the same bytes over 20-40 % of the period, at under 1 % of the others' rate
    (which take 0.03-0.1 % of it). They are still checkpoints (SPEC 3.3: minor by volume,
    not by rate); dropped, the others leave segments of 2, 2, 1 and 1 periods."""
    ranks, period = int(rng.integers(4, 65)), loguniform(rng, 5, 3600)
    size = loguniform(rng, 2e8, 2e10)
    records = Records()
    small_input(records, rng, ranks)
    times = regular_times(rng, period * rng.uniform(0.3, 1.0), period, 6)
    durations = np.full(6, rng.uniform(0.0003, 0.001) * period)
    durations[[1, 3]] = rng.uniform(0.2, 0.4, 2) * period
    write = series(
        records, rng, "write", times, np.full(6, size), durations, ranks, "shared", "/scratch/run/ckpt"
    )
    run_time = end_of_run(records, times[-1] + period * rng.uniform(0.6, 1.0))
    params = dict(ranks=ranks, period=period, size=size, stalled_seconds=durations[[1, 3]].tolist())
    return Design(run_time, ranks, records, params, write=claimed(config, write))


def restart_ckpt_final(rng: Rng, config: Config, **given: Any) -> Design:
    """Read a restart file at start, checkpoint periodically, write a final state."""
    design = checkpoints(rng, config, **given)
    size, period, ranks = design.params["size"], design.params["period"], design.nprocs
    restart = loguniform(rng, 2e9, 5e10)
    phase(
        design.records,
        rng,
        "read",
        0.02,
        restart,
        min(0.3 * period, 0.02 * design.run_time),
        ranks,
        "shared",
        "/scratch/run/restart.h5",
    )
    last_end = design.run_time
    final = 2 * size
    final_duration = 0.4 * period
    design.records.add(
        "/scratch/run/final.h5",
        -1 if ranks > 1 else 0,
        write=(last_end, last_end + final_duration, final),
        opens=ranks,
    )
    design.run_time = last_end + final_duration * 1.2
    design.write = claimed(config, *design.write.series, other_ops=1)
    design.params.update(restart=restart, final=final)
    return design


def legacy_fpp_periodic(rng: Rng, config: Config, **given: Any) -> Design:
    """File-per-process checkpoints, for a Darshan 2.x log (open..close intervals)."""
    design = checkpoints(rng, config, **given)
    design.params["force_legacy"] = True
    return design


def periodic_near_100mb(rng: Rng, config: Config, count: int, total: float) -> Design:
    """Periodic checkpoints whose whole volume is 80 MB (insignificant) or 130 MB."""
    design = checkpoints(rng, config, count=count, size=total / count)
    design.params["total"] = total
    return design


# --------------------------------------------------------------------------- other series


def many_small_files(
    rng: Rng,
    config: Config,
    ranks: int,
    files: int,
    count: int,
    period: float,
    file_bytes: float,
    busy: float,
) -> Design:
    """Each step, every rank writes dozens of small files back to back."""
    per_file = busy * period / files
    records = Records()
    small_input(records, rng, ranks)
    times = regular_times(rng, period * rng.uniform(0.3, 1.0), period, count)
    rank = np.repeat(np.arange(ranks), files)
    index = np.tile(np.arange(files), ranks)
    spans = []
    for k, t in enumerate(times):
        starts = t + index * per_file + rng.uniform(0, 0.02 * per_file, ranks)[rank]
        ends = starts + per_file * 0.98
        paths = [f"/scratch/out/step{k:04d}/r{r:04d}_f{i:03d}.dat" for r, i in zip(rank, index)]
        records.add(paths, rank, write=(starts, ends, file_bytes), seeks=2)
        spans.append((starts.min(), ends.max()))
    run_time = end_of_run(records, times[-1] + period * rng.uniform(0.6, 1.0))
    write = series_truth(np.array(spans), file_bytes * ranks * files * count)
    params = dict(ranks=ranks, files=files, count=count, period=period, file_bytes=file_bytes)
    return Design(run_time, ranks, records, params, write=claimed(config, write))


def two_series_interleaved(rng: Rng, config: Config, ranks: int, every: int, n_big: int) -> Design:
    """Every step a small dump; every ``every``-th step also a big checkpoint, in between."""
    count = every * n_big + int(rng.integers(1, every))
    period = rng.uniform(100, 300)
    offset = rng.uniform(0.4, 0.6)
    small, big = loguniform(rng, 5e7, 5e8), loguniform(rng, 1e9, 2e10)
    records = Records()
    small_input(records, rng, ranks)
    times = regular_times(rng, period * rng.uniform(0.3, 1.0), period, count)
    duration = rng.uniform(0.05, 0.2) * period / 1.3
    dumps = series(
        records, rng, "write", times, np.full(count, small), duration, ranks, "shared", "/scratch/run/dump"
    )
    big_times = times[every - 1 :: every][:n_big] + offset * period
    ckpts = series(
        records, rng, "write", big_times, np.full(n_big, big), duration, ranks, "shared", "/scratch/run/ckpt"
    )
    # The big series cuts the small one's segments: periods look like the offset,
    # all within one magnitude by construction; busy fractions are not asserted.
    for s in (dumps, ckpts):
        s.busy = None
    run_time = end_of_run(records, times[-1] + period * rng.uniform(0.6, 1.0))
    params = dict(ranks=ranks, every=every, count=count, period=period, offset=offset, small=small, big=big)
    return Design(run_time, ranks, records, params, write=Periodicity(True, [dumps, ckpts]))


def two_phase_series(
    rng: Rng, config: Config, ranks: int, n1: int, n2: int, t1: float, t2: float, s1: float, heavier: float
) -> Design:
    """Frequent small outputs for a while, then rarer checkpoints ``heavier`` times the bytes."""
    s2 = s1 * n1 / n2 * heavier
    records = Records()
    small_input(records, rng, ranks)
    b1, b2 = rng.uniform(0.05, 0.6), rng.uniform(0.05, 0.6)
    times1 = regular_times(rng, t1, t1, n1)
    first = series(
        records, rng, "write", times1, np.full(n1, s1), b1 * t1 / 1.3, ranks, "shared", "/scratch/run/diag"
    )
    times2 = regular_times(rng, times1[-1] + t2, t2, n2)
    second = series(
        records, rng, "write", times2, np.full(n2, s2), b2 * t2 / 1.3, ranks, "shared", "/scratch/run/ckpt"
    )
    run_time = float(times2[-1] + t2 * rng.uniform(0.6, 1.0))
    params = dict(ranks=ranks, n1=n1, n2=n2, t1=t1, t2=t2, s1=s1, s2=s2)
    return Design(run_time, ranks, records, params, write=claimed(config, first, second))


def periodic_input_reads(
    rng: Rng, config: Config, ranks: int, count: int, period: float, busy: float
) -> Design:
    """Input chunks read at a fixed period; one output written at the end."""
    records = Records()
    times = regular_times(rng, rng.uniform(0.01, 0.2) * period, period, count)
    layout = str(rng.choice(["shared", "per_rank", "fpp"]))
    chunk = loguniform(rng, 1e8, 2e9)
    duration = busy * period / 1.3
    read = series(
        records, rng, "read", times, np.full(count, chunk), duration, ranks, layout, "/scratch/data/chunk"
    )
    run_time = end_of_run(records, times[-1] + period * 1.5)
    start, output = times[-1] + period * 1.1, loguniform(rng, 1e9, 1e10)
    phase(records, rng, "write", start, output, 0.3 * period, ranks, "shared", "/scratch/out/result.h5")
    params = dict(ranks=ranks, count=count, period=period, busy=busy, layout=layout, chunk=chunk)
    return Design(run_time, ranks, records, params, read=claimed(config, read))


def stdio_only(rng: Rng, config: Config, count: int, period: float, busy: float, size: float) -> Design:
    """A serial script writing CSV tables with fwrite, and chatty stdout."""
    records = Records()
    records.add("/home/user/params.csv", 0, read=(0.01, 0.02, 5e4), stdio=True)
    times = regular_times(rng, period * rng.uniform(0.3, 1.0), period, count)
    spans = []
    for k, t in enumerate(times):
        d = busy * period
        records.add(f"/scratch/tables/step{k:04d}.csv", 0, write=(t, t + d, size), stdio=True)
        spans.append((t, t + d))
    run_time = end_of_run(records, times[-1] + period * rng.uniform(0.6, 1.0))
    records.add("<STDOUT>", 0, write=(0.0, run_time * 0.99, 5e8), stdio=True, close_window=(0.0, 0.0))
    write = series_truth(np.array(spans), size * count)
    params = dict(count=count, period=period, busy=busy, size=size)
    return Design(run_time, 1, records, params, write=claimed(config, write), posix_only=False)


def dxt_traced(
    rng: Rng,
    config: Config,
    ranks: int,
    count: int,
    period: float,
    busy: float,
    requests: int,
    size: float,
    input_bytes: float,
) -> Design:
    """DXT_POSIX per-request segments: a chunked input read, then chunked checkpoints."""
    records = Records()
    read_time = 0.2 * period
    for r in range(ranks):
        edges = 0.01 + np.linspace(0, read_time, requests + 1)
        records.add_dxt(
            "/scratch/data/input.nc",
            r,
            False,
            edges[:-1],
            edges[1:] - 1e-4,
            np.full(requests, np.floor(input_bytes / ranks / requests)),
        )
    times = regular_times(rng, period * rng.uniform(0.5, 1.0), period, count)
    spans = []
    for k, t in enumerate(times):
        lag = rng.uniform(0, 0.1 * busy * period, ranks)
        for r in range(ranks):
            edges = t + lag[r] + np.linspace(0, busy * period / 1.1, requests + 1)
            records.add_dxt(
                f"/scratch/run/ckpt{k:04d}.h5",
                r,
                True,
                edges[:-1],
                edges[1:] - 1e-5,
                np.full(requests, np.floor(size / ranks / requests)),
            )
        spans.append((t, t + lag.max() + busy * period / 1.1))
    run_time = end_of_run(records, times[-1] + period * rng.uniform(0.6, 1.0))
    write = series_truth(np.array(spans), size * count)
    params = dict(ranks=ranks, count=count, period=period, busy=busy, size=size, requests=requests)
    return Design(run_time, ranks, records, params, write=claimed(config, write), posix_only=False)


# --------------------------------------------------------------------------- no period, phases


def bytes_near_100mb(rng: Rng, config: Config) -> Design:
    """Directions just under / over 100 MB (80 vs 130 MB): significance must flip."""
    under, over = 0.8e8 * rng.uniform(0.9, 1.0), 1.3e8 * rng.uniform(1.0, 1.2)
    read_total, write_total = (under, over) if rng.random() < 0.5 else (over, under)
    ranks = int(loguniform(rng, 1, 64))
    run_time = loguniform(rng, 60, 36000)
    records = Records()
    files = int(rng.integers(1, 8))
    starts = np.sort(rng.uniform(0.0, 0.15, files)) * run_time + 0.01
    ends = starts + rng.uniform(0.01, 0.05) * run_time
    records.add(
        [f"/scratch/in/part{i}" for i in range(files)], 0, read=(starts, ends, np.floor(read_total / files))
    )
    wstart = run_time * rng.uniform(0.8, 0.9)
    phase(
        records,
        rng,
        "write",
        wstart,
        write_total,
        0.05 * run_time,
        ranks,
        "per_rank",
        "/scratch/out/result.bin",
    )
    return Design(run_time, ranks, records, dict(read_total=read_total, write_total=write_total, ranks=ranks))


def op_spans_chunks(rng: Rng, config: Config, run_time: float) -> Design:
    """A few long operations each spanning several quarters (bytes spread uniformly)."""
    records = Records()
    for direction, path in (("read", "/scratch/in/stream.dat"), ("write", "/scratch/out/o.dat")):
        start, end = np.sort(rng.uniform(0.01, 0.99, 2)) * run_time
        records.add(path, -1, opens=64, **moving(direction, (start, end, loguniform(rng, 2e8, 2e10))))
    return Design(run_time, 64, records, dict(run_time=run_time))


def reads_after_first_quarter(rng: Rng, config: Config, run_time: float, count: int) -> Design:
    """Regular reads from the end of the first quarter on; random writes throughout."""
    period = 0.74 * run_time / count
    records = Records()
    times = regular_times(rng, 0.255 * run_time, period, count)
    ranks = int(loguniform(rng, 1, 128))
    sizes = np.full(count, loguniform(rng, 1e7, 1e9))
    duration = rng.uniform(0.1, 0.5) * period
    read = series(records, rng, "read", times, sizes, duration, ranks, "shared", "/scratch/in/frame")
    poisson_writes(records, rng, run_time, equal_bytes=False)
    params = dict(run_time=run_time, count=count, ranks=ranks)
    return Design(run_time, ranks, records, params, read=claimed(config, read))


def poisson_writes(records: Records, rng: Rng, run_time: float, equal_bytes: bool) -> int:
    """Writes at random (Poisson) times, sizes log-uniform unless ``equal_bytes``."""
    count = int(rng.integers(20, 200))
    starts = np.sort(rng.uniform(0.0, 0.97, count)) * run_time + 0.01
    durations = np.minimum(
        rng.exponential(0.002, count) * run_time, np.diff(np.append(starts, run_time)) * 0.5
    )
    sizes = (
        np.full(count, loguniform(rng, 1e7, 1e9))
        if equal_bytes
        else np.exp(rng.uniform(np.log(1e6), np.log(5e9), count))
    )
    records.add(
        [f"/scratch/out/event{i:05d}" for i in range(count)],
        0,
        write=(starts, starts + durations, np.floor(sizes)),
    )
    return count


def poisson(rng: Rng, config: Config, run_time: float, equal_bytes: bool) -> Design:
    """Writes at random times only: no period."""
    records = Records()
    count = poisson_writes(records, rng, run_time, equal_bytes)
    return Design(run_time, 1, records, dict(run_time=run_time, count=count, equal_bytes=equal_bytes))


def one_off_phases(rng: Rng, config: Config, run_time: float, ranks: int, layout: str) -> Design:
    """Read input at start (and maybe a reference at the end); two equal snapshots: no period."""
    records = Records()
    mesh, duration = loguniform(rng, 2e8, 5e10), rng.uniform(0.01, 0.08) * run_time
    phase(records, rng, "read", 0.001 * run_time, mesh, duration, ranks, layout, "/scratch/in/mesh.h5")
    if rng.random() < 0.5:  # verify against a reference read at the end
        reference, duration = loguniform(rng, 2e8, 5e10), rng.uniform(0.01, 0.06) * run_time
        phase(
            records,
            rng,
            "read",
            0.9 * run_time,
            reference,
            duration,
            ranks,
            layout,
            "/scratch/in/reference.h5",
        )
    snapshot, duration = loguniform(rng, 2e8, 5e10), rng.uniform(0.01, 0.08) * run_time
    phase(records, rng, "write", 0.1 * run_time, snapshot, duration, ranks, layout, "/scratch/out/snap0.h5")
    last = 0.98 * run_time - 1.3 * duration  # rank desync stretches the phase by 30 %
    phase(records, rng, "write", last, snapshot, duration, ranks, layout, "/scratch/out/snap1.h5")
    return Design(run_time, ranks, records, dict(run_time=run_time, ranks=ranks, layout=layout))


def metadata_storm_start(
    rng: Rng, config: Config, ranks: int, files: int, window: float, run_time: float
) -> Design:
    """Thousands of ranks open their files within the first seconds, then compute."""
    records = Records()
    opened = rng.uniform(0.0, window, (files, ranks))
    for f in range(files):
        records.add(
            [f"/scratch/in/r{r:05d}.f{f}" for r in range(ranks)],
            np.arange(ranks),
            read=(opened[f] + 0.01, opened[f] + 0.5, 2e6),
            seeks=int(rng.integers(0, 3)),
            open_window=(opened[f], opened[f] + 0.005),
        )
    output = loguniform(rng, 2e8, 2e10)
    phase(
        records,
        rng,
        "write",
        0.95 * run_time,
        output,
        0.03 * run_time,
        min(ranks, 64),
        "shared",
        "/scratch/out/final.h5",
    )
    params = dict(ranks=ranks, files=files, window=window, run_time=run_time)
    return Design(run_time, ranks, records, params)


def metadata_bursts(rng: Rng, config: Config, count: int, period: float, files: int, window: float) -> Design:
    """A few hundred tiny files opened and closed in a burst every period."""
    records = Records()
    times = regular_times(rng, period * 0.5, period, count)
    for k, t in enumerate(times):
        opened = np.sort(t + rng.uniform(0, window, files))
        records.add(
            [f"/scratch/cat/b{k:03d}_{i:04d}.json" for i in range(files)],
            0,
            read=(opened + 1e-4, opened + 2e-4, 4096),
            seeks=1,
        )
    run_time = end_of_run(records, times[-1] + period * rng.uniform(0.6, 1.0))
    params = dict(count=count, period=period, files=files, window=window)
    return Design(run_time, 1, records, params, write=UNKNOWN)


# --------------------------------------------------------------------------- long and short runs


def long_run_days(rng: Rng, config: Config, days: int, ranks: int) -> Design:
    """Days-long run: hourly checkpoints, and a day's input read every day."""
    records = Records()
    hours = days * 24 - 1
    times = regular_times(rng, HOUR * rng.uniform(0.5, 1.0), HOUR, hours, jitter=0.02)
    sizes, duration = np.full(hours, loguniform(rng, 1e9, 1e10)), rng.uniform(60, 600)
    write = series(records, rng, "write", times, sizes, duration, ranks, "shared", "/scratch/run/ckpt")
    daily = regular_times(rng, 0.2 * HOUR, DAY, days)
    sizes, duration = np.full(days, loguniform(rng, 5e9, 5e10)), rng.uniform(300, 1800)
    read = series(records, rng, "read", daily, sizes, duration, ranks, "shared", "/scratch/in/day")
    params = dict(days=days, ranks=ranks)
    return Design(
        float(days * DAY), ranks, records, params, read=claimed(config, read), write=claimed(config, write)
    )


def short_run_subsecond(
    rng: Rng, config: Config, period: float, busy: float, planned_run: float, ranks: int, frame_bytes: float
) -> Design:
    """Seconds-long run writing every fraction of a second (gaps kept above SPEC's merge gap).

    Under ``min_period_seconds`` (SPEC 3.4) this is request cadence: not periodic.
    """
    gap_limit = (1 - busy) * period / (4 * config.neighbor_gap_runtime_fraction)
    run_time = min(planned_run, gap_limit)
    count = int((run_time - period) / period)
    size = max(frame_bytes, 1.5e8 / count)
    records = Records()
    times = regular_times(rng, 0.5 * period, period, count)
    write = series(
        records,
        rng,
        "write",
        times,
        np.full(count, size),
        busy * period / 1.1,
        ranks,
        "shared",
        "/scratch/run/frame",
        desync=0.1,
    )
    params = dict(period=period, busy=busy, run_time=run_time, count=count, ranks=ranks)
    return Design(run_time, ranks, records, params, write=claimed(config, write))


def month_run(rng: Rng, config: Config, days: int, ranks: int) -> Design:
    """A run of 30+ days with a daily checkpoint."""
    records = Records()
    times = regular_times(rng, DAY * rng.uniform(0.3, 1.0), DAY, days - 1)
    sizes, duration = np.full(days - 1, loguniform(rng, 1e10, 1e11)), rng.uniform(600, 3600)
    write = series(records, rng, "write", times, sizes, duration, ranks, "shared", "/scratch/run/ckpt")
    small_input(records, rng, ranks)
    return Design(
        float(days * DAY), ranks, records, dict(days=days, ranks=ranks), write=claimed(config, write)
    )


def zero_length_ops(rng: Rng, config: Config, count: int, period: float, ranks: int, size: float) -> Design:
    """Checkpoints whose recorded start equals their end, and stat-like zero-byte opens."""
    records = Records()
    times = regular_times(rng, period * 0.5, period, count)
    records.add(
        [f"/scratch/run/ckpt{k:04d}" for k in range(count)],
        -1 if ranks > 1 else 0,
        write=(times, times, size),
        opens=ranks,
    )
    records.add(
        [f"/scratch/run/lock{k:04d}" for k in range(count)],
        0,
        opens=1,
        open_window=(times + 0.3 * period, times + 0.3 * period),
        close_window=(times + 0.31 * period, times + 0.31 * period),
    )
    run_time = end_of_run(records, times[-1] + period * rng.uniform(0.6, 1.0))
    write = series_truth(np.stack([times, times], 1), size * count)
    params = dict(count=count, period=period, ranks=ranks, size=size)
    return Design(run_time, ranks, records, params, write=claimed(config, write))


# --------------------------------------------------------------------------- where SPEC 3.4 is tested


def overlap_many_ranks(rng: Rng, config: Config, ranks: int, count: int, period: float) -> Design:
    """Each period, hundreds of ranks write with widely scattered starts and lengths."""
    records = Records()
    small_input(records, rng, ranks)
    times = regular_times(rng, period * 0.5, period, count)
    spans = []
    size = loguniform(rng, 2e8, 2e10)
    for k, t in enumerate(times):
        starts = t + rng.uniform(0, 0.3, ranks) * period
        starts[0] = t
        ends = starts + rng.uniform(0.1, 0.3, ranks) * period
        ends[0] = starts.max() + 0.01 * period  # rank 0 overlaps every other rank
        records.add(
            [f"/scratch/run/out{k:04d}"] * ranks,
            np.arange(ranks),
            write=(starts, ends, np.floor(size / ranks)),
        )
        spans.append((starts.min(), ends.max()))
    run_time = end_of_run(records, times[-1] + period * rng.uniform(0.7, 1.0))
    write = series_truth(np.array(spans), size * count)
    params = dict(ranks=ranks, count=count, period=period)
    return Design(run_time, ranks, records, params, write=claimed(config, write))


def serialized_rank_writes(rng: Rng, config: Config, ranks: int, count: int, period: float) -> Design:
    """Token-ring checkpoints: ranks write one after another, with a pause between ranks.

    SPEC 3.4's segments then mostly measure the spacing between ranks; an
    analyst still calls the checkpoint period the period.
    """
    run_estimate = (count + 1) * period
    pause = max(
        rng.uniform(0.2, 1.0),
        3 * config.neighbor_gap_runtime_fraction * run_estimate / (0.3 * period / ranks),
    )
    per_rank = 0.3 * period / ranks / (1 + pause)
    size = loguniform(rng, 2e8, 2e10)
    records = Records()
    small_input(records, rng, ranks)
    times = regular_times(rng, period * rng.uniform(0.3, 1.0), period, count)
    spans = []
    for k, t in enumerate(times):
        starts = t + np.arange(ranks) * per_rank * (1 + pause)
        records.add(
            [f"/scratch/run/ckpt{k:04d}.h5"] * ranks,
            np.arange(ranks),
            write=(starts, starts + per_rank, np.floor(size / ranks)),
        )
        spans.append((starts[0], starts[-1] + per_rank))
    run_time = end_of_run(records, times[-1] + period * rng.uniform(0.6, 1.0))
    write = series_truth(np.array(spans), size * count)
    write.busy = None
    params = dict(ranks=ranks, count=count, period=period, pause=pause, size=size)
    return Design(run_time, ranks, records, params, write=Periodicity(True, [write]))


def ckpt_two_files(rng: Rng, config: Config, ranks: int, count: int, period: float, busy: float) -> Design:
    """Each checkpoint: a big data file, then after a pause a small index file (HDF5 + XDMF).

    The data file's segment ends at the index file, so SPEC 3.4 measures the
    pause, not the period, for the dominant operation.
    """
    pause = rng.uniform(0.05, 0.15) * period
    size = loguniform(rng, 2e8, 2e10)
    records = Records()
    small_input(records, rng, ranks)
    times = regular_times(rng, period * rng.uniform(0.3, 1.0), period, count)
    data = series(
        records,
        rng,
        "write",
        times,
        np.full(count, size),
        busy * period / 1.3,
        ranks,
        "shared",
        "/scratch/run/field",
    )
    index_times = times + busy * period + pause
    series(
        records,
        rng,
        "write",
        index_times,
        np.full(count, size * 0.001),
        0.001 * period,
        1,
        "shared",
        "/scratch/run/field_index",
    )
    run_time = end_of_run(records, times[-1] + period * rng.uniform(0.6, 1.0))
    data.busy = None
    params = dict(ranks=ranks, count=count, period=period, pause=pause, size=size)
    return Design(run_time, ranks, records, params, write=Periodicity(True, [data]))


def hourly_daily_one_direction(rng: Rng, config: Config, days: int, ranks: int) -> Design:
    """Hourly checkpoints and a much larger daily archive, both written, for days."""
    records = Records()
    hours = days * 24 - 1
    times = regular_times(rng, HOUR * 0.5, HOUR, hours)
    sizes, duration = np.full(hours, loguniform(rng, 1e9, 5e9)), rng.uniform(60, 300)
    hourly = series(records, rng, "write", times, sizes, duration, ranks, "shared", "/scratch/run/ckpt")
    archive = 24 * 5 * hourly.total_bytes / hours * rng.uniform(1, 3)
    daily_times = times[23::24][: days - 1] + 0.25 * HOUR
    sizes, duration = np.full(len(daily_times), archive), rng.uniform(600, 1200)
    daily = series(
        records, rng, "write", daily_times, sizes, duration, ranks, "shared", "/scratch/archive/day"
    )
    hourly.busy = daily.busy = None
    params = dict(days=days, ranks=ranks)
    return Design(float(days * DAY), ranks, records, params, write=Periodicity(True, [hourly, daily]))


def metadata_dense(rng: Rng, config: Config, run_time: float, rate: float) -> Design:
    """Small files opened all run long at tens to hundreds per second."""
    count = int(rate * run_time)
    opened = np.sort(rng.uniform(0, run_time - 1, count))
    records = Records()
    records.add(
        [f"/scratch/db/k{i:07d}" for i in range(count)],
        0,
        read=(opened + 1e-4, opened + 3e-4, 8192),
        seeks=int(rng.integers(0, 3)),
    )
    return Design(run_time, 1, records, dict(run_time=run_time, rate=rate), read=UNKNOWN)


def paused_series(
    rng: Rng, config: Config, ranks: int, period: float, n1: int, n2: int, busy: float, size: float
) -> Design:
    """Checkpoints at one period, a long pause (queue wait, rebalancing), then more of them."""
    records = Records()
    small_input(records, rng, ranks)
    first = regular_times(rng, 0.5 * period, period, n1)
    second = regular_times(rng, first[-1] + period * rng.uniform(4, 8), period, n2)
    times = np.concatenate([first, second])
    sizes, duration = np.full(n1 + n2, size), busy * period / 1.3
    write = series(records, rng, "write", times, sizes, duration, ranks, "shared", "/scratch/run/ckpt")
    write.period, write.busy = period, None  # the pause stretches one segment
    run_time = float(second[-1] + period * rng.uniform(0.6, 1.0))
    params = dict(ranks=ranks, period=period, n1=n1, n2=n2, busy=busy)
    # One series, laid out as two runs of n1 and n2 checkpoints.
    return Design(
        run_time, ranks, records, params, write=Periodicity(periodic_claim([n1, n2], 0, config), [write])
    )


# --------------------------------------------------------------------------- requests, seeks, partial logs


def dxt_random_small_requests(rng: Rng, config: Config, ranks: int, run_time: float) -> Design:
    """Thousands of DXT-traced requests of random sizes at random times from a few ranks."""
    records = Records()
    for r in range(ranks):
        count = int(rng.integers(500, 3000))
        starts = np.sort(rng.uniform(0.001, 0.99, count)) * run_time
        lengths = np.floor(np.exp(rng.uniform(np.log(4096), np.log(4e6), count)))
        ends = starts + lengths / loguniform(rng, 1e8, 1e9)
        records.add_dxt("/scratch/data/table.db", r, False, starts, ends, lengths)
    return Design(run_time, ranks, records, dict(ranks=ranks, run_time=run_time), posix_only=False)


def seek_heavy_reader(rng: Rng, config: Config, run_time: float, seeks: int) -> Design:
    """One rank opens a big file once and seeks thousands of times (SPEC 3.7: with the open)."""
    records = Records()
    start = rng.uniform(0.05, 0.5) * run_time
    records.add(
        "/scratch/data/index.bin",
        0,
        read=(start, start + 0.3 * run_time, 5e9),
        seeks=seeks,
        open_window=(start - 0.01, start - 0.005),
    )
    return Design(run_time, 1, records, dict(run_time=run_time, seeks=seeks))


def dxt_request_cadence(
    rng: Rng, config: Config, ranks: int, run_time: float, cadence: float, requests: int, size: float
) -> Design:
    """One traced input phase of requests every 0.1-0.6 s (SPEC 3.4: < 1 s is no period)."""
    records = Records()
    for r in range(ranks):
        starts = 0.5 + rng.uniform(0, 0.05) + cadence * np.arange(requests)
        records.add_dxt(
            "/scratch/data/input.nc",
            r,
            False,
            starts,
            starts + cadence * rng.uniform(0.3, 0.7),
            np.full(requests, np.floor(size / ranks / requests)),
        )
    run_time = end_of_run(records, max(run_time, 4 * cadence * requests))
    params = dict(ranks=ranks, cadence=cadence, requests=requests, size=size)
    return Design(run_time, ranks, records, params, posix_only=False)


def partial_lost_files(rng: Rng, config: Config, run_time: float, ranks: int) -> Design:
    """A partial POSIX module lost the big output files' records: only MPI-IO keeps them.

    SPEC 2 lets those MPI-IO records stand in, so the output counts (here
    every byte written that matters); a small log file stays in POSIX.
    """
    records = Records()
    small_input(records, rng, ranks)
    records.add(
        "/scratch/run/progress.log", 0, write=(0.05 * run_time, 0.2 * run_time, loguniform(rng, 1e4, 1e6))
    )
    start, duration = rng.uniform(0.86, 0.9) * run_time, 0.08 * run_time
    nbytes = np.floor(loguniform(rng, 1e9, 5e10) / ranks)
    records.add(
        [f"/scratch/run/out.{r:04d}" for r in range(ranks)],
        np.arange(ranks),
        write=(start, start + duration, nbytes),
        lost=True,
    )
    params = dict(ranks=ranks, run_time=run_time, partial=True)
    return Design(run_time, ranks, records, params, posix_only=False)


def sample_shards_seek_reader(rng: Rng, config: Config, ranks: int, files: int, run_time: float) -> Design:
    """Training ranks read their shards of sample files one after another, a seek before
    each of 100-1000 requests per file (SPEC 3.7: seeks reach no metadata server)."""
    shard = loguniform(rng, 2e8, 2e10) / ranks / files
    records = Records()
    small_input(records, rng, ranks)
    for r in range(ranks):
        bounds = np.sort(rng.uniform(0.05, 0.9, files + 1)) * run_time
        bounds[0], bounds[-1] = 0.05 * run_time, 0.9 * run_time
        records.add(
            [f"/scratch/data/shard{r:03d}_{f:02d}.rec" for f in range(files)],
            r,
            read=(bounds[:-1] + 2 * TIMESTAMP_EPSILON, bounds[1:], np.floor(shard)),
            seeks=rng.integers(100, 1001, files),
        )
    return Design(run_time, ranks, records, dict(ranks=ranks, files=files))


def open_storm_seek_aggregators(
    rng: Rng, config: Config, ranks: int, aggregators: int, count: int, period: float
) -> Design:
    """Hundreds of ranks open the input within one second (the spike), and a few
    aggregators write each step's output with a seek before every request."""
    records = Records()
    opened = 2.1 + rng.uniform(0, 0.5, ranks)  # all within second 2
    closed = opened + rng.uniform(2.0, 2.4, ranks)
    records.add(
        [f"/scratch/in/mesh.{r:05d}" for r in range(ranks)],
        np.arange(ranks),
        read=(opened + 0.01, closed - 0.01, np.floor(loguniform(rng, 1e6, 5e7) / ranks)),
        open_window=(opened, opened),
        close_window=(closed, closed),
    )
    times = regular_times(rng, period * rng.uniform(0.5, 1.0), period, count)
    seeks = int(rng.integers(100, 1001))
    sizes = np.full(count, loguniform(rng, 1e9, 3e10))
    write = series(
        records,
        rng,
        "write",
        times,
        sizes,
        rng.uniform(0.05, 0.5) * period / 1.3,
        aggregators,
        "fpp",
        "/scratch/out/step",
        seeks=seeks,
    )
    run_time = end_of_run(records, times[-1] + period)
    params = dict(ranks=ranks, aggregators=aggregators, count=count, period=period, seeks=seeks)
    return Design(run_time, ranks, records, params, write=claimed(config, write))


def two_series_unrelated_periods(rng: Rng, config: Config, ranks: int, small_period: float) -> Design:
    """Small diagnostics every 3.5-12 s and checkpoints 10.3-15.7 times rarer (no whole
    ratio): the checkpoints cut the diagnostics' segments at lengths that keep changing.
    The heavier checkpoint series is the dominant one (SPEC 3.4), also when 5-20
    checkpoints of 25-200 times a diagnostic's bytes are split by mean shift into clusters
    lighter than the diagnostics' (the series still carries 1.5-20 times their bytes)."""
    ratio = int(rng.integers(10, 16)) + rng.uniform(0.3, 0.7)
    big_count = int(rng.integers(5, 21))
    big_period = small_period * ratio
    small_count = int(big_count * ratio) + 2
    small = loguniform(rng, 2e6, 5e7)
    big = small * rng.uniform(25, 200)
    records = Records()
    diag_times = regular_times(rng, small_period * 0.4, small_period, small_count)
    diag = series(
        records,
        rng,
        "write",
        diag_times,
        np.full(small_count, small),
        0.05 * small_period,
        1,
        "fpp",
        "/scratch/run/diag",
    )
    ckpt_times = regular_times(rng, big_period * rng.uniform(0.5, 0.9), big_period, big_count)
    ckpt = series(
        records,
        rng,
        "write",
        ckpt_times,
        np.full(big_count, big),
        0.004 * big_period,
        ranks,
        str(rng.choice(["shared", "per_rank"])),
        "/scratch/run/ckpt",
    )
    diag.busy = ckpt.busy = None  # each series cuts the other's segments
    run_time = end_of_run(records, max(diag_times[-1], ckpt_times[-1]) + small_period)
    params = dict(ranks=ranks, small_period=small_period, big_period=big_period, small=small, big=big)
    return Design(run_time, ranks, records, params, write=claimed(config, diag, ckpt))


# --------------------------------------------------------------------------- appended files (HEATMAP)


def heatmap_width(run_time: float) -> float:
    """Darshan's heatmap bins: 0.1 s, doubled until at most 256 of them cover the run."""
    return 0.1 * 2.0 ** max(math.ceil(math.log2(math.ceil(run_time) / 25.6)), 0)


def appended_file(
    records: Records, path: str, direction: str, spans: np.ndarray, nbytes: np.ndarray, run_time: float
) -> tuple[F.HeatmapRecords, np.ndarray]:
    """One record per rank of one file every burst goes to, and the POSIX heatmap of the bursts.

    ``spans[r, k]`` is rank r's (start, end) of burst k and ``nbytes[r, k]``
    its bytes, spread uniformly over that interval into bins from job start;
    each rank's bins sum to its record's bytes. Returns the heatmap records
    and the bins summed over ranks (what the truth reads).
    """
    ranks = spans.shape[0]
    per_rank = np.floor(nbytes).sum(axis=1)
    traffic = moving(direction, (spans[:, :, 0].min(axis=1), spans[:, :, 1].max(axis=1), per_rank))
    records.add([path] * ranks, np.arange(ranks), **traffic)
    width = heatmap_width(run_time)
    edges = width * np.arange(math.ceil(math.ceil(run_time) / width) + 1)
    starts, ends = spans[:, :, 0, None], spans[:, :, 1, None]
    overlap = np.clip(np.minimum(ends, edges[1:]) - np.maximum(starts, edges[:-1]), 0, None)
    cover = (overlap / (ends - starts) * np.floor(nbytes)[:, :, None]).sum(axis=1)
    bins = np.floor(cover).astype(np.int64)
    bins[np.arange(ranks), np.argmax(cover, axis=1)] += per_rank.astype(np.int64) - bins.sum(axis=1)
    empty = np.zeros_like(bins)
    written, read = (bins, empty) if direction == "write" else (empty, bins)
    heatmap = writer.heatmap_records(
        ["heatmap:POSIX"] * ranks, range(ranks), [width] * ranks, list(written), list(read)
    )
    return heatmap, bins.sum(axis=0)


def appended_checkpoints(
    rng: Rng, config: Config, ranks: int, count: int, period: float, busy: float, size: float
) -> Design:
    """Every checkpoint appended to one file: one POSIX record per rank spans them all.

    Only the HEATMAP module (SPEC 3.5) keeps the bursts: per rank, bytes per
    bin from job start, bins 0.1 s doubled until at most 256 cover the run.
    """
    times = regular_times(rng, period * rng.uniform(0.3, 1.0), period, count)
    ends = times + busy * period
    run_time = ends[-1] + period * rng.uniform(0.3, 0.6)
    spans = np.broadcast_to(np.stack([times, ends], axis=1), (ranks, count, 2))
    records = Records()
    nbytes = np.full((ranks, count), size / ranks)
    heatmap, bins = appended_file(records, "/scratch/run/checkpoints.h5", "write", spans, nbytes, run_time)
    width = heatmap.bin_seconds[0]
    params = dict(ranks=ranks, count=count, period=period, busy=busy, size=size, bin_seconds=width)
    return Design(
        end_of_run(records, run_time),
        ranks,
        records,
        params,
        write=heatmap_series(bins, width, count, config),
        posix_only=False,
        heatmap=heatmap,
    )


def appended_few_bursts(
    rng: Rng, config: Config, direction: str, ranks: int, count: int, period: float, busy: float, size: float
) -> Design:
    """Three to eight checkpoints written to, or training epochs read from, one file.

    The ranks of each burst start and stop a little apart; empty bins lie
    between bursts. With so few periods the FFT is seldom far beyond chance,
    so the heatmap's bursts (SPEC 3.5) carry the period; truth from the bins.
    """
    times = regular_times(rng, period * rng.uniform(0.2, 1.0), period, count, jitter=0.04)
    late = rng.uniform(0, 0.1 * busy * period, (ranks, count))
    length = busy * period * rng.uniform(0.85, 1.0, (ranks, count))
    spans = np.stack([times + late, times + late + length - 0.1 * busy * period], axis=2)
    run_time = float(spans[:, -1, 1].max() + period * rng.uniform(0.2, 0.8))
    records = Records()
    if direction == "read":
        phase(
            records, rng, "write", 0.99 * run_time, 1e6, 0.005 * run_time, 1, "shared", "/scratch/run/log.txt"
        )
    path = "/scratch/run/checkpoints.h5" if direction == "write" else "/scratch/data/train.tfrecord"
    weights = rng.uniform(0.9, 1.1, ranks)
    nbytes = np.outer(weights / weights.sum(), np.full(count, size))
    heatmap, bins = appended_file(records, path, direction, spans, nbytes, run_time)
    claim = heatmap_series(bins, heatmap.bin_seconds[0], count, config)
    read, write = (claim, NOT_PERIODIC) if direction == "read" else (NOT_PERIODIC, claim)
    params = dict(direction=direction, ranks=ranks, count=count, period=period, busy=busy, size=size)
    return Design(
        end_of_run(records, run_time),
        ranks,
        records,
        params,
        read=read,
        write=write,
        posix_only=False,
        heatmap=heatmap,
    )


def appended_design(
    rng: Rng,
    direction: str,
    starts: np.ndarray,
    ends: np.ndarray,
    sizes: np.ndarray,
    run_time: float,
    **extra: float,
) -> Design:
    """Bursts (same for every rank of 2-16) appended to one file, written as not periodic."""
    ranks = int(rng.integers(2, 17))
    spans = np.broadcast_to(np.stack([starts, ends], axis=1), (ranks, len(starts), 2))
    records = Records()
    nbytes = np.outer(np.full(ranks, 1 / ranks), sizes)
    heatmap, _ = appended_file(records, "/scratch/run/stream.h5", direction, spans, nbytes, run_time)
    params = dict(ranks=ranks, bursts=len(starts), bin_seconds=heatmap.bin_seconds[0], **extra)
    return Design(end_of_run(records, run_time), ranks, records, params, posix_only=False, heatmap=heatmap)


def appended_steady_stream(rng: Rng, config: Config, run_time: float, pieces: int) -> Design:
    """Writes appended without a pause, at a rate that changes at random: no empty bin."""
    cuts = np.sort(rng.uniform(0.03, 0.97, pieces - 1)) * run_time
    starts = np.concatenate([[0.02 * run_time], cuts])
    ends = np.concatenate([cuts, [0.98 * run_time]])
    sizes = np.exp(rng.normal(0, 0.5, pieces)) * (ends - starts)  # rate x duration
    sizes *= loguniform(rng, 3e8, 3e10) / sizes.sum()
    return appended_design(rng, "write", starts, ends, sizes, run_time, pieces=pieces)


def appended_two_snapshots(rng: Rng, config: Config, run_time: float) -> Design:
    """An early and a late checkpoint appended to one file: two bursts are no period."""
    starts = np.array([rng.uniform(0.05, 0.25), rng.uniform(0.7, 0.85)]) * run_time
    length = rng.uniform(0.01, 0.1) * run_time
    sizes = np.full(2, loguniform(rng, 3e8, 3e10))
    return appended_design(rng, "write", starts, starts + length, sizes, run_time)


def appended_on_off(rng: Rng, config: Config, run_time: float) -> Design:
    """On/off traffic to one file: exponential on and off times, random rates."""
    on, off = run_time / rng.uniform(20, 120), run_time / rng.uniform(10, 60)
    durations = np.column_stack([rng.exponential(off, 200), rng.exponential(on, 200)]).ravel()
    edges = 0.01 * run_time + np.cumsum(durations)
    starts, ends = edges[0::2], edges[1::2]
    keep = ends < 0.99 * run_time
    sizes = loguniform(rng, 5e7, 5e9) * np.exp(rng.normal(0, 1.0, keep.sum())) * (ends - starts)[keep] / on
    return appended_design(rng, "write", starts[keep], ends[keep], sizes, run_time, on=on, off=off)


def appended_subsecond_bursts(rng: Rng, config: Config, run_time: float) -> Design:
    """Bursts 0.3-0.8 s apart (a whole number of 0.1 s bins) in a 12-25 s run: the cadence
    of requests inside one I/O phase, under SPEC 3.4's ``min_period_seconds``."""
    period = 0.1 * int(rng.integers(3, 9))
    starts = np.arange(0.5, run_time - 1.0, period)
    length = period * rng.uniform(0.2, 0.6)
    sizes = np.full(len(starts), loguniform(rng, 2e7, 3e8))
    return appended_design(rng, "write", starts, starts + length, sizes, run_time, period=period)


# --------------------------------------------------------------------------- the table

SCENARIOS: dict[str, Scenario] = {
    "shared_ckpt_desync": Scenario(checkpoints),
    "fpp_thousands": Scenario(
        checkpoints,
        dict(ranks=Integers(2048, 4097), count=Integers(5, 8), layout="fpp", period=LogUniform(60, 3600)),
    ),
    "many_small_files": Scenario(
        many_small_files,
        dict(
            ranks=Integers(4, 33),
            files=Integers(10, 60),
            count=Integers(6, 16),
            period=LogUniform(40, 900),
            file_bytes=LogUniform(5e5, 4e6),
            busy=Uniform(0.05, 0.4),
        ),
    ),
    "ckpt_size_var": Scenario(checkpoints, dict(size_spread=0.2)),
    "jittered_period": Scenario(checkpoints, dict(jitter=0.1)),
    "two_series_interleaved": Scenario(
        two_series_interleaved,
        dict(ranks=LogUniform(8, 256, whole=True), every=Integers(3, 6), n_big=Integers(5, 9)),
    ),
    "two_phase_series": Scenario(
        two_phase_series,
        dict(
            ranks=LogUniform(4, 512, whole=True),
            n1=Integers(10, 31),
            n2=Integers(6, 13),
            t1=Uniform(3, 20),
            t2=LogUniform(120, 900),
            s1=LogUniform(2e7, 2e8),
            heavier=Uniform(5, 20),
        ),
    ),
    "periodic_input_reads": Scenario(
        periodic_input_reads,
        dict(
            ranks=LogUniform(1, 256, whole=True),
            count=Integers(8, 31),
            period=LogUniform(30, 4 * HOUR),
            busy=Uniform(0.05, 0.9),
        ),
    ),
    "log_plus_ckpt": Scenario(log_plus_ckpt),
    "stalled_checkpoints": Scenario(stalled_checkpoints),
    "restart_ckpt_final": Scenario(restart_ckpt_final, dict(count=Integers(14, 31), layout="shared")),
    "stdio_only": Scenario(
        stdio_only,
        dict(
            count=Integers(6, 21),
            period=LogUniform(1, 600),
            busy=Uniform(0.05, 0.9),
            size=LogUniform(2e7, 5e8),
        ),
    ),
    "dxt_traced": Scenario(
        dxt_traced,
        dict(
            ranks=Integers(2, 17),
            count=Integers(6, 16),
            period=LogUniform(10, 1200),
            busy=Uniform(0.1, 0.7),
            requests=Integers(4, 33),
            size=LogUniform(2e8, 8e9),
            input_bytes=LogUniform(2e8, 5e9),
        ),
    ),
    "legacy_fpp_periodic": Scenario(
        legacy_fpp_periodic, dict(ranks=LogUniform(4, 256, whole=True), layout="fpp", busy=Uniform(0.1, 0.7))
    ),
    "bytes_near_100mb": Scenario(bytes_near_100mb),
    "op_spans_chunks": Scenario(op_spans_chunks, dict(run_time=LogUniform(100, 200000))),
    "reads_after_first_quarter": Scenario(
        reads_after_first_quarter, dict(run_time=LogUniform(600, 100000), count=Integers(20, 61))
    ),
    "poisson_random_bytes": Scenario(poisson, dict(run_time=LogUniform(300, 200000), equal_bytes=False)),
    "poisson_equal_bytes": Scenario(
        poisson, dict(run_time=LogUniform(300, 200000), equal_bytes=True), spec_limit=True
    ),
    "one_off_phases": Scenario(
        one_off_phases,
        dict(
            run_time=LogUniform(60, 100000),
            ranks=LogUniform(1, 2048, whole=True),
            layout=Choice(("shared", "per_rank")),
        ),
    ),
    "metadata_storm_start": Scenario(
        metadata_storm_start,
        dict(
            ranks=Integers(256, 4097),
            files=Integers(1, 4),
            window=Uniform(0.3, 3.0),
            run_time=LogUniform(300, 20000),
        ),
    ),
    "metadata_bursts": Scenario(
        metadata_bursts,
        dict(
            count=Integers(6, 21),
            period=LogUniform(10, 600),
            files=Integers(60, 400),
            window=Uniform(0.05, 2.0),
        ),
    ),
    "long_run_days": Scenario(
        long_run_days, dict(days=Integers(5, 8), ranks=LogUniform(16, 1024, whole=True))
    ),
    "short_run_subsecond": Scenario(
        short_run_subsecond,
        dict(
            period=Uniform(0.1, 0.9),
            busy=Uniform(0.1, 0.5),
            planned_run=Uniform(10, 60),
            ranks=LogUniform(1, 64, whole=True),
            frame_bytes=LogUniform(1e6, 2e7),
        ),
    ),
    "month_run": Scenario(month_run, dict(days=Integers(30, 41), ranks=LogUniform(16, 512, whole=True))),
    "zero_length_ops": Scenario(
        zero_length_ops,
        dict(
            count=Integers(8, 31),
            period=LogUniform(10, 1000),
            ranks=LogUniform(1, 256, whole=True),
            size=LogUniform(1e8, 1e10),
        ),
    ),
    "overlap_many_ranks": Scenario(
        overlap_many_ranks, dict(ranks=Integers(64, 513), count=Integers(6, 20), period=LogUniform(30, 3600))
    ),
    "serialized_rank_writes": Scenario(
        serialized_rank_writes,
        dict(ranks=Integers(4, 13), count=Integers(6, 13), period=LogUniform(300, 7200)),
        spec_limit=True,
    ),
    "ckpt_two_files": Scenario(
        ckpt_two_files,
        dict(
            ranks=LogUniform(8, 512, whole=True),
            count=Integers(6, 21),
            period=LogUniform(200, 7200),
            busy=Uniform(0.05, 0.3),
        ),
        spec_limit=True,
    ),
    "hourly_daily_one_direction": Scenario(
        hourly_daily_one_direction,
        dict(days=Integers(6, 9), ranks=LogUniform(16, 1024, whole=True)),
        spec_limit=True,
    ),
    "metadata_dense": Scenario(metadata_dense, dict(run_time=LogUniform(60, 3000), rate=LogUniform(20, 300))),
    "few_size_varying_ckpts": Scenario(
        checkpoints, dict(jitter=0.1, size_spread=0.2, count=Integers(5, 11))
    ),  # five to ten checkpoints, sizes +-20 %, periods +-10 %
    "high_busy_ckpt": Scenario(
        checkpoints, dict(busy=Uniform(0.8, 0.92), count=Integers(6, 15))
    ),  # the file system busy 80-92 % of each period
    "paused_series": Scenario(
        paused_series,
        dict(
            ranks=LogUniform(4, 512, whole=True),
            period=LogUniform(20, 3600),
            n1=Integers(8, 16),
            n2=Integers(8, 16),
            busy=Uniform(0.05, 0.6),
            size=LogUniform(1e8, 1e10),
        ),
    ),
    "dxt_random_small_requests": Scenario(
        dxt_random_small_requests, dict(ranks=Integers(1, 9), run_time=LogUniform(120, 20000))
    ),
    "periodic_near_100mb": Scenario(
        periodic_near_100mb, dict(count=Integers(6, 15), total=Coin(0.8e8, 1.3e8))
    ),
    "seek_heavy_reader": Scenario(
        seek_heavy_reader, dict(run_time=LogUniform(60, 20000), seeks=LogUniform(100, 50000, whole=True))
    ),
    "dxt_request_cadence": Scenario(
        dxt_request_cadence,
        dict(
            ranks=Integers(1, 9),
            run_time=LogUniform(60, 300),
            cadence=Uniform(0.1, 0.6),
            requests=Integers(40, 150),
            size=LogUniform(2e8, 8e9),
        ),
    ),
    "partial_lost_files": Scenario(
        partial_lost_files, dict(run_time=LogUniform(600, 40000), ranks=Integers(2, 9))
    ),
    "appended_checkpoints": Scenario(
        appended_checkpoints,
        dict(
            ranks=Integers(2, 17),
            count=Integers(10, 25),
            period=LogUniform(40, 6000),
            busy=Uniform(0.1, 0.5),
            size=LogUniform(5e8, 2e10),
        ),
    ),
    "appended_few_bursts": Scenario(
        appended_few_bursts,
        dict(
            direction=Choice(("write", "read")),
            ranks=LogUniform(2, 64, whole=True),
            count=Integers(3, 9),
            period=LogUniform(8, 20000),
            busy=UniformIn(((0.06, 0.18), (0.3, 0.7), (0.74, 0.8))),  # low, neither, high
            size=LogUniform(3e8, 3e10),
        ),
    ),
    "appended_steady_stream": Scenario(
        appended_steady_stream, dict(run_time=LogUniform(300, 50000), pieces=Integers(5, 40))
    ),
    "appended_two_snapshots": Scenario(appended_two_snapshots, dict(run_time=LogUniform(600, 80000))),
    "appended_on_off": Scenario(appended_on_off, dict(run_time=LogUniform(1800, 80000))),
    "appended_subsecond_bursts": Scenario(appended_subsecond_bursts, dict(run_time=Uniform(12, 25))),
    "sample_shards_seek_reader": Scenario(
        sample_shards_seek_reader,
        dict(ranks=LogUniform(8, 64, whole=True), files=Integers(3, 9), run_time=LogUniform(600, 20000)),
    ),
    "open_storm_seek_aggregators": Scenario(
        open_storm_seek_aggregators,
        dict(
            ranks=Integers(400, 3000),
            aggregators=Integers(4, 17),
            count=Integers(6, 16),
            period=LogUniform(60, 3000),
        ),
    ),
    "two_series_unrelated_periods": Scenario(
        two_series_unrelated_periods,
        dict(ranks=LogUniform(4, 256, whole=True), small_period=Uniform(3.5, 12)),
    ),
}

# Scenarios whose truth states what an analyst expects where SPEC 3.4's own
# rule is known to disagree (docs/method.md, "Where the rules fall short"):
# they measure the method, not the implementation, so CI leaves them out.
SPEC_LIMIT_PROBES = tuple(name for name, row in SCENARIOS.items() if row.spec_limit)
