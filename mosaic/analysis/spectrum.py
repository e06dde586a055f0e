"""Periodicity by frequency analysis (SPEC 3.5), FTIO's method re-done in numpy.

Mean shift (SPEC 3.4) sees merged operations; this detector sees the aggregate
bandwidth of the *unmerged* operations as a sampled signal, finds the dominant
frequency of its spectrum and says how much to trust it. Everything is
vectorized: one trace costs a few FFTs of at most ``config.fft_max_samples``.
"""

from __future__ import annotations

import numpy as np
import scipy.fft

from mosaic.config import Config

HIGH, MODERATE, NONE = "high", "moderate", "none"
OPERATIONS, HEATMAP = "operations", "heatmap"  # the signal an FFT result came from
_MAX_CORRELATION = 1 - 1e-9  # keeps arctanh finite for a perfect repeat
# Score kernel width in steps of its coarse grid: the Gaussian's gain at that
# grid's Nyquist frequency is then exp(-2 pi^2 steps^2 / 4) < 1e-8 (no aliasing)
_SCORE_KERNEL_STEPS = 2.0
_MAX_FUNDAMENTALS = 3  # FTIO: three rival frequencies mean no periodicity


def bandwidth_signal(starts, ends, nbytes, run_time: float, config: Config):
    """Mean bandwidth (bytes/s) per bin on a uniform grid over the run.

    Each bin holds the exact bytes moved inside it divided by its width, read
    off the cumulative transferred-bytes curve at the bin edges, so the
    resampling conserves volume and a burst far shorter than a bin still
    shows (as a lower, wider bump) instead of falling between two samples.
    Returns ``(bin_width, values)``.
    """
    starts, ends, nbytes = (np.asarray(a, dtype=float) for a in (starts, ends, nbytes))
    starts = np.maximum(starts, 0.0)
    ends = np.maximum(ends, starts)
    window = max(float(run_time), float(ends.max(initial=0.0)))
    if not window > 0:
        raise ValueError(f"run time must be positive, got {run_time}")
    count = _sample_count(ends - starts, window, config)
    bin_width = window / count
    edges = np.arange(count + 1) * bin_width

    spread = ends > starts
    rate = nbytes[spread] / (ends[spread] - starts[spread])
    cumulative = _cumulative_bytes(starts[spread], ends[spread], rate, edges)
    impulses = np.bincount(np.minimum((starts[~spread] / bin_width).astype(np.int64), count - 1),
                           weights=nbytes[~spread], minlength=count)
    return bin_width, (np.diff(cumulative) + impulses) / bin_width


def _sample_count(durations: np.ndarray, window: float, config: Config) -> int:
    """A few bins per shortest operation, within the sample-count bounds.

    The shortest operation is the narrowest feature worth resolving, down to
    ``config.fft_min_bin_seconds``: finer bins would only resolve sub-second
    periods, since bin-averaging keeps even shorter bursts in the signal
    (FTIO needs fine sampling because it samples points). The sample cap
    bounds the cost, the floor keeps enough frequency range for long
    operations. The count is rounded up to a size the FFT handles fast (a
    large prime count would cost many times more).
    """
    positive = durations[durations > 0]
    shortest = max(positive.min(initial=np.inf) / config.fft_bins_per_operation,
                   config.fft_min_bin_seconds)
    wanted = window / shortest
    count = int(np.ceil(np.clip(wanted, config.fft_min_samples, config.fft_max_samples)))
    return min(scipy.fft.next_fast_len(count, real=True), config.fft_max_samples)


def _cumulative_bytes(starts, ends, rate, edges):
    """Bytes moved before each edge: a piecewise-linear curve, exact at the edges.

    The total rate changes only at operation starts and ends; integrating it
    between those breakpoints gives the curve's knots and linear
    interpolation between knots is exact.
    """
    if not starts.size:
        return np.zeros(edges.size)
    times = np.concatenate([starts, ends])
    slope_change = np.concatenate([rate, -rate])
    order = np.argsort(times, kind="stable")
    times, slope_change = times[order], slope_change[order]
    slope = np.cumsum(slope_change)
    knots = np.concatenate([[0.0], np.cumsum(slope[:-1] * np.diff(times))])
    return np.interp(edges, times, knots, left=0.0, right=knots[-1])


