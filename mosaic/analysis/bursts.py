"""HEATMAP bursts: a second source of operations for mean shift (SPEC 3.5).

A job that appends every checkpoint to one file has one record per rank
spanning the run: its operations merge into one and mean shift sees no
period, while the HEATMAP shows each checkpoint as a run of non-empty bins
between empty ones. With few periods the FFT cannot reach a far-beyond-chance
significance on such clean bursts (real DLIO readers: 4 s reads every ~8 s,
five epochs, 1.7-2.2 sigma), but mean shift's segments of the bursts are as
regular as the epochs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mosaic.analysis import merging, segments, small
from mosaic.analysis.segments import MeanShiftPeriodicity, MeanShiftSettings


@dataclass
class Bursts:
    """A direction's heatmap bursts, in time order, and those too slow to count."""

    starts: np.ndarray  # seconds from job start: the start of the burst's first bin
    ends: np.ndarray  # the end of its last bin
    bytes: np.ndarray  # bytes of its bins
    minor: np.ndarray  # bool: under SPEC 3.3's minor-rate limit, no segment of their own
    # bool: two runs of non-empty bins one empty bin apart, joined into one occurrence
    # (:func:`join_split`); all False in :func:`heatmap_bursts`' bursts
    joined: np.ndarray
    busy: np.ndarray  # seconds of I/O in each burst, weighted by fill (:func:`filled_seconds`)
    bin_seconds: float  # the heatmap's bin: what bounds the figures of a short burst
    # (the bins' busy seconds over all bursts, the seconds the job spent) when the time
    # spent cut them (:func:`spent_bound`), else None
    bound: tuple[float, float] | None = None

    def __len__(self) -> int:
        return len(self.starts)


def heatmap_bursts(
    bin_bytes: np.ndarray, bin_seconds: float, *, minor_rate_fraction: float, spent: float | None = None
) -> Bursts:
    """Each maximal run of consecutive non-empty bins of ``bin_bytes`` as one burst.

    The minor-operation rule of SPEC 3.3 applies (a few kB of interpreter
    start-up reads in one bin are no segment); bursts are never merged:
    empty bins already separate them. ``spent``: the seconds the job spent in
    the direction's calls (None: not known, or a lower bound), which bound the
    bursts' busy time where the bins are coarser than the bursts (:func:`spent_bound`).
    """
    values = np.asarray(bin_bytes, dtype=float)
    edges = np.diff((values > 0).astype(np.int8), prepend=0, append=0)
    first, after = (edges == 1).nonzero()[0], (edges == -1).nonzero()[0]
    cumulative = np.concatenate([[0.0], np.cumsum(values)])
    starts, ends = first * bin_seconds, after * bin_seconds
    nbytes = cumulative[after] - cumulative[first]
    minor = merging.minor_mask(starts, ends, nbytes, minor_rate_fraction=minor_rate_fraction)
    busy = filled_seconds(values, first, after) * bin_seconds
    bound = None
    if spent is not None and coarse(busy[~minor], bin_seconds):
        busy, bound = spent_bound(busy, spent)
    return Bursts(starts, ends, nbytes, minor, np.zeros(len(starts), bool), busy, bin_seconds, bound)


def coarse(busy: np.ndarray, bin_seconds: float) -> bool:
    """The bins are coarser than the bursts: the median burst fills two bins or less, so
    its busy seconds are the bins' width, however short its I/O (a few ms of append in a
    0.8 s bin is one bin busy)."""
    return bool(len(busy)) and small.median(busy) <= 2 * bin_seconds


