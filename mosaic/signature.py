"""An application's I/O signature from its runs, in the manner of IOSI (SPEC 3.12).

IOSI (Liu et al., FAST '14) recovers an application's bandwidth over its run from
many noisy samples of it. Darshan's series are the job's own (no other job's
bytes in them), so what is left of IOSI is the consensus across runs that differ
by interference, inputs and restarts. For a group of at least
``signature_min_runs`` runs with timing (:mod:`mosaic.series`):

1. outlier runs are dropped by the Local Outlier Factor on (log run time, log
   bytes) (:func:`local_outlier_factor`, scikit-learn's in numpy);
2. each run's read and write bandwidth at ``signature_points`` even points of its
   normalized run time (which corrects every duration to one length);
3. runs are shifted by the lag, at most ``signature_max_lag_share`` of the run,
   that best correlates them with the median run (twice, the median redone);
4. each run's bursts: the approximation of a level-2 discrete Meyer wavelet
   decomposition (PyWavelets) above background + ``signature_burst_level`` of the
   range;
5. bursts agreed across runs on a CLIQUE grid of (centre, share of the run's own
   bytes in that direction): dense units hold bursts of ``ceil(gamma * runs)`` runs, their 3 x 3
   neighbourhood ``ceil(kappa * runs)``; the grid size that puts the most (run,
   burst) pairs in common bursts wins, among 3 widths x 3 heights;
6. each run is warped piecewise-linearly so its common bursts' starts and ends
   fall on the consensus ones (bytes kept: the warp moves the run's cumulative
   bytes), and each point's p10, p50, p90 over the runs is the signature.

Over absolute time too, when the runs' lengths agree ((p90 - p10) / p50 of run
time at most ``signature_length_agree``): no warp, bins of one width.

Public API: :func:`build` (runs -> :class:`Built`, or the reason there is none),
:func:`compute_all` (every group of a store, at the end of ``mosaic run``),
:func:`load_signature` (contract body of a group, or None), :func:`answer`
(the summary lookups and profiles carry), :func:`normalized_cross_correlation`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from mosaic import __version__
from mosaic.activity import DAMAGED
from mosaic.config import Config, Settings
from mosaic.corpus.profiles import SignatureAnswer
from mosaic.series import RECENT_RUNS, RunSeries, load_series

if TYPE_CHECKING:
    from mosaic.corpus.connections import StoreAccess

DIRECTIONS = ("read", "write")
SIGNATURES_TABLE = """
CREATE TABLE IF NOT EXISTS signatures (
    group_key TEXT PRIMARY KEY, runs INTEGER, body TEXT, computed_at REAL);
CREATE TABLE IF NOT EXISTS signature_reasons (
    group_key TEXT PRIMARY KEY, reason TEXT, computed_at REAL);
"""
WAVELET = "dmey"
WAVELET_LEVEL = 2
LOF_MIN_SPREAD = math.log(1.1)  # a run within 10 % of the median run time and volume is never an outlier
GRID_HEIGHTS = (0.05, 0.15, 0.25)  # CLIQUE unit heights (share of a run's bytes), IOSI's range
GRID_WIDTHS = 3  # unit widths tried, from the mean burst length to the mean distance between bursts
SIGNIFICANT = 4  # significant digits of the stored curves
# The groups with at least ``?`` runs whose activity (hence series) the store holds
GROUPS_WITH_RUNS = (
    "SELECT p.group_key FROM run_performance p JOIN run_activity a USING (run) "
    "GROUP BY p.group_key HAVING count(*) >= ?"
)
EDGE_SHARE = 0.01  # a burst starts where 1 % of its bytes have moved and ends at 99 %
SLOWED_MADS = 3.0  # a burst longer than its runs' median by this many MADs was slowed


@dataclass(frozen=True)
class SignatureSettings(Settings):
    signature_min_runs: int
    signature_points: int
    signature_max_lag_share: float
    signature_lof_neighbors: int
    signature_lof_threshold: float
    signature_burst_level: float
    signature_burst_min_share: float
    signature_gamma: float
    signature_kappa: float
    signature_length_agree: float


@dataclass
class Built:
    """A group's signature (``body``, docs/method.md 3.12) or the reason there is none; with the
    intermediate curves the tests and baselines read."""

    body: dict[str, Any] | None
    reason: str | None
    kept: list[int] = field(default_factory=list)  # indices of the runs used
    lagged: dict[str, np.ndarray] = field(default_factory=dict)  # [runs, points] after the lag shift
    warped: dict[str, np.ndarray] = field(default_factory=dict)  # [runs, points] after the warp


# ----- the measure -----


def normalized_cross_correlation(x: np.ndarray, y: np.ndarray, max_lag: int) -> float:
    """max over lags |l| <= max_lag of Pearson's correlation of x[i] and y[i + l] over the
    points both cover (SPEC 3.12). 1 for identical shapes whatever their scale; 0 when
    either is constant."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    best = 0.0
    n = len(x)
    for lag in range(-max_lag, max_lag + 1):
        a, b = (x[: n - lag], y[lag:]) if lag >= 0 else (x[-lag:], y[: n + lag])
        if len(a) < 2:
            continue
        a, b = a - a.mean(), b - b.mean()
        norm = math.sqrt(float(a @ a) * float(b @ b))
        if norm > 0:
            best = max(best, float(a @ b) / norm)
    return best


