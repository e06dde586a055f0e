"""`mosaic plot`: one trace's timeline, drawn from analyze()'s numbers."""

import copy
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from mosaic.analysis.categorize import analyze
from mosaic.config import Config
from mosaic.report.style import new_figure
from mosaic.report.timeline import (
    _busy,
    _bytes_axis,
    _log_frequency_axis,
    concurrency,
    fft_signal,
    per_stretch,
    plot_timeline,
    spectrum_legend,
)
from mosaic.trace import HeatmapSignal, read_trace
from mosaic_testing.logs import REAL_LOGS, TEST_DATA
from mosaic_testing.written import heatmap_log, longest_run_log

MOSAIC = Path(sys.executable).with_name("mosaic")


@pytest.fixture(scope="module")
def drawn(tmp_path_factory, trace_factory):
    config = Config()
    analysis = analyze(trace_factory(), config)
    path = tmp_path_factory.mktemp("timeline") / "ckpt.png"
    return analysis, plot_timeline(analysis, config, path), path


def checkpoint_heatmap() -> HeatmapSignal:
    """The checkpointing trace's bytes in 100 bins of 10 s: 200 MB read over bins 0-9, each 1 GB
    write over [50 + 100 k, 70 + 100 k] s in bins 5 + 10 k and 6 + 10 k."""
    read, write = np.zeros(100), np.zeros(100)
    read[:10] = 2e7
    write[5::10] = write[6::10] = 5e8
    return HeatmapSignal(bin_seconds=10.0, read=read, write=write)


@pytest.fixture(scope="module")
def drawn_with_heatmap(tmp_path_factory, trace_factory):
    """The same trace with a HEATMAP, and the write FFT said to come from it."""
    config = Config()
    trace = trace_factory()
    trace.heatmap = checkpoint_heatmap()
    analysis = analyze(trace, config)
    analysis.write.fft["signal"] = "heatmap"
    path = tmp_path_factory.mktemp("timeline") / "ckpt_heatmap.png"
    return analysis, plot_timeline(analysis, config, path), path


def png_size(path) -> tuple[int, int]:
    header = path.read_bytes()[16:24]  # IHDR width, height
    return int.from_bytes(header[:4], "big"), int.from_bytes(header[4:], "big")


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
    peak_bin = np.argmax(data["write"]["amplitude"])
    assert data["write"]["frequencies"][peak_bin] == pytest.approx(0.01, rel=0.05)


def test_ranks_over_time_and_metadata(drawn):
    _, data, _ = drawn
    assert data["write"]["ranks"].max() == 8 and data["write"]["ranks"][-1] == 0
    assert data["read"]["ranks"].tolist() == [4, 0]
    assert data["requests_per_second"][10] == 300
    assert data["requests_per_second"].sum() == 300
    assert data["time_unit"] == "s"  # as the reasons and the pages' charts, whatever the run time


def test_heatmap_panel_draws_the_bins_on_the_run_time_axis(drawn, drawn_with_heatmap):
    _, data, path = drawn_with_heatmap
    for name, total in (("read", 2e8), ("write", 1e10)):
        np.testing.assert_array_equal(data[name]["heatmap_edges"], 10.0 * np.arange(101))
        assert data[name]["heatmap_bytes"].sum() == total
    assert data["write"]["heatmap_bytes"][[4, 5, 6, 7]].tolist() == [0, 5e8, 5e8, 0]
    assert "heatmap_bytes" not in drawn[1]["write"]  # no HEATMAP, no panel
    width, height = png_size(path)
    assert width == pytest.approx(png_size(drawn[2])[0], abs=20)
    assert height > png_size(drawn[2])[1] + 200  # one more row of panels


