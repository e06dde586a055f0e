"""Periodicity by frequency analysis (SPEC 3.5), FTIO's method re-done in numpy.

Mean shift (SPEC 3.4) sees merged operations; this detector sees the aggregate
bandwidth of the *unmerged* operations as a sampled signal, finds the dominant
frequency of its spectrum and says how much to trust it. Everything is
vectorized: one trace costs a few FFTs of at most ``fft_max_samples``.

scipy.fft is imported by the functions that transform, on first use
(``mosaic.analysis.IMPORTED_ON_FIRST_USE``): it is ~150 ms of a one-log
``mosaic categorize``, and most logs of a year have no significant direction.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, NamedTuple, TypedDict, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mosaic.analysis.steps import add_running_sum
from mosaic.config import Settings

FTIO_MAX_FUNDAMENTALS = 2  # FTIO: one fundamental is high confidence, two moderate, more none
OPERATIONS, HEATMAP = "operations", "heatmap"  # the signal an FFT result came from
_MAX_CORRELATION = 1 - 1e-9  # keeps arctanh finite for a perfect repeat
# Score kernel width in steps of its coarse grid: the Gaussian's gain at that
# grid's Nyquist frequency is then exp(-2 pi^2 steps^2 / 4) < 1e-8 (no aliasing)
_SCORE_KERNEL_STEPS = 2.0
_MAX_FUNDAMENTALS = 3  # FTIO: three rival frequencies mean no periodicity

Floats = NDArray[np.float64]
Exact = Callable[[float], complex]  # a signal's exact Fourier coefficient at a frequency


@dataclass(frozen=True)
class SamplingSettings(Settings):
    """What the operations' bandwidth signal reads of the Config: its sample grid."""

    fft_bins_per_operation: float
    fft_min_bin_seconds: float
    fft_min_samples: int
    fft_max_samples: int


@dataclass(frozen=True)
class SpectrumSettings(Settings):
    """What the FFT detector reads of the Config to find and judge a period."""

    fft_oversampling: int
    fft_z_threshold: float
    fft_peak_fraction: float
    fft_min_periods: float
    fft_score_smoothing: float
    fft_min_score: float
    fft_min_significance: float
    fft_min_exact_share: float
    min_period_seconds: float


class Candidate(TypedDict):
    """A rival fundamental: its period (seconds) and its z-score."""

    period: float
    z: float


class _Peak(TypedDict):
    """What the spectrum says of its strongest fundamental (:func:`_dominant_period`)."""

    periodic: bool
    period: float
    frequency: float
    confidence: float
    score: float
    significance: float
    harmonics: int
    exact_share: float | None
    candidates: list[Candidate]


class FFTPeriodicity(TypedDict):
    """What :func:`detect` returns (numpy floats among the values: the result object converts them)."""

    periodic: bool
    period: float | None
    frequency: float | None
    confidence: float  # FTIO's: the dominant's share of the fundamentals' z times score (= score alone)
    score: float
    significance: float
    candidates: list[Candidate]
    harmonics: int
    bin_width: float
    samples: int
    signal: str  # OPERATIONS or HEATMAP
    exact_share: float | None
    busy_fraction: float


def bandwidth_signal(
    starts: ArrayLike, ends: ArrayLike, nbytes: ArrayLike, run_time: float, sampling: SamplingSettings
) -> tuple[float, Floats]:
    """Mean bandwidth (bytes/s) per bin on a uniform grid over the run.

    Each bin holds the exact bytes moved inside it divided by its width, so
    the resampling conserves volume and a burst far shorter than a bin still
    shows (as a lower, wider bump) instead of falling between two samples.
    Returns ``(bin_width, values)``.
    """
    bin_width, values, _ = _signal(*_operations(starts, ends, nbytes), run_time, sampling)
    return bin_width, values


def _operations(starts: ArrayLike, ends: ArrayLike, nbytes: ArrayLike) -> tuple[Floats, Floats, Floats]:
    """Float arrays of the operations, starting at 0 or later and ending after they start."""
    begin = np.maximum(np.asarray(starts, dtype=float), 0.0)
    return begin, np.maximum(np.asarray(ends, dtype=float), begin), np.asarray(nbytes, dtype=float)


