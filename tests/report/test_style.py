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