def test_spectrum_is_of_the_signal_the_fft_used(drawn, drawn_with_heatmap):
    analysis, data, _ = drawn_with_heatmap
    assert data["write"]["fft_signal"] == "heatmap"
    assert data["read"]["fft_signal"] == drawn[1]["write"]["fft_signal"] == "operations"
    # 100 bins of 10 s, zero-padded to 200 as the detector does: frequencies k / 2000 Hz;
    # the checkpoints every 100 s peak at k = 20, the bin the detector's period came from.
    np.testing.assert_allclose(data["write"]["frequencies"], np.arange(1, 101) / 2000.0)
    assert data["write"]["frequencies"][np.argmax(data["write"]["amplitude"])] == pytest.approx(0.01)
    assert data["write"]["peak_bin"] == 19
    name, bin_width, values = fft_signal(
        analysis.write, analysis.trace.heatmap, analysis.trace.run_time, Config()
    )
    assert (name, bin_width, values[5], values[4]) == ("heatmap", 10.0, 5e7, 0.0)  # bytes/s


def test_heatmap_of_a_real_log_matches_pydarshan(tmp_path):
    """A DLIO (deep learning) job, Darshan 3.4: per-file timing shows one block of reads, the
    HEATMAP its epochs. The panel's bins are pydarshan's POSIX + STDIO heatmaps, bin by bin."""
    log = (
        REAL_LOGS
        / "dlio_logs"
        / "snyder_python3_id3116902-2110483_12-19-66980-15861026832475351160_1.darshan"
    )
    if not log.is_file():
        pytest.skip("shared logs not present")
    darshan = pytest.importorskip("darshan")
    config = Config()
    data = plot_timeline(analyze(read_trace(log, config), config), config, tmp_path / "dlio.png")
    report = darshan.DarshanReport(str(log), read_all=True)
    for name in ("read", "write"):
        frames = [report.heatmaps[api].to_df(ops=[name]) for api in ("POSIX", "STDIO")]
        expected = sum(frame.to_numpy().sum(axis=0) for frame in frames)
        np.testing.assert_array_equal(data[name]["heatmap_bytes"], expected)
        assert frames[0].columns[-1].right == pytest.approx(data[name]["heatmap_edges"][-1])
    assert len(data["read"]["heatmap_bytes"]) == 170 and data["read"]["heatmap_edges"][1] == 0.8
    # 440 bytes of STDIO writes in the bins, no write operation: only the HEATMAP panel is drawn
    assert data["write"]["heatmap_bytes"].sum() == 440 and "chunks" not in data["write"]


def test_bytes_axis_headroom_and_all_zero_bins():
    ax = new_figure().subplots()
    _bytes_axis(ax, np.array([0.0, 2e9]), headroom=1.45)
    assert ax.get_ylim() == pytest.approx((0, 2.9e9))
    ax = new_figure().subplots()
    _bytes_axis(ax, np.zeros(3), headroom=1.45)
    assert ax.get_yticks().tolist() == [0] and ax.get_ylim() == pytest.approx((0, 1.45))


def test_concurrency_by_hand():
    times, level = concurrency(np.array([0.0, 5.0]), np.array([10.0, 15.0]), np.array([2, 3]))
    assert times.tolist() == [0, 5, 10, 15]
    assert level.tolist() == [2, 5, 3, 0]


def plot_command(*arguments: str) -> subprocess.CompletedProcess[str]:
    """`mosaic plot` in its own process: it bounds its own memory (RLIMIT_AS), which
    must never be the test process's."""
    return subprocess.run([str(MOSAIC), "plot", *arguments], capture_output=True, text=True, timeout=120)


