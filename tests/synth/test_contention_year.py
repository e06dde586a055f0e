"""The contention year and its null year: contract-5 truth, stretched logs, nothing slowed in the null."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mosaic.darshan import formats as F
from mosaic.darshan.reader import read_log
from mosaic.darshan.times import TIME_INDEX
from mosaic.synth.contention_year import CAPACITY, designs, generate_contention, phases_of, start_times
from mosaic.synth.records import FileTable

COUNT, SEED, DAYS = 500, 4, 14  # two weeks: the designed groups' few runs meet
KEYS = {"slowed", "slowdown", "by", "demand_bps", "got_bps", "group_sensitivity", "effect"}


@pytest.fixture(scope="module")
def years(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict, dict]:
    base = tmp_path_factory.mktemp("contention")
    year, null = base / "year", base / "null"
    return (
        year,
        null,
        generate_contention(year, COUNT, SEED, days=DAYS),
        generate_contention(null, COUNT, SEED, null=True, days=DAYS),
    )


def _truth(path: Path) -> list[dict]:
    return [json.loads(line) for line in open(path / "truth.jsonl")]


def test_contract_five_and_counts(years: tuple[Path, Path, dict, dict]) -> None:
    year, _, summary, _ = years
    truth = _truth(year)
    assert len(truth) == COUNT == summary["logs"]
    for t in truth:
        c = t["contention"]
        assert KEYS <= set(c) and isinstance(c["slowed"], bool) and c["slowdown"] >= 1 - 1e-9
        assert c["group_sensitivity"] in ("sensitive", "insensitive", "aggressor", "none")
        assert c["slowed"] == (c["slowdown"] > 1.001)
        assert all(set(b) == {"job_id", "share"} and 0 < b["share"] <= 1 for b in c["by"])
        if c["slowed"]:
            assert c["by"] and c["got_bps"] < c["demand_bps"]
    kinds = {t["contention"]["group_sensitivity"] for t in truth}
    assert kinds == {"sensitive", "insensitive", "aggressor", "none"}
    assert any(t["contention"]["slowed"] for t in truth)
    # Designed never-slowed groups: node-local file system, demand far below any fair share.
    for t in truth:
        if t["scenario"] in ("insensitive_node_local", "insensitive_low_demand"):
            assert not t["contention"]["slowed"]
    assert summary["jobs_without_darshan"] == round(summary["logs"] * (1 / 0.27 - 1))
    assert 0.25 < summary["invalid"] / summary["logs"] < 0.4  # evicted logs: unseen load


def test_null_year_same_logs_nothing_slowed(years: tuple[Path, Path, dict, dict]) -> None:
    year, null, _, s_null = years
    a, b = _truth(year), _truth(null)
    assert [t["file"] for t in a] == [t["file"] for t in b]
    assert not any(t["contention"]["slowed"] or t["contention"]["by"] for t in b)
    assert all(t["contention"]["slowdown"] == pytest.approx(1.0) for t in b)
    assert s_null["slowed_share"] == 0.0 and s_null["hours_bound_share"] == 0.0
    # Runs whose I/O ran as planned in both years are the same log in both (an aggressor
    # asking more than the capacity takes longer in the year even alone, not in the null).
    same = [
        (x, y)
        for x, y in zip(a, b)
        if x["valid"] and x["contention"]["io_time"] == y["contention"]["io_time"]
    ]
    assert len(same) > len(a) / 2
    assert all((year / x["file"]).read_bytes() == (null / y["file"]).read_bytes() for x, y in same[:50])


def test_a_slowed_log_carries_its_stretched_time(years: tuple[Path, Path, dict, dict]) -> None:
    year, null, _, _ = years
    pairs = [
        (x, y)
        for x, y in zip(_truth(year), _truth(null))
        if x["contention"]["slowed"]
        and x["valid"]
        and not x["file"].endswith(".gz")
        and x["params"]["format"]["version"] != "2.06"
        and x["params"]["format"]["version"] != "2.05"
    ]
    assert pairs
    x, y = pairs[0]
    slow, fast = read_log(str(year / x["file"])), read_log(str(null / y["file"]))
    assert slow.job.run_time > fast.job.run_time  # the stretched I/O pushed the end
    assert x["end"] - x["start"] == pytest.approx(x["params"]["run_time"])
    posix_s, posix_f = slow.modules[F.POSIX], fast.modules[F.POSIX]
    f_idx = TIME_INDEX[(F.POSIX, posix_s.version)][1]
    cols = [f_idx[k] for k in ("read_time", "write_time")]
    assert posix_s.fcounters[:, cols].sum() > posix_f.fcounters[:, cols].sum()
    assert x["io"]["POSIX"]["agg_time_by_slowest"] > y["io"]["POSIX"]["agg_time_by_slowest"]
    assert x["contention"]["io_time"] == pytest.approx(
        x["contention"]["slowdown"] * x["contention"]["uncontended_io_time"]
    )


def test_the_computation_before_a_phase_jitters_per_run(years: tuple[Path, Path, dict, dict]) -> None:
    """Designed groups write (or read) for 360 s after 1,620 s of computation (0.45-0.55 of
    3,600 s). Each run's computation before it is its group's times U(0.85, 1.15) (GAP_JITTER),
    its phase only uniformly stretched, so in the null year (nothing slowed) the start over the
    phase's length is 4.5 x that factor: between 3.8 and 5.2, and not one value for all runs."""
    _, null, _, _ = years
    factors = []
    for t in _truth(null):
        if not t["valid"] or not t["scenario"].startswith(("sensitive_", "insensitive_")):
            continue
        posix = read_log(str(null / t["file"])).modules[F.POSIX]
        index = F.CANONICAL_INDEX[(F.POSIX, posix.version)][1]
        start, end = (posix.fcounters[:, index[k]] for k in ("write_start", "write_end"))
        moved = start > 60  # the phase's records, not the run's first output at 0.1 s
        if moved.any():
            factors.append(start[moved].min() / (end[moved].max() - start[moved].min()) / 4.5)
    f = np.array(factors)
    assert len(f) >= 20
    assert f.min() >= 0.85 - 0.01 and f.max() <= 1.15 + 0.01  # the records sit within 1 % of the phase
    assert f.max() - f.min() > 0.15  # without the jitter: 1.0 for every run


