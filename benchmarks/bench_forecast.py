"""The forecast at submission, backtested (docs/method.md 3.13).

    python -m benchmarks.bench_forecast [--weeks N] [--seed S] [--year FILE.npz]

At each job start of a held-out window (the last week of a synthetic
day/week-cycle load, or of the year in ``--year``), the forecast of the load
over the job's run time against the load that came, beside two baselines:
persistence (the load now, held) and the hour-of-week mean. Scores: Pearson
per start (median over the starts where both series vary), WAPE over all bins
(sum |forecast - truth| / sum truth: no division by a zero bin, as MAPE would
make), and the error in the peak's time (a share of the run time, median).
Then the risk classes against the slowdowns the truth records: a confusion
table of class by slowed (truth slowdown >= ``--slowed``).

The harness takes per-job arrays (:class:`Year`): starts, run times, groups,
time limits, the truth's slowdowns, and each job's truth load over its run
time in ``bins`` bins (the others' bytes/s), with the center's timeline for
the hour-of-week mean and persistence and each group's signature and
sensitivity. :func:`synthetic_year` makes one; the contention year
(``mosaic synth contention``) is read from an ``.npz`` of the same names
(:func:`load_year`) once its generator is merged.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mosaic.forecast import (
    Group,
    RunningJob,
    Settings,
    Signature,
    Timeline,
    expected_length,
    forecast,
    hour_of_week_mean,
    hour_of_week_slot,
    parse_signature,
    place,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))  # mosaic_testing

from mosaic_testing.contracts import signature_body  # noqa: E402

DAY, WEEK = 86400.0, 7 * 86400.0
CLASSES = ("low", "medium", "high", None)


@dataclass
class Year:
    """A year (or a few weeks) of jobs on one shared file system, as arrays.

    ``loads[i]``: the others' load (bytes/s, read + write) that job i met over its run time,
    ``bins`` equal bins; ``timeline``: the center's bytes per ``bin_seconds`` from ``origin``."""

    starts: np.ndarray
    run_times: np.ndarray
    groups: np.ndarray  # index into signatures / sensitivity
    time_limits: np.ndarray  # NaN: unlimited
    slowdowns: np.ndarray
    loads: np.ndarray  # (jobs, bins)
    origin: float
    bin_seconds: float
    timeline: np.ndarray  # bytes per bin, read + write
    signatures: list[dict[str, Any] | None]  # signature bodies (docs/method.md 3.12) per group
    sensitivity: list[tuple[str | None, float | None]]  # (label, slope) per group


def load_year(path: str) -> Year:
    """A :class:`Year` from an ``.npz`` with its field names (signatures and sensitivity as
    JSON strings ``signatures_json``, ``sensitivity_json``)."""
    import json

    data = np.load(path, allow_pickle=False)
    return Year(
        data["starts"],
        data["run_times"],
        data["groups"].astype(np.int64),
        data["time_limits"],
        data["slowdowns"],
        data["loads"],
        float(data["origin"]),
        float(data["bin_seconds"]),
        data["timeline"],
        json.loads(str(data["signatures_json"])),
        [tuple(item) for item in json.loads(str(data["sensitivity_json"]))],
    )


# --------------------------------------------------------------------------- a synthetic year


def cycle(t: np.ndarray) -> np.ndarray:
    """A day and week cycle in [0.1, 1]: busy working hours on weekdays (UTC)."""
    hour = (t % DAY) / 3600.0
    weekday = ((t - 4 * DAY) % WEEK) // DAY < 5
    day = 0.5 - 0.5 * np.cos(2 * np.pi * (hour - 3) / 24)
    return 0.1 + 0.9 * day * np.where(weekday, 1.0, 0.35)


