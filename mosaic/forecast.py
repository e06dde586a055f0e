"""The forecast at submission (docs/method.md 3.13): if this job starts now, what will it meet on
the shared file systems, and whom will it slow?

Pure functions over numpy arrays and plain dicts: the contract tables (signatures,
running_jobs, app_contention, run_load) are read by :mod:`mosaic.forecast_store`, the center's
timeline is passed in as arrays.

- **The horizon** is the candidate's expected run time (its application's median run time,
  capped by the time limit asked for), cut into ``forecast_bins`` bins from ``now``.
- **The load ahead** per shared file system, bin by bin, in bytes/s (read, write) and
  requests/s (metadata): each running job's signature (the median read and write series over
  normalized run time) placed at its start and stretched to its expected length (its
  application's median run time, capped by its time limit; the rates are kept, the time axis
  scaled), split over the file systems its application's runs used; plus a background.
- **The background** is what the signatures do not cover (jobs without a signature, jobs that
  start during the horizon, load nobody logged): the hour-of-week mean of the center's load on
  that file system, minus what the running signatures put in the same bin, floored at 0. So the
  total expected is the larger of the usual load of that hour and what the running jobs will
  do; a file system without a timeline has no background, and the answer says so.
- **The candidate's risk:** its I/O phases (its signature's bursts, placed from ``now``), the
  others' load during them (time-averaged over the phases, as section 3.10's concurrent load is),
  its expected slowdown ``1 + slope * load`` (its application's sensitivity), what it adds to
  each running sensitive job (``slope_j *`` the candidate's rate averaged over that job's I/O
  phases in the horizon), the running jobs carrying a share of the load during its phases, and
  a class by ``forecast_medium_slowdown`` / ``forecast_high_slowdown``.

A signature point ``i`` of ``k`` stands for the fraction ``[i/k, (i+1)/k)`` of the run (its mean
rate there): the series are integrated exactly as step functions, so a bin's bytes do not
depend on where its edges fall.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from mosaic.config import DEFAULT, Config

DIRECTIONS = ("read", "write")
UNKNOWN_FS = "*"  # a group whose file systems are not known (no run_load rows)
WEEK_SECONDS = 7 * 86400
HOUR_SECONDS = 3600
# 1970-01-05 00:00 UTC was a Monday: slot 0 of the hour of week is Monday 00:00-01:00 UTC.
MONDAY_EPOCH = 4 * 86400
SENSITIVE, INSENSITIVE, NOT_EXPOSED, NOT_ENOUGH = "sensitive", "insensitive", "not exposed", "not enough runs"
RiskClass = Literal["low", "medium", "high"]
COVER_POINTS = 1024  # the phases of a signature as a step function of this many steps of its run


@dataclass(frozen=True)
class Settings:
    """The fields of :class:`~mosaic.config.Config` the forecast reads."""

    bins: int = DEFAULT.forecast_bins
    min_runs: int = DEFAULT.forecast_min_runs
    phase_min_share: float = DEFAULT.forecast_phase_min_share
    medium_slowdown: float = DEFAULT.forecast_medium_slowdown
    high_slowdown: float = DEFAULT.forecast_high_slowdown
    conflict_min_share: float = DEFAULT.forecast_conflict_min_share
    max_conflicts: int = DEFAULT.forecast_max_conflicts
    default_horizon_seconds: float = DEFAULT.forecast_default_horizon_seconds
    assume_sensitive: bool = DEFAULT.forecast_assume_sensitive
    # an UNLIMITED job whose end never came counts this long, as in the registry
    running_unlimited_max: float = DEFAULT.running_unlimited_max_seconds

    @classmethod
    def of(cls, config: Config) -> Settings:
        return cls(
            config.forecast_bins,
            config.forecast_min_runs,
            config.forecast_phase_min_share,
            config.forecast_medium_slowdown,
            config.forecast_high_slowdown,
            config.forecast_conflict_min_share,
            config.forecast_max_conflicts,
            config.forecast_default_horizon_seconds,
            config.forecast_assume_sensitive,
            config.running_unlimited_max_seconds,
        )


# --------------------------------------------------------------------------- signatures


@dataclass(frozen=True)
class Signature:
    """A signature body (docs/method.md 3.12), parsed: median rates (bytes/s) at ``points``
    steps of normalized run time, the median run time, and the I/O phases as [start, end)
    fractions of the run."""

    runs: int
    run_time: float  # p50, seconds
    read: np.ndarray  # (k,) bytes/s
    write: np.ndarray
    phases: np.ndarray  # (m, 2) fractions of the run, sorted, non-overlapping
    phase_directions: tuple[str, ...]  # "read", "write" or "read+write", one per phase
    resolution: float | None = None

    @property
    def points(self) -> int:
        return len(self.read)

    @functools.cached_property
    def rate_cums(self) -> tuple[np.ndarray, np.ndarray]:
        """The read and write series' integrals over normalized time at their k + 1 knots."""
        return (
            np.concatenate([[0.0], np.cumsum(self.read) / self.points]),
            np.concatenate([[0.0], np.cumsum(self.write) / self.points]),
        )

    @functools.cached_property
    def cover_cum(self) -> np.ndarray:
        """The time covered by the phases from 0 to each of COVER_POINTS + 1 evenly spaced
        knots of normalized run time (exact at the knots; a phase edge inside a step is off
        by 1/COVER_POINTS of the run at most)."""
        knots = np.linspace(0.0, 1.0, COVER_POINTS + 1)
        if not len(self.phases):
            return np.zeros(COVER_POINTS + 1)
        a, b = self.phases[:, 0][None, :], self.phases[:, 1][None, :]
        covered: np.ndarray = np.clip(knots[:, None] - a, 0.0, b - a).sum(axis=1)
        return covered


