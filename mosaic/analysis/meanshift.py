"""Flat-kernel mean shift in numpy, label for label what scikit-learn's ``MeanShift`` gives.

``MeanShift.fit`` costs ~9 ms even on a few points (parameter checks,
neighbor-tree builds, a joblib dispatch, one tree query per seed and
iteration), most of a trace's categorization time. Here every seed climbs at
once, one distance matrix per iteration, with scikit-learn's exact semantics
(``seeds`` given, ``cluster_all=False``, ``max_iter=300``):

* a seed moves to the mean of the points within the bandwidth (boundary
  included) until it moves at most ``1e-3 * bandwidth``; a seed with no point
  in reach is dropped; a mode's intensity is the neighbor count of its last
  step;
* modes are sorted by (intensity, coordinates), highest first, and each keeps
  only if no stronger kept mode lies within the bandwidth;
* a point takes the label of its nearest mode (first on ties) when that mode
  is within the bandwidth, else -1.

Ties and points at exactly one bandwidth decide labels, so distances are
computed the way scikit-learn's neighbor search does for that many points:
brute force (``|a|^2 + |b|^2 - 2 a.b``: BLAS products, the squared norms as
BLAS's dot rounds them) below the size where it switches to a k-d tree, the
plain sum of squared differences above; means are sums in point order. ``tests/analysis/test_meanshift.py``
checks labels against scikit-learn on random, tied and degenerate point sets.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

MAX_ITER = 300  # scikit-learn's default
STOP_FRACTION = 1e-3  # a seed has converged when it moves at most this * bandwidth
BRUTE_BELOW_RADIUS = 12  # NearestNeighbors(radius=..) searches brute force below this many points
BRUTE_BELOW_NEAREST = 4  # NearestNeighbors(n_neighbors=1) does below this many
MAX_BLOCK = 1 << 20  # distance-matrix cells per block (seeds x points)


def _squared_distances(queries: np.ndarray, points: np.ndarray, brute: bool) -> np.ndarray:
    """Squared distances of each query to each point, rounded as scikit-learn's search rounds them."""
    if not brute:
        delta = queries[:, None, :] - points[None, :, :]
        plain: np.ndarray = delta[..., 0] * delta[..., 0] + delta[..., 1] * delta[..., 1]
        return plain
    squared: np.ndarray = -2 * _products(queries, points)
    squared += _squared_norms(queries)[:, None]
    squared += _squared_norms(points)[None, :]
    np.maximum(squared, 0, out=squared)
    return squared


