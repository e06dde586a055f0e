"""One trace as a timeline (paper Fig. 2), drawn from `analyze()`'s intermediates.

Per direction, top to bottom: ranks doing I/O over time before merging
(minor operations, left out of merging, outlined), the merged operations
with the segments of each periodic operation, the bytes of the four
quarter chunks, the bytes per HEATMAP bin when the log has one (Darshan
3.3+; with the bursts mean shift segmented when the operations showed no
period, SPEC 3.5), and the FFT power spectrum of the signal the detector
used, with the detected peak. At the bottom: metadata requests per second
as counted (seeks only with ``metadata_seeks``; past ``METADATA_BARS``
seconds, the peak of each stretch) with the two spike thresholds.
Everything is drawn from the same numbers that gave the trace its labels.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import EngFormatter
from matplotlib.typing import LineStyleType
from numpy.typing import ArrayLike

from mosaic.analysis import spectrum
from mosaic.analysis.categorize import HEATMAP, OPERATIONS, DirectionAnalysis, TraceAnalysis
from mosaic.config import Config
from mosaic.report import style
from mosaic.report.style import PALETTE
from mosaic.report.tables import display_name
from mosaic.trace import HeatmapSignal

# (unit, seconds) from the largest: the first unit giving at least 2 of them over the run.
TIME_UNITS = (("h", 3600.0), ("min", 60.0), ("s", 1.0))
RAW_COLOR, MINOR_COLOR, MERGED_COLOR = PALETTE[0], PALETTE[3], PALETTE[7]
CLUSTER_COLORS = [PALETTE[i] for i in (1, 2, 4, 8, 9, 5, 6)]  # cycled past 7 periodic operations
LEGEND_OPERATIONS = 4  # periodic operations named in the legend, dominant first
FFT_SIGNALS = {"operations": "the operations' bandwidth", "heatmap": "the HEATMAP bins"}
# Bars of the metadata panel at most: more than the figure has pixels across only slows
# the drawing (a 40-day run has 3.5 million seconds: 46 s of matplotlib, then past the
# worker's memory bound). Longer runs are drawn as the peak of each stretch of seconds.
METADATA_BARS = 4096


def time_unit(run_time: float) -> tuple[str, float]:
    """The coarsest unit that still reads as several ticks over the run."""
    for unit, seconds in TIME_UNITS:
        if run_time >= 2 * seconds:
            return unit, seconds
    return TIME_UNITS[-1]


def concurrency(starts: np.ndarray, ends: np.ndarray, ranks: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Step function of ranks doing I/O: (times, level after each time).

    An operation standing for r ranks adds r over [start, end); a sweep over
    the sorted start and end events, so cost is O(n log n) for any trace.
    """
    times = np.concatenate([starts, ends])
    delta = np.concatenate([ranks, -np.asarray(ranks)]).astype(float)
    order = np.argsort(times, kind="stable")
    return times[order], np.cumsum(delta[order])


