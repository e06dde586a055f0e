"""summary.json read for the figures and the report, checked before anything is drawn.

The file may be an older run's, edited by hand, cut short or hostile. Every
part the figures read is checked here, so a bad file ends in one error naming
the file and the key (``funnel.logs: expected a count, found "x"``) instead of
a traceback halfway through the figures. Matrices are bounded by the category
vocabulary: a 3,000-label matrix is refused here, not drawn on a 1,260-inch
canvas until memory runs out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mosaic.analysis.labels import ALL_LABELS
from mosaic.corpus.stats import VIEWS

MAX_LABELS = len(ALL_LABELS)  # a matrix has at most one row per category label
MAX_BINS = 1000  # stability histogram bins (the run's default is 10)
MAX_BYTES = 64 << 20  # a summary of the largest corpus is well under 1 MB
PERIOD_BOUNDS = ("period_second_max", "period_minute_max", "period_hour_max")


class SummaryError(ValueError):
    """summary.json cannot be drawn: the message names the file and the key."""


def _show(value: Any) -> str:
    """A short excerpt of a bad value (never the whole of a large one)."""
    text = json.dumps(value) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


class _Checker:
    """Checks one part of the summary; `key` is its dotted path, for the message."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, expected: str, value: Any) -> SummaryError:
        return SummaryError(f"{self.path}: {key}: expected {expected}, found {_show(value)}")

    def object(self, value: Any, key: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, "an object", value)
        return value

    def field(self, parent: Mapping[str, Any], name: str, key: str) -> Any:
        if name not in parent:
            raise SummaryError(f"{self.path}: {key}.{name}: missing")
        return parent[name]

    def number(self, value: Any, key: str, lo: float = 0.0, hi: float = math.inf) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not lo <= value <= hi
        ):
            bounds = f"a number in [{lo:g}, {hi:g}]" if hi < math.inf else f"a number >= {lo:g}"
            raise self.fail(key, bounds, value)
        return float(value)

    def count(self, value: Any, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(key, "a count (an integer >= 0)", value)
        return int(value)

    def counts(self, value: Any, key: str, kind: str = "count") -> None:
        """An object of name -> count (or -> number >= 0 when `kind` is 'number')."""
        for name, n in self.object(value, key).items():
            (self.count if kind == "count" else self.number)(n, f"{key}.{name}")

    def numbers(self, value: Any, key: str, length: int, lo: float, hi: float) -> None:
        if not isinstance(value, list) or len(value) != length:
            raise self.fail(key, f"a list of {length} numbers", value)
        for i, item in enumerate(value):
            self.number(item, f"{key}[{i}]", lo, hi)


def _funnel(check: _Checker, funnel: Any) -> None:
    funnel = check.object(funnel, "funnel")
    for name in ("logs", "valid", "groups", "categorized"):
        check.count(check.field(funnel, name, "funnel"), f"funnel.{name}")
    for name in ("files_seen", "non_log_files", "skipped_files", "partial"):
        if name in funnel:
            check.count(funnel[name], f"funnel.{name}")
    check.counts(check.field(funnel, "evicted", "funnel"), "funnel.evicted")
    if "categorize_evicted" in funnel:
        check.counts(funnel["categorize_evicted"], "funnel.categorize_evicted")


def _distribution(check: _Checker, summary: Mapping[str, Any], view: str) -> Mapping[str, Any]:
    key = f"distributions.{view}"
    dist = check.object(
        check.field(check.object(summary["distributions"], "distributions"), view, "distributions"), key
    )
    check.number(check.field(dist, "traces", key), f"{key}.traces")
    check.counts(check.field(dist, "counts", key), f"{key}.counts", kind="number")
    return dist


def _matrix(
    check: _Checker, summary: Mapping[str, Any], kind: str, view: str, counts: Mapping[str, Any]
) -> None:
    key = f"{kind}.{view}"
    part = check.object(check.field(check.object(summary[kind], kind), view, kind), key)
    labels = check.field(part, "labels", key)
    if not isinstance(labels, list) or len(labels) > MAX_LABELS:
        raise check.fail(f"{key}.labels", f"a list of at most {MAX_LABELS} category labels", labels)
    for i, label in enumerate(labels):
        if not isinstance(label, str) or label not in counts:
            raise check.fail(f"{key}.labels[{i}]", f"a label counted in distributions.{view}.counts", label)
    if len(set(labels)) != len(labels):
        raise check.fail(f"{key}.labels", "labels without repeats", labels)
    matrix = check.field(part, "matrix", key)
    if not isinstance(matrix, list) or len(matrix) != len(labels):
        raise check.fail(f"{key}.matrix", f"{len(labels)} rows (one per label)", matrix)
    for i, row in enumerate(matrix):
        check.numbers(row, f"{key}.matrix[{i}]", len(labels), 0.0, 1.0)


def _stability(check: _Checker, stability: Any) -> None:
    if stability is None:
        return
    stability = check.object(stability, "stability")
    check.count(check.field(stability, "count", "stability"), "stability.count")
    for name in ("mean", "median"):
        value = check.field(stability, name, "stability")
        if value is not None:
            check.number(value, f"stability.{name}", 0.0, 1.0)
    histogram = check.object(check.field(stability, "histogram", "stability"), "stability.histogram")
    edges = check.field(histogram, "edges", "stability.histogram")
    if not isinstance(edges, list) or not 2 <= len(edges) <= MAX_BINS + 1:
        raise check.fail("stability.histogram.edges", f"a list of 2 to {MAX_BINS + 1} numbers", edges)
    check.numbers(edges, "stability.histogram.edges", len(edges), 0.0, 1.0)
    counts = check.field(histogram, "counts", "stability.histogram")
    if not isinstance(counts, list) or len(counts) != len(edges) - 1:
        raise check.fail("stability.histogram.counts", f"a list of {len(edges) - 1} counts", counts)
    for i, n in enumerate(counts):
        check.count(n, f"stability.histogram.counts[{i}]")


def check_summary(summary: Any, path: Path) -> dict[str, Any]:
    """`summary` itself when every part the figures and the report read is well formed."""
    check = _Checker(path)
    summary = check.object(summary, "the top level")
    for name in ("funnel", "distributions", "jaccard", "conditional"):
        check.field(summary, name, "summary")
    _funnel(check, summary["funnel"])
    for view in VIEWS:
        counts = _distribution(check, summary, view)["counts"]
        for kind in ("jaccard", "conditional"):
            _matrix(check, summary, kind, view, counts)
    _stability(check, summary.get("stability"))
    config = check.object(summary.get("config", {}), "config")
    for name in PERIOD_BOUNDS:
        if name in config:
            check.number(config[name], f"config.{name}", lo=1e-9)
    return dict(summary)


def load_summary(out: Path) -> dict[str, Any]:
    """OUT/summary.json, parsed and checked; SummaryError names the file and what is wrong."""
    path = Path(out) / "summary.json"
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as error:
        raise SummaryError(f"{path}: cannot read: {error.strerror or error}") from None
    if len(data) > MAX_BYTES:
        raise SummaryError(f"{path}: larger than {MAX_BYTES >> 20} MB, not a summary MOSAIC wrote")
    try:
        parsed = json.loads(data.decode("utf-8"))  # bytes to json.loads would guess UTF-16 or 32
    except UnicodeDecodeError as error:
        raise SummaryError(f"{path}: not UTF-8 text (byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise SummaryError(
            f"{path}: not JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    except RecursionError:
        raise SummaryError(f"{path}: not JSON MOSAIC wrote: nested too deeply") from None
    return check_summary(parsed, path)
