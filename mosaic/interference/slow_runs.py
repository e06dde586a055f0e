"""Slow runs and their cause (SPEC 3.11.2): pure numpy, no I/O.

A run's slowdown is its normalized I/O time (seconds per byte) over its application's at
low load (:func:`mosaic.interference.sensitivity.baseline`). It is ``slow`` when its log
slowdown lies more than ``contention_slow_mads`` robust sigmas (1.4826 x MAD of the log
slowdowns of the application's low-load runs) above 0 and the slowdown is at least
``contention_slow_min_ratio``. The cause is read from the runs that overlapped its I/O
(the timeline's ``run_overlaps``): the other run with the largest share of the others'
bytes when that share is at least ``contention_cause_min_share``, with its traits; else
"many jobs at once" when its load is above the application's
``contention_many_jobs_quantile``; else "not explained".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from mosaic.config import Config
from mosaic.interference.sensitivity import baseline
from mosaic.interference.tables import IDENTITY_KEYS, visible_cause

__all__ = ["IDENTITY_KEYS", "cause", "slowdowns", "top_overlaps", "visible_cause"]

MAD_SIGMA = 1.4826  # MAD to the sigma of a normal distribution
RUN = "run"
MANY = "many jobs at once"
NOT_EXPLAINED = "not explained"
TRAITS = ("n1", "metadata", "bandwidth", "small_requests")
BANDWIDTH_SHARE = 0.5  # a named run with at least this share of the others' bytes carries trait "bandwidth"


def slowdowns(normalized: np.ndarray, load: np.ndarray, config: Config) -> dict[str, Any]:
    """One application's per-run slowdown and slow flag, with the rule's numbers.

    NaN normalized times (unmeasured runs) get NaN slowdown and ``slow`` False. Fewer
    than ``contention_min_runs`` measured runs: no baseline, every slowdown NaN.
    """
    normalized = np.asarray(normalized, dtype=np.float64)
    load = np.asarray(load, dtype=np.float64)
    ok = np.isfinite(normalized) & np.isfinite(load)
    slowdown = np.full(normalized.shape, np.nan)
    slow = np.zeros(normalized.shape, dtype=bool)
    out: dict[str, Any] = {
        "slowdown": slowdown,
        "slow": slow,
        "threshold": None,
        "sigma": None,
        "p95_load": None,
    }
    if int(ok.sum()) < config.contention_min_runs:
        return out
    base = baseline(normalized[ok], load[ok], config.contention_baseline_quantile)
    slowdown[ok] = normalized[ok] / base
    low = ok & (load <= np.quantile(load[ok], config.contention_baseline_quantile))
    logs = np.log(slowdown[low])
    sigma = MAD_SIGMA * float(np.median(np.abs(logs - np.median(logs))))
    threshold = max(math.exp(config.contention_slow_mads * sigma), config.contention_slow_min_ratio)
    slow[ok] = slowdown[ok] >= threshold
    out.update(
        threshold=threshold,
        sigma=sigma,
        baseline=base,
        p95_load=float(np.quantile(load[ok], config.contention_many_jobs_quantile)),
    )
    return out


def top_overlaps(run: np.ndarray, other: np.ndarray, moved: np.ndarray) -> dict[str, np.ndarray]:
    """Per victim run, the other run that moved the most bytes during its I/O (summed over
    file systems), its share of all the others' bytes then, and how many others there were.

    Ties go to the smaller other id (reproducible)."""
    run = np.asarray(run, dtype=np.int64)
    other = np.asarray(other, dtype=np.int64)
    moved = np.asarray(moved, dtype=np.float64)
    empty = {k: np.zeros(0, dtype=np.int64) for k in ("run", "other", "others")}
    if run.size == 0:
        return {**empty, "share": np.zeros(0)}
    pairs, inverse = np.unique(np.stack([run, other], axis=1), axis=0, return_inverse=True)
    pair_bytes = np.bincount(inverse.ravel(), weights=moved, minlength=len(pairs))
    victims, first, count = np.unique(pairs[:, 0], return_index=True, return_counts=True)
    totals = np.add.reduceat(pair_bytes, first)
    order = np.lexsort((pairs[:, 1], -pair_bytes, pairs[:, 0]))  # by run, most bytes, smallest id
    top = order[first]  # pairs are sorted by run, so each run's block starts at the same index
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(totals > 0, pair_bytes[top] / totals, 0.0)
    return {"run": victims, "other": pairs[top, 1], "share": share, "others": count}


def mean_request_bytes(body: Mapping[str, Any] | None) -> float | None:
    """Bytes per request of a run's performance object, where it counts requests: a
    ``mean_request_bytes`` in ``job``, else bytes over ``requests`` (or ``ops``) summed over
    read and write. None where the object does not say."""
    if not body:
        return None
    job = body.get("job") or {}
    direct = job.get("mean_request_bytes")
    if isinstance(direct, (int, float)):
        return float(direct)
    moved = requests = 0.0
    for direction in ("read", "write"):
        part = job.get(direction) or {}
        count = part.get("requests", part.get("ops"))
        if isinstance(count, (int, float)) and count > 0:
            moved += float(part.get("bytes") or 0.0)
            requests += float(count)
    return moved / requests if requests > 0 else None


def run_traits(
    mode: str | None, metadata_per_second: float | None, request_bytes: float | None, config: Config
) -> list[str]:
    """A run's own aggressor traits (the cause's share adds "bandwidth": :func:`cause`)."""
    traits = []
    if mode == "N:1":
        traits.append("n1")
    if metadata_per_second is not None and metadata_per_second > config.contention_metadata_rate:
        traits.append("metadata")
    if request_bytes is not None and request_bytes < config.contention_small_request_bytes:
        traits.append("small_requests")
    return traits


def cause(
    load: float,
    p95_load: float | None,
    top: Mapping[str, Any] | None,
    other_traits: list[str],
    config: Config,
) -> dict[str, Any]:
    """The cause of one slow run. ``top``: its largest overlapping run (``other``, ``share``,
    ``others``) or None when nothing overlapped its I/O; ``other_traits``: that run's traits."""
    if top is not None and top["share"] >= config.contention_cause_min_share:
        traits = list(other_traits)
        if top["share"] >= BANDWIDTH_SHARE:
            traits.append("bandwidth")
        ordered = [t for t in TRAITS if t in traits]
        return {"kind": RUN, "run": int(top["other"]), "share": float(top["share"]),
                "others": int(top["others"]), "traits": ordered}  # fmt: skip
    others = int(top["others"]) if top is not None else 0
    if p95_load is not None and load > p95_load:
        return {"kind": MANY, "others": others, "load": float(load), "p95_load": float(p95_load)}
    return {"kind": NOT_EXPLAINED, "others": others, "load": float(load)}
