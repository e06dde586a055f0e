"""`mosaic figures`: every figure is written, valid, and draws summary.json's numbers."""

import json
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from mosaic.cli import main
from mosaic.config import Config
from mosaic.corpus.stats import CorpusStats
from mosaic.report import figures, markdown, tables

FIGURES = [
    "funnel",
    "periodicity",
    "temporality",
    "metadata",
    "stability",
    "jaccard_single_run",
    "jaccard_all_runs",
    "conditional_single_run",
    "conditional_all_runs",
]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, summary_factory):
    """One `mosaic figures` run (drawing is the slow part), with the data each
    plotting function returned captured on the way: (out folder, summary, data)."""
    out = tmp_path_factory.mktemp("results")
    summary = summary_factory()
    (out / "summary.json").write_text(json.dumps(summary))
    drawn = {}

    def spy(*args, **kwargs):
        drawn.update(render_figures(*args, **kwargs))
        return drawn

    render_figures = figures.render_figures
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(figures, "render_figures", spy)
        result = CliRunner().invoke(main, ["figures", str(out)])
    assert result.exit_code == 0, result.output
    assert "9 figures" in result.output
    return out, summary, drawn


def test_every_figure_is_a_valid_png_and_svg(rendered):
    out, _, drawn = rendered
    assert set(drawn) == set(FIGURES)
    for name in FIGURES:
        assert (out / "figures" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert ET.parse(out / "figures" / f"{name}.svg").getroot().tag.endswith("svg")
    assert (out / "report.md").is_file()


def share(summary, view, label):
    dist = summary["distributions"][view]
    return dist["counts"][label] / dist["traces"]


def test_funnel_data(tmp_path, rendered):
    _, summary, drawn = rendered
    table = drawn["funnel"]
    assert table["stage"].tolist() == [
        "Darshan logs",
        "evicted: truncated",
        "evicted: bad job",
        "valid",
        "unique applications",
        "categorized",
    ]
    assert table["logs"].tolist() == [12, 2, 1, 9, 8, 8]
    assert table["share"].iloc[3] == pytest.approx(9 / 12)
    later = {**summary, "funnel": {**summary["funnel"], "categorize_evicted": {"timeout": 1}}}
    stages = figures.plot_funnel(later, tmp_path)["stage"].tolist()
    assert stages[-2:] == ["evicted while categorizing: timeout", "categorized"]


def test_periodicity_data(rendered):
    table = rendered[2]["periodicity"].set_index(["label", "view"])["share"]
    assert table["write_non_periodic", "single run"] == pytest.approx(6 / 8)
    assert table["write_non_periodic", "all runs"] == pytest.approx(48 / 65)  # 12 + 5 periodic runs
    assert table["write_periodic_minute", "all runs"] == pytest.approx(12 / 65)
    assert table["read_periodic_second", "single run"] == pytest.approx(1 / 8)
    assert len(table) == 2 * 5 * 2  # directions x (non-periodic + 4 magnitudes) x views


@pytest.mark.parametrize(
    "name, labels, hand_checked",
    [
        ("temporality", 2 * 9, ("read_on_start", "all runs", 55 / 65)),  # 40 + 3 + 12 runs of 65
        ("metadata", 4, ("metadata_high_spike", "single run", 3 / 8)),
    ],
)
def test_label_figures_draw_summary_shares(rendered, name, labels, hand_checked):
    _, summary, drawn = rendered
    table = drawn[name]
    assert len(table) == 2 * labels
    for row in table.itertuples():
        view = {"single run": "single_run", "all runs": "all_runs"}[row.view]
        assert row.share == pytest.approx(share(summary, view, row.label))
    label, view, expected = hand_checked
    assert table.set_index(["label", "view"]).loc[(label, view), "share"] == pytest.approx(expected)


def heatmap_cells(shown: pd.DataFrame) -> dict:
    return {(a, b): v for (a, b), v in shown.stack().dropna().items()}


def drawn_cells(rendered, kind: str, view: str) -> tuple[dict, pd.DataFrame]:
    """Visible cells of a rendered heatmap, checked against summary.json's matrix."""
    _, summary, drawn = rendered
    cells = heatmap_cells(drawn[f"{kind}_{view}"])
    source = tables.matrix_frame(summary, kind, view)
    for (a, b), value in cells.items():
        assert value == pytest.approx(source.loc[a, b]) and value > 0.01 and a != b
    return cells, source


@pytest.mark.parametrize("view", ["single_run", "all_runs"])
def test_jaccard_heatmap_shows_each_pair_above_threshold_once(rendered, view):
    cells, source = drawn_cells(rendered, "jaccard", view)
    expected = {
        frozenset((a, b)) for a in source.index for b in source.columns if a != b and source.loc[a, b] > 0.01
    }
    assert {frozenset(pair) for pair in cells} == expected
    assert len(cells) == len(expected)


def test_heatmap_threshold_both_sides(tmp_path, summary):
    """J = 1/100 exactly is hidden; 1/99 is shown."""
    stats = CorpusStats()
    stats.add(["read_on_start", "write_on_end"], 1, 1)
    stats.add(["read_on_start"], 99, 99)
    stats.add(["read_steady", "write_steady"], 1, 1)
    stats.add(["read_steady"], 98, 98)
    summary = {**summary, **stats.to_dict()}
    cells = heatmap_cells(figures.plot_jaccard(summary, "single_run", tmp_path, Config()))
    assert {frozenset(p) for p in cells} == {frozenset(("read_steady", "write_steady"))}
    conditional = heatmap_cells(figures.plot_conditional(summary, "single_run", tmp_path, Config()))
    # P(write_on_end | read_on_start) = 1/100 hidden; the reverse, 1, shown.
    assert ("write_on_end", "read_on_start") in conditional
    assert ("read_on_start", "write_on_end") not in conditional
    assert conditional[("read_steady", "write_steady")] == pytest.approx(1 / 99)


@pytest.mark.parametrize("view", ["single_run", "all_runs"])
def test_conditional_heatmap_draws_summary_values(rendered, view):
    cells, source = drawn_cells(rendered, "conditional", view)
    assert set(cells) == {
        (a, b) for a in source.index for b in source.columns if a != b and source.loc[a, b] > 0.01
    }  # every visible cell, ordered
    assert cells[("write_on_end", "read_on_start")] == pytest.approx(1.0)
    assert cells[("read_on_start", "write_on_end")] == pytest.approx(
        {"single_run": 2 / 3, "all_runs": 43 / 55}[view]
    )


def test_related_categories_sit_together():
    labels = ["a", "c", "b", "d"]
    jaccard = pd.DataFrame(np.eye(4), index=labels, columns=labels)
    jaccard.loc["a", "b"] = jaccard.loc["b", "a"] = 0.9
    jaccard.loc["c", "d"] = jaccard.loc["d", "c"] = 0.8
    order = figures.related_order(jaccard)
    assert abs(order.index("a") - order.index("b")) == 1
    assert abs(order.index("c") - order.index("d")) == 1


def test_stability_figure(tmp_path, rendered, summary_factory):
    _, summary, drawn = rendered
    assert drawn["stability"] == summary["stability"]
    assert figures.plot_stability(summary_factory(stability=None), tmp_path / "none") is None
    assert not (tmp_path / "none").exists()


def test_empty_corpus_still_renders(tmp_path, summary_factory):
    summary = {
        **summary_factory(stability=[]),
        **CorpusStats().to_dict(),
        "funnel": {"logs": 0, "evicted": {}, "evicted_total": 0, "valid": 0, "groups": 0, "categorized": 0},
    }
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    drawn = figures.render_figures(tmp_path)
    assert drawn["jaccard_single_run"].empty
    assert (drawn["periodicity"]["share"] == 0).all()
    assert (tmp_path / "figures" / "jaccard_all_runs.png").is_file()


def test_missing_summary_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(main, ["figures", str(tmp_path)])
    assert result.exit_code != 0 and "summary.json" in result.output


@pytest.mark.parametrize(
    "seconds, text",
    [(30, "30 s"), (59, "59 s"), (60, "1 min"), (1800, "30 min"), (3600, "1 h"), (43200, "12 h")],
)
def test_period_bounds_read_in_their_best_unit(seconds, text):
    assert figures._duration(seconds) == text


def test_a_figure_or_report_cut_short_leaves_the_previous_one(tmp_path, monkeypatch, summary_factory):
    """`mosaic figures` used to write in place: a run killed or out of disk mid-figure
    left a cut PNG where the previous one was. Each file is now written aside and
    renamed once complete."""
    (tmp_path / "summary.json").write_text(json.dumps(summary_factory()))
    assert CliRunner().invoke(main, ["figures", str(tmp_path)]).exit_code == 0
    funnel, report = tmp_path / "figures" / "funnel.png", tmp_path / "report.md"
    before = funnel.read_bytes(), report.read_text()

    def disk_full(self, target, **kwargs):
        with open(target, "wb") as fh:
            fh.write(b"\x89PNG half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("matplotlib.figure.Figure.savefig", disk_full)
    result = CliRunner().invoke(main, ["figures", str(tmp_path)])
    assert result.exit_code == 1 and "No space left on device" in result.output
    assert "the previous ones are kept" in result.output and "Traceback" not in result.output
    monkeypatch.undo()
    assert funnel.read_bytes() == before[0]
    assert not list(tmp_path.rglob("*.tmp")) and not list(tmp_path.glob(".figures*"))

    def cut_report(self, text, *args, **kwargs):
        with open(self, "w") as fh:
            fh.write(text[:10])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pathlib.Path.write_text", cut_report)
    with pytest.raises(OSError):
        markdown.write_report(tmp_path)
    monkeypatch.undo()
    assert report.read_text() == before[1]
    assert not list(tmp_path.rglob("*.tmp"))


def drawn_figure(monkeypatch, plot, *args):
    """Call a plotting function and keep the Figure it saved: (returned data, Figure)."""
    saved = {}
    real = figures.save_png_svg

    def keep(fig, out_dir, name):
        saved["fig"] = fig
        return real(fig, out_dir, name)

    monkeypatch.setattr(figures, "save_png_svg", keep)
    return plot(*args), saved["fig"]


def cells_as_read(fig) -> dict[tuple[str, str], str]:
    """{(row label, column label): the number written in the cell}, read off the axes as a
    reader reads them: each cell's text matched to the tick labels at its row and column."""
    ax = fig.axes[0]
    columns = {round(t.get_position()[0], 3): t.get_text() for t in ax.get_xticklabels()}
    rows = {round(t.get_position()[1], 3): t.get_text() for t in ax.get_yticklabels()}
    cells = {}
    for text in ax.texts:
        x, y = text.get_position()
        cells[rows[round(y, 3)], columns[round(x, 3)]] = text.get_text()
    return cells


# Five traces: A = read on start, B = write on end, C = metadata high spike.
# |A| = 3, |B| = 3, |C| = 2, |A & B| = 2, |B & C| = 1, |A & C| = 0:
# J(A, B) = 2 / 4, J(B, C) = 1 / 4, J(A, C) = 0 (hidden).
KNOWN_SETS = [
    (["read_on_start", "write_on_end"], 1),
    (["read_on_start", "write_on_end"], 1),
    (["read_on_start"], 1),
    (["write_on_end", "metadata_high_spike"], 1),
    (["metadata_high_spike"], 1),
]


def test_each_jaccard_cell_shows_the_index_of_its_row_and_column(tmp_path, monkeypatch, summary_factory):
    """The lower triangle used to drop its first row and last column, so row k and column k
    named different categories: a reader matching a cell to its labels read a pair offset
    by one. Now both axes carry the same labels and each cell reads as J(row, column)."""
    summary = summary_factory(KNOWN_SETS)
    shown, fig = drawn_figure(monkeypatch, figures.plot_jaccard, summary, "single_run", tmp_path, Config())
    cells = {frozenset(pair): text for pair, text in cells_as_read(fig).items()}
    assert cells == {
        frozenset(("read on start", "write on end")): "50",
        frozenset(("write on end", "metadata high spike")): "25",
    }
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [t.get_text() for t in ax.get_yticklabels()]
    assert list(shown.index) == list(shown.columns)


def test_conditional_cells_read_as_their_row_and_column(tmp_path, monkeypatch, summary_factory):
    """P(B | A) by hand: P(B | A) = 2/3, P(A | B) = 2/3, P(C | B) = 1/3, P(B | C) = 1/2."""
    summary = summary_factory(KNOWN_SETS)
    config = Config(figures_min_support=1)
    _, fig = drawn_figure(monkeypatch, figures.plot_conditional, summary, "single_run", tmp_path, config)
    a, b, c = "read on start (n = 3)", "write on end (n = 3)", "metadata high spike (n = 2)"
    assert cells_as_read(fig) == {
        (a, "write on end"): "67",
        (b, "read on start"): "67",
        (b, "metadata high spike"): "33",
        (c, "write on end"): "50",
    }


@pytest.mark.parametrize("kind", ["jaccard", "conditional"])
def test_both_views_draw_the_same_labels_in_the_same_order(rendered, kind):
    """The single-run and all-runs matrices used to be ordered each by its own clustering."""
    drawn = rendered[2]
    single, every = drawn[f"{kind}_single_run"], drawn[f"{kind}_all_runs"]
    assert list(single.index) == list(every.index) == list(single.columns) == list(every.columns)
    assert len(single.index) == 19  # every label of the summary has a visible cell in a view


def test_labels_missing_from_one_view_keep_the_common_order(tmp_path, summary):
    """A label present in one view only is blank in the other, at the same place."""
    part = summary["jaccard"]["all_runs"]
    keep = [i for i, label in enumerate(part["labels"]) if label != "read_steady"]
    summary["jaccard"]["all_runs"] = {
        "labels": [part["labels"][i] for i in keep],
        "matrix": [[part["matrix"][i][j] for j in keep] for i in keep],
    }
    single = figures.plot_jaccard(summary, "single_run", tmp_path, Config())
    every = figures.plot_jaccard(summary, "all_runs", tmp_path, Config())
    assert list(single.index) == list(every.index) and "read_steady" in every.index
    assert every.loc["read_steady"].isna().all() and every["read_steady"].isna().all()


@pytest.mark.parametrize("support, grey", [(3, False), (4, True)])
def test_conditional_rows_under_the_minimum_support_are_grey(tmp_path, summary_factory, support, grey):
    """read on start is carried by 3 traces: shown at a minimum support of 3, grey at 4."""
    summary = summary_factory(KNOWN_SETS)
    config = Config(figures_min_support=support)
    shown = figures.plot_conditional(summary, "single_run", tmp_path, config)
    assert ("read_on_start" in shown.attrs["grey_rows"]) is grey
    assert "metadata_high_spike" in shown.attrs["grey_rows"]  # 2 traces: grey at 3 and 4
    assert shown.loc["read_on_start", "write_on_end"] == pytest.approx(2 / 3)  # drawn, grey or not
    svg = (tmp_path / "conditional_single_run.svg").read_text()
    assert "read on start (n = 3)" in svg
    assert f"grey: A on fewer than {support} representatives" in svg


@pytest.mark.parametrize(
    "percent, text",
    [
        (1.4, "1.4"),
        (1.02, "1.02"),
        (1.0001, "1.0001"),
        (9.94, "9.9"),
        (9.96, "10"),
        (45.6, "46"),
        (100, "100"),
    ],
)
def test_cell_numbers_never_read_at_or_under_the_threshold(percent, text):
    """A title saying "cells above 1 %" over cells showing "1" contradicted itself."""
    assert figures.cell_text(percent, threshold=1.0) == text


def svg_texts(path) -> list[str]:
    """Every <text> of an SVG (matplotlib writes one per label with svg.fonttype 'none')."""
    ns = "{http://www.w3.org/2000/svg}"
    return ["".join(el.itertext()) for el in ET.parse(path).getroot().iter(f"{ns}text")]


def test_svg_text_is_text(rendered):
    """Text used to be drawn as glyph paths: not searchable, not selectable."""
    out = rendered[0] / "figures"
    assert "read on start" in svg_texts(out / "jaccard_single_run.svg")
    assert "Metadata load categories" in svg_texts(out / "metadata.svg")
    assert not any("<path" in t for t in svg_texts(out / "funnel.svg"))
    assert "Pre-processing funnel (1 non-log file skipped, 1 partial log kept)" in svg_texts(
        out / "funnel.svg"
    )


def test_bar_figures_give_n_one_panel_order_and_no_empty_bar_labels(rendered):
    out, _, drawn = rendered
    texts = svg_texts(out / "figures" / "periodicity.svg")
    assert "single run (n = 8 representatives)" in texts and "all runs (n = 65 runs)" in texts
    assert "0.0%" not in texts  # periodic day or more: no trace, no label
    assert "75.0%" in texts  # write non-periodic, single run: 6 of 8
    assert list(dict.fromkeys(drawn["periodicity"]["group"])) == ["read", "write"]
    assert list(dict.fromkeys(drawn["temporality"]["group"])) == ["read", "write"]
    assert figures._bar_labels([0.0, 0.04, 12.5]) == ["", "0.0%", "12.5%"]


@pytest.mark.parametrize(
    "n, noun, text",
    [(0, "non-log file", "0 non-log files"), (1, "non-log file", "1 non-log file"), (2, "run", "2 runs")],
)
def test_counted_plurals(n, noun, text):
    assert tables.counted(n, noun) == text


def test_older_summaries_name_the_non_log_files_skipped_files(tmp_path, summary):
    """summary.json called the non-log files `skipped_files` before; figures still read it."""
    funnel = {k: v for k, v in summary["funnel"].items() if k != "non_log_files"}
    old = {**summary, "funnel": {**funnel, "skipped_files": 2}}
    figures.plot_funnel(old, tmp_path)
    assert "Pre-processing funnel (2 non-log files skipped, 1 partial log kept)" in svg_texts(
        tmp_path / "funnel.svg"
    )
    assert tables.non_log_files({"non_log_files": 3}) == 3 and tables.non_log_files({}) == 0


def test_min_support_is_a_display_setting_outside_the_hash():
    """Changing what figures grey out must not invalidate stored results."""
    assert Config(figures_min_support=5).hash() == Config().hash()
    assert Config().section("display")["figures_min_support"] == 20
    with pytest.raises(ValueError, match="figures_min_support"):
        Config(figures_min_support=0)
