"""Expected labels of a synthetic log, as ``must`` / ``must_not`` sets per family.

The truth follows SPEC's rules, computed independently of ``mosaic.analysis``
(it is the oracle the categorizer is scored against) from exactly the records
that were written. A rule's outcome is asserted only when every quantity it
compares is clearly on one side of its threshold (``Config.truth_margin``,
relative); otherwise the label is in neither set.

- Temporality and ``insignificant`` (SPEC 3.6): quarter-chunk bytes of the
  operations written, or of the HEATMAP bins written when the log has them
  for the direction.
- Metadata (SPEC 3.7): requests per second placed as the SPEC places them.
- Periodicity (SPEC 3.4): from the scenario design, since what a clustering
  should find is a property of the design (how many bursts, how regular,
  what share of the direction's operations), not of any one algorithm.
  Bursts appended to one file exist only in the HEATMAP (SPEC 3.5): their
  truth comes from the bins written (:func:`burst_outcomes`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from mosaic.analysis.labels import FAMILIES, PERIODICITY, TEMPORALITY
from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.synth.scenarios import NOISE_COMPONENT

MIN_PERIODIC_BURSTS = 4  # design bursts needed before asserting `periodic`
Tri = bool | None  # True / False when clear, None when too close to call


def kept_rows(rows: np.ndarray, paths: list[str], config: Config) -> np.ndarray:
    """Rows the SPEC 2 filter keeps: no pseudo-files (``<STDOUT>``), no excluded prefixes."""
    names = np.array(paths, dtype=object)[rows["name"]] if len(rows) else np.zeros(0, object)
    drop = np.fromiter(
        (
            n.startswith("<")
            or n.startswith(config.excluded_prefixes)
            or (bool(config.mounts) and not n.startswith(config.mounts))
            for n in names
        ),
        bool,
        len(names),
    )
    kept: np.ndarray = rows[~drop]
    return kept


def legacy_view(rows: np.ndarray) -> np.ndarray:
    """What a Darshan 2.x log keeps of the rows: POSIX only, one open and one close time.

    SPEC 3.7 spreads a record opened more than once over [first open, last
    close] (both its windows); one opened once keeps its two instants.
    """
    view: np.ndarray = rows[rows["module"] == F.POSIX].copy()
    first_open, last_close = view["open_start"].copy(), view["close_end"].copy()
    reopened = (view["opens"] > 1) & (last_close != 0)
    view["open_end"] = np.where(reopened, last_close, first_open)
    view["close_start"] = np.where(reopened, first_open, last_close)
    return view


def collective_view(rows: np.ndarray) -> np.ndarray:
    """SPEC 3.7: a shared POSIX row whose file has a shared MPI-IO row makes that row's opens
    (at most its own) and their closes in the MPI-IO row's windows; the rest, and the seeks,
    stay in its own. Added as rows of no bytes (an MPI-IO close window never recorded, 0 and
    0, leaves the closes in the POSIX one)."""
    posix = (rows["module"] == F.POSIX) & (rows["rank"] == -1)
    mpiio = rows[(rows["module"] == F.MPIIO) & (rows["rank"] == -1)]
    windows = {int(name): row for name, row in zip(mpiio["name"], mpiio)}
    out, extra = rows.copy(), []
    for i in np.flatnonzero(posix):
        other = windows.get(int(rows["name"][i]))
        if other is None or min(other["opens"], rows["opens"][i]) <= 0:
            continue
        moved = min(int(other["opens"]), int(rows["opens"][i]))
        out["opens"][i] -= moved
        row = np.zeros(1, rows.dtype)
        row["name"], row["rank"], row["module"], row["opens"] = rows["name"][i], -1, F.POSIX, moved
        row["open_start"], row["open_end"] = other["open_start"], other["open_end"]
        recorded = other["close_start"] != 0 or other["close_end"] != 0
        source = other if recorded else rows[i]
        row["close_start"], row["close_end"] = source["close_start"], source["close_end"]
        extra.append(row)
    return np.concatenate([out, *extra]) if extra else rows


# --------------------------------------------------------------------------- helpers


def _greater(a: float, b: float, margin: float) -> Tri:
    """Is a > b, clearly? (b = 0: any positive a is clearly greater.)"""
    if a > b * (1 + margin) and a > 0:
        return True
    if a < b * (1 - margin) or (a == 0 and b >= 0):
        return False
    return None


def _less(a: float, b: float, margin: float) -> Tri:
    """Is a < b, clearly?"""
    if a < b * (1 - margin):
        return True
    if a > b * (1 + margin) or (a == 0 and b == 0):
        return False
    return None


def _all(*values: Tri) -> Tri:
    if any(v is False for v in values):
        return False
    return True if all(v is True for v in values) else None


def _cv(values: Iterable[float]) -> float:
    array = np.asarray(values, float)
    return float(array.std() / array.mean()) if array.mean() > 0 else float("inf")


def _split(outcomes: dict[str, Tri], prefix: str = "") -> tuple[list[str], list[str]]:
    must = [prefix + k for k, v in outcomes.items() if v is True]
    must_not = [prefix + k for k, v in outcomes.items() if v is False]
    return must, must_not


# --------------------------------------------------------------------------- temporality


def chunk_bytes(starts: ArrayLike, ends: ArrayLike, nbytes: ArrayLike, run_time: float) -> np.ndarray:
    """Bytes per quarter of the run, each operation spread uniformly over its interval."""
    edges = np.linspace(0.0, run_time, 5)
    begin, finish, volumes = (np.asarray(x, float) for x in (starts, ends, nbytes))
    length = finish - begin
    overlap = np.clip(
        np.minimum(finish[:, None], edges[1:]) - np.maximum(begin[:, None], edges[:-1]), 0, None
    )
    share = np.where(
        length[:, None] > 0,
        overlap / np.where(length > 0, length, 1)[:, None],
        (np.searchsorted(edges[1:-1], begin, side="right")[:, None] == np.arange(4)),
    )
    chunks: np.ndarray = (share * volumes[:, None]).sum(axis=0)
    return chunks


def heatmap_chunks(bins: np.ndarray, width: float, run_time: float, records: np.ndarray) -> np.ndarray:
    """SPEC 3.6 where the log has a HEATMAP holding the direction's bytes: the quarters
    take the bins' shares (each bin's bytes spread over its time span within the run)
    and the records' total; ``records`` (the records' quarters) when the bins are empty."""
    starts = np.minimum(np.arange(len(bins)) * width, run_time)
    shares = chunk_bytes(starts, np.minimum(starts + width, run_time), bins, run_time)
    if not shares.sum() > 0:
        return records
    scaled: np.ndarray = shares / shares.sum() * records.sum()
    return scaled


def temporality_outcomes(chunks: Iterable[float], config: Config) -> dict[str, Tri]:
    """SPEC 3.6 rules on four chunks, each True / False / None (too close)."""
    m, cv_max = config.truth_margin, config.steady_cv
    q0, q1, q2, q3 = (float(q) for q in chunks)

    def cv_small(*qs: float) -> Tri:
        return _less(_cv(qs), cv_max, m)

    out = {
        "on_start": _greater(q0, config.chunk_dominance * (q1 + q2 + q3), m),
        "on_end": _greater(q3, config.chunk_dominance * (q0 + q1 + q2), m),
        "after_start": _all(_less(q0, (q1 + q2 + q3) / config.chunk_minor_divisor, m), cv_small(q1, q2, q3)),
        "before_end": _all(_less(q3, (q0 + q1 + q2) / config.chunk_minor_divisor, m), cv_small(q0, q1, q2)),
        "after_start_before_end": _greater(q1 + q2, config.chunk_middle_ratio * (q0 + q3), m),
        "on_start_and_end": _all(
            _greater(q0 + q3, config.chunk_middle_ratio * (q1 + q2), m), cv_small(q0, q3)
        ),
        "steady": cv_small(q0, q1, q2, q3),
    }
    values = list(out.values())
    out["unclassified"] = (
        False if any(v is True for v in values) else True if all(v is False for v in values) else None
    )
    return out


# --------------------------------------------------------------------------- metadata


def requests_per_second(rows: np.ndarray, run_time: float, seeks: bool = False) -> np.ndarray:
    """SPEC 3.7 requests per 1-s bin: opens (+ seeks with ``seeks``) over the open window,
    closes over the close one.

    A 0 in open_end / close_start / close_end is "never recorded"; windows
    are piecewise-linear cumulative counts evaluated at whole seconds.
    """
    bins = max(int(np.ceil(run_time)), 1)
    open_lo = rows["open_start"]
    open_hi = np.where(rows["open_end"] == 0, open_lo, rows["open_end"])
    recorded = (rows["close_start"] != 0) | (rows["close_end"] != 0)
    close_lo = np.where(rows["close_start"] == 0, rows["close_end"], rows["close_start"])
    close_hi = np.where(rows["close_end"] == 0, rows["close_start"], rows["close_end"])
    lo = np.clip(np.concatenate([open_lo, close_lo]), 0, bins)
    hi = np.clip(np.concatenate([open_hi, close_hi]), 0, bins)
    opening = rows["opens"] + rows["seeks"] if seeks else rows["opens"]
    count = np.concatenate([opening, np.where(recorded, rows["opens"], 0)]).astype(float)
    hi = np.maximum(lo, hi)
    point = np.floor(lo) == np.floor(hi)  # the whole window falls in one bin
    per_bin = np.bincount(  # float even when empty (bincount's int64 then)
        np.minimum(np.floor(lo[point]), bins - 1).astype(int), weights=count[point], minlength=bins
    ).astype(float)
    wide = ~point
    if wide.any():
        slope = count[wide] / (hi[wide] - lo[wide])
        xs = np.concatenate([lo[wide], hi[wide]])
        dslope = np.concatenate([slope, -slope])
        order = np.argsort(xs, kind="stable")
        xs, dslope = xs[order], dslope[order]
        rate = np.cumsum(dslope)  # slope right of each breakpoint
        cumulative = np.concatenate([[0.0], np.cumsum(rate[:-1] * np.diff(xs))])
        at_edges = np.interp(np.arange(bins + 1), xs, cumulative)
        per_bin += np.diff(at_edges)
    return per_bin


def metadata_outcomes(per_second: np.ndarray, config: Config) -> dict[str, Tri]:
    """SPEC 3.7's labels with margins; the mean is over the seconds the peak is the max of."""
    m = config.truth_margin
    peak = float(per_second.max()) if len(per_second) else 0.0
    level = config.metadata_spike_level
    clear_spikes = int((per_second >= level * (1 + m)).sum())
    maybe_spikes = int((per_second >= level * (1 - m)).sum())
    multiple = (
        True
        if clear_spikes > config.metadata_min_spikes
        else False
        if maybe_spikes < config.metadata_min_spikes
        else None
    )
    mean = float(per_second.sum()) / max(len(per_second), 1)
    out = {
        "metadata_high_spike": _greater(peak, config.metadata_high_spike, m),
        "metadata_multiple_spikes": multiple,
        "metadata_high_density": _all(
            multiple, _less(config.metadata_density_mean, mean, m) if mean > 0 else False
        ),
    }
    values = list(out.values())
    out["metadata_insignificant_load"] = (
        False if any(v is True for v in values) else True if all(v is False for v in values) else None
    )
    return out