def test_plot_command_on_a_real_log(tmp_path):
    log = REAL_LOGS / "e3sm_io_heatmaps_and_dxt" / "e3sm_io_heatmap_only.darshan"
    if not log.is_file():
        pytest.skip("shared logs not present")
    out = tmp_path / "e3sm.svg"
    result = plot_command(str(log), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "write_steady" in result.stdout
    assert out.read_text().lstrip().startswith("<?xml")


def test_plot_command_reports_an_evicted_log(tmp_path):
    bad = tmp_path / "bad.darshan"
    bad.write_bytes(b"not a darshan log")
    result = plot_command(str(bad), "-o", str(tmp_path / "x.png"))
    assert result.returncode != 0 and "evicted" in result.stderr
    assert not (tmp_path / "x.png").exists()


def test_plot_command_runs_under_the_workers_memory_bound(tmp_path):
    """As `mosaic categorize` (tests/test_categorize_command.py): under a 128 MB bound a
    4 M-bin HEATMAP (~200 MB more to analyse) is too_large, with no image and no
    traceback; a 4-bin log under the same bound is drawn."""
    config = tmp_path / "bound.toml"
    config.write_text(f"worker_memory_bytes = {128 << 20}\n")
    heavy, light = tmp_path / "heavy.darshan", tmp_path / "light.darshan"
    heavy.write_bytes(heatmap_log(4_000_000))
    light.write_bytes(heatmap_log(4))
    refused = plot_command(str(heavy), "-o", str(tmp_path / "heavy.png"), "--config", str(config))
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f"Error: {heavy}: evicted (too_large): needs more memory than a worker may use"
    )
    assert not (tmp_path / "heavy.png").exists()
    drawn = plot_command(str(light), "-o", str(tmp_path / "light.png"), "--config", str(config))
    assert drawn.returncode == 0, drawn.stderr
    assert (tmp_path / "light.png").stat().st_size > 0


def test_heatmap_bursts_and_their_period_are_drawn_where_mean_shift_found_them(tmp_path):
    """DLIO 2111031: one record per file spans the epochs, so the period comes from the heatmap's
    bursts; the merged panel draws no periodic strip, the heatmap panel draws the five epochs,
    and the metadata panel counts no seeks (SPEC 3.7)."""
    (log,) = sorted((REAL_LOGS / "dlio_logs").glob("*2111031_*.darshan")) or pytest.skip("no shared logs")
    config = Config()
    data = plot_timeline(analyze(read_trace(log, config), config), config, tmp_path / "dlio.png")
    read = data["read"]
    assert read["periodic_operations"] == []
    (operation,) = read["heatmap_periodic_operations"]
    assert (operation["occurrences"], operation["period"]) == (5, pytest.approx(8.0))
    assert read["bursts"]["starts"].tolist() == pytest.approx([0.0, 17.6, 37.6, 46.4, 54.4, 61.6, 69.6])
    assert read["bursts"]["minor"].sum() == 2
    assert "bursts" not in data["write"] and data["write"]["heatmap_periodic_operations"] == []
    assert "frequencies" not in data["write"]  # no write operation: no spectrum
    assert data["seeks_counted"] is False
    paper = config.replace(metadata_seeks=True)
    counted = plot_timeline(analyze(read_trace(log, paper), paper), paper, tmp_path / "paper.png")
    assert counted["seeks_counted"] is True
    assert counted["requests_per_second"].sum() > data["requests_per_second"].sum() + 18_000


def test_per_stretch_by_hand():
    per_second = np.array([0.0, 1, 5, 0, 2, 0, 0, 3, 1, 7])
    bars, width = per_stretch(per_second, 4, np.maximum)  # 10 seconds in at most 4 bars: 3 s each
    assert (bars.tolist(), width) == ([5.0, 2.0, 3.0, 7.0], 3)
    assert per_stretch(per_second, 4, np.add)[0].tolist() == [6.0, 2.0, 4.0, 7.0]  # every byte kept
    assert per_stretch(per_second, 10, np.add)[0] is per_second  # one bar a bin: as counted
    assert per_stretch(np.zeros(0), 4, np.add)[1] == 1


