"""Applications' I/O described as data, and turned into Darshan file records.

A :class:`Scenario` lists what an application does — data phases, periodic
bursts, metadata loads, noise files — with numbers that may be
:class:`Range` s, drawn per seed so accuracy is not measured on one shape.
:func:`build` makes the concrete records (a :class:`~mosaic.synth.records.FileTable`)
and the *design*: one row per logical operation (a phase, a burst, the
noise), which the periodicity truth reasons about. The table of scenarios
covering every category of SPEC 3.4-3.7 lives in :mod:`mosaic.synth.catalog`.

Darshan aggregates a file's traffic between its open and close, so a
periodic checkpoint is one file per burst (shared, or one per rank), as in
real codes. A component with ``append`` writes (or reads) every burst to one
file instead: one record per rank spans them all, and only the HEATMAP
module (SPEC 3.5) keeps the bursts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from mosaic.darshan import formats as F
from mosaic.synth.records import FileTable

READ, WRITE = "read", "write"
RANK_STAGGER = 0.02  # ranks of one phase start / end within this share of its duration
OPEN_DURATION = 0.002  # seconds an open or close call takes
NOISE_WINDOW = (0.1, 0.3)  # seconds: library loads and input read at start-up
BURST_REQUESTS = 16  # read / write calls per record of one burst (a counter only)
IRREGULAR_SPAN = (0.02, 0.95)  # irregular bursts start within these shares of the run
LIBRARY_BYTES, DECK_BYTES = (2e5, 3e6), (1_000, 50_000)  # start-up reads of the noise files
STDOUT_BYTES = (1_000, 100_000)


@dataclass(frozen=True)
class Range:
    """A parameter drawn per seed: log-uniform (``log``) or uniform, optionally whole."""

    low: float
    high: float
    log: bool = True
    integer: bool = False

    def draw(self, rng: np.random.Generator) -> float:
        if self.log and self.low > 0:
            value = float(np.exp(rng.uniform(np.log(self.low), np.log(self.high))))
        else:
            value = float(rng.uniform(self.low, self.high))
        return float(round(value)) if self.integer else value


@dataclass(frozen=True)
class Phase:
    """Data I/O in one direction over ``[start, start + duration]`` (shares of the run)."""

    direction: str
    start: float | Range
    duration: float | Range
    volume: float | Range  # bytes, all ranks together
    shared: bool | Range = False  # one rank -1 record (else one file per rank); a Range draws 0 or 1
    requests: float | Range = 64  # read / write calls per record (a counter only)
    writers: float | Range = 0  # shared file: one record per writing rank (0: one rank -1 record)
    lost: bool = False  # records dropped from a partial POSIX module: only MPI-IO keeps them
    seeks: bool = False  # one seek before every request (SPEC 3.7: no metadata request by default)
    append: bool = False  # one file, one record per rank, at one steady rate: the HEATMAP has no gap
    # Shared file (one rank -1 record): rank 0 opens (and closes) it this many seconds before
    # the ranks open it together, so the POSIX open and close windows start that much earlier.
    early_open: float | Range = 0.0
    # Shared file: the ranks' opens are collective, an MPI-IO record of rank -1 holds them in
    # their own open and close windows (SPEC 3.7); each window falls within one second.
    collective: bool = False


@dataclass(frozen=True)
class Irregular:
    """``count`` bursts at random times, each of random size and length: not a period.

    Sizes and lengths (seconds) are drawn per burst, log-uniformly between
    the bounds (plain tuples, so :func:`resolve` leaves them for :func:`build`);
    start times are uniform over the run. One shared file per burst.
    """

    direction: str
    count: float | Range
    burst_bytes: tuple[float, float]
    busy: tuple[float, float]
    append: bool = False  # every burst appends to one file: only the HEATMAP shows the bursts
    split: bool = False  # append: each burst in two halves one empty heatmap bin apart


@dataclass(frozen=True)
class Periodic:
    """``count`` bursts, one new file per burst, every ``period`` seconds (± jitter).

    ``count`` 0: a background series, repeated from its offset until the run
    ends (the run's end is set by the other components or the scenario).
    """

    direction: str
    period: float | Range  # seconds
    busy: float | Range  # burst duration / period
    burst_bytes: float | Range  # bytes per burst, all ranks together
    count: float | Range = 8
    jitter: float = 0.0  # each gap is period x (1 + U(-jitter, jitter))
    offset: float | Range = 0.5  # first burst after this many periods
    shared: bool | Range = True  # a Range draws 0 (file per rank) or 1
    writers: float | Range = 0  # shared file: one record per writing rank (0: one rank -1 record)
    append: bool = False  # every burst appends to one file: only the HEATMAP shows the bursts
    requests: float | Range = BURST_REQUESTS  # read / write calls per record of one burst
    seeks: bool = False  # one seek before every request (SPEC 3.7: no metadata request by default)
    # append: the first burst moves this share of its bytes, then one empty heatmap bin, then
    # the rest (a DLIO epoch split in two bursts, SPEC 3.5); 0: no burst is split
    split: float | Range = 0.0


@dataclass(frozen=True)
class MetadataLoad:
    """``repeat`` bursts of ``rate`` requests/s (opens + closes), ``duration`` s each.

    ``start`` is a share of the run; bursts follow each other every
    ``spacing`` seconds; ``duration`` 0 means the whole rest of the run.
    """

    start: float | Range
    duration: float | Range
    rate: float | Range
    repeat: float | Range = 1
    spacing: float | Range = 10.0


@dataclass(frozen=True)
class Scenario:
    name: str
    ranks: float | Range = 16
    run_time: float | Range | None = 3600.0  # seconds; None: just after the last burst
    phases: tuple[Phase, ...] = ()
    periodic: tuple[Periodic, ...] = ()
    irregular: tuple[Irregular, ...] = ()
    metadata: tuple[MetadataLoad, ...] = ()
    volume: float | Range = 1.0  # multiplies every phase's volume (phases sharing one draw)
    noise: bool = True  # <STDOUT>, library loads, a STDIO input file
    runs: float | Range = 1  # runs of one (user, application); exactly one heaviest
    invalid: str | None = None  # SPEC 3.1 eviction reason this log must get
    partial: bool = False
    dxt: float | Range = 0  # 3.x logs: DXT_POSIX requests per POSIX record and direction (0: none)
    dxt_busy: float = 1.0  # share of each request's slot it lasts (1: back to back)


Spec = TypeVar("Spec")


def resolve(spec: Spec, rng: np.random.Generator) -> Spec:
    """A copy of a scenario (or part) with every Range drawn (a Range becomes its float)."""
    if isinstance(spec, Range):
        return spec.draw(rng)  # type: ignore[return-value]  # the one place a Range turns into a float
    if isinstance(spec, tuple):
        return tuple(resolve(item, rng) for item in spec)  # type: ignore[return-value]  # same shape
    if dataclasses.is_dataclass(spec) and not isinstance(spec, type):
        return dataclasses.replace(
            spec, **{f.name: resolve(getattr(spec, f.name), rng) for f in dataclasses.fields(spec)}
        )
    return spec


def drawn(value: float | Range) -> float:
    """A parameter of a resolved scenario: :func:`build` and the truth need every Range drawn."""
    if isinstance(value, Range):
        raise TypeError(f"{value} was not drawn: resolve() the scenario first")
    return value


def params(scenario: Scenario) -> dict[str, Any]:
    """JSON-friendly parameters of a resolved scenario (for the truth file)."""
    return dataclasses.asdict(scenario)


@dataclass(frozen=True)
class DesignRow:
    """One logical operation (a phase, a burst, the noise); the defaults are a one-off's."""

    direction: str
    start: float
    end: float
    bytes: float
    component: int
    period: float = 0.0
    jitter: float = 0.0
    count: int = 1  # bursts of the component
    heatmap_only: bool = False  # appended to one file: only the HEATMAP shows it


DESIGN_DTYPE = np.dtype(
    [
        (f.name, {"str": "U5", "float": "f8", "int": "i8", "bool": "?"}[str(f.type)])
        for f in dataclasses.fields(DesignRow)
    ]
)
NOISE_COMPONENT = -1


@dataclass
class Built:
    """A scenario's records, its job facts and its design rows."""

    table: FileTable
    run_time: float
    nprocs: int
    design: np.ndarray  # DESIGN_DTYPE
    heatmap: F.HeatmapRecords | None = None  # the appended files' bursts, per rank


def burst_times(p: Periodic, rng: np.random.Generator, until: float | None = None) -> np.ndarray:
    """Start times of a periodic component's bursts (seconds).

    ``until``: a background series (``count`` 0) repeats while a burst ends by then.
    """
    count = (
        int(drawn(p.count)) if until is None else int(np.ceil(until / (drawn(p.period) * (1 - p.jitter)))) + 1
    )
    gaps = drawn(p.period) * (1.0 + rng.uniform(-p.jitter, p.jitter, max(count - 1, 0)))
    times = drawn(p.offset) * drawn(p.period) + np.concatenate([[0.0], np.cumsum(gaps)])
    return times if until is None else times[times + drawn(p.busy) * drawn(p.period) <= until]


def build(s: Scenario, rng: np.random.Generator, root: str) -> Built:
    """Records and design of a resolved scenario.

    ``root`` is the job's scratch folder; file names derive from it.
    """
    ranks = max(int(drawn(s.ranks)), 1)
    first_starts = [burst_times(p, rng) if drawn(p.count) else None for p in s.periodic]
    if s.run_time is None:
        last_ends = [
            t[-1] + drawn(p.period) * max(drawn(p.busy), 0.5)
            for t, p in zip(first_starts, s.periodic)
            if t is not None
        ]
        run_time = float(np.ceil(max(last_ends)))
    else:
        run_time = float(round(drawn(s.run_time)))
    starts = [burst_times(p, rng, run_time) if t is None else t for t, p in zip(first_starts, s.periodic)]
    table = FileTable()
    design: list[DesignRow] = []
    appended = Appended(ranks, run_time)
    for i, ph in enumerate(s.phases):
        t0, t1 = drawn(ph.start) * run_time, min(drawn(ph.start) + drawn(ph.duration), 1.0) * run_time
        volume = drawn(ph.volume) * drawn(s.volume)
        if ph.append:
            appended.add(table, f"{root}/{ph.direction}_phase{i}.log", ph.direction, [t0], [t1], [volume])
            design.append(DesignRow(ph.direction, t0, t1, volume, i, heatmap_only=True))
            continue
        row = DesignRow(ph.direction, t0, t1, volume, i)
        _data_files(
            table,
            rng,
            f"{root}/{ph.direction}_phase{i}",
            row,
            ranks=ranks,
            run_time=run_time,
            shared=drawn(ph.shared),
            requests=drawn(ph.requests),
            writers=drawn(ph.writers),
            module=F.MPIIO if ph.lost else F.POSIX,
            seeks=ph.seeks,
            early_open=drawn(ph.early_open),
            collective=ph.collective,
        )
        design.append(row)
    for j, (p, times) in enumerate(zip(s.periodic, starts)):
        component = len(s.phases) + j
        ends = np.minimum(times + drawn(p.busy) * drawn(p.period), run_time)
        if p.append:
            sizes = np.full(len(times), drawn(p.burst_bytes))
            split = np.zeros(len(times))
            split[0] = drawn(p.split)
            ends = appended.add(
                table, f"{root}/{p.direction}_series{j}.log", p.direction, times, ends, sizes, split
            )
            design += _series_rows(p, component, times, ends, heatmap_only=True)
            continue
        for k, row in enumerate(_series_rows(p, component, times, ends)):
            _data_files(
                table,
                rng,
                f"{root}/{p.direction}_series{j}/step{k:05d}",
                row,
                ranks=ranks,
                run_time=run_time,
                shared=drawn(p.shared),
                requests=drawn(p.requests),
                writers=drawn(p.writers),
                seeks=p.seeks,
            )
            design.append(row)
    for j, irr in enumerate(s.irregular):
        component = len(s.phases) + len(s.periodic) + j
        count = int(drawn(irr.count))
        times = np.sort(rng.uniform(*IRREGULAR_SPAN, count)) * run_time
        ends, volumes = np.zeros(count), np.zeros(count)
        for k, t0 in enumerate(times):
            ends[k] = min(t0 + Range(*irr.busy).draw(rng), run_time)
            volumes[k] = Range(*irr.burst_bytes).draw(rng)
            if not irr.append:
                row = DesignRow(irr.direction, t0, ends[k], volumes[k], component, count=count)
                _data_files(
                    table, rng, f"{root}/{irr.direction}_irregular{j}/burst{k:05d}", row, ranks, run_time
                )
        if irr.append:  # a split burst ends one bin later: the rows take the ends appended gives
            halves = np.full(count, 0.5 if irr.split else 0.0)
            ends = appended.add(
                table, f"{root}/{irr.direction}_irregular{j}.log", irr.direction, times, ends, volumes, halves
            )
        design += [
            DesignRow(irr.direction, t0, t1, v, component, count=count, heatmap_only=irr.append)
            for t0, t1, v in zip(times, ends, volumes)
        ]
    for b, load in enumerate(s.metadata):
        _metadata_files(table, f"{root}/meta{b}", load, ranks, run_time)
    if s.noise:
        lib_bytes = _noise_files(table, rng, root)
        design.append(DesignRow(READ, *NOISE_WINDOW, lib_bytes, NOISE_COMPONENT))
    return Built(
        table,
        run_time,
        ranks,
        np.array([dataclasses.astuple(row) for row in design], DESIGN_DTYPE),
        appended.heatmap(),
    )


def _series_rows(
    p: Periodic, component: int, times: np.ndarray, ends: np.ndarray, heatmap_only: bool = False
) -> list[DesignRow]:
    """The design rows of a periodic component's bursts."""
    period, size = drawn(p.period), drawn(p.burst_bytes)
    return [
        DesignRow(p.direction, t0, t1, size, component, period, p.jitter, len(times), heatmap_only)
        for t0, t1 in zip(times, ends)
    ]


HEATMAP_BIN, HEATMAP_MAX_BINS = 0.1, 512  # Darshan's first bin width, doubled until it fits


def heatmap_bin_seconds(run_time: float) -> float:
    """0.1 s times the smallest power of two giving at most HEATMAP_MAX_BINS bins."""
    doublings = max(int(np.ceil(np.log2(run_time / (HEATMAP_BIN * HEATMAP_MAX_BINS)))), 0)
    return HEATMAP_BIN * 2.0**doublings


class Appended:
    """Files every rank appends to (one record per rank spans all their bursts), and the
    POSIX heatmap bins they fill: the only place Darshan keeps those bursts."""

    def __init__(self, ranks: int, run_time: float):
        self.ranks, self.run_time = ranks, run_time
        self.width = heatmap_bin_seconds(run_time)
        self.edges = np.arange(int(np.ceil(run_time / self.width)) + 1) * self.width
        self.bins = {
            direction: np.zeros((ranks, len(self.edges) - 1), np.int64) for direction in (READ, WRITE)
        }

    def add(
        self,
        table: FileTable,
        path: str,
        direction: str,
        starts: ArrayLike,
        ends: ArrayLike,
        nbytes: ArrayLike,
        split: ArrayLike = 0.0,
    ) -> np.ndarray:
        """One record per rank of ``path`` moving ``nbytes`` over each [start, end]; returns
        the bursts' ends (a split burst ends one bin later).

        Each burst's bytes spread uniformly over its interval into bins from job
        start; per rank the bins sum to its record's bytes. A burst with a
        ``split`` share s > 0 moves s of its bytes up to a bin edge, leaves the
        next bin empty and moves the rest over as long again as it had left.
        """
        begin, finish = np.asarray(starts, float), np.asarray(ends, float)
        volumes = np.floor(np.asarray(nbytes, float))
        shares = np.broadcast_to(np.asarray(split, float), begin.shape)
        if shares.any():
            begin, finish, volumes, whole_ends = self._split(begin, finish, volumes, shares)
        else:
            whole_ends = finish
        total = int(volumes.sum())
        per_rank = np.full(self.ranks, total // self.ranks, np.int64)
        per_rank[0] += total - per_rank.sum()
        prefix, moved = ("read", "bytes_read") if direction == READ else ("write", "bytes_written")
        first, last = float(begin.min()), float(finish.max())
        columns: dict[str, ArrayLike] = {
            f"{prefix}s": BURST_REQUESTS * len(begin),
            moved: per_rank,
            f"{prefix}_start": first,
            f"{prefix}_end": last,
            "open_start": max(first - OPEN_DURATION, 0.0),
            "open_end": first,
            "close_start": last,
            "close_end": min(last + OPEN_DURATION, self.run_time),
        }
        table.add(np.full(self.ranks, table.name(path)), np.arange(self.ranks), F.POSIX, opens=1, **columns)
        lo, hi = self.edges[:-1], self.edges[1:]
        overlap = np.clip(np.minimum(finish[:, None], hi) - np.maximum(begin[:, None], lo), 0, None)
        share = (overlap / (finish - begin)[:, None] * volumes[:, None]).sum(axis=0) / total
        bins = np.floor(share[None, :] * per_rank[:, None]).astype(np.int64)
        bins[:, np.argmax(share)] += per_rank - bins.sum(axis=1)
        self.bins[direction] += bins
        return whole_ends

    def _split(
        self, begin: np.ndarray, finish: np.ndarray, volumes: np.ndarray, shares: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Bursts with a split share cut in two parts one empty bin apart (see :meth:`add`);
        returns the parts' starts, ends and bytes, and each whole burst's end."""
        cut = shares > 0
        k = np.ceil((begin + shares * (finish - begin)) / self.width)
        k = np.where(k * self.width <= begin, k + 1, k)  # the first part covers some bin
        edge, resume = k * self.width, (k + 1) * self.width  # bin k (from edge to resume) stays empty
        second_end = np.minimum(resume + (finish - edge).clip(min=self.width), self.run_time)
        first = np.floor(volumes * shares)
        parts_begin = np.concatenate([begin, resume[cut]])
        parts_end = np.concatenate([np.where(cut, edge, finish), second_end[cut]])
        parts_bytes = np.concatenate([np.where(cut, first, volumes), (volumes - first)[cut]])
        return parts_begin, parts_end, parts_bytes, np.where(cut, second_end, finish)

    def heatmap(self) -> F.HeatmapRecords | None:
        """The POSIX heatmap records (one per rank), or None when nothing was appended."""
        from mosaic.darshan.writer import heatmap_records

        if not any(bins.any() for bins in self.bins.values()):
            return None
        return heatmap_records(
            ["heatmap:POSIX"] * self.ranks,
            np.arange(self.ranks),
            [self.width] * self.ranks,
            list(self.bins[WRITE]),
            list(self.bins[READ]),
        )


def _data_files(
    table: FileTable,
    rng: np.random.Generator,
    stem: str,
    op: DesignRow,
    ranks: int,
    run_time: float,
    *,
    shared: float = True,  # non-zero: one shared file
    requests: float = BURST_REQUESTS,
    writers: float = 0,
    module: int = F.POSIX,
    seeks: bool = False,
    early_open: float = 0.0,
    collective: bool = False,
) -> None:
    """Records of the phase or burst ``op``, staggered a little inside its [start, end].

    A shared file is one rank -1 record, or (``writers`` > 0) one record per
    writing rank, as Darshan keeps a shared file that is not reduced at
    exit (aggregators spread over the ranks); else one file per rank.
    ``seeks``: a seek before every request (as many seeks as requests).
    ``early_open`` and ``collective`` (a shared file's rank -1 record):
    :func:`_collective_file`.
    """
    direction, t0, t1, volume = op.direction, op.start, op.end, op.bytes
    if early_open or collective:
        _collective_file(table, f"{stem}.h5", direction, t0, t1, volume, ranks, early_open, collective)
        return
    per_rank = shared and writers > 0
    n = (min(int(writers), ranks) if per_rank else 1) if shared else ranks
    if shared:
        names = np.full(n, table.name(f"{stem}.h5"))
    else:
        names = np.array([table.name(f"{stem}/rank{r:05d}.dat") for r in range(ranks)])
    span = t1 - t0
    staggered = per_rank or not shared
    starts = t0 + (rng.uniform(0, RANK_STAGGER, n) * span if staggered else 0.0)
    ends = t1 - (rng.uniform(0, RANK_STAGGER, n) * span if staggered else 0.0)
    per_record = np.full(n, int(volume) // n, np.int64)
    per_record[0] += int(volume) - per_record.sum()
    open_start = np.maximum(starts - OPEN_DURATION, 0.0)
    prefix = "read" if direction == READ else "write"
    opens = ranks if shared and not per_rank else 1
    columns = {
        "opens": opens,
        "reads" if direction == READ else "writes": int(requests) * opens,
        "seeks": int(requests) * opens if seeks else 0,
        f"bytes_{'read' if direction == READ else 'written'}": per_record,
        f"{prefix}_start": starts,
        f"{prefix}_end": ends,
        "open_start": open_start,
        "open_end": np.minimum(open_start + OPEN_DURATION / 2, starts),
        "close_start": ends,
        "close_end": np.minimum(ends + OPEN_DURATION, run_time),
    }
    writer_ranks = np.linspace(0, ranks - 1, n).astype(np.int64) if per_rank else -1
    table.add(names, writer_ranks if shared else np.arange(ranks), module, **columns)


def _collective_file(
    table: FileTable,
    path: str,
    direction: str,
    t0: float,
    t1: float,
    volume: float,
    ranks: int,
    early_open: float,
    collective: bool,
) -> None:
    """A shared file every rank opens at once, rank 0 also ``early_open`` seconds before.

    The POSIX record (rank -1) holds ranks + 1 opens over [first open, the
    ranks' open] and as many closes over [rank 0's early close, the ranks'
    close]; with ``collective``, an MPI-IO record (rank -1) holds the ranks'
    collective opens in their own windows (SPEC 3.7 places the POSIX opens
    they cause there). The ranks open a quarter into a second and close half
    into one, so each of their windows falls within one second whatever the
    MPI-IO format keeps of it (one timestamp per window before MPI-IO v3).
    """
    opened, closed = float(np.floor(t0)) + 0.25, float(np.floor(t1)) + 0.5
    prefix, moved = ("read", "bytes_read") if direction == READ else ("write", "bytes_written")
    data: dict[str, ArrayLike] = {
        moved: int(volume),
        f"{prefix}s": BURST_REQUESTS * ranks,
        f"{prefix}_start": opened,
        f"{prefix}_end": closed,
    }
    first = max(opened - early_open, 0.0)
    name = np.array([table.name(path)])
    table.add(
        name,
        -1,
        F.POSIX,
        opens=ranks + (1 if early_open else 0),
        open_start=first,
        open_end=opened + OPEN_DURATION / 2,
        close_start=first + OPEN_DURATION if early_open else closed,
        close_end=closed + OPEN_DURATION,
        **data,
    )
    if collective:
        table.add(
            name,
            -1,
            F.MPIIO,
            opens=ranks,
            open_start=opened,
            open_end=opened + OPEN_DURATION / 2,
            close_start=closed,
            close_end=closed + OPEN_DURATION,
            **data,
        )


def _metadata_files(table: FileTable, stem: str, load: MetadataLoad, ranks: int, run_time: float) -> None:
    """Records whose opens and closes make the requested load; no data moved."""
    first = drawn(load.start) * run_time
    duration = drawn(load.duration) if drawn(load.duration) > 0 else run_time - first
    for b in range(int(drawn(load.repeat))):
        # A burst shorter than a second starts a quarter into one, so it fills one 1-s bin.
        t0 = float(np.floor(first + b * drawn(load.spacing))) + (0.25 if duration < 1 else 0.0)
        t1 = min(t0 + duration, run_time)
        opens = int(round(drawn(load.rate) * (t1 - t0) / 2))  # each open brings its close
        if opens < 1 or t1 <= t0:
            continue
        n = min(opens, ranks)
        per = np.full(n, opens // n, np.int64)
        per[: opens - per.sum()] += 1
        names = np.array([table.name(f"{stem}/burst{b:04d}/f{r:05d}.txt") for r in range(n)])
        # Closes trail their opens (a close start of exactly 0 would read as "never recorded").
        table.add(
            names,
            np.arange(n) if n > 1 else 0,
            opens=per,
            open_start=t0,
            open_end=t1,
            close_start=t0 + OPEN_DURATION,
            close_end=t1,
        )


LIBRARIES = (
    "/usr/lib64/libhdf5.so.100",
    "/sw/xe/netcdf/4.6.1/lib/libnetcdf.so.13",
    "/usr/lib64/libgfortran.so.3",
)


def _noise_files(table: FileTable, rng: np.random.Generator, root: str) -> float:
    """``<STDOUT>`` (filtered downstream), library loads, an input deck; returns bytes read."""
    t0, t1 = NOISE_WINDOW
    stdout = table.name("<STDOUT>")
    table.add(
        np.array([stdout]),
        0,
        module=F.STDIO,
        opens=1,
        writes=200,
        bytes_written=int(rng.integers(*STDOUT_BYTES)),
        open_start=0.0,
        write_start=t1,
        write_end=t1,
    )  # never closed: close times 0
    libs = np.array([table.name(p) for p in LIBRARIES])
    lib_bytes = rng.uniform(*LIBRARY_BYTES, len(libs)).astype(np.int64)
    table.add(
        libs,
        0,
        opens=1,
        reads=8,
        bytes_read=lib_bytes,
        open_start=t0,
        open_end=t0 + OPEN_DURATION / 2,
        read_start=t0,
        read_end=t1,
        close_start=t1,
        close_end=t1 + OPEN_DURATION,
    )
    deck = np.array([table.name(f"{root}/input.deck")])
    deck_bytes = int(rng.integers(*DECK_BYTES))
    table.add(
        deck,
        0,
        module=F.STDIO,
        opens=1,
        reads=4,
        bytes_read=deck_bytes,
        open_start=t0,
        open_end=t0 + OPEN_DURATION / 2,
        read_start=t0,
        read_end=t1,
        close_start=t1,
        close_end=t1 + OPEN_DURATION,
    )
    return float(lib_bytes.sum() + deck_bytes)