# --------------------------------------------------------------------------- periodicity


def _magnitude(period: float, config: Config) -> str:
    for name, upper in (
        ("second", config.period_second_max),
        ("minute", config.period_minute_max),
        ("hour", config.period_hour_max),
    ):
        if period <= upper:
            return f"periodic_{name}"
    return "periodic_day_or_more"


def _units(design: np.ndarray, run_time: float, config: Config) -> list[tuple[Any, ...]]:
    """Design operations as SPEC 3.3 merges them: (start, end, bytes, components, count).

    Overlapping operations merge, and so do neighbours whose gap is under
    the neighbour-merging limits, counted generously (limits x (1 + margin)):
    a gap that might merge is merged, which can only make `periodic` less
    likely to be asserted.
    """
    widen = 1 + config.truth_margin
    units: list[list[Any]] = []
    for row in design[np.argsort(design["start"], kind="stable")]:
        if units:
            gap = row["start"] - units[-1][1]
            merged = max(units[-1][1], row["end"]) - units[-1][0]
            limit = widen * max(
                config.neighbor_gap_runtime_fraction * run_time,
                config.neighbor_gap_duration_fraction * merged,
            )
            if gap < limit:
                units[-1][1] = max(units[-1][1], row["end"])
                units[-1][2] += row["bytes"]
                units[-1][3].add(int(row["component"]))
                units[-1][4] += 1
                continue
        units.append([row["start"], row["end"], row["bytes"], {int(row["component"])}, 1])
    return [tuple(u) for u in units]


