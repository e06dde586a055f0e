"""One job's page (`mosaic explain`): facts, labels and their reasons, timeline, charts.

Everything on it comes from one :func:`~mosaic.analysis.categorize.analyze`:
the timeline is `mosaic plot`'s figure (:func:`plot_timeline`), and the
interactive charts draw the numbers that figure returns, so the page, the
PNG and the labels cannot disagree. A log that cannot be categorized gets
a page saying why (its eviction reason and detail), as `mosaic categorize`
would print it.
"""

from __future__ import annotations

import io
import itertools
import tempfile
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from mosaic.analysis.categorize import HEATMAP, DirectionAnalysis, TraceAnalysis, analyze
from mosaic.analysis.peak_files import peak_files
from mosaic.analysis.reasons import Reason, explain
from mosaic.config import Config
from mosaic.corpus.perfstore import stored_history
from mosaic.corpus.profiles import run_identity
from mosaic.darshan.reader import read_log
from mosaic.directions import DIRECTIONS
from mosaic.html import signature_view
from mosaic.html.method import method_html, section_anchor
from mosaic.html.page import (
    Assets,
    Chart,
    Html,
    Page,
    esc,
    facts,
    human_bytes,
    labels_html,
    numbers,
    percent,
    png_data_uri,
    table,
    thinned,
)
from mosaic.html.performance import performance_html
from mosaic.interference.tables import stored_contention
from mosaic.interference.words import slowdown_text
from mosaic.logfile import EvictedResult, guarded
from mosaic.periods import duration, run_time_text, verdict_period
from mosaic.report.text import counted, display_name
from mosaic.report.timeline import amplitude_spectrum, log_stretch_peaks, plot_timeline
from mosaic.series import RunSeries, series_from_log
from mosaic.trace import HeatmapSignal, read_trace

COLORS = {"read": "#0173b2", "write": "#de8f05", "metadata": "#029e73"}  # as in mosaic.css
PARTIAL = (
    "yes: Darshan ran out of record memory and dropped some records; what it kept is real, and "
    "MPI-IO records stand in for lost POSIX ones"
)
QUARTERS = ("first", "second", "third", "fourth")
PNG_COLORS = 128


def job_page(
    path: str | PathLike[str],
    config: Config,
    assets: Assets,
    nav: tuple[tuple[str, str], ...] = (),
    method: str = "",
    store: str | PathLike[str] | None = None,
    signature: dict[str, Any] | None = None,
) -> tuple[str, EvictedResult | None]:
    """The page of log ``path`` and, for a log that could not be categorized, its eviction;
    ``method``: the page holding the method its reasons cite ("": this one, at its end);
    ``store``: a results store whose runs of the same application the run is placed among;
    ``signature``: its application's (:func:`mosaic.signature.signature_of`), drawn with this
    run against it (SPEC 3.12)."""
    outcome = guarded(path, lambda: analyze(read_trace(path, config), config))
    if isinstance(outcome, TraceAnalysis):
        run = None
        if signature is not None and signature["body"] is not None:
            run = series_from_log(read_log(path), config.signature_series_max_points, config)
        return analysis_page(outcome, config, assets, nav, method, store, signature, run), None
    return evicted_page(outcome, assets, nav), outcome


def evicted_page(evicted: EvictedResult, assets: Assets, nav: tuple[tuple[str, str], ...] = ()) -> str:
    page = Page(f"{Path(evicted['file']).name}: evicted", assets, nav)
    page.add(
        "Not categorized",
        f'<div class="evicted"><p>This log was evicted: <strong>{esc(evicted["reason"])}</strong>.</p>'
        f"<p>{esc(evicted['detail'])}</p></div>"
        + facts([("file", evicted["file"]), ("reason", evicted["reason"])]),
    )
    return page.render()


