"""The summary `mosaic forecast` prints (``--json`` prints the API's object instead): the risk
first, then why (the candidate's phases and slowdowns), then whom it meets, then the load
ahead per file system in a few lines."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from mosaic.periods import duration
from mosaic.service.lookup_view import human_bytes

SPARK = " .:-=+*#%@"


def rate(value: float | None) -> str:
    return "unknown" if value is None else f"{human_bytes(value)}/s"


def render_forecast(answer: dict[str, Any]) -> str:
    risk = answer["risk"]
    lines = [
        f"uid {answer['uid']}  {answer['application']}",
        f"risk {risk['class'] or 'unknown'}"
        + (f" (expected slowdown {risk['score']:.2f}x)" if risk["score"] is not None else "")
        + (f": {risk['why']}" if risk["why"] else ""),
        f"horizon {duration(answer['expected_run_time'])} ({answer['run_time_basis']}), "
        f"{answer['horizon']['bins']} bins of {duration(answer['horizon']['bin_seconds'])}",
        f"running jobs {answer['running']['jobs']}, {answer['running']['with_signature']} with a signature",
    ]
    if answer["background"]["why"]:
        lines.append(f"background: {answer['background']['why']}")
    cand = answer["candidate"]
    if cand is not None:
        slowdown = cand["expected_slowdown"]
        lines.append(
            f"its I/O: {len(cand['phases'])} phase(s), {duration(cand['io_seconds'])}, meeting "
            f"{rate(cand['load_during_io_bps'])} on average; "
            f"sensitivity {cand['sensitivity'] or 'not judged'}, "
            + (f"expected slowdown {slowdown:.2f}x" if slowdown is not None else "slowdown unknown")
        )
        rows = [
            [
                p["direction"],
                duration(p["start"]),
                duration(p["end"]),
                human_bytes(p["bytes"]),
                rate(p["load_bps"]),
            ]
            for p in cand["phases"]
        ]
        if rows:
            lines += ["", tabulate(rows, headers=["phase", "from", "to", "bytes", "others' load"])]
    if answer["caused"]:
        rows = [
            [c["job"], rate(c["added_load_bps"]), f"+{c['extra_slowdown']:.0%}"] for c in answer["caused"]
        ]
        lines += ["", tabulate(rows, headers=["it would slow", "added load", "I/O time"])]
    if answer["conflicts"]:
        rows = [[c["job"], c.get("application") or "", f"{c['share']:.0%}"] for c in answer["conflicts"]]
        lines += ["", tabulate(rows, headers=["it meets", "application", "share of the load"])]
    lines.append("")
    for name, ahead in answer["load_ahead"].items():
        total = [r + w for r, w in zip(ahead["read"], ahead["write"])]
        peak = max(total, default=0.0)
        spark = "".join(
            SPARK[min(len(SPARK) - 1, int(v / peak * (len(SPARK) - 1)))] if peak > 0 else " " for v in total
        )
        label = "file systems not known" if name == "*" else name
        lines.append(f"{label}: peak {rate(peak)}  |{spark}|")
    if answer["why"]:
        lines.append(f"{answer['status']}: {answer['why']}")
    return "\n".join(lines) + "\n"
