"""Contention sensitivity per application (SPEC 3.11.1): pure numpy/scipy, no I/O.

One application (a profile group) is a set of runs, each with its normalized I/O time
(seconds per byte moved: :func:`normalized_time`) and the load the other jobs put on its
file systems while it did I/O (bytes/s). The deciding statistic is Spearman's rank
correlation, one-sided (a sensitive application is slower under more load), its p-value
asymptotic from ``contention_permutation_below`` runs up and from a seeded permutation
below, corrected by Benjamini-Hochberg across the applications tested. Pearson, distance
correlation and normalized mutual information are reported beside it and decide nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.special

from mosaic.config import Config

SENSITIVE = "sensitive"
INSENSITIVE = "insensitive"
NOT_EXPOSED = "not exposed"
NOT_ENOUGH = "not enough runs"
INCONCLUSIVE = "inconclusive"  # tested, not significant, and the slope not bounded near 0
LABELS = (SENSITIVE, INSENSITIVE, NOT_EXPOSED, NOT_ENOUGH, INCONCLUSIVE)
BOOTSTRAP_CHUNK = 128  # resamples a step (bounds the bootstrap's memory at 128 x n floats)


@dataclass(frozen=True)
class GroupRuns:
    """The measured runs of one application: arrays of one length."""

    group_key: str
    io_time: np.ndarray  # seconds
    io_bytes: np.ndarray  # bytes moved (read + write)
    load: np.ndarray  # other jobs' bytes/s during its I/O


def normalized_time(io_time: np.ndarray, io_bytes: np.ndarray) -> np.ndarray:
    """Seconds per byte; NaN where the time is unknown (NaN), not positive, or no byte moved."""
    t = np.asarray(io_time, dtype=np.float64)
    b = np.asarray(io_bytes, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = t / b
    out[~(np.isfinite(out) & (b > 0) & (t > 0))] = np.nan
    return out


def _ranks(values: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(values)`` (average ranks of ties, NaN anywhere: all NaN), in
    numpy: importing scipy.stats costs ~1 s of CPU a run, and ranks are half-integers, the
    same bits by any exact rule."""
    x = np.asarray(values).ravel()
    if x.size == 0:
        return np.zeros(0)
    if np.issubdtype(x.dtype, np.floating) and np.isnan(x).any():
        return np.full(x.size, np.nan)
    order = np.argsort(x, kind="mergesort")
    ordered = x[order]
    new = np.ones(x.size, bool)
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    bounds = np.append(np.flatnonzero(new), x.size)  # each tie group's sorted positions [a, b)
    average = (bounds[:-1] + bounds[1:] + 1) / 2.0  # the mean of ranks a + 1 .. b
    ranks = np.empty(x.size)
    ranks[order] = average[np.cumsum(new) - 1]
    return ranks


def spearman_greater(
    x: np.ndarray, y: np.ndarray, permutation_below: int, permutations: int, rng: np.random.Generator
) -> tuple[float, float, str]:
    """Spearman's rho of (x, y) and its one-sided p (H1: rho > 0), with the method used.

    From ``permutation_below`` pairs up: scipy's asymptotic t approximation. Below: the
    share of seeded permutations of y's ranks whose rho reaches the observed one, counted
    as (1 + hits) / (1 + permutations), so p is never 0 and its resolution is
    1 / (1 + permutations). NaN rho (a constant side) gives p = 1.
    """
    n = len(x)
    rx, ry = _ranks(x), _ranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denominator = math.sqrt(float(rx @ rx) * float(ry @ ry))
    if n < 3 or denominator == 0.0:
        return math.nan, 1.0, "none"
    rho = float(rx @ ry) / denominator
    if n >= permutation_below:
        # scipy.stats.spearmanr(alternative="greater")'s asymptotic p: Student's t, n - 2 dof
        if rho >= 1.0:
            return rho, 0.0, "asymptotic"
        t = rho * math.sqrt((n - 2) / ((1.0 - rho) * (1.0 + rho)))
        return rho, float(scipy.special.stdtr(n - 2, -t)), "asymptotic"  # t.sf(t, n - 2)
    shuffled = rng.permuted(np.broadcast_to(ry, (permutations, n)), axis=1)
    null = (shuffled @ rx) / denominator
    hits = int(np.count_nonzero(null >= rho - 1e-12))
    return rho, (1 + hits) / (1 + permutations), "permutation"


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r (NaN where a side is constant)."""
    xc, yc = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float(xc @ xc) * float(yc @ yc))
    return float(xc @ yc) / denominator if denominator > 0 else math.nan


def benjamini_hochberg(p: Sequence[float]) -> np.ndarray:
    """BH-adjusted p-values (q-values) of the groups tested, in their order."""
    values = np.asarray(p, dtype=np.float64)
    if values.size == 0:
        return values
    if not bool(np.all(values == np.clip(values, 0.0, 1.0))):
        raise ValueError("`ps` must include only numbers between 0 and 1.")
    if values.size <= 1:
        return values
    # scipy.stats.false_discovery_control(values, method="bh")'s steps, in the same order
    order = np.argsort(values)
    m = values.size
    ps = values[order] * (m / np.arange(1, m + 1, dtype=np.float64))
    np.minimum.accumulate(ps[::-1], out=ps[::-1])
    adjusted = np.empty_like(ps)
    adjusted[order] = ps
    return np.clip(adjusted, 0.0, 1.0)


def distance_correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Székely's (V-statistic) distance correlation; O(n^2): callers cap n."""
    if len(x) < 2:
        return math.nan
    a = np.abs(x[:, None] - x[None, :])
    b = np.abs(y[:, None] - y[None, :])
    a = a - a.mean(axis=0) - a.mean(axis=1)[:, None] + a.mean()
    b = b - b.mean(axis=0) - b.mean(axis=1)[:, None] + b.mean()
    dcov = float((a * b).mean())
    dvar = float((a * a).mean()) * float((b * b).mean())
    return math.sqrt(max(dcov, 0.0) / math.sqrt(dvar)) if dvar > 0 else math.nan


