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
  others' load during them (time-averaged over the phases, as contract 2's concurrent load is),
  its expected slowdown ``1 + slope * load`` (its application's sensitivity), what it adds to
  each running sensitive job (``slope_j *`` the candidate's rate averaged over that job's I/O
  phases in the horizon), the running jobs carrying a share of the load during its phases, and
  a class by ``forecast_medium_slowdown`` / ``forecast_high_slowdown``.

A signature point ``i`` of ``k`` stands for the fraction ``[i/k, (i+1)/k)`` of the run (its mean
rate there): the series are integrated exactly as step functions, so a bin's bytes do not
depend on where its edges fall.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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
        )


# --------------------------------------------------------------------------- signatures


@dataclass(frozen=True)
class Signature:
    """A contract-6 body, parsed: median rates (bytes/s) at ``points`` steps of normalized run
    time, the median run time, and the I/O phases as [start, end) fractions of the run."""

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


def parse_signature(
    body: object, phase_min_share: float = DEFAULT.forecast_phase_min_share
) -> Signature | str:
    """The :class:`Signature` of a contract-6 body, or why it cannot be used (a sentence): a
    malformed body is a reason, never an exception."""
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
    rows = [row for row in rows if row[1] > row[0]]
    if rows:
        rows.sort()
        return np.array([row[:2] for row in rows], dtype=np.float64), tuple(row[2] for row in rows)
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
) -> Placed:
    """Each job ``j`` runs ``signatures[which[j]]`` from ``start[j]`` for ``length[j]`` seconds;
    ``edges`` (bins + 1, increasing) are the grid's bin edges on the same clock, one grid for
    all jobs or one row per job (jobs, bins + 1). Vectorized over jobs and bins: no loop over
    jobs."""
    jobs, bins = len(which), edges.shape[-1] - 1
    edges = np.broadcast_to(edges, (jobs, bins + 1)) if edges.ndim == 1 else edges
    if jobs == 0 or not signatures:
        empty = np.zeros((jobs, bins))
        return Placed(empty, empty.copy(), empty.copy())
    k = np.array([s.points for s in signatures], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(k + 1)[:-1]])
    # g(u) = integral of the rate over normalized time [0, u]: k + 1 knots per signature
    cum = {
        d: np.concatenate([np.concatenate([[0.0], np.cumsum(getattr(s, d)) / s.points]) for s in signatures])
        for d in DIRECTIONS
    }
    kj, oj = k[which], offsets[which]
    span = np.maximum(length, 1e-12)[:, None]
    u = np.clip((edges - start[:, None]) / span, 0.0, 1.0)
    x = u * kj[:, None]
    i = np.minimum(np.floor(x).astype(np.int64), (kj - 1)[:, None])
    frac = x - i
    base = oj[:, None] + i
    widths = np.diff(edges, axis=1)
    rates = {}
    for d in DIRECTIONS:
        g = cum[d][base] + frac * (cum[d][base + 1] - cum[d][base])
        rates[d] = np.diff(g, axis=1) * span / widths
    return Placed(rates["read"], rates["write"], _coverage(signatures, which, start, length, edges))


