"""Corpus figures of SPEC 6 (paper Fig. 3-5, Tables II-III) from summary.json.

Each `plot_*` function writes NAME.png and NAME.svg into a folder and returns
the data it drew (a DataFrame, or a dict for the stability histogram), so
tests check the figure's numbers against summary.json without comparing
pixels. Palettes, fonts and saving are shared with the timeline in `style`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.ticker import MaxNLocator
from scipy.cluster.hierarchy import leaves_list, linkage
from scipy.spatial.distance import squareform

from mosaic.config import Config
from mosaic.corpus.stats import VIEWS
from mosaic.report import tables
from mosaic.report.style import CELL_FONT, HEATMAP_CMAP, NOTE_FONT, PALETTE, new_figure, save_png_svg, themed
from mosaic.report.tables import VIEW_NAMES, display_name

VIEW_COLORS = dict(zip(VIEW_NAMES.values(), PALETTE[: len(VIEW_NAMES)], strict=True))
CORPUS_STYLE = "white"


@themed(CORPUS_STYLE)
def plot_funnel(summary: dict[str, Any], out_dir: Path) -> pd.DataFrame:
    """Pre-processing funnel (paper Fig. 3): how many logs survive each step."""
    table = tables.funnel_table(summary)
    kind_colors = {"input": PALETTE[7], "evicted": PALETTE[3], "kept": PALETTE[0]}
    fig = new_figure(figsize=(8, 0.45 * len(table) + 1.5))
    ax = fig.subplots()
    bars = ax.barh(table["stage"], table["logs"], color=[kind_colors[k] for k in table["kind"]])
    labels = [f"{n:,.0f} ({s:.1%})" for n, s in zip(table["logs"], table["share"], strict=True)]
    ax.bar_label(bars, labels=labels, padding=3)
    ax.invert_yaxis()
    ax.set_xlim(0, max(table["logs"].max(), 1) * 1.3)  # room for the bar labels
    ax.set_xlabel("Darshan logs (count)")
    funnel = summary["funnel"]
    ax.set_title(
        f"Pre-processing funnel ({funnel.get('skipped_files', 0):,} non-log files skipped, "
        f"{funnel.get('partial', 0):,} partial logs kept)"
    )
    sns.despine(fig)
    save_png_svg(fig, out_dir, "funnel")
    return table


@themed(CORPUS_STYLE)
def _grouped_bars(table: pd.DataFrame, title: str, out_dir: Path, name: str) -> pd.DataFrame:
    """One panel per group (read / write / metadata): share of traces per category and view."""
    groups = list(dict.fromkeys(table["group"]))
    categories = table.groupby("group", sort=False)["category"].nunique().max()
    fig = new_figure(figsize=(6 * len(groups), 0.55 * categories + 1.8))
    axes = fig.subplots(1, len(groups), squeeze=False)
    for ax, group in zip(axes[0], groups, strict=True):
        data = table[table["group"] == group].assign(percent=lambda t: 100 * t["share"])
        sns.barplot(data=data, x="percent", y="category", hue="view", palette=VIEW_COLORS, ax=ax, orient="h")
        for container in ax.containers:
            ax.bar_label(container, fmt="%.1f%%", padding=2, fontsize=NOTE_FONT)
        ax.set_xlim(0, 115)  # 100 % plus room for the labels
        ax.set_xlabel("share of traces (%)")
        ax.set_ylabel("")
        ax.set_title(group if group != "metadata" else "")
        ax.get_legend().remove()
    fig.suptitle(title)
    sns.despine(fig)
    fig.tight_layout()
    # One legend under the panels, where no bar can hide it.
    fig.legend(
        *axes[0][0].get_legend_handles_labels(),
        loc="upper center",
        bbox_to_anchor=(0.5, 0),
        ncol=len(VIEW_NAMES),
        frameon=False,
    )
    save_png_svg(fig, out_dir, name)
    return table


def plot_periodicity(summary: dict[str, Any], out_dir: Path) -> pd.DataFrame:
    """Paper Table II: non-periodic vs periodic by period magnitude, writes and reads."""
    cfg = {**Config().to_dict(), **summary.get("config", {})}
    bounds = " < ".join(
        f"{name} \u2264 {_duration(cfg[key])}"
        for name, key in (
            ("second", "period_second_max"),
            ("minute", "period_minute_max"),
            ("hour", "period_hour_max"),
        )
    )
    return _grouped_bars(
        tables.periodicity_table(summary),
        f"Periodicity by period magnitude\n({bounds} < day or more)",
        out_dir,
        "periodicity",
    )


def _duration(seconds: float) -> str:
    """30 -> '30 s', 1800 -> '30 min', 43200 -> '12 h' (the unit that reads best)."""
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


def plot_temporality(summary: dict[str, Any], out_dir: Path) -> pd.DataFrame:
    """Paper Table III: when in the run reads and writes happen."""
    return _grouped_bars(
        tables.temporality_table(summary), "Temporality (labels are not exclusive)", out_dir, "temporality"
    )


def plot_metadata(summary: dict[str, Any], out_dir: Path) -> pd.DataFrame:
    """Paper Fig. 4: metadata load categories."""
    return _grouped_bars(tables.metadata_table(summary), "Metadata load categories", out_dir, "metadata")


def related_order(jaccard: pd.DataFrame) -> list[str]:
    """Labels ordered so that often co-occurring ones sit together.

    Average-linkage clustering on the Jaccard distance 1 - J, leaves in
    optimal order: a block of related categories shows as a dense square.
    """
    if len(jaccard) < 3:
        return list(jaccard.index)
    distance = 1.0 - jaccard.to_numpy()
    np.fill_diagonal(distance, 0.0)
    tree = linkage(squareform(distance, checks=False), method="average", optimal_ordering=True)
    return [jaccard.index[i] for i in leaves_list(tree)]


@themed(CORPUS_STYLE)
def _heatmap(
    shown: pd.DataFrame, title: str, colorbar: str, xlabel: str, ylabel: str, out_dir: Path, name: str
) -> None:
    side = 0.42 * max(shown.shape) + 3.5
    fig = new_figure(figsize=(side + 1.5, side))
    ax = fig.subplots()
    if shown.notna().to_numpy().any():
        sns.heatmap(
            100 * shown,
            mask=shown.isna(),
            annot=True,
            fmt=".0f",
            cmap=HEATMAP_CMAP,
            vmin=0,
            vmax=100,
            square=True,
            linewidths=0.5,
            linecolor="white",
            annot_kws={"fontsize": CELL_FONT},
            cbar_kws={"label": colorbar, "shrink": 0.6},
            xticklabels=[display_name(c) for c in shown.columns],
            yticklabels=[display_name(r) for r in shown.index],
            ax=ax,
        )
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    else:
        ax.text(
            0.5,
            0.5,
            "no pair of categories above the display threshold",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
        ax.set_axis_off()
    ax.set_title(title)
    save_png_svg(fig, out_dir, name)


def _visible(matrix: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Cells worth a colour: off the diagonal and above the display threshold."""
    values = matrix.to_numpy()
    return pd.DataFrame(
        (values > config.heatmap_display_min) & ~np.eye(len(values), dtype=bool),
        index=matrix.index,
        columns=matrix.columns,
        dtype=bool,
    )


