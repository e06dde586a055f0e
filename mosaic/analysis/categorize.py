"""One trace's categorization: every intermediate, then the SPEC 4 result object.

:func:`analyze` runs the method of SPEC 3.3-3.7 and keeps every intermediate
(raw and merged operations, segments with cluster ids, chunk bytes, both
periodicity detectors, requests per second), so a timeline plot and the
result object are drawn from the same numbers. :func:`categorize_trace` is
the one function that turns an analysis into the result dict.

Work is skipped where it cannot change a label: an insignificant direction
gets neither mean shift (scikit-learn is the slowest step) nor the FFT, and
most directions of a year of logs are insignificant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mosaic.analysis import bursts as heatmap_bursts
from mosaic.analysis import labels as vocabulary
from mosaic.analysis import merging, metadata, segments, spectrum, temporality, verdict
from mosaic.config import Config
from mosaic.trace import DIRECTIONS, Trace

_LABEL_ORDER = {label: i for i, label in enumerate(vocabulary.ALL_LABELS)}
# Where mean shift's periodic operations came from (SPEC 3.5): records' operations or heatmap bursts.
OPERATIONS, HEATMAP = spectrum.OPERATIONS, spectrum.HEATMAP


@dataclass
class DirectionAnalysis:
    """One direction (read or write) of a trace, every step of SPEC 3.3-3.6."""

    name: str  # "read" or "write"
    ops: np.ndarray  # OPS_DTYPE, unmerged, sorted by start
    merged: merging.MergedOperations
    chunks: np.ndarray  # (4,) bytes per quarter of the run
    significant: bool
    meanshift: dict | None  # segments.meanshift_periodicity() + "source"; None when insignificant
    fft: dict | None  # spectrum.fft_periodicity(); None when insignificant
    verdict: dict | None  # verdict.combine(); None when insignificant
    labels: list[str]  # prefixed with the direction's name
    bursts: heatmap_bursts.Bursts | None = None  # the heatmap's, when mean shift looked at them

    @property
    def bytes(self) -> float:
        return float(self.ops["bytes"].sum())


@dataclass
class TraceAnalysis:
    """Everything computed for one trace; :func:`categorize_trace` reports it."""

    trace: Trace
    read: DirectionAnalysis
    write: DirectionAnalysis
    requests_per_second: np.ndarray  # metadata requests per 1-second bin
    metadata: dict  # metadata.statistics(): the result's figures and the labels' inputs
    metadata_labels: list[str]

    @property
    def categories(self) -> list[str]:
        """All labels of the trace in vocabulary order."""
        found = self.read.labels + self.write.labels + self.metadata_labels
        return sorted(found, key=_LABEL_ORDER.__getitem__)


def analyze(trace: Trace, config: Config) -> TraceAnalysis:
    """Run SPEC 3.3-3.7 on one trace and keep every intermediate."""
    read, write = (_analyze_direction(trace, code, config) for code in DIRECTIONS)
    per_second = metadata.requests_per_second(trace.meta, trace.run_time, config.metadata_seeks)
    summary = metadata.statistics(per_second, trace.run_time, config)
    return TraceAnalysis(trace, read, write, per_second, summary, metadata.summary_labels(summary, config))


def _analyze_direction(trace: Trace, code: int, config: Config) -> DirectionAnalysis:
    name = DIRECTIONS[code]
    ops = trace.direction(code)
    # Columns of the packed OPS_DTYPE rows are unaligned views, on which every numpy
    # call is slower (buffered): each stage below works on aligned copies.
    starts, ends, nbytes, ranks = (ops[column].copy() for column in ("start", "end", "bytes", "ranks"))
    run_time = trace.run_time
    merged = merging.merge(starts, ends, nbytes, ranks, run_time, config)
    chunks = temporality.chunk_bytes(starts, ends, nbytes, run_time)
    total = float(nbytes.sum())
    significant = total >= config.significant_bytes
    found = temporality.labels(chunks, total, config)
    meanshift = fft = final = bursts = None
    if significant:
        meanshift = {
            **segments.meanshift_periodicity(merged.starts, merged.ends, merged.bytes, config),
            "source": OPERATIONS,
        }
        if not meanshift["periodic"] and trace.heatmap is not None:
            bursts = heatmap_bursts.heatmap_bursts(
                getattr(trace.heatmap, name), trace.heatmap.bin_seconds, config
            )
            kept = ~bursts.minor
            seen = segments.meanshift_periodicity(
                bursts.starts[kept], bursts.ends[kept], bursts.bytes[kept], config
            )
            if seen["periodic"]:
                meanshift = {**seen, "source": HEATMAP}
        fft = spectrum.fft_periodicity(starts, ends, nbytes, run_time, config)
        if trace.heatmap is not None:
            heatmap = spectrum.heatmap_periodicity(
                getattr(trace.heatmap, name), trace.heatmap.bin_seconds, config
            )
            fft = spectrum.more_significant(fft, heatmap)
        final = verdict.combine(meanshift, fft, config)
        found += segments.labels(final, config)
    labels = [f"{name}_{label}" for label in found]
    return DirectionAnalysis(name, ops, merged, chunks, significant, meanshift, fft, final, labels, bursts)


def categorize_trace(trace: Trace, config: Config) -> dict:
    """The SPEC 4 result object of one trace."""
    return result(analyze(trace, config), config)


def result(analysis: TraceAnalysis, config: Config) -> dict:
    """Build the SPEC 4 result object from an analysis (the only place that does)."""
    trace = analysis.trace
    return {
        "file": trace.file,
        "status": "ok",
        "partial": bool(trace.partial),
        "dropped_records": int(trace.dropped_records),
        "has_dxt": bool(trace.has_dxt),
        "job": _plain(dict(trace.job)),
        "group": {"key": trace.group_key(config.group_by), "runs": 1, "representative": True},
        "categories": analysis.categories,
        "read": _direction_result(analysis.read),
        "write": _direction_result(analysis.write),
        "metadata": dict(analysis.metadata),
    }


def _direction_result(direction: DirectionAnalysis) -> dict:
    """The result's direction object, built from plain scalars.

    Mean shift's figures and the verdict are plain already; only the FFT's
    (numpy floats) go through :func:`_plain`. Lists and dicts are copied, so
    the result shares nothing mutable with the analysis.
    """
    periodicity = {}
    if direction.significant:
        meanshift = {
            key: value for key, value in direction.meanshift.items() if key not in ("segments", "occurrences")
        }
        meanshift["operations"] = [dict(op) for op in meanshift["operations"]]
        meanshift["segments"] = len(direction.meanshift["segments"]["durations"])
        periodicity = {
            "meanshift": meanshift,
            "fft": _plain(direction.fft),
            "verdict": dict(direction.verdict),
        }
    return {
        "bytes": direction.bytes,
        "operations": len(direction.ops),
        "minor_operations": int(np.count_nonzero(direction.merged.minor)),
        "merged_operations": len(direction.merged),
        "chunks_bytes": direction.chunks.tolist(),
        "periodicity": periodicity,
    }


_JSON_SCALARS = (str, int, float, bool, type(None))  # exact types: np.float64 is a float subclass


def _plain(value):
    """Nested dicts / lists with numpy scalars and arrays turned into JSON types."""
    if type(value) in _JSON_SCALARS:  # most leaves: decided in one test
        return value
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def evicted_result(file, reason: str, detail: str = "") -> dict:
    """The result object of a log that could not be categorized (SPEC 3.1, 4)."""
    return {"file": str(file), "status": "evicted", "reason": reason, "detail": detail}


def guarded(file, work: Callable[[], dict]) -> dict:
    """``work()``, or the eviction of ``file``: a bad log never escapes as an exception.

    A :class:`~mosaic.errors.LogError` keeps its reason; any other
    exception (a reader or analysis bug met on odd bytes) becomes
    ``unreadable`` with the exception as detail, so one log cannot stop a
    batch of hundreds of thousands, nor fail a service request with a 500.
    """
    from mosaic.errors import LogError, Reason

    try:
        return work()
    except LogError as error:
        return evicted_result(file, error.reason, error.detail)
    except MemoryError:  # past the worker's memory limit (RLIMIT_AS)
        return evicted_result(file, Reason.TOO_LARGE, "needs more memory than a worker may use")
    except Exception as error:  # noqa: BLE001 - a batch must survive any bad log
        return evicted_result(file, Reason.UNREADABLE, f"{type(error).__name__}: {error}")


def categorize_file(path, config: Config) -> dict:
    """Read and categorize one log; never raises on a bad log (see :func:`guarded`)."""
    from mosaic.trace import read_trace

    return guarded(path, lambda: categorize_trace(read_trace(path, config), config))