def analysis_page(
    analysis: TraceAnalysis,
    config: Config,
    assets: Assets,
    nav: tuple[tuple[str, str], ...] = (),
    method: str = "",
    store: str | PathLike[str] | None = None,
    signature: dict[str, Any] | None = None,
    run: RunSeries | None = None,
) -> str:
    """The page of a categorized trace; its reasons link to their section of the method, on
    the page ``method`` or at the end of this one; ``store``: see :func:`job_page`; with its
    application's ``signature``, the run (its series ``run``) against it."""
    trace = analysis.trace
    job = trace.job
    page = Page(Path(trace.file).name, assets, nav)
    page.add(
        "Labels and why",
        f"<p>{labels_html(analysis.categories)}</p>{reasons_html(explain(analysis, config), method)}",
        "labels",
    )
    page.add(
        "Job",
        facts(
            [
                ("application", job.get("application")),
                ("command line", job.get("exe")),
                ("user id", job.get("uid")),
                ("job id", job.get("job_id")),
                ("ranks", job.get("nprocs")),
                ("start", job.get("start")),
                ("run time", run_time_text(trace.run_time)),
                ("Darshan format", job.get("version")),
                ("timing", "DXT (per operation)" if trace.has_dxt else "per-file counters"),
                ("HEATMAP", f"bins of {trace.heatmap.bin_seconds:g} s" if trace.heatmap else "none"),
                (
                    "partial log",
                    Html(f"{esc(PARTIAL)} ({_spec_link('2', method)})") if trace.partial else "no",
                ),
                ("records dropped", trace.dropped_records),
                ("file", trace.file),
            ]
        ),
        "job",
    )
    page.add("Reads and writes", _directions_table(analysis), "directions")
    page.add("Performance", _performance(analysis, config, store), "performance")
    if store is not None:
        page.add("Slowed by other jobs?", _contention(analysis, config, store), "contention")
    page.add("Metadata peak", _metadata_peak(analysis, config), "metadata-peak")
    with tempfile.TemporaryDirectory(prefix="mosaic-explain-") as folder:
        png = Path(folder) / "timeline.png"
        drawn = plot_timeline(analysis, config, png)
        image = compact_png(png)
    page.add(
        "Timeline",
        f'<figure class="wide"><div class="scroll"><img alt="timeline of {esc(Path(trace.file).name)}" '
        f'src="{png_data_uri(image)}"></div><figcaption>The panels of <code>mosaic plot</code>: '
        "per direction, records (rank-file pairs) doing I/O, "
        "merged operations with their periodic segments, bytes per quarter, the HEATMAP, "
        "the spectrum; metadata requests per second at the bottom. On a narrow screen it keeps a "
        "readable width: scroll it sideways.</figcaption></figure>",
        "timeline",
    )
    page.add("Interactive charts", _charts(page, analysis, drawn, config), "charts")
    if signature is not None:
        page.add(
            "Against its application's I/O signature",
            signature_view.section(page, signature["body"], signature["reason"], run),
            "signature",
        )
    if not method:
        page.add("The method (docs/method.md)", Html(f'<div class="method">{method_html()}</div>'), "method")
    return page.render()


def _performance(analysis: TraceAnalysis, config: Config, store: str | PathLike[str] | None) -> Html:
    """SPEC 3.9's section; with ``store``, the run among its application's stored runs."""
    trace = analysis.trace
    if store is None:
        return performance_html(trace.performance)
    identity = run_identity(trace.job)
    history, note = stored_history(store, trace.group_key(config.group_by), exclude=identity)
    return performance_html(trace.performance, history, note)


def _contention(analysis: TraceAnalysis, config: Config, store: str | PathLike[str]) -> Html:
    """SPEC 3.11's verdict on this run, as its owner may see it: another user's job that
    caused it reads "another job" (the visibility rule, docs/security.md)."""
    job = analysis.trace.job
    uid = job.get("uid")
    found = stored_contention(store, run_identity(job), int(uid) if uid is not None else None)
    return Html(
        f'<p>{esc(slowdown_text(found))}</p><p class="note">From the store\'s contention analysis '
        "(SPEC 3.11): the run's I/O time per byte against its application's runs at low load, "
        "and the run that moved the largest share of the bytes overlapping its I/O on the same "
        "file system.</p>"
    )


def reasons_html(reasons: list[Reason], method: str = "") -> Html:
    """The reasons family by family: each given label with its sentence, then the close calls
    not given (greyed), each with a link to the SPEC section of its rule on page ``method``."""
    parts = []
    for family, members in itertools.groupby(reasons, key=lambda reason: reason["family"]):
        items = "".join(
            f'<li class="{"given" if r["given"] else "not-given"}">'
            + (labels_html([r["label"]]) if r["given"] else "")
            + f' {esc(r["text"])} <span class="rule">({_spec_link(r["rule"], method)})</span></li>'
            for r in members
        )
        parts.append(f'<h3>{esc(display_name(family))}</h3><ul class="reasons">{items}</ul>')
    return Html("".join(parts))


def _spec_link(rule: str, method: str) -> Html:
    """'SPEC 3.4' as a link to its section of the method on page ``method`` ("" for this one)."""
    return Html(f'<a href="{esc(method)}#{esc(section_anchor(rule))}">SPEC {esc(rule)}</a>')


def compact_png(path: Path) -> bytes:
    """The PNG at ``path`` with a palette of PNG_COLORS: a timeline's flat fills and lines lose
    nothing visible, and the page carries a third of the bytes (~0.3 s more a page)."""
    buffer = io.BytesIO()
    Image.open(path).convert("RGB").quantize(colors=PNG_COLORS).save(buffer, format="png", optimize=True)
    return buffer.getvalue()