def periodicity_outcomes(design: np.ndarray, run_time: float, config: Config) -> dict[str, Tri]:
    """SPEC 3.4 labels of one direction from its design rows (no prefix)."""
    no: dict[str, Tri] = {label: False for label in PERIODICITY}
    series = (design["count"] >= MIN_PERIODIC_BURSTS) & (design["period"] > 0)
    periodic_components = set(np.unique(design["component"][series]).tolist())
    if not periodic_components:
        return no
    units = _units(design, run_time, config)
    starts = np.array([u[0] for u in units])
    durations = np.array([u[1] - u[0] for u in units])
    segments = np.append(np.diff(starts), 0.0)
    if len(units) > 1:
        segments[-1] = max(segments[-2], durations[-1])
    else:
        segments[-1] = durations[-1]
    # A unit is one burst of a periodic series only if nothing merged into it.
    owner = np.array(
        [next(iter(u[3])) if u[4] == 1 and next(iter(u[3])) in periodic_components else -2 for u in units]
    )
    share = float((owner >= 0).mean())
    if share < config.truth_periodic_share:
        return {}  # neither clearly periodic nor clearly not: another detector may decide
    totals = {c: float(design["bytes"][design["component"] == c].sum()) for c in periodic_components}
    dominant = max(totals, key=totals.__getitem__)
    rows = design[design["component"] == dominant]
    # The period an analyst means, whatever interleaves: the component's own spacing
    # (SPEC 3.4 as implemented: the median interval between operations of its volume).
    out: dict[str, Tri] = {"periodic": True, **_magnitudes(rows, config)}
    # Busy time of a lone series: the mean over its bursts. Where another series
    # interleaves, mean shift measures it over segments the other series cuts (on a
    # cluster of any of the units holding one of its bursts) or, found by volume, over
    # its own spacing: asserted only where every such burst gives the same label.
    if len(periodic_components) == 1:
        mine = owner == dominant
        busy = [float((durations[mine] / segments[mine]).mean())]
    else:
        holding = np.array([dominant in u[3] for u in units])
        busy = [
            *(durations[holding] / segments[holding]),
            *_busy_fractions(rows["start"], rows["end"] - rows["start"]),
        ]
    return out | _busy_labels(busy, config)