def parse_signature(
    body: object, phase_min_share: float = DEFAULT.forecast_phase_min_share
) -> Signature | str:
    """The :class:`Signature` of a signature body (docs/method.md 3.12), or why it cannot be
    used (a sentence): a malformed body is a reason, never an exception."""
    if not isinstance(body, Mapping):
        return "the signature is not a JSON object"
    try:
        normalized = body["normalized"]
        read = np.asarray(normalized["read"]["p50"], dtype=np.float64)
        write = np.asarray(normalized["write"]["p50"], dtype=np.float64)
        run_time = float(body["run_time"]["p50"])
        runs = int(body.get("runs") or 0)
        resolution = body.get("resolution")
        bursts = body.get("bursts") or []
    except (KeyError, TypeError, ValueError) as error:
        return f"the signature lacks a field or has a wrong type ({error!s})"
    if read.ndim != 1 or read.shape != write.shape or len(read) == 0:
        return "the signature's read and write series are not two series of the same length"
    if not (np.isfinite(read).all() and np.isfinite(write).all()) or (read < 0).any() or (write < 0).any():
        return "the signature's series hold a negative or non-finite rate"
    if not (math.isfinite(run_time) and run_time > 0):
        return f"the signature's median run time is {run_time!r}, not a positive number of seconds"
    phases, directions = _phases_of(bursts, read, write, phase_min_share)
    return Signature(
        runs,
        run_time,
        read,
        write,
        phases,
        directions,
        float(resolution) if isinstance(resolution, int | float) else None,
    )


