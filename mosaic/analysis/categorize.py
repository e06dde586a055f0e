"""One trace's categorization: every intermediate, then the SPEC 4 result object.

:func:`analyze` runs the method of SPEC 3.3-3.7 and keeps every intermediate
(raw and merged operations, segments with cluster ids, chunk bytes, both
periodicity detectors, requests per second), so a timeline plot and the
result object are drawn from the same numbers. :func:`categorize_trace` is
the one function that turns an analysis into the result dict.

Work is skipped where it cannot change a label: an insignificant direction
gets neither mean shift (the slowest step) nor the FFT, and most directions
of a year of logs are insignificant.

Reading a file and turning a bad log into its eviction happen outside this
package (:mod:`mosaic.logfile`): analysis does no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import numpy as np
from numpy.typing import NDArray

from mosaic.analysis import bursts as heatmap_bursts
from mosaic.analysis import labels as vocabulary
from mosaic.analysis import merging, metadata, segments, spectrum, temporality, verdict
from mosaic.analysis.metadata import MetadataStatistics
from mosaic.analysis.segments import MeanShiftPeriodicity, PeriodicOperation
from mosaic.analysis.spectrum import FFTPeriodicity
from mosaic.analysis.verdict import Verdict
from mosaic.config import Config
from mosaic.directions import DIRECTIONS
from mosaic.trace import READ, WRITE, Job, Trace

_LABEL_ORDER = {label: i for i, label in enumerate(vocabulary.ALL_LABELS)}
# Where mean shift's periodic operations came from (SPEC 3.5): records' operations or heatmap bursts.
OPERATIONS, HEATMAP = spectrum.OPERATIONS, spectrum.HEATMAP


class SourcedMeanShift(MeanShiftPeriodicity):
    """Mean shift's periodicity and the signal it was found in."""

    source: str  # OPERATIONS or HEATMAP


class MeanShiftSummary(TypedDict):
    """The result object's mean shift: per-segment arrays replaced by their count."""

    periodic: bool
    share: float
    operations: list[PeriodicOperation]
    source: str
    segments: int


class Periodicity(TypedDict, total=False):
    """A significant direction's periodicity; empty for an insignificant one."""

    meanshift: MeanShiftSummary
    fft: FFTPeriodicity
    verdict: Verdict


class DirectionResult(TypedDict):
    """The result object's ``read`` or ``write`` (SPEC 4)."""

    bytes: float
    operations: int
    minor_operations: int
    merged_operations: int
    chunks_bytes: list[float]
    periodicity: Periodicity


class Group(TypedDict):
    """The trace's dedup group (SPEC 3.2); ``mosaic run`` adds the group's figures."""

    key: str
    runs: int
    representative: bool


class TraceResult(TypedDict):
    """The SPEC 4 result object of a categorized trace."""

    file: str
    status: str  # "ok"
    partial: bool
    dropped_records: int
    has_dxt: bool
    job: Job
    group: Group
    categories: list[str]
    read: DirectionResult
    write: DirectionResult
    metadata: MetadataStatistics
    performance: NotRequired[dict[str, Any]]  # SPEC 3.9 (mosaic.performance); absent: a hand-built trace


@dataclass
class DirectionAnalysis:
    """One direction (read or write) of a trace, every step of SPEC 3.3-3.6."""

    name: str  # "read" or "write"
    ops: NDArray[np.void]  # OPS_DTYPE, unmerged, sorted by start
    merged: merging.MergedOperations
    chunks: NDArray[np.float64]  # (4,) bytes per quarter of the run
    significant: bool
    meanshift: SourcedMeanShift | None  # None when insignificant
    fft: FFTPeriodicity | None  # spectrum.fft_periodicity(); None when insignificant
    verdict: Verdict | None  # verdict.combine(); None when insignificant
    labels: list[str]  # prefixed with the direction's name
    # the heatmap's, when mean shift looked at them: those it ran on last (split occurrences
    # joined when that made them periodic: Bursts.joined)
    bursts: heatmap_bursts.Bursts | None = None
    chunks_source: str = OPERATIONS  # where the quarters come from: OPERATIONS or HEATMAP

    @property
    def bytes(self) -> float:
        return float(self.ops["bytes"].sum())