# ----- steps -----


def local_outlier_factor(points: np.ndarray, neighbors: int) -> np.ndarray:
    """Each point's Local Outlier Factor (Breunig et al. 2000) among ``points`` (rows), with
    ``neighbors`` nearest neighbours (at most all the others), as scikit-learn's
    :class:`~sklearn.neighbors.LocalOutlierFactor` computes it on its training points
    (``-negative_outlier_factor_``; tests/test_signature.py holds the two equal). A group's
    few dozen runs make an n x n distance matrix of nothing; importing scikit-learn (and the
    scipy.stats it pulls in) cost ~1.1 s of CPU a run, 15 % of a 3,000-log year's."""
    n = len(points)
    k = max(1, min(neighbors, n - 1))
    gaps = points[:, None, :] - points[None, :, :]
    distance = np.sqrt((gaps * gaps).sum(axis=-1))
    np.fill_diagonal(distance, np.inf)  # a point is not its own neighbour
    near = np.argsort(distance, axis=1, kind="stable")[:, :k]
    near_distance = np.take_along_axis(distance, near, axis=1)
    reach = np.maximum(near_distance, near_distance[near, k - 1])  # reach-dist to each neighbour
    density = 1.0 / (reach.mean(axis=1) + 1e-10)  # scikit-learn's 1e-10: duplicates stay finite
    scores: np.ndarray = (density[near] / density[:, None]).mean(axis=1)
    return scores