def _phases_of(
    bursts: object, read: np.ndarray, write: np.ndarray, min_share: float
) -> tuple[np.ndarray, tuple[str, ...]]:
    """The signature's bursts as sorted [start, end) fractions; without usable bursts, the runs
    of points whose median rate is at least ``min_share`` of the peak."""
    rows: list[tuple[float, float, str]] = []
    if isinstance(bursts, list):
        for burst in bursts:
            try:
                start, duration = float(burst["start"]), float(burst["duration"])
                direction = str(burst.get("direction", "read+write"))
            except (KeyError, TypeError, ValueError):
                continue
            if math.isfinite(start) and math.isfinite(duration) and duration > 0:
                rows.append((min(max(start, 0.0), 1.0), min(max(start + duration, 0.0), 1.0), direction))
    rows = sorted(row for row in rows if row[1] > row[0])
    merged: list[tuple[float, float, str]] = []
    for start, end, direction in rows:  # overlapping bursts (a read and a write at once): one phase
        if merged and start < merged[-1][1]:
            last = merged[-1]
            kind = last[2] if last[2] == direction else "read+write"
            merged[-1] = (last[0], max(last[1], end), kind)
        else:
            merged.append((start, end, direction))
    if merged:
        return np.array([row[:2] for row in merged], dtype=np.float64), tuple(row[2] for row in merged)
    total = read + write
    peak = float(total.max())
    if peak <= 0:
        return np.zeros((0, 2)), ()
    busy = np.concatenate([[False], total >= min_share * peak, [False]])
    edges = np.flatnonzero(np.diff(busy.astype(np.int8)))
    k = len(total)
    spans = edges.reshape(-1, 2) / k
    kinds = tuple(
        _direction(float(read[a:b].sum()), float(write[a:b].sum())) for a, b in edges.reshape(-1, 2)
    )
    return spans.astype(np.float64), kinds


def _direction(read_bytes: float, write_bytes: float) -> str:
    if read_bytes > 0 and write_bytes > 0:
        return "read+write"
    return "read" if read_bytes > 0 else "write"


def expected_length(median_run_time: float, time_limit: float | None) -> float:
    """The expected run time: the median, capped by the time limit (None or NaN: unlimited)."""
    if time_limit is None or not math.isfinite(time_limit) or time_limit <= 0:
        return median_run_time
    return min(median_run_time, time_limit)


# --------------------------------------------------------------------------- placing signatures


@dataclass(frozen=True)
class Placed:
    """Jobs whose signatures are placed on a grid: per job and bin, the bytes/s read and written
    (bin means) and the share of the bin covered by the job's I/O phases."""

    read: np.ndarray  # (jobs, bins) bytes/s
    write: np.ndarray
    coverage: np.ndarray  # (jobs, bins) in [0, 1]


def place(
    signatures: Sequence[Signature],
    which: np.ndarray,
    start: np.ndarray,
    length: np.ndarray,
    edges: np.ndarray,
    covered: np.ndarray | None = None,
) -> Placed:
    """Each job ``j`` runs ``signatures[which[j]]`` from ``start[j]`` for ``length[j]`` seconds;
    ``edges`` (bins + 1, increasing) are the grid's bin edges on the same clock, one grid for
    all jobs or one row per job (jobs, bins + 1). ``covered``: the jobs whose phase coverage is
    wanted (default all; the others' is 0). Vectorized over jobs and bins: no loop over jobs."""
    jobs, bins = len(which), edges.shape[-1] - 1
    if jobs == 0 or not signatures:
        empty = np.zeros((jobs, bins))
        return Placed(empty, empty.copy(), empty.copy())
    read, write = _step_means([s.rate_cums for s in signatures], which, start, length, edges)
    coverage = np.zeros((jobs, bins))
    rows = np.arange(jobs) if covered is None else np.flatnonzero(covered)
    if len(rows):
        grid = edges if edges.ndim == 1 else edges[rows]
        (part,) = _step_means(
            [(s.cover_cum,) for s in signatures], which[rows], start[rows], length[rows], grid
        )
        coverage[rows] = np.clip(part, 0.0, 1.0)
    return Placed(read, write, coverage)


