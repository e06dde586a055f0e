"""Corpus statistics of SPEC 3.8: distributions, Jaccard and P(B | A).

Everything is accumulated in a stream: per view ("single run", "all runs")
one vector of label weights and one label x label matrix of joint weights.
Memory is O(labels^2) whatever the number of traces. Traces are first
summed per distinct label set (a bit mask; a corpus has few distinct sets),
and the sets are folded into the matrices with one matrix product when
their number reaches a bound or the statistics are read: adding a trace is
a dict update, not numpy work per trace. The Jaccard index and the
conditional co-occurrence both follow from the two arrays:

    J(A, B)  = w(A and B) / (w(A) + w(B) - w(A and B))
    P(B | A) = w(A and B) / w(A)

Label order is `mosaic.analysis.labels.ALL_LABELS` (families kept together,
so related categories sit side by side in heatmaps). Distributions list every
label, zero or not, so tables keep a fixed shape; the Jaccard and conditional
matrices list only labels carried by at least one trace in either view (the
same labels in both views), so heatmaps stay readable.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from mosaic.analysis.labels import ALL_LABELS, PERIODICITY
from mosaic.config import DEFAULT
from mosaic.directions import DIRECTIONS

VIEWS = ("single_run", "all_runs")

# B holds by definition whenever A does: such pairs are not "noteworthy".
IMPLIED_BY_DEFINITION = frozenset(
    [(f"{d}_{p}", f"{d}_periodic") for d in DIRECTIONS for p in PERIODICITY if p != "periodic"]
    + [("metadata_high_density", "metadata_multiple_spikes")]
)

_INDEX = {label: i for i, label in enumerate(ALL_LABELS)}
_MAX_PENDING_SETS = 4096  # distinct label sets held before folding them into the matrices


class CorpusStats:
    """Streaming accumulator of category statistics over categorized traces.

    Pipeline semantics: a representative adds ``single_weight=1`` and
    ``all_weight=`` its group's run count; with ``--all-runs`` every run adds
    ``all_weight=1`` and only representatives add ``single_weight=1``.
    """

    def __init__(self) -> None:
        n = len(ALL_LABELS)
        self._total = np.zeros(len(VIEWS))
        self._counts = np.zeros((len(VIEWS), n))
        self._joint = np.zeros((len(VIEWS), n, n))
        self._pending: dict[int, list[float]] = {}  # label-set bit mask -> weights per view

    def add(self, categories: Iterable[str], single_weight: float, all_weight: float) -> None:
        """Count one trace carrying `categories` (unknown labels are an error)."""
        weights = (float(single_weight), float(all_weight))
        if not all(math.isfinite(w) and w >= 0 for w in weights):
            raise ValueError(f"weights must be finite and >= 0, got {list(weights)}")
        mask = 0
        for category in categories:
            try:
                mask |= 1 << _INDEX[category]
            except KeyError:
                raise ValueError(f"unknown category {category!r}") from None
        pending = self._pending.get(mask)
        if pending is None:
            if len(self._pending) == _MAX_PENDING_SETS:
                self._flush()
            self._pending[mask] = list(weights)
        else:
            pending[0] += weights[0]
            pending[1] += weights[1]

    def _flush(self) -> None:
        """Fold the pending label sets in: counts += W^T X, joint_v += X^T diag(w_v) X."""
        if not self._pending:
            return
        masks = np.fromiter(self._pending, dtype=np.int64, count=len(self._pending))
        weights = np.array(list(self._pending.values()))
        rows = ((masks[:, None] >> np.arange(len(ALL_LABELS))) & 1).astype(float)
        self._total += weights.sum(axis=0)
        self._counts += weights.T @ rows
        for v in range(len(VIEWS)):
            self._joint[v] += (rows * weights[:, v, None]).T @ rows
        self._pending.clear()

    def merge(self, other: CorpusStats) -> CorpusStats:
        """Fold in another accumulator (e.g. one per worker batch)."""
        self._flush()
        other._flush()
        self._total += other._total
        self._counts += other._counts
        self._joint += other._joint
        return self

    def to_dict(self) -> dict[str, Any]:
        """The `distributions`, `jaccard` and `conditional` parts of summary.json."""
        self._flush()
        present = np.flatnonzero(self._counts.sum(axis=0) > 0)
        labels = [ALL_LABELS[i] for i in present]
        out: dict[str, Any] = {"distributions": {}, "jaccard": {}, "conditional": {}}
        for v, view in enumerate(VIEWS):
            counts = self._counts[v, present]
            joint = self._joint[v][np.ix_(present, present)]
            union = counts[:, None] + counts[None, :] - joint
            out["distributions"][view] = {
                "traces": float(self._total[v]),
                "counts": dict(zip(ALL_LABELS, self._counts[v].tolist(), strict=True)),
            }
            out["jaccard"][view] = {"labels": labels, "matrix": _safe_ratio(joint, union)}
            out["conditional"][view] = {"labels": labels, "matrix": _safe_ratio(joint, counts[:, None])}
        return out


def _safe_ratio(numerator: np.ndarray, denominator: np.ndarray) -> list[list[float]]:
    """numerator / denominator, 0 where the denominator is 0 (JSON has no NaN)."""
    denominator = np.broadcast_to(denominator, numerator.shape)
    ratio = np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)
    listed: list[list[float]] = ratio.tolist()
    return listed


def stability_summary(
    shares: Iterable[float], bins: int = DEFAULT.stability_histogram_bins
) -> dict[str, Any]:
    """Per-application stability (share of runs categorized like the representative).

    Returns count, mean, median and a histogram over [0, 1] (`bins` equal
    bins, the last one closed, so a share of exactly 1 counts in it).
    """
    values = np.asarray(list(shares), dtype=float)
    if values.size and (np.any(values < 0) or np.any(values > 1) or not np.all(np.isfinite(values))):
        raise ValueError("stability shares must lie in [0, 1]")
    counts, edges = np.histogram(values, bins=bins, range=(0.0, 1.0))
    return {
        "count": int(values.size),
        "mean": float(values.mean()) if values.size else None,
        "median": float(np.median(values)) if values.size else None,
        "histogram": {"edges": edges.tolist(), "counts": counts.tolist()},
    }


def noteworthy_correlations(
    conditional: dict[str, Any],
    distributions: dict[str, Any],
    min_p: float = DEFAULT.correlation_min_probability,
    min_support: float = DEFAULT.correlation_min_support,
) -> list[dict[str, Any]]:
    """Pairs with P(B | A) >= min_p carried together by >= min_support of traces.

    `conditional` and `distributions` are one view of `CorpusStats.to_dict()`
    (e.g. ``d["conditional"]["single_run"]``). Pairs where B follows from A by
    definition (``write_periodic_minute`` => ``write_periodic``) are left out.
    Strongest first: by probability, then support, then label order.
    """
    labels = conditional["labels"]
    total = distributions["traces"]
    if not labels or total <= 0:
        return []
    p = np.asarray(conditional["matrix"], dtype=float)
    weight_a = np.array([distributions["counts"][a] for a in labels], dtype=float)
    support = p * weight_a[:, None] / total
    rows, cols = np.nonzero((p >= min_p) & (support >= min_support))
    found = [
        {"if": labels[i], "then": labels[j], "probability": float(p[i, j]), "support": float(support[i, j])}
        for i, j in zip(rows.tolist(), cols.tolist(), strict=True)
        if i != j and (labels[i], labels[j]) not in IMPLIED_BY_DEFINITION
    ]
    return sorted(found, key=lambda c: (-c["probability"], -c["support"]))