def test_phases_are_the_union_of_record_spans() -> None:
    t = FileTable()
    t.add(np.array([t.name("/scratch/a")]), [0], bytes_written=100, write_start=10.0, write_end=20.0)
    t.add(np.array([t.name("/scratch/b")]), [1], bytes_written=50, write_start=15.0, write_end=25.0)
    t.add(np.array([t.name("/scratch/c")]), [0], bytes_read=30, read_start=40.0, read_end=41.0)
    spans, volume = phases_of(t.table(), 2)
    assert spans.tolist() == [[10.0, 25.0], [40.0, 41.0]] and volume.tolist() == [150.0, 30.0]


def test_day_and_week_cycle_and_designed_hours() -> None:
    rng = np.random.default_rng(0)
    s = start_times(rng, 200_000)
    hour, day = (s // 3600 % 24).astype(int), (s // 86_400).astype(int)
    weekday = (day + 1) % 7 < 5
    assert np.mean((hour >= 9) & (hour < 18)) > 0.5  # the day's peak
    assert np.mean(weekday) > 5 / 7  # fewer submissions at weekends
    peak = start_times(rng, 1000, (9, 17))
    h = peak // 3600 % 24
    assert ((h >= 9) & (h < 17)).all() and ((peak // 86_400 + 1) % 7 < 5).all()


def test_designed_grid() -> None:
    d = designs(CAPACITY)
    sens = [x for x in d if x.sensitivity == "sensitive"]
    assert sorted({x.effect for x in sens}) == [0.1, 0.3, 0.6, 1.0]
    assert sorted({x.runs for x in sens}) == [10, 30, 100, 300]
    assert {x.scenario.name for x in d if x.sensitivity == "aggressor"} == {
        "aggressor_n1_flood",
        "aggressor_bandwidth_hog",
        "aggressor_metadata_storm",
    }


def test_heatmap_bins_recut_after_a_warp() -> None:
    from mosaic.darshan.writer import heatmap_records
    from mosaic.synth.contention_year import _warp, _warp_heatmap

    hm = heatmap_records(["heatmap:POSIX"], [0], [1.0], [[10, 0, 0, 10]], [[0, 4, 0, 0]])
    # Time doubled: 10 B in [0, 2] s, 10 B in [6, 8] s; the 4 read bytes in [2, 4] s.
    out = _warp_heatmap(hm, lambda t: _warp(np.asarray(t) * 2.0, np.zeros(0), np.zeros(0)), 8.0)
    assert out.nbins.tolist() == [8]
    assert out.write_bins.tolist() == [5, 5, 0, 0, 0, 0, 5, 5]
    assert out.read_bins.tolist() == [0, 0, 2, 2, 0, 0, 0, 0]


def test_warp_stretches_phases_and_shifts_what_follows() -> None:
    from mosaic.synth.contention_year import _warp

    # A phase planned in [10, 20] ran in [10, 30]: after it, time is 10 s later.
    got = _warp(np.array([5.0, 10.0, 15.0, 20.0, 50.0]), np.array([10.0, 20.0]), np.array([10.0, 30.0]))
    assert got.tolist() == [5.0, 10.0, 20.0, 30.0, 60.0]


def test_pydarshan_reads_the_truths_io_time(years: tuple[Path, Path, dict, dict]) -> None:
    darshan = pytest.importorskip("darshan")
    from darshan.backend.cffi_backend import accumulate_records

    year = years[0]
    logs = [
        t
        for t in _truth(year)
        if t["valid"]
        and not t["params"]["format"]["version"].startswith("2.")
        and ".tar.gz" not in t["file"]
        # pydarshan 3.5 leaves F_META_TIME and F_MAX_*_TIME of big-endian POSIX v3 (format
        # 3.10) logs unswapped (1e-4 s reads 1.17e-90; checked on a hand-made log): not ours.
        and not t["params"]["format"]["big_endian"]
    ]
    slowed = [t for t in logs if t["contention"]["slowed"]][:3]
    for t in slowed + logs[:3]:
        report = darshan.DarshanReport(str(year / t["file"]), read_all=True)
        nprocs = report.metadata["job"]["nprocs"]
        got = accumulate_records(report.records["POSIX"].to_df(), "POSIX", nprocs).derived_metrics
        assert got.agg_time_by_slowest == pytest.approx(t["io"]["POSIX"]["agg_time_by_slowest"], rel=1e-9)
        assert got.total_bytes == t["io"]["POSIX"]["total_bytes"]


def test_cli_writes_a_contention_year(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from mosaic.synth.commands import synth

    result = CliRunner().invoke(
        synth, ["contention", str(tmp_path / "y"), "--null", "--count", "60", "--seed", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "60 logs" in result.output and "0.0 % of runs slowed" in result.output
    assert sum(1 for _ in open(tmp_path / "y" / "truth.jsonl")) == 60
    assert (tmp_path / "y" / "unseen.npz").is_file() and (tmp_path / "y" / "contention.json").is_file()
