"""The numbers behind every corpus figure, read from summary.json alone.

Figures and the Markdown report draw from these tables, so a table printed in
report.md and the bars of the matching figure cannot disagree. Shares are of
the view's traces (representatives for "single run", runs for "all runs");
the labels are non-exclusive, so a family's shares need not add up to 1.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd

from mosaic.analysis.labels import METADATA, TEMPORALITY
from mosaic.corpus.stats import VIEWS
from mosaic.directions import DIRECTIONS
from mosaic.report.text import counted, display_name

VIEW_NAMES = {"single_run": "single run", "all_runs": "all runs"}
TRACE_NOUNS = {"single_run": "representative", "all_runs": "run"}  # what a view's traces are
MAGNITUDES = ("periodic_second", "periodic_minute", "periodic_hour", "periodic_day_or_more")
NON_PERIODIC = "non_periodic"  # not a label: the traces without `periodic`
TEMPORALITY_ORDER = ("insignificant",) + tuple(t for t in TEMPORALITY if t != "insignificant")


def view_traces(summary: dict[str, Any], view: str) -> str:
    """`n = 8 representatives`: how many traces a view's shares are of."""
    return f"n = {counted(summary['distributions'][view]['traces'], TRACE_NOUNS[view])}"


def non_log_files(funnel: dict[str, Any]) -> int:
    """Files seen that were neither a log nor an archive (`skipped_files` in older summaries)."""
    return int(funnel.get("non_log_files", funnel.get("skipped_files", 0)))


def files_note(funnel: dict[str, Any]) -> str:
    """'2,888 files seen (an archive is one file of many logs), 1 not a log, 2 partial logs
    kept.': without the aside, 2,888 files beside 3,000 logs reads as a miscount."""
    files, other = funnel.get("files_seen", funnel["logs"]), non_log_files(funnel)
    archives = " (an archive is one file of many logs)" if files - other != funnel["logs"] else ""
    return (
        f"{files:,} files seen{archives}, {other:,} not {'a log' if other == 1 else 'logs'}, "
        f"{counted(funnel.get('partial', 0), 'partial log')} kept."
    )


def funnel_table(summary: dict[str, Any]) -> pd.DataFrame:
    """Paper Fig. 3: logs -> evicted by reason -> valid -> unique applications -> categorized."""
    funnel = summary["funnel"]
    rows = (
        [("Darshan logs", "input", funnel["logs"])]
        + _evicted_rows(funnel["evicted"], "evicted")
        + [("valid", "kept", funnel["valid"]), ("unique applications", "kept", funnel["groups"])]
        # logs that passed validation but failed later (a worker crash, a timeout)
        + _evicted_rows(funnel.get("categorize_evicted", {}), "evicted while categorizing")
        + [("categorized", "kept", funnel["categorized"])]
    )
    table = pd.DataFrame(rows, columns=["stage", "kind", "logs"])
    table["share"] = table["logs"] / funnel["logs"] if funnel["logs"] else 0.0
    return table


def _evicted_rows(evicted: dict[str, Any], stage: str) -> list[tuple[str, str, int]]:
    """One funnel row per eviction reason, most frequent first."""
    ordered = sorted(evicted.items(), key=lambda item: (-item[1], item[0]))
    return [(f"{stage}: {display_name(reason)}", "evicted", n) for reason, n in ordered]


def _label_shares(summary: dict[str, Any], entries: list[tuple[str, str]]) -> pd.DataFrame:
    """Long table (group, category, label, view, traces, share) for (group, label) entries."""
    rows = []
    for view in VIEWS:
        dist = summary["distributions"][view]
        total = dist["traces"]
        counts = dict(dist["counts"])
        for direction in DIRECTIONS:
            counts[f"{direction}_{NON_PERIODIC}"] = total - counts.get(f"{direction}_periodic", 0.0)
        for group, label in entries:
            weight = counts.get(label, 0.0)
            rows.append(
                {
                    "group": group,
                    "category": display_name(label.split("_", 1)[1])
                    if group in DIRECTIONS
                    else display_name(label),
                    "label": label,
                    "view": VIEW_NAMES[view],
                    "traces": weight,
                    "share": weight / total if total else 0.0,
                }
            )
    return pd.DataFrame(rows)


def periodicity_table(summary: dict[str, Any]) -> pd.DataFrame:
    """Paper Table II, reads and writes: non-periodic, then periodic by period magnitude."""
    return _label_shares(summary, [(d, f"{d}_{x}") for d in DIRECTIONS for x in (NON_PERIODIC,) + MAGNITUDES])


def temporality_table(summary: dict[str, Any]) -> pd.DataFrame:
    """Paper Table III: every temporality label of reads and writes."""
    return _label_shares(summary, [(d, f"{d}_{x}") for d in DIRECTIONS for x in TEMPORALITY_ORDER])


def metadata_table(summary: dict[str, Any]) -> pd.DataFrame:
    """Paper Fig. 4: the metadata labels."""
    return _label_shares(summary, [("metadata", label) for label in METADATA])


def matrix_frame(summary: dict[str, Any], kind: str, view: str) -> pd.DataFrame:
    """The `jaccard` or `conditional` matrix of one view (rows A, columns B)."""
    part = summary[kind][view]
    return pd.DataFrame(part["matrix"], index=part["labels"], columns=part["labels"], dtype=float)


def jaccard_pairs(summary: dict[str, Any], view: str, min_value: float) -> pd.DataFrame:
    """Category pairs with a Jaccard index above `min_value`, highest first (Fig. 5 as text)."""
    jaccard = matrix_frame(summary, "jaccard", view)
    upper = np.triu(np.ones(jaccard.shape, dtype=bool), k=1)
    pairs = cast(pd.Series, jaccard.where(upper).stack()).rename("jaccard").reset_index()
    pairs.columns = ["A", "B", "jaccard"]
    pairs = pairs[pairs["jaccard"] > min_value]
    return pairs.sort_values("jaccard", ascending=False, kind="stable").reset_index(drop=True)
