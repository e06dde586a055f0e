"""One look for every figure: palettes, font sizes, resolution, and how figures are saved.

Figures are plain `matplotlib.figure.Figure` objects with their own Agg
canvas: nothing touches pyplot's figure list or the global backend, so a
notebook that imports `mosaic.report` keeps its own backend. The seaborn
theme applies only while a figure is drawn (`themed`), through
`matplotlib.rc_context`, and is undone after.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import matplotlib as mpl
import seaborn as sns
from cycler import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.typing import RcKeyType

from mosaic.corpus.outputs import write_atomically

# Categories: seaborn's "colorblind" palette; heatmaps: the perceptually uniform,
# colour-vision-deficiency-safe "cividis" map.
PALETTE = sns.color_palette("colorblind")
HEATMAP_CMAP = "cividis"

CORPUS_DPI = 150  # paper-sized corpus figures
TIMELINE_DPI = 100  # the 18 x 20 in timeline (legends right of the panels) stays near 2,000 px a side

# Font sizes (points) for text smaller than the theme's 11-12 pt.
CELL_FONT = 7  # numbers inside heatmap cells
NOTE_FONT = 8  # legends and bar labels
ASIDE_FONT = 9  # a panel's remark in place of a plot
TITLE_FONT = 10  # a timeline panel's title
SUPTITLE_FONT = 11  # a timeline's header


def theme_rc(style: str) -> dict[RcKeyType, Any]:
    """seaborn's `set_theme(style=STYLE, context="notebook")` as rc parameters, without applying them."""
    return {
        **sns.plotting_context("notebook"),
        **sns.axes_style(style, rc={"font.family": "sans-serif"}),
        "axes.prop_cycle": cycler(color=sns.color_palette("deep")),
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
