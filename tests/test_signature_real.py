"""Signatures (SPEC 3.12) of real runs: tests/data/darshan-logs-interference's victim,
lmp_restart (18 runs of IOR: 4 write phases 2 s apart, 24 MiB per rank per phase, 2
ranks), read with mosaic's own reader and turned into series by series_from_log."""

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from mosaic.config import DEFAULT, Config
from mosaic.darshan import formats as F
from mosaic.darshan.reader import read_log
from mosaic.series import series_from_log
from mosaic.signature import SignatureSettings, build

DATA = Path(__file__).parent / "data" / "darshan-logs-interference"
PHASE = 2 * 24 * 2**20  # bytes of one write phase: 2 ranks x 24 MiB
MAX_POINTS = DEFAULT.signature_series_max_points


@cache
def victims() -> tuple[tuple[dict, object, object], ...]:
    """(truth line, log, series) of every lmp_restart run."""
    truth = [json.loads(line) for line in (DATA / "truth.jsonl").read_text().splitlines()]
    out = []
    for row in truth:
        if row["app"] != "lmp_restart":
            continue
        log = read_log(DATA / "logs" / row["file"])
        out.append((row, log, series_from_log(log, MAX_POINTS)))
    return tuple(out)


def logged_phases(log) -> list[float]:
    """What the log says of its phases: its DXT_POSIX writes grouped by gaps over 1 s."""
    dxt = log.dxt_posix
    writes = dxt.is_write
    order = np.argsort(dxt.starts[writes])
    starts, lengths = dxt.starts[writes][order], dxt.lengths[writes][order]
    ends = np.maximum.accumulate(dxt.ends[writes][order])
    phase = np.concatenate(([0], np.cumsum(starts[1:] - ends[:-1] > 1.0)))
    return np.bincount(phase, lengths).tolist()


def test_the_logs_say_four_phases_of_48_mib():
    runs = victims()
    assert len(runs) == 18
    traced = [log for row, log, _ in runs if row["dxt"]]
    assert len(traced) == 7
    for log in traced:
        assert logged_phases(log) == [PHASE] * 4
    for _, log, series in runs:  # and every run's POSIX records: 4 phases' worth of writes
        written = log.modules[F.POSIX].canonical()["bytes_written"].sum()
        assert written == 4 * PHASE
        assert series.source == (
            "dxt" if log.dxt_posix is not None and len(log.dxt_posix.starts) else "heatmap"
        )


def check_four_phases(body: dict) -> None:
    writes = [b for b in body["bursts"] if b["direction"] == "write"]
    assert len(writes) == 4
    for burst in writes:
        assert burst["bytes"] == pytest.approx(PHASE, rel=0.05)
        assert burst["runs"] >= 0.9 * body["runs"] - 1
    starts = [b["start"] for b in writes]
    assert starts == sorted(starts)
    # 2 s apart: 3 gaps of about 2 s (plus a phase) over the unslowed run
    seconds = np.diff(starts) * body["unslowed_run_time"]
    assert ((seconds > 2.0) & (seconds < 4.0)).all()
    assert not [b for b in body["bursts"] if b["direction"] == "read"]


def test_all_18_runs_give_the_four_write_phases_with_their_bytes():
    runs = [series for _, _, series in victims()]
    built = build(runs, SignatureSettings.of(DEFAULT))
    assert built.reason is None
    body = built.body
    check_four_phases(body)
    assert body["runs"] + body["outliers"] == 18
    assert body["sources"] == ["dxt", "heatmap"]
    assert body["resolution"] == pytest.approx(0.1)  # the HEATMAP's bins, coarser than the points
    assert not body["absolute"]["agree"]  # slowed runs: 11.3-14.5 s


def test_the_slowed_runs_alone_give_them_too():
    runs = [series for row, _, series in victims() if row["slowed"]]
    assert len(runs) == 16
    check_four_phases(build(runs, SignatureSettings.of(DEFAULT)).body)


def test_the_two_unslowed_runs_give_them_with_two_runs_allowed():
    runs = [series for row, _, series in victims() if not row["slowed"]]
    assert len(runs) == 2
    assert build(runs, SignatureSettings.of(DEFAULT)).reason == (
        "2 runs stored; a signature needs 5 (signature_min_runs)"
    )
    check_four_phases(build(runs, SignatureSettings.of(Config(signature_min_runs=2))).body)


def test_heatmap_bins_alone_give_them_too():
    """The DXT runs read as their HEATMAP only: the 0.1 s bins every log has."""
    runs = []
    for _, log, series in victims():
        if series.source == "dxt":
            binned = read_log(log_path(log))
            binned.dxt_posix = None
            series = series_from_log(binned, MAX_POINTS)
        runs.append(series)
    body = build(runs, SignatureSettings.of(DEFAULT)).body
    assert body["sources"] == ["heatmap"]
    check_four_phases(body)


def log_path(log) -> Path:
    for row, known, _ in victims():
        if known is log:
            return DATA / "logs" / row["file"]
    raise KeyError(log)