def _signal(
    starts: Floats, ends: Floats, nbytes: Floats, run_time: float, sampling: SamplingSettings
) -> tuple[float, Floats, Floats]:
    """:func:`bandwidth_signal` of clean operations, and their durations."""
    window = max(float(run_time), float(ends.max(initial=0.0)))
    if not window > 0:
        raise ValueError(f"run time must be positive, got {run_time}")
    durations = ends - starts
    spread = durations > 0
    count = _sample_count(durations, spread, window, sampling)
    bin_width = window / count
    # Not in place: with no operation at all, bincount's sum is an integer array.
    values = _bytes_per_bin(starts, durations, spread, nbytes, bin_width, count) / bin_width
    return bin_width, values, durations


def _sample_count(
    durations: np.ndarray, spread: np.ndarray, window: float, sampling: SamplingSettings
) -> int:
    """A few bins per shortest operation, within the sample-count bounds.

    The shortest operation is the narrowest feature worth resolving, down to
    ``fft_min_bin_seconds`` (a quarter of the minimum period): finer
    bins would only resolve periods too short to count, since bin-averaging
    keeps even shorter bursts in the signal (FTIO needs fine sampling
    because it samples points); faster I/O folded onto an allowed period is
    caught by :func:`_exact_share`. The sample cap
    bounds the cost, the floor keeps enough frequency range for long
    operations. The count is rounded up to a size the FFT handles fast (a
    large prime count would cost many times more).
    """
    shortest = max(
        durations.min(initial=np.inf, where=spread) / sampling.fft_bins_per_operation,
        sampling.fft_min_bin_seconds,
    )
    import scipy.fft

    wanted = window / shortest
    count = math.ceil(min(max(wanted, sampling.fft_min_samples), sampling.fft_max_samples))
    fast: int = scipy.fft.next_fast_len(count, real=True)
    return min(fast, sampling.fft_max_samples)


def _bytes_per_bin(
    starts: Floats, durations: Floats, spread: NDArray[np.bool_], nbytes: Floats, bin_width: float, count: int
) -> Floats:
    """Bytes moved inside each bin, exactly, in two bincounts and no sort.

    The total rate is a step function: each operation adds its rate at its
    start and removes it at its end. A rate change ``c`` at time ``t`` in bin
    ``j`` moves ``c * (end of bin j - t)`` bytes in bin ``j`` and ``c *
    bin_width`` in every later bin. An operation of zero length is an
    impulse of its bytes in its bin (``spread``: the operations of positive length).
    """
    rate = np.divide(nbytes, durations, out=np.zeros(nbytes.size), where=spread)
    times = np.concatenate([starts, starts + durations])
    change = np.concatenate([rate, -rate])
    index = np.minimum((times / bin_width).astype(np.int64), count - 1)
    after = index + 1
    own_bin = change * (after * bin_width - times)
    own_bin[: starts.size] += np.where(spread, 0.0, nbytes)
    moved = cast(Floats, np.bincount(index, weights=own_bin, minlength=count))  # float with weights
    # The rate before each bin, times the bin's width (a change after the last bin moves nothing).
    steps = np.bincount(after, weights=change, minlength=count + 1)
    add_running_sum(moved, steps[:count], bin_width)
    return moved


def power_spectrum(values: ArrayLike, bin_width: float) -> tuple[NDArray[np.floating[Any]], Floats]:
    """One-sided power spectrum of the mean-removed signal: ``(freqs, power)``."""
    signal = np.asarray(values, dtype=float)
    power: Floats = np.abs(np.fft.rfft(signal - signal.mean())) ** 2
    return np.fft.rfftfreq(signal.size, bin_width), power


def fft_periodicity(
    starts: ArrayLike,
    ends: ArrayLike,
    nbytes: ArrayLike,
    run_time: float,
    sampling: SamplingSettings,
    settings: SpectrumSettings,
) -> FFTPeriodicity:
    """FTIO-style verdict on one direction's operations (JSON-serializable).

    When the bins are coarser than the shortest operation needs, a period is
    confirmed against the operations' exact Fourier coefficient (no alias).
    """
    operations = _operations(starts, ends, nbytes)
    bin_width, values, durations = _signal(*operations, run_time, sampling)
    unresolved = durations.min(initial=np.inf) < sampling.fft_bins_per_operation * bin_width
    exact = partial(_exact_coefficient, *operations, bin_width * values.size) if unresolved else None
    return detect(values, bin_width, OPERATIONS, settings, exact)