def power_spectrum(values, bin_width: float):
    """One-sided power spectrum of the mean-removed signal: ``(freqs, power)``."""
    values = np.asarray(values, dtype=float)
    power = np.abs(np.fft.rfft(values - values.mean())) ** 2
    return np.fft.rfftfreq(values.size, bin_width), power


def fft_periodicity(starts, ends, nbytes, run_time: float, config: Config) -> dict:
    """FTIO-style verdict on one direction's operations (JSON-serializable)."""
    bin_width, values = bandwidth_signal(starts, ends, nbytes, run_time, config)
    return detect(values, bin_width, OPERATIONS, config)


def heatmap_periodicity(bin_bytes, bin_seconds: float, config: Config) -> dict | None:
    """The same verdict on a direction's HEATMAP bins (bytes per bin from job start).

    None when the bins are too coarse for the 3-period rule: the shortest
    period a signal shows spans two bins (Nyquist), so fewer than
    ``2 * fft_min_periods`` bins cannot hold ``fft_min_periods`` periods.
    """
    values = np.asarray(bin_bytes, dtype=float)
    if values.size < 2 * config.fft_min_periods or not bin_seconds > 0:
        return None
    return detect(values / bin_seconds, float(bin_seconds), HEATMAP, config)


def more_significant(operations: dict, heatmap: dict | None) -> dict:
    """The FFT result of a direction: the heatmap's only when strictly more significant."""
    if heatmap is not None and heatmap["significance"] > operations["significance"]:
        return heatmap
    return operations


def detect(values: np.ndarray, bin_width: float, signal: str, config: Config) -> dict:
    """FTIO-style verdict on a bandwidth signal sampled every ``bin_width`` seconds."""
    result = {"periodic": False, "period": None, "frequency": None, "confidence": 0.0,
              "confidence_label": NONE, "score": 0.0, "significance": 0.0, "candidates": [],
              "harmonics": 0, "bin_width": bin_width, "samples": int(values.size),
              "signal": signal}
    found = _dominant_period(values, bin_width, config) if np.ptp(values) > 0 else None
    if found is None:
        return {**result, "busy_fraction": _busy_fraction(values)}
    result.update(found, busy_fraction=_busy_fraction(values, found["period"] / bin_width))
    result["periodic"] = bool(result["confidence_label"] != NONE
                              and bin_width * values.size / found["period"] >= config.fft_min_periods
                              and found["period"] >= config.min_period_seconds
                              and result["score"] >= config.fft_min_score
                              and result["significance"] >= config.fft_min_significance)
    return result


def _dominant_period(values: np.ndarray, bin_width: float, config: Config) -> dict | None:
    """Period, confidence, score and candidates of the strongest fundamental, if any."""
    window = bin_width * values.size
    # Oversampled spectrum: a period that does not divide the window falls
    # between two bins and loses up to 36 % of its height (scalloping), enough
    # to drop a comb's fundamental below its harmonics; at half-bin spacing
    # the loss is at most 10 %. Single precision halves the cost of this, the
    # largest step, and keeps peaks far more exact than one bin needs.
    oversampling = config.fft_oversampling
    spectrum = scipy.fft.rfft((values - values.mean()).astype(np.float32),
                              n=oversampling * values.size)
    amplitude = np.abs(spectrum)
    z = _zscores(amplitude)
    candidates = _candidates(z, _highest_bin(window, z.size, config), config)
    if not candidates.size:
        return None
    fundamentals, harmonics = _fold_harmonics(candidates, tolerance=oversampling)
    dominant = fundamentals[np.argmax(z[fundamentals])]
    frequency = _refine(amplitude, z, dominant, config) / (oversampling * window)
    score, significance = _periodicity_score(spectrum[::oversampling], _active_bins(values),
                                             values.size,
                                             1.0 / (frequency * bin_width), config)
    label, confidence = _confidence(z[fundamentals], score)
    return {"period": 1.0 / frequency, "frequency": frequency, "confidence": confidence,
            "confidence_label": label, "score": score, "significance": significance,
            "harmonics": harmonics,
            "candidates": [{"period": oversampling * window / k, "z": float(z[k])}
                           for k in fundamentals.tolist()]}


def _zscores(amplitude: np.ndarray) -> np.ndarray:
    """z-score of each bin's amplitude against the non-DC bins (DC gets 0)."""
    ac = amplitude[1:]
    spread = ac.std()
    z = np.zeros_like(amplitude)
    if spread > 0:
        z[1:] = (ac - ac.mean()) / spread
    return z