def test_a_year_long_run_is_drawn_as_the_peak_of_each_stretch(tmp_path):
    # 34.5 million seconds of metadata: drawn one bar a second, this took minutes of
    # matplotlib and passed the command's memory bound (a 40-day run: 46 s, then too_large).
    path = tmp_path / "year.darshan"
    path.write_bytes(longest_run_log())
    done = subprocess.run(
        [str(MOSAIC), "plot", str(path), "-o", str(tmp_path / "year.png")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert png_size(tmp_path / "year.png")[0] > 1000
    config = Config()
    data = plot_timeline(analyze(read_trace(path, config), config), config, tmp_path / "again.png")
    assert data["seconds_per_bar"] == -(-399 * 86400 // 4096)  # 8,417 s: 4,096 bars
    assert data["requests_per_second"].size == 399 * 86400


def svg_texts(path) -> list[str]:
    ns = "{http://www.w3.org/2000/svg}"
    return ["".join(el.itertext()) for el in ET.parse(path).getroot().iter(f"{ns}text")]


def test_spectrum_legend_follows_the_verdict_not_the_fft_flag(drawn):
    """e3sm: the legend said "periodic, confidence high, score 0.49" on a direction whose
    verdict is not periodic. The FFT's flag is one input of the verdict: the legend now
    says the peak, then the verdict, and a confidence only for a peak the FFT accepted."""
    analysis = drawn[0]
    direction = copy.deepcopy(analysis.write)
    assert spectrum_legend(direction) == (
        f"FFT peak: period {direction.fft['period']:.4g} s, score {direction.fft['score']:.2f}, "
        f"confidence {direction.fft['confidence']:.2f}\n"
        "verdict: periodic, period 1.67 min, found by mean shift and the FFT"
    )
    direction.verdict = {**direction.verdict, "periodic": False}  # the FFT alone said periodic
    assert spectrum_legend(direction).endswith("\nverdict: not periodic")
    direction.fft = {**direction.fft, "periodic": False, "score": 0.0, "confidence": 0.9}
    legend = spectrum_legend(direction)
    assert "confidence" not in legend and "score 0.00, under the FFT's bar" in legend


def test_e3sm_legend_and_spectrum(tmp_path):
    log = REAL_LOGS / "e3sm_io_heatmaps_and_dxt" / "e3sm_io_heatmap_only.darshan"
    config = Config()
    analysis = analyze(read_trace(log, config), config)
    data = plot_timeline(analysis, config, tmp_path / "e3sm.svg")
    assert analysis.write.fft["periodic"] and not analysis.write.verdict["periodic"]
    texts = svg_texts(tmp_path / "e3sm.svg")
    assert "verdict: not periodic" in texts
    assert not any("(periodic" in text for text in texts)
    # The insignificant read: a remark, no spectrum drawn.
    assert "insignificant: FFT not run" in texts and "frequencies" not in data["read"]
    assert "quarters of the run (chunks)" in texts
    assert any(text.startswith("/home/snyder/software/E3SM-IO") and "512 ranks," in text for text in texts)


def test_the_marked_peak_is_the_highest_of_its_harmonics(tmp_path):
    """pub_dxt_append: checkpoints every 6 s in a 74 s run. Drawn unpadded, the 6 s bin
    lost height between two bins and sat below its harmonics; the padded spectrum the
    detector read has the fundamental on top."""
    log = TEST_DATA / "darshan-logs-runtime" / "darshan-main" / "pub_dxt_append_6s.darshan"
    config = Config()
    data = plot_timeline(analyze(read_trace(log, config), config), config, tmp_path / "append.png")
    write = data["write"]
    assert write["peak_frequency"] == pytest.approx(1 / 6, rel=0.01)
    assert write["peak_bin"] == np.argmax(write["amplitude"])


def bare_trace(trace, nprocs: int, keep_ops: np.ndarray):
    """The checkpointing trace with `nprocs` ranks and only the operations `keep_ops` selects."""
    trace.job = {**trace.job, "nprocs": nprocs}
    trace.ops = trace.ops[keep_ops]
    return trace


def test_a_metadata_only_log_draws_its_metadata_panel_alone(tmp_path, trace_factory):
    """It used to draw eight empty panels around it."""
    trace = bare_trace(trace_factory(), 1, np.zeros(11, dtype=bool))
    config = Config()
    data = plot_timeline(analyze(trace, config), config, tmp_path / "meta.svg")
    assert data["directions"] == [] and "read" not in data and "write" not in data
    assert data["requests_per_second"][10] == 300
    texts = svg_texts(tmp_path / "meta.svg")
    assert any("/bin/ckpt \u2014 1 rank, run time 1,000 s (16.7 min)" in t for t in texts)  # "1 ranks" before
    assert any("no read or write operation" in t for t in texts)
    assert "time since job start (s)" in texts and "records doing I/O" not in texts


def test_a_direction_without_operations_gets_no_column(tmp_path, trace_factory):
    trace = bare_trace(trace_factory(), 8, np.arange(11) > 0)  # writes only
    config = Config()
    data = plot_timeline(analyze(trace, config), config, tmp_path / "writes.svg")
    assert data["directions"] == ["write"] and "read" not in data
    assert "records doing I/O" in svg_texts(tmp_path / "writes.svg")


@pytest.mark.parametrize(
    "fraction, text", [(0.0, "< 1 %"), (0.0049, "< 1 %"), (0.0099, "< 1 %"), (0.01, "1 %"), (0.2, "20 %")]
)
def test_busy_fraction_never_reads_zero(fraction, text):
    assert _busy(fraction) == text


def test_a_long_heatmap_is_drawn_as_the_sum_of_each_stretch(tmp_path):
    """400,000 bins of 1 byte (a 10 s run): 98 bins a bar, 4,082 bars, every byte kept."""
    path = tmp_path / "long.darshan"
    path.write_bytes(heatmap_log(400_000))
    config = Config()
    data = plot_timeline(analyze(read_trace(path, config), config), config, tmp_path / "long.png")
    write = data["write"]
    assert write["heatmap_bins_per_bar"] == 98 and len(write["heatmap_bytes"]) == 4082
    assert write["heatmap_bytes"].sum() == 400_000 and write["heatmap_bytes"][-1] == 400_000 - 4081 * 98
    assert write["heatmap_edges"][-1] == pytest.approx(10.0)
    assert data["directions"] == ["write"]  # the read bins are all zero


def test_a_4m_bin_heatmap_is_drawn_under_the_default_memory_bound(tmp_path):
    """A 312 kB log with a 4 M-bin HEATMAP: `mosaic plot` used to draw every bin and took
    54 s and 1.2 GB before too_large; drawn by stretches, it fits the 1 GiB bound."""
    log = tmp_path / "heavy.darshan"
    log.write_bytes(heatmap_log(4_000_000))
    done = plot_command(str(log), "-o", str(tmp_path / "heavy.png"))
    assert done.returncode == 0, done.stderr
    assert png_size(tmp_path / "heavy.png")[0] > 1000


@pytest.mark.parametrize(
    "low, high, ticks",
    [
        (0.0014, 0.078, ["0.002", "0.005", "0.01", "0.02", "0.05"]),  # e3sm: under two decades
        (1e-4, 0.5, ["0.0001", "0.001", "0.01", "0.1"]),  # wider: powers of ten only
    ],
)
def test_log_frequency_ticks_are_few_and_plain(low, high, ticks):
    """e3sm's spectrum (0.0014-0.078 Hz) had minor tick labels like '2x10^-3' written over
    each other; now only major ticks are labelled, as plain numbers."""
    fig = new_figure()
    ax = fig.subplots()
    _log_frequency_axis(ax, np.array([low, high]))
    ax.set_xlim(low, high)
    fig.canvas.draw()
    shown = [t for t in ax.get_xticklabels() if low <= t.get_position()[0] <= high]  # in view
    assert [t.get_text() for t in shown] == ticks
    assert not any(t.get_text() for t in ax.get_xticklabels(minor=True))


def test_the_merged_panel_counts_records_not_ranks(tmp_path, monkeypatch):
    """DLIO 2110720 is one rank reading 14 files at once: its merged panel said "ranks
    (merged, mean)" at 12, as the raw panel said "14 ranks doing I/O" (issue 46 item 14)."""
    from matplotlib.axes import Axes

    config = Config()
    path = (
        REAL_LOGS / "dlio_logs" / "snyder_python3_id3116902-2110720_12-19-66999-3374015529869773650_1.darshan"
    )
    analysis = analyze(read_trace(path, config), config)
    assert analysis.trace.job["nprocs"] == 1
    labels: list[str] = []
    original = Axes.set_ylabel
    monkeypatch.setattr(
        Axes, "set_ylabel", lambda ax, label, *a, **k: labels.append(label) or original(ax, label, *a, **k)
    )
    plot_timeline(analysis, config, tmp_path / "dlio.png")
    assert "records (merged, mean)" in labels and "records doing I/O\n(rank-file pairs)" in labels
    assert not any(label.startswith("ranks") for label in labels)
