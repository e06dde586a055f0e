"""Truth from SPEC's rules (3.3-3.7) applied to the records written, with margins."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from mosaic.analysis.labels import FAMILIES, METADATA, PERIODICITY, TEMPORALITY
from mosaic.config import Config
from mosaic.holdout.design import MAGNITUDES, UNKNOWN, Design, Periodicity, Records, Series


def chunk_bytes(starts: ArrayLike, ends: ArrayLike, nbytes: ArrayLike, run_time: float) -> np.ndarray:
    """SPEC 3.6: bytes per quarter of the run, each op's bytes spread over its interval."""
    begin, finish, volumes = (np.asarray(v, float) for v in (starts, ends, nbytes))
    edges = run_time * np.arange(5) / 4
    duration = finish - begin
    instant = duration <= 0
    overlap = np.clip(
        np.minimum(finish[:, None], edges[None, 1:]) - np.maximum(begin[:, None], edges[None, :-1]), 0, None
    )
    spread = volumes[:, None] * overlap / np.where(instant, 1.0, duration)[:, None]
    quarter = np.clip((4 * begin // run_time).astype(int), 0, 3)
    spread[instant] = 0.0
    spread[instant, quarter[instant]] = volumes[instant]
    chunks: np.ndarray = spread.sum(axis=0)
    return chunks


class Verdicts:
    """Three-valued rule outcomes with a relative margin around each threshold."""

    def __init__(self, margin: float, dust: float):
        self.margin = margin
        self.dust = dust  # absolute slack for float noise

    def greater(self, a: float, b: float) -> bool | None:
        if a > b * (1 + self.margin) + self.dust:
            return True
        if a < b * (1 - self.margin) - self.dust:
            return False
        return None

    def less(self, a: float, b: float) -> bool | None:
        return self.greater(b, a)

    def cv_below(self, values: ArrayLike, threshold: float) -> bool | None:
        array = np.asarray(values, float)
        mean = array.mean()
        if mean <= self.dust:
            return None
        cv = array.std() / mean
        if cv < threshold * (1 - self.margin):
            return True
        if cv > threshold * (1 + self.margin):
            return False
        return None


def both(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return True if (a and b) else None


def temporality_rules(q: np.ndarray, config: Config) -> dict[str, bool | None]:
    """SPEC 3.6's seven rules, each True / False / None (too close to call)."""
    v = Verdicts(config.truth_margin, 1e-6 * max(q.sum(), 1.0))
    d, k, r, cv = (
        config.chunk_dominance,
        config.chunk_minor_divisor,
        config.chunk_middle_ratio,
        config.steady_cv,
    )
    rules = {
        "on_start": v.greater(q[0], d * (q[1] + q[2] + q[3])),
        "on_end": v.greater(q[3], d * (q[0] + q[1] + q[2])),
        "after_start": both(v.less(q[0], (q[1] + q[2] + q[3]) / k), v.cv_below(q[1:], cv)),
        "before_end": both(v.less(q[3], (q[0] + q[1] + q[2]) / k), v.cv_below(q[:3], cv)),
        "after_start_before_end": v.greater(q[1] + q[2], r * (q[0] + q[3])),
        "on_start_and_end": both(v.greater(q[0] + q[3], r * (q[1] + q[2])), v.cv_below(q[[0, 3]], cv)),
        "steady": v.cv_below(q, cv),
    }
    if all(x is False for x in rules.values()):
        rules["unclassified"] = True
    elif any(rules.values()):
        rules["unclassified"] = False
    else:
        rules["unclassified"] = None
    return rules


def significance(total: float, config: Config) -> bool | None:
    return Verdicts(config.truth_margin, 0.0).greater(total, config.significant_bytes) if total > 0 else False


def magnitude(period: float, config: Config) -> str | None:
    """SPEC 3.4's period magnitude, None within the margin of a boundary."""
    bounds = [config.period_second_max, config.period_minute_max, config.period_hour_max]
    m = config.truth_margin
    for bound in bounds:
        if bound * (1 - m) <= period <= bound * (1 + m):
            return None
    return MAGNITUDES[sum(period > b for b in bounds)]


def periodicity_family(design: Periodicity, config: Config) -> tuple[list[Any], list[Any]]:
    if design.claim is None:
        return [], []
    if design.claim is False:
        return [], list(PERIODICITY)
    # SPEC 3.4: a period under min_period_seconds is request cadence, not a period.
    floor, m = config.min_period_seconds, config.truth_margin
    periods = np.array([s.period for s in design.series])
    if (periods < floor * (1 - m)).all():
        return [], list(PERIODICITY)
    if (abs(periods - floor) <= floor * m).any():
        return [], []
    must, must_not = ["periodic"], []
    dominant = max(design.series, key=lambda s: s.total_bytes)
    size = magnitude(dominant.period, config)
    if size is not None:
        must.append(size)
        must_not += [x for x in MAGNITUDES if x != size]
    if dominant.busy is not None:
        m = config.truth_busy_margin
        low, high = config.low_busy_max, config.high_busy_min
        if dominant.busy <= low - m:
            must.append("periodic_low_busy_time")
            must_not.append("periodic_high_busy_time")
        elif dominant.busy >= high + m:
            must.append("periodic_high_busy_time")
            must_not.append("periodic_low_busy_time")
        elif low + m <= dominant.busy <= high - m:
            must_not += ["periodic_low_busy_time", "periodic_high_busy_time"]
    return must, must_not


def heatmap_series(bins: np.ndarray, width: float, designed: int, config: Config) -> Periodicity:
    """What mean shift (SPEC 3.4) must find in a heatmap's bursts (SPEC 3.5), from the bins.

    A burst is a maximal run of non-empty bins: from the start of its first
    bin to the end of its last, with their bytes. ``designed`` bursts (at
    least ``min_periodic_segments``) are claimed periodic only when the bins
    show each as one burst and their segments (start to next start, the last
    one copying the previous) and bytes lie so close together that mean
    shift keeps them in one cluster: all within one bandwidth of each other
    in log scale, less the truth margin. The series' period is then the
    median interval between bursts and its busy fraction the mean of each
    burst's I/O (:func:`busy_bins`) / segment; anything else is too close to
    call.
    """
    filled = np.flatnonzero(bins > 0)
    breaks = np.flatnonzero(np.diff(filled) > 1)
    first = filled[np.concatenate([[0], breaks + 1])] if len(filled) else filled
    last = filled[np.concatenate([breaks, [len(filled) - 1]])] if len(filled) else filled
    if designed < config.min_periodic_segments or len(first) != designed:
        return UNKNOWN
    gaps = np.diff(first) * width
    lengths = (last - first + 1) * width
    segments = np.concatenate([gaps, [max(gaps[-1], lengths[-1])]])
    volumes = np.add.reduceat(bins, first)
    spread = math.hypot(math.log(segments.max() / segments.min()), math.log(volumes.max() / volumes.min()))
    if spread >= config.meanshift_bandwidth * (1 - config.truth_margin):
        return UNKNOWN
    busy = np.array([busy_bins(bins[a : b + 1]) for a, b in zip(first, last)]) * width
    return Periodicity(
        True,
        [Series(float(np.median(gaps)), float(np.mean(busy / segments)), float(bins.sum()), designed)],
    )


def busy_bins(burst: np.ndarray) -> float:
    """SPEC 3.5: the bins of I/O in one burst's bins: the inner ones whole, the first and
    the last by their bytes over the burst's median bin (never more than one); one bin
    when the burst is one bin."""
    if len(burst) == 1:
        return 1.0
    median = float(np.median(burst))
    return len(burst) - 2 + min(1.0, float(burst[0]) / median) + min(1.0, float(burst[-1]) / median)


def quarters(ops: dict[str, Any], run_time: float, bins: np.ndarray | None, width: float) -> np.ndarray:
    """SPEC 3.6's four chunks: the ops' bytes, placed as the HEATMAP's ``bins`` (per bin of
    ``width`` seconds from job start, each bin's bytes over its span in the run) place the
    direction's traffic when the log has bins holding some."""
    chunks = chunk_bytes(ops["start"], ops["end"], ops["bytes"], run_time)
    if bins is None or not bins.sum() > 0:
        return chunks
    lo = np.minimum(width * np.arange(len(bins)), run_time)
    placed = chunk_bytes(lo, np.minimum(lo + width, run_time), bins, run_time)
    scaled: np.ndarray = placed * (chunks.sum() / placed.sum())
    return scaled


def direction_truth(
    ops: dict[str, Any],
    run_time: float,
    design: Periodicity,
    config: Config,
    bins: np.ndarray | None = None,
    width: float = 0.0,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(temporality family, periodicity family) of one direction, unprefixed; ``bins``:
    the direction's HEATMAP bytes per bin of ``width`` seconds, summed over ranks."""
    total = float(ops["bytes"].sum())
    significant = significance(total, config)
    if significant is None:
        return {"must": [], "must_not": []}, {"must": [], "must_not": []}
    if not significant:
        return (
            {"must": ["insignificant"], "must_not": list(TEMPORALITY[:-1])},
            {"must": [], "must_not": list(PERIODICITY)},
        )
    coarse = bins is not None and width * config.heatmap_quarter_bins * 4 > run_time  # too few bins
    rules = temporality_rules(quarters(ops, run_time, None if coarse else bins, width), config)
    temporal = {
        "must": [k for k, x in rules.items() if x is True],
        "must_not": ["insignificant"] + [k for k, x in rules.items() if x is False],
    }
    must, must_not = periodicity_family(design, config)
    return temporal, {"must": must, "must_not": must_not}


def requests_per_second(table: dict[str, Any], run_time: float, seeks: bool = False) -> np.ndarray:
    """SPEC 3.7's requests per 1-second bin, by the cumulative request count at each edge.

    Opens, and seeks only with ``seeks`` (the paper's rule), over the open window.

    C(t), the requests issued before t, is piecewise linear for a spread window
    and a step for an instant; bin k holds C(k + 1) - C(k).
    """
    bins = max(int(math.ceil(run_time)), 1)
    open_end = np.where(table["open_end"] == 0, table["open_start"], table["open_end"])
    closed = (table["close_start"] != 0) | (table["close_end"] != 0)
    close_start = np.where(table["close_start"] == 0, table["close_end"], table["close_start"])
    close_end = np.where(table["close_end"] == 0, table["close_start"], table["close_end"])
    lo = np.concatenate([table["open_start"], close_start[closed]])
    hi = np.concatenate([open_end, close_end[closed]])
    opening = table["opens"] + table["seeks"] if seeks else table["opens"]
    count = np.concatenate([opening, table["opens"][closed]])
    lo, hi = np.clip(lo, 0, bins), np.clip(hi, 0, bins)
    instant = hi <= lo
    density = count[~instant] / (hi - lo)[~instant]
    cumulative = (
        _before(lo[instant], count[instant], bins)
        + _ramps_before(lo[~instant], density, bins)
        - _ramps_before(hi[~instant], density, bins)
    )
    cumulative[-1] = count.sum()  # everything clipped into the run is counted
    return np.diff(cumulative)


def _before(at: np.ndarray, weight: np.ndarray, bins: int) -> np.ndarray:
    """Sum of weights with ``at`` strictly before each integer edge 0..bins."""
    first_edge_after = np.floor(at).astype(np.int64) + 1
    counts = np.bincount(first_edge_after, weights=weight, minlength=bins + 2).astype(float)
    return np.cumsum(counts)[: bins + 1]


def _ramps_before(at: np.ndarray, slope: np.ndarray, bins: int) -> np.ndarray:
    """Sum over ramps starting at ``at`` of slope * (edge - at), for at < edge."""
    ramps: np.ndarray = np.arange(bins + 1) * _before(at, slope, bins) - _before(at, slope * at, bins)
    return ramps


def metadata_family(per_second: np.ndarray, config: Config) -> dict[str, Any]:
    """SPEC 3.7's labels with margins; the mean is over the seconds the peak is the max of."""
    v = Verdicts(config.truth_margin, 0.0)
    m = config.truth_margin
    level = config.metadata_spike_level
    high = v.greater(per_second.max(initial=0.0), config.metadata_high_spike)
    surely = int((per_second >= level * (1 + m)).sum())
    maybe = int((per_second >= level * (1 - m)).sum())
    spikes = (
        True
        if surely >= config.metadata_min_spikes
        else (False if maybe < config.metadata_min_spikes else None)
    )
    mean = per_second.sum() / max(len(per_second), 1)
    density = both(spikes, v.greater(mean, config.metadata_density_mean) if mean > 0 else False)
    outcome = {
        "metadata_high_spike": high,
        "metadata_multiple_spikes": spikes,
        "metadata_high_density": density,
    }
    if all(x is False for x in outcome.values()):
        outcome["metadata_insignificant_load"] = True
    elif any(outcome.values()):
        outcome["metadata_insignificant_load"] = False
    return {
        "must": [k for k, x in outcome.items() if x is True],
        "must_not": [k for k, x in outcome.items() if x is False],
    }


def kept_rows(table: dict[str, Any], config: Config) -> np.ndarray:
    """SPEC 2's default filter: no pseudo-files, nothing under /proc, /sys, /dev."""
    paths = table["path"].astype(str)
    pseudo = np.char.startswith(paths, "<") & np.char.endswith(paths, ">")
    system = np.zeros(len(paths), bool)
    for prefix in config.excluded_prefixes:
        system |= np.char.startswith(paths, prefix + "/")
    return ~(pseudo | system)


def operations(records: Records, table: dict[str, Any], keep: np.ndarray) -> dict[str, dict[str, Any]]:
    """SPEC 3.3 step 1: per direction, one op per record with bytes, DXT segments instead."""
    dxt_paths = {s["path"] for s in records.dxt}
    from_records = keep & ~np.isin(table["path"], list(dxt_paths))
    out = {}
    for name, counter in (("read", "bytes_read"), ("write", "bytes_written")):
        sel = from_records & (table[counter] > 0)
        segs = [s for s in records.dxt if s["is_write"] == (name == "write")]
        out[name] = {
            "start": np.concatenate([table[f"{name}_start"][sel]] + [s["starts"] for s in segs]),
            "end": np.concatenate([table[f"{name}_end"][sel]] + [s["ends"] for s in segs]),
            "bytes": np.concatenate([table[counter][sel]] + [s["lengths"] for s in segs]),
        }
    return out


def legacy_windows(table: dict[str, Any]) -> dict[str, Any]:
    """SPEC 3.7 on a Darshan 2.x table (one open, one close instant per record): a
    record opened more than once has both windows over [first open, last close]."""
    reopened = (table["opens"] > 1) & (table["close_end"] != 0)
    return {
        **table,
        "open_end": np.where(reopened, table["close_end"], table["open_end"]),
        "close_start": np.where(reopened, table["open_start"], table["close_start"]),
    }


def truth_families(design: Design, config: Config, legacy: bool = False) -> dict[str, Any]:
    """Every family's must / must_not of a design (``legacy``: written as a 2.x log)."""
    table = design.records.table()
    keep = kept_rows(table, config)
    ops = operations(design.records, table, keep)
    families = {}
    heatmap = None if legacy else design.heatmap  # a 2.x log has no HEATMAP
    for name in ("read", "write"):
        bins, width = None, 0.0
        if heatmap is not None:  # every rank's record has the same bins
            per_rank = heatmap.read_bins if name == "read" else heatmap.write_bins
            bins, width = per_rank.reshape(len(heatmap.nbins), -1).sum(axis=0), float(heatmap.bin_seconds[0])
        temporal, periodic = direction_truth(
            ops[name], design.run_time, getattr(design, name), config, bins, width
        )
        families[f"{name}_temporality"] = {k: [f"{name}_{x}" for x in v] for k, v in temporal.items()}
        families[f"{name}_periodicity"] = {k: [f"{name}_{x}" for x in v] for k, v in periodic.items()}
    kept = {k: v[keep] for k, v in table.items()}
    if legacy:
        kept = legacy_windows(kept)
    families["metadata"] = metadata_family(
        requests_per_second(kept, design.run_time, config.metadata_seeks), config
    )
    assert set(families) == set(FAMILIES)
    assert set(families["metadata"]["must"]) <= set(METADATA)
    return families
