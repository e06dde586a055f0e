"""The categories that conflict (SPEC 3.11.3): one joint least squares, pure numpy.

Model, over every victim run i (a run with a slowdown of an application called sensitive:
:mod:`mosaic.interference.analyse` picks them)::

    slowdown_i = c + sum over (v, a) of beta[v, a] * [v in labels(i)] * load_i(a)

where ``load_i(a)`` is the bytes/s that the other runs carrying label ``a`` moved during
run i's I/O (an overlap's bytes spread over run i's I/O seconds). All pairs are fitted
at once, so a label that always comes with another (``write_periodic`` with its period
class) cannot take the other's effect: such a pair is not estimable and shows as null.
The intervals are simultaneous: Bonferroni over the estimable pairs, from the
heteroskedasticity-robust (HC1) covariance. A pair is conflicting when its lower bound is
above 0. A pair with fewer than ``contention_pair_min_runs`` victim runs exposed to it
has no evidence: null, never 0.

The design is sparse (a run carries a few labels and meets a few): it is built from the
non-zero entries, a chunk of runs at a time, and only the normal matrix is held whole.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse
import scipy.special

from mosaic.analysis.labels import PERIODICITY
from mosaic.config import Config
from mosaic.directions import DIRECTIONS

CHUNK_RUNS = 65536
# Labels left out of the fit. Each direction's temporality labels partition its runs, so
# over every run their loads sum to the same vector for reads and for writes (and the
# period classes and busy times sum to their *_periodic): with all of them in, no pair is
# estimable. The labels of no significant I/O are the references (a direction without
# significant I/O is neither slowed nor slowing through it: its effect is fixed at 0), and
# the periodic refinements give way to their parent (*_periodic).
REFERENCE_LABELS = frozenset(
    [f"{d}_insignificant" for d in DIRECTIONS]
    + ["metadata_insignificant_load"]
    + [f"{d}_{p}" for d in DIRECTIONS for p in PERIODICITY if p != "periodic"]
)
SCALE = 1e6  # loads enter the fit in MB/s (conditioning); coefficients are returned per byte/s
ESTIMABLE_TOL = 1e-6


def fitted(labels: Sequence[str]) -> list[str]:
    """A run's labels as the fit takes them (:data:`REFERENCE_LABELS` left out)."""
    return [label for label in labels if label not in REFERENCE_LABELS]


def memberships(label_sets: Sequence[Sequence[str]]) -> tuple[list[str], scipy.sparse.csr_matrix]:
    """The sorted label vocabulary and a sparse runs x labels 0/1 matrix."""
    vocabulary = sorted({label for labels in label_sets for label in labels})
    index = {label: k for k, label in enumerate(vocabulary)}
    rows = np.array([i for i, labels in enumerate(label_sets) for _ in labels], dtype=np.int64)
    cols = np.array([index[label] for labels in label_sets for label in labels], dtype=np.int64)
    matrix = scipy.sparse.csr_matrix(
        (np.ones(rows.size), (rows, cols)), shape=(len(label_sets), len(vocabulary))
    )
    matrix.data[:] = 1.0  # a label listed twice counts once
    return vocabulary, matrix


def _design(mv: scipy.sparse.csr_matrix, loads: scipy.sparse.csr_matrix, na: int) -> scipy.sparse.csr_matrix:
    """Rows of the design: an intercept, then column 1 + v * na + a = [v] x load(a), built
    from each run's victim labels x its aggressor loads (the non-zero entries only)."""
    rows = mv.shape[0]
    mv, loads = mv.tocsr(), loads.tocsr()
    loads.eliminate_zeros()
    v_run = np.repeat(np.arange(rows), np.diff(mv.indptr))
    per_run = np.diff(loads.indptr)
    repeat = per_run[v_run]  # each victim label meets each of its run's aggressor loads
    out_run = np.repeat(v_run, repeat)
    out_v = np.repeat(mv.indices, repeat)
    within = np.arange(out_run.size) - np.repeat(np.cumsum(repeat) - repeat, repeat)
    at = loads.indptr[out_run] + within
    cols = np.concatenate(
        [np.zeros(rows, dtype=np.int64), 1 + out_v.astype(np.int64) * na + loads.indices[at]]
    )
    values = np.concatenate([np.ones(rows), loads.data[at]])
    run_of = np.concatenate([np.arange(rows), out_run])
    return scipy.sparse.csr_matrix((values, (run_of, cols)), shape=(rows, 1 + mv.shape[1] * na))