def heatmap_periodicity(
    bin_bytes: ArrayLike, bin_seconds: float, settings: SpectrumSettings
) -> FFTPeriodicity | None:
    """The same verdict on a direction's HEATMAP bins (bytes per bin from job start).

    None when the bins are too coarse for the 3-period rule: the shortest
    period a signal shows spans two bins (Nyquist), so fewer than
    ``2 * fft_min_periods`` bins cannot hold ``fft_min_periods`` periods.
    """
    values = np.asarray(bin_bytes, dtype=float)
    if values.size < 2 * settings.fft_min_periods or not bin_seconds > 0:
        return None
    return detect(values / bin_seconds, float(bin_seconds), HEATMAP, settings)


def more_significant(operations: FFTPeriodicity, heatmap: FFTPeriodicity | None) -> FFTPeriodicity:
    """The FFT result of a direction: the heatmap's only when strictly more significant."""
    if heatmap is not None and heatmap["significance"] > operations["significance"]:
        return heatmap
    return operations


def detect(
    values: Floats, bin_width: float, signal: str, settings: SpectrumSettings, exact: Exact | None = None
) -> FFTPeriodicity:
    """FTIO-style verdict on a bandwidth signal sampled every ``bin_width`` seconds.

    ``exact``: the signal's exact Fourier coefficient at a frequency, when it
    is known beyond the samples (operations); the peak must be there too.
    """
    result: FFTPeriodicity = {
        "periodic": False,
        "period": None,
        "frequency": None,
        "confidence": 0.0,
        "score": 0.0,
        "significance": 0.0,
        "candidates": [],
        "harmonics": 0,
        "bin_width": bin_width,
        "samples": int(values.size),
        "signal": signal,
        "exact_share": None,
        "busy_fraction": 0.0,  # set below, last as before
    }
    mean = _mean(values)
    busy = (values > mean).nonzero()[0]  # substantial I/O
    if busy.size == values.size:  # flat: every bin equal, above a mean rounded low
        busy = busy[:0]
    found = _dominant_period(values, mean, _span(busy), bin_width, settings, exact) if busy.size else None
    if found is None:
        result["busy_fraction"] = _busy_fraction(values, busy)
        return result
    return {**result, **found, "busy_fraction": _busy_fraction(values, busy, found["period"] / bin_width)}


class _Amplitudes(NamedTuple):
    """Spectrum amplitudes and the mean and spread of the non-DC ones.

    z-scores are taken only where a decision needs them (threshold, candidate
    bins, harmonics): z-scoring the whole oversampled spectrum cost more
    full-length passes than the FFT itself.
    """

    values: Floats
    mean: float
    spread: float

    @classmethod
    def of(cls, spectrum: NDArray[np.complexfloating[Any]], size: int, energy: float) -> _Amplitudes:
        """From the ``rfft`` of ``size`` points of a signal whose squares sum to ``energy``.

        The spread comes from Parseval's theorem (the full spectrum's power
        is ``size * energy``; the one-sided half holds each bin but DC and
        Nyquist once for two) instead of another pass over the amplitudes.
        """
        values = np.abs(spectrum)
        ac = values[1:]
        mean = float(_mean(ac))
        dc, last = float(values[0]), float(values[-1])  # squared in double precision
        ac_power = (size * energy - dc**2 + (last**2 if size % 2 == 0 else 0.0)) / 2.0
        return cls(values, mean, math.sqrt(max(ac_power / ac.size - mean**2, 0.0)))

    def z(self, bins: int | NDArray[np.int64]) -> Floats:
        """z-scores of these bins."""
        scores: Floats = (self.values[bins] - self.mean) / self.spread
        return scores

    def at_z(self, z: float) -> float:
        """The amplitude whose z-score is ``z``."""
        return self.mean + z * self.spread


