"""Segmentation and periodicity by mean-shift clustering (SPEC 3.4).

A segment runs from the start of one merged operation to the start of the
next, so a periodic operation shows as segments of comparable duration and
bytes. Comparable means a *relative* difference, hence clustering on
``log(duration)``, ``log(bytes)`` with a bandwidth of ``log(1.25)``.

Mean shift is the slowest step of a trace, so it runs only when a period is
possible at all, and it is seeded the way ``bin_seeding=True`` seeds it (one
seed per occupied grid cell of bandwidth size) but only from cells a periodic
cluster could use (see :func:`cluster`): a few seeds instead of one per
segment. It runs in numpy (:mod:`mosaic.analysis.meanshift`, scikit-learn's
labels without its ~9 ms fixed cost per fit); ``meanshift_implementation =
"sklearn"`` calls scikit-learn's ``MeanShift`` itself, with its Cython
pairwise backend off (for the few points per query here its thread-pool setup
cost ~25 ms a call).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypedDict

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mosaic.analysis import small
from mosaic.analysis.meanshift import mean_shift_labels, unique_rows
from mosaic.config import Settings

NO_CLUSTER = -1


@dataclass(frozen=True)
class MeanShiftSettings(Settings):
    """What mean-shift periodicity reads of the Config (SPEC 3.4)."""

    meanshift_bandwidth: float
    meanshift_min_duration: float
    meanshift_min_bytes: float
    meanshift_implementation: Literal["numpy", "sklearn"]
    min_periodic_segments: int
    periodic_segment_share: float
    periodic_regular_share: float
    min_period_seconds: float
    train_gap_factor: float


class PeriodicOperation(TypedDict):
    """SPEC 3.4 figures of one periodic cluster (plain Python scalars)."""

    cluster: int
    period: float
    occurrences: int
    bytes_per_occurrence: float
    busy_fraction: float
    start: float
    end: float
    segmentation: str  # "all", or "by_volume" (:func:`_volume_series`)
    # seconds the period may be off by its signal's time steps: 0 on operations (their own
    # timestamps), bin / periods spanned on heatmap bursts (bursts.sub_bin_periods)
    period_resolution: float


class Segments(TypedDict):
    """Per segment: its duration, its bytes and its cluster id (NO_CLUSTER: none)."""

    durations: NDArray[np.float64]
    bytes: NDArray[np.float64]
    cluster: NDArray[np.int64]


class Occurrences(TypedDict):
    """Where one periodic operation occurs (for plots)."""

    starts: NDArray[np.float64]
    durations: NDArray[np.float64]


class MeanShiftPeriodicity(TypedDict):
    """What :func:`meanshift_periodicity` returns."""

    periodic: bool
    share: float
    operations: list[PeriodicOperation]
    segments: Segments
    occurrences: list[Occurrences]


def segments(
    starts: ArrayLike, ends: ArrayLike, nbytes: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(duration, bytes) of each segment of start-sorted merged operations.

    The last operation has no successor: its segment takes the previous
    segment's duration, or its own when longer, so a regular series keeps its
    last item.
    """
    begin, finish = np.asarray(starts, dtype=float), np.asarray(ends, dtype=float)
    durations = np.empty(len(begin))
    durations[:-1] = begin[1:] - begin[:-1]
    if len(begin):
        previous = durations[-2] if len(begin) > 1 else 0.0
        durations[-1] = max(previous, finish[-1] - begin[-1])
    return durations, np.asarray(nbytes, dtype=float)


