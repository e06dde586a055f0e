"""A year whose jobs share one file system's bandwidth (``mosaic synth contention``).

Three passes, memory O(runs) in small arrays (about 100 bytes per run and
phase), one group's template alive at a time while logs are written:

1. **Plan.** The groups (designed ones, then the year's profiles with their
   MOSAIC labels as today), each run's start (a day and week cycle), run-time
   jitter, nprocs, byte scale; the runs whose logs are evicted (about 32 %)
   and jobs without Darshan (no log at all) are planned too: they load the
   file system and report nothing. Each group's template is built from its
   own seed, its I/O phases read off its records, then dropped.
2. **Simulate** the shared mount point (``/scratch``) with
   :func:`mosaic.synth.contention.simulate`: max-min fair shares of
   ``CAPACITY`` (``inf`` for the null year). Runs on the node-local ``/tmp``
   are not simulated (never slowed, slowing nobody).
3. **Write** each group's logs: its template rebuilt from the same seed;
   a run whose phases were stretched gets its records' timestamps, time
   counters, DXT segments and HEATMAP bins warped (piecewise linear, phases
   stretched, computation shifted) and its label truth recomputed.

``truth.jsonl`` lines are today's plus ``io`` (darshan-util's per-module
totals) and ``contention`` (as docs/accuracy.md "The contention
year"); ``unseen.npz`` lists the jobs without Darshan (job id, start, end,
bytes) that the ``by`` lists may name.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.synth import truth as T
from mosaic.synth.contention import shares, simulate
from mosaic.synth.corpus import Identity, Template, truth_record
from mosaic.synth.logs import (
    INVALID_REASONS,
    YEAR_START,
    choose_format,
    darshan_log,
    make_job,
    scaled,
    write,
)
from mosaic.synth.records import FileTable, add_times
from mosaic.synth.scenarios import MetadataLoad, Phase, Scenario, drawn, params, resolve
from mosaic.synth.year import (
    APPS,
    FAST_ZLIB,
    FRESH_INVALID,
    ID_CACHE_LIMIT,
    INVALID_MIX,
    INVALID_SHARE,
    INVALID_TEMPLATE,
    PROFILES,
    RUNS_PER_GROUP,
    TEST_RUN_SCALE,
    TEST_RUN_SHARE,
    YearSummary,
    _Writer,
    group_runs,
    next_profile,
)

CAPACITY = 5e9  # bytes/s of /scratch, scaled to the synthetic year's volumes (see docs/accuracy.md)
SHARED_FS, LOCAL_FS = "/scratch", "/tmp"
MOUNTS = [("/scratch", "lustre"), ("/projects", "lustre"), ("/u", "lustre"), ("/tmp", "xfs"), ("/", "rootfs")]
META_COST_BYTES = 100_000  # a metadata request costs the servers what moving this many bytes does
MIN_DEMAND = 1e-5  # phases asking less than this share of the capacity are not simulated
SLOWED = 1.001  # slowdown above which a run counts as slowed
NONTRIVIAL_BYTES = 1e8  # a run with non-trivial I/O (the summary's Beacon-like share)
HIDDEN_MAX_DEMAND = 0.2  # a job without Darshan asks at most this share of the capacity
COVERED_JOBS, COVERED_BYTES = 0.27, 0.61  # Madireddy et al.: Darshan's share of jobs and of bytes
STRETCH_STEP = 0.15  # a run's time is its group's times exp(k x this), k in JITTER_LEVELS
JITTER_LEVELS, JITTER_P = (-1, 0, 1), (0.25, 0.5, 0.25)  # each level's log is built once per group
NPROCS_MORE = (1, 1, 1, 2)  # a run's nprocs: its group's times one of these (ranks without I/O)
SHORT_SHARE = 0.03  # runs cut short (a failed or killed run): a tenth of the time and bytes
# The computation before each I/O phase of a run: its group's times U(1 - this, 1 + this), drawn
# per run and phase (inputs and node speeds differ), so runs differ in shape, not only in
# length; groups with periodic bursts are left whole (their truth is a period)
GAP_JITTER = 0.15
DESIGN_FULL = 20_000  # logs at which the designed groups have their full run counts

# Submission rate by hour of day (weekdays; weekends at WEEKEND of it).
HOURLY = np.array([0.4] * 7 + [1.0, 2.0] + [3.0] * 9 + [1.5] * 4 + [0.8] * 2)
WEEKEND = 0.5
PEAK_HOURS, OFF_PEAK_HOURS = (9, 17), (1, 5)

STORM_RATE = 400.0  # metadata requests/s of a storm (Beacon's rule: over 300 during I/O)
EFFECTS = (0.1, 0.3, 0.6, 1.0)  # designed slowdown - 1 of I/O beside one aggressor
RUN_COUNTS = (10, 30, 100, 300)
AGGRESSOR_RUNS = 250  # per aggressor group: contention binds in about 5-7 % of hours at 20,000 logs


def _io_scenario(
    name: str,
    direction: str,
    demand: float,
    shared: bool,
    ranks: int = 16,
    run_time: float = 3600.0,
    start: float = 0.45,
    duration: float = 0.1,
    metadata: tuple[MetadataLoad, ...] = (),
) -> Scenario:
    """One I/O phase of ``duration`` x run time asking ``demand`` bytes/s."""
    volume = demand * duration * run_time
    return Scenario(
        name,
        ranks=ranks,
        run_time=run_time,
        phases=(Phase(direction, start, duration, volume, shared=shared),),
        metadata=metadata,
    )


@dataclass(frozen=True)
class Design:
    """A designed group: scenario, run count, sensitivity, effect, hours, file system."""

    scenario: Scenario
    runs: int
    sensitivity: str
    effect: float
    hours: tuple[int, int] | None = PEAK_HOURS  # submitted between these hours (weekdays)
    fs: str = SHARED_FS


def designs(capacity: float = CAPACITY) -> list[Design]:
    """The designed groups (names say what they are)."""
    out = []
    for effect in EFFECTS:
        # Beside one aggressor asking about the capacity, the fair share is C/2:
        # a run asking (1 + effect) C/2 is slowed by 1 + effect during the overlap.
        for runs in RUN_COUNTS:
            demand = (1 + effect) * capacity / 2
            out.append(
                Design(
                    _io_scenario(f"sensitive_e{effect:g}_n{runs}", "write", demand, False),
                    runs,
                    "sensitive",
                    effect,
                )
            )
    out += [
        Design(
            _io_scenario("insensitive_low_demand", "write", 0.01 * capacity, False), 100, "insensitive", 0.0
        ),
        Design(
            _io_scenario("insensitive_off_peak", "write", 0.8 * capacity, False),
            100,
            "insensitive",
            0.0,
            hours=OFF_PEAK_HOURS,
        ),
        Design(
            _io_scenario("insensitive_node_local", "write", 0.8 * capacity, False),
            100,
            "insensitive",
            0.0,
            fs=LOCAL_FS,
        ),
        Design(
            _io_scenario("aggressor_n1_flood", "write", 1.0 * capacity, True, ranks=64, duration=0.3),
            AGGRESSOR_RUNS,
            "aggressor",
            0.0,
        ),
        Design(
            _io_scenario("aggressor_bandwidth_hog", "read", 0.95 * capacity, False, ranks=32, duration=0.3),
            AGGRESSOR_RUNS,
            "aggressor",
            0.0,
        ),
        Design(
            _io_scenario(
                "aggressor_metadata_storm",
                "write",
                0.6 * capacity,
                True,
                ranks=32,
                duration=0.3,
                metadata=(MetadataLoad(0.45, 0.3 * 3600, STORM_RATE),),
            ),
            AGGRESSOR_RUNS,
            "aggressor",
            0.0,
        ),
    ]
    return out


def start_times(
    rng: np.random.Generator, n: int, hours: tuple[int, int] | None = None, span_days: int = 365
) -> np.ndarray:
    """``n`` start times (s from the year's start) by the day and week cycle over the first
    ``span_days`` days; ``hours``: weekdays between these hours only."""
    days = np.arange(span_days)
    weekday = (days + 1) % 7 < 5  # 2019-01-01 was a Tuesday
    if hours is None:
        weight = np.outer(np.where(weekday, 1.0, WEEKEND), HOURLY).ravel()
    else:
        day_hours = np.zeros(24)
        day_hours[hours[0] : hours[1]] = 1.0
        weight = np.outer(weekday.astype(float), day_hours).ravel()
    hour = rng.choice(len(weight), n, p=weight / weight.sum())
    return (hour * 3600 + rng.uniform(0, 3600, n)).astype(np.float64)


def phases_of(rows: np.ndarray, nprocs: int) -> tuple[np.ndarray, np.ndarray]:
    """(start, end, bytes) of a template's I/O phases: the union of its records' read and
    write spans, with their bytes and their opens' metadata cost. Returns ``(spans [k, 2],
    volume [k])``."""
    del nprocs
    parts = []
    for column, prefix in (("bytes_read", "read"), ("bytes_written", "write")):
        sel = rows[(rows[column] > 0) & (rows["module"] != F.MPIIO)]
        parts.append((sel[f"{prefix}_start"], sel[f"{prefix}_end"], sel[column].astype(float)))
    meta = rows[(rows["opens"] > 0) & (rows["module"] != F.MPIIO)]
    parts.append((meta["open_start"], meta["close_end"], meta["opens"] * 2.0 * META_COST_BYTES))
    s = np.concatenate([p[0] for p in parts])
    e = np.maximum(np.concatenate([p[1] for p in parts]), s + 1e-3)
    b = np.concatenate([p[2] for p in parts])
    if not len(s):
        return np.zeros((0, 2)), np.zeros(0)
    order = np.argsort(s, kind="stable")
    s, e, b = s[order], e[order], b[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(len(s), bool)
    new[1:] = s[1:] > reach[:-1]
    phase = np.cumsum(new) - 1
    k = int(phase[-1]) + 1
    spans = np.stack([s[new], np.maximum.reduceat(e, np.flatnonzero(new))], 1)
    return spans, np.bincount(phase, b, k)


@dataclass
class _Group:
    seed: int
    scenario: Scenario
    who: Identity
    runs: int
    sensitivity: str
    effect: float
    fs: str
    invalid: str | None = None
    first_run: int = 0  # index of its first run in the plan


def _warp(t: np.ndarray, knots_from: np.ndarray, knots_to: np.ndarray) -> np.ndarray:
    """Piecewise linear map through the knots, slope 1 before the first and after the last."""
    if not len(knots_from):
        return t
    out = np.interp(t, knots_from, knots_to)
    out = np.where(t > knots_from[-1], t + (knots_to[-1] - knots_from[-1]), out)
    warped: np.ndarray = np.where(t < knots_from[0], t + (knots_to[0] - knots_from[0]), out)
    return warped


def _warp_heatmap(hm: F.HeatmapRecords, warp: Any, run_time: float) -> F.HeatmapRecords:
    """Bins of each record re-cut at the same width after warping time (cumulative bytes
    interpolated at the new edges; totals kept)."""
    writes: list[np.ndarray] = []
    reads: list[np.ndarray] = []
    nbins: list[int] = []
    for i in range(len(hm.ids)):
        w = float(hm.bin_seconds[i])
        n_old = int(hm.nbins[i])
        lo = int(hm.offsets[i])
        old_edges = warp(np.arange(n_old + 1) * w)
        n_new = max(int(np.ceil(run_time / w)), n_old)
        new_edges = np.arange(n_new + 1) * w
        nbins.append(n_new)
        for src, dst in ((hm.write_bins, writes), (hm.read_bins, reads)):
            cum = np.concatenate([[0], np.cumsum(src[lo : lo + n_old])]).astype(float)
            at = np.floor(np.interp(new_edges, old_edges, cum)).astype(np.int64)
            dst.append(np.diff(at))
    return dataclasses.replace(
        hm,
        nbins=np.array(nbins, np.int64),
        write_bins=np.concatenate(writes) if writes else hm.write_bins,
        read_bins=np.concatenate(reads) if reads else hm.read_bins,
    )


TIME_STAMPS = tuple(F.CANONICAL_FCOUNTERS)


def generate_contention(
    out: str | Path,
    count: int,
    seed: int = 2019,
    null: bool = False,
    config: Config | None = None,
    capacity: float = CAPACITY,
    days: int = 365,
) -> dict[str, Any]:
    """Write a contention year of ``count`` logs (``null``: unbounded capacity); ``days``:
    the span its jobs start in (fewer days, denser load: small test years)."""
    config = config or Config()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    began, began_cpu = time.perf_counter(), time.process_time()
    rng = np.random.default_rng([seed, 54])
    gap_rng = np.random.default_rng([seed, 54, 2])  # its own stream: the other draws stay as they were
    cap = np.inf if null else capacity

    # ---- 1. plan: groups, then runs
    groups: list[_Group] = []
    design_scale = min(1.0, count / DESIGN_FULL)
    uid = 70_000
    for d in designs(capacity):
        n = max(int(round(d.runs * design_scale)), 2)
        uid += 1
        who = Identity(uid, f"u{uid}", f"/u/sciteam/u{uid}/bin/{d.scenario.name}")
        groups.append(_Group(int(rng.integers(1 << 62)), d.scenario, who, n, d.sensitivity, d.effect, d.fs))
    hours: list[tuple[int, int] | None] = [d.hours for d in designs(capacity)]
    n_designed = len(groups)
    planned = sum(g.runs for g in groups)
    single = np.array([row[0] for row in PROFILES]) / 100
    mean_runs = RUNS_PER_GROUP * np.array([row[1] for row in PROFILES]) / 100 / single
    chosen, runs_given = np.zeros(len(PROFILES)), np.zeros(len(PROFILES))
    invalid_runs = 0
    reasons, reason_p = list(INVALID_MIX), np.array(list(INVALID_MIX.values()))
    taken = {g.who.group for g in groups}
    broken_seed: int | None = None
    while planned < count:
        who_uid = int(rng.integers(1_000, 60_000))
        app = APPS[int(rng.integers(len(APPS)))]
        who = Identity(who_uid, f"u{who_uid}", f"/u/sciteam/u{who_uid}/bin/{app}")
        if invalid_runs < INVALID_SHARE * (planned + 1):
            reason = reasons[rng.choice(len(reasons), p=reason_p)]
            scenario = dataclasses.replace(INVALID_TEMPLATE, name=f"year_invalid_{reason}", invalid=reason)
            if broken_seed is None or rng.random() < FRESH_INVALID:  # as the year: reuse broken records
                broken_seed = int(rng.integers(1 << 62))
            groups.append(_Group(broken_seed, scenario, who, 1, "none", 0.0, SHARED_FS, reason))
            hours.append(None)
            invalid_runs += 1
            planned += 1
            continue
        row = next_profile(chosen, single)
        chosen[row] += 1
        owed = mean_runs[row] * chosen[row] - runs_given[row]
        n_runs = min(group_runs(rng, owed, max(int(0.04 * count), 1)), count - planned)
        runs_given[row] += n_runs
        if who.group in taken:
            continue
        taken.add(who.group)
        groups.append(
            _Group(int(rng.integers(1 << 62)), PROFILES[row][2], who, n_runs, "none", 0.0, SHARED_FS)
        )
        hours.append(None)
        planned += n_runs

    n_runs_total = sum(g.runs for g in groups)
    run_group = np.repeat(np.arange(len(groups)), [g.runs for g in groups])
    run_start = np.zeros(n_runs_total)
    for i, g in enumerate(groups):
        g.first_run = int(np.searchsorted(run_group, i))
    # Start times: designed groups at their hours, the others by the cycle (one vectorized draw).
    free = np.array([hours[i] is None for i in range(len(groups))])[run_group]
    run_start[free] = start_times(rng, int(free.sum()), span_days=days)
    for i, h in enumerate(hours):
        if h is not None:
            g = groups[i]
            run_start[g.first_run : g.first_run + g.runs] = start_times(rng, g.runs, h, days)
    levels = np.array(JITTER_LEVELS)[rng.choice(len(JITTER_LEVELS), n_runs_total, p=JITTER_P)]
    levels[[g.first_run for g in groups]] = (
        0  # a group's first run at its own time: one-run groups need no variant
    )
    stretch = np.exp(levels * STRETCH_STEP)
    short = rng.random(n_runs_total) < SHORT_SHARE
    byte_scale = rng.uniform(0.3, 1.0, n_runs_total)
    byte_scale[rng.random(n_runs_total) < TEST_RUN_SHARE] *= TEST_RUN_SCALE
    byte_scale[short] *= 0.1
    stretch[short] *= 0.1
    stretch = np.exp(np.round(np.log(stretch) / STRETCH_STEP) * STRETCH_STEP)  # cached levels
    # Designed groups keep their designed demand: bytes follow the run's time (no test runs).
    designed = run_group < n_designed
    designed_runs = int(designed.sum())  # the designed groups' runs come first
    byte_scale[designed] = stretch[designed] * rng.uniform(0.95, 1.0, int(designed.sum()))
    nprocs_factor = np.array(NPROCS_MORE)[rng.integers(len(NPROCS_MORE), size=n_runs_total)]

    # Phases per run (template phases, scaled), shared file system only.
    ph_run, ph_gap, ph_vol, ph_dem, ph_span = [], [], [], [], []
    run_time_of = np.zeros(n_runs_total)
    nprocs_of = np.zeros(n_runs_total, np.int64)
    template: Template | None = None
    for g in groups:
        if not (g.invalid and template is not None and template.seed == g.seed):
            g_rng = np.random.default_rng(g.seed)  # as pass 3 rebuilds it
            template = Template(
                resolve(g.scenario, g_rng),
                g_rng,
                f"{g.fs}/sciteam/{g.who.user}/{Path(g.who.exe).name}",
                config,
            )
            template.seed = g.seed
        runs = np.arange(g.first_run, g.first_run + g.runs)
        run_time_of[runs] = template.built.run_time * stretch[runs]
        nprocs_of[runs] = template.built.nprocs * nprocs_factor[runs]
        if g.fs != SHARED_FS:
            continue
        spans, volume = phases_of(template.rows, template.built.nprocs)
        keep = volume / np.maximum(spans[:, 1] - spans[:, 0], 1e-3) >= MIN_DEMAND * capacity
        spans, volume = spans[keep], volume[keep]
        if not len(volume):
            continue
        k = len(volume)
        gaps = np.diff(np.concatenate([[0.0], spans.ravel()]))[0::2]  # compute before each phase
        s = stretch[runs][:, None]
        if not (template.built.design["period"] > 0).any():
            s = s * gap_rng.uniform(1 - GAP_JITTER, 1 + GAP_JITTER, (len(runs), k))
        ph_run.append(np.repeat(runs, k))
        ph_gap.append((gaps[None, :] * s).ravel())
        s = stretch[runs][:, None]  # the phases themselves: the run's uniform stretch
        dur = (spans[:, 1] - spans[:, 0])[None, :] * s
        vol = volume[None, :] * byte_scale[runs][:, None]
        ph_vol.append(vol.ravel())
        ph_dem.append((vol / dur).ravel())
        ph_span.append(np.stack([spans[None, :, 0] * s, spans[None, :, 1] * s], -1).reshape(-1, 2))
    # Jobs without Darshan: many small jobs, COVERED_BYTES of the bytes are in the logs.
    n_hidden = int(round(n_runs_total * (1 / COVERED_JOBS - 1)))
    # Their bytes against the background's logged bytes (the designed groups are the experiment,
    # not the center's mix), each asking at most HIDDEN_MAX_DEMAND of the capacity.
    logged_bytes = float(sum(v[~(r < designed_runs)].sum() for v, r in zip(ph_vol, ph_run)))
    hidden_start = start_times(rng, n_hidden, span_days=days)
    hidden_dur = np.exp(rng.uniform(np.log(10), np.log(1800), n_hidden))
    hidden_vol = rng.pareto(1.5, n_hidden) + 1
    hidden_vol *= logged_bytes * (1 / COVERED_BYTES - 1) / max(hidden_vol.sum(), 1e-9)
    hidden_dur = np.maximum(hidden_dur, hidden_vol / (HIDDEN_MAX_DEMAND * capacity))
    hidden = np.arange(n_runs_total, n_runs_total + n_hidden)
    ph_run.append(hidden)
    ph_gap.append(np.full(n_hidden, 60.0))
    ph_vol.append(hidden_vol)
    ph_dem.append(hidden_vol / hidden_dur)
    ph_span.append(np.stack([np.full(n_hidden, 60.0), 60.0 + hidden_dur], 1))
    all_start = np.concatenate([run_start, hidden_start])
    run_ix = np.concatenate(ph_run)
    order = np.argsort(run_ix, kind="stable")  # phases of a run consecutive, in order
    run_ix = run_ix[order]
    gap, vol, dem = (np.concatenate(a)[order] for a in (ph_gap, ph_vol, ph_dem))
    span = np.concatenate(ph_span)[order]
    del ph_run, ph_gap, ph_vol, ph_dem, ph_span, order  # the concatenated copies are kept

    # ---- 2. simulate the shared file system
    sim_began = time.process_time()
    outcome = simulate(run_ix, all_start, gap, vol, dem, cap, n_runs_total + n_hidden)
    sim_cpu = time.process_time() - sim_began
    slowdown = outcome.slowdown
    slowdown = np.where(np.abs(slowdown - 1) < 1e-6, 1.0, slowdown)  # event times' float rounding
    phase_lo = np.searchsorted(run_ix, np.arange(n_runs_total + n_hidden))
    phase_hi = np.searchsorted(run_ix, np.arange(n_runs_total + n_hidden), side="right")
    job_ids = 1_000_000 + np.argsort(np.argsort(all_start, kind="stable"), kind="stable")
    np.savez_compressed(
        out / "unseen.npz",
        job_id=job_ids[n_runs_total:],
        start=YEAR_START + hidden_start,
        end=YEAR_START + outcome.end[np.searchsorted(run_ix, hidden)],
        bytes=hidden_vol,
    )
    # Hours in which contention bound (some run throttled): from the throttled runs' phases.
    slowed_runs = np.flatnonzero(slowdown > SLOWED)
    bound = np.zeros(days * 24 + 48, bool)
    for r in slowed_runs.tolist():
        for p in range(phase_lo[r], phase_hi[r]):
            if outcome.end[p] - outcome.start[p] > (span[p, 1] - span[p, 0]) * SLOWED:
                bound[int(outcome.start[p] // 3600) : int(outcome.end[p] // 3600) + 1] = True

    # ---- 3. write
    writer = _Writer(out, set())
    summary = YearSummary()
    fmt_rng = np.random.default_rng([seed, 54, 1])
    id_cache: dict[str, int] = {}
    written: Template | None = None
    for g in groups:
        if len(id_cache) > ID_CACHE_LIMIT:
            id_cache.clear()
        g_rng = np.random.default_rng(g.seed)
        scenario = resolve(g.scenario, g_rng)
        if g.invalid and written is not None and written.seed == g.seed:  # the same broken records
            template = written
            scenario = dataclasses.replace(template.scenario, invalid=g.invalid, name=g.scenario.name)
            template.scenario = scenario
        else:
            template = Template(
                scenario,
                g_rng,
                f"{g.fs}/sciteam/{g.who.user}/{Path(g.who.exe).name}",
                config,
                times=g.invalid is None,
            )
            template.seed = g.seed
        written = template
        described = params(scenario)
        base_rows = template.rows
        variants: dict[tuple[Any, ...], tuple[F.DarshanLog, T.Facts, float]] = {}
        variant_facts: dict[tuple[Any, ...], T.Facts] = {}
        heaviest = g.first_run + int(np.argmax(byte_scale[g.first_run : g.first_run + g.runs]))
        for r in range(g.first_run, g.first_run + g.runs):
            summary.logs += 1
            fmt = choose_format(fmt_rng, allow_legacy=g.invalid is None, exotic=0.03)
            start = YEAR_START + int(run_start[r])
            job = make_job(
                g.who.uid,
                int(job_ids[r]),
                start,
                float(run_time_of[r]),
                int(nprocs_of[r]),
                f"{g.who.exe} -i in.{r - g.first_run}",
                fmt,
            )
            job.mounts = list(MOUNTS)
            lo, hi = phase_lo[r], phase_hi[r]
            # the run's start stays: the computation before the first phase takes what it took
            knots_from = np.concatenate([[0.0], span[lo:hi].ravel()]) if hi > lo else np.zeros(0)
            knots_to = (
                np.concatenate(
                    [
                        [0.0],
                        np.stack(
                            [outcome.start[lo:hi] - all_start[r], outcome.end[lo:hi] - all_start[r]], 1
                        ).ravel(),
                    ]
                )
                if hi > lo
                else np.zeros(0)
            )
            s_run = float(stretch[r])
            # Warped wherever the phases did not run as the template has them (slowed, or an
            # aggressor asking more than the capacity even alone).
            warped = bool(
                hi > lo and np.any(np.abs(knots_to - knots_from) > 1e-6 * np.maximum(knots_from, 1.0))
            )
            scale = float(byte_scale[r])
            if g.invalid is None and (warped or s_run != 1.0):
                if warped:
                    kf, kt, key = knots_from, knots_to, None
                else:  # only jitter: a few stretch levels per group, each built once
                    level = round(float(np.log(s_run)) / STRETCH_STEP)
                    s_run = float(np.exp(level * STRETCH_STEP))
                    kf, kt, key = np.zeros(0), np.zeros(0), (level, fmt.legacy, fmt.posix, fmt.stdio)

                def warp(
                    t: np.ndarray, kf: np.ndarray = kf, kt: np.ndarray = kt, s: float = s_run
                ) -> np.ndarray:
                    return _warp(np.asarray(t) * s, kf, kt)

                if key is None or key not in variants:
                    known = None if key is None else variant_facts.get(key[:2])
                    made = _variant(
                        template, base_rows, scenario, warp, job, fmt, config, id_cache, s_run, warped, known
                    )
                    if key is not None:  # facts depend on the level and 2.x or not, the log on the format
                        variants[key] = made
                        variant_facts[key[:2]] = made[1]
                else:
                    made = variants[key]
                log1, facts, run_time = made
                job = dataclasses.replace(
                    job,
                    end=float(job.start + run_time - (1 if fmt.version != "3.41" else 0)),
                    run_time=run_time,
                )
                log = scaled(log1, job, scale)
                template.last_log = log
                data, families = write(log, fmt, FAST_ZLIB), T.families(facts, config, scale)
            else:
                data, families = template.run(scale, fmt, job, fmt_rng, id_cache, level=FAST_ZLIB)
                run_time = float(run_time_of[r])
            day = datetime.fromtimestamp(start, UTC)
            stem = (
                f"{g.who.user}_{Path(g.who.exe).name}_id{job_ids[r]}_"
                f"{day.month}-{day.day}-{start % 86_400}_1{fmt.suffix}"
            )
            folder, name = writer.place(day, stem)
            record = truth_record(
                name,
                scenario,
                g.who,
                r == heaviest,
                families,
                {
                    **described,
                    "format": fmt.describe(),
                    "scale": float(byte_scale[r]),
                    "run_time": run_time,
                    "nprocs": int(nprocs_of[r]),
                },
            )
            if g.invalid is None:
                record["io"] = template.perf()
            by = [{"job_id": str(int(job_ids[o])), "share": round(sh, 4)} for o, sh in shares(outcome.by, r)]
            planned_io = float(outcome.planned_io_time[r])
            io_time = float(outcome.io_time[r])
            moved = float(vol[lo:hi].sum())
            record["contention"] = {
                "slowed": bool(slowdown[r] > SLOWED),
                "slowdown": float(slowdown[r]),
                "by": by,
                "demand_bps": moved / planned_io if planned_io > 0 else 0.0,
                "got_bps": moved / io_time if io_time > 0 else 0.0,
                "group_sensitivity": g.sensitivity,
                "effect": g.effect,
                "fs": g.fs,
                "io_time": io_time,
                "uncontended_io_time": planned_io,
            }
            record["job_id"] = str(int(job_ids[r]))
            record["start"], record["end"] = float(start), float(start + run_time)
            writer.write(folder, stem, data, record)
            if g.invalid:
                summary.invalid += 1
        summary.groups += 1
    writer.close()
    summary.seconds = time.perf_counter() - began
    summary.cpu_seconds = time.process_time() - began_cpu
    has_io = np.bincount(run_ix, vol, n_runs_total + n_hidden)[:n_runs_total] >= NONTRIVIAL_BYTES
    slowed_share = float((slowdown[:n_runs_total] > SLOWED).mean()) if n_runs_total else 0.0
    result = {
        **summary.as_dict(),
        "null": null,
        "capacity_bps": None if null else capacity,
        "jobs_without_darshan": n_hidden,
        "phases": int(len(run_ix)),
        "simulation_cpu_seconds": sim_cpu,
        "slowed_share": slowed_share,
        # Beacon's base: runs with non-trivial I/O (NONTRIVIAL_BYTES or more on the shared mount)
        "slowed_share_nontrivial_io": float(
            (slowdown[:n_runs_total][has_io] > SLOWED).mean() if has_io.any() else 0.0
        ),
        "slowed_over_10pct_share": float((slowdown[:n_runs_total] > 1.1).mean()) if n_runs_total else 0.0,
        "hours_bound_share": float(bound[: days * 24].mean()),
    }
    (out / "contention.json").write_text(__import__("json").dumps(result, indent=2) + "\n")
    return result


def _variant(
    template: Template,
    rows: np.ndarray,
    scenario: Scenario,
    warp: Any,
    job: F.Job,
    fmt: Any,
    config: Config,
    id_cache: dict[str, int],
    stretch: float = 1.0,
    contended: bool = False,
    known: T.Facts | None = None,
) -> tuple[F.DarshanLog, T.Facts, float]:
    """A run's log at byte scale 1 and its label facts (``known``: already computed for
    these times), its records' times warped."""
    new = rows.copy()
    for name in TIME_STAMPS:
        moved = new[name] > 0
        new[name] = np.where(moved, warp(new[name]), new[name])
    run_time = float(max(warp(np.array([template.built.run_time]))[0], new["close_end"].max() + 1e-3, 1.0))
    new = add_times(new, template.built.nprocs, scenario.dxt_busy)
    table = FileTable(rows=[new], paths=template.built.table.paths)
    heatmap = template.built.heatmap
    if heatmap is not None:
        heatmap = _warp_heatmap(heatmap, warp, run_time)
    log = dataclasses.replace(
        darshan_log(job, table, fmt, id_cache, int(drawn(scenario.dxt)), scenario.dxt_busy), heatmaps=heatmap
    )
    if known is not None:
        return log, known, run_time
    design = template.built.design.copy()
    design["start"], design["end"] = warp(design["start"]), warp(design["end"])
    design["period"] *= stretch  # a uniform stretch (jitter) keeps the bursts periodic
    facts = T.facts(
        new, template.built.table.paths, design, run_time, config, fmt.legacy, scenario.partial, heatmap
    )
    if contended:  # bursts stretched unevenly are no longer a designed period: leave the label uncalled
        for direction in ("read", "write"):
            if (design["period"][design["direction"] == direction] > 0).any():
                facts.periodic[direction] = {}
    return log, facts, run_time