def _dominant_period(
    values: Floats,
    mean: np.floating[Any],
    active_bins: int,
    bin_width: float,
    settings: SpectrumSettings,
    exact: Exact | None = None,
) -> _Peak | None:
    """Period, confidence, score, candidates and verdict of the strongest fundamental, if any."""
    import scipy.fft

    window = bin_width * values.size
    # Oversampled spectrum: a period that does not divide the window falls
    # between two bins and loses up to 36 % of its height (scalloping), enough
    # to drop a comb's fundamental below its harmonics; at half-bin spacing
    # the loss is at most 10 %. Single precision halves the cost of this, the
    # largest step, and keeps peaks far more exact than one bin needs. The
    # mean-removed signal is written straight into the zero-padded buffer the
    # FFT may overwrite: no intermediate copies.
    oversampling = settings.fft_oversampling
    padded = np.zeros(oversampling * values.size, dtype=np.float32)
    centred = np.subtract(values, mean, out=padded[: values.size], casting="same_kind")
    energy = _dot(centred, centred)
    spectrum = scipy.fft.rfft(padded, overwrite_x=True)
    amplitudes = _Amplitudes.of(spectrum, padded.size, energy)
    if not amplitudes.spread > 0:
        return None
    highest = _highest_bin(
        window,
        spectrum.size,
        min_period_seconds=settings.min_period_seconds,
        fft_oversampling=oversampling,
    )
    candidates = _candidates(amplitudes, highest, settings)
    if not candidates.size:
        return None
    fundamentals, harmonics = _fold_harmonics(candidates, tolerance=oversampling)
    z = amplitudes.z(fundamentals)
    dominant = int(fundamentals[z.argmax()])
    frequency = _refine(amplitudes, dominant, fft_z_threshold=settings.fft_z_threshold) / (
        oversampling * window
    )
    period = 1.0 / frequency
    score, significance = _periodicity_score(
        spectrum[::oversampling],
        active_bins,
        values.size,
        period / bin_width,
        fft_score_smoothing=settings.fft_score_smoothing,
    )
    confidence = _confidence(z, score)
    periodic = bool(
        z.size <= FTIO_MAX_FUNDAMENTALS
        and window / period >= settings.fft_min_periods
        and period >= settings.min_period_seconds
        and score >= settings.fft_min_score
        and significance >= settings.fft_min_significance
    )
    exact_share = None
    if periodic and exact is not None:  # a pass over the operations: only to confirm a period
        exact_share = _exact_share(
            exact, float(amplitudes.values[dominant]), dominant / (oversampling * window), bin_width
        )
        periodic = exact_share >= settings.fft_min_exact_share
    return {
        "periodic": periodic,
        "period": period,
        "frequency": frequency,
        "confidence": confidence,
        "score": score,
        "significance": significance,
        "harmonics": harmonics,
        "exact_share": exact_share,
        "candidates": [
            {"period": oversampling * window / k, "z": float(zk)}
            for k, zk in zip(fundamentals.tolist(), z.tolist())
        ],
    }


def _exact_share(exact: Exact, amplitude: float, frequency: float, bin_width: float) -> float:
    """The operations' own Fourier amplitude at a spectrum peak, over the binned signal's.

    Bin-averaging scales frequency f by sinc(f x bin width) and folds I/O
    faster than the bins' Nyquist frequency onto lower ones (aliasing): 20 ms
    requests every 0.11 s, binned every 0.1 s, show a clean 1.1 s period.
    The exact coefficient has a period only where the operations do: about 1
    for a real period, near 0 for an alias.
    """
    expected = abs(exact(frequency)) * abs(float(np.sinc(frequency * bin_width)))
    return expected / (amplitude * bin_width) if amplitude > 0 else 0.0


def _exact_coefficient(
    starts: Floats, ends: Floats, nbytes: Floats, window: float, frequency: float
) -> complex:
    """Fourier coefficient at ``frequency`` of the mean-removed bandwidth over
    ``[0, window]``, in closed form from the operations (no grid)."""
    turn = -2j * np.pi * frequency
    spread = ends > starts
    rate = nbytes[spread] / (ends[spread] - starts[spread])
    steps = (rate * (np.exp(turn * starts[spread]) - np.exp(turn * ends[spread]))).sum()
    mean = nbytes.sum() / window * (1 - np.exp(turn * window))  # the removed mean's share
    impulses = (nbytes[~spread] * np.exp(turn * starts[~spread])).sum()
    return complex((mean - steps) / turn + impulses)


def _highest_bin(window: float, size: int, *, min_period_seconds: float, fft_oversampling: int) -> int:
    """Last oversampled bin that may hold a period of at least ``min_period_seconds``.

    Faster repeats are the cadence of requests inside one I/O phase (SPEC 3.4,
    3.5), not an application's period. A peak's bin is up to one frequency
    bin (``fft_oversampling`` grid points) off its refined frequency, so the
    cut keeps that margin and the refined period decides at the edge.
    """
    if min_period_seconds <= 0:
        return size - 1
    edge = math.floor(fft_oversampling * window / min_period_seconds)
    return min(edge + fft_oversampling, size - 1)