def cluster(durations: np.ndarray, nbytes: np.ndarray, settings: MeanShiftSettings) -> np.ndarray:
    """Mean-shift cluster id per segment (NO_CLUSTER: in no cluster, or not clustered).

    Zero durations and bytes are floored (``meanshift_min_duration``,
    ``meanshift_min_bytes``) so their logarithm stays finite. ``cluster_all``
    is off: a segment farther than the bandwidth from every mode is not
    comparable to any of them and must not be counted in a periodic cluster.

    Members of one cluster lie within one bandwidth of its mode, so within
    two of each other: a segment with fewer than ``min_periodic_segments``
    segments (itself included) within two bandwidths can be in no periodic
    cluster. Such lonely segments seed no search, and when they are too many
    for the direction to reach ``periodic_segment_share`` mean shift does not
    run at all (every id stays NO_CLUSTER).
    """
    features = np.column_stack(
        [
            np.log(np.maximum(durations, settings.meanshift_min_duration)),
            np.log(np.maximum(nbytes, settings.meanshift_min_bytes)),
        ]
    )
    from scipy.spatial import cKDTree  # on first use: mosaic.analysis.IMPORTED_ON_FIRST_USE

    bandwidth = settings.meanshift_bandwidth
    company = cKDTree(features).query_ball_point(features, 2 * bandwidth, return_length=True)
    crowded = company >= settings.min_periodic_segments
    if crowded.sum() < max(settings.periodic_segment_share * len(features), 1):
        return np.full(len(features), NO_CLUSTER, dtype=np.int64)
    seeds = unique_rows(np.round(features[crowded] / bandwidth))[0] * bandwidth
    if settings.meanshift_implementation == "numpy":
        return mean_shift_labels(features, seeds, bandwidth)
    return _sklearn_labels(features, seeds, bandwidth)


def _sklearn_labels(features: np.ndarray, seeds: np.ndarray, bandwidth: float) -> np.ndarray:
    """scikit-learn's labels: the reference :mod:`mosaic.analysis.meanshift` reproduces."""
    from sklearn import config_context
    from sklearn.cluster import MeanShift

    with config_context(
        assume_finite=True, skip_parameter_validation=True, enable_cython_pairwise_dist=False
    ):
        model = MeanShift(bandwidth=bandwidth, seeds=seeds, cluster_all=False).fit(features)
    labels: NDArray[np.int64] = model.labels_.astype(np.int64)
    return labels


def meanshift_periodicity(
    starts: ArrayLike,
    ends: ArrayLike,
    nbytes: ArrayLike,
    settings: MeanShiftSettings,
    by_volume: bool = True,
    busy: ArrayLike | None = None,
) -> MeanShiftPeriodicity:
    """Periodic operations of one direction's start-sorted merged operations.

    Returns ``periodic`` (segments in periodic clusters make up at least
    ``periodic_segment_share`` of all segments; a periodic cluster has at
    least ``min_periodic_segments`` segments, recurs at a steady pace and has
    a period of at least ``min_period_seconds``: faster repeats are requests
    inside one I/O phase, SPEC 3.4), ``share`` (that fraction, 0 when :func:`cluster` skipped
    clustering because no period was possible), ``operations`` (one dict per
    periodic operation, the dominant first: :func:`_series_weights`), ``segments`` (per-segment
    ``durations``, ``bytes``, ``cluster``) and ``occurrences`` (per
    operation, the ``starts`` and segment ``durations`` of its occurrences,
    for plots). All but ``segments`` and ``occurrences`` are plain Python
    scalars: the result object copies them as they are.

    A periodic direction may hold a heavier series that its segments hide:
    when another series interleaves at an unrelated period, it cuts the
    heavy series' segments at varying lengths and they form no cluster.
    With ``by_volume``, the operations of each volume (:func:`_volume_series`)
    are segmented on their own too, and a series found there joins
    ``operations`` (``"segmentation": "by_volume"``; it does not count in
    ``share``) when it carries more bytes than every periodic cluster.

    ``busy``: the seconds of I/O in each operation, for the busy fraction,
    when its interval overstates them (heatmap bursts: whole bins, SPEC 3.5);
    by default each operation's duration.
    """
    begin, finish = np.asarray(starts, dtype=float), np.asarray(ends, dtype=float)
    volumes = np.asarray(nbytes, dtype=float)
    lengths = finish - begin if busy is None else np.asarray(busy, dtype=float)
    durations, seg_bytes = segments(begin, finish, volumes)
    count = len(durations)
    operations: list[PeriodicOperation]
    if count >= settings.min_periodic_segments:
        ids = cluster(durations, seg_bytes, settings)
        operations = [
            op
            for op in cluster_operations(ids, begin, finish, durations, seg_bytes, settings, lengths)
            if op["period"] >= settings.min_period_seconds
            and _recurs(
                begin[ids == op["cluster"]],
                meanshift_bandwidth=settings.meanshift_bandwidth,
                periodic_regular_share=settings.periodic_regular_share,
            )
        ]
    else:  # too few segments for any periodic cluster (most directions)
        ids, operations = np.full(count, NO_CLUSTER, dtype=np.int64), []
    in_periodic = sum(op["occurrences"] for op in operations)  # segments in periodic clusters
    periodic = bool(count and in_periodic >= settings.periodic_segment_share * count)
    occurrences = [_occurrences(begin, durations, ids == op["cluster"]) for op in operations]
    if periodic and by_volume:
        for op, where in _volume_series(begin, finish, volumes, lengths, operations, settings):
            operations.append(op)
            occurrences.append(where)
    if len(operations) > 1:
        weights = _series_weights(
            operations,
            volumes,
            meanshift_bandwidth=settings.meanshift_bandwidth,
            meanshift_min_bytes=settings.meanshift_min_bytes,
        )
        order = sorted(range(len(operations)), key=lambda i: weights[i], reverse=True)
        operations, occurrences = [operations[i] for i in order], [occurrences[i] for i in order]
    return {
        "periodic": periodic,
        "share": in_periodic / count if count else 0.0,
        "operations": operations,
        "segments": {"durations": durations, "bytes": seg_bytes, "cluster": ids},
        "occurrences": occurrences,
    }