def _blocks(starts: np.ndarray, ends: np.ndarray, heights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Outline of disjoint blocks: x, y of (s,0) (s,h) (e,h) (e,0) per block."""
    x = np.column_stack([starts, starts, ends, ends]).ravel()
    y = np.column_stack([np.zeros_like(heights), heights, heights, np.zeros_like(heights)]).ravel()
    return x, y


def _bytes(value: float) -> str:
    return EngFormatter(unit="B", places=1)(value)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _no_operations(ax: Axes) -> None:
    ax.text(0.5, 0.5, "no operations", ha="center", va="center", transform=ax.transAxes)


def _raw_panel(ax: Axes, direction: DirectionAnalysis, scale: float) -> dict[str, Any]:
    ops = direction.ops
    ax.set_ylabel("ranks doing I/O")
    times, level = concurrency(ops["start"], ops["end"], ops["ranks"])
    if not len(ops):
        _no_operations(ax)
        return {"times": times, "ranks": level, "minor": 0}
    ax.fill_between(
        times / scale, level, step="post", color=RAW_COLOR, alpha=0.8, label=_count(len(ops), "operation")
    )
    minor = direction.merged.minor
    if minor.any():
        minor_ops = ops[minor]
        m_times, m_level = concurrency(minor_ops["start"], minor_ops["end"], minor_ops["ranks"])
        ax.step(
            m_times / scale,
            m_level,
            where="post",
            color=MINOR_COLOR,
            label=f"{_count(int(minor.sum()), 'minor operation')} (not merged)",
        )
    ax.legend(loc="best", fontsize=style.NOTE_FONT)
    return {"times": times, "ranks": level, "minor": int(minor.sum())}


def _merged_panel(ax: Axes, direction: DirectionAnalysis, scale: float) -> dict[str, Any]:
    merged = direction.merged
    durations = merged.ends - merged.starts
    heights = np.divide(
        merged.rank_seconds, durations, out=np.ones_like(durations), where=durations > 0
    )  # mean ranks over the merged operation
    ax.set_ylabel("ranks (merged, mean)")
    if not len(merged):
        _no_operations(ax)
    else:
        ax.fill(
            *_blocks(merged.starts / scale, merged.ends / scale, heights),
            color=MERGED_COLOR,
            alpha=0.6,
            label=_count(len(merged), "merged operation"),
        )
    operations = _periodic_strip(ax, direction, OPERATIONS, scale)
    ax.set_ylim(0, max(heights.max(initial=0.0), 1.0) * 1.25)  # room for the segment strip
    if len(merged):
        ax.legend(loc="best", fontsize=style.NOTE_FONT, framealpha=0.9)
    return {
        "starts": merged.starts,
        "ends": merged.ends,
        "bytes": merged.bytes,
        "periodic_operations": operations,
    }


def _periodic_strip(
    ax: Axes, direction: DirectionAnalysis, source: str, scale: float
) -> list[dict[str, Any]]:
    """Occurrences of each periodic operation mean shift found in ``source``, as a strip on top.

    Drawn in the panel of the operations mean shift segmented: the merged
    operations, or the HEATMAP's bursts (SPEC 3.5). Returns those operations.
    """
    meanshift: Mapping[str, Any] = direction.meanshift or {}
    if meanshift.get("source") != source:
        return []
    operations: list[dict[str, Any]] = meanshift["operations"]
    for rank, (color, op, where) in enumerate(
        zip(itertools.cycle(CLUSTER_COLORS), operations, meanshift["occurrences"])
    ):
        label = (
            f"period {op['period']:.4g} s \u00d7{op['occurrences']}, "
            f"{_bytes(op['bytes_per_occurrence'])} each, busy {op['busy_fraction']:.0%}"
            if rank < LEGEND_OPERATIONS
            else f"{len(operations) - LEGEND_OPERATIONS} more periodic operations"
            if rank == LEGEND_OPERATIONS
            else None
        )
        ax.broken_barh(
            list(zip(where["starts"] / scale, where["durations"] / scale, strict=True)),
            (0.9, 0.08),
            transform=ax.get_xaxis_transform(),
            color=color,
            edgecolor="white",
            linewidth=0.5,
            label=label,
        )
    return operations


def _bytes_axis(ax: Axes, values: np.ndarray, headroom: float) -> None:
    """A y axis in bytes from 0 to `headroom` x the top value; a lone 0 tick when all are 0."""
    ax.yaxis.set_major_formatter(EngFormatter(unit="B"))
    if not values.any():
        ax.set_yticks([0])  # not milli-byte ticks up to 1 B
    ax.set_ylim(0, max(values.max(initial=0.0), 1.0) * headroom)


def _chunk_panel(ax: Axes, direction: DirectionAnalysis, run_time: float, scale: float) -> dict[str, Any]:
    edges = np.linspace(0.0, run_time, len(direction.chunks) + 1) / scale
    bars = ax.bar(
        edges[:-1], direction.chunks, width=np.diff(edges), align="edge", color=PALETTE[0], edgecolor="white"
    )
    ax.bar_label(bars, labels=[_bytes(b) for b in direction.chunks], fontsize=style.NOTE_FONT)
    _bytes_axis(ax, direction.chunks, headroom=1.2)  # room for the bar labels
    ax.set_ylabel("bytes per quarter")
    return {"chunks": direction.chunks}


def _heatmap_panel(
    ax: Axes, heatmap: HeatmapSignal, direction: DirectionAnalysis, scale: float
) -> dict[str, Any]:
    """Bytes per HEATMAP bin summed over ranks: the one time series Darshan keeps without DXT.

    When mean shift looked at the bins' bursts (the operations showed no
    period), each burst is outlined, minor ones dotted, and the periodic
    operations found among them are drawn on top.
    """
    values = getattr(heatmap, direction.name)
    edges = np.arange(len(values) + 1) * heatmap.bin_seconds
    ax.stairs(
        values,
        edges / scale,
        fill=True,
        color=PALETTE[2],
        edgecolor=PALETTE[2],
        linewidth=0.8,
        label=f"HEATMAP: {_bytes(values.sum())} in {_count(len(values), 'bin')} of {heatmap.bin_seconds:g} s",
    )
    _bytes_axis(ax, values, headroom=1.45)  # room for the legend above the bins
    bursts = direction.bursts
    data: dict[str, Any] = {"heatmap_edges": edges, "heatmap_bytes": values}
    if bursts is not None and len(bursts):
        outlines: tuple[tuple[bool, LineStyleType, str], ...] = (
            (False, "-", "burst"),
            (True, ":", "minor burst"),
        )
        for minor, dashes, noun in outlines:
            chosen = bursts.minor == minor
            if chosen.any():
                ax.vlines(
                    np.concatenate([bursts.starts[chosen], bursts.ends[chosen]]) / scale,
                    0,
                    0.85,
                    transform=ax.get_xaxis_transform(),
                    color=PALETTE[3],
                    linestyles=dashes,
                    linewidth=0.8,
                    label=f"{_count(int(chosen.sum()), noun)} (bounds)",
                )
        data["bursts"] = {"starts": bursts.starts, "ends": bursts.ends, "minor": bursts.minor}
    data["heatmap_periodic_operations"] = _periodic_strip(ax, direction, HEATMAP, scale)
    ax.set_ylabel(f"bytes per {heatmap.bin_seconds:g} s bin")
    ax.legend(loc="upper right", fontsize=style.NOTE_FONT)
    return data


def fft_signal(
    direction: DirectionAnalysis, heatmap: HeatmapSignal | None, run_time: float, config: Config
) -> tuple[str, float, np.ndarray]:
    """(name, bin width, bytes/s per bin) of the signal the FFT result came from (SPEC 3.5)."""
    if direction.fft is not None and direction.fft["signal"] == "heatmap" and heatmap is not None:
        return "heatmap", heatmap.bin_seconds, getattr(heatmap, direction.name) / heatmap.bin_seconds
    ops = direction.ops
    return "operations", *spectrum.bandwidth_signal(ops["start"], ops["end"], ops["bytes"], run_time, config)


def _spectrum_panel(
    ax: Axes, direction: DirectionAnalysis, heatmap: HeatmapSignal | None, run_time: float, config: Config
) -> dict[str, Any]:
    if not len(direction.ops):
        _no_operations(ax)
        return {}
    signal, bin_width, values = fft_signal(direction, heatmap, run_time, config)
    freqs, power = spectrum.power_spectrum(values, bin_width)
    freqs, power = freqs[1:], power[1:]  # the DC bin is zero by construction
    ax.plot(freqs, power / max(power.max(initial=0.0), np.finfo(float).tiny), color=PALETTE[0], linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel(f"frequency (Hz), spectrum of {FFT_SIGNALS[signal]}")
    ax.set_ylabel("power (share of max)")
    fft = direction.fft
    if fft and fft["frequency"]:
        verdict = "periodic" if fft["periodic"] else "not periodic"
        ax.axvline(
            fft["frequency"],
            color=PALETTE[3],
            linestyle="--",
            label=f"peak: period {fft['period']:.4g} s ({verdict}, "
            f"confidence {fft['confidence']:.2f}, score {fft['score']:.2f})",
        )
        ax.legend(loc="upper right", fontsize=style.NOTE_FONT)
    elif not direction.significant:
        ax.set_title("(insignificant: FFT not run)", fontsize=style.ASIDE_FONT)
    return {
        "fft_signal": signal,
        "frequencies": freqs,
        "power": power,
        "peak_frequency": fft["frequency"] if fft else None,
    }


def _direction_title(direction: DirectionAnalysis) -> str:
    labels = [display_name(label.removeprefix(f"{direction.name}_")) for label in direction.labels]
    verdict: Mapping[str, Any] = direction.verdict or {}
    period = f"; period {verdict['period']:.4g} s from {verdict['source']}" if verdict.get("periodic") else ""
    return f"{direction.name}: {_bytes(direction.bytes)}{period}\n{', '.join(labels)}"


def peaks_per_stretch(per_second: np.ndarray, most: int) -> tuple[np.ndarray, int]:
    """At most ``most`` bars: the peak of each stretch of ``width`` seconds (the last one
    shorter), and ``width``. A spike stays at its height, as the labels saw it."""
    width = max(-(-len(per_second) // most), 1)
    if width == 1:
        return per_second, 1
    return np.maximum.reduceat(per_second, np.arange(0, len(per_second), width)), width


def _metadata_panel(ax: Axes, per_second: np.ndarray, scale: float, config: Config) -> dict[str, Any]:
    """Metadata requests per second as SPEC 3.7 counted them (seeks only with ``metadata_seeks``)."""
    bars, width = peaks_per_stretch(per_second, METADATA_BARS)
    edges = np.minimum(np.arange(len(bars) + 1) * width, len(per_second)) / scale
    stretch = f"; the peak of each {width:,} s" if width > 1 else ""
    # An edge line keeps one-second spikes visible when a bin is narrower than a pixel.
    ax.stairs(
        bars,
        edges,
        fill=True,
        color=PALETTE[0],
        edgecolor=PALETTE[0],
        linewidth=0.8,
        label=f"requests per second (seeks {'counted' if config.metadata_seeks else 'not counted'}{stretch})",
    )
    for level, dashes, name in (
        (config.metadata_high_spike, "--", "high spike: more than"),
        (config.metadata_spike_level, ":", "spike: at least"),
    ):
        ax.axhline(level, color=PALETTE[3], linestyle=dashes, label=f"{name} {level}/s")
    # Symmetric log: the thresholds and a peak of 100,000/s stay readable together.
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylim(0, max(per_second.max(initial=0.0), config.metadata_high_spike) * 2)
    ax.set_ylabel("metadata requests / s")
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1), fontsize=style.NOTE_FONT)
    return {
        "requests_per_second": per_second,
        "seeks_counted": config.metadata_seeks,
        "seconds_per_bar": width,
    }


@style.themed("ticks")
def plot_timeline(analysis: TraceAnalysis, config: Config, path: Path) -> dict[str, Any]:
    """Draw one trace's timeline into `path` (PNG or SVG by suffix); return its data."""
    trace = analysis.trace
    run_time = trace.run_time
    unit, scale = time_unit(run_time)
    heatmap = trace.heatmap
    # Rows: raw, merged, chunks, [heatmap], spectrum, metadata.
    heights = [1, 1, 0.8] + ([0.8] if heatmap is not None else []) + [0.9, 0.9]
    fig = style.new_figure(figsize=(15, 16 + 3.2 * (len(heights) - 5)))
    grid = fig.add_gridspec(len(heights), 2, height_ratios=heights, hspace=0.45, wspace=0.18)
    data: dict[str, Any] = {"time_unit": unit}
    time_axes = []
    for column, direction in enumerate((analysis.read, analysis.write)):
        raw = fig.add_subplot(grid[0, column])
        panels = [raw] + [
            fig.add_subplot(grid[row, column], sharex=raw) for row in range(1, len(heights) - 2)
        ]
        raw.set_title(_direction_title(direction), fontsize=style.TITLE_FONT)
        data[direction.name] = {
            **_raw_panel(raw, direction, scale),
            **_merged_panel(panels[1], direction, scale),
            **_chunk_panel(panels[2], direction, run_time, scale),
            **(_heatmap_panel(panels[3], heatmap, direction, scale) if heatmap is not None else {}),
            **_spectrum_panel(fig.add_subplot(grid[-2, column]), direction, heatmap, run_time, config),
        }
        time_axes += panels
    meta_ax = fig.add_subplot(grid[-1, :])
    data.update(_metadata_panel(meta_ax, analysis.requests_per_second, scale, config))
    for ax in time_axes + [meta_ax]:
        ax.set_xlim(0, run_time / scale)
        for quarter in np.linspace(0, run_time, 5)[1:-1] / scale:
            ax.axvline(quarter, color="0.6", linewidth=0.8, linestyle=(0, (4, 4)))
        ax.set_xlabel(f"time since job start ({unit})")
    job = trace.job
    fig.suptitle(
        f"{Path(trace.file).name}\n{job.get('application', '')} \u2014 {job.get('nprocs', '?')} "
        f"ranks, run time {run_time:,.0f} s, {'DXT' if trace.has_dxt else 'per-file'} "
        f"timing\n{', '.join(map(display_name, analysis.metadata_labels))}",
        fontsize=style.SUPTITLE_FONT,
        y=0.95,
    )
    style.save(fig, [Path(path)], style.TIMELINE_DPI)
    return data