def _coverage(
    signatures: Sequence[Signature],
    which: np.ndarray,
    start: np.ndarray,
    length: np.ndarray,
    edges: np.ndarray,
) -> np.ndarray:
    """The share of each bin covered by each job's I/O phases."""
    jobs, bins = len(which), edges.shape[1] - 1
    counts = np.array([len(s.phases) for s in signatures], dtype=np.int64)
    per_job = counts[which]
    out = np.zeros((jobs, bins))
    if per_job.sum() == 0:
        return out
    spans = np.concatenate([s.phases for s in signatures if len(s.phases)] or [np.zeros((0, 2))])
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])  # each signature's first phase row
    owner = np.repeat(np.arange(jobs), per_job)
    job_first = np.cumsum(per_job) - per_job  # each job's first phase among the jobs' phases
    index = first[which][owner] + np.arange(int(per_job.sum())) - job_first[owner]
    a = start[owner] + length[owner] * spans[index, 0]
    b = start[owner] + length[owner] * spans[index, 1]
    grid = edges[owner]
    overlap = np.maximum(0.0, np.minimum(b[:, None], grid[:, 1:]) - np.maximum(a[:, None], grid[:, :-1]))
    np.add.at(out, owner, overlap / np.diff(grid, axis=1))
    return np.minimum(out, 1.0)


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
    label: str | None = None  # contract 8 label; None: no row
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
    running: Sequence[RunningJob],
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

    # The running jobs with a signature, placed
    known = [(j, groups.get(job.group or "")) for j, job in enumerate(running)]
    with_sig = [(j, g) for j, g in known if g is not None and g.signature is not None]
    keys = sorted({g.key for _, g in with_sig})
    index = {key: i for i, key in enumerate(keys)}
    sigs = [groups[key].signature for key in keys]
    sig_list: list[Signature] = [s for s in sigs if s is not None]
    rows = np.array([j for j, _ in with_sig], dtype=np.int64)
    which = np.array([index[g.key] for _, g in with_sig], dtype=np.int64)
    starts = np.array([running[j].start for j in rows], dtype=np.float64)
    lengths = np.array(
        [expected_length(g.signature.run_time, running[j].time_limit) for j, g in with_sig if g.signature],
        dtype=np.float64,
    )
    placed = place(sig_list, which, starts, lengths, edges)

    # file systems: every one a running job or the candidate uses, or a timeline names
    fs_names = sorted(
        {name for _, g in with_sig for name in g.fs_shares}
        | set(candidate.fs_shares if candidate else ())
        | set(timelines or ())
    )
    fs_index = {name: i for i, name in enumerate(fs_names)}
    shares = np.zeros((len(with_sig), len(fs_names)))
    for row, (_, g) in enumerate(with_sig):
        for name, share in g.fs_shares.items():
            shares[row, fs_index[name]] = share
    load: dict[str, dict[str, np.ndarray]] = {}
    explained: dict[str, dict[str, np.ndarray]] = {}
    back: dict[str, dict[str, np.ndarray]] = {}
    for f, name in enumerate(fs_names):
        part = {d: shares[:, f] @ getattr(placed, d) for d in DIRECTIONS}
        part["meta"] = np.zeros(settings.bins)  # signatures carry no metadata series
        explained[name] = part
        timeline = (timelines or {}).get(name)
        if timeline is not None:
            back[name] = background(hour_of_week_mean(timeline, until=now), edges, part)
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
            "with_signature": len(with_sig),
            "without_signature": len(running) - len(with_sig),
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
    phi = shares @ c_shares if len(with_sig) else np.zeros(0)  # overlap of file systems
    during = (placed.read + placed.write) @ cover * phi if len(with_sig) else np.zeros(0)
    met_bytes = float((cover * met).sum())
    carried = during / met_bytes if met_bytes > 0 else np.zeros_like(during)
    caused = []
    worst = 0.0
    if len(with_sig):
        slopes = np.array(
            [g.slope if g.label == SENSITIVE and g.slope is not None else 0.0 for _, g in with_sig]
        )
        slopes = np.where(np.isfinite(slopes), slopes, 0.0)
        io = placed.coverage.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            added = np.where(io > 0, (placed.coverage @ cand_rate) / np.maximum(io, 1e-300), 0.0) * phi
        extra = slopes * added
        for hit in np.flatnonzero(extra > 0).tolist():
            worst = max(worst, float(extra[hit]))
            caused.append(
                {
                    **_identity(running[with_sig[hit][0]], viewer),
                    "added_load_bps": float(added[hit]),
                    "extra_slowdown": float(extra[hit]),
                }
            )
    caused.sort(key=lambda item: -item["extra_slowdown"])
    order = np.argsort(-carried, kind="stable")
    conflicts = []
    for top in order[: max(settings.max_conflicts, 0)].tolist():
        if carried[top] < settings.conflict_min_share or carried[top] <= 0:
            break
        job = running[with_sig[top][0]]
        conflicts.append({**_identity(job, viewer), "share": float(carried[top])})
    answer["caused"] = caused
    answer["conflicts"] = conflicts
    scores = [s for s in (own_slowdown, 1.0 + worst if caused else None) if s is not None]
    score = max(scores) if scores else None
    cls = risk_class(score, settings)
    reason = None
    if score is None:
        reason = "no slope: its sensitivity is not judged and no sensitive job runs"
    answer["risk"] = {"class": cls, "score": score, "why": reason}
    return answer


def _identity(job: RunningJob, viewer: Viewer) -> dict[str, Any]:
    """A running job as the viewer may see it (contract 4's visibility rule)."""
    if viewer.operator or (viewer.uid is not None and job.uid == viewer.uid):
        return {"job": job.job_id, "uid": job.uid, "application": job.application}
    return {"job": "another job"}


def _floats(values: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=np.float64)]