def _without_empty_lines(shown: pd.DataFrame) -> pd.DataFrame:
    """Drop rows and columns with no visible cell (e.g. the triangle's first row)."""
    return shown.loc[shown.notna().any(axis=1), shown.notna().any(axis=0)]


def plot_jaccard(summary: dict[str, Any], view: str, out_dir: Path, config: Config) -> pd.DataFrame:
    """Paper Fig. 5: Jaccard index of category pairs, lower triangle, cells above threshold.

    Returns the matrix as drawn: NaN where a cell is hidden; categories with
    no visible cell are left out.
    """
    jaccard = tables.matrix_frame(summary, "jaccard", view)
    visible = _visible(jaccard, config)
    keep = visible.any(axis=0)
    order = related_order(jaccard.loc[keep, keep])
    lower = np.tril(np.ones((len(order), len(order)), dtype=bool), k=-1)
    shown = jaccard.loc[order, order].where(lower & visible.loc[order, order].to_numpy(dtype=bool))
    shown = _without_empty_lines(shown)
    _heatmap(
        shown,
        f"Jaccard index of categories, {VIEW_NAMES[view]} (cells > {config.heatmap_display_min:.0%})",
        "Jaccard index (%)",
        "",
        "",
        out_dir,
        f"jaccard_{view}",
    )
    return shown


