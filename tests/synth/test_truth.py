"""Ground truth computed by hand on tiny cases, both sides of every threshold."""

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.synth import truth
from mosaic.synth.records import FILE_DTYPE
from mosaic.synth.scenarios import DESIGN_DTYPE, NOISE_COMPONENT, Irregular, Phase, Scenario, build

CFG = Config()


def rows(**columns):
    n = max(len(np.atleast_1d(v)) for v in columns.values())
    out = np.zeros(n, FILE_DTYPE)
    for key, value in columns.items():
        out[key] = value
    return out


# --------------------------------------------------------------------------- temporality


def test_chunk_bytes_spread_over_the_interval():
    # 100 s run: [0, 50] covers chunks 0 and 1 evenly; an instant at 80 s is in chunk 3.
    got = truth.chunk_bytes([0.0, 80.0], [50.0, 80.0], [100.0, 7.0], 100.0)
    assert got.tolist() == [50.0, 50.0, 0.0, 7.0]


@pytest.mark.parametrize(
    "chunks,label,expected",
    [
        ([10, 0, 0, 0], "on_start", True),
        ([6.7, 1, 1, 1], "on_start", True),  # 6.7 > 2.2 x 3
        ([6.3, 1, 1, 1], "on_start", None),  # within 10 % of 2 x 3
        ([5.3, 1, 1, 1], "on_start", False),  # 5.3 < 1.8 x 3
        ([0, 0, 0, 10], "on_end", True),
        ([0, 1, 1, 1], "after_start", True),  # q0 = 0 and CV(1, 1, 1) = 0
        ([0.58, 1, 1, 1], "after_start", None),  # 0.58 vs 3 / 5 = 0.6: too close
        ([1, 1, 1, 0], "before_end", True),
        ([0, 1, 1, 0], "after_start_before_end", True),
        ([1, 1, 1, 1], "after_start_before_end", False),
        ([5, 0, 0, 5], "on_start_and_end", True),
        ([5, 0, 0, 1], "on_start_and_end", False),  # CV(5, 1) = 0.67
        ([1, 1, 1, 1], "steady", True),
        ([1, 1, 1, 1.6], "steady", None),  # CV = 0.24: too close to 0.25
        ([1, 2, 3, 4], "steady", False),  # CV = 0.447
        ([1, 0, 3, 0], "unclassified", True),
        ([10, 0, 0, 0], "unclassified", False),
    ],
)
def test_temporality_rules(chunks, label, expected):
    assert truth.temporality_outcomes(chunks, CFG)[label] is expected


# --------------------------------------------------------------------------- metadata


def test_requests_per_second_places_opens_and_closes():
    r = rows(
        opens=[100, 10, 4],
        seeks=[20, 0, 0],
        open_start=[2.25, 0.5, 5.5],
        open_end=[2.75, 2.5, 0.0],
        close_start=[3.5, 0.0, 0.0],
        close_end=[3.5, 0.0, 0.0],
    )
    got = truth.requests_per_second(r, 8.0)
    # record 0: 100 opens in second 2 (its 20 seeks are no requests), 100 closes in second 3;
    # record 1: 10 opens over [0.5, 2.5] (2.5, 5, 2.5), never closed; record 2: 4 opens at 5.5.
    assert got.tolist() == pytest.approx([2.5, 5, 102.5, 100, 0, 4, 0, 0])
    # the paper's rule: the 20 seeks join record 0's opens
    assert truth.requests_per_second(r, 8.0, seeks=True)[2] == pytest.approx(122.5)


@pytest.mark.parametrize("opens, open_end, close_start", [(1, 2.0, 6.0), (4, 6.0, 2.0)])
def test_legacy_view_spreads_a_reopened_record_over_first_open_last_close(opens, open_end, close_start):
    r = rows(
        module=[F.POSIX], opens=[opens], open_start=[2.0], open_end=[2.5], close_start=[5.0], close_end=[6.0]
    )
    view = truth.legacy_view(r)
    assert (view["open_end"][0], view["close_start"][0]) == (open_end, close_start)


def test_one_recorded_close_end_is_an_instant():
    r = rows(opens=[3], open_start=[0.0], open_end=[0.0], close_start=[0.0], close_end=[6.2])
    assert truth.requests_per_second(r, 7.0).tolist() == [3, 0, 0, 0, 0, 0, 3]


def outcomes(per_second):
    return truth.metadata_outcomes(np.asarray(per_second, float), CFG)


def test_metadata_thresholds_with_margin():
    assert outcomes([300] + [0] * 99)["metadata_high_spike"] is True
    assert outcomes([260] + [0] * 99)["metadata_high_spike"] is None
    assert outcomes([220] + [0] * 99)["metadata_high_spike"] is False
    assert outcomes([60] * 6 + [0] * 94)["metadata_multiple_spikes"] is True
    assert outcomes([60] * 5 + [0] * 95)["metadata_multiple_spikes"] is None
    assert outcomes([60] * 4 + [0] * 96)["metadata_multiple_spikes"] is False
    assert outcomes([52] * 10 + [0] * 90)["metadata_multiple_spikes"] is None  # 52 ~ 50
    dense = outcomes([60] * 100)
    assert dense["metadata_high_density"] is True and dense["metadata_insignificant_load"] is False
    assert outcomes([60] * 6 + [40] * 94)["metadata_high_density"] is False  # mean 41.2
    quiet = outcomes([10] * 50)
    assert quiet["metadata_insignificant_load"] is True
    assert all(
        quiet[k] is False
        for k in ("metadata_high_spike", "metadata_multiple_spikes", "metadata_high_density")
    )


