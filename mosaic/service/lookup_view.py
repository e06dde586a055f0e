"""The readable tables `mosaic lookup` and `mosaic apps` print (``--json`` prints the API's
object instead).

What a person at a terminal asks first: how many runs the answer rests on,
whether they behave alike, then the numbers (median and p10-p90 spread), then
every label's share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tabulate import tabulate

from mosaic.corpus.listing import ApplicationList
from mosaic.corpus.profiles import ApplicationAnswer, ApplicationProfile, SignatureAnswer, Spread
from mosaic.directions import DIRECTIONS
from mosaic.interference.tables import ContentionSummary
from mosaic.periods import duration, median_period, period_text

BASIS = {
    "every_run": "every stored run",
    "representative": "the heaviest run only (a batch run without --all-runs)",
    "some_runs": "part of the stored runs",
}
BYTE_UNITS = ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))


def human_bytes(value: float) -> str:
    for scale, unit in BYTE_UNITS:
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def number(value: float) -> str:
    return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def render(answer: ApplicationAnswer) -> str:
    """The whole answer as text: the group, its profile's head, the numbers, the labels."""
    lines = [
        f"uid {answer['uid']}  {answer['application']}",
        f"stored runs {answer['runs']}, last seen {answer['last_seen'] or 'unknown'}",
        f"heaviest run {answer['representative']}: {' '.join(answer['categories'] or [])}",
    ]
    lines += _contention(answer.get("contention"))
    profile = answer["profile"]
    tail = [*_performance(answer.get("performance")), *_signature(answer.get("signature"))]
    if profile is None:
        lines.append("no profile: none of its runs was categorized into the store")
        return "\n".join([*lines, *tail]) + "\n"
    return "\n".join([*lines, *_head(profile), "", _numbers(profile), "", _labels(profile), *tail]) + "\n"


def _performance(history: dict[str, Any] | None) -> list[str]:
    """SPEC 3.9's history of the group: p10 / p50 / p90 per metric over its runs."""
    if not history:
        return []
    from mosaic.perfwords import history_rows

    rows = history_rows(history)
    head = f"performance over {history['complete_runs']} whole run(s) of {history['runs']} stored"
    if not rows:
        return ["", head + ": no figure known"]
    return ["", head, tabulate(rows, headers=["metric", "runs", "p10", "p50", "p90"])]


def _contention(contention: ContentionSummary | None) -> list[str]:
    """Its sensitivity to other jobs' load and its aggressor traits (SPEC 3.11), if computed."""
    if contention is None:
        return []
    head = f"file-system load: {contention['label']} over {contention['n']} runs"
    if contention["rho"] is not None:
        q = "" if contention["q"] is None else f", q {contention['q']:.2g}"
        head += f" (Spearman {contention['rho']:.2f}{q})"
    if contention["label"] == "sensitive" and contention["words"]:
        head += f": {contention['words']}"
    traits = contention["traits"]
    return [head, f"aggressor traits: {', '.join(traits)}"] if traits else [head]


def _signature(shape: SignatureAnswer | None) -> list[str]:
    """The I/O signature (SPEC 3.12): its runs and run time, then one row per burst."""
    if shape is None:
        return []
    body = shape["signature"]
    if body is None:
        return ["", f"no I/O signature: {shape['reason']}"]
    run_time = body["run_time"]
    head = (
        f"I/O signature of {body['runs']} runs, at {duration(body['resolution'])}: run time "
        f"{duration(run_time['p50'])} ({duration(run_time['p10'])} .. {duration(run_time['p90'])}), "
        f"{duration(body['unslowed_run_time'])} unslowed"
    )
    if not body["bursts"]:
        return ["", head, "no burst common to its runs"]
    rows = [
        [
            burst["direction"],
            f"{burst['start']:.1%}",
            f"{burst['duration']:.1%}",
            human_bytes(burst["bytes"]),
            human_bytes(burst["bandwidth"]) + "/s",
            f"{burst['runs']} of {body['runs']}",
        ]
        for burst in body["bursts"]
    ]
    headers = ["burst", "starts at", "lasts", "bytes", "bandwidth", "runs"]
    return ["", head, tabulate(rows, headers=headers, colalign=("left", *["right"] * 5))]


