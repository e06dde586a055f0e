"""Period and busy-time distributions of a year's periodic directions, from the store.

summary.json counts labels; the numbers behind the periodic ones (the
verdict's period and busy fraction of each run) are in the store's
profile rows (:mod:`mosaic.corpus.profiles`): every categorized run of
the batch (representatives, or every run with ``--all-runs``) and any run
a scheduler posted. The figures mark the thresholds that cut them into
labels (period magnitudes, low and high busy time).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import seaborn as sns
from matplotlib.ticker import MaxNLocator

from mosaic.config import Config
from mosaic.corpus import profiles
from mosaic.directions import DIRECTIONS
from mosaic.report.style import PALETTE, new_figure, save, themed

COLORS = dict(zip(DIRECTIONS, (PALETTE[0], PALETTE[1]), strict=True))
BUSY_BINS = 20  # 5 % each


def stored_numbers(db: sqlite3.Connection) -> np.ndarray:
    """Every stored run's numbers (runs x profiles.NUMBERS; NaN where not measured)."""
    packed = b"".join(
        blob for (blob,) in db.execute("SELECT numbers FROM profile_runs WHERE numbers IS NOT NULL")
    )
    flat: np.ndarray = np.frombuffer(packed, profiles.PACKED)
    return flat.reshape(-1, len(profiles.NUMBERS))


def column(values: np.ndarray, name: str) -> np.ndarray:
    """One quantity over the runs that have it."""
    picked: np.ndarray = values[:, profiles.NUMBERS.index(name)]
    measured: np.ndarray = picked[~np.isnan(picked)]
    return measured


@themed("white")
def plot_distributions(values: np.ndarray, config: Config, folder: Path) -> dict[str, dict[str, np.ndarray]]:
    """periods.png and busy.png into ``folder``; returns each direction's histogram counts."""
    periods = {d: column(values, f"{d}_period") for d in DIRECTIONS}
    positive = np.concatenate([p[p > 0] for p in periods.values()])
    low, high = (
        (np.floor(np.log10(positive.min())), np.ceil(np.log10(positive.max()))) if len(positive) else (0, 1)
    )
    period_edges = np.logspace(low, max(high, low + 1), int(4 * (max(high, low + 1) - low)) + 1)
    busy_edges = np.linspace(0.0, 1.0, BUSY_BINS + 1)
    drawn: dict[str, dict[str, np.ndarray]] = {"periods": {}, "busy": {}}
    for name, edges, xlabel, marks, logx in (
        (
            "periods",
            period_edges,
            "period (s)",
            [
                (config.period_second_max, "second | minute"),
                (config.period_minute_max, "minute | hour"),
                (config.period_hour_max, "hour | day"),
            ],
            True,
        ),
        (
            "busy",
            busy_edges,
            "share of each period spent in I/O",
            [(config.low_busy_max, "low busy time below"), (config.high_busy_min, "high busy time from")],
            False,
        ),
    ):
        fig = new_figure(figsize=(9, 3.6))
        ax = fig.subplots()
        for direction in DIRECTIONS:
            quantity = (
                periods[direction] if name == "periods" else column(values, f"{direction}_busy_fraction")
            )
            counts, _ = np.histogram(quantity, edges)
            drawn[name][direction] = counts
            ax.stairs(
                counts,
                edges,
                color=COLORS[direction],
                linewidth=1.8,
                label=f"{direction} ({len(quantity):,} runs)",
            )
        for value, text in marks:
            ax.axvline(value, color="0.4", linestyle="--", linewidth=1)
            ax.annotate(
                text,
                (value, 1),
                xycoords=("data", "axes fraction"),
                rotation=90,
                va="top",
                ha="right",
                fontsize=8,
            )
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("periodic runs (count)")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # no 0.25 of a run
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
        sns.despine(fig)
        save(fig, [folder / f"{name}.png"], 110)
    return drawn