def _total(op: PeriodicOperation) -> float:
    """Bytes a periodic operation moves over the run: what makes it dominant (SPEC 3.4)."""
    return op["bytes_per_occurrence"] * op["occurrences"]


def _series_weights(
    operations: list[PeriodicOperation],
    nbytes: NDArray[np.float64],
    *,
    meanshift_bandwidth: float,
    meanshift_min_bytes: float,
) -> list[tuple[float, float]]:
    """Sort key of each periodic operation: (bytes its series moves, its own bytes).

    A series is every operation of one volume (bytes within one bandwidth in
    log scale, as :func:`cluster_operations` finds a series' period), and its bytes
    are those operations' (``nbytes``, the direction's merged operations),
    not only the occurrences mean shift put in periodic clusters: another
    series interleaving at an unrelated period cuts its segments at lengths
    that repeat or vary, so mean shift splits its occurrences by where the
    cut falls (19 checkpoints of 560 MB every 47 s between 20 MB logs every
    5 s: clusters of 5 checkpoints, 2.8 GB each, beside one cluster of 158
    logs, 3.2 GB; or one cluster of 3 checkpoints and the rest in none). The
    dominant operation (SPEC 3.4: most bytes) is the heaviest cluster of the
    heaviest series.
    """
    log_bytes = np.log(np.maximum(nbytes, meanshift_min_bytes))
    weights = []
    for op in operations:
        volume = np.log(max(op["bytes_per_occurrence"], meanshift_min_bytes))
        series = float(nbytes[np.abs(log_bytes - volume) <= meanshift_bandwidth].sum())
        weights.append((series, _total(op)))
    return weights


def _occurrences(
    starts: NDArray[np.float64], durations: NDArray[np.float64], members: NDArray[np.bool_]
) -> Occurrences:
    return {"starts": starts[members], "durations": durations[members]}