def _highest_bin(window: float, size: int, config: Config) -> int:
    """Last oversampled bin that may hold a period of at least ``min_period_seconds``.

    Faster repeats are the cadence of requests inside one I/O phase (SPEC 3.4,
    3.5), not an application's period. A peak's bin is up to one frequency
    bin (``fft_oversampling`` grid points) off its refined frequency, so the
    cut keeps that margin and the refined period decides at the edge.
    """
    if config.min_period_seconds <= 0:
        return size - 1
    edge = int(np.floor(config.fft_oversampling * window / config.min_period_seconds))
    return min(edge + config.fft_oversampling, size - 1)


def _candidates(z: np.ndarray, highest: int, config: Config) -> np.ndarray:
    """Outlier peaks close to the strongest outlier, in rising frequency.

    Only local maxima count, and peaks within one frequency bin of each
    other (``config.fft_oversampling`` grid points) are one feature: the
    oversampled grid shows a peak's shoulder and the ripple between two
    close peaks, which are not rival frequencies. The strongest of such a
    group stands for it. Frequencies with fewer than ``config.fft_min_periods``
    periods in the window are no candidates: the envelope of I/O confined to
    part of the run peaks there and would otherwise mask a real period. Nor
    are frequencies above ``highest`` (periods under ``min_period_seconds``),
    which then set no bar for the others either.
    """
    lowest = int(np.ceil(config.fft_min_periods * config.fft_oversampling))
    peak = np.zeros(z.size, dtype=bool)
    peak[1:-1] = (z[1:-1] >= z[:-2]) & (z[1:-1] > z[2:])
    peak[:lowest] = False
    peak[highest + 1:] = False
    top = z[lowest:highest + 1].max(initial=0.0)
    found = np.flatnonzero(peak & (z > config.fft_z_threshold) & (z >= config.fft_peak_fraction * top))
    if not found.size:
        return found
    group = np.concatenate([[0], np.cumsum(np.diff(found) > config.fft_oversampling)])
    order = np.lexsort((-z[found], group))
    return found[order][np.concatenate([[True], np.diff(group[order]) > 0])]


def _fold_harmonics(candidates: np.ndarray, tolerance: float) -> tuple[np.ndarray, int]:
    """Fold candidates that are integer multiples of a lower fundamental into it.

    Narrow bursts make a comb of harmonics of similar height; the comb is
    evidence for its fundamental, so it must not count as rival frequencies.
    The lowest remaining candidate is a fundamental; a candidate ``k`` is its
    harmonic ``m`` when ``k / m`` lies within ``tolerance`` bins of it (the
    comb drifts off exact multiples of a bin when the period does not divide
    the window). A third fundamental already means "not periodic", so the
    search stops there. Returns the fundamentals and how many candidates
    were folded.
    """
    remaining = candidates.astype(np.int64)
    fundamentals, folded = [], 0
    while remaining.size and len(fundamentals) < _MAX_FUNDAMENTALS:
        base, rest = remaining[0], remaining[1:]
        multiple = np.rint(rest / base)
        harmonic = (multiple >= 2) & (np.abs(rest / np.maximum(multiple, 1) - base) <= tolerance)
        fundamentals.append(base)
        folded += int(harmonic.sum())
        remaining = rest[~harmonic]
    return np.asarray(fundamentals, dtype=np.int64), folded


def _refine(amplitude: np.ndarray, z: np.ndarray, k: int, config: Config) -> float:
    """Fractional bin of the fundamental, sharpened by its strong harmonics.

    Harmonic ``m`` sits at ``m`` times the fundamental, so its interpolated
    position pins the fundamental ``m`` times more precisely. Doubling the
    order each step keeps the predicted position within a bin of the truth;
    the climb stops at the first harmonic that is no longer an outlier peak
    (jitter smears high harmonics first).
    """
    position, previous = _interpolated_peak(amplitude, k), k
    order = 2
    while (target := int(round(order * position))) + 2 < amplitude.size:
        local = target - 1 + int(np.argmax(amplitude[target - 1:target + 2]))
        is_peak = amplitude[local - 1] <= amplitude[local] >= amplitude[local + 1]
        if not (local > previous and is_peak and z[local] > config.fft_z_threshold):
            break
        position, previous = _interpolated_peak(amplitude, local) / order, local
        order *= 2
    return position


