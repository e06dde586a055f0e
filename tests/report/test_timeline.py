"""`mosaic plot`: one trace's timeline, drawn from analyze()'s numbers."""

import numpy as np
import pytest
from click.testing import CliRunner

from helpers import SHARED_LOGS
from mosaic.analysis.categorize import analyze
from mosaic.cli import main
from mosaic.config import Config
from mosaic.report.timeline import concurrency, plot_timeline, time_unit


@pytest.fixture(scope="module")
def drawn(tmp_path_factory, trace_factory):
    config = Config()
    analysis = analyze(trace_factory(), config)
    path = tmp_path_factory.mktemp("timeline") / "ckpt.png"
    return analysis, plot_timeline(analysis, config, path), path


def test_image_is_written(drawn):
    assert drawn[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_chunks_and_merged_operations_are_the_analysis(drawn):
    analysis, data, _ = drawn
    assert data["write"]["chunks"].tolist() == [2e9, 3e9, 2e9, 3e9]  # 2, 3, 2, 3 writes per quarter
    assert data["read"]["chunks"].tolist() == [2e8, 0, 0, 0]
    assert len(data["write"]["starts"]) == 10 and data["write"]["bytes"].sum() == 1e10
    np.testing.assert_array_equal(data["write"]["starts"], analysis.write.merged.starts)


def test_periodic_operation_and_fft_peak(drawn):
    analysis, data, _ = drawn
    (operation,) = data["write"]["periodic_operations"]
    assert operation["period"] == pytest.approx(100.0)
    assert operation["occurrences"] == 10
    assert operation["busy_fraction"] == pytest.approx(0.2)
    assert data["write"]["peak_frequency"] == analysis.write.fft["frequency"]
    assert data["write"]["peak_frequency"] == pytest.approx(0.01, rel=0.05)
    peak_bin = np.argmax(data["write"]["power"])
    assert data["write"]["frequencies"][peak_bin] == pytest.approx(0.01, rel=0.05)


def test_ranks_over_time_and_metadata(drawn):
    _, data, _ = drawn
    assert data["write"]["ranks"].max() == 8 and data["write"]["ranks"][-1] == 0
    assert data["read"]["ranks"].tolist() == [4, 0]
    assert data["requests_per_second"][10] == 300
    assert data["requests_per_second"].sum() == 300
    assert data["time_unit"] == "min"


def test_concurrency_by_hand():
    times, level = concurrency(np.array([0.0, 5.0]), np.array([10.0, 15.0]), np.array([2, 3]))
    assert times.tolist() == [0, 5, 10, 15]
    assert level.tolist() == [2, 5, 3, 0]


@pytest.mark.parametrize("run_time, unit", [(119, "s"), (120, "min"), (7199, "min"),
                                            (7200, "h"), (0.5, "s")])
def test_time_unit_both_sides(run_time, unit):
    assert time_unit(run_time)[0] == unit


def test_plot_command_on_a_real_log(tmp_path):
    log = SHARED_LOGS / "e3sm_io_heatmaps_and_dxt" / "e3sm_io_heatmap_only.darshan"
    if not log.is_file():
        pytest.skip("shared logs not present")
    out = tmp_path / "e3sm.svg"
    result = CliRunner().invoke(main, ["plot", str(log), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "write_steady" in result.output
    assert out.read_text().lstrip().startswith("<?xml")


def test_plot_command_reports_an_evicted_log(tmp_path):
    bad = tmp_path / "bad.darshan"
    bad.write_bytes(b"not a darshan log")
    result = CliRunner().invoke(main, ["plot", str(bad), "-o", str(tmp_path / "x.png")])
    assert result.exit_code != 0 and "evicted" in result.output
    assert not (tmp_path / "x.png").exists()