__all__ = ["generate_contention", "designs", "start_times", "phases_of", "INVALID_REASONS"]


def designed_demand(scenario_params: dict[str, Any]) -> dict[str, float]:
    """What a group asks of the shared file system by kind, in bytes (a truth line's
    ``params``): its phases' and periodic bursts' reads and writes, and its metadata
    requests at ``META_COST_BYTES`` each, as the simulation charges them."""
    scale = float(scenario_params.get("volume") or 1.0)
    out = {"read": 0.0, "write": 0.0, "metadata": 0.0}
    for ph in scenario_params.get("phases") or ():
        out[str(ph["direction"])] += float(ph["volume"]) * scale
    run_time = float(scenario_params.get("run_time") or 0.0)
    for p in scenario_params.get("periodic") or ():
        bursts = float(p.get("count") or 0.0) or run_time / max(float(p.get("period") or 0.0), 1e-9)
        out[str(p["direction"])] += float(p.get("burst_bytes") or 0.0) * bursts
    for m in scenario_params.get("metadata") or ():
        seconds = float(m["duration"]) or (1.0 - float(m["start"])) * run_time
        out["metadata"] += float(m["rate"]) * seconds * float(m.get("repeat") or 1.0) * META_COST_BYTES
    return out


def designed_layout(scenario_params: dict[str, Any]) -> list[tuple[str, float, float, float]] | None:
    """A group's designed I/O layout, unstretched: ``(direction, start s, end s, bytes)`` of
    each phase and periodic burst of its scenario (a truth line's ``params``), as
    :func:`mosaic.synth.scenarios.build` places them before any contention warps them; the
    noise (``<STDOUT>``, the STDIO input file, bytes a scenario does not design) left out.
    None where the layout is not fixed by the parameters: irregular bursts or jittered
    periods (their times are drawn from the group's own seed)."""
    from mosaic.synth.scenarios import Periodic, burst_times

    if scenario_params.get("irregular") or any(
        float(p.get("jitter") or 0.0) > 0 for p in scenario_params.get("periodic") or ()
    ):
        return None
    fields = {f.name for f in dataclasses.fields(Periodic)}
    periodic = [
        Periodic(**{k: v for k, v in p.items() if k in fields}) for p in scenario_params.get("periodic") or ()
    ]
    rng = np.random.default_rng(0)  # unused: no jitter
    if scenario_params.get("run_time") is None:
        ends = [
            float(burst_times(p, rng)[-1]) + float(p.period) * max(float(p.busy), 0.5)  # type: ignore[arg-type]
            for p in periodic
            if float(p.count)  # type: ignore[arg-type]
        ]
        if not ends:
            return None
        run_time = float(np.ceil(max(ends)))
    else:
        run_time = float(round(float(scenario_params["run_time"])))
    scale = float(scenario_params.get("volume") or 1.0)
    out = [
        (
            str(ph["direction"]),
            float(ph["start"]) * run_time,
            min(float(ph["start"]) + float(ph["duration"]), 1.0) * run_time,
            float(ph["volume"]) * scale,
        )
        for ph in scenario_params.get("phases") or ()
    ]
    for p in periodic:
        times = burst_times(p, rng) if float(p.count) else burst_times(p, rng, run_time)  # type: ignore[arg-type]
        ends_ = np.minimum(times + float(p.busy) * float(p.period), run_time)  # type: ignore[arg-type]
        out += [(p.direction, float(a), float(b), float(p.burst_bytes)) for a, b in zip(times, ends_)]  # type: ignore[arg-type]
    return out
