"""The pages' building blocks, on hand-computed values."""

import json
import re
import tarfile
from pathlib import Path

import numpy as np
import pytest

from mosaic.analysis.labels import ALL_LABELS
from mosaic.config import Config
from mosaic.html.applications import COLUMNS, Application, slug, table_files, table_rows, top_applications
from mosaic.html.distributions import plot_distributions
from mosaic.html.job import peak_grid
from mosaic.html.page import Assets, Html, Page, esc, numbers, thinned
from mosaic.logfile import log_present
from mosaic.report.timeline import concurrency


def test_text_is_escaped_and_markup_is_not():
    assert esc('<a href="x">&') == "&lt;a href=&quot;x&quot;&gt;&amp;"
    assert esc(Html("<b>bold</b>")) == "<b>bold</b>"


def test_peak_grid_keeps_each_cells_peak_and_the_level_entering_it():
    # (start, end, ranks): (0.5, 2.5, 2) and (1.0, 1.2, 3): levels 2 from 0.5, 5 from 1.0,
    # 2 from 1.2, 0 from 2.5. Cells [0,1) [1,2) [2,3): peaks 2, 5 (at 1.0, on the edge), 2.
    times, level = concurrency(np.array([0.5, 1.0]), np.array([2.5, 1.2]), [2, 3])
    edges = np.array([0.0, 1.0, 2.0, 3.0])
    assert peak_grid(times, level, edges).tolist() == [2.0, 5.0, 2.0]
    # An operation ending on the last edge: its end is outside every cell, its level is not.
    times, level = concurrency(np.array([2.0]), np.array([3.0]), [4])
    assert peak_grid(times, level, edges).tolist() == [0.0, 0.0, 4.0]
    assert peak_grid(np.array([]), np.array([]), edges).tolist() == [0.0, 0.0, 0.0]


def test_thinned_series_keep_the_peak_of_each_stretch():
    x = np.arange(10.0)
    y = np.array([1, 5, 2, 0, 0, 7, 3, 3, 3, 9], dtype=float)
    kept_x, (kept_y,), width = thinned(x, [y], 4)  # stretches of ceil(10 / 4) = 3 points
    assert kept_x.tolist() == [0.0, 3.0, 6.0, 9.0] and width == 3
    assert kept_y.tolist() == [5.0, 7.0, 3.0, 9.0]
    _, (summed,), _ = thinned(x, [y], 4, np.add)  # bytes: each stretch's sum
    assert summed.tolist() == [8.0, 7.0, 9.0, 9.0]
    same_x, (same_y,), width = thinned(x, [y], 10)  # 10 points fit: unchanged
    assert same_x.tolist() == x.tolist() and same_y.tolist() == y.tolist() and width == 1


def test_chart_numbers_round_and_turn_non_finite_values_into_gaps():
    assert numbers(np.array([1.234567, 123456.7, np.nan, np.inf])) == [1.2346, 123460.0, None, None]


def test_slugs_are_safe_file_names_distinct_for_names_that_read_alike():
    first, second = slug("1:/bin/a b"), slug("1:/bin/a_b")
    assert first != second
    for name in (first, second, slug("\u00e9t\u00e9/../x"), slug("")):
        assert re.fullmatch(r"[A-Za-z0-9._-]+\.html", name) and "/" not in name


def _app(key, runs, moved, shares=None):
    profile = (
        None
        if shares is None
        else {
            "label_shares": shares,
            "runs": runs,
            "stability": 0.75,
            "period_class": 1,
            "period_direction": "write",
            "write": {"periodic": {"period_seconds": {"median": 47.0}}},
        }
    )
    return Application(key, 1, key, runs, moved, f"{key}.darshan", profile)


def test_top_applications_by_runs_then_by_bytes_without_repeats():
    apps = [_app("a", 5, 1.0), _app("b", 5, 9.0), _app("c", 1, 100.0), _app("d", 2, 50.0)]
    assert [a.key for a in top_applications(apps, 2)] == ["a", "b", "c", "d"]  # ties by key
    assert [a.key for a in top_applications(apps, 1)] == ["a", "c"]
    assert top_applications(apps, 0) == []


def test_table_rows_carry_label_shares_as_index_percent_pairs_most_runs_first():
    apps = [_app("b", 1, 2.0), _app("a", 4, 10.0, {"read_on_start": 0.5, "write_steady": 1.0})]
    a, b = table_rows(apps, {"a": "apps/a.html"}, Config())
    assert a == [
        "a",
        1,
        4,
        10.0,
        0.75,
        47.0,
        "write, minute: 30 s-30 min (median 47 s)",
        [ALL_LABELS.index("read_on_start"), 50, ALL_LABELS.index("write_steady"), 100],
        "apps/a.html",
    ]
    assert b == ["b", 1, 1, 2.0, None, None, None, [], ""]
    assert list(COLUMNS[-2:]) == ["labels", "page"]


