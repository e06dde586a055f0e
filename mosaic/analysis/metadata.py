"""Metadata load: requests per second of job time and its labels (SPEC 3.7).

Darshan gives per record only counts and the first/last timestamps of opens
and closes, so a record's opens are spread uniformly over its open window and
one close per open over its close window. Seeks are not requests by default
(an ``lseek`` moves a file offset in the client and never reaches a metadata
server); ``metadata_seeks`` restores the paper's rule, seeks joining the opens. A timestamp of exactly
0 in ``open_end``, ``close_start`` or ``close_end`` was never recorded: a
window with one recorded end is an instant there, a window with none adds
nothing (``open_start`` is always a real time, 0 meaning job start).
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
from numpy.typing import NDArray

from mosaic.analysis.steps import add_running_sum

# Spreading leaves float dust (1e-13) on counts that are whole in exact
# arithmetic; the statistics behind the labels round it off, so "more than
# 250" does not fire on 250 (the per-second array itself keeps every digit,
# so its sum stays the number of requests).
_COUNT_DECIMALS = 6


class MetadataStatistics(TypedDict):
    """A run's metadata figures: the result object's ``metadata`` and the labels' inputs."""

    requests: float
    peak_per_second: float
    spikes: int  # seconds with at least ``metadata_spike_level`` requests
    mean_per_second: float


def requests_per_second(meta: np.ndarray, run_time: float, *, metadata_seeks: bool) -> np.ndarray:
    """Requests in each 1-second bin ``[k, k+1)`` of the run (``ceil(run_time)`` bins).

    ``metadata_seeks``: count each record's seeks as requests in its open
    window (the paper's rule).

    Windows are clipped to the run before spreading, so every request is
    counted once; each bin gets its exact share of a window (fractional
    overlap at both ends), computed with a difference array, never a loop
    over seconds.
    """
    return _spread(*_windows(meta, run_time, metadata_seeks))


def requests_in_seconds(
    meta: np.ndarray, seconds: np.ndarray, run_time: float, *, metadata_seeks: bool
) -> np.ndarray:
    """Each row's requests in the bins ``[k, k+1)`` of :func:`requests_per_second` for ``k``
    in ``seconds`` (the files behind a peak, or behind every spike): the same windows, each
    row's share of those bins, measured on their running count (no loop over seconds)."""
    lows, highs, counts, bins = _windows(meta, run_time, metadata_seeks)
    chosen = np.zeros(bins)
    chosen[np.asarray(seconds, dtype=np.int64)] = 1.0
    before = np.concatenate([[0.0], np.cumsum(chosen)])  # chosen bins in [0, k)

    def covered(t: NDArray[np.float64]) -> NDArray[np.float64]:
        """The measure of the chosen bins within [0, t]."""
        k = np.minimum(t, bins - 1).astype(np.int64)  # truncation floors: times are >= 0
        inside: NDArray[np.float64] = before[k] + (t - k) * chosen[k]
        return inside

    low_bin = np.minimum(lows, bins - 1).astype(np.int64)
    one_bin = low_bin == np.minimum(highs, bins - 1).astype(np.int64)
    spread = counts * (covered(highs) - covered(lows)) / np.where(one_bin, 1.0, highs - lows)
    share = np.where(one_bin, counts * chosen[low_bin], spread)
    found: np.ndarray = share[: len(meta)] + share[len(meta) :]  # opens, then closes
    return found


def _windows(
    meta: np.ndarray, run_time: float, metadata_seeks: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], int]:
    """Every row's open window, then every row's close window, clipped to the run's bins:
    lows, highs, the requests each holds, and the number of bins."""
    bins = max(int(np.ceil(run_time)), 1)
    never_closed = (meta["close_start"] == 0) & (meta["close_end"] == 0)
    open_end = np.where(meta["open_end"] == 0, meta["open_start"], meta["open_end"])
    close_start = np.where(meta["close_start"] == 0, meta["close_end"], meta["close_start"])
    close_end = np.where(meta["close_end"] == 0, meta["close_start"], meta["close_end"])
    opening = meta["opens"] + meta["seeks"] if metadata_seeks else meta["opens"]
    counts = np.concatenate([opening, np.where(never_closed, 0.0, meta["opens"])])
    firsts = np.concatenate([meta["open_start"], close_start])
    lasts = np.concatenate([open_end, close_end])
    lows = np.minimum(np.maximum(np.minimum(firsts, lasts), 0.0), bins)  # cheaper than np.clip
    highs = np.minimum(np.maximum(np.maximum(firsts, lasts), 0.0), bins)
    return lows, highs, counts, bins


