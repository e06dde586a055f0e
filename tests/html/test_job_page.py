"""A job page that agrees with its labels: DLIO 2110488, whose read label came from the
HEATMAP's bursts while the FFT shown read the operations, and whose writes are 700 B of
STDIO HEATMAP bins with no timed record."""

import json
import re

import numpy as np
import pytest

from mosaic.analysis.categorize import analyze
from mosaic.config import Config
from mosaic.html.job import analysis_page
from mosaic.html.page import Assets
from mosaic.report.timeline import _direction_title, tallest_elsewhere
from mosaic.trace import read_trace

from .test_site import DATA

DLIO = (
    DATA
    / "darshan-logs"
    / "dlio_logs"
    / "snyder_python3_id3116902-2110488_12-19-66980-5572527740071444157_1.darshan"
)


@pytest.fixture(scope="module")
def dlio():
    config = Config()
    analysis = analyze(read_trace(DLIO, config), config)
    text = analysis_page(analysis, config, Assets(inline=False))
    block = re.search(r'<script type="application/json" id="mosaic-charts">(.*?)</script>', text).group(1)
    return analysis, text, {chart["id"]: chart for chart in json.loads(block)}


def test_the_label_from_the_heatmap_gets_the_heatmaps_spectrum(dlio):
    analysis, _, charts = dlio
    assert analysis.read.meanshift["source"] == "heatmap" and analysis.read.fft["signal"] == "operations"
    assert {"spectrum-read-operations", "spectrum-read-heatmap"} <= set(charts)
    period = analysis.read.verdict["period"]
    assert f"peak at {1 / period:.3g} Hz" in charts["spectrum-read-heatmap"]["title"]


def test_bytes_only_the_heatmap_holds_are_named_so_not_zero(dlio):
    analysis, _, _ = dlio
    assert len(analysis.write.ops) == 0 and analysis.trace.heatmap.write.sum() == 700
    title = _direction_title(analysis.write, analysis.trace.heatmap)
    assert title.startswith("write: no timed record; 700.0 B in the HEATMAP")  # was "write: 0.0 B"


def test_the_rank_chart_says_it_counts_records_and_facts_read_in_seconds(dlio):
    """One rank holding 14 files at once showed "14 ranks doing I/O"."""
    analysis, text, charts = dlio
    assert analysis.trace.job["nprocs"] == 1
    assert charts["ranks"]["title"].startswith("Records doing I/O: rank-file pairs")
    assert max(v for s in charts["ranks"]["series"] for v in s["values"] if v is not None) > 1
    assert re.search(r"<th>run time</th><td>[\d,]+ s \([\d.]+ min\)</td>", text)
    assert charts["ranks"]["xlabel"] == "time since job start (s)"


def test_the_tallest_bin_is_named_when_it_is_not_the_detectors_peak():
    freqs = np.array([0.1, 0.2, 0.3, 0.4])
    assert tallest_elsewhere(freqs, np.array([1.0, 3.0, 0.5, 0.2]), peak=0) == 1  # the harmonic
    assert tallest_elsewhere(freqs, np.array([3.0, 1.0, 0.5, 0.2]), peak=0) is None


def test_a_peak_of_significance_0_is_said_not_judged_in_the_table():
    """DLIO 2110531's FFT peak, 23.8 s, has no independent samples to judge it: the reasons
    say "could not be judged against chance", the table said "0.0 sigma"."""
    config = Config()
    path = DLIO.with_name("snyder_python3_id3116902-2110531_12-19-66999-7428115441680580108_1.darshan")
    analysis = analyze(read_trace(path, config), config)
    assert analysis.read.fft["significance"] == 0
    text = analysis_page(analysis, config, Assets(inline=False))
    assert "period 23.8 s, score 0.00, not judged against chance" in text
    assert "0.0 sigma" not in text


def test_the_directions_table_says_what_mean_shift_found_and_who_found_the_period(dlio):
    """The cell read "1 periodic operations in heatmap, 100.0 % of segments" and the verdict
    "periodic, 7.8 s from meanshift"."""
    analysis, text, _ = dlio
    assert analysis.read.verdict["source"] == "meanshift" and analysis.read.meanshift["share"] == 1.0
    found = "1 periodic series in the HEATMAP bursts, 100.0\u00a0% of segments in periodic clusters"
    assert f"<td>{found}</td>" in text
    assert f"<td>periodic, {analysis.read.verdict['period']:.2g} s, found by mean shift, busy " in text
    assert "periodic operations in" not in text and "from meanshift" not in text


def test_no_table_cell_splits_a_number_from_its_unit(dlio):
    """At 420 px the bytes column showed "188." above "GB": number and unit are joined by a
    no-break space in every cell."""
    _, text, _ = dlio
    cells = re.findall(r"<td>([^<]*)</td>", text.split('<section id="method">')[0])  # not docs/method.md
    assert any(re.search(r"\d\u00a0[kMG]?B", cell) for cell in cells)
    assert any(re.search(r"\d\u00a0%", cell) for cell in cells)
    # values (a sentence of the method's settings table may wrap where it likes)
    assert [cell for cell in cells if re.match(r"[\d.,]+ (?:[kMGTP]?B|%)", cell)] == []


def test_a_partial_log_says_so_with_a_link_to_the_method():
    """ "partial log: yes ... (SPEC 2)" was plain text that nothing on the page resolved."""
    from mosaic.html.method import section_anchor

    config = Config()
    log = DATA / "darshan-logs" / "partial_data_stdio" / "partial_data_stdio.darshan"
    text = analysis_page(analyze(read_trace(log, config), config), config, Assets(inline=False))
    anchor = section_anchor("2")
    assert f'MPI-IO records stand in for lost POSIX ones (<a href="#{anchor}">SPEC 2</a>)</td>' in text
    assert f'id="{anchor}"' in text  # the method at the end of the page
