"""One trace as a timeline (paper Fig. 2), drawn from `analyze()`'s intermediates.

Per direction, top to bottom: file records doing I/O at once before merging
(a (rank, file) pair counts 1, a shared record its ranks: one rank reading
14 files at once shows 14)
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
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.ticker import EngFormatter, FuncFormatter, LogLocator, MaxNLocator, NullFormatter
from matplotlib.typing import LineStyleType
from numpy.typing import ArrayLike

from mosaic.analysis import spectrum
from mosaic.analysis.categorize import HEATMAP, OPERATIONS, DirectionAnalysis, TraceAnalysis
from mosaic.config import Config
from mosaic.periods import duration, run_time_text, verdict_period
from mosaic.report import style
from mosaic.report.style import PALETTE
from mosaic.report.text import counted, display_name, in_figure
from mosaic.trace import HeatmapSignal

RECORDS_AXIS = "records doing I/O\n(rank-file pairs)"  # not ranks: one rank may hold many files
MERGED_AXIS = "records (merged, mean)"  # the records a merged operation stands for, on average
RAW_COLOR, MINOR_COLOR, MERGED_COLOR = PALETTE[0], PALETTE[3], PALETTE[7]
CLUSTER_COLORS = [PALETTE[i] for i in (1, 2, 4, 8, 9, 5, 6)]  # cycled past 7 periodic operations
LEGEND_OPERATIONS = 4  # periodic operations named in the legend, dominant first
LEGEND_WIDTH = 36  # characters a legend line holds: the legends sit between the two columns
FFT_SIGNALS = {"operations": "the operations' bandwidth", "heatmap": "the HEATMAP bins"}
# Bars of the metadata and HEATMAP panels, and points of a spectrum, at most: more than
# the figure has pixels across only slows the drawing (a 40-day run has 3.5 million
# seconds: 46 s of matplotlib, then past the worker's memory bound). Longer series are
# drawn by stretches: the peak of each (metadata, spectrum) or its sum (HEATMAP bytes).
BARS = 4096


def concurrency(starts: np.ndarray, ends: np.ndarray, ranks: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Step function of records doing I/O, each standing for ``ranks``: (times, level after each).

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


QUARTER_STYLE: dict[str, Any] = {"color": "0.6", "linewidth": 0.8, "linestyle": (0, (4, 4))}


def _quarters_key() -> Line2D:
    """The legend entry of the dashed lines at each quarter of the run."""
    return Line2D([], [], **QUARTER_STYLE, label="quarters of the run (chunks)")


def _busy(fraction: float) -> str:
    """A busy fraction in whole percents; under 1 % says so (never "busy 0%" for I/O that happened)."""
    return "< 1 %" if fraction < 0.01 else f"{100 * fraction:.0f} %"


def _aside(ax: Axes, remark: str) -> None:
    """A panel's remark in place of a plot, with no empty axes around it."""
    ax.text(0.5, 0.5, remark, ha="center", va="center", transform=ax.transAxes, fontsize=style.ASIDE_FONT)
    ax.set_xticks([])
    ax.set_yticks([])


def _legend_outside(ax: Axes, extra: list[Artist] | None = None) -> None:
    """The panel's legend right of it, where it covers no data (plus `extra` entries)."""
    handles, labels = ax.get_legend_handles_labels()
    for artist in extra or []:
        handles.append(artist)
        labels.append(str(artist.get_label()))
    labels = ["\n".join(textwrap.fill(line, LEGEND_WIDTH) for line in label.split("\n")) for label in labels]
    ax.legend(
        handles,
        labels,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        borderaxespad=0,
        fontsize=style.NOTE_FONT,
    )


def _raw_panel(ax: Axes, direction: DirectionAnalysis) -> dict[str, Any]:
    ops = direction.ops
    ax.set_ylabel(RECORDS_AXIS)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # a count: no 0.2 of a record
    times, level = concurrency(ops["start"], ops["end"], ops["ranks"])
    ax.fill_between(
        times, level, step="post", color=RAW_COLOR, alpha=0.8, label=counted(len(ops), "operation")
    )
    minor = direction.merged.minor
    if minor.any():
        minor_ops = ops[minor]
        m_times, m_level = concurrency(minor_ops["start"], minor_ops["end"], minor_ops["ranks"])
        ax.step(
            m_times,
            m_level,
            where="post",
            color=MINOR_COLOR,
            label=f"{counted(int(minor.sum()), 'minor operation')} (not merged)",
        )
    _legend_outside(ax, [_quarters_key()])
    return {"times": times, "ranks": level, "minor": int(minor.sum())}