@dataclass
class TraceAnalysis:
    """Everything computed for one trace; :func:`categorize_trace` reports it."""

    trace: Trace
    read: DirectionAnalysis
    write: DirectionAnalysis
    requests_per_second: NDArray[np.float64]  # metadata requests per 1-second bin
    metadata: MetadataStatistics  # the result's figures and the labels' inputs
    metadata_labels: list[str]

    @property
    def categories(self) -> list[str]:
        """All labels of the trace in vocabulary order."""
        found = self.read.labels + self.write.labels + self.metadata_labels
        return sorted(found, key=_LABEL_ORDER.__getitem__)


def analyze(trace: Trace, config: Config) -> TraceAnalysis:
    """Run SPEC 3.3-3.7 on one trace and keep every intermediate."""
    read, write = (_analyze_direction(trace, code, config) for code in (READ, WRITE))
    per_second = metadata.requests_per_second(
        trace.meta, trace.run_time, metadata_seeks=config.metadata_seeks
    )
    summary = metadata.statistics(per_second, metadata_spike_level=config.metadata_spike_level)
    found = metadata.summary_labels(
        summary,
        metadata_high_spike=config.metadata_high_spike,
        metadata_min_spikes=config.metadata_min_spikes,
        metadata_density_mean=config.metadata_density_mean,
    )
    return TraceAnalysis(trace, read, write, per_second, summary, found)


def _analyze_direction(trace: Trace, code: int, config: Config) -> DirectionAnalysis:
    """One direction's steps, each given the settings it reads (the periodicity
    steps' Settings are built only for a significant direction: most are not)."""
    name = DIRECTIONS[code]
    ops = trace.direction(code)
    # Columns of the packed OPS_DTYPE rows are unaligned views, on which every numpy
    # call is slower (buffered): each stage below works on aligned copies.
    starts, ends, nbytes, ranks = (ops[column].copy() for column in ("start", "end", "bytes", "ranks"))
    run_time = trace.run_time
    merged = merging.merge(
        starts,
        ends,
        nbytes,
        ranks,
        run_time,
        minor_rate_fraction=config.minor_rate_fraction,
        neighbor_gap_runtime_fraction=config.neighbor_gap_runtime_fraction,
        neighbor_gap_duration_fraction=config.neighbor_gap_duration_fraction,
    )
    total = float(nbytes.sum())
    chunks, chunks_source = _chunks(trace, name, starts, ends, nbytes, total, config.heatmap_quarter_bins)
    significant = total >= config.significant_bytes
    found = temporality.labels(chunks, total, temporality.TemporalitySettings.of(config))
    meanshift: SourcedMeanShift | None = None
    fft: FFTPeriodicity | None = None
    final: Verdict | None = None
    bursts: heatmap_bursts.Bursts | None = None
    if significant:
        clustering = segments.MeanShiftSettings.of(config)
        meanshift = {
            **segments.meanshift_periodicity(merged.starts, merged.ends, merged.bytes, clustering),
            "source": OPERATIONS,
        }
        if not meanshift["periodic"] and trace.heatmap is not None:
            bursts, seen = heatmap_bursts.burst_periodicity(
                getattr(trace.heatmap, name),
                trace.heatmap.bin_seconds,
                clustering,
                minor_rate_fraction=config.minor_rate_fraction,
                spent=_time_spent(trace, name) if config.busy_bounded_by_time_spent else None,
            )
            if seen["periodic"]:
                meanshift = {**seen, "source": HEATMAP}
        detection = spectrum.SpectrumSettings.of(config)
        fft = spectrum.fft_periodicity(
            starts, ends, nbytes, run_time, spectrum.SamplingSettings.of(config), detection
        )
        if trace.heatmap is not None:
            heatmap = spectrum.heatmap_periodicity(
                getattr(trace.heatmap, name), trace.heatmap.bin_seconds, detection
            )
            fft = spectrum.more_significant(fft, heatmap)
        final = verdict.combine(meanshift, fft, verdict.VerdictSettings.of(config))
        found += verdict.labels(final, verdict.LabelSettings.of(config))
    labels = [f"{name}_{label}" for label in found]
    return DirectionAnalysis(
        name, ops, merged, chunks, significant, meanshift, fft, final, labels, bursts, chunks_source
    )


