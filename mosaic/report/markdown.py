"""OUT/report.md: the figures' tables as Markdown, to diff runs and paste into papers."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pandas as pd

from mosaic.config import Config
from mosaic.corpus.outputs import write_atomically
from mosaic.corpus.stats import VIEWS, noteworthy_correlations
from mosaic.report import tables
from mosaic.report.summary import load_summary
from mosaic.report.tables import VIEW_NAMES
from mosaic.report.text import display_name


def _percent(share: float) -> str:
    return f"{100 * share:.1f} %"


def _shares_by_view(table: pd.DataFrame) -> str:
    """One row per (group, category), one column per view."""
    wide = table.pivot_table(
        index=["group", "category"], columns="view", values="share", sort=False
    ).reset_index()
    for view in VIEW_NAMES.values():
        wide[view] = wide[view].map(_percent)
    return wide[["group", "category", *VIEW_NAMES.values()]].to_markdown(index=False)


def _funnel(summary: dict[str, Any]) -> str:
    table = tables.funnel_table(summary).drop(columns="kind")
    table["share"] = table["share"].map(_percent)
    return table.to_markdown(index=False, intfmt=",")


def _stability(summary: dict[str, Any]) -> str:
    stability = summary.get("stability")
    if not stability:
        return "Not computed (run `mosaic run --all-runs` to measure it)."
    if not stability["count"]:
        return "No application with several runs."
    edges = stability["histogram"]["edges"]
    bins = pd.DataFrame(
        {
            "share of runs like the representative": [
                f"{100 * lo:.0f}-{100 * hi:.0f} %" for lo, hi in itertools.pairwise(edges)
            ],
            "applications": stability["histogram"]["counts"],
        }
    )
    return (
        f"{stability['count']:,} applications; mean {_percent(stability['mean'])}, "
        f"median {_percent(stability['median'])}.\n\n{bins.to_markdown(index=False)}"
    )


def _correlations(summary: dict[str, Any], view: str, config: Config) -> str:
    found = noteworthy_correlations(
        summary["conditional"][view],
        summary["distributions"][view],
        config.correlation_min_probability,
        config.correlation_min_support,
    )
    if not found:
        return "None."
    return pd.DataFrame(
        {
            "if A": [display_name(c["if"]) for c in found],
            "then B": [display_name(c["then"]) for c in found],
            "P(B \\| A)": [_percent(c["probability"]) for c in found],
            "support": [_percent(c["support"]) for c in found],
        }
    ).to_markdown(index=False)


def _jaccard(summary: dict[str, Any], view: str, config: Config) -> str:
    pairs = tables.jaccard_pairs(summary, view, config.heatmap_display_min)
    if pairs.empty:
        return "None."
    return pd.DataFrame(
        {
            "A": pairs["A"].map(display_name),
            "B": pairs["B"].map(display_name),
            "Jaccard": pairs["jaccard"].map(_percent),
        }
    ).to_markdown(index=False)


def render_report(summary: dict[str, Any], config: Config) -> str:
    """The whole report as one Markdown string."""
    funnel = summary["funnel"]
    traces = {view: summary["distributions"][view]["traces"] for view in VIEWS}
    sections = [
        "# MOSAIC corpus report",
        f"mosaic {summary.get('mosaic_version', '?')}, configuration {summary.get('config_hash', '?')}. "
        f"Shares are of representatives (single run: {traces['single_run']:,.0f}) "
        f"or of runs (all runs: {traces['all_runs']:,.0f}); "
        "labels are not exclusive.",
        f"## Pre-processing funnel\n\n{tables.files_note(funnel)}\n\n" + _funnel(summary),
        "## Periodicity (paper Table II)\n\n" + _shares_by_view(tables.periodicity_table(summary)),
        "## Temporality (paper Table III)\n\n" + _shares_by_view(tables.temporality_table(summary)),
        "## Metadata load (paper Fig. 4)\n\n" + _shares_by_view(tables.metadata_table(summary)),
        "## Per-application stability\n\n" + _stability(summary),
    ]
    for view in VIEWS:
        sections.append(
            f"## Noteworthy correlations, {VIEW_NAMES[view]}\n\n"
            f"P(B | A) >= {_percent(config.correlation_min_probability)}, A and B together on "
            f">= {_percent(config.correlation_min_support)} of traces; strongest first.\n\n"
            + _correlations(summary, view, config)
        )
    for view in VIEWS:
        sections.append(
            f"## Jaccard index above {_percent(config.heatmap_display_min)}, "
            f"{VIEW_NAMES[view]} (paper Fig. 5)\n\n" + _jaccard(summary, view, config)
        )
    from mosaic.interference.figure import markdown as conflicts_table  # SPEC 3.11

    if conflicts := conflicts_table(summary):
        sections.append("## Who slows whom: the categories that conflict\n\n" + conflicts)
    return "\n\n".join(sections) + "\n"


def write_report(out: Path, config: Config | None = None, summary: dict[str, Any] | None = None) -> Path:
    """OUT/report.md from OUT/summary.json (or `summary`, already read from it)."""
    summary = summary if summary is not None else load_summary(Path(out))
    path = Path(out) / "report.md"
    text = render_report(summary, config or Config())
    write_atomically(path, lambda temp: temp.write_text(text))
    return path