def _spread(
    lows: NDArray[np.float64], highs: NDArray[np.float64], counts: NDArray[np.float64], bins: int
) -> NDArray[np.float64]:
    """Per-bin totals of counts spread uniformly over ``[low, high]`` (instants when equal)."""
    low_bin = np.minimum(lows, bins - 1).astype(np.int64)  # truncation floors: times are >= 0
    high_bin = np.minimum(highs, bins - 1).astype(np.int64)
    one_bin = low_bin == high_bin
    if one_bin.all():  # the common case: whole counts, nothing to spread
        # float even when empty (bincount's int64 then); no copy of the run-long array otherwise
        whole: NDArray[np.float64] = np.bincount(low_bin, weights=counts, minlength=bins).astype(
            float, copy=False
        )
        return whole
    lo, hi, lb, hb = lows[~one_bin], highs[~one_bin], low_bin[~one_bin], high_bin[~one_bin]
    density = counts[~one_bin] / (hi - lo)
    # Instants, and the partial first and last second of each window ...
    partial = np.bincount(
        np.concatenate([low_bin[one_bin], lb, hb]),
        weights=np.concatenate([counts[one_bin], density * (lb + 1 - lo), density * (hi - hb)]),
        minlength=bins,
    )
    # ... plus +density on every whole second strictly between them (lb+1 .. hb-1). Only
    # windows longer than a second have such seconds, and their density is below their
    # count: a huge density (a window of a microsecond across a boundary) never enters
    # the running sum, where it would swamp its neighbors' digits.
    long = hb - lb >= 2
    steps = np.bincount(
        np.concatenate([lb[long] + 1, hb[long]]),
        weights=np.concatenate([density[long], -density[long]]),
        minlength=bins + 1,
    )
    add_running_sum(partial, steps[:bins])
    spread: NDArray[np.float64] = np.maximum(partial, 0.0, out=partial)  # no -1e-17 dust below zero
    return spread


def summary_labels(
    summary: MetadataStatistics,
    *,
    metadata_high_spike: int,
    metadata_min_spikes: int,
    metadata_density_mean: float,
) -> list[str]:
    """The four metadata labels of SPEC 3.7, in vocabulary order, from the run's
    :func:`statistics` (computed once per trace: the result reports them too).

    The density mean is the mean of the per-second series the peak is the
    maximum of (:func:`statistics`), so it never exceeds the peak.
    """
    found = []
    if summary["peak_per_second"] > metadata_high_spike:
        found.append("metadata_high_spike")
    if summary["spikes"] >= metadata_min_spikes:
        found.append("metadata_multiple_spikes")
        if summary["mean_per_second"] >= metadata_density_mean:
            found.append("metadata_high_density")
    return found or ["metadata_insignificant_load"]


def spike_seconds(per_second: np.ndarray, *, metadata_spike_level: int) -> NDArray[np.int64]:
    """The seconds with at least ``metadata_spike_level`` requests, counted as the labels
    count them: only the seconds within one request of the level are rounded."""
    near = np.flatnonzero(per_second > metadata_spike_level - 1)
    found: NDArray[np.int64] = near[per_second[near].round(_COUNT_DECIMALS) >= metadata_spike_level]
    return found


def statistics(per_second: np.ndarray, *, metadata_spike_level: int) -> MetadataStatistics:
    """Totals behind the labels, as the result object reports them (SPEC 4).

    The mean is over the seconds of ``per_second`` (``ceil(run_time)``, at
    least 1), the series whose maximum is the peak: dividing by the true run
    time made a 0.07 s job's mean 443/s beside its peak of 32/s.

    Rounding moves a count by far less than one request, so only the seconds
    within one request of the spike level are rounded (not a whole month of
    quiet seconds), and none when even the peak is not that close.
    """
    requests = round(float(per_second.sum()), _COUNT_DECIMALS)
    peak = float(per_second.max(initial=0.0))
    spikes = (
        len(spike_seconds(per_second, metadata_spike_level=metadata_spike_level))
        if peak > metadata_spike_level - 1
        else 0
    )
    return {
        "requests": requests,
        "peak_per_second": round(peak, _COUNT_DECIMALS),
        "spikes": spikes,
        "mean_per_second": requests / max(per_second.size, 1),
    }