def _interpolated_peak(amplitude: np.ndarray, k: int) -> float:
    """Vertex of the parabola through a peak bin and its two neighbours."""
    if not 0 < k < amplitude.size - 1:
        return float(k)
    left, centre, right = amplitude[k - 1], amplitude[k], amplitude[k + 1]
    curvature = left - 2 * centre + right
    if not curvature < 0:
        return float(k)
    return k + float(np.clip(0.5 * (left - right) / curvature, -0.5, 0.5))


def _periodicity_score(spectrum, active_bins: int, samples: int, period_bins: float,
                       config: Config):
    """Correlation of the smoothed signal with itself one period later, in [0, 1],
    and its significance (Fisher z in standard deviations).

    Random I/O has no memory at the period's lag; periodic I/O repeats
    itself. Smoothing over a fraction of the period first (a Gaussian,
    applied in the frequency domain) keeps bursts that arrive a little
    early or late overlapping, so jittered periods still score high. With
    few periods in the window even random bursts correlate by chance, which
    the significance accounts for; only the span that holds substantial I/O
    (``active_bins``) carries evidence, so the long quiet rest of a run
    cannot make a few early bursts look significant. The smoothed signal has no detail finer
    than the kernel, so it is rebuilt on a coarser grid (a truncated
    inverse FFT) with a fixed number of steps per period: the score costs
    little whatever the sample count.
    """
    kernel = config.fft_score_smoothing * period_bins  # kernel width in samples
    if kernel > _SCORE_KERNEL_STEPS:  # a coarser grid of a size the FFT handles fast
        samples_needed = int(np.ceil(samples * _SCORE_KERNEL_STEPS / kernel))
        size = min(scipy.fft.next_fast_len(samples_needed, real=True), samples)
    else:
        size = samples
    lag = int(round(period_bins * size / samples))
    if lag <= 0 or lag >= size - 1:
        return 0.0, 0.0
    sigma = config.fft_score_smoothing * lag
    kept = size // 2 + 1
    gain = np.exp(-2 * (np.pi * sigma * np.arange(kept) / size) ** 2)
    smooth = scipy.fft.irfft(spectrum[:kept] * gain, n=size)
    a, b = smooth[:-lag] - smooth[:-lag].mean(), smooth[lag:] - smooth[lag:].mean()
    norm = np.sqrt(np.dot(a, a) * np.dot(b, b))
    if not norm > 0:
        return 0.0, 0.0
    r = float(np.clip(np.dot(a, b) / norm, 0.0, 1.0))
    # Smoothed noise decorrelates after about 2 sqrt(pi) sigma samples
    independent = (active_bins * size / samples - lag) / max(2 * np.sqrt(np.pi) * sigma, 1.0)
    significance = np.arctanh(min(r, _MAX_CORRELATION)) * np.sqrt(max(independent - 3, 0.0))
    return r, float(significance)


def _confidence(z_fundamentals: np.ndarray, score: float) -> tuple[str, float]:
    """FTIO's rule: one fundamental is high confidence, two moderate, more none."""
    label = {1: HIGH, 2: MODERATE}.get(z_fundamentals.size, NONE)
    share = float(z_fundamentals.max() / z_fundamentals.sum())
    return label, (share * score if label != NONE else 0.0)


def _busy_fraction(values: np.ndarray, period_bins: float | None = None) -> float:
    """Share of time the bandwidth is above its mean (FTIO's substantial I/O).

    With a period, the share is taken over the periods that hold substantial
    I/O rather than the whole run, as mean shift does with its segments: a
    series of bursts busy 30 % of each period stays 30 % busy when it fills
    only part of the run. A bin a burst covers only in part counts for that
    part (its bandwidth relative to the typical busy bin's), so the share
    does not grow by a bin per burst edge.
    """
    busy = values > values.mean()
    if not busy.any():
        return 0.0
    busy_bins = np.minimum(values[busy] / np.median(values[busy]), 1.0).sum()
    if period_bins is None:
        return float(busy_bins / values.size)
    periods = np.floor(_active_bins(values) / period_bins) + 1
    return float(min(busy_bins / (periods * period_bins), 1.0))


def _active_bins(values: np.ndarray) -> int:
    """Bins from the first to the last one above the mean bandwidth (substantial I/O)."""
    busy = np.flatnonzero(values > values.mean())
    return int(busy[-1] + 1 - busy[0]) if busy.size else 0
