"""The conflict matrix figure and report.md table (SPEC 3.11.3), from summary.json's entry."""

import numpy as np
import pytest

from mosaic.interference import figure

KEYS = ("victim", "aggressor", "coef", "lo", "hi", "runs", "conflicting")
PAIRS = [
    dict(zip(KEYS, values))
    for values in [
        ("read_on_start", "write_periodic", 3e-9, 1e-9, 5e-9, 40, True),
        ("read_on_start", "metadata_high", -1e-10, -2e-9, 1.8e-9, 12, False),
        ("write_on_end", "write_periodic", None, None, None, 1, None),
        ("write_on_end", "metadata_high", 5e-10, -1e-10, 1.1e-9, 9, False),
    ]
]
SUMMARY = {
    "contention": {
        "status": "ok",
        "sentence": "write_periodic jobs slow read_on_start jobs.",
        "matrix": {"runs": 500, "pairs": PAIRS},
    }
}


def test_the_figure_draws_the_coefficients_per_100_mb_s_and_null_as_nan(tmp_path):
    coef = figure.plot_conflicts(SUMMARY, tmp_path)
    assert (tmp_path / "conflicts.png").stat().st_size > 0 and (tmp_path / "conflicts.svg").exists()
    assert list(coef.index) == ["read_on_start", "write_on_end"]
    assert list(coef.columns) == ["metadata_high", "write_periodic"]
    assert coef.loc["read_on_start", "write_periodic"] == pytest.approx(0.3)
    assert np.isnan(coef.loc["write_on_end", "write_periodic"])  # null, never 0


def test_no_matrix_no_figure(tmp_path):
    assert figure.plot_conflicts({"contention": {"status": "skipped"}}, tmp_path) is None
    assert figure.plot_conflicts({}, tmp_path) is None
    assert not list(tmp_path.iterdir())
    assert figure.markdown({}) == ""


def test_the_table_lists_conflicting_first():
    text = figure.markdown(SUMMARY)
    rows = [line for line in text.splitlines() if line.startswith("| read") or line.startswith("| write")]
    assert rows[0] == "| read_on_start | write_periodic | +0.300 | [+0.100, +0.500] | 40 | yes |"
    assert len(rows) == 3
    assert "1 pairs without evidence (null). write_periodic jobs slow read_on_start jobs." in text