def fit(
    slowdown: np.ndarray,
    victim_labels: Sequence[Sequence[str]],
    overlap_run: np.ndarray,
    overlap_other: np.ndarray,
    overlap_rate: np.ndarray,
    other_labels: Sequence[Sequence[str]],
    config: Config,
) -> dict[str, Any]:
    """The victim x aggressor matrix.

    ``slowdown`` and ``victim_labels``: one per victim run (index i). ``overlap_*``: one
    row per (victim run index, other run index, bytes/s the other moved during the
    victim's I/O); ``other_labels``: the labels of the other runs, by other index.
    """
    slowdown = np.asarray(slowdown, dtype=np.float64)
    n = slowdown.size
    victims, mv = memberships(victim_labels)
    aggressors, ma = memberships(other_labels)
    nv, na = len(victims), len(aggressors)
    out: dict[str, Any] = {
        "victims": victims,
        "aggressors": aggressors,
        "runs": n,
        "pairs": [],
        "intercept": None,
    }
    if n == 0 or nv == 0 or na == 0:
        out["reason"] = "no victim run with labels and a slowdown, or no labelled overlapping run"
        return out
    rates = scipy.sparse.csr_matrix(
        (np.asarray(overlap_rate, dtype=np.float64) / SCALE, (overlap_run, overlap_other)),
        shape=(n, ma.shape[0]),
    )
    by_label = (rates @ ma).tocsr()  # runs x aggressor labels: MB/s from others with each label
    p = nv * na
    gram = np.zeros((p + 1, p + 1))
    moment = np.zeros(p + 1)
    exposed = np.zeros(p, dtype=np.int64)

    def design(first: int) -> scipy.sparse.csr_matrix:
        last = min(first + CHUNK_RUNS, n)
        return _design(mv[first:last], by_label[first:last], na)

    for first in range(0, n, CHUNK_RUNS):
        x = design(first)
        gram += (x.T @ x).toarray()
        moment += x.T @ slowdown[first : first + CHUNK_RUNS]
        exposed += np.asarray((x[:, 1:] > 0).sum(axis=0)).ravel()
    evidence = np.concatenate([[True], exposed >= config.contention_pair_min_runs])
    keep = np.flatnonzero(evidence)
    g = gram[np.ix_(keep, keep)]
    # one eigendecomposition gives the pseudo-inverse and the rank (g is symmetric PSD)
    w, vectors = np.linalg.eigh(g)
    positive = w > max(float(w.max()), 0.0) * 1e-10
    inverse = (vectors[:, positive] / w[positive]) @ vectors[:, positive].T
    rank = int(positive.sum())
    beta_kept = inverse @ moment[keep]
    estimable_kept = np.abs(np.diag(inverse @ g) - 1.0) < ESTIMABLE_TOL
    # residuals and the robust meat, in a second pass
    meat = np.zeros_like(g)
    for first in range(0, n, CHUNK_RUNS):
        x = design(first)[:, keep]
        e = slowdown[first : first + CHUNK_RUNS] - x @ beta_kept
        meat += (x.T @ x.multiply((e**2)[:, None]).tocsr()).toarray()
    dof = n - rank
    cov = inverse @ meat @ inverse * (n / dof if dof > 0 else math.nan)
    se_kept = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    tested = int(estimable_kept[1:].sum())
    # scipy.stats.norm.ppf's value (ndtri), without importing scipy.stats (~1 s of CPU)
    crit = float(scipy.special.ndtri(1 - config.contention_matrix_alpha / (2 * max(tested, 1))))
    position = {int(k): j for j, k in enumerate(keep)}
    out["intercept"] = float(beta_kept[0])
    out["critical_z"] = crit
    out["tested_pairs"] = tested
    for k in range(p):
        v, a = divmod(k, na)
        pair: dict[str, Any] = {"victim": victims[v], "aggressor": aggressors[a], "runs": int(exposed[k])}
        j = position.get(k + 1)
        if j is None:
            pair.update(coef=None, lo=None, hi=None, conflicting=None,
                        reason=f"{exposed[k]} victim runs met it (contention_pair_min_runs = "
                        f"{config.contention_pair_min_runs})")  # fmt: skip
        elif not estimable_kept[j] or not math.isfinite(se_kept[j]):
            pair.update(coef=None, lo=None, hi=None, conflicting=None,
                        reason="not separable from the labels it always comes with")  # fmt: skip
        else:
            coef, half = float(beta_kept[j]), crit * float(se_kept[j])
            pair.update(coef=coef / SCALE, lo=(coef - half) / SCALE, hi=(coef + half) / SCALE,
                        conflicting=bool(coef - half > 0), reason=None)  # fmt: skip
        out["pairs"].append(pair)
    return out


def sentence(matrix: dict[str, Any], per: float = 1e8) -> str:
    """MOSAIC's question answered in words: the conflicting pairs, strongest first."""
    found = sorted(
        (pair for pair in matrix.get("pairs", []) if pair["conflicting"]),
        key=lambda pair: -float(pair["coef"]),
    )
    if not found:
        return (
            "No pair of categories conflicts at the familywise level: no victim label was measurably slowed."
        )
    parts = [
        f"{pair['aggressor']} jobs slow {pair['victim']} jobs: +{pair['coef'] * per:.2f} to their slowdown "
        f"per {per / 1e6:,.0f} MB/s they move (at least +{pair['lo'] * per:.2f})"
        for pair in found[:5]
    ]
    return "; ".join(parts) + "."
