"""The assembled result object (SPEC 4)."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mosaic.analysis import categorize as categorize_module
from mosaic.analysis.categorize import analyze, categorize_trace
from mosaic.analysis.labels import ALL_LABELS
from mosaic.config import Config
from mosaic.trace import READ, WRITE
from mosaic_testing.traces import make_trace

CFG = Config()


def checkpoints(count=10, period=360.0, first=10.0, nbytes=1e8, ranks=4, direction=WRITE, duration=10.0):
    """Every rank writes its share at each checkpoint, slightly desynchronized."""
    return [
        (first + k * period + r * 0.1, first + k * period + duration + r * 0.1, nbytes / ranks, 1, direction)
        for k in range(count)
        for r in range(ranks)
    ]


def test_no_operations():
    result = categorize_trace(make_trace(), CFG)
    assert result["categories"] == [
        "read_insignificant",
        "write_insignificant",
        "metadata_insignificant_load",
    ]
    assert result["read"] == {
        "bytes": 0.0,
        "operations": 0,
        "minor_operations": 0,
        "merged_operations": 0,
        "chunks_bytes": [0, 0, 0, 0],
        "periodicity": {},
    }


def test_periodic_checkpoints_and_initial_read():
    ops = checkpoints() + [(0.0, 5.0, 5e8, 4, READ)]
    result = categorize_trace(make_trace(ops), CFG)
    assert result["categories"] == [
        "read_on_start",
        "write_steady",
        "write_periodic",
        "write_periodic_minute",
        "write_periodic_low_busy_time",
        "metadata_insignificant_load",
    ]
    write = result["write"]
    assert (write["operations"], write["merged_operations"]) == (40, 10)
    assert write["chunks_bytes"] == pytest.approx([3e8, 2e8, 3e8, 2e8])
    [op] = write["periodicity"]["meanshift"]["operations"]
    assert op["period"] == pytest.approx(360) and op["occurrences"] == 10
    assert op["busy_fraction"] == pytest.approx(10.3 / 360)
    assert write["periodicity"]["verdict"]["periodic"] is True
    assert result["read"]["periodicity"]["verdict"]["periodic"] is False


def test_result_object_fields_and_json():
    trace = make_trace(checkpoints(), meta=[(300, 0, 1.0, 1.5, 3000, 0)], partial=True, dropped_records=3)
    result = categorize_trace(trace, CFG)
    assert json.loads(json.dumps(result)) == result
    assert result["file"] == "job.darshan" and result["status"] == "ok"
    assert result["partial"] is True and result["dropped_records"] == 3
    assert result["group"] == {"key": "7:/bin/app", "runs": 1, "representative": True}
    assert result["job"]["nprocs"] == 4
    assert result["metadata"] == {
        "requests": 600.0,
        "peak_per_second": 300.0,
        "spikes": 2,
        "mean_per_second": 600 / 3600,
    }
    assert result["categories"] == sorted(result["categories"], key=ALL_LABELS.index)


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def test_result_holds_only_plain_python_values():
    ops = checkpoints() + [(0.0, 5.0, 5e8, 4, READ)]
    analysis = analyze(make_trace(ops, meta=[(300, 0, 1.0, 1.5, 3000, 0)]), CFG)
    result = categorize_module.result(analysis, CFG)
    assert {type(leaf) for leaf in _leaves(result)} <= {str, int, float, bool, type(None)}
    result["write"]["periodicity"]["meanshift"]["operations"][0]["period"] = -1.0
    result["metadata"]["spikes"] = -1
    assert analysis.write.meanshift["operations"][0]["period"] > 0  # nothing shared
    assert analysis.metadata["spikes"] >= 0


def test_group_key_follows_the_configured_grouping():
    result = categorize_trace(make_trace(), CFG.replace(group_by="cmdline"))
    assert result["group"]["key"] == "7:/bin/app -x 1"


def test_insignificant_direction_gets_no_periodicity_even_when_regular(monkeypatch):
    def fail(*args):
        raise AssertionError("no mean shift on an insignificant direction")

    monkeypatch.setattr(categorize_module.segments, "meanshift_periodicity", fail)
    result = categorize_trace(make_trace(checkpoints(nbytes=1e6)), CFG)
    assert result["categories"] == [
        "read_insignificant",
        "write_insignificant",
        "metadata_insignificant_load",
    ]
    assert result["write"]["periodicity"] == {}
    assert result["write"]["merged_operations"] == 10


def test_single_operation_trace():
    result = categorize_trace(make_trace([(1000.0, 1100.0, 2e8, 4, WRITE)]), CFG)
    assert result["categories"] == [
        "read_insignificant",
        "write_after_start_before_end",
        "metadata_insignificant_load",
    ]
    assert result["write"]["periodicity"]["meanshift"]["segments"] == 1


def test_unclassified_direction():
    # 100, 0, 50, 10 (x 10 MB) per quarter of a 400 s run
    ops = [(0, 100, 1e9, 1, READ), (200, 300, 5e8, 1, READ), (399, 399, 1e8, 1, READ)]
    result = categorize_trace(make_trace(ops, run_time=400.0), CFG)
    assert "read_unclassified" in result["categories"]


def test_analysis_keeps_every_intermediate_for_plots():
    ops = checkpoints() + [(0.0, 3600.0, 1e3, 1, WRITE)]  # a light log file: minor
    analysis = analyze(make_trace(ops, meta=[(10, 0, 1.0, 2.0, 0, 0)]), CFG)
    write = analysis.write
    assert len(write.ops) == 41 and write.merged.minor.sum() == 1
    assert len(write.merged) == 10
    assert write.meanshift["segments"]["cluster"].tolist() == [0] * 10
    assert write.fft["periodic"] in (True, False)
    assert write.chunks.sum() == pytest.approx(1e9 + 1e3)
    assert analysis.requests_per_second.shape == (3600,)


def periodicity_labels(result):
    return [label for label in result["categories"] if "periodic" in label]


def clear_of(*thresholds):
    """Values not within 1 % of a threshold: a shift's rounding (1 ulp) must not decide."""
    return lambda x: all(abs(x - t) > 0.01 * t for t in thresholds)