def _quantile_codes(values: np.ndarray, bins: int) -> np.ndarray:
    edges = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1]))
    return np.searchsorted(edges, values, side="right")


def normalized_mutual_information(x: np.ndarray, y: np.ndarray) -> float:
    """Mutual information of quantile-binned x and y over the mean of their entropies (the
    arithmetic normalization scikit-learn uses by default); sqrt(n / 5) bins, 2 to 10."""
    n = len(x)
    if n < 4:
        return math.nan
    bins = int(min(10, max(2, math.sqrt(n / 5))))
    cx, cy = _quantile_codes(x, bins), _quantile_codes(y, bins)
    joint = np.bincount(cx * (bins + 1) + cy, minlength=(bins + 1) ** 2).astype(np.float64) / n
    px = joint.reshape(bins + 1, bins + 1).sum(axis=1)
    py = joint.reshape(bins + 1, bins + 1).sum(axis=0)
    outer = np.outer(px, py).ravel()
    nz = joint > 0
    mi = float(np.sum(joint[nz] * np.log(joint[nz] / outer[nz])))
    hx = -float(np.sum(px[px > 0] * np.log(px[px > 0])))
    hy = -float(np.sum(py[py > 0] * np.log(py[py > 0])))
    mean = (hx + hy) / 2
    return mi / mean if mean > 0 else math.nan


def baseline(normalized: np.ndarray, load: np.ndarray, quantile: float) -> float:
    """The application's normalized I/O time at low load: the median over its runs whose
    load is at most the ``quantile`` of its loads (at least one run: the least loaded)."""
    low = load <= np.quantile(load, quantile)
    return float(np.median(normalized[low]))


def slope_interval(
    load: np.ndarray, slowdown: np.ndarray, resamples: int, rng: np.random.Generator
) -> tuple[float, float, float, float]:
    """OLS (intercept, slope) of slowdown on load, and the slope's 95 % percentile interval
    from ``resamples`` seeded bootstrap resamples of the runs (resamples where the load is
    constant have no slope and are left out). NaNs when the load never varies."""
    n = len(load)
    lc = load - load.mean()
    var = float(lc @ lc)
    if n < 3 or var == 0.0:
        return math.nan, math.nan, math.nan, math.nan
    slope = float(lc @ (slowdown - slowdown.mean())) / var
    intercept = float(slowdown.mean() - slope * load.mean())
    slopes: list[np.ndarray] = []
    for first in range(0, resamples, BOOTSTRAP_CHUNK):
        idx = rng.integers(0, n, size=(min(BOOTSTRAP_CHUNK, resamples - first), n))
        lb, sb = load[idx], slowdown[idx]
        lb = lb - lb.mean(axis=1, keepdims=True)
        v = np.einsum("ij,ij->i", lb, lb)
        c = np.einsum("ij,ij->i", lb, sb - sb.mean(axis=1, keepdims=True))
        slopes.append(c[v > 0] / v[v > 0])
    boot = np.concatenate(slopes)
    if boot.size < 10:
        return intercept, slope, math.nan, math.nan
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return intercept, slope, float(lo), float(hi)


def words(busy_slowdown: float, busy_load: float) -> str:
    """What the slope means for a person: the slowdown at a busy hour's load."""
    if not math.isfinite(busy_slowdown):
        return "no slope: the load it met never varied"
    return (
        f"about {busy_slowdown:.1f}x at the load of a busy hour ({busy_load / 1e6:,.0f} MB/s from other jobs)"
    )


def _capped(rng: np.random.Generator, n: int, cap: int) -> np.ndarray:
    return np.arange(n) if n <= cap else np.sort(rng.choice(n, size=cap, replace=False))


