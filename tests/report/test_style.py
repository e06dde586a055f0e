"""Plotting leaves matplotlib's global state alone (a notebook importing mosaic.report keeps its own)."""

import subprocess
import sys

import matplotlib
import matplotlib.colors
import matplotlib.pyplot as plt

from mosaic.analysis.categorize import analyze
from mosaic.config import Config
from mosaic.report import figures
from mosaic.report.timeline import plot_timeline


def test_importing_mosaic_report_keeps_the_backend():
    """A fresh interpreter on the 'svg' backend still has it after importing every report module."""
    code = (
        "import matplotlib; matplotlib.use('svg'); "
        "import mosaic.report.figures, mosaic.report.timeline, mosaic.report.markdown; "
        "print(matplotlib.get_backend())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "svg"


def test_drawing_leaves_rc_params_color_codes_and_pyplot_alone(tmp_path, summary, trace_factory):
    before = dict(matplotlib.rcParams)
    blue = matplotlib.colors.to_rgb("b")
    figures.plot_funnel(summary, tmp_path)
    config = Config()
    plot_timeline(analyze(trace_factory(), config), config, tmp_path / "ckpt.png")
    assert dict(matplotlib.rcParams) == before
    assert matplotlib.colors.to_rgb("b") == blue  # sns.set_theme would remap the colour codes
    assert plt.get_fignums() == []  # no figure left in pyplot's registry
    assert (tmp_path / "funnel.svg").is_file() and (tmp_path / "ckpt.png").is_file()


def test_the_theme_and_palettes_are_seaborns():
    """style spells out seaborn's theme and palettes (so a timeline need not import seaborn):
    they must stay what seaborn gives."""
    import seaborn as sns
    from cycler import cycler

    from mosaic.report import style

    for name in ("white", "ticks"):
        seaborns = sns.axes_style(name, rc={"font.family": "sans-serif"})
        assert seaborns.pop("image.cmap") == "rocket"  # seaborn's own map: left out
        assert style.theme_rc(name) == {
            **sns.plotting_context("notebook"),
            **seaborns,
            "axes.prop_cycle": cycler(color=sns.color_palette("deep")),
            "svg.fonttype": "none",
        }
    assert style.PALETTE == list(sns.color_palette("colorblind"))


def test_a_job_page_and_a_timeline_import_neither_seaborn_nor_pandas():
    """`mosaic explain` and `mosaic plot` imported seaborn (and with it scipy.stats) and
    pandas, ~1 s of each start on a loaded 2-core machine, for a palette, a theme and a
    label's words."""
    code = (
        "import sys, mosaic.html.job, mosaic.html.commands, mosaic.report.commands, mosaic.report.timeline; "
        "print(sorted(m for m in ('seaborn', 'scipy.stats', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
