"""The conflict matrix as a figure and a Markdown table (SPEC 3.11.3), from summary.json's
``contention.matrix`` (what analyse() returned at the end of ``mosaic run``).

Rows are the victim labels, columns the aggressor labels; a cell is the added slowdown
per 100 MB/s its aggressors move during the victim's I/O. A conflicting pair (lower
bound above 0) has its cell outlined and its number in bold; a pair without evidence is
hatched and shows "n/a" (null, never 0). Only labels with at least one estimated pair
are drawn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.patches import Rectangle

from mosaic.report.style import CELL_FONT, new_figure, save_png_svg, themed

PER = 1e8  # cells per 100 MB/s of aggressor load
NAME = "conflicts"


def matrix_of(summary: dict[str, Any]) -> dict[str, Any] | None:
    """summary.json's conflict matrix, or None where the run computed none."""
    contention = summary.get("contention")
    if not isinstance(contention, dict) or contention.get("status") != "ok":
        return None
    matrix = contention.get("matrix")
    return matrix if isinstance(matrix, dict) and matrix.get("pairs") else None


def frames(matrix: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(coefficient per 100 MB/s, lower bound, conflicting) as victim x aggressor frames,
    NaN where null; labels without any estimated pair are left out."""
    pairs = pd.DataFrame(matrix["pairs"])
    known = pairs[pairs["coef"].notna()]
    victims = sorted(set(known["victim"]))
    aggressors = sorted(set(known["aggressor"]))

    def table(column: str, scale: float = 1.0) -> pd.DataFrame:
        values = pairs.pivot(index="victim", columns="aggressor", values=column)
        return values.reindex(index=victims, columns=aggressors).astype(float) * scale

    return table("coef", PER), table("lo", PER), table("conflicting").fillna(0.0) > 0


@themed("white")
def plot_conflicts(summary: dict[str, Any], out_dir: Path) -> pd.DataFrame | None:
    """conflicts.png/.svg; returns the drawn coefficients (per 100 MB/s), or None when the
    summary has no matrix (nothing drawn)."""
    matrix = matrix_of(summary)
    if matrix is None:
        return None
    coef, _, conflicting = frames(matrix)
    side = 0.45 * max(coef.shape + (4,)) + 3.5
    fig = new_figure(figsize=(side + 1.5, side))
    ax = fig.subplots()
    values = coef.to_numpy()
    limit = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 1.0
    image = ax.imshow(
        np.ma.masked_invalid(values), cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="equal"
    )  # slower (red) against faster (blue), 0 white
    fig.colorbar(image, ax=ax, shrink=0.6, label="added slowdown per 100 MB/s of aggressor load")
    for (i, j), value in np.ndenumerate(values):
        if np.isnan(value):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="0.92", hatch="///", edgecolor="0.7"))
            ax.text(j, i, "n/a", ha="center", va="center", fontsize=CELL_FONT, color="0.4")
            continue
        bold = bool(conflicting.iloc[i, j])
        dark = abs(value) > 0.6 * limit  # white on the deep ends of the scale
        ax.text(j, i, f"{value:+.2f}", ha="center", va="center", fontsize=CELL_FONT + 1,
                fontweight="bold" if bold else "normal", color="white" if dark else "black")  # fmt: skip
        if bold:
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="gold", linewidth=2.5))
    ax.set_xticks(range(coef.shape[1]), coef.columns, rotation=45, ha="right")
    ax.set_yticks(range(coef.shape[0]), coef.index)
    ax.set_xlabel("aggressor label (the other jobs' categories)")
    ax.set_ylabel("victim label (the slowed job's categories)")
    ax.set_title(
        f"Who slows whom: one joint least squares over {matrix.get('runs', 0):,} runs\n"
        "outlined in gold: conflicting (simultaneous lower bound > 0); n/a: no evidence"
    )
    save_png_svg(fig, out_dir, NAME)
    return coef


def markdown(summary: dict[str, Any]) -> str:
    """report.md's table: every estimated pair, conflicting first, strongest first; None
    pairs counted below it."""
    matrix = matrix_of(summary)
    if matrix is None:
        return ""
    rows = [p for p in matrix["pairs"] if p["coef"] is not None]
    rows.sort(key=lambda p: (not p["conflicting"], -p["coef"]))
    lines = [
        "| victim | aggressor | per 100 MB/s | simultaneous interval | runs | conflicting |",
        "|---|---|---:|---|---:|---|",
    ]
    lines += [
        f"| {p['victim']} | {p['aggressor']} | {p['coef'] * PER:+.3f} | "
        f"[{p['lo'] * PER:+.3f}, {p['hi'] * PER:+.3f}] | {p['runs']:,} | "
        f"{'yes' if p['conflicting'] else 'no'} |"
        for p in rows
    ]
    missing = len(matrix["pairs"]) - len(rows)
    sentence = summary["contention"].get("sentence", "")
    return "\n".join(lines) + f"\n\n{missing:,} pairs without evidence (null). {sentence}\n"