def spent_bound(busy: np.ndarray, spent: float) -> tuple[np.ndarray, tuple[float, float] | None]:
    """The bursts' busy seconds, scaled down together when they sum to more than ``spent``,
    and (their sum, ``spent``) when they were (else None).

    Where the bins are coarser than the bursts (:func:`coarse`) a bin cannot
    show an access shorter than itself: twelve appends of ~0.12 s in 0.8 s
    bins fill 12.2 % of their 7.05 s periods (real pub_heatmap_append_7s),
    while the job spent 1.48 s writing, 1.7 % of the run. Its I/O took at
    least that long and the bins say at most one bin each; the time spent is
    shared among the bursts in proportion to their bins (docs/method.md 3.5,
    "Busy time bounded by the time spent"). Finer bins show each burst's span
    themselves and are left alone: a DLIO reader's 4-6 s epochs read between
    its steps, longer than its calls.
    """
    total = float(busy.sum())
    if total <= spent:
        return busy, None
    return busy * (spent / total), (total, spent)


def filled_seconds(bin_bytes: np.ndarray, first: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Bins of I/O in each burst (bins ``first`` .. ``after - 1``), its edge bins weighted by fill.

    A burst rarely starts or ends on a bin edge: its first and last bins
    hold a part of a normal bin (DLIO "A" readers: 11-79 MB against ~240 MB),
    and counting them whole put four readers over the 75 % of
    ``periodic_high_busy_time`` (77-82 %, 69-70 % weighted). An edge bin
    counts its bytes over the burst's median bin (at most 1); inner bins
    count whole, the I/O going on throughout them. A one-bin burst counts one
    bin: the bin bounds what can be known of it (an append of a few ms in a
    0.8 s bin is one bin busy).
    """
    lengths = after - first
    if not len(lengths):
        return np.zeros(0)
    offsets = np.cumsum(lengths) - lengths
    inside = np.repeat(first - offsets, lengths) + np.arange(int(lengths.sum()))
    burst = np.repeat(np.arange(len(lengths)), lengths)
    ordered = bin_bytes[inside][np.lexsort((bin_bytes[inside], burst))]  # sorted within each burst
    normal = (ordered[offsets + (lengths - 1) // 2] + ordered[offsets + lengths // 2]) / 2
    head = np.minimum(bin_bytes[first] / normal, 1.0)
    tail = np.minimum(bin_bytes[after - 1] / normal, 1.0)
    filled: np.ndarray = np.where(lengths == 1, 1.0, lengths - 2 + head + tail)
    return filled


def join_split(bursts: Bursts, bin_seconds: float, *, meanshift_bandwidth: float) -> Bursts | None:
    """The bursts with each occurrence that one empty bin split in two joined again.

    A DLIO reader's epoch reads ~2.1 GB in ~6 s; in three real logs
    (``dlio_logs`` 2110489, 2110532, 2110533) one empty 0.8 s bin splits
    the first epoch into two bursts (1.00 + 1.16, 1.19 + 0.93, 1.02 +
    1.00 GB), so 4 of 6 bursts are alike (67 % < SPEC 3.4's 75 %) where an
    analyst sees five epochs. Two consecutive bursts (minor ones left out)
    exactly one empty bin apart are joined when neither alone but both
    together are comparable (within one bandwidth in log scale, as mean
    shift compares) to the direction's burst volume, the median bytes of
    its bursts. None when no pair qualifies. :func:`burst_periodicity`
    keeps the joined bursts only when every joined one is an occurrence of
    a periodic operation.
    """
    kept = (~bursts.minor).nonzero()[0]
    if len(kept) < 2:
        return None
    starts, ends, nbytes = bursts.starts[kept], bursts.ends[kept], bursts.bytes[kept]
    log_volume = np.log(small.median(nbytes))
    apart = np.round((starts[1:] - ends[:-1]) / bin_seconds) == 1

    def comparable(values: np.ndarray) -> np.ndarray:
        alike: np.ndarray = np.abs(np.log(values) - log_volume) <= meanshift_bandwidth
        return alike

    part = ~comparable(nbytes)
    pair = apart & part[:-1] & part[1:] & comparable(nbytes[:-1] + nbytes[1:])
    pair[1:] &= ~pair[:-1]  # a burst joins one neighbour at most: the earlier pair first
    if not pair.any():
        return None
    second = np.r_[False, pair]  # the later burst of each pair: absorbed by the earlier one
    joined_ends = np.where(np.r_[pair, False], np.r_[ends[1:], 0.0], ends)
    joined_bytes = nbytes + np.r_[np.where(pair, nbytes[1:], 0.0), 0.0]
    busy = bursts.busy[kept]
    joined_busy = busy + np.r_[np.where(pair, busy[1:], 0.0), 0.0]  # the empty bin between: not busy
    keep = ~second
    return Bursts(
        starts[keep],
        joined_ends[keep],
        joined_bytes[keep],
        np.zeros(int(keep.sum()), bool),
        np.r_[pair, False][keep],
        joined_busy[keep],
        bin_seconds,
        bursts.bound,
    )


def burst_periodicity(
    bin_bytes: np.ndarray,
    bin_seconds: float,
    settings: MeanShiftSettings,
    *,
    minor_rate_fraction: float,
    spent: float | None = None,
) -> tuple[Bursts, MeanShiftPeriodicity]:
    """Mean shift (SPEC 3.4) on a direction's heatmap bursts, and the bursts it ran on.

    First on the bursts as the bins give them; when that is not periodic,
    on the bursts with split occurrences joined (:func:`join_split`), kept
    only when it is periodic and every joined burst is an occurrence of a
    periodic operation (its bytes, within one bandwidth of a cluster's, make
    it one); else the first result stands. Periods come below the bins'
    resolution (:func:`sub_bin_periods`); busy time is bounded by ``spent``
    (:func:`spent_bound`).
    """
    found = heatmap_bursts(bin_bytes, bin_seconds, minor_rate_fraction=minor_rate_fraction, spent=spent)
    kept = ~found.minor
    seen = segments.meanshift_periodicity(
        found.starts[kept], found.ends[kept], found.bytes[kept], settings, busy=found.busy[kept]
    )
    if seen["periodic"]:
        return found, sub_bin_periods(seen, bin_seconds)
    joined = join_split(found, bin_seconds, meanshift_bandwidth=settings.meanshift_bandwidth)
    if joined is None:
        return found, seen
    again = segments.meanshift_periodicity(
        joined.starts, joined.ends, joined.bytes, settings, busy=joined.busy
    )
    periodic_ids = [op["cluster"] for op in again["operations"] if op["segmentation"] == "all"]
    occurrences = np.isin(again["segments"]["cluster"], periodic_ids)
    if again["periodic"] and occurrences[joined.joined].all():
        return joined, sub_bin_periods(again, bin_seconds)
    return found, seen


def sub_bin_periods(found: MeanShiftPeriodicity, bin_seconds: float) -> MeanShiftPeriodicity:
    """Each periodic operation's period below the bins' resolution, and that resolution.

    Bursts start on bin edges, so the intervals between occurrences are
    multiples of the bin: appends every 7.0 s in 0.8 s bins come 9 x 7.2 and
    2 x 6.4 s apart, and their median says 7.2 s. Each interval spans
    ``round(interval / median)`` periods (0 for a second burst of the same
    cycle); the period is the intervals' sum over the periods they span: a
    sum of consecutive intervals telescopes, so it is off by at most a bin,
    and the period by ``bin / periods spanned`` (7.05 +- 0.07 s there).
    """
    for op, where in zip(found["operations"], found["occurrences"]):
        gaps = np.diff(where["starts"])
        spans = np.round(gaps / op["period"]) if op["period"] > 0 else np.zeros(len(gaps))
        periods = float(spans[spans >= 1].sum())
        if periods > 0:
            op["period"] = float(gaps[spans >= 1].sum()) / periods
            op["period_resolution"] = bin_seconds / periods
        else:
            op["period_resolution"] = bin_seconds
    return found