def _merged_panel(ax: Axes, direction: DirectionAnalysis) -> dict[str, Any]:
    merged = direction.merged
    durations = merged.ends - merged.starts
    heights = np.divide(
        merged.rank_seconds, durations, out=np.ones_like(durations), where=durations > 0
    )  # mean records over the merged operation (a shared record counts its ranks)
    ax.set_ylabel(MERGED_AXIS)
    ax.fill(
        *_blocks(merged.starts, merged.ends, heights),
        color=MERGED_COLOR,
        alpha=0.6,
        label=counted(len(merged), "merged operation"),
    )
    operations = _periodic_strip(ax, direction, OPERATIONS)
    ax.set_ylim(0, max(heights.max(initial=0.0), 1.0) * 1.25)  # room for the segment strip
    _legend_outside(ax)
    return {
        "starts": merged.starts,
        "ends": merged.ends,
        "bytes": merged.bytes,
        "periodic_operations": operations,
    }


def _periodic_strip(ax: Axes, direction: DirectionAnalysis, source: str) -> list[dict[str, Any]]:
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
            f"{_bytes(op['bytes_per_occurrence'])} each, busy {_busy(op['busy_fraction'])}"
            if rank < LEGEND_OPERATIONS
            else f"{len(operations) - LEGEND_OPERATIONS} more periodic operations"
            if rank == LEGEND_OPERATIONS
            else None
        )
        ax.broken_barh(
            list(zip(where["starts"], where["durations"], strict=True)),
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


def _chunk_panel(ax: Axes, direction: DirectionAnalysis, run_time: float) -> dict[str, Any]:
    edges = np.linspace(0.0, run_time, len(direction.chunks) + 1)
    bars = ax.bar(
        edges[:-1], direction.chunks, width=np.diff(edges), align="edge", color=PALETTE[0], edgecolor="white"
    )
    ax.bar_label(bars, labels=[_bytes(b) for b in direction.chunks], fontsize=style.NOTE_FONT)
    _bytes_axis(ax, direction.chunks, headroom=1.2)  # room for the bar labels
    ax.set_ylabel("bytes per quarter")
    return {"chunks": direction.chunks}


def _heatmap_panel(ax: Axes, heatmap: HeatmapSignal, direction: DirectionAnalysis) -> dict[str, Any]:
    """Bytes per HEATMAP bin summed over ranks: the one time series Darshan keeps without DXT.

    When mean shift looked at the bins' bursts (the operations showed no
    period), each burst is outlined, minor ones dotted, and the periodic
    operations found among them are drawn on top.
    """
    values = getattr(heatmap, direction.name)
    bars, width = per_stretch(values, BARS, np.add)
    edges = np.minimum(np.arange(len(bars) + 1) * width, len(values)) * heatmap.bin_seconds
    summed = f"; a bar sums {width:,} bins" if width > 1 else ""
    ax.stairs(
        bars,
        edges,
        fill=True,
        color=PALETTE[2],
        edgecolor=PALETTE[2],
        linewidth=0.8,
        label=f"HEATMAP: {_bytes(values.sum())} in {counted(len(values), 'bin')} of {heatmap.bin_seconds:g} s"
        + summed,
    )
    _bytes_axis(ax, bars, headroom=1.1)
    bursts = direction.bursts
    data: dict[str, Any] = {"heatmap_edges": edges, "heatmap_bytes": bars, "heatmap_bins_per_bar": width}
    if bursts is not None and len(bursts):
        outlines: tuple[tuple[bool, LineStyleType, str], ...] = (
            (False, "-", "burst"),
            (True, ":", "minor burst"),
        )
        for minor, dashes, noun in outlines:
            chosen = bursts.minor == minor
            if chosen.any():
                ax.vlines(
                    np.concatenate([bursts.starts[chosen], bursts.ends[chosen]]),
                    0,
                    0.85,
                    transform=ax.get_xaxis_transform(),
                    color=PALETTE[3],
                    linestyles=dashes,
                    linewidth=0.8,
                    label=f"{counted(int(chosen.sum()), noun)} (bounds)",
                )
        data["bursts"] = {"starts": bursts.starts, "ends": bursts.ends, "minor": bursts.minor}
    data["heatmap_periodic_operations"] = _periodic_strip(ax, direction, HEATMAP)
    ax.set_ylabel(f"bytes per {width * heatmap.bin_seconds:.3g} s")
    _legend_outside(ax)
    return data


def fft_signal(
    direction: DirectionAnalysis, heatmap: HeatmapSignal | None, run_time: float, config: Config
) -> tuple[str, float, np.ndarray]:
    """(name, bin width, bytes/s per bin) of the signal the FFT result came from (SPEC 3.5)."""
    if direction.fft is not None and direction.fft["signal"] == "heatmap" and heatmap is not None:
        return "heatmap", heatmap.bin_seconds, getattr(heatmap, direction.name) / heatmap.bin_seconds
    ops = direction.ops
    grid = spectrum.SamplingSettings.of(config)
    return "operations", *spectrum.bandwidth_signal(ops["start"], ops["end"], ops["bytes"], run_time, grid)


def amplitude_spectrum(
    values: np.ndarray, bin_width: float, oversampling: int
) -> tuple[np.ndarray, np.ndarray]:
    """The spectrum the FFT detector reads (SPEC 3.5): amplitudes of the mean-removed
    signal zero-padded to ``oversampling`` points per frequency bin, without DC.

    Drawn unpadded, a period that does not divide the run falls between two
    bins and loses up to 36 % of its height: its marked peak could sit below
    its own harmonics, unlike in the spectrum that chose it.
    """
    size = oversampling * len(values)
    amplitude = np.abs(np.fft.rfft(values - values.mean(), n=size))
    return np.fft.rfftfreq(size, bin_width)[1:], amplitude[1:]


def log_stretch_peaks(freqs: np.ndarray, values: np.ndarray, most: int) -> tuple[np.ndarray, np.ndarray]:
    """At most about ``most`` points for a log-x plot: stretches of indices growing
    geometrically (the low frequencies one by one), each drawn at its first frequency
    with its peak, so no peak is lost to a line thinner than the points it covers."""
    if len(values) <= most:
        return freqs, values
    starts = np.unique(np.geomspace(1, len(values), most).astype(np.int64)) - 1
    return freqs[starts], np.maximum.reduceat(values, starts)


def _log_frequency_axis(ax: Axes, freqs: np.ndarray) -> None:
    """Readable ticks on a log frequency axis: 1-2-5 steps over less than two decades,
    powers of ten beyond, written as plain numbers (no overlapping minor labels)."""
    ax.set_xscale("log")
    decades = np.log10(freqs[-1] / freqs[0]) if len(freqs) > 1 and freqs[0] > 0 else 0.0
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if decades < 2 else (1.0,)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def spectrum_legend(direction: DirectionAnalysis) -> str:
    """The FFT peak and, apart, the direction's verdict: the FFT's own flag is one input
    of the verdict (SPEC 3.5), not the answer. FTIO's confidence is shown only when the
    detector accepted the peak."""
    fft: Mapping[str, Any] = direction.fft or {}
    accepted = f", confidence {fft['confidence']:.2f}" if fft.get("periodic") else ", under the FFT's bar"
    verdict: Mapping[str, Any] = direction.verdict or {}
    decided = (
        f"verdict: periodic, period {verdict_period(verdict['period'], verdict['source'])}"
        if verdict.get("periodic")
        else "verdict: not periodic"
    )
    return f"FFT peak: period {fft['period']:.4g} s, score {fft['score']:.2f}{accepted}\n{decided}"


def tallest_elsewhere(freqs: np.ndarray, amplitude: np.ndarray, peak: int) -> int | None:
    """The tallest bin when it is not the detector's peak (more than 5 % away in frequency):
    the detector takes the strongest fundamental once harmonics are folded into it, in the
    band of periods it searches (SPEC 3.5), not the tallest bin."""
    tallest = int(amplitude.argmax())
    return tallest if abs(freqs[tallest] - freqs[peak]) > 0.05 * freqs[peak] else None


def tallest_legend(frequency: float) -> str:
    return (
        f"tallest bin: {frequency:.3g} Hz (period {duration(1 / frequency)}), not the detector's "
        "peak: a harmonic, or a period outside its band"
    )


def _spectrum_panel(
    ax: Axes, direction: DirectionAnalysis, heatmap: HeatmapSignal | None, run_time: float, config: Config
) -> dict[str, Any]:
    if not direction.significant:
        _aside(ax, "insignificant: FFT not run")
        return {}
    signal, bin_width, values = fft_signal(direction, heatmap, run_time, config)
    freqs, amplitude = amplitude_spectrum(values, bin_width, config.fft_oversampling)
    top = max(amplitude.max(initial=0.0), np.finfo(float).tiny)
    ax.plot(*log_stretch_peaks(freqs, amplitude / top, BARS), color=PALETTE[0], linewidth=0.8)
    _log_frequency_axis(ax, freqs)
    ax.set_xlabel(f"frequency (Hz), spectrum of {FFT_SIGNALS[signal]}")
    ax.set_ylabel("amplitude (share of max)")
    ax.set_ylim(0, 1.08)
    fft = direction.fft
    peak = None
    if fft and fft["frequency"]:
        peak = int(np.abs(freqs - fft["frequency"]).argmin())  # the padded bin the period came from
        ax.axvline(fft["frequency"], color=PALETTE[3], linestyle="--", linewidth=0.8)
        ax.plot(freqs[peak], amplitude[peak] / top, "o", color=PALETTE[3], label=spectrum_legend(direction))
        tallest = tallest_elsewhere(freqs, amplitude, peak)
        if tallest is not None:
            ax.plot(freqs[tallest], 1.0, "x", color=PALETTE[3], label=tallest_legend(freqs[tallest]))
        _legend_outside(ax)
    return {
        "fft_signal": signal,
        "frequencies": freqs,
        "amplitude": amplitude,
        "peak_frequency": fft["frequency"] if fft else None,
        "peak_bin": peak,
    }


def _direction_title(direction: DirectionAnalysis, heatmap: HeatmapSignal | None) -> str:
    """The direction's bytes, period and labels; bytes only the HEATMAP holds are named as such
    (STDIO writes Darshan timed in no record): not "write: 0.0 B" over 700 B of bars."""
    labels = [display_name(label.removeprefix(f"{direction.name}_")) for label in direction.labels]
    verdict: Mapping[str, Any] = direction.verdict or {}
    period = (
        f"; period {verdict_period(verdict['period'], verdict['source'])}" if verdict.get("periodic") else ""
    )
    binned = float(getattr(heatmap, direction.name).sum()) if heatmap is not None else 0.0
    moved = _bytes(direction.bytes)
    if not len(direction.ops) and binned > 0:
        moved = f"no timed record; {_bytes(binned)} in the HEATMAP"
    return f"{direction.name}: {moved}{period}\n{', '.join(labels)}"


def per_stretch(values: np.ndarray, most: int, reduce: np.ufunc) -> tuple[np.ndarray, int]:
    """At most ``most`` bars: ``reduce`` (np.maximum: the peak; np.add: the sum) over each
    stretch of ``width`` values (the last one shorter), and ``width``. The peak keeps a
    spike at its height, as the labels saw it; the sum keeps every byte."""
    width = max(-(-len(values) // most), 1)
    if width == 1:
        return values, 1
    return reduce.reduceat(values, np.arange(0, len(values), width)), width


def _metadata_panel(ax: Axes, per_second: np.ndarray, config: Config) -> dict[str, Any]:
    """Metadata requests per second as SPEC 3.7 counted them (seeks only with ``metadata_seeks``)."""
    bars, width = per_stretch(per_second, BARS, np.maximum)
    edges = np.minimum(np.arange(len(bars) + 1) * width, len(per_second))
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
    _legend_outside(ax, [_quarters_key()])
    return {
        "requests_per_second": per_second,
        "seeks_counted": config.metadata_seeks,
        "seconds_per_bar": width,
    }


PANEL_HEIGHTS = {"raw": 1.0, "merged": 1.0, "chunks": 0.8, "heatmap": 0.8, "spectrum": 0.9, "metadata": 0.9}


def panels_with_content(direction: DirectionAnalysis, heatmap: HeatmapSignal | None) -> list[str]:
    """The panels of a direction that have something to show, top to bottom.

    A direction without operations has none, but its HEATMAP bins when they
    hold bytes (STDIO writes Darshan timed in no record); a metadata-only
    log used to get eight empty panels.
    """
    has_ops = bool(len(direction.ops))
    panels = ["raw", "merged", "chunks"] if has_ops else []
    if heatmap is not None and (has_ops or getattr(heatmap, direction.name).any()):
        panels.append("heatmap")
    return panels + (["spectrum"] if has_ops else [])


@style.themed("ticks")
def plot_timeline(analysis: TraceAnalysis, config: Config, path: Path) -> dict[str, Any]:
    """Draw one trace's timeline into `path` (PNG or SVG by suffix); return its data.

    One column per direction with content, only the panels that have some
    (:func:`panels_with_content`), then the metadata panel across.
    """
    trace = analysis.trace
    run_time = trace.run_time
    heatmap = trace.heatmap
    columns = {d.name: (d, panels_with_content(d, heatmap)) for d in (analysis.read, analysis.write)}
    columns = {name: column for name, column in columns.items() if column[1]}
    drawn = {panel for _, panels in columns.values() for panel in panels}
    rows = [row for row in PANEL_HEIGHTS if row in drawn] + ["metadata"]
    heights = [PANEL_HEIGHTS[row] for row in rows]
    header = 1.9 if columns else 1.0  # inches: 3 lines of header, and the directions' 2-line titles
    height = 3.2 * sum(heights) + header
    fig = style.new_figure(figsize=(18, height))
    grid = fig.add_gridspec(
        len(heights),
        max(len(columns), 1),
        height_ratios=heights,
        hspace=0.5,
        wspace=0.7,
        top=1 - header / height,
    )
    data: dict[str, Any] = {"time_unit": "s", "directions": list(columns)}  # as the reasons and charts
    time_axes = []
    for column, (direction, panels) in enumerate(columns.values()):
        axes: dict[str, Axes] = {}
        for panel in panels:
            time = next(iter(axes.values()), None) if panel != "spectrum" else None  # frequency: its own x
            axes[panel] = fig.add_subplot(grid[rows.index(panel), column], sharex=time)
        axes[panels[0]].set_title(_direction_title(direction, heatmap), fontsize=style.TITLE_FONT)
        data[direction.name] = {
            **(_raw_panel(axes["raw"], direction) if "raw" in axes else {}),
            **(_merged_panel(axes["merged"], direction) if "merged" in axes else {}),
            **(_chunk_panel(axes["chunks"], direction, run_time) if "chunks" in axes else {}),
            **(_heatmap_panel(axes["heatmap"], heatmap, direction) if heatmap and "heatmap" in axes else {}),
            **(
                _spectrum_panel(axes["spectrum"], direction, heatmap, run_time, config)
                if "spectrum" in axes
                else {}
            ),
        }
        time_axes += [ax for name, ax in axes.items() if name != "spectrum"]
    meta_ax = fig.add_subplot(grid[-1, :])
    data.update(_metadata_panel(meta_ax, analysis.requests_per_second, config))
    for ax in time_axes + [meta_ax]:
        ax.set_xlim(0, run_time)
        for quarter in np.linspace(0, run_time, 5)[1:-1]:
            ax.axvline(quarter, **QUARTER_STYLE)
        ax.set_xlabel("time since job start (s)")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.6g}"))  # 32,865 not 3.2e4
    job = trace.job
    nprocs = job.get("nprocs")
    ranks = counted(nprocs, "rank") if isinstance(nprocs, int) else "? ranks"
    absent = [d.name for d in (analysis.read, analysis.write) if not len(d.ops)]
    none = f"; no {' or '.join(absent)} operation" if absent else ""
    names = [
        in_figure(name, config.display_name_chars)
        for name in (Path(trace.file).name, job.get("application", ""))
    ]
    fig.suptitle(
        f"{names[0]}\n{names[1]} \u2014 {ranks}, "
        f"run time {run_time_text(run_time)}, {'DXT' if trace.has_dxt else 'per-file'} timing{none}\n"
        f"{', '.join(map(display_name, analysis.metadata_labels))}",
        fontsize=style.SUPTITLE_FONT,
    )
    style.save(fig, [Path(path)], style.TIMELINE_DPI)
    return data