def _products(queries: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``queries @ points.T`` rounded as BLAS's gemm rounds it, as scikit-learn's one-row
    queries are: numpy hands a product with a single row or column to gemv, and a stacked
    one-row product per query to its own loop, which round differently (a point's
    distance to itself came out 1.4e-14). A lone row is doubled so gemm does the work."""
    doubled = [rows if len(rows) > 1 else np.concatenate([rows, rows]) for rows in (queries, points)]
    products: np.ndarray = (doubled[0] @ doubled[1].T)[: len(queries), : len(points)]
    return products


def _squared_norms(rows: np.ndarray) -> np.ndarray:
    """Each row's squared norm as BLAS's dot rounds it (scikit-learn's row norms).

    A stacked product of each row with itself: ``x0 * x0 + x1 * x1`` (what
    ``einsum`` gives) rounds differently from BLAS's fused multiply-add in
    about one case in ten, enough to move a point at exactly one bandwidth.
    """
    norms: np.ndarray = (rows[:, None, :] @ rows[:, :, None])[:, 0, 0]
    return norms


def unique_rows(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(points, axis=0, return_index=True)`` for (n, 2) floats, without its cost.

    np.unique over rows views them as a structured dtype and sorts that
    (~0.2 ms a call on a few rows); a stable lexsort on the two columns gives
    the same rows in the same order (by the first column, then the second;
    -0.0 equals 0.0) and the same first occurrences.
    """
    order = np.lexsort((points[:, 1], points[:, 0]))
    ordered = points[order]
    first = np.ones(len(ordered), dtype=bool)
    first[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    return ordered[first], order[first]


def _climb(seeds: np.ndarray, points: np.ndarray, bandwidth: float) -> tuple[np.ndarray, np.ndarray]:
    """Converged mean and intensity per seed (intensity 0: no point within reach)."""
    radius = bandwidth * bandwidth
    brute = len(points) < BRUTE_BELOW_RADIUS
    stop = STOP_FRACTION * bandwidth
    means = np.array(seeds, dtype=float)
    counts = np.zeros(len(means), dtype=np.int64)
    active = np.arange(len(means))
    block = max(1, MAX_BLOCK // max(len(points), 1))
    for iteration in range(MAX_ITER + 1):
        if not len(active):
            break
        moved = []
        for part in np.array_split(active, -(-len(active) // block)):
            within = _squared_distances(means[part], points, brute) <= radius
            count = within.sum(axis=1)
            sums = np.where(within[..., None], points[None, :, :], 0.0).sum(axis=1)
            new = sums / np.maximum(count, 1)[:, None]
            step = new - means[part]
            distance = np.sqrt((step[:, None, :] @ step[:, :, None])[:, 0, 0])  # np.linalg.norm's dot
            counts[part] = count
            reached = count > 0
            means[part[reached]] = new[reached]
            done = ~reached | (distance <= stop) | (iteration == MAX_ITER)
            moved.append(part[~done])
        active = np.concatenate(moved)
    return means, counts


def _modes(means: np.ndarray, counts: np.ndarray, bandwidth: float) -> np.ndarray:
    """Distinct converged means, strongest first, without those near a stronger one."""
    found = counts > 0
    if not found.any():
        raise ValueError(f"No point was within bandwidth={bandwidth:f} of any seed.")
    means, counts = means[found][::-1] + 0.0, counts[found][::-1]  # +0.0: -0.0 and 0.0 are one key
    means, last = unique_rows(means)  # a repeated mode keeps its last seed's count
    counts = counts[last]
    order = np.lexsort((means[:, 1], means[:, 0], counts))[::-1]
    centers = means[order]
    near = _squared_distances(centers, centers, len(centers) < BRUTE_BELOW_RADIUS) <= bandwidth * bandwidth
    keep = np.ones(len(centers), dtype=bool)
    for i in range(len(centers)):  # greedy by strength: one pass over the few modes
        if keep[i]:
            keep[near[i]] = False
            keep[i] = True
    return centers[keep]


def _nearest(points: np.ndarray, centers: np.ndarray, bandwidth: float) -> np.ndarray:
    """Label of each point's nearest center (first on ties), -1 beyond the bandwidth."""
    labels = np.full(len(points), -1, dtype=np.int64)
    brute = len(centers) < BRUTE_BELOW_NEAREST
    block = max(1, MAX_BLOCK // len(centers))
    for start in range(0, len(points), block):
        chunk = points[start : start + block]
        if brute:  # scikit-learn queries all points in one product here
            squared = -2 * _products(chunk, centers)
            squared += _squared_norms(chunk)[:, None]
            squared += _squared_norms(centers)[None, :]
            np.maximum(squared, 0, out=squared)
            nearest = np.argpartition(squared, 0, axis=1)[:, 0]
        else:
            squared = _squared_distances(chunk, centers, brute=False)
            nearest = np.argmin(squared, axis=1)
        reach = np.sqrt(squared[np.arange(len(chunk)), nearest]) <= bandwidth
        labels[start : start + block][reach] = nearest[reach]
    return labels


def mean_shift_labels(points: ArrayLike, seeds: ArrayLike, bandwidth: float) -> np.ndarray:
    """Cluster label per point (-1: within no mode's bandwidth), as scikit-learn's
    ``MeanShift(bandwidth, seeds=seeds, cluster_all=False).fit(points).labels_``."""
    features = np.ascontiguousarray(points, dtype=float)
    means, counts = _climb(np.asarray(seeds, dtype=float), features, bandwidth)
    return _nearest(features, _modes(means, counts, bandwidth), bandwidth)