def _candidates(amplitudes: _Amplitudes, highest: int, settings: SpectrumSettings) -> np.ndarray:
    """Outlier peaks close to the strongest outlier, in rising frequency.

    Only local maxima count, and peaks within one frequency bin of each
    other (``fft_oversampling`` grid points) are one feature: the
    oversampled grid shows a peak's shoulder and the ripple between two
    close peaks, which are not rival frequencies. The strongest of such a
    group stands for it. Frequencies with fewer than ``fft_min_periods``
    periods in the window are no candidates: the envelope of I/O confined to
    part of the run peaks there and would otherwise mask a real period. Nor
    are frequencies above ``highest`` (periods under ``min_period_seconds``),
    which then set no bar for the others either.
    """
    lowest = math.ceil(settings.fft_min_periods * settings.fft_oversampling)
    band = amplitudes.values[lowest : highest + 1]
    if not band.size:
        return np.zeros(0, dtype=np.int64)
    top = max(float(amplitudes.z(lowest + int(band.argmax()))), 0.0)
    inner = band[: amplitudes.values.size - 1 - lowest]  # a local maximum needs two neighbours
    found = lowest + (inner > amplitudes.at_z(settings.fft_z_threshold)).nonzero()[0]
    level = amplitudes.values[found]
    found = found[
        (level >= amplitudes.values[found - 1])
        & (level > amplitudes.values[found + 1])
        & (amplitudes.z(found) >= settings.fft_peak_fraction * top)
    ]
    # Grouped in Python: there are a handful of peaks, and numpy's fixed cost
    # per call would be most of this function's. On ties the first peak wins.
    kept: list[int] = []
    best: list[float] = []
    last = 0  # set by the first peak, read from the second on
    for k, level in zip(found.tolist(), amplitudes.values[found].tolist()):
        if kept and k - last <= settings.fft_oversampling:
            if level > best[-1]:
                kept[-1], best[-1] = k, level
        else:
            kept.append(k)
            best.append(level)
        last = k
    return np.array(kept, dtype=np.int64)


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
    remaining = candidates.tolist()  # a handful: Python is cheaper than numpy calls
    fundamentals: list[int] = []
    folded = 0
    while remaining and len(fundamentals) < _MAX_FUNDAMENTALS:
        base, rest = remaining[0], remaining[1:]
        fundamentals.append(base)
        remaining = []
        for k in rest:
            multiple = round(k / base)  # to even on ties, as np.rint
            if multiple >= 2 and abs(k / multiple - base) <= tolerance:
                folded += 1
            else:
                remaining.append(k)
    return np.asarray(fundamentals, dtype=np.int64), folded


def _refine(amplitudes: _Amplitudes, k: int, *, fft_z_threshold: float) -> float:
    """Fractional bin of the fundamental, sharpened by its strong harmonics.

    Harmonic ``m`` sits at ``m`` times the fundamental, so its interpolated
    position pins the fundamental ``m`` times more precisely. Doubling the
    order each step keeps the predicted position within a bin of the truth;
    the climb stops at the first harmonic that is no longer an outlier peak
    (jitter smears high harmonics first).
    """
    amplitude, outlier = amplitudes.values, amplitudes.at_z(fft_z_threshold)
    position, previous = _interpolated_peak(amplitude, k), k
    order = 2
    while (target := int(round(order * position))) + 2 < amplitude.size:
        local = target - 1 + int(amplitude[target - 1 : target + 2].argmax())
        is_peak = amplitude[local - 1] <= amplitude[local] >= amplitude[local + 1]
        if not (local > previous and is_peak and amplitude[local] > outlier):
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
    return k + float(min(max(0.5 * (left - right) / curvature, -0.5), 0.5))