def _directions_table(analysis: TraceAnalysis) -> Html:
    rows = [_direction_row(d) for d in (analysis.read, analysis.write)]
    headers = [
        "direction",
        "bytes",
        "operations",
        "minor",
        "merged",
        *(f"{q} quarter" for q in QUARTERS),
        "mean shift",
        "FFT",
        "verdict",
    ]
    return table(headers, rows, "numbers")


def _significance(fft: Mapping[str, Any]) -> str:
    """ "2.1 sigma", or, for a significance of 0, what it stands for (as the reasons say it):
    the peak could not be judged (too few independent samples at its lag)."""
    return f"{fft['significance']:.1f} sigma" if fft["significance"] > 0 else "not judged against chance"


def _direction_row(direction: DirectionAnalysis) -> list[object]:
    total = direction.bytes
    quarters = [f"{human_bytes(b)} ({percent(b / total) if total else '-'})" for b in direction.chunks]
    meanshift: Mapping[str, Any] = direction.meanshift or {}
    fft: Mapping[str, Any] = direction.fft or {}
    verdict: Mapping[str, Any] = direction.verdict or {}
    if not direction.significant:
        found = ["insignificant: not looked at"] * 3
    else:
        found = [
            f"{counted(len(meanshift['operations']), 'periodic series', 'periodic series')} in the "
            f"{'HEATMAP bursts' if meanshift['source'] == HEATMAP else 'merged operations'}, "
            f"{percent(meanshift['share'])} of segments in periodic clusters",
            f"period {duration(fft['period'])}, score {fft['score']:.2f}, {_significance(fft)}"
            if fft.get("period")
            else "no peak",
            f"periodic, {verdict_period(verdict['period'], verdict['source'])}, busy "
            f"{percent(verdict['busy_fraction'] or 0.0)}"
            if verdict.get("periodic")
            else "not periodic",
        ]
    return [
        direction.name,
        human_bytes(total),
        f"{len(direction.ops):,}",
        f"{int(np.count_nonzero(direction.merged.minor)):,}",
        f"{len(direction.merged):,}",
        *quarters,
        *found,
    ]


def _metadata_peak(analysis: TraceAnalysis, config: Config) -> Html:
    """The second with the most metadata requests and the files that made them (SPEC 3.7)."""
    per_second = analysis.requests_per_second
    second = int(np.argmax(per_second))
    if not per_second[second]:
        return Html("<p>No metadata requests.</p>")
    behind = peak_files(
        analysis.trace, [second], config.explain_peak_files, metadata_seeks=config.metadata_seeks
    )
    rows = [
        [f["name"], str(f["record_id"]), f"{f['requests']:,.6g}", percent(f["share"])]
        for f in behind["files"]
    ]
    more = behind["others"]
    rest = behind["requests"] - sum(f["requests"] for f in behind["files"])
    # the rest of the second: a file cut from the list may tie the last one shown
    tail = f"<p>and {counted(more, 'more file')}, {rest:,.6g} requests between them.</p>" if more else ""
    return Html(
        f"<p>{per_second[second]:,.6g} requests in the second at {second} s, from these files "
        "(all ranks' records of a file together; an anonymized log shows record ids):</p>"
        + table(["file", "record id", "requests", "share of the second"], rows, "numbers")
        + tail
    )