def synthetic_year(
    weeks: int = 4, seed: int = 7, jobs_per_day: float = 60.0, bins: int = 30, bin_seconds: float = 300.0
) -> Year:
    """``weeks`` weeks from a Monday: jobs of four applications start by a day/week cycle, each
    doing its signature (its run time jittered, stretched when the file system is loaded),
    over an unseen background with the same cycle (jobs with no signature). The truth's
    slowdown of a sensitive job is 1 + slope * the others' load during its I/O, with noise."""
    rng = np.random.default_rng(seed)
    origin = 4 * DAY + 2800 * WEEK  # a Monday 00:00 UTC
    span = weeks * WEEK
    k = 20
    u = (np.arange(k) + 0.5) / k
    shapes = [  # (read, write, median run time, label, slope per B/s)
        (np.zeros(k), 4e8 * (u > 0.8), 3 * 3600.0, "insensitive", 0.0),  # a checkpoint at its end
        (3e8 * (u < 0.2), np.zeros(k), 2 * 3600.0, "sensitive", 1.2e-9),  # reads at start
        (np.zeros(k), 1.5e8 * ((u * 4) % 1 < 0.25), 6 * 3600.0, "sensitive", 0.8e-9),  # periodic writer
        (1e8 * np.ones(k), 1e8 * np.ones(k), 1 * 3600.0, "not enough runs", None),  # steady
    ]
    # starts: a Poisson process thinned by the cycle
    candidates = np.sort(rng.uniform(0, span, int(jobs_per_day * weeks * 7 * 2)))
    keep = rng.uniform(size=len(candidates)) < cycle(origin + candidates)
    starts = origin + candidates[keep]
    n = len(starts)
    groups = rng.integers(0, len(shapes), n)
    medians = np.array([s[2] for s in shapes])[groups]
    run_times = medians * rng.lognormal(0.0, 0.1, n)
    time_limits = np.where(rng.uniform(size=n) < 0.3, medians * 1.5, np.nan)
    run_times = np.where(np.isfinite(time_limits), np.minimum(run_times, time_limits), run_times)
    sigs = [parse_signature(signature_body(r, w, m, runs=10, resolution=60.0)) for r, w, m, _, _ in shapes]
    assert all(isinstance(s, Signature) for s in sigs)
    signatures: list[Signature] = [s for s in sigs if isinstance(s, Signature)]
    # the center's timeline: every job's signature over its actual run time + the unseen load
    nbins = int(span // bin_seconds) + int(12 * 3600 // bin_seconds)
    edges = origin + np.arange(nbins + 1) * bin_seconds
    timeline = np.zeros(nbins)
    first = ((starts - origin) // bin_seconds).astype(np.int64)
    last = np.minimum(((starts + run_times - origin) // bin_seconds).astype(np.int64) + 1, nbins)
    width = int((last - first).max()) + 1
    local = first[:, None] + np.arange(width + 1)[None, :]
    local_edges = origin + np.minimum(local, nbins) * bin_seconds
    placed = place(signatures, groups, starts, run_times, local_edges)
    own_bytes = (placed.read + placed.write) * np.diff(local_edges, axis=1)
    index = np.minimum(local[:, :-1], nbins - 1)
    np.add.at(timeline, index.ravel(), own_bytes.ravel())
    mids = (edges[:-1] + edges[1:]) / 2
    unseen = 1.5e8 * cycle(mids) * rng.lognormal(0.0, 0.3, nbins)
    timeline += unseen * bin_seconds
    # each job's truth: the others' load over its run time, `bins` bins
    cum = np.concatenate([[0.0], np.cumsum(timeline)])
    job_edges = starts[:, None] + run_times[:, None] * np.linspace(0, 1, bins + 1)[None, :]
    total = np.diff(np.interp(job_edges, edges, cum), axis=1) / np.diff(job_edges, axis=1)
    own = place(signatures, groups, starts, run_times, job_edges)
    loads = np.maximum(total - (own.read + own.write), 0.0)
    # the truth's slowdown: sensitive jobs by the others' load during their I/O
    cover = own.coverage
    met = (cover * loads).sum(axis=1) / np.maximum(cover.sum(axis=1), 1e-12)
    slopes = np.array([s[4] if s[3] == "sensitive" else 0.0 for s in shapes])[groups]
    slowdowns = (1.0 + slopes * met) * rng.lognormal(0.0, 0.05, n)
    return Year(
        starts,
        run_times,
        groups,
        time_limits,
        slowdowns,
        loads,
        origin,
        bin_seconds,
        timeline,
        [signature_body(r, w, m, runs=10, resolution=60.0) for r, w, m, _, _ in shapes],
        [(label, slope) for _, _, _, label, slope in shapes],
    )


# --------------------------------------------------------------------------- the backtest


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    if np.ptp(a) == 0 or np.ptp(b) == 0:  # a flat series (persistence) has no correlation
        return math.nan
    return float(np.corrcoef(a, b)[0, 1])


def backtest(
    year: Year, held_from: float, held_to: float, slowed: float = 1.5, settings: Settings | None = None
) -> dict[str, Any]:
    """Scores of the forecast and the two baselines at each job start in [held_from, held_to),
    and the confusion table of risk classes against slowed runs."""
    bins = year.loads.shape[1]
    settings = settings or Settings(bins=bins)
    if settings.bins != bins:
        raise ValueError(f"the year's loads have {bins} bins; the settings {settings.bins}")
    groups = {}
    for g, (body, (label, slope)) in enumerate(zip(year.signatures, year.sensitivity)):
        parsed = parse_signature(body) if body is not None else "no signature"
        groups[str(g)] = Group(
            str(g),
            parsed if isinstance(parsed, Signature) else None,
            runs=10,
            label=label,
            slope=slope,
        )
    history = year.origin + (np.arange(len(year.timeline)) + 0.5) * year.bin_seconds < held_from
    timeline = Timeline(
        year.origin,
        year.bin_seconds,
        np.zeros(int(history.sum())),
        year.timeline[history],
        np.zeros(int(history.sum())),
    )
    how = hour_of_week_mean(timeline)["write"]  # read + write together, as the timeline holds it
    held = np.flatnonzero((year.starts >= held_from) & (year.starts < held_to))
    ends = year.starts + year.run_times
    scores: dict[str, dict[str, list[float]]] = {
        name: {"pearson": [], "abs_error": [], "truth": [], "peak": []}
        for name in ("forecast", "persistence", "hour_of_week")
    }
    confusion = {cls: [0, 0] for cls in CLASSES}
    for i in held:
        now, run_time = float(year.starts[i]), float(year.run_times[i])
        live = np.flatnonzero((year.starts < now) & (ends > now))
        running = [
            RunningJob(
                str(j),
                None,
                None,
                str(int(year.groups[j])),
                float(year.starts[j]),
                None if not math.isfinite(year.time_limits[j]) else float(year.time_limits[j]),
            )
            for j in live
        ]
        group = groups[str(int(year.groups[i]))]
        limit = None if not math.isfinite(year.time_limits[i]) else float(year.time_limits[i])
        scored = forecast(
            now,
            group,
            running,
            groups,
            {"*": timeline},
            time_limit=limit,
            settings=settings,
            horizon=run_time,
        )
        ahead = scored["load_ahead"]["*"]
        predicted = np.array(ahead["read"]) + np.array(ahead["write"])
        at = int((now - year.origin) // year.bin_seconds) - 1
        current = year.timeline[max(at, 0)] / year.bin_seconds
        edges = now + np.linspace(0, run_time, bins + 1)
        usual = np.nan_to_num(how[hour_of_week_slot((edges[:-1] + edges[1:]) / 2)])
        truth = year.loads[i]
        for name, values in (
            ("forecast", predicted),
            ("persistence", np.full(bins, current)),
            ("hour_of_week", usual),
        ):
            entry = scores[name]
            entry["pearson"].append(pearson(values, truth))
            entry["abs_error"].append(float(np.abs(values - truth).sum()))
            entry["truth"].append(float(truth.sum()))
            entry["peak"].append(abs(int(np.argmax(values)) - int(np.argmax(truth))) / bins)
        risk = forecast(now, group, running, groups, {"*": timeline}, time_limit=limit, settings=settings)
        confusion[risk["risk"]["class"]][int(year.slowdowns[i] >= slowed)] += 1
    table = {}
    for name, entry in scores.items():
        r = np.array(entry["pearson"])
        table[name] = {
            "pearson_median": float(np.nanmedian(r)) if np.isfinite(r).any() else math.nan,
            "pearson_defined": float(np.isfinite(r).mean()) if len(r) else 0.0,
            "wape": float(np.sum(entry["abs_error"]) / max(np.sum(entry["truth"]), 1e-300)),
            "peak_error_median": float(np.median(entry["peak"])) if entry["peak"] else math.nan,
        }
    rates = {
        str(cls): {
            "starts": sum(counts),
            "slowed": counts[1],
            "slowed_share": counts[1] / sum(counts) if sum(counts) else math.nan,
        }
        for cls, counts in confusion.items()
    }
    return {"starts": len(held), "scores": table, "confusion": rates}


def render(result: dict[str, Any]) -> str:
    lines = [
        f"{result['starts']} held-out starts",
        "",
        "| forecast of the load over the run time | Pearson (median) | starts where defined | WAPE "
        "| peak-time error (median, share of run time) |",
        "|---|---|---|---|---|",
    ]
    for name, row in result["scores"].items():
        lines.append(
            f"| {name} | {row['pearson_median']:.3f} | {row['pearson_defined']:.0%} | {row['wape']:.3f} | "
            f"{row['peak_error_median']:.3f} |"
        )
    lines += ["", "| risk class | starts | slowed | share slowed |", "|---|---|---|---|"]
    for cls, row in result["confusion"].items():
        lines.append(f"| {cls} | {row['starts']} | {row['slowed']} | {row['slowed_share']:.3f} |")
    return "\n".join(lines) + "\n"


def expected_lengths(year: Year) -> np.ndarray:
    """Each job's expected length as the forecast places it (for reports)."""
    medians = [float(body["run_time"]["p50"]) if body is not None else math.nan for body in year.signatures]
    return np.array(
        [
            expected_length(medians[g], None if not math.isfinite(t) else float(t))
            for g, t in zip(year.groups, year.time_limits)
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weeks", type=int, default=5, help="synthetic weeks; the last one is held out")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--slowed", type=float, default=1.5, help="a truth slowdown from this is slowed")
    parser.add_argument("--year", help="an .npz of Year's arrays (the contention year) instead")
    parser.add_argument("--held-from", type=float, help="with --year: the held-out window's start (epoch)")
    parser.add_argument("--held-to", type=float, help="with --year: its end")
    args = parser.parse_args()
    if args.year:
        year = load_year(args.year)
        held_from, held_to = args.held_from, args.held_to
    else:
        year = synthetic_year(args.weeks, args.seed)
        held_from = year.origin + (args.weeks - 1) * WEEK
        held_to = year.origin + args.weeks * WEEK
    print(render(backtest(year, held_from, held_to, args.slowed)))


if __name__ == "__main__":
    main()