def _periodicity_score(
    spectrum: NDArray[np.complexfloating[Any]],
    active_bins: int,
    samples: int,
    period_bins: float,
    *,
    fft_score_smoothing: float,
) -> tuple[float, float]:
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
    import scipy.fft

    kernel = fft_score_smoothing * period_bins  # kernel width in samples
    if kernel > _SCORE_KERNEL_STEPS:  # a coarser grid of a size the FFT handles fast
        samples_needed = math.ceil(samples * _SCORE_KERNEL_STEPS / kernel)
        size = min(scipy.fft.next_fast_len(samples_needed, real=True), samples)
    else:
        size = samples
    lag = int(round(period_bins * size / samples))
    if lag <= 0 or lag >= size - 1:
        return 0.0, 0.0
    sigma = fft_score_smoothing * lag
    kept = size // 2 + 1
    smooth = scipy.fft.irfft(spectrum[:kept] * _gaussian_gain(sigma, size), n=size)
    a, b = smooth[:-lag] - _mean(smooth[:-lag]), smooth[lag:] - _mean(smooth[lag:])
    norm = math.sqrt(_dot(a, a) * _dot(b, b))
    if not norm > 0:
        return 0.0, 0.0
    r = float(min(max(_dot(a, b) / norm, 0.0), 1.0))
    # Smoothed noise decorrelates after about 2 sqrt(pi) sigma samples
    independent = (active_bins * size / samples - lag) / max(2 * math.sqrt(math.pi) * sigma, 1.0)
    significance = np.arctanh(min(r, _MAX_CORRELATION)) * math.sqrt(max(independent - 3, 0.0))
    return r, float(significance)


@lru_cache(maxsize=32)  # at most 32 x 256 KiB (32,769 bins at the sample cap)
def _gaussian_gain(sigma: float, size: int) -> np.ndarray:
    """Gain of a Gaussian of ``sigma`` samples at each ``rfft`` bin of ``size`` points.

    Cached: the score's grid keeps about 20 steps per period, so a few
    (sigma, size) pairs make most calls (6 pairs make 91 % of the 2,298
    scores of the year sample), and six numpy calls on ~30 values cost ~10 us.
    """
    gain = np.exp(-2 * (np.pi * sigma * np.arange(size // 2 + 1) / size) ** 2)
    gain.flags.writeable = False
    return gain


def _mean(a: NDArray[np.floating[Any]]) -> np.floating[Any]:
    """``a.mean()`` (same dtype and rounding) without its fixed cost, 3-4 times a
    small array's sum."""
    mean: np.floating[Any] = a.sum() / a.size
    return mean


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Dot product without BLAS: ``np.dot`` hands long vectors to OpenBLAS threads,
    whose wake-up cost milliseconds of CPU per call on a busy machine."""
    return float(np.multiply(a, b).sum())


def _confidence(z_fundamentals: np.ndarray, score: float) -> float:
    """FTIO's confidence: with one or two fundamentals (high, moderate confidence in
    FTIO's words) the dominant's share of their z-scores times the score, so one
    fundamental has the score itself; with more, no period and 0."""
    if z_fundamentals.size > FTIO_MAX_FUNDAMENTALS:
        return 0.0
    return float(z_fundamentals.max() / z_fundamentals.sum()) * score


def _busy_fraction(values: np.ndarray, busy: np.ndarray, period_bins: float | None = None) -> float:
    """Share of time the bandwidth is above its mean (FTIO's substantial I/O).

    ``busy``: the indices of those bins. With a period, the share is taken
    over the periods that hold substantial I/O rather than the whole run, as
    mean shift does with its segments: a series of bursts busy 30 % of each
    period stays 30 % busy when it fills only part of the run. A bin a burst
    covers only in part counts for that part (its bandwidth relative to the
    typical, median, busy bin's), so the share does not grow by a bin per
    burst edge.
    """
    if not busy.size:
        return 0.0
    busy_bins = _parts_of_median(values[busy])
    if period_bins is None:
        return float(busy_bins / values.size)
    periods = math.floor(_span(busy) / period_bins) + 1
    return float(min(busy_bins / (periods * period_bins), 1.0))


def _parts_of_median(levels: np.ndarray) -> float:
    """``sum(min(levels / median, 1))`` from the one partition that finds the median.

    Below the middle every level counts its share of the median, from the
    middle up each counts 1; no division or clip over every level. Both
    middle ranks are selected whatever the parity, as ``np.median`` does: a
    single rank hits numpy's slow selection path on a plateau (a long
    operation's constant level), 10 times slower. Reorders ``levels`` (no copy).
    """
    half = levels.size // 2
    levels.partition([half - 1, half])
    median = levels[half] if levels.size % 2 else (levels[half - 1] + levels[half]) / 2
    return float(levels[:half].sum() / median + (levels.size - half))


def _span(bins: np.ndarray) -> int:
    """Bins from the first to the last of ``bins`` (sorted), 0 when there are none."""
    return int(bins[-1] + 1 - bins[0]) if bins.size else 0