def test_the_table_data_comes_in_files_of_so_many_rows():
    """250,000 groups must not reach the browser at once: the first file holds the head and
    ``per_file`` rows, each further file appends its own."""
    rows = [[f"app{i}", i] for i in range(25)]
    files = table_files(rows, 3, 10)
    assert list(files) == ["applications.js", "applications-2.js", "applications-3.js"]
    head = json.loads(
        files["applications.js"].removeprefix("window.MOSAIC_APPLICATIONS = ").removesuffix(";\n")
    )
    assert (head["total"], head["pages"], head["files"]) == (
        25,
        3,
        ["applications-2.js", "applications-3.js"],
    )
    assert head["rows"] == rows[:10] and head["labels"] == list(ALL_LABELS)
    more = [
        json.loads(files[n].removeprefix("window.MOSAIC_APPLICATIONS.more(").removesuffix(");\n"))
        for n in head["files"]
    ]
    assert more == [rows[10:20], rows[20:]]
    assert list(table_files([], 0, 10)) == ["applications.js"]
    assert "</script" not in table_files([["</script><b>"]], 0, 10)["applications.js"]


def test_a_log_is_present_as_a_file_or_as_a_member_of_an_archive_still_there(tmp_path):
    log = tmp_path / "a.darshan"
    log.write_bytes(b"x")
    archive = tmp_path / "day.tar.gz"
    with tarfile.open(archive, "w:gz"):
        pass
    assert log_present(str(log)) and log_present(f"{archive}/2019/b.darshan")
    assert not log_present(str(tmp_path / "gone.darshan"))
    assert not log_present(f"{tmp_path / 'gone.tar.gz'}/b.darshan")


def test_chart_data_cannot_close_its_script_block():
    page = Page("t", Assets(inline=False))
    page.chart({"id": "c", "title": "</script><b>x</b>", "x": [0.0], "series": []})
    text = page.render()
    block = re.search(r'<script type="application/json" id="mosaic-charts">(.*?)</script>', text).group(1)
    assert json.loads(block)[0]["title"] == "</script><b>x</b>"
    assert "<b>x</b>" not in text


def test_distributions_count_each_measured_period_and_busy_fraction_once(tmp_path):
    from mosaic.corpus.profiles import NUMBERS

    values = np.full((4, len(NUMBERS)), np.nan)
    values[:, NUMBERS.index("write_period")] = [5.0, 50.0, 5000.0, np.nan]
    values[:, NUMBERS.index("write_busy_fraction")] = [0.1, 0.1, 0.99, np.nan]
    values[:, NUMBERS.index("read_period")] = [np.nan, np.nan, np.nan, 10.0]
    values[:, NUMBERS.index("read_busy_fraction")] = [np.nan, np.nan, np.nan, 0.5]
    drawn = plot_distributions(values, Config(), tmp_path)
    assert drawn["periods"]["write"].sum() == 3 and drawn["periods"]["read"].sum() == 1
    # 20 bins of 5 %: 0.1 in [0.10, 0.15), 0.99 in the last, 0.5 in [0.50, 0.55).
    assert drawn["busy"]["write"][2] == 2 and drawn["busy"]["write"][19] == 1
    assert drawn["busy"]["read"][10] == 1
    assert (tmp_path / "periods.png").stat().st_size > 0 and (tmp_path / "busy.png").stat().st_size > 0


def test_distributions_count_runs_in_whole_numbers(tmp_path, monkeypatch):
    """The year page's count axes read 0.25, 0.5, 0.75 periodic runs over bars of 1 and 2."""
    from mosaic.corpus.profiles import NUMBERS
    from mosaic.html import distributions

    figures = []
    monkeypatch.setattr(distributions, "save", lambda fig, paths, dpi: figures.append(fig))
    values = np.full((3, len(NUMBERS)), np.nan)
    values[:, NUMBERS.index("write_period")] = [50.0, 50.0, 400.0]
    values[:, NUMBERS.index("write_busy_fraction")] = [0.02, 0.02, 0.45]
    distributions.plot_distributions(values, Config(), tmp_path)
    assert len(figures) == 2
    for fig in figures:
        (ax,) = fig.axes
        low, high = ax.get_ylim()
        ticks = [t for t in ax.get_yticks() if low <= t <= high]
        assert ticks and all(float(t).is_integer() for t in ticks), ticks