def _head(profile: ApplicationProfile) -> list[str]:
    period = "none (no direction periodic in enough runs)"
    if profile["period_direction"] is not None:
        period = period_text(median_period(profile), profile["period_direction"])
    return [
        f"profile of {profile['runs']} run{'s' if profile['runs'] != 1 else ''}: {BASIS[profile['basis']]}",
        f"seen {profile['first_seen'] or 'unknown'} .. {profile['last_seen'] or 'unknown'}",
        _stability(profile),
        f"period {period}",
    ]


def _stability(profile: ApplicationProfile) -> str:
    """The share of runs alike; one run is alike with itself, which says nothing."""
    usual = " ".join(profile["usual_categories"])
    if profile["runs"] == 1:
        return f"stability unknown: one run, nothing to compare it with (its categories: {usual})"
    return f"stability {profile['stability']:.0%}: runs with the usual categories ({usual})"


def _numbers(profile: ApplicationProfile) -> str:
    rows: list[list[str | int]] = [
        _row("run time", profile["run_time_seconds"], duration),
        _row("peak metadata requests/s", profile["metadata_peak_per_second"], number),
    ]
    for direction in DIRECTIONS:
        side = profile[direction]
        periodic = side["periodic"]
        rows.append(_row(f"{direction} bytes per run", side["bytes"], human_bytes))
        rows.append([f"{direction} periodic: {periodic['share']:.0%} of runs", periodic["runs"], "", "", ""])
        if periodic["runs"]:
            rows += [
                _row(f"{direction} period", periodic["period_seconds"], duration),
                _row(f"{direction} busy fraction", periodic["busy_fraction"], lambda v: f"{v:.2f}"),
                _row(f"{direction} bytes per occurrence", periodic["bytes_per_occurrence"], human_bytes),
            ]
    return tabulate(rows, headers=["", "runs", "median", "p10", "p90"], colalign=("left", *["right"] * 4))


def _row(name: str, spread: Spread | None, show: Callable[[float], str]) -> list[str | int]:
    if spread is None:
        return [name, 0, "not measured", "", ""]
    return [name, spread["runs"], show(spread["median"]), show(spread["p10"]), show(spread["p90"])]


def _labels(profile: ApplicationProfile) -> str:
    ranked = sorted(profile["label_shares"].items(), key=lambda item: (-item[1], item[0]))
    return tabulate([(label, f"{share:.0%}") for label, share in ranked], headers=["label", "share of runs"])


def render_list(listed: ApplicationList, label: str | None) -> str:
    """One line per application, the column ``label``'s share of runs when asked for, and
    how many more there are past this page."""
    rows = [
        [
            item["uid"],
            item["runs"],
            human_bytes(item["heaviest_bytes"]),
            period_text(item["period_seconds"], item["period_direction"]),
            *([f"{item['label_shares'].get(label, 0.0):.0%}"] if label else []),
            item["application"],
        ]
        for item in listed["applications"]
    ]
    headers = [
        "uid",
        "runs",
        "heaviest run's bytes",
        "period",
        *([label] if label else []),
        "application",
    ]
    shown = len(rows)
    first = listed["offset"] + 1
    tail = f"applications {first}-{first + shown - 1} of {listed['total']:,} (by {listed['sort']})"
    if not listed["total"]:
        tail = "no application matches"
    elif not shown:
        tail = f"no application on this page: {listed['total']:,} match"
    elif first + shown - 1 < listed["total"]:
        tail += f"; --offset {first + shown - 1} for the next"
    table = tabulate(rows, headers=headers, colalign=("right", "right", "right", "left")) if rows else ""
    return (table + "\n" if table else "") + tail + "\n"