def peak_grid(times: np.ndarray, level: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """A step function (``level`` from each of ``times`` on) as its peak in each cell of ``edges``.

    Read and write share one time grid this way (uPlot draws series over one
    x), and a short burst of ranks stays visible however long the run.
    """
    cells = len(edges) - 1
    if not len(times):
        return np.zeros(cells)
    before = np.searchsorted(times, edges[:-1], side="right") - 1
    peak = np.where(before >= 0, level[np.maximum(before, 0)], 0.0)  # the level entering each cell
    inside = np.searchsorted(edges, times, side="right") - 1
    kept = (inside >= 0) & (inside < cells)
    np.maximum.at(peak, inside[kept], level[kept])
    return peak


def _charts(page: Page, analysis: TraceAnalysis, drawn: dict[str, Any], config: Config) -> Html:
    most = config.report_chart_points
    run_time = max(analysis.trace.run_time, 1e-9)
    edges = np.linspace(0.0, run_time, most + 1)
    # The timeline draws a direction's panels only where they have content: so do the charts.
    panels = {d: drawn.get(d, {}) for d in DIRECTIONS}
    ranks = [(d, peak_grid(p["times"], p["ranks"], edges)) for d, p in panels.items() if "times" in p]
    parts = []
    if ranks:
        title = "Records doing I/O: rank-file pairs at once (peak per step)"
        parts.append(page.chart(_time_chart("ranks", title, "records", "", edges[:-1], ranks, "steps")))
    heat = [(d, p) for d, p in panels.items() if "heatmap_bytes" in p]
    if heat and analysis.trace.heatmap is not None:
        first = heat[0][1]  # every direction's bars share the bins
        heat_x, sums, width = thinned(
            first["heatmap_edges"][:-1], [p["heatmap_bytes"] for _, p in heat], most, np.add
        )
        bar = analysis.trace.heatmap.bin_seconds * first["heatmap_bins_per_bar"] * width
        bins = [(d, values) for (d, _), values in zip(heat, sums, strict=True)]
        title = f"HEATMAP bytes per {bar:g} s"
        parts.append(page.chart(_time_chart("heatmap", title, "bytes", "B", heat_x, bins, "steps")))
    per_second = drawn["requests_per_second"]
    seconds, (requests,), _ = thinned(np.arange(len(per_second), dtype=float), [per_second], most)
    metadata = _time_chart(
        "metadata",
        "Metadata requests per second",
        "requests / s",
        "",
        seconds,
        [("metadata", requests)],
        "steps",
    )
    metadata["asinhy"] = True
    metadata["lines"] = [
        {
            "label": f"high spike: more than {config.metadata_high_spike}/s",
            "value": config.metadata_high_spike,
        },
        {"label": f"spike: at least {config.metadata_spike_level}/s", "value": config.metadata_spike_level},
    ]
    parts.append(page.chart(metadata))
    spectra = [_spectrum_chart(d, p, most) for d, p in panels.items() if "frequencies" in p]
    spectra += [
        _spectrum_chart(d.name, binned, most)
        for d in (analysis.read, analysis.write)
        if (binned := heatmap_spectrum(d, analysis.trace.heatmap, drawn.get(d.name, {}), config)) is not None
    ]
    parts.append(Html('<div class="grid">' + "".join(page.chart(c) for c in spectra) + "</div>"))
    note = (
        '<p class="note">Drag across a chart to zoom in on that stretch of the run, double-click to '
        f"zoom out; hover for the values. Long series show the peak of each of at most {most:,} "
        "steps.</p>"
    )
    return Html(note + "".join(parts))


def _time_chart(
    ident: str,
    title: str,
    ylabel: str,
    unit: str,
    x: np.ndarray,
    named: Sequence[tuple[str, np.ndarray]],
    style: str,
) -> Chart:
    """A chart over the run's time, one series per (name, values): a direction, or metadata."""
    return {
        "id": ident,
        "title": title,
        "xlabel": "time since job start (s)",
        "ylabel": ylabel,
        "unit": unit,
        "x": numbers(x),
        "series": [
            {"label": name, "values": numbers(values), "color": COLORS[name]} for name, values in named
        ],
        "style": style,
    }


def heatmap_spectrum(
    direction: DirectionAnalysis, heatmap: HeatmapSignal | None, drawn: Mapping[str, Any], config: Config
) -> dict[str, Any] | None:
    """The HEATMAP's spectrum when mean shift found the period in its bursts (SPEC 3.5) but the
    FFT result shown is the operations': the label's own source gets a spectrum too."""
    meanshift: Mapping[str, Any] = direction.meanshift or {}
    if heatmap is None or drawn.get("fft_signal") != "operations" or meanshift.get("source") != HEATMAP:
        return None
    values = getattr(heatmap, direction.name) / heatmap.bin_seconds
    freqs, amplitude = amplitude_spectrum(values, heatmap.bin_seconds, config.fft_oversampling)
    verdict: Mapping[str, Any] = direction.verdict or {}
    frequency = 1 / verdict["period"] if verdict.get("periodic") else None
    return {
        "fft_signal": "heatmap",
        "frequencies": freqs,
        "amplitude": amplitude,
        "peak_frequency": frequency,
    }


def _spectrum_chart(direction: str, drawn: Mapping[str, Any], most: int) -> Chart:
    amplitude = drawn["amplitude"]
    top = max(float(amplitude.max(initial=0.0)), float(np.finfo(float).tiny))
    freqs, shown = log_stretch_peaks(drawn["frequencies"], amplitude / top, most)
    peak = drawn.get("peak_frequency")
    marked = f"; peak at {peak:.3g} Hz (period {duration(1 / peak)})" if peak else ""
    tallest = drawn["frequencies"][int(amplitude.argmax())]
    if peak and abs(tallest - peak) > 0.05 * peak:
        marked += f", the tallest bin at {tallest:.3g} Hz (a harmonic, or outside the band searched)"
    return {
        "id": f"spectrum-{direction}-{drawn['fft_signal']}",
        "title": f"{direction}: amplitude spectrum of the {drawn['fft_signal']} signal{marked}",
        "xlabel": "frequency (Hz)",
        "ylabel": "amplitude (share of max)",
        "unit": "",
        "x": numbers(freqs),
        "series": [{"label": direction, "values": numbers(shown), "color": COLORS[direction]}],
        "style": "line",
        "logx": True,
    }