def _volume_series(
    starts: NDArray[np.float64],
    ends: NDArray[np.float64],
    nbytes: NDArray[np.float64],
    busy: NDArray[np.float64],
    periodic: list[PeriodicOperation],
    settings: MeanShiftSettings,
) -> list[tuple[PeriodicOperation, Occurrences]]:
    """Periodic series among operations of one volume that outweigh every ``periodic`` operation.

    Operations are grouped by volume with the clustering's own notion of
    comparable (mean shift on ``log(bytes)``, same bandwidth); each group
    with at least ``min_periodic_segments`` operations, more bytes than the
    heaviest periodic operation and another volume than every one of them
    is segmented on its own (a segment then runs to the next
    operation of the same volume) and must be periodic by every rule of
    SPEC 3.4 on its own: 48 MiB checkpoints every 47 s between 2 MiB logs
    every 5 s are a 47 s series, whatever the two periods' ratio. Groups that
    cannot outweigh the dominant cluster cost nothing (most directions:
    one series, or one volume).
    """
    log_bytes = np.log(np.maximum(nbytes, settings.meanshift_min_bytes))
    bandwidth = settings.meanshift_bandwidth
    heaviest = max(_total(op) for op in periodic)
    known = np.log([max(op["bytes_per_occurrence"], settings.meanshift_min_bytes) for op in periodic])
    total = float(nbytes.sum())
    if len(nbytes) < settings.min_periodic_segments or total <= heaviest:
        return []
    features = np.column_stack([log_bytes, np.zeros(len(log_bytes))])
    seeds = unique_rows(np.round(features / bandwidth))[0] * bandwidth
    volumes = mean_shift_labels(features, seeds, bandwidth)
    found: list[tuple[PeriodicOperation, Occurrences]] = []
    for volume in np.unique(volumes[volumes >= 0]).tolist():
        members = (volumes == volume).nonzero()[0]
        if len(members) < settings.min_periodic_segments or float(nbytes[members].sum()) <= heaviest:
            continue
        if (np.abs(small.mean(log_bytes[members]) - known) <= bandwidth).any():
            continue  # a periodic cluster of this volume already stands for the series
        series = meanshift_periodicity(
            starts[members], ends[members], nbytes[members], settings, False, busy[members]
        )
        if series["periodic"]:
            for op, where in zip(series["operations"], series["occurrences"]):
                found.append(({**op, "segmentation": "by_volume"}, where))
    return found


def _recurs(member_starts: np.ndarray, *, meanshift_bandwidth: float, periodic_regular_share: float) -> bool:
    """A periodic operation comes back at a steady pace, not at random times.

    Mean shift also groups comparable segments that merely happen to exist:
    among many writes of one size at random times, some spacings are alike
    by chance, and enough such clusters fill the 75 % share. Their members
    are scattered over the run, so the gaps between consecutive members are
    as varied as random arrival times, while most gaps of a real series are
    alike (a pause or a missed occurrence changes only one). "Alike" is the
    clustering's own tolerance: within one bandwidth of the median gap in
    log scale; a cluster recurs when at least ``periodic_regular_share`` of
    its gaps are.
    """
    share = regular_share(member_starts, meanshift_bandwidth=meanshift_bandwidth)
    return share is not None and share >= periodic_regular_share


def regular_share(member_starts: np.ndarray, *, meanshift_bandwidth: float) -> float | None:
    """The share of a cluster's gaps alike (:func:`_recurs`); None when two members start together."""
    gaps = member_starts[1:] - member_starts[:-1]
    if not (gaps > 0).all():
        return None
    alike = np.abs(np.log(gaps / small.median(gaps))) <= meanshift_bandwidth
    return small.mean(alike)


