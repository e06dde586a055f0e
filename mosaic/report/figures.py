"""Corpus figures of SPEC 6 (paper Fig. 3-5, Tables II-III) from summary.json.

Each `plot_*` function writes NAME.png and NAME.svg into a folder and returns
the data it drew (a DataFrame, or a dict for the stability histogram), so
tests check the figure's numbers against summary.json without comparing
pixels. Palettes, fonts and saving are shared with the timeline in `style`.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.colors import ListedColormap
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator
from scipy.cluster.hierarchy import leaves_list, linkage
from scipy.spatial.distance import squareform

from mosaic.config import Config
from mosaic.corpus.outputs import staging_folder
from mosaic.corpus.stats import VIEWS
from mosaic.report import load_figures, tables
from mosaic.report.style import CELL_FONT, HEATMAP_CMAP, NOTE_FONT, PALETTE, new_figure, save_png_svg, themed
from mosaic.report.summary import load_summary
from mosaic.report.tables import VIEW_NAMES
from mosaic.report.text import counted, display_name

VIEW_COLORS = dict(zip(VIEW_NAMES.values(), PALETTE[: len(VIEW_NAMES)], strict=True))
CORPUS_STYLE = "white"
AT_FDCWD, RENAME_EXCHANGE = -100, 2  # <fcntl.h>, <linux/fs.h>
GREY_CELL, GREY_TEXT, DIAGONAL = "0.85", "0.35", "0.94"  # cells under the minimum support; the diagonal


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
        f"Pre-processing funnel ({counted(tables.non_log_files(funnel), 'non-log file')} skipped, "
        f"{counted(funnel.get('partial', 0), 'partial log')} kept)"
    )
    sns.despine(fig)
    save_png_svg(fig, out_dir, "funnel")
    return table


def _bar_labels(values: Any) -> list[str]:
    """A share on each bar; none on an empty bar, where "0.0 %" only adds clutter."""
    return [f"{v:.1f}%" if v > 0 else "" for v in values]


@themed(CORPUS_STYLE)
def _grouped_bars(
    summary: dict[str, Any], table: pd.DataFrame, title: str, out_dir: Path, name: str
) -> pd.DataFrame:
    """One panel per group (read / write / metadata): share of traces per category and view."""
    groups = list(dict.fromkeys(table["group"]))
    categories = table.groupby("group", sort=False)["category"].nunique().max()
    fig = new_figure(figsize=(6 * len(groups), 0.55 * categories + 1.8))
    axes = fig.subplots(1, len(groups), squeeze=False)
    for ax, group in zip(axes[0], groups, strict=True):
        data = table[table["group"] == group].assign(percent=lambda t: 100 * t["share"])
        sns.barplot(data=data, x="percent", y="category", hue="view", palette=VIEW_COLORS, ax=ax, orient="h")
        for container in ax.containers:
            ax.bar_label(container, labels=_bar_labels(container.datavalues), padding=2, fontsize=NOTE_FONT)
        ax.set_xlim(0, 115)  # 100 % plus room for the labels
        ax.set_xlabel("share of traces (%)")
        ax.set_ylabel("")
        ax.set_title(group if group != "metadata" else "")
        ax.get_legend().remove()
    fig.suptitle(title)
    sns.despine(fig)
    fig.tight_layout()
    # One legend under the panels, where no bar can hide it; each view with its n.
    handles, names = axes[0][0].get_legend_handles_labels()
    n_of = {VIEW_NAMES[view]: tables.view_traces(summary, view) for view in VIEWS}
    fig.legend(
        handles,
        [f"{view} ({n_of[view]})" for view in names],
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
        summary,
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
        summary,
        tables.temporality_table(summary),
        "Temporality (labels are not exclusive)",
        out_dir,
        "temporality",
    )


def plot_metadata(summary: dict[str, Any], out_dir: Path) -> pd.DataFrame:
    """Paper Fig. 4: metadata load categories."""
    return _grouped_bars(
        summary, tables.metadata_table(summary), "Metadata load categories", out_dir, "metadata"
    )


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


def corpus_order(summary: dict[str, Any]) -> list[str]:
    """The one label order of every heatmap: both kinds, both views.

    Related categories clustered on the mean of the two views' Jaccard
    indices (a label missing from one view counts 0 there), so a reader
    finds each label at the same place in the four matrices.
    """
    frames = [tables.matrix_frame(summary, "jaccard", view) for view in VIEWS]
    labels = list(dict.fromkeys(label for frame in frames for label in frame.index))
    mean = sum(frame.reindex(index=labels, columns=labels, fill_value=0.0) for frame in frames) / len(frames)
    return related_order(pd.DataFrame(mean, index=labels, columns=labels))


def cell_text(percent: float, threshold: float) -> str:
    """A cell's number: whole percents from 10, else one decimal, more when rounding would
    put it at or under the display threshold (1.02 % shows '1.02', never '1' under "> 1 %")."""
    if round(percent, 1) >= 10:
        return f"{percent:.0f}"
    decimals = 1
    while round(percent, decimals) <= threshold and decimals < 4:
        decimals += 1
    return f"{percent:.{decimals}f}"


@themed(CORPUS_STYLE)
def _heatmap(
    shown: pd.DataFrame,
    grey: np.ndarray,
    labels: tuple[list[str], list[str]],
    text: tuple[str, str, str, str],
    config: Config,
    out_dir: Path,
    name: str,
) -> None:
    """Cells of `shown` (NaN: hidden), those under `grey` in grey; (y, x) tick labels;
    text: title, colour bar, x label, y label. The diagonal is outlined in light grey."""
    title, colorbar, xlabel, ylabel = text
    side = 0.42 * max(shown.shape) + 3.5
    fig = new_figure(figsize=(side + 1.5, side))
    ax = fig.subplots()
    values = 100 * shown.to_numpy()
    if shown.notna().to_numpy().any():
        threshold = 100 * config.heatmap_display_min
        annotations = np.vectorize(lambda v: cell_text(v, threshold), otypes=[str])(np.nan_to_num(values))
        common = {
            "annot": annotations,
            "fmt": "",
            "square": True,
            "linewidths": 0.5,
            "linecolor": "white",
            "xticklabels": labels[1],
            "yticklabels": labels[0],
            "ax": ax,
        }
        hidden = np.isnan(values)
        sns.heatmap(
            values,
            mask=hidden | grey,
            cmap=HEATMAP_CMAP,
            vmin=0,
            vmax=100,
            annot_kws={"fontsize": CELL_FONT},
            cbar_kws={"label": colorbar, "shrink": 0.6},
            **common,
        )
        if (grey & ~hidden).any():
            sns.heatmap(
                values,
                mask=hidden | ~grey,
                cmap=ListedColormap([GREY_CELL]),
                cbar=False,
                annot_kws={"fontsize": CELL_FONT, "color": GREY_TEXT},
                **common,
            )
        for i in range(len(shown)):  # the same labels on both axes: row i and column i are one
            ax.add_patch(Rectangle((i, i), 1, 1, facecolor=DIAGONAL, edgecolor="white", linewidth=0.5))
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


def heatmap_labels(summary: dict[str, Any], kind: str, config: Config) -> list[str]:
    """The labels of both views' `kind` heatmaps: those with a visible cell in either
    view, in the corpus order. Both views share them, so their axes read alike."""
    kept: set[str] = set()
    for view in VIEWS:
        visible = _visible(tables.matrix_frame(summary, kind, view), config)
        kept |= set(visible.index[visible.any(axis=0).to_numpy() | visible.any(axis=1).to_numpy()])
    return [label for label in corpus_order(summary) if label in kept]


def _thresholds(config: Config) -> str:
    return f"cells above {100 * config.heatmap_display_min:g} %"


def plot_jaccard(summary: dict[str, Any], view: str, out_dir: Path, config: Config) -> pd.DataFrame:
    """Paper Fig. 5: Jaccard index of category pairs, lower triangle, cells above threshold.

    Returns the matrix as drawn: the same labels on both axes, in the order
    of every heatmap (row k and column k are one category); NaN where a cell
    is hidden.
    """
    labels = heatmap_labels(summary, "jaccard", config)
    jaccard = tables.matrix_frame(summary, "jaccard", view).reindex(index=labels, columns=labels)
    lower = np.tril(np.ones((len(labels), len(labels)), dtype=bool), k=-1)
    shown = jaccard.where(lower & _visible(jaccard.fillna(0.0), config).to_numpy(dtype=bool))
    names = [display_name(label) for label in labels]
    _heatmap(
        shown,
        np.zeros(shown.shape, dtype=bool),
        (names, names),
        (
            f"Jaccard index of categories, {VIEW_NAMES[view]}\n"
            f"({tables.view_traces(summary, view)}; {_thresholds(config)})",
            "Jaccard index (%)",
            "",
            "",
        ),
        config,
        out_dir,
        f"jaccard_{view}",
    )
    return shown


def plot_conditional(summary: dict[str, Any], view: str, out_dir: Path, config: Config) -> pd.DataFrame:
    """P(B | A): the share of traces with row category A that also carry column B.

    Same labels and order as the Jaccard heatmaps; hidden cells are NaN. Each
    row says on how many traces its A rests; rows of an A carried by fewer
    than ``figures_min_support`` traces are grey (their rows are listed in
    the returned frame's ``attrs["grey_rows"]``).
    """
    labels = heatmap_labels(summary, "conditional", config)
    conditional = tables.matrix_frame(summary, "conditional", view).reindex(index=labels, columns=labels)
    shown = conditional.where(_visible(conditional.fillna(0.0), config).to_numpy(dtype=bool))
    counts = summary["distributions"][view]["counts"]
    support = np.array([counts.get(label, 0.0) for label in labels], dtype=float)
    low = support < config.figures_min_support
    noun = tables.TRACE_NOUNS[view]
    _heatmap(
        shown,
        np.repeat(low[:, None], len(labels), axis=1),
        (
            [f"{display_name(a)} (n = {n:,.0f})" for a, n in zip(labels, support, strict=True)],
            [display_name(b) for b in labels],
        ),
        (
            f"P(B | A), {VIEW_NAMES[view]}\n({tables.view_traces(summary, view)}; {_thresholds(config)}; "
            f"grey: A on fewer than {counted(config.figures_min_support, noun)})",
            "P(B | A) (%)",
            "B (also carried)",
            f"A (given), n = {noun}s carrying A",
        ),
        config,
        out_dir,
        f"conditional_{view}",
    )
    shown.attrs["grey_rows"] = [label for label, is_low in zip(labels, low, strict=True) if is_low]
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


FIGURES = (
    "funnel",
    "periodicity",
    "temporality",
    "metadata",
    "stability",
    *(f"{kind}_{view}" for view in VIEWS for kind in ("jaccard", "conditional")),
)


def render_figures(
    out: Path,
    config: Config | None = None,
    summary: dict[str, Any] | None = None,
    on_drawn: Callable[[str], object] | None = None,
) -> dict[str, Any]:
    """All corpus figures of OUT/summary.json into OUT/figures/; returns each one's data.

    The figures are drawn into a folder beside and swapped in once all are
    drawn: OUT/figures/ holds the previous set or the new one, never a mix.
    `on_drawn(name)` is called after each figure (a progress bar).
    """
    config = config or Config()
    out = Path(out)
    summary = summary if summary is not None else load_summary(out)
    plots: dict[str, Callable[[Path], Any]] = {
        "funnel": partial(plot_funnel, summary),
        "periodicity": partial(plot_periodicity, summary),
        "temporality": partial(plot_temporality, summary),
        "metadata": partial(plot_metadata, summary),
        "stability": partial(plot_stability, summary),
    }
    for view in VIEWS:
        plots[f"jaccard_{view}"] = partial(plot_jaccard, summary, view, config=config)
        plots[f"conditional_{view}"] = partial(plot_conditional, summary, view, config=config)
    from mosaic.interference.figure import NAME as CONFLICTS
    from mosaic.interference.figure import matrix_of, plot_conflicts

    names = list(FIGURES)
    if matrix_of(summary) is not None:  # who slows whom (SPEC 3.11), when the run computed it
        plots[CONFLICTS] = partial(plot_conflicts, summary)
        names.insert(
            names.index("jaccard_single_run") if "jaccard_single_run" in names else len(names), CONFLICTS
        )
    drawn = {}
    with staging_folder(out, ".figures-") as staging:
        for name in names:
            drawn[name] = plots[name](staging)
            if on_drawn is not None:
                on_drawn(name)
        for name, plot in load_figures.plots(summary).items():  # SPEC 3.10, when a timeline is there
            drawn[name] = plot(staging)
        swap_in(staging, out / "figures")
    return drawn


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where not offered."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # file system or kernel without it
        return False
    raise OSError(error, os.strerror(error), str(a), str(b))


def swap_in(new: Path, target: Path) -> None:
    """Put folder `new` in place of folder `target` as a whole; `new` then holds the old set.

    Files in `target` that are not corpus figures (a timeline a user saved
    there) are kept: hard-linked into `new` before the swap.
    """
    if target.is_dir() and not target.is_symlink():
        ours = {f"{name}.{ext}" for name in FIGURES for ext in ("png", "svg")}
        for entry in target.iterdir():
            if entry.name not in ours and entry.is_file() and not (new / entry.name).exists():
                os.link(entry, new / entry.name)
        if _exchange(new, target):
            return
        old = new.with_name(new.name + ".old")
        os.rename(target, old)  # a crash between the two renames leaves the old set here
        os.rename(new, target)
        os.rename(old, new)  # the caller removes `new`, now the old set
    else:
        os.rename(new, target)  # no previous set (a non-folder `target` makes this fail)
