"""The "Performance" section of a job's page (SPEC 3.9): mosaic's figure, darshan-util's
beside it, what parts them, and, given the store, the run against its application's runs."""

from __future__ import annotations

from typing import Any

from mosaic import perfwords as W
from mosaic.corpus import perfstore
from mosaic.html.page import Html, esc, facts, human_bytes, table

DIRECTION_NAMES = (("read", "read"), ("write", "write"), ("total", "all I/O"))


def performance_html(
    perf: dict[str, Any] | None, history: dict[str, Any] | None = None, history_note: str = ""
) -> Html:
    """The section's body; ``history``: :func:`mosaic.corpus.perfstore.history` of the
    run's application (with values), or None with ``history_note`` saying why."""
    if not perf:
        return Html("<p>No performance figure: this result was built without its log's counters.</p>")
    job = perf["job"]
    lower = bool(job.get("lower_bound"))
    parts = [
        "<p>How fast the job moved its bytes: mosaic's figure from the files it analyses "
        "(POSIX and STDIO records kept by SPEC 2 and 3.1), darshan-util's from every record, "
        "as <code>darshan-parser --perf</code> prints it. The I/O time is the slowest rank's "
        "time in I/O calls (all I/O: reads, writes and metadata calls), not the run time "
        "(SPEC 3.9). A time no counter recorded reads \u201cnot known\u201d, never 0.</p>"
    ]
    if lower:
        parts.append(
            '<p class="note"><strong>Partial log:</strong> Darshan lost some records, so each '
            "byte count and time below is <strong>at least</strong> the value shown.</p>"
        )
    rows = [
        [
            label,
            ("at least " if lower else "") + human_bytes(job[key]["bytes"]),
            W.time_text(job[key], lower),
            W.bandwidth_text(job[key], lower),
            W.share_text(job[key]),
        ]
        for key, label in DIRECTION_NAMES
    ]
    parts.append("<h3>mosaic's figure</h3>")
    parts.append(table(["direction", "bytes", "I/O time", "bandwidth", "share of run time"], rows, "numbers"))
    parts.append(facts(_job_facts(job)))
    modules = perf.get("modules", {})
    if modules:
        parts.append("<h3>Per module (mosaic's records; MPI-IO beside: POSIX carries its bytes)</h3>")
        module_rows = [
            [
                name,
                human_bytes(m["total"]["bytes"]),
                W.time_text(m["total"], lower),
                W.bandwidth_text(m["total"], lower),
            ]
            for name, m in modules.items()
        ]
        parts.append(table(["module", "bytes", "I/O time", "bandwidth"], module_rows, "numbers"))
    parts.append(_darshan_util(perf))
    if history is not None or history_note:
        parts.append(_history(perf, history, history_note))
    return Html("".join(parts))


def _job_facts(job: dict[str, Any]) -> list[tuple[str, object]]:
    mode = job.get("mode")
    ranks = job.get("ranks_doing_io")
    source = {"records": "per-rank records", "heatmap": "HEATMAP", "dxt": "DXT"}.get(
        job.get("ranks_source") or ""
    )
    sizes = job.get("sizes", {})
    requests = job.get("metadata_requests", 0)
    rate = job.get("metadata_per_second")
    total = job["total"]
    return [
        ("I/O mode", W.MODE_WORDS.get(mode, "none (no bytes moved)") if mode else "none (no bytes moved)"),
        (
            "ranks doing I/O",
            f"{ranks:,} of {job.get('nprocs', 0):,} (from the {source})"
            if ranks is not None
            else f"{W.NOT_KNOWN}: shared files moved bytes, and no HEATMAP or DXT says which ranks did",
        ),
        (
            "metadata requests during I/O",
            f"{requests:,} in {W.seconds(total['time'])} of I/O: {rate:,.3g}/s"
            if rate is not None and total.get("time")
            else f"{requests:,} ({W.NOT_KNOWN} per second: no I/O time)",
        ),
        ("write request sizes", _sizes_text(sizes.get("write"))),
        ("read request sizes", _sizes_text(sizes.get("read"))),
        ("request sizes from", "POSIX records' SIZE_* counters (STDIO keeps none)"),
    ]


def _sizes_text(found: dict[str, Any] | None) -> str:
    if not found:
        return "no request"
    return (
        f"{found['requests']:,} requests, median in {found['median_bucket']} B, "
        f"{100 * found['share_up_to_1KiB']:.1f}\u00a0% up to 1\u00a0KiB, "
        f"{100 * found['share_up_to_1MiB']:.1f}\u00a0% up to 1\u00a0MiB"
    )


def _darshan_util(perf: dict[str, Any]) -> Html:
    util = perf.get("darshan_util", {})
    rows = [
        [
            name,
            f"{m['records']:,}",
            human_bytes(m["total_bytes"]),
            W.seconds(m["agg_time_by_slowest"]),
            f"{m['agg_perf_by_slowest']:,.2f}" if m["agg_perf_by_slowest"] is not None else W.NOT_KNOWN,
        ]
        for name, m in util.items()
    ]
    left = perf.get("left_out", {})
    why = (
        f"<p>mosaic's figure leaves out {left.get('records', 0):,} record(s) holding "
        f"{human_bytes(left.get('bytes', 0.0))} that darshan-util counts (standard streams, /proc and the "
        "other files SPEC 2 does not analyse, and records SPEC 3.1 drops)"
        + (
            f", and counts {left['stand_ins']:,} MPI-IO record(s) standing in for lost POSIX ones"
            if left.get("stand_ins")
            else ""
        )
        + ". darshan-util's figures are per module; mosaic's job figure adds a rank's POSIX and "
        "STDIO time.</p>"
    )
    return Html(
        "<h3>darshan-util's figure (every record)</h3>"
        + table(
            ["module", "records", "bytes", "agg_time_by_slowest", "agg_perf_by_slowest (MiB/s)"],
            rows,
            "numbers",
        )
        + why
    )


def _history(perf: dict[str, Any], history: dict[str, Any] | None, note: str) -> Html:
    if history is None or not history.get("metrics"):
        return Html(
            f"<h3>Against its application's runs</h3><p>{esc(note or 'No other run of it is stored.')}</p>"
        )
    values = perfstore.run_metrics(perf)
    sentences = [
        W.placement_sentence(name, perfstore.placement(values.get(name), found, name))
        for name, found in history["metrics"].items()
    ]
    items = "".join(f"<li>{esc(s)}</li>" for s in sentences)
    return Html(
        f"<h3>Against its application's runs</h3><p>Over the {history['complete_runs']:,} stored runs of "
        "its application with a whole log (partial ones left out):</p>"
        + f'<ul class="placement">{items}</ul>'
        + table(["metric", "runs", "p10", "p50", "p90"], W.history_rows(history, short=True), "numbers")
    )