def plot_conditional(summary: dict[str, Any], view: str, out_dir: Path, config: Config) -> pd.DataFrame:
    """P(B | A): the share of traces with row category A that also carry column B.

    Same ordering as the Jaccard heatmap of the view; hidden cells are NaN.
    """
    conditional = tables.matrix_frame(summary, "conditional", view)
    visible = _visible(conditional, config)
    keep = visible.any(axis=0) | visible.any(axis=1)
    order = related_order(tables.matrix_frame(summary, "jaccard", view).loc[keep, keep])
    shown = _without_empty_lines(
        conditional.loc[order, order].where(visible.loc[order, order].to_numpy(dtype=bool))
    )
    _heatmap(
        shown,
        f"P(B | A), {VIEW_NAMES[view]} (cells > {config.heatmap_display_min:.0%})",
        "P(B | A) (%)",
        "B (also carried)",
        "A (given)",
        out_dir,
        f"conditional_{view}",
    )
    return shown


@themed(CORPUS_STYLE)
def plot_stability(summary: dict[str, Any], out_dir: Path) -> dict[str, Any] | None:
    """Per-application stability with --all-runs: share of runs categorized like the representative."""
    stability = summary.get("stability")
    if not stability:
        return None
    edges = 100 * np.asarray(stability["histogram"]["edges"])
    counts = np.asarray(stability["histogram"]["counts"])
    fig = new_figure(figsize=(7, 4))
    ax = fig.subplots()
    ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color=PALETTE[0], edgecolor="white")
    for value, name, style, color in (
        (stability["mean"], "mean", "--", PALETTE[3]),
        (stability["median"], "median", ":", PALETTE[2]),
    ):
        if value is not None:
            ax.axvline(100 * value, color=color, linestyle=style, linewidth=2, label=f"{name} {value:.0%}")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("runs categorized like the representative (% of the application's runs)")
    ax.set_ylabel("applications (count)")
    ax.set_title(f"Per-application stability ({stability['count']:,} applications)")
    if stability["count"]:
        ax.legend(loc="upper left")
    sns.despine(fig)
    save_png_svg(fig, out_dir, "stability")
    shown: dict[str, Any] = stability
    return shown


def render_figures(out: Path, config: Config | None = None) -> dict[str, Any]:
    """All corpus figures of OUT/summary.json into OUT/figures/; returns each one's data."""
    config = config or Config()
    summary = json.loads((Path(out) / "summary.json").read_text())
    figures_dir = Path(out) / "figures"
    drawn = {
        "funnel": plot_funnel(summary, figures_dir),
        "periodicity": plot_periodicity(summary, figures_dir),
        "temporality": plot_temporality(summary, figures_dir),
        "metadata": plot_metadata(summary, figures_dir),
        "stability": plot_stability(summary, figures_dir),
    }
    for view in VIEWS:
        drawn[f"jaccard_{view}"] = plot_jaccard(summary, view, figures_dir, config)
        drawn[f"conditional_{view}"] = plot_conditional(summary, view, figures_dir, config)
    return drawn