def _step_means(
    cums: Sequence[Sequence[np.ndarray]],
    which: np.ndarray,
    start: np.ndarray,
    length: np.ndarray,
    edges: np.ndarray,
) -> list[np.ndarray]:
    """Per job and bin, the means of step functions of normalized run time, each given by its
    integral at k + 1 evenly spaced knots (``cums[s]``: one such array per series of signature
    s, all of one length; exact where the steps are the knots'), job ``j`` stretched over
    [start[j], start[j] + length[j])."""
    k = np.array([len(c[0]) - 1 for c in cums], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(k + 1)[:-1]])
    kj, oj = k[which], offsets[which]
    # x: each edge's place in its job's knots, in [0, k]; in place, as these are jobs x edges
    x = (edges[None, :] if edges.ndim == 1 else edges) - start[:, None]
    x *= (kj / np.maximum(length, 1e-12))[:, None]
    np.clip(x, 0.0, kj[:, None].astype(np.float64), out=x)
    i = x.astype(np.int64)  # x >= 0: truncation is floor
    np.minimum(i, (kj - 1)[:, None], out=i)
    x -= i  # the fraction of the step
    i += oj[:, None]  # the step's knot in the concatenated integrals
    scale = np.maximum(length, 1e-12)[:, None] / (
        np.diff(edges)[None, :] if edges.ndim == 1 else np.diff(edges, axis=1)
    )
    out = []
    for series in range(len(cums[0])):
        cum = np.concatenate([c[series] for c in cums])
        step = np.diff(cum, append=cum[-1])  # the knot's step to the next (its signature's)
        g = np.take(step, i)  # (np.take: a third of the time of step[i] on jobs x edges)
        g *= x
        g += np.take(cum, i)
        means = np.diff(g, axis=1)
        means *= scale
        out.append(means)
    return out


# --------------------------------------------------------------------------- the background


@dataclass(frozen=True)
class Timeline:
    """One file system's load over time, as the center's timeline keeps it: bytes read, bytes
    written and metadata requests per bin of ``bin_seconds`` from ``origin`` (epoch)."""

    origin: float
    bin_seconds: float
    read: np.ndarray
    write: np.ndarray
    meta: np.ndarray


def hour_of_week_slot(epoch: np.ndarray) -> np.ndarray:
    """0 (Monday 00:00-01:00 UTC) .. 167."""
    return (((np.asarray(epoch, dtype=np.float64) - MONDAY_EPOCH) % WEEK_SECONDS) // HOUR_SECONDS).astype(
        np.int64
    )


def hour_of_week_mean(timeline: Timeline, until: float | None = None) -> dict[str, np.ndarray]:
    """The mean rate (bytes/s, requests/s) per hour-of-week slot over the timeline's bins that
    end by ``until`` (None: all), each bin in the slot of its middle; NaN where no bin fell."""
    n = len(timeline.read)
    mids = timeline.origin + (np.arange(n) + 0.5) * timeline.bin_seconds
    keep = np.ones(n, dtype=bool) if until is None else mids + timeline.bin_seconds / 2 <= until
    slot = hour_of_week_slot(mids[keep])
    counts = np.bincount(slot, minlength=168).astype(np.float64)
    out = {}
    for name in ("read", "write", "meta"):
        values = np.asarray(getattr(timeline, name), dtype=np.float64)[keep] / timeline.bin_seconds
        sums = np.bincount(slot, weights=values, minlength=168)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[name] = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return out


_usual: dict[tuple[int, int], tuple[Timeline, dict[str, np.ndarray]]] = {}
USUAL_ENTRIES = 64  # (timeline, hour) pairs whose hour-of-week means are kept
_usual_lock = threading.Lock()