def _period(volume_starts: np.ndarray, settings: MeanShiftSettings) -> float:
    """Median interval between occurrences, or between trains of them.

    Token-ring checkpoints (ranks write one after another, each pause above
    the merging threshold) show as trains of same-size operations: the
    median interval is the rank-to-rank spacing, while the period an analyst
    means is the checkpoint's. Occurrences are cut into trains at intervals
    over ``train_gap_factor`` times the median one; when at least
    ``min_periodic_segments`` trains of two or more occurrences each start
    at a steady pace (the recurrence check of :func:`_recurs`), the period is
    the median interval between train starts. A plain series has no such
    gaps (or a pause or two, too few trains at no steady pace) and keeps its
    median interval.
    """
    gaps = volume_starts[1:] - volume_starts[:-1]
    spacing = small.median(gaps) if len(gaps) else float("nan")
    cut = (gaps > settings.train_gap_factor * spacing).nonzero()[0]
    if len(cut) + 1 < settings.min_periodic_segments:
        return spacing
    first = np.concatenate([[0], cut + 1])
    lengths = np.diff(np.append(first, len(volume_starts)))
    train_starts = volume_starts[first]
    if lengths.min() < 2 or not _recurs(
        train_starts,
        meanshift_bandwidth=settings.meanshift_bandwidth,
        periodic_regular_share=settings.periodic_regular_share,
    ):
        return spacing
    return small.median(train_starts[1:] - train_starts[:-1])


def cluster_operations(
    ids: NDArray[np.int64],
    starts: NDArray[np.float64],
    ends: NDArray[np.float64],
    durations: NDArray[np.float64],
    seg_bytes: NDArray[np.float64],
    settings: MeanShiftSettings,
    busy: NDArray[np.float64] | None = None,
) -> list[PeriodicOperation]:
    """SPEC 3.4 figures per cluster of ``min_periodic_segments`` or more, dominant (most bytes) first.

    The period is the median interval between consecutive occurrences of the
    cluster (SPEC 3.4). SPEC 3.4 says "mean segment duration": the same
    number while a series' occurrences follow each other (the last segment
    copies the previous one), and the median keeps one long pause (a queue
    wait) from stretching it. When operations of another volume fall between
    two occurrences (a second series, a data file followed by its small
    index file, hourly checkpoints between daily archives), they cut the
    segments short, and mean shift may even split one series into several
    clusters by where the other series falls (a cluster of every third
    occurrence recurs at three periods): when an operation of another
    volume follows any operation of the cluster's volume (bytes within one
    bandwidth of the cluster's, in the clustering's log scale), the period
    is the median interval between consecutive operations of that volume,
    the period an analyst means. When none does, no other series cuts the
    segments: when the volume holds two clusters (DLIO 2110720 reads 0.91
    and 0.89 GB 4.8 s apart in each 8 s epoch), they are two operations of
    one cycle, and each recurs at its own 8 s, not at the 4 s between
    operations of the volume. Measured on the held-out and scenario
    corpora: docs/method.md, 3.4 ("The period"). The busy fraction keeps
    SPEC's definition (operation / segment duration), ``busy`` giving each
    operation's seconds of I/O when not its duration.
    """
    cluster_ids = (np.bincount(ids[ids >= 0], minlength=1) >= settings.min_periodic_segments).nonzero()[0]
    if not len(cluster_ids):
        return []
    operations: list[PeriodicOperation] = []
    busy = (ends - starts if busy is None else busy) / np.where(durations > 0, durations, np.inf)
    log_bytes = np.log(np.maximum(seg_bytes, settings.meanshift_min_bytes))
    for cluster_id in cluster_ids:
        members = ids == cluster_id
        same_volume = np.abs(log_bytes - small.mean(log_bytes[members])) <= settings.meanshift_bandwidth
        cut = bool((same_volume[:-1] & ~same_volume[1:]).any())  # another volume follows one of it
        operations.append(
            {
                "cluster": int(cluster_id),
                "period": _period(starts[same_volume if cut else members], settings),
                "occurrences": int(members.sum()),
                "bytes_per_occurrence": small.mean(seg_bytes[members]),
                "busy_fraction": small.mean(busy[members]),
                "start": float(starts[members][0]),
                "end": float(ends[members].max()),
                "segmentation": "all",
                "period_resolution": 0.0,
            }
        )
    operations.sort(key=_total, reverse=True)
    return operations