# --------------------------------------------------------------------------- periodicity


def design(starts, length, period, count, component=1, direction="write", nbytes=1e9):
    return np.array(
        [(direction, s, s + length, nbytes, component, period, 0.0, count, False) for s in starts],
        DESIGN_DTYPE,
    )


def test_periodic_design_gives_magnitude_and_busy_time():
    got = truth.periodicity_outcomes(design(np.arange(10) * 600.0, 60.0, 600.0, 10), 6000.0, CFG)
    assert got["periodic"] is True and got["periodic_minute"] is True
    assert got["periodic_second"] is False and got["periodic_hour"] is False
    assert got["periodic_low_busy_time"] is True and got["periodic_high_busy_time"] is False


def test_period_near_a_band_edge_asserts_no_magnitude():
    got = truth.periodicity_outcomes(design(np.arange(10) * 28.0, 5.0, 28.0, 10), 280.0, CFG)
    assert got["periodic"] is True
    assert "periodic_second" not in got and "periodic_minute" not in got


def test_busy_near_threshold_asserts_nothing():
    got = truth.periodicity_outcomes(design(np.arange(10) * 100.0, 27.0, 100.0, 10), 1000.0, CFG)
    assert "periodic_low_busy_time" not in got
    assert got["periodic_high_busy_time"] is False


def test_too_few_periodic_segments_is_left_open():
    noise = np.array([("write", 0.1, 0.3, 1e6, NOISE_COMPONENT, 0.0, 0.0, 1, False)], DESIGN_DTYPE)
    # 4 bursts + 1 other segment: 80 % periodic, under the 85 % needed to assert.
    mixed = np.concatenate([noise, design(100 + np.arange(4) * 600.0, 60.0, 600.0, 4)])
    assert truth.periodicity_outcomes(mixed, 3000.0, CFG) == {}
    single = np.array([("write", 0.0, 50.0, 1e9, 0, 0.0, 0.0, 1, False)], DESIGN_DTYPE)
    assert set(truth.periodicity_outcomes(single, 100.0, CFG).values()) == {False}


def test_bursts_closer_than_the_neighbour_gap_merge_into_one_operation():
    # 20 bursts of 3 s every 5 s: gaps of 2 s < 0.1 % of a 3000 s run (3 s): one operation.
    bursts = design(np.arange(20) * 5.0, 3.0, 5.0, 20)
    assert truth.periodicity_outcomes(bursts, 3000.0, CFG) == {}
    assert truth.periodicity_outcomes(bursts, 1000.0, CFG)["periodic"] is True  # 1 s limit


# --------------------------------------------------------------------------- one log


def test_expected_labels_of_a_tiny_scenario():
    scenario = Scenario(
        "tiny", ranks=4, run_time=1000.0, noise=False, phases=(Phase("write", 0.0, 0.12, 1e10, shared=True),)
    )
    built = build(scenario, np.random.default_rng(0), "/scratch/x")
    rows_ = built.table.table()
    assert len(rows_) == 1 and rows_["rank"][0] == -1 and rows_["opens"][0] == 4
    assert rows_["bytes_written"][0] == 10**10
    assert rows_["write_start"][0] == 0.0 and rows_["write_end"][0] == 120.0
    fam = truth.expected(rows_, built.table.paths, built.design, built.run_time, CFG)
    assert fam["write_temporality"]["must"] == ["write_on_start"]
    assert "write_steady" in fam["write_temporality"]["must_not"]
    assert fam["read_temporality"]["must"] == ["read_insignificant"]
    assert fam["write_periodicity"]["must"] == [] and "write_periodic" in fam["write_periodicity"]["must_not"]
    # 4 opens at 0 s, 4 closes at 120 s: no metadata load.
    assert fam["metadata"]["must"] == ["metadata_insignificant_load"]


def test_pseudo_files_and_excluded_prefixes_are_not_counted():
    r = rows(name=[0, 1, 2], bytes_written=[5e8, 5e8, 5e8], write_end=[10, 10, 10])
    kept = truth.kept_rows(r, ["<STDOUT>", "/proc/self/x", "/scratch/a"], CFG)
    assert kept["name"].tolist() == [2]


def test_near_threshold_volume_asserts_nothing():
    scenario = Scenario(
        "edge", ranks=2, run_time=100.0, noise=False, phases=(Phase("write", 0.0, 1.0, 1.05e8, shared=True),)
    )
    built = build(scenario, np.random.default_rng(0), "/scratch/x")
    fam = truth.expected(built.table.table(), built.table.paths, built.design, 100.0, CFG)
    assert fam["write_temporality"] == {"must": [], "must_not": []}
    assert fam["write_periodicity"] == {"must": [], "must_not": []}


def test_irregular_bursts_are_asserted_not_periodic():
    scenario = Scenario(
        "irr",
        ranks=4,
        run_time=7200.0,
        noise=False,
        irregular=(Irregular("write", 12, (1e8, 1e10), (5, 300)),),
    )
    built = build(scenario, np.random.default_rng(4), "/scratch/x")
    rows_ = built.table.table()
    assert len(rows_) == 12 and len(set(np.round(rows_["bytes_written"], -6))) == 12
    fam = truth.expected(rows_, built.table.paths, built.design, built.run_time, CFG)
    assert fam["write_periodicity"] == {
        "must": [],
        "must_not": [f"write_{label}" for label in truth.PERIODICITY],
    }
