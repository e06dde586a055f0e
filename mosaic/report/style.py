"""One look for every figure: palettes, font sizes, resolution, and how figures are saved.

Figures are plain `matplotlib.figure.Figure` objects with their own Agg
canvas: nothing touches pyplot's figure list or the global backend, so a
notebook that imports `mosaic.report` keeps its own backend. The seaborn
theme applies only while a figure is drawn (`themed`), through
`matplotlib.rc_context`, and is undone after.

The theme and palettes are seaborn 0.13's, spelled out here: importing seaborn
imports scipy.stats (~0.6 s of every `mosaic explain` and `mosaic plot`, whose
timeline needs nothing else of seaborn). tests/report/test_style.py checks that
they still equal what seaborn gives.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import matplotlib as mpl
from cycler import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.typing import RcKeyType

from mosaic.corpus.outputs import write_atomically

# Categories: seaborn's "colorblind" palette; heatmaps: the perceptually uniform,
# colour-vision-deficiency-safe "cividis" map.
COLORBLIND = "#0173b2 #de8f05 #029e73 #d55e00 #cc78bc #ca9161 #fbafe4 #949494 #ece133 #56b4e9".split()
DEEP = "#4c72b0 #dd8452 #55a868 #c44e52 #8172b3 #937860 #da8bc3 #8c8c8c #ccb974 #64b5cd".split()
PALETTE = [to_rgb(color) for color in COLORBLIND]  # sns.color_palette("colorblind")
HEATMAP_CMAP = "cividis"

CORPUS_DPI = 150  # paper-sized corpus figures
TIMELINE_DPI = 100  # the 18 x 20 in timeline (legends right of the panels) stays near 2,000 px a side

# Font sizes (points) for text smaller than the theme's 11-12 pt.
CELL_FONT = 7  # numbers inside heatmap cells
NOTE_FONT = 8  # legends and bar labels
ASIDE_FONT = 9  # a panel's remark in place of a plot
TITLE_FONT = 10  # a timeline panel's title
SUPTITLE_FONT = 11  # a timeline's header


# sns.plotting_context("notebook")
NOTEBOOK: dict[RcKeyType, Any] = {
    "axes.linewidth": 1.25, "grid.linewidth": 1, "lines.linewidth": 1.5, "lines.markersize": 6,
    "patch.linewidth": 1, "xtick.major.width": 1.25, "ytick.major.width": 1.25, "xtick.minor.width": 1,
    "ytick.minor.width": 1, "xtick.major.size": 6, "ytick.major.size": 6, "xtick.minor.size": 4,
    "ytick.minor.size": 4, "font.size": 12, "axes.labelsize": 12, "axes.titlesize": 12,
    "xtick.labelsize": 11, "ytick.labelsize": 11, "legend.fontsize": 11, "legend.title_fontsize": 12,
}  # fmt: skip
# sns.axes_style(STYLE) of the two styles used: "white", and "ticks" (the same with ticks drawn),
# less its "image.cmap": "rocket", a map that exists only once seaborn is imported (a
# timeline's fill_between failed without it); every figure names the colour map it draws with.
AXES_STYLE: dict[RcKeyType, Any] = {
    "figure.facecolor": "white", "axes.labelcolor": ".15", "xtick.direction": "out",
    "ytick.direction": "out", "xtick.color": ".15", "ytick.color": ".15", "axes.axisbelow": True,
    "grid.linestyle": "-", "text.color": ".15", "font.family": "sans-serif",
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "lines.solid_capstyle": "round", "patch.edgecolor": "w", "patch.force_edgecolor": True,
    "xtick.top": False, "ytick.right": False, "axes.grid": False,
    "axes.facecolor": "white", "axes.edgecolor": ".15", "grid.color": ".8", "axes.spines.left": True,
    "axes.spines.bottom": True, "axes.spines.right": True, "axes.spines.top": True,
}  # fmt: skip
TICKS = {"white": False, "ticks": True}  # whether the style draws ticks on the bottom and left axes


def theme_rc(style: str) -> dict[RcKeyType, Any]:
    """seaborn's `set_theme(style=STYLE, context="notebook")` as rc parameters, without applying them."""
    return {
        **NOTEBOOK,
        **AXES_STYLE,
        "xtick.bottom": TICKS[style],
        "ytick.left": TICKS[style],
        "axes.prop_cycle": cycler(color=[to_rgb(color) for color in DEEP]),
        "svg.fonttype": "none",  # SVG text stays text (searchable, selectable), not glyph paths
    }


@contextmanager
def themed(style: str) -> Iterator[None]:
    """Draw under the seaborn STYLE; usable as a decorator. Global rc parameters are restored after."""
    with mpl.rc_context(theme_rc(style)):
        yield


def new_figure(**kwargs: Any) -> Figure:
    """A Figure drawn by its own Agg canvas (no pyplot, no backend switch)."""
    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig


def save(fig: Figure, paths: list[Path], dpi: int) -> list[Path]:
    """Write the figure to each path (format from the suffix), creating folders; each
    file replaces the previous one only once complete."""
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(
            path, partial(fig.savefig, format=path.suffix.lstrip("."), dpi=dpi, bbox_inches="tight")
        )
    return paths


def save_png_svg(fig: Figure, out_dir: Path, name: str) -> list[Path]:
    """Write OUT_DIR/NAME.png and OUT_DIR/NAME.svg (a corpus figure)."""
    return save(fig, [out_dir / f"{name}.png", out_dir / f"{name}.svg"], CORPUS_DPI)