def _usual_load(timeline: Timeline, now: float) -> dict[str, np.ndarray]:
    """The hour-of-week means of the timeline's bins ended by the start of ``now``'s hour, kept
    for that hour (a year of 60 s bins is 525,600 of them: not summed again per request). The
    timeline is held with them, so its id is not another's while they are kept."""
    hour = int(now // HOUR_SECONDS)
    token = (id(timeline), hour)
    with _usual_lock:
        kept = _usual.get(token)
    if kept is not None and kept[0] is timeline:
        return kept[1]
    means = hour_of_week_mean(timeline, until=hour * HOUR_SECONDS)
    with _usual_lock:
        while len(_usual) >= USUAL_ENTRIES:
            _usual.pop(next(iter(_usual)))
        _usual[token] = (timeline, means)
    return means


def background(
    how: Mapping[str, np.ndarray], edges: np.ndarray, explained: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Per bin: the hour-of-week mean at the bin's middle minus what the signatures explain
    there, floored at 0 (a slot never seen counts 0)."""
    slot = hour_of_week_slot((edges[:-1] + edges[1:]) / 2)
    out = {}
    for name in ("read", "write", "meta"):
        usual = np.nan_to_num(how[name][slot], nan=0.0)
        out[name] = np.maximum(usual - explained.get(name, 0.0), 0.0)
    return out


# --------------------------------------------------------------------------- the forecast


@dataclass(frozen=True)
class Group:
    """What the forecast knows of one application group (``uid:application``)."""

    key: str
    signature: Signature | None = None
    why: str | None = None  # why there is no signature
    runs: int = 0  # stored runs
    median_run_time: float | None = None  # seconds, without a signature (the stored runs')
    fs_shares: Mapping[str, float] = field(default_factory=lambda: {UNKNOWN_FS: 1.0})
    label: str | None = None  # sensitivity label (docs/method.md 3.11); None: no row
    slope: float | None = None
    slope_lo: float | None = None
    slope_hi: float | None = None


@dataclass(frozen=True)
class RunningJob:
    job_id: str
    uid: int | None
    application: str | None
    group: str | None  # its group key; None: no application known
    start: float
    time_limit: float | None  # seconds; None: UNLIMITED


@dataclass(frozen=True)
class RunningArrays:
    """The running jobs as columns (what the store reads: no object per job)."""

    job_id: Sequence[str]
    uid: Sequence[int | None]
    application: Sequence[str | None]
    group: Sequence[str | None]
    start: np.ndarray  # epoch seconds
    time_limit: np.ndarray  # seconds; NaN: UNLIMITED
    # (job id, uid, application) of job i, read when it is named (the identities columns empty)
    identify: Callable[[int], tuple[str, int | None, str | None]] | None = None

    def __len__(self) -> int:
        return len(self.start)

    def job(self, i: int) -> RunningJob:
        limit = float(self.time_limit[i])
        job_id, uid, application = (
            self.identify(i) if self.identify else (str(self.job_id[i]), self.uid[i], self.application[i])
        )
        return RunningJob(
            job_id,
            uid,
            application,
            self.group[i],
            float(self.start[i]),
            None if math.isnan(limit) else limit,
        )

    @classmethod
    def of(cls, jobs: Sequence[RunningJob]) -> RunningArrays:
        return cls(
            [job.job_id for job in jobs],
            [job.uid for job in jobs],
            [job.application for job in jobs],
            [job.group for job in jobs],
            np.array([job.start for job in jobs], dtype=np.float64),
            np.array(
                [math.nan if job.time_limit is None else job.time_limit for job in jobs], dtype=np.float64
            ),
        )


@dataclass(frozen=True)
class Viewer:
    """Who asks: the operator (write token) sees identities; the read token sees "another job"
    and its share, and the jobs of ``uid`` (the uid the request names) by identity."""

    operator: bool = False
    uid: int | None = None


READER = Viewer()  # the read token asking without a uid: identities of nobody


def _slope_of(group: Group | None, fallback: float | None) -> tuple[float | None, str]:
    """The slope the forecast uses for a group, and where it came from."""
    label = group.label if group else None
    if label == SENSITIVE and group is not None and group.slope is not None and math.isfinite(group.slope):
        return max(group.slope, 0.0), "sensitive"
    if label in (INSENSITIVE, NOT_EXPOSED):
        return 0.0, label or ""
    if fallback is not None:
        return fallback, f"{label or 'not judged'}: the median slope of the center's sensitive applications"
    return None, label or "not judged"


def center_slope(groups: Mapping[str, Group]) -> float | None:
    """The median slope of the sensitive groups known, the assumption for one not judged."""
    slopes = [
        g.slope
        for g in groups.values()
        if g.label == SENSITIVE and g.slope is not None and math.isfinite(g.slope) and g.slope > 0
    ]
    return float(np.median(slopes)) if slopes else None


def risk_class(score: float | None, settings: Settings) -> RiskClass | None:
    """high at or past the high slowdown, medium at or past the medium one, else low."""
    if score is None or not math.isfinite(score):
        return None
    if score >= settings.high_slowdown:
        return "high"
    return "medium" if score >= settings.medium_slowdown else "low"


def forecast(
    now: float,
    candidate: Group | None,
    running: Sequence[RunningJob] | RunningArrays,
    groups: Mapping[str, Group],
    timelines: Mapping[str, Timeline] | None = None,
    *,
    time_limit: float | None = None,
    viewer: Viewer = READER,
    settings: Settings = Settings(),
    fallback_slope: float | None = None,
    horizon: float | None = None,
    uid: int | None = None,
    application: str | None = None,
) -> dict[str, Any]:
    """The whole answer (JSON-ready) for a candidate starting at ``now``. ``candidate`` is its
    group (None: an unknown application); ``groups`` holds the running jobs' groups."""
    status, why = "ok", None
    signature = candidate.signature if candidate else None
    if candidate is None:
        status, why = "unknown_application", "the store has no run of this application"
    elif candidate.runs < settings.min_runs and signature is None:
        status = "too_few_runs"
        why = f"{candidate.runs} stored run(s): a signature needs at least {settings.min_runs}"
    elif signature is None:
        status, why = "no_signature", candidate.why or "its application has no signature"
    median = signature.run_time if signature else (candidate.median_run_time if candidate else None)
    if median is not None and median > 0:
        length, basis = expected_length(median, time_limit), "median run time"
        if length < median:
            basis = "time limit"
    elif time_limit is not None and time_limit > 0:
        length, basis = float(time_limit), "time limit (run time unknown)"
    else:
        length, basis = settings.default_horizon_seconds, "default horizon (run time unknown)"
    if horizon is not None and horizon > 0:  # a backtest scores the load over the run time that came
        length, basis = float(horizon), "horizon asked"
    edges = now + np.linspace(0.0, length, settings.bins + 1)

    # The running jobs as arrays: each one's group (among those with a signature), start, limit
    jobs = running if isinstance(running, RunningArrays) else RunningArrays.of(running)
    keys = sorted({group for group in jobs.group if group} & {k for k, g in groups.items() if g.signature})
    gindex = {key: i for i, key in enumerate(keys)}
    sig_list: list[Signature] = [s for s in (groups[key].signature for key in keys) if s is not None]
    job_group = np.array([gindex.get(group or "", -1) for group in jobs.group], dtype=np.int64)
    job_start, job_limit = jobs.start, jobs.time_limit
    signed = np.flatnonzero(job_group >= 0)  # the running jobs with a signature
    medians = np.array([sig.run_time for sig in sig_list], dtype=np.float64)
    limits = job_limit[signed]
    lengths_all = np.fmin(medians[job_group[signed]], np.where(limits > 0, limits, np.nan))
    # those whose expected run overlaps the horizon: the others add nothing
    overlaps = (job_start[signed] + lengths_all > now) & (job_start[signed] < edges[-1])
    rows = signed[overlaps]
    which = job_group[rows]
    group_slopes = np.array(
        [
            g.slope if g.label == SENSITIVE and g.slope is not None and math.isfinite(g.slope) else 0.0
            for g in (groups[key] for key in keys)
        ],
        dtype=np.float64,
    )
    slopes = np.maximum(group_slopes[which], 0.0) if len(which) else np.zeros(0)
    # the phases only of the sensitive jobs running while the candidate does I/O: the ones whose
    # slowdown it may cause (none without a candidate's signature)
    covered = np.zeros(len(rows), dtype=bool)
    if status == "ok" and signature is not None and len(signature.phases):
        io_from = now + length * float(signature.phases[0, 0])
        io_to = now + length * float(signature.phases[-1, 1])
        starts_in = job_start[rows]
        covered = (slopes > 0) & (starts_in < io_to) & (starts_in + lengths_all[overlaps] > io_from)
    placed = place(sig_list, which, job_start[rows], lengths_all[overlaps], edges, covered=covered)

    # file systems: every one a running job or the candidate uses, or a timeline names
    fs_names = sorted(
        {name for key in keys for name in groups[key].fs_shares}
        | set(candidate.fs_shares if candidate else ())
        | set(timelines or ())
    )
    fs_index = {name: i for i, name in enumerate(fs_names)}
    group_shares = np.zeros((len(keys), len(fs_names)))
    for row, key in enumerate(keys):
        for name, share in groups[key].fs_shares.items():
            group_shares[row, fs_index[name]] = share
    shares = group_shares[which]
    load: dict[str, dict[str, np.ndarray]] = {}
    explained: dict[str, dict[str, np.ndarray]] = {}
    back: dict[str, dict[str, np.ndarray]] = {}
    by_fs = {d: shares.T @ getattr(placed, d) for d in DIRECTIONS}  # (file systems, bins): one product each
    for f, name in enumerate(fs_names):
        part = {d: by_fs[d][f] for d in DIRECTIONS}
        part["meta"] = np.zeros(settings.bins)  # signatures carry no metadata series
        explained[name] = part
        timeline = (timelines or {}).get(name)
        if timeline is not None:
            back[name] = background(_usual_load(timeline, now), edges, part)
        else:
            back[name] = {d: np.zeros(settings.bins) for d in ("read", "write", "meta")}
        load[name] = {d: part[d] + back[name][d] for d in ("read", "write", "meta")}

    answer: dict[str, Any] = {
        "status": status,
        "why": why,
        "uid": uid,
        "application": application,
        "now": now,
        "expected_run_time": length,
        "run_time_basis": basis,
        "horizon": {
            "start": now,
            "end": now + length,
            "bins": settings.bins,
            "bin_seconds": length / settings.bins,
        },
        "running": {
            "jobs": len(running),
            "with_signature": len(signed),
            "without_signature": len(running) - len(signed),
        },
        "background": {
            "file_systems": sorted(timelines or ()),
            "how": "hour-of-week mean of the center's timeline minus the running signatures' load, "
            "floored at 0",
            "why": None
            if timelines
            else "no center timeline: the load ahead is the running signatures' only",
        },
        "load_ahead": {
            name: {
                **{d: _floats(load[name][d]) for d in ("read", "write", "meta")},
                "signatures": {d: _floats(explained[name][d]) for d in DIRECTIONS},
                "background": {d: _floats(back[name][d]) for d in ("read", "write", "meta")},
            }
            for name in fs_names
        },
        "candidate": None,
        "caused": [],
        "caused_total": 0,
        "conflicts": [],
        "risk": {"class": None, "score": None, "why": why},
    }
    if status != "ok" or candidate is None or signature is None:
        return answer

    # The candidate
    own = place([signature], np.zeros(1, dtype=np.int64), np.array([now]), np.array([length]), edges)
    cover = own.coverage[0]
    c_shares = np.array([candidate.fs_shares.get(name, 0.0) for name in fs_names])
    total = np.array([load[name]["read"] + load[name]["write"] for name in fs_names])  # (fs, bins)
    met = c_shares @ total  # the load the candidate meets, per bin
    io_time = float(cover.sum())
    met_mean = float((cover * met).sum() / io_time) if io_time > 0 else 0.0
    fallback = None
    if settings.assume_sensitive:
        fallback = fallback_slope if fallback_slope is not None else center_slope(groups)
    slope, slope_basis = _slope_of(candidate, fallback)
    own_slowdown = 1.0 + slope * met_mean if slope is not None else None
    interval = None
    if candidate.label == SENSITIVE and candidate.slope_lo is not None and candidate.slope_hi is not None:
        interval = [
            1.0 + max(candidate.slope_lo, 0.0) * met_mean,
            1.0 + max(candidate.slope_hi, 0.0) * met_mean,
        ]
    phases = []
    starts_c = now + length * signature.phases[:, 0]
    ends_c = now + length * signature.phases[:, 1]
    mids = (edges[:-1] + edges[1:]) / 2
    for (a, b), kind in zip(zip(starts_c, ends_c), signature.phase_directions):
        inside = (mids >= a) & (mids < b)
        weights = np.maximum(0.0, np.minimum(b, edges[1:]) - np.maximum(a, edges[:-1]))
        moved = float(((own.read[0] + own.write[0]) * weights).sum())
        phase_load = float((weights * met).sum() / weights.sum()) if weights.sum() > 0 else 0.0
        phases.append(
            {
                "direction": kind,
                "start": float(a - now),
                "end": float(b - now),
                "bytes": moved,
                "load_bps": phase_load,
                "bins": int(inside.sum()),
            }
        )
    cand_rate = own.read[0] + own.write[0]
    answer["candidate"] = {
        "group_key": candidate.key,
        "runs": signature.runs,
        "file_systems": dict(candidate.fs_shares),
        "phases": phases,
        "io_seconds": io_time * (length / settings.bins),
        "load_during_io_bps": met_mean,
        "sensitivity": candidate.label,
        "slope": slope,
        "slope_basis": slope_basis,
        "expected_slowdown": own_slowdown,
        "slowdown_interval": interval,
    }

    # What each running job carries during the candidate's I/O, and what the candidate does to it
    phi = shares @ c_shares  # how much each job and the candidate share file systems
    during = ((placed.read + placed.write) @ cover) * phi
    met_bytes = float((cover * met).sum())
    carried = during / met_bytes if met_bytes > 0 else np.zeros_like(during)
    io = placed.coverage.sum(axis=1)
    added = np.where(io > 0, (placed.coverage @ cand_rate) / np.maximum(io, 1e-300), 0.0) * phi
    extra = slopes * added
    hits = np.flatnonzero(extra > 0)
    worst = float(extra.max()) if len(hits) else 0.0
    top_hits = hits[np.argsort(-extra[hits], kind="stable")][: max(settings.max_conflicts, 0)]
    caused = [
        {
            **_identity(jobs.job(int(rows[hit])), viewer),
            "added_load_bps": float(added[hit]),
            "extra_slowdown": float(extra[hit]),
        }
        for hit in top_hits.tolist()
    ]
    order = np.argsort(-carried, kind="stable")
    conflicts = []
    for top in order[: max(settings.max_conflicts, 0)].tolist():
        if carried[top] < settings.conflict_min_share or carried[top] <= 0:
            break
        conflicts.append({**_identity(jobs.job(int(rows[top])), viewer), "share": float(carried[top])})
    answer["caused_total"] = len(hits)
    answer["caused"] = caused
    answer["conflicts"] = conflicts
    scores = [s for s in (own_slowdown, 1.0 + worst if len(hits) else None) if s is not None]
    score = max(scores) if scores else None
    cls = risk_class(score, settings)
    reason = None
    if score is None:
        reason = "no slope: its sensitivity is not judged and no sensitive job runs"
    answer["risk"] = {"class": cls, "score": score, "why": reason}
    return answer


def _identity(job: RunningJob, viewer: Viewer) -> dict[str, Any]:
    """A running job as the viewer may see it (the visibility rule of docs/security.md)."""
    if viewer.operator or (viewer.uid is not None and job.uid == viewer.uid):
        return {"job": job.job_id, "uid": job.uid, "application": job.application}
    return {"job": "another job"}


def _floats(values: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=np.float64)]