def _time_spent(trace: Trace, name: str) -> float | None:
    """Seconds the job spent in the direction's calls: SPEC 3.9's job figure (the slowest
    rank's path, POSIX + STDIO); None when not known or only a lower bound (partial log)."""
    job = (trace.performance or {}).get("job")
    if not job or job.get("lower_bound"):
        return None
    spent = job[name]["time"]
    return None if spent is None else float(spent)


def _chunks(
    trace: Trace,
    name: str,
    starts: np.ndarray,
    ends: np.ndarray,
    nbytes: np.ndarray,
    total: float,
    quarter_bins: float,
) -> tuple[NDArray[np.float64], str]:
    """The direction's quarters and their source (SPEC 3.6): the HEATMAP's bins when the
    log has a heatmap holding bytes of the direction, at least ``quarter_bins`` of them to a
    quarter (it times all the API's traffic, where records spread theirs over first-to-last
    windows and DXT may cover some files only), else the operations."""
    heatmap, run_time = trace.heatmap, trace.run_time
    if heatmap is not None and total > 0 and run_time / 4 >= quarter_bins * heatmap.bin_seconds:
        bins = getattr(heatmap, name)
        if bins.any():
            return temporality.heatmap_chunk_bytes(bins, heatmap.bin_seconds, run_time, total), HEATMAP
    return temporality.chunk_bytes(starts, ends, nbytes, run_time), OPERATIONS


def categorize_trace(trace: Trace, config: Config) -> TraceResult:
    """The SPEC 4 result object of one trace."""
    return result(analyze(trace, config), config)


def result(analysis: TraceAnalysis, config: Config) -> TraceResult:
    """Build the SPEC 4 result object from an analysis (the only place that does)."""
    trace = analysis.trace
    made: TraceResult = {
        "file": trace.file,
        "status": "ok",
        "partial": bool(trace.partial),
        "dropped_records": int(trace.dropped_records),
        "has_dxt": bool(trace.has_dxt),
        "job": _plain_job(trace.job),
        "group": {"key": trace.group_key(config.group_by), "runs": 1, "representative": True},
        "categories": analysis.categories,
        "read": _direction_result(analysis.read),
        "write": _direction_result(analysis.write),
        "metadata": MetadataStatistics(**analysis.metadata),
    }
    if trace.performance is not None:
        made["performance"] = _plain(trace.performance)
    return made


def _direction_result(direction: DirectionAnalysis) -> DirectionResult:
    """The result's direction object, built from plain scalars.

    Mean shift's figures and the verdict are plain already; only the FFT's
    (numpy floats) go through :func:`_plain`. Lists and dicts are copied, so
    the result shares nothing mutable with the analysis.
    """
    periodicity: Periodicity = {}
    if direction.significant:
        assert direction.meanshift is not None and direction.fft is not None and direction.verdict is not None
        found = direction.meanshift
        meanshift: MeanShiftSummary = {  # the keys in mean shift's order, segments last
            "periodic": found["periodic"],
            "share": found["share"],
            "operations": [PeriodicOperation(**op) for op in found["operations"]],
            "source": found["source"],
            "segments": len(found["segments"]["durations"]),
        }
        periodicity = {
            "meanshift": meanshift,
            "fft": _plain(direction.fft),
            "verdict": Verdict(**direction.verdict),
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


def _plain_job(job: Job) -> Job:
    """A copy of the job facts in JSON types."""
    plain: Job = _plain(dict(job))
    return plain


def _plain(value: Any) -> Any:
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