@pytest.mark.parametrize("inline", [True, False])
def test_assets_inline_or_linked(inline):
    text = Page("t", Assets(inline=inline, prefix="../assets/")).render()
    assert ('rel="stylesheet"' in text) is not inline and ("<style>" in text) is inline
    assert ('href="../assets/mosaic.css"' in text) is not inline


def test_the_method_travels_with_the_package_and_every_cited_section_has_an_anchor():
    """A wheel did not install docs/method.md, which every reason cites."""
    from importlib import resources

    from mosaic.html.method import method_html, section_anchor, slug

    packaged = resources.files("mosaic.html").joinpath("method.md").read_text(encoding="utf-8")
    assert packaged == (Path(__file__).parents[2] / "docs" / "method.md").read_text(encoding="utf-8")
    assert slug("3.5 Periodicity by frequency analysis, and the final verdict") == (
        "35-periodicity-by-frequency-analysis-and-the-final-verdict"
    )
    page = method_html()
    for rule in ("2", "3.1", "3.3", "3.4", "3.5", "3.6", "3.7"):
        assert f'id="{section_anchor(rule)}"' in page, rule
    assert section_anchor("3.4.2") == section_anchor("3")  # no such section: its chapter
    assert not re.search(r'<a href="(?!#)', page)  # other documents and the web: plain text


def test_a_profile_says_how_many_runs_it_stands_on():
    """gmx_mpi's page showed "120 valid runs" beside "write periodic: 100 % of runs" of one run."""
    from mosaic.html.applications import basis_note

    app = _app("gmx", 120, 1.0, {"write_periodic": 1.0})
    one = basis_note(app, {**app.profile, "runs": 1, "basis": "representative"})
    assert "Built from 1 of 120 valid runs categorized (representative)" in one
    assert "<code>mosaic run --all-runs</code> categorizes every run" in one
    every = basis_note(app, {**app.profile, "runs": 120, "basis": "every_run"})
    assert "Built from 120 of 120 valid runs categorized (every run)." in every and "--all-runs" not in every


def _carrier(key: str, valid: int, categorized: int) -> Application:
    # as profiles.profile: an application of one valid run has every run categorized
    basis = "every_run" if categorized >= valid else "representative" if categorized == 1 else "some_runs"
    profile = {"label_shares": {"write_steady": 1.0}, "runs": categorized, "basis": basis}
    return Application(key, 1, key, valid, 1.0, f"{key}.darshan", profile)


def test_by_label_a_tie_goes_to_the_application_with_the_most_valid_runs():
    """With one categorized run each, every count is 1: the year page named the first group
    key (a 1-run application) beside applications of 120 runs, and did not say why."""
    from mosaic.html.site import _top_tables

    row = r"write steady</span></td><td>(.*?)</td><td>(\d+)</td><td>([\d,]+)</td>"
    one_each = _top_tables([_carrier("a", 1, 1), _carrier("b", 120, 1), _carrier("c", 7, 1)], {}, 2)
    assert re.search(row, one_each).groups() == ("b", "1", "120")
    assert "A tie goes to the application with the most valid runs." in one_each
    assert "so every count here is 1" in one_each
    # more runs carrying it wins over more valid runs
    every = _top_tables([_carrier("a", 5, 5), _carrier("b", 120, 4), _carrier("c", 5, 5)], {}, 2)
    assert re.search(row, every).groups() == ("a", "5", "5")
    assert "every count here is 1" not in every


def test_a_spread_of_one_run_says_one_run():
    from mosaic.html.applications import _spread

    one = {"median": 2.0, "p10": 2.0, "p90": 2.0, "runs": 1}
    assert _spread(one) == "2.0 (2.0 - 2.0, 1 run)"  # was "1 runs"
    assert _spread({**one, "runs": 1200}) == "2.0 (2.0 - 2.0, 1,200 runs)"


def test_every_figure_is_shown_at_one_scale(tmp_path):
    """The metadata figure (922 px at 150 dpi) was shown 922 px wide beside figures of 1,778 px
    shrunk to 1,000: its text twice as big. A figure's width is its inches at 100 px each."""
    from PIL import Image as PILImage

    from mosaic.html.site import _figure

    PILImage.new("RGB", (922, 670)).save(tmp_path / "metadata.png", dpi=(150, 150))
    PILImage.new("RGB", (1031, 385)).save(tmp_path / "busy.png", dpi=(110, 110))
    assert 'src="figures/metadata.png" width="615" alt="M"' in _figure(tmp_path, "metadata", "M")
    assert 'width="937"' in _figure(tmp_path, "busy", "B")  # 1,031 px at 110 dpi
    assert "width" not in _figure(tmp_path, "absent", "A")