@settings(max_examples=25, deadline=None)
@given(
    period=st.floats(20, 2000).filter(clear_of(CFG.period_second_max, CFG.period_minute_max)),
    count=st.integers(6, 20),
    busy=st.floats(0.02, 0.9).filter(clear_of(CFG.low_busy_max, CFG.high_busy_min)),
    shift=st.floats(0, 1),
    scale=st.integers(-3, 10).map(lambda k: 2.0**k),
)
def test_periodic_labels_survive_shifting_time_and_scaling_bytes(period, count, busy, shift, scale):
    # scaling by a power of two is exact in floating point: any change is a real dependence
    ops = checkpoints(count=count, period=period, first=period, duration=busy * period, nbytes=1e9)
    run_time = period * (count + 3)
    base = categorize_trace(make_trace(ops, run_time=run_time), CFG)
    assert "write_periodic" in base["categories"]
    moved = [(s + shift * period, e + shift * period, b, r, d) for s, e, b, r, d in ops]
    moved = categorize_trace(make_trace(moved, run_time=run_time), CFG)
    assert periodicity_labels(moved) == periodicity_labels(base)
    scaled = [(s, e, b * scale, r, d) for s, e, b, r, d in ops]
    scaled = categorize_trace(make_trace(scaled, run_time=run_time), CFG)
    assert scaled["categories"] == base["categories"]


def test_one_record_per_rank_is_periodic_through_its_heatmap():
    """Every checkpoint appended to one file: one POSIX record per rank, first start to last end."""
    from mosaic.trace import HeatmapSignal

    ops = [(10.0, 3590.0, 2.5e8, 1, WRITE) for _ in range(4)]
    write = np.zeros(240)
    write[1::24] = 1e8  # 15 s bins, a checkpoint every 360 s
    heatmap = HeatmapSignal(bin_seconds=15.0, read=np.zeros(240), write=write)
    plain = categorize_trace(make_trace(ops), CFG)
    result = categorize_trace(make_trace(ops, heatmap=heatmap), CFG)
    assert "write_periodic" not in plain["categories"]
    assert plain["write"]["periodicity"]["fft"]["signal"] == "operations"
    fft = result["write"]["periodicity"]["fft"]
    assert fft["signal"] == "heatmap" and fft["period"] == pytest.approx(360.0, rel=0.01)
    assert {"write_periodic", "write_periodic_minute"} <= set(result["categories"])
    assert result["write"]["bytes"] == plain["write"]["bytes"]