def outliers(run_time: np.ndarray, volume: np.ndarray, neighbors: int, threshold: float) -> np.ndarray:
    """Runs whose LOF score on (log run time, log bytes) is above ``threshold``. Each axis is
    scaled by its spread (the MAD), but never finer than :data:`LOF_MIN_SPREAD`; LOF's k is
    ``neighbors``, at most half the other runs (a k of all of them has no local density). A run
    within :data:`LOF_MIN_SPREAD` of the median run on both axes is never an outlier (LOF is a
    ratio of densities: among identical runs, one 1 % longer scores as high as one 10 times)."""
    n = len(run_time)
    if n < 3:
        return np.zeros(n, bool)
    points = np.column_stack((np.log(run_time), np.log1p(volume)))
    centre = np.median(points, axis=0)
    far: np.ndarray = (np.abs(points - centre) > LOF_MIN_SPREAD).any(axis=1)
    if not far.any():  # no run can be an outlier
        return far
    spread = 1.4826 * np.median(np.abs(points - centre), axis=0)  # the MAD: an outlier does not widen it
    scaled = (points - centre) / np.maximum(spread, LOF_MIN_SPREAD)
    scores = local_outlier_factor(scaled, max(2, min(neighbors, (n - 1) // 2)))
    dropped: np.ndarray = (scores > threshold) & far
    return dropped


def shift_rows(curves: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """Each row moved right by its lag, zeros where it has no value."""
    k = curves.shape[1]
    source = np.arange(k)[None, :] - lags[:, None]
    inside = (source >= 0) & (source < k)
    shifted = np.take_along_axis(curves, source.clip(0, k - 1), axis=1)
    return np.where(inside, shifted, 0.0)


def best_lags(curves: np.ndarray, max_lag: int, rounds: int = 2) -> np.ndarray:
    """Each row's lag in [-max_lag, max_lag] best correlated with the rows' median (the
    median of the shifted rows, ``rounds`` times). The reference is centred, so a row's score
    at a lag is its zero-filled shift times the reference: one FFT correlation for all lags."""
    n, k = curves.shape
    lags = np.zeros(n, np.int64)
    if max_lag == 0 or n < 2:
        return lags
    peak = curves.max(axis=1, keepdims=True)
    shapes = curves / np.where(peak > 0, peak, 1.0)
    size = 1 << int(math.ceil(math.log2(2 * k)))
    spectra = np.fft.rfft(shapes, size, axis=1)
    candidates = np.arange(-max_lag, max_lag + 1)
    for _ in range(rounds):
        reference = np.median(shift_rows(shapes, lags), axis=0)
        reference = reference - reference.mean()
        # correlation[l] = sum_t shapes[t] * reference[t + l]: a row moved right by l
        full = np.fft.irfft(np.conj(spectra) * np.fft.rfft(reference, size), size, axis=1)
        scores = full[:, candidates % size]
        best = candidates[np.argmax(scores, axis=1)]
        lags = np.where(scores.max(axis=1) > scores[:, max_lag] + 1e-12, best, 0)  # ties: no shift
    return lags


def _approximation(curves: np.ndarray) -> np.ndarray:
    """The level-2 approximation of a discrete Meyer decomposition (details dropped), by
    PyWavelets, of each row."""
    import pywt

    coeffs = pywt.wavedec(curves, WAVELET, level=WAVELET_LEVEL, mode="symmetric", axis=-1)
    coeffs = [coeffs[0]] + [np.zeros_like(c) for c in coeffs[1:]]
    out: np.ndarray = pywt.waverec(coeffs, WAVELET, mode="symmetric", axis=-1)[..., : curves.shape[-1]]
    return out


@functools.cache
def _smoothing(points: int) -> np.ndarray:
    """:func:`_approximation` as a matrix (it is linear): its rows are the approximations of
    the unit vectors. One matrix product then smooths all runs (PyWavelets' own convolutions
    cost ~70 us a run)."""
    return _approximation(np.eye(points))


def smooth(curves: np.ndarray) -> np.ndarray:
    """:func:`_approximation` of each row (or of one curve)."""
    out: np.ndarray = curves @ _smoothing(curves.shape[-1])
    return out


def find_bursts_all(curves: np.ndarray, level: float) -> np.ndarray:
    """The bursts of every row of ``curves``: where its smoothed form stands above background
    (its p10) + ``level`` * (peak - background), with at least one raw point above that line.
    Rows (row, start, end, span start, span end): [start, end) trimmed to the first and last
    raw point above the line, [span start, span end) the smoothed span (its bytes)."""
    n, k = curves.shape
    if n == 0:
        return np.zeros((0, 5), np.int64)
    smoothed = smooth(curves)
    background = np.percentile(smoothed, 10, axis=1)
    peak = smoothed.max(axis=1)
    usable = (peak > np.maximum(background, 0.0)) & (curves.max(axis=1) > 0)
    line = (background + level * (peak - background))[:, None]
    above = np.zeros((n, k + 2), bool)
    above[:, 1:-1] = (smoothed > line) & usable[:, None]
    change = np.diff(above.astype(np.int8), axis=1)
    rows, up = np.nonzero(change == 1)
    _, down = np.nonzero(change == -1)  # row-major: each start pairs with the next end
    raw = np.concatenate(([0], np.cumsum((curves > line).ravel())))
    first_at, last_at = rows * k + up, rows * k + down
    count = raw[last_at] - raw[first_at]
    first = np.searchsorted(raw, raw[first_at] + 1, "left") - 1 - rows * k
    last = np.searchsorted(raw, raw[last_at], "left") - rows * k
    keep = count > 0
    out: np.ndarray = np.column_stack((rows, first, last, up, down))[keep].astype(np.int64)
    return out


def find_bursts(curve: np.ndarray, level: float) -> np.ndarray:
    """:func:`find_bursts_all` of one curve: rows (start, end, span start, span end)."""
    return find_bursts_all(curve[None, :], level)[:, 1:]


def _components(overlap: np.ndarray) -> np.ndarray:
    """Connected components of a small symmetric boolean matrix: each node's smallest
    reachable index (labels propagate along edges until they settle)."""
    labels = np.arange(len(overlap))
    while True:
        spread = np.where(overlap, labels[None, :], len(overlap)).min(axis=1)
        merged = np.minimum(labels, spread)
        if (merged == labels).all():
            return np.unique(labels, return_inverse=True)[1]
        labels = merged


def clique(
    x: np.ndarray,
    y: np.ndarray,
    run: np.ndarray,
    runs: int,
    gamma: float,
    kappa: float,
    width: float,
    height: float,
) -> np.ndarray:
    """Cluster label of each point (-1: in no common burst) on one CLIQUE grid."""
    labels = np.full(len(x), -1, np.int64)
    if len(x) == 0:
        return labels
    cx = np.floor(x / width).astype(np.int64)
    cy = np.floor(y / height).astype(np.int64)
    units, unit_of = np.unique(cx * 1_000_003 + cy, return_inverse=True)
    pairs = np.unique(unit_of * (runs + 1) + run)
    density = np.bincount(pairs // (runs + 1), minlength=len(units))
    need = math.ceil(gamma * runs - 1e-9)
    dense = np.flatnonzero(density >= need)
    if len(dense) == 0:
        return labels
    first = np.zeros(len(units), np.int64)
    first[unit_of] = np.arange(len(x))
    ux, uy = cx[first[dense]], cy[first[dense]]
    near = (np.abs(cx[None, :] - ux[:, None]) <= 1) & (np.abs(cy[None, :] - uy[:, None]) <= 1)
    seen = np.zeros((len(dense), runs), bool)
    rows, cols = np.nonzero(near)
    seen[rows, run[cols]] = True
    # floor, not IOSI's ceiling: one run in ten may miss a common burst whatever the group's size
    accepted = seen.sum(axis=1) >= max(math.floor(kappa * runs + 1e-9), need)
    if not accepted.any():
        return labels
    near = near[accepted]
    groups = _components((near.astype(np.int64) @ near.T.astype(np.int64)) > 0)
    member = near.any(axis=0)
    labels[member] = groups[np.argmax(near[:, member], axis=0)]
    return labels


def common_bursts(
    points: np.ndarray, runs: int, gamma: float, kappa: float
) -> tuple[np.ndarray, tuple[float, float]]:
    """Labels of the bursts ``points`` (rows: run, start, end, share; start and end in
    normalized time) on the grid size that puts the most (run, burst) pairs in common
    bursts, and that size."""
    run, start, end, share = points[:, 0].astype(np.int64), points[:, 1], points[:, 2], points[:, 3]
    centre = (start + end) / 2
    best = (np.full(len(run), -1, np.int64), (0.0, 0.0))
    if len(run) == 0:
        return best
    mean_length = max(float(np.mean(end - start)), 1e-3)
    order = np.lexsort((centre, run))
    same = run[order][1:] == run[order][:-1]
    gaps = np.diff(centre[order])[same]
    mean_gap = float(np.mean(gaps)) if len(gaps) else 0.5
    widths = np.linspace(mean_length, max(mean_gap, mean_length), GRID_WIDTHS)
    score = -1
    most = len(run)  # no grid puts more pairs in common bursts than points
    for width in widths:
        for height in GRID_HEIGHTS:
            labels = clique(centre, share, run, runs, gamma, kappa, float(width), height)
            inside = labels >= 0
            pairs = len(np.unique(labels[inside] * (runs + 1) + run[inside]))
            if pairs > score:
                score, best = pairs, (labels, (float(width), height))
            if score == most:  # every burst in a common one: a later grid can only tie
                return best
    return best


def split_merged(labels: np.ndarray, run: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Common bursts that hold m > 1 bursts of most of their runs split into m, by order in
    the run (two of a run's bursts close enough to share a neighbourhood). A run with
    another count (a burst split in two, or one missing) sends each burst to the nearest
    part's median centre."""
    out = labels.copy()
    fresh = int(labels.max()) + 1 if len(labels) else 0
    for label in np.unique(labels[labels >= 0]):
        idx = np.flatnonzero(labels == label)
        runs_in, counts = np.unique(run[idx], return_counts=True)
        m = int(np.round(np.median(counts)))
        if m < 2:
            continue
        if not (counts == m).any():  # no run has the usual count (e.g. 1 and 3): left whole
            continue
        typical = np.isin(run[idx], runs_in[counts == m])
        order = np.lexsort((centre[idx], run[idx]))
        rank = np.empty(len(idx), np.int64)
        ranked = idx[order]
        first = np.searchsorted(run[ranked], run[ranked])
        rank[order] = np.arange(len(idx)) - first
        centres = np.array([np.median(centre[idx][typical & (rank == j)]) for j in range(m)])
        part = np.where(typical, rank, np.argmin(np.abs(centre[idx][:, None] - centres[None, :]), axis=1))
        out[idx] = np.where(part == 0, label, fresh + part - 1)
        fresh += m - 1
    return out


def quantiles(values: np.ndarray, shares: tuple[float, ...]) -> np.ndarray:
    """np.quantile(values, shares, axis=0), its default linear method, from one sort (numpy's
    own partitions once a share)."""
    ordered = np.sort(values, axis=0)
    at = np.asarray(shares) * (len(ordered) - 1)
    low = np.floor(at).astype(np.int64)
    high = np.minimum(low + 1, len(ordered) - 1)
    weight = (at - low).reshape((-1,) + (1,) * (ordered.ndim - 1))
    lower, upper = ordered[low], ordered[high]
    out: np.ndarray = lower + (upper - lower) * weight
    return out


def _percentiles(curves: np.ndarray) -> dict[str, list[float]]:
    p10, p50, p90 = quantiles(curves, (0.1, 0.5, 0.9))
    return {"p10": _rounded(p10), "p50": _rounded(p50), "p90": _rounded(p90)}


def _rounded(values: np.ndarray) -> list[float]:
    """Each value to SIGNIFICANT digits (a short JSON number): scaled by an exact power of ten,
    rounded, and scaled back by a division or product that is exact or correctly rounded."""
    v = np.asarray(values, np.float64)
    safe = np.where(np.isfinite(v) & (v != 0), np.abs(v), 1.0)
    digits = (SIGNIFICANT - 1 - np.floor(np.log10(safe))).astype(np.int64)
    up = np.power(10.0, np.clip(digits, 0, 300))  # digits >= 0: v * 10^d rounded, / 10^d
    down = np.power(10.0, np.clip(-digits, 0, 300))  # digits < 0: v / 10^-d rounded, * 10^-d
    out = np.where(digits >= 0, np.round(v * up) / up, np.round(v / down) * down)
    result: list[float] = np.where(np.isfinite(v), out, 0.0).tolist()
    return result


class Batch:
    """The used runs' step functions side by side, for numpy calls over all of them at once:
    run i's edges as fractions of its run time + 2 i, its running bytes + the bytes of the
    runs before it + i (both increasing across runs), one array each."""

    def __init__(self, runs: Sequence[RunSeries]) -> None:
        self.times = np.array([s.run_time for s in runs])
        self.x = np.concatenate([s.edges / s.run_time + 2 * i for i, s in enumerate(runs)])
        sizes = np.array([len(s.edges) for s in runs])
        self.first = np.cumsum(sizes) - sizes  # index of each run's first edge
        self.last = self.first + sizes - 1
        self.y: dict[str, np.ndarray] = {}
        self.base: dict[str, np.ndarray] = {}
        for d in DIRECTIONS:
            totals = np.array([s.total(d) for s in runs])
            self.base[d] = np.cumsum(totals) - totals + np.arange(len(runs))
            self.y[d] = np.concatenate([s._running[d] + self.base[d][i] for i, s in enumerate(runs)])

    def cumulative(self, direction: str, run: np.ndarray, fraction: np.ndarray) -> np.ndarray:
        """Bytes run[j] moved before fraction[j] of its run time (broadcast)."""
        out: np.ndarray = np.interp(fraction.clip(0, 1) + 2 * run, self.x, self.y[direction])
        moved: np.ndarray = out - self.base[direction][run]
        return moved

    def fraction_at(self, direction: str, run: np.ndarray, moved: np.ndarray) -> np.ndarray:
        """The first fraction of its run time by which run[j] had moved moved[j] bytes (a step
        without bytes is skipped, never a time inside it)."""
        y, x = self.y[direction], self.x
        target = moved + self.base[direction][run]
        step = np.searchsorted(y, target, "left").clip(self.first[run] + 1, self.last[run])
        below, above = y[step - 1], y[step]
        inside = np.where(above > below, (target - below) / np.where(above > below, above - below, 1.0), 1.0)
        out: np.ndarray = x[step - 1] + inside.clip(0, 1) * (x[step] - x[step - 1]) - 2 * run
        return out.clip(0, 1)

    def normalized(self, direction: str, points: int) -> np.ndarray:
        """Bandwidth (bytes/s) of every run at ``points`` even bins of its run time."""
        n = len(self.times)
        grid = np.broadcast_to(np.linspace(0.0, 1.0, points + 1), (n, points + 1))
        moved = np.diff(self.cumulative(direction, np.arange(n)[:, None], grid), axis=1)
        out: np.ndarray = moved / (self.times[:, None] / points)
        return out


_GRIDS = functools.cache(lambda k: np.linspace(0.0, 1.0, k + 1))


def _warp_grid(anchors_run: np.ndarray, anchors_common: np.ndarray, k: int) -> np.ndarray:
    """The fractions of a run's time at k + 1 even points of the common time: piecewise-linear
    through its anchors (a fraction of its run landing on its common fraction; anchors out of
    order are left out)."""
    order = np.argsort(anchors_run, kind="stable")
    r = np.concatenate(([0.0], anchors_run[order], [1.0]))
    c = np.concatenate(([0.0], anchors_common[order], [1.0]))
    # an anchor stays when both its fractions pass every earlier one's (and stay below 1)
    prior_r = np.maximum.accumulate(np.concatenate(([-1.0], r[:-1])))
    prior_c = np.maximum.accumulate(np.concatenate(([-1.0], c[:-1])))
    keep = (r > prior_r) & (c > prior_c) & (r < 1.0) & (c < 1.0)
    keep[0] = keep[-1] = True
    out: np.ndarray = np.interp(_GRIDS(k), c[keep], r[keep])
    return out


def _warped(batch: Batch, direction: str, at: np.ndarray) -> np.ndarray:
    """Each run's own bytes over its own seconds between consecutive warped fractions ``at``."""
    n = len(batch.times)
    moved = np.diff(batch.cumulative(direction, np.arange(n)[:, None], at), axis=1)
    seconds = np.diff(at, axis=1) * batch.times[:, None]
    out: np.ndarray = np.where(seconds > 0, moved / np.where(seconds > 0, seconds, 1.0), 0.0)
    return out


@dataclass
class _Common:
    """One common burst: its contract entry, and each member run's own start and end (seconds)."""

    burst: dict[str, Any]
    runs: np.ndarray  # indices into the used runs
    starts: np.ndarray
    ends: np.ndarray


def unslowed_length(lengths: np.ndarray) -> float:
    """A common burst's length as its runs go unslowed: the mean of its runs' lengths (NaN left
    out) but those past the median + SLOWED_MADS x the MAD. Contention only lengthens I/O, a
    tail to the right, and the computation around a burst jitters its share of the run
    either way: the 25th percentile (this step until 2026-12-02) was biased short by that
    jitter, a plain median or mean long by the slowed runs."""
    v = lengths[np.isfinite(lengths)]
    centre = float(np.median(v))
    spread = 1.4826 * float(np.median(np.abs(v - centre)))
    return float(v[v <= centre + SLOWED_MADS * max(spread, 1e-3 * centre)].mean())


def _layout(common: list[_Common], times: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The common bursts' starts and ends (fractions) in the run as it goes unslowed, and its
    run time: each burst as long as :func:`unslowed_length` of its runs' (IOSI corrects
    durations to the shortest run; contention makes the shortest an outlier), the time between
    two bursts, before the first and after the last the mean of the runs' (in shares of each
    run's time outside its bursts, which contention leaves alone: the mean is the steadier
    estimate there; the median put one designed start of a 9-run group 2.1 % off)."""
    n, m = len(times), len(common)
    start = np.full((n, m), np.nan)
    end = np.full((n, m), np.nan)
    for j, c in enumerate(common):
        start[c.runs, j], end[c.runs, j] = c.starts, c.ends
    # each run in units of its own time outside its bursts: contention does not lengthen it, and
    # it takes the runs' differences of length out of the medians
    free = times - np.nansum(end - start, axis=1)
    scale = np.where(free > 0.05 * times, free, times)[:, None]
    start, end, times = start / scale, end / scale, times / scale[:, 0]
    length = np.array([unslowed_length(column) for column in (end - start).T])
    at = np.empty(m)
    cursor = float(np.nanmean(start[:, 0]))
    for j in range(m):
        if j:
            gaps = start[:, j] - end[:, j - 1]
            gap = (
                float(np.nanmean(gaps))
                if np.isfinite(gaps).any()
                else float(np.nanmean(start[:, j]) - np.nanmean(end[:, j - 1]))
            )
            cursor = max(at[j - 1] + length[j - 1] + gap, at[j - 1])
        at[j] = cursor
    tail = float(np.nanmean(times - end[:, m - 1])) if np.isfinite(end[:, m - 1]).any() else 0.0
    total = max(float(at[-1] + length[-1] + max(tail, 0.0)), 1e-9)
    unslowed = total * float(np.median(scale))
    return at / total, (at + length) / total, unslowed


def build(runs: Sequence[RunSeries], settings: SignatureSettings) -> Built:
    """The signature of one application's runs (SPEC 3.12), or the reason there is none."""
    need = settings.signature_min_runs
    if len(runs) < need:
        plural = "s" if len(runs) != 1 else ""
        return Built(None, f"{len(runs)} run{plural} stored; a signature needs {need} (signature_min_runs)")
    timed = [i for i, s in enumerate(runs) if s.timed]
    if len(timed) < need:
        return Built(
            None,
            f"{len(timed)} of {len(runs)} runs place their bytes in time (DXT, HEATMAP or "
            f"timestamps); a signature needs {need} (signature_min_runs)",
        )
    run_time = np.array([runs[i].run_time for i in timed])
    volume = np.array([runs[i].total("read") + runs[i].total("write") for i in timed])
    dropped = outliers(run_time, volume, settings.signature_lof_neighbors, settings.signature_lof_threshold)
    kept = [i for i, out in zip(timed, dropped) if not out]
    if len(kept) < need:
        return Built(
            None,
            f"{len(kept)} of {len(timed)} timed runs left once {int(dropped.sum())} outliers "
            f"(LOF) are dropped; a signature needs {need} (signature_min_runs)",
        )
    used = [runs[i] for i in kept]
    n, k = len(used), settings.signature_points
    batch = Batch(used)
    raw = {d: batch.normalized(d, k) for d in DIRECTIONS}
    lags = best_lags(raw["read"] + raw["write"], int(settings.signature_max_lag_share * k))
    lagged = {d: shift_rows(raw[d], lags) for d in DIRECTIONS}
    times = batch.times
    common = [c for d in DIRECTIONS for c in _direction_bursts(batch, lagged[d], lags, d, settings)]
    common.sort(key=lambda c: float(np.median(c.starts / times[c.runs])))
    anchors: list[list[tuple[float, float]]] = [[] for _ in range(n)]
    if common:
        starts, ends, unslowed = _layout(common, times)
        for j, c in enumerate(common):
            c.burst["start"], c.burst["duration"] = float(starts[j]), float(ends[j] - starts[j])
            for run, a, b in zip(c.runs, c.starts, c.ends):
                anchors[int(run)] += [(a / times[run], starts[j]), (b / times[run], ends[j])]
    else:
        unslowed = float(np.median(times))
    grids = []
    for i in range(n):
        pairs = np.array(anchors[i], np.float64).reshape(-1, 2)
        grids.append(_warp_grid(pairs[:, 0], pairs[:, 1], k))
    at = np.vstack(grids)
    warped = {d: _warped(batch, d, at) for d in DIRECTIONS}
    p10, p50, p90 = (float(v) for v in np.percentile(times, (10, 50, 90)))
    resolution = max(float(np.median([s.resolution for s in used])), p50 / k)
    body: dict[str, Any] = {
        "runs": n,
        "resolution": resolution,
        "run_time": {"p10": p10, "p50": p50, "p90": p90},
        "normalized": {"points": k, **{d: _percentiles(warped[d]) for d in DIRECTIONS}},
        "bursts": [c.burst for c in common],
        "unslowed_run_time": unslowed,
        "absolute": _absolute(batch, used, k, settings.signature_length_agree),
        "outliers": int(dropped.sum()),
        "untimed": len(runs) - len(timed),
        "sources": sorted({s.source for s in used}),
    }
    return Built(body, None, kept, lagged, warped)


def _direction_bursts(
    batch: Batch, curves: np.ndarray, lags: np.ndarray, direction: str, settings: SignatureSettings
) -> list[_Common]:
    """The common bursts of one direction."""
    n, k = curves.shape
    times = batch.times
    # shares of each run's own bytes: runs of one application moving 0.001x to 1.5x its usual
    # bytes (other inputs) put a burst at one height on the grid (the median run's bytes put
    # the small runs' near 0); a run that missed one of m bursts has its others at m / (m - 1)
    # of theirs, in the same 3 x 3 neighbourhood from m = 3 on the 0.05 grid
    totals = np.maximum(np.diff(np.append(batch.base[direction], batch.y[direction][-1] + 1)) - 1, 1.0)
    found = find_bursts_all(curves, settings.signature_burst_level)
    run = found[:, 0]
    total = totals[run]
    # bytes over the smoothed span, read off the run's own series (before its shift)
    lo = np.where(found[:, 3] == 0, 0.0, (found[:, 3] - lags[run]) / k).clip(0, 1)
    hi = np.where(found[:, 4] == k, 1.0, (found[:, 4] - lags[run]) / k).clip(0, 1)
    before = batch.cumulative(direction, run, lo)
    moved = batch.cumulative(direction, run, hi) - before
    # its start and end, finer than the points: where its bytes pass EDGE_SHARE and 1 - EDGE_SHARE,
    # grown back by the shares left out (exact for a burst of even bandwidth)
    first = batch.fraction_at(direction, run, before + EDGE_SHARE * moved)
    last = batch.fraction_at(direction, run, before + (1 - EDGE_SHARE) * moved)
    grow = (last - first) * EDGE_SHARE / (1 - 2 * EDGE_SHARE)
    keep = moved >= settings.signature_burst_min_share * total
    rows = np.column_stack((run, (first - grow).clip(0, 1), (last + grow).clip(0, 1), moved / total, moved))[
        keep
    ]
    if len(rows) == 0:
        return []
    points = rows
    labels, _ = common_bursts(points[:, :4], n, settings.signature_gamma, settings.signature_kappa)
    labels = split_merged(labels, points[:, 0].astype(np.int64), (points[:, 1] + points[:, 2]) / 2)
    out = []
    for label in np.unique(labels[labels >= 0]):
        member = points[labels == label]
        member = member[np.argsort(member[:, 0], kind="stable")]
        runs_in = member[:, 0].astype(np.int64)
        order, first = np.unique(runs_in, return_index=True)
        own = times[order]
        # a run whose burst split in two counts once: its first start, last end, bytes summed
        starts = np.minimum.reduceat(member[:, 1], first).clip(0, 1) * own
        ends = np.maximum.reduceat(member[:, 2], first).clip(0, 1) * own
        moved = np.add.reduceat(member[:, 4], first)
        seconds = ends - starts
        p10, p50, p90 = (float(v) for v in np.percentile(seconds, (10, 50, 90)))
        burst = {
            "direction": direction,
            "start": 0.0,  # set from the common layout (build)
            "duration": 0.0,
            "bytes": float(np.median(moved)),
            "bandwidth": float(np.median(moved / np.maximum(seconds, 1e-9))),
            "runs": len(order),
            "seconds": {"p10": p10, "p50": p50, "p90": p90},
        }
        out.append(_Common(burst, order, starts, ends))
    return out


def _absolute(batch: Batch, used: Sequence[RunSeries], k: int, agree: float) -> dict[str, Any]:
    """Bandwidth over absolute time (seconds from the start), when the runs' lengths agree."""
    times = batch.times
    p10, p50, p90 = np.percentile(times, (10, 50, 90))
    spread = float((p90 - p10) / p50) if p50 > 0 else math.inf
    if spread > agree:
        return {
            "agree": False,
            "spread": spread,
            "reason": (
                f"run times spread {spread:.3g} ((p90 - p10) / p50) > {agree:g} (signature_length_agree)"
            ),
        }
    resolution = max(float(np.median([s.resolution for s in used])), float(p90) / k)
    points = max(int(math.ceil(float(p90) / resolution)), 1)
    fractions = (np.arange(points + 1) * resolution)[None, :] / times[:, None]
    # past its own end a run moves nothing (fractions above 1 stay at its last byte)
    run = np.arange(len(times))[:, None]
    curves = {d: np.diff(batch.cumulative(d, run, fractions), axis=1) / resolution for d in DIRECTIONS}
    return {
        "agree": True,
        "spread": spread,
        "resolution": resolution,
        "points": points,
        **{d: _percentiles(curves[d]) for d in DIRECTIONS},
    }


# ----- the store -----


def compute_all(store: StoreAccess, config: Config, now: float | None = None) -> dict[str, str]:
    """Every group's signature from its runs' stored activity into ``signatures`` (a group
    now without one loses its row; one whose :func:`basis` is unchanged keeps its row as it
    is); each group of enough runs that has none gets its reason in ``signature_reasons``
    (what lookups say), and the reasons are returned."""
    settings = SignatureSettings.of(config)
    now = time.time() if now is None else now
    reasons: dict[str, str] = {}
    with store._snapshot() as db:
        keys = [row[0] for row in db.execute(GROUPS_WITH_RUNS, (settings.signature_min_runs,))]
    rows: list[tuple[str, int, str, float]] = []
    kept: list[str] = []
    for key in keys:
        try:
            with store._snapshot() as db:
                digest = basis(db, key, config.signature_max_runs, settings)
                stored = db.execute(
                    "SELECT json_extract(body, '$.basis') FROM signatures WHERE group_key = ?", (key,)
                ).fetchone()
                if stored is not None and stored[0] == digest:  # the same runs, settings and code
                    kept.append(key)
                    continue
                runs = [
                    series
                    for _, series in load_series(
                        db, key, config.signature_max_runs, config.signature_series_max_points
                    )
                ]
            built = build(runs, settings)
            if built.body is not None:
                built.body["basis"] = digest
            body = (
                None if built.body is None else json.dumps(built.body, separators=(",", ":"), allow_nan=False)
            )
        except (*DAMAGED, TypeError, IndexError, ZeroDivisionError) as error:
            # a damaged activity or a value no step foresaw: this group has none, the run goes on
            reasons[key] = f"could not be built ({type(error).__name__}: {error})"
            continue
        if built.body is None or body is None:
            reasons[key] = built.reason or ""
            continue
        rows.append((key, built.body["runs"], body, now))
    with store._atomic() as db:
        enough = (settings.signature_min_runs,)
        db.execute(f"DELETE FROM signatures WHERE group_key NOT IN ({GROUPS_WITH_RUNS})", enough)
        db.executemany("DELETE FROM signatures WHERE group_key = ?", [(key,) for key in reasons])
        db.executemany("INSERT OR REPLACE INTO signatures VALUES (?, ?, ?, ?)", rows)
        db.execute("DELETE FROM signature_reasons")
        why = [(key, reason, now) for key, reason in reasons.items()]
        db.executemany("INSERT INTO signature_reasons VALUES (?, ?, ?)", why)
    return reasons


def basis(db: sqlite3.Connection, group_key: str, limit: int, settings: SignatureSettings) -> str:
    """What a group's signature is built from, as a digest: mosaic's version, the settings, and
    the runs it would use (identity, and the size of the activity their series come from; a
    run's identity fixes its log, so its activity). A signature of the same basis is kept as
    it is: a rerun recomputes only the groups whose recent runs changed."""
    rows = db.execute(f"SELECT p.run, length(a.parts) {RECENT_RUNS}", (group_key, limit)).fetchall()
    text = json.dumps([__version__, dataclasses.astuple(settings), [tuple(row) for row in rows]])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_signature(store: StoreAccess | sqlite3.Connection, group_key: str) -> dict[str, Any] | None:
    """The stored signature body of a group (docs/method.md 3.12), or None."""
    if isinstance(store, sqlite3.Connection):
        return _load(store, group_key)
    with store._snapshot() as db:
        return _load(db, group_key)


def _load(db: sqlite3.Connection, group_key: str) -> dict[str, Any] | None:
    row = db.execute("SELECT body FROM signatures WHERE group_key = ?", (group_key,)).fetchone()
    return None if row is None else dict(json.loads(row[0]))


def summary(body: dict[str, Any]) -> dict[str, Any]:
    """What a lookup carries: the counts, run time and bursts, without the curves."""
    return {
        "runs": body["runs"],
        "resolution": body["resolution"],
        "run_time": body["run_time"],
        "unslowed_run_time": body.get("unslowed_run_time", body["run_time"]["p50"]),
        "bursts": body["bursts"],
        "absolute": bool(body.get("absolute", {}).get("agree")),
    }


def answer(db: sqlite3.Connection, group_key: str, min_runs: int) -> SignatureAnswer:
    """``{"signature": summary | None, "reason": why not | None}`` for a group."""
    body = _load(db, group_key)
    if body is not None:
        return {"signature": summary(body), "reason": None}
    (stored,) = db.execute(
        "SELECT count(*) FROM run_performance p JOIN run_activity a USING (run) WHERE p.group_key = ?",
        (group_key,),
    ).fetchone()
    if stored < min_runs:  # first: a reason kept from before a prune would be stale
        reason = f"{stored} runs with their activity stored; a signature needs {min_runs} "
        reason += "(signature_min_runs)"
        return {"signature": None, "reason": reason}
    why = db.execute("SELECT reason FROM signature_reasons WHERE group_key = ?", (group_key,)).fetchone()
    if why is not None:
        return {"signature": None, "reason": str(why[0])}
    return {"signature": None, "reason": "not computed yet (mosaic run computes signatures at its end)"}


def signature_of(db: sqlite3.Connection, group_key: str, min_runs: int) -> dict[str, Any]:
    """``{"body": the whole stored body | None, "reason": why not | None}`` (the pages draw
    the curves, which :func:`answer` leaves out)."""
    body = _load(db, group_key)
    return {"body": body, "reason": None if body is not None else answer(db, group_key, min_runs)["reason"]}