def describe(runs: GroupRuns, busy_load: float, config: Config, rng: np.random.Generator) -> dict[str, Any]:
    """Every statistic of one group except its BH q and its final label (see :func:`label`)."""
    normalized = normalized_time(runs.io_time, runs.io_bytes)
    load = np.asarray(runs.load, dtype=np.float64)
    keep = np.isfinite(normalized) & np.isfinite(load) & (load >= 0)
    normalized, load = normalized[keep], load[keep]
    n = int(keep.sum())
    out: dict[str, Any] = {
        "group_key": runs.group_key,
        "n": n,
        "unmeasured": int(len(keep) - n),
        "exposed": int(np.count_nonzero(load > config.contention_exposed_min_bps)),
        "rho": None,
        "p": None,
        "p_method": None,
        "pearson": None,
        "distance_correlation": None,
        "nmi": None,
        "side_sample": None,
        "intercept": None,
        "slope": None,
        "slope_lo": None,
        "slope_hi": None,
        "busy_load": busy_load,
        "busy_slowdown": None,
        "baseline_seconds_per_byte": None,
        "words": None,
    }
    if n < config.contention_min_runs:
        out["reason"] = f"{n} measured runs, fewer than contention_min_runs = {config.contention_min_runs}"
        return out
    if out["exposed"] < config.contention_exposed_min_runs:
        out["reason"] = (
            f"{out['exposed']} of {n} runs met more than {config.contention_exposed_min_bps:g} B/s "
            f"of other jobs' I/O (contention_exposed_min_runs = {config.contention_exposed_min_runs})"
        )
        return out
    rho, p, method = spearman_greater(
        load, normalized, config.contention_permutation_below, config.contention_permutations, rng
    )
    base = baseline(normalized, load, config.contention_baseline_quantile)
    slowdown = normalized / base
    intercept, slope, lo, hi = slope_interval(load, slowdown, config.contention_bootstrap, rng)
    side = _capped(rng, n, config.contention_side_sample)
    busy = intercept + slope * busy_load if math.isfinite(slope) else math.nan
    out.update(
        rho=None if math.isnan(rho) else rho,
        p=p,
        p_method=method,
        pearson=_finite(pearson(load, normalized)),
        distance_correlation=_finite(distance_correlation(load[side], normalized[side])),
        nmi=_finite(normalized_mutual_information(load[side], normalized[side])),
        side_sample=int(side.size),
        intercept=_finite(intercept),
        slope=_finite(slope),
        slope_lo=_finite(lo),
        slope_hi=_finite(hi),
        busy_slowdown=_finite(busy),
        baseline_seconds_per_byte=base,
        words=words(busy, busy_load),
        reason=None,
    )
    return out


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def label(group: dict[str, Any], q: float | None, config: Config) -> str:
    """The group's label from its statistics and BH q (SPEC 3.11.1):

    - ``not enough runs``: fewer than ``contention_min_runs`` measured runs;
    - ``not exposed``: fewer than ``contention_exposed_min_runs`` runs met more than
      ``contention_exposed_min_bps`` of other jobs' I/O;
    - ``sensitive``: BH q <= ``contention_fdr_q`` (one-sided: slower under load);
    - ``insensitive``: not sensitive, and the slope's bootstrap interval times the busy
      load lies inside +-``contention_insensitive_effect`` (the slowdown at a busy hour's
      load is bounded within 1 +- that effect);
    - ``inconclusive``: tested, neither.
    """
    if group["n"] < config.contention_min_runs:
        return NOT_ENOUGH
    if group["exposed"] < config.contention_exposed_min_runs:
        return NOT_EXPOSED
    if q is not None and q <= config.contention_fdr_q and (group["rho"] or 0.0) > 0:
        return SENSITIVE
    lo, hi, busy = group["slope_lo"], group["slope_hi"], group["busy_load"]
    effect = config.contention_insensitive_effect
    if lo is not None and hi is not None and -effect < lo * busy and hi * busy < effect:
        return INSENSITIVE
    return INCONCLUSIVE


def busy_load(loads: np.ndarray, quantile: float) -> float:
    """The load of "a busy hour": the ``quantile`` of every measured run's load (0 if none)."""
    values = np.asarray(loads, dtype=np.float64)
    values = values[np.isfinite(values)]
    return float(np.quantile(values, quantile)) if values.size else 0.0


def sensitivity(
    groups: Sequence[GroupRuns], config: Config, busy: float | None = None
) -> list[dict[str, Any]]:
    """Every group's statistics, BH q and label, in the order given. ``busy`` defaults to
    the busy quantile of all the groups' loads. One generator seeded by ``contention_seed``
    draws for the groups in order, so a result is reproducible for the same input."""
    rng = np.random.default_rng(config.contention_seed)
    if busy is None:
        busy = busy_load(
            np.concatenate([g.load for g in groups]) if groups else np.zeros(0),
            config.contention_busy_quantile,
        )
    described = [describe(g, busy, config, rng) for g in groups]
    tested = [i for i, g in enumerate(described) if g["p"] is not None]
    qs = benjamini_hochberg([described[i]["p"] for i in tested])
    q_of = dict(zip(tested, (float(v) for v in qs)))
    for i, group in enumerate(described):
        group["q"] = q_of.get(i)
        group["label"] = label(group, group["q"], config)
    return described