def _magnitudes(rows: np.ndarray, config: Config) -> dict[str, Tri]:
    """Magnitude labels of a series' design rows (periods within its jitter)."""
    period, jitter, m = float(rows["period"][0]), float(rows["jitter"][0]), config.truth_margin
    return _magnitude_labels(period * (1 - jitter) * (1 - m), period * (1 + jitter) * (1 + m), config)


def _magnitude_labels(shortest: float, longest: float, config: Config) -> dict[str, Tri]:
    """The magnitude of periods between the two, or none when they straddle a band edge."""
    bands = {_magnitude(shortest, config), _magnitude(longest, config)}
    if len(bands) > 1:
        return {}
    return {label: label in bands for label in PERIODICITY[1:5]}


def _segments(starts: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """SPEC 3.4 segments of operations that follow each other: start to next start, the
    last copying the previous one (or its own duration if longer)."""
    gaps = np.diff(starts)
    return np.append(gaps, max(gaps[-1], durations[-1]) if len(gaps) else durations[-1])


def _busy_fractions(starts: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """Operation / segment duration of operations that follow each other."""
    busy: np.ndarray = durations / _segments(starts, durations)
    return busy


def _busy_labels(busy: list[float], config: Config) -> dict[str, Tri]:
    """Busy-time labels every one of ``busy`` gives clearly (``truth_busy_margin`` inside)."""
    margin, low, high = config.truth_busy_margin, config.low_busy_max, config.high_busy_min
    out: dict[str, Tri] = {}
    rules: tuple[tuple[str, Callable[[float], bool], Callable[[float], bool]], ...] = (
        ("periodic_low_busy_time", lambda b: b <= low - margin, lambda b: b > low + margin),
        ("periodic_high_busy_time", lambda b: b >= high + margin, lambda b: b < high - margin),
    )
    for label, clearly, clearly_not in rules:
        if all(clearly(b) for b in busy):
            out[label] = True
        elif all(clearly_not(b) for b in busy):
            out[label] = False
    return out


def heatmap_bins(heatmap: F.HeatmapRecords, direction: str) -> tuple[np.ndarray, float]:
    """Bytes per bin of one direction, summed over the ranks' POSIX heatmap records, and
    the bin width (the generator gives every record the same bins)."""
    column = heatmap.read_bins if direction == "read" else heatmap.write_bins
    return column.reshape(len(heatmap.nbins), -1).sum(axis=0), float(heatmap.bin_seconds[0])


def burst_outcomes(bins: np.ndarray, width: float, design: np.ndarray, config: Config) -> dict[str, Tri]:
    """SPEC 3.4 labels of a direction whose bursts only its heatmap shows (SPEC 3.5).

    Each appended file is one record per rank spanning every burst, so the
    operations merge into one and only the heatmap's bursts (maximal runs of
    non-empty bins) can be periodic. Designs without a period (one steady
    append, random on/off bursts, two checkpoints, repeats under
    ``min_period_seconds``) are not periodic. A periodic design is asserted
    from the bins written: one burst per designed burst (the bins merged or
    split none), and segments (start to next start, bytes) so alike that
    mean shift cannot split them (every pair closer than one bandwidth in
    its log scale, with margin). Magnitude then comes from the median
    interval between bursts and busy time from the bins' burst lengths.
    """
    no: dict[str, Tri] = {label: False for label in PERIODICITY}
    periodic = design[design["period"] > 0]
    components = np.unique(periodic["component"])
    m = config.truth_margin
    if len(components) > 1:
        return {}
    if not len(periodic) or len(periodic) < config.min_periodic_segments:
        return no
    period = float(periodic["period"][0])
    if period < config.min_period_seconds * (1 - m):
        return no
    if period <= config.min_period_seconds * (1 + m) or len(periodic) < len(design):
        return {}
    edges = np.diff((bins > 0).astype(np.int8), prepend=0, append=0)
    first, after = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    cumulative = np.concatenate([[0], np.cumsum(bins)])
    joined = _split_occurrences(first, after, cumulative, float(periodic["bytes"][0]), config)
    if joined is None:
        return {}
    first, after = joined
    if len(first) != len(periodic):
        return {}
    starts, lengths = first * width, (after - first) * width
    features = (np.log(_segments(starts, lengths)), np.log(cumulative[after] - cumulative[first]))
    if np.hypot(*(np.ptp(f) for f in features)) >= config.meanshift_bandwidth * (1 - m):
        return {}  # (the bounding box's diagonal: at least the largest distance)
    seen = float(np.median(np.diff(starts)))
    magnitude = _magnitude_labels(seen * (1 - m), seen * (1 + m), config)
    busy = _filled_seconds(bins, first, after, width) / _segments(starts, lengths)
    return {"periodic": True, **magnitude} | _busy_labels([float(busy.mean())], config)


def _filled_seconds(bins: np.ndarray, first: np.ndarray, after: np.ndarray, width: float) -> np.ndarray:
    """Seconds of I/O in each burst (bins ``first`` .. ``after - 1``, SPEC 3.5): every run of
    non-empty bins in it counts its inner bins whole and each edge bin by its bytes over the
    run's median bin (at most 1), a one-bin run one bin; an empty bin inside counts nothing."""
    seconds = []
    for a, b in zip(first.tolist(), after.tolist()):
        span = bins[a:b]
        edges = np.diff((span > 0).astype(np.int8), prepend=0, append=0)
        filled = 0.0
        for s, e in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
            run = span[s:e]
            normal = float(np.median(run))
            ends = min(run[0] / normal, 1.0) + min(run[-1] / normal, 1.0)
            filled += 1.0 if len(run) == 1 else len(run) - 2 + ends
        seconds.append(filled * width)
    return np.array(seconds)


def _split_occurrences(
    first: np.ndarray, after: np.ndarray, cumulative: np.ndarray, volume: float, config: Config
) -> tuple[np.ndarray, np.ndarray] | None:
    """Runs of non-empty bins (``first`` .. ``after``) with each occurrence one empty bin split
    in two joined again (SPEC 3.5): two runs one bin apart, each clearly under the designed
    burst ``volume`` / e^bandwidth, together clearly within a bandwidth of it. None when a
    pair is too close to call either way."""
    m, reach = config.truth_margin, float(np.exp(config.meanshift_bandwidth))
    nbytes = cumulative[after] - cumulative[first]
    starts, ends = list(first), list(after)
    i = 0
    while i + 1 < len(starts):
        if starts[i + 1] - ends[i] == 1:
            a, b = nbytes[i], nbytes[i + 1]
            parts = _all(_less(a, volume / reach, m), _less(b, volume / reach, m))
            whole = _all(_less(a + b, volume * reach, m), _greater(a + b, volume / reach, m))
            if parts is True and whole is True:
                ends[i] = ends[i + 1]
                del starts[i + 1], ends[i + 1]
                nbytes = np.delete(nbytes, i + 1)
                nbytes[i] = a + b
            elif not (parts is False or whole is False):
                return None
        i += 1
    return np.array(starts, np.int64), np.array(ends, np.int64)


# --------------------------------------------------------------------------- one log


@dataclass
class Facts:
    """Scale-free outcomes of one log's design; only significance depends on volume."""

    totals: dict[str, float]  # bytes per direction
    temporal: dict[str, dict[str, Tri]]
    periodic: dict[str, dict[str, Tri]]
    metadata: dict[str, Tri]


def facts(
    rows: np.ndarray,
    paths: list[str],
    design: np.ndarray,
    run_time: float,
    config: Config,
    legacy: bool = False,
    partial: bool = False,
    heatmap: F.HeatmapRecords | None = None,
) -> Facts:
    """Everything the truth needs from one log's records and design.

    MPI-IO rows count only in a ``partial`` log (SPEC 2: they stand in for
    the (file, rank) records the partial POSIX module lost; the generator
    writes MPI-IO rows only for such files). ``heatmap``: the log's HEATMAP
    records, where appended files' bursts are (:func:`burst_outcomes`).
    """
    if not legacy:
        rows = collective_view(rows)
    if not partial:
        rows = rows[rows["module"] != F.MPIIO]
    rows = kept_rows(legacy_view(rows) if legacy else rows, paths, config)
    totals, temporal, periodic = {}, {}, {}
    for direction, column in (("read", "bytes_read"), ("write", "bytes_written")):
        io = rows[rows[column] > 0]
        totals[direction] = float(io[column].sum())
        chunks = chunk_bytes(io[f"{direction}_start"], io[f"{direction}_end"], io[column], run_time)
        if heatmap is not None and not legacy:  # a 2.x log has no HEATMAP
            bins, width = heatmap_bins(heatmap, direction)
            if run_time / 4 >= config.heatmap_quarter_bins * width:  # bins resolve the quarters
                chunks = heatmap_chunks(bins, width, run_time, chunks)
        temporal[direction] = temporality_outcomes(chunks, config)
        mine = design[design["direction"] == direction]
        appended = mine[mine["component"] != NOISE_COMPONENT]
        if not mine["heatmap_only"].any():
            periodic[direction] = periodicity_outcomes(mine, run_time, config)
        elif heatmap is not None and appended["heatmap_only"].all():
            periodic[direction] = burst_outcomes(*heatmap_bins(heatmap, direction), appended, config)
        else:  # appended files beside others: no design of ours, no exact rule
            periodic[direction] = {}
    per_second = requests_per_second(rows, run_time, config.metadata_seeks)
    return Facts(totals, temporal, periodic, metadata_outcomes(per_second, config))


def families(f: Facts, config: Config, scale: float = 1.0) -> dict[str, dict[str, list[str]]]:
    """``{family: {"must": [...], "must_not": [...]}}`` with byte volumes times ``scale``.

    An insignificant direction (clearly under ``significant_bytes``) must
    have only that label; one too close to the threshold asserts nothing.
    """
    out: dict[str, dict[str, list[str]]] = {}
    for direction in ("read", "write"):
        insignificant = _less(f.totals[direction] * scale, config.significant_bytes, config.truth_margin)
        if insignificant is True:
            temporal: dict[str, Tri] = {label: label == "insignificant" for label in TEMPORALITY}
            periodic: dict[str, Tri] = {label: False for label in PERIODICITY}
        elif insignificant is None:
            temporal, periodic = {}, {}
        else:
            temporal = {**f.temporal[direction], "insignificant": False}
            periodic = f.periodic[direction]
        for family, outcomes in (
            (f"{direction}_temporality", temporal),
            (f"{direction}_periodicity", periodic),
        ):
            must, must_not = _split(outcomes, f"{direction}_")
            out[family] = {"must": must, "must_not": must_not}
    must, must_not = _split(f.metadata)
    out["metadata"] = {"must": must, "must_not": must_not}
    assert set(out) == set(FAMILIES)
    return out


def expected(
    rows: np.ndarray,
    paths: list[str],
    design: np.ndarray,
    run_time: float,
    config: Config,
    legacy: bool = False,
) -> dict[str, dict[str, list[str]]]:
    """Expected labels of one valid log (see :func:`families`)."""
    return families(facts(rows, paths, design, run_time, config, legacy), config)
