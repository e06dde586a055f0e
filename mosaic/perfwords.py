"""SPEC 3.9's figures in words, one notation for the job page, `mosaic explain` and
`mosaic lookup`: a missing value reads "not known" (never 0), a partial log's "at least".
"""

from __future__ import annotations

from typing import Any

NOT_KNOWN = "not known"
PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
METRIC_NAMES = {
    "read_bandwidth": "read bandwidth",
    "write_bandwidth": "write bandwidth",
    "io_time": "I/O time",
    "metadata_per_second": "metadata requests per second during I/O",
}
MODE_WORDS = {
    "N:N": "N:N (most bytes went to files each of one rank alone)",
    "N:1": "N:1 (most bytes went to files shared by all ranks)",
    "N:M": "N:M (most bytes went to files shared by some of the ranks)",
    "1:1": "1:1 (one rank did the I/O)",
}


def si(value: float, unit: str) -> str:
    """212e6, "B/s" -> "212 MB/s": three significant digits, decimal prefixes."""
    for scale, prefix in PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.3g}\u00a0{prefix}{unit}"
    return f"{value:.3g}\u00a0{unit}"


def seconds(value: float) -> str:
    """1.19435 -> "1.19 s"; under a millisecond in µs."""
    if 0 < abs(value) < 1e-3:
        return f"{value * 1e6:.3g}\u00a0µs"
    return f"{value:.3g}\u00a0s" if abs(value) < 1000 else f"{value:,.0f}\u00a0s"


def metric_text(name: str, value: float | None) -> str:
    """One metric's value in its unit; "not known" for None."""
    if value is None:
        return NOT_KNOWN
    if name == "io_time":
        return seconds(value)
    if name == "metadata_per_second":
        return f"{value:,.3g}/s"
    return si(value, "B/s")


def time_text(direction: dict[str, Any], lower_bound: bool) -> str:
    """A direction's I/O time: "not known" when it moved bytes and no counter timed them."""
    if direction.get("time") is None:
        return f"{NOT_KNOWN} (bytes moved, no time counter set)"
    return ("at least " if lower_bound else "") + seconds(float(direction["time"]))


def bandwidth_text(direction: dict[str, Any], lower_bound: bool) -> str:
    """A direction's bandwidth; none without bytes, "not known" without time."""
    if not direction.get("bytes"):
        return "none (no bytes)"
    if direction.get("bandwidth") is None:
        return NOT_KNOWN
    text = si(float(direction["bandwidth"]), "B/s")
    return text + (" (of the records kept)" if lower_bound else "")


def share_text(direction: dict[str, Any]) -> str:
    share = direction.get("time_share")
    return NOT_KNOWN if share is None else f"{100 * share:.1f}\u00a0%"


def placement_sentence(name: str, placed: dict[str, Any] | None) -> str:
    """ "write bandwidth 212 MB/s, slower than 80 % of its 120 runs (median 480 MB/s)"."""
    label = METRIC_NAMES.get(name, name)
    if placed is None:
        return f"{label}: no history to compare with"
    value, median = metric_text(name, placed["value"]), metric_text(name, placed["median"])
    runs = placed["runs"]
    slower, faster = placed["slower_than"], placed["faster_than"]
    if slower >= faster:
        where = f"slower than {100 * slower:.0f}\u00a0%"
    else:
        where = f"faster than {100 * faster:.0f}\u00a0%"
    return f"{label} {value}, {where} of its {runs:,} run{'s' if runs != 1 else ''} (median {median})"


SHORT_NAMES = {"metadata_per_second": "metadata rate"}


def history_rows(history: dict[str, Any], short: bool = False) -> list[list[str]]:
    """[metric, runs, p10, p50, p90] per metric of an application's history (``short``:
    the long metric names shortened, for a narrow table)."""
    return [
        [
            (SHORT_NAMES.get(name) if short else None) or METRIC_NAMES.get(name, name),
            f"{found['runs']:,}",
            *(metric_text(name, found[p]) for p in ("p10", "p50", "p90")),
        ]
        for name, found in history.get("metrics", {}).items()
    ]
