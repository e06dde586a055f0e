"""Scenarios of SPEC 3.4, 3.5 and 3.7 as amended for real logs: seeks are no metadata
requests, appended checkpoints are periodic through the heatmap's bursts, and the heavier
of two interleaved series is dominant; truth computed by hand, then scored through the
pipeline."""

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.corpus.pipeline import run
from mosaic.synth import truth
from mosaic.synth.catalog import BY_NAME
from mosaic.synth.corpus import write_scenarios
from mosaic.synth.evaluate import evaluate
from mosaic.synth.scenarios import (
    DESIGN_DTYPE,
    Irregular,
    MetadataLoad,
    Periodic,
    Phase,
    Scenario,
    build,
    resolve,
)

CFG = Config()
NEW = (
    "write_appended_few_checkpoints",
    "read_appended_epochs",
    "write_appended_continuous",
    "write_appended_two_checkpoints",
    "write_appended_random_bursts",
    "write_appended_subsecond",
    "read_seek_heavy_epochs",
    "metadata_spike_seek_heavy",
    "write_two_series_unrelated_periods",
)
NOT_PERIODIC = {label: False for label in truth.PERIODICITY}


def metadata_truth(scenario: Scenario, config: Config = CFG) -> dict:
    built = build(scenario, np.random.default_rng(0), "/scratch/x")
    rows = built.table.table()
    return truth.facts(rows, built.table.paths, built.design, built.run_time, config).metadata


EPOCHS = Periodic("read", 100.0, 0.3, 1e9, 6, shared=False, requests=500, seeks=True)


def test_seek_heavy_epochs_have_a_seek_per_request_and_no_metadata_load():
    scenario = Scenario("s", ranks=4, run_time=None, noise=False, periodic=(EPOCHS,))
    built = build(scenario, np.random.default_rng(0), "/scratch/x")
    rows = built.table.table()
    # 6 epochs x 4 ranks, one file each, opened once, 500 reads and 500 seeks.
    assert len(rows) == 24 and set(rows["opens"]) == {1}
    assert set(rows["seeks"]) == {500} and set(rows["reads"]) == {500}
    # Epochs start at 50, 150, ... 550 s; each rank opens within 2 % of its 30 s burst:
    # at most 4 opens and 4 closes a second.
    per_second = truth.requests_per_second(rows, built.run_time)
    assert per_second.max() == 4 and per_second.sum() == 48
    assert truth.facts(rows, built.table.paths, built.design, built.run_time, CFG).metadata == {
        "metadata_high_spike": False,
        "metadata_multiple_spikes": False,
        "metadata_high_density": False,
        "metadata_insignificant_load": True,
    }
    # The paper's rule: 4 opens + 2,000 seeks in the second of each epoch's opens.
    counted = truth.requests_per_second(rows, built.run_time, seeks=True)
    assert sorted(counted)[-6:] == [2004.0] * 6
    assert metadata_truth(scenario, Config(metadata_seeks=True)) == {
        "metadata_high_spike": True,
        "metadata_multiple_spikes": True,
        "metadata_high_density": False,  # 12,048 requests over 600 s: 20 a second
        "metadata_insignificant_load": False,
    }


def test_the_spike_of_opens_stays_and_the_seeks_add_none():
    # 1,000 requests/s for 0.5 s at [0.25, 0.75]: 250 opens and their 250 closes in second 0.
    scenario = Scenario(
        "c",
        ranks=4,
        run_time=None,
        noise=False,
        periodic=(EPOCHS,),
        metadata=(MetadataLoad(0.0, 0.5, 1000.0),),
    )
    assert metadata_truth(scenario) == {
        "metadata_high_spike": True,
        "metadata_multiple_spikes": False,
        "metadata_high_density": False,
        "metadata_insignificant_load": False,
    }
    assert metadata_truth(scenario, Config(metadata_seeks=True))["metadata_multiple_spikes"] is True


# --------------------------------------------------------------------------- appended files


def appended_design(count: int, period: float, direction: str = "write") -> np.ndarray:
    return np.array(
        [(direction, k * period, k * period + 1, 1e9, 0, period, 0.0, count, True) for k in range(count)],
        DESIGN_DTYPE,
    )


def bins_of(starts_and_lengths, size: int = 60, value: int = 100) -> np.ndarray:
    bins = np.zeros(size, np.int64)
    for start, length in starts_and_lengths:
        bins[start : start + length] = value
    return bins


def test_regular_bursts_are_periodic_with_the_busy_time_of_their_bins():
    # Bins of 1 s; bursts of 1 bin at 5, 15, 25, 35 s: segments 10 s (the last copies
    # the previous), busy 1/10 each.
    bins = bins_of([(5, 1), (15, 1), (25, 1), (35, 1)])
    got = truth.burst_outcomes(bins, 1.0, appended_design(4, 10.0), CFG)
    assert got == {
        "periodic": True,
        "periodic_second": True,
        "periodic_minute": False,
        "periodic_hour": False,
        "periodic_day_or_more": False,
        "periodic_low_busy_time": True,
        "periodic_high_busy_time": False,
    }
    # Bursts of 4 bins: busy 0.4, neither busy label; bins of 60 s: period 600 s, minute.
    wider = truth.burst_outcomes(
        bins_of([(5, 4), (15, 4), (25, 4), (35, 4)]), 60.0, appended_design(4, 600), CFG
    )
    assert wider["periodic_minute"] is True and wider["periodic_second"] is False
    assert wider["periodic_low_busy_time"] is False and wider["periodic_high_busy_time"] is False


def test_three_bursts_are_enough_two_are_not():
    three = truth.burst_outcomes(bins_of([(5, 9), (15, 9), (25, 9)]), 1.0, appended_design(3, 10.0), CFG)
    assert three["periodic"] is True and three["periodic_high_busy_time"] is True  # 9 of 10 s
    two = truth.burst_outcomes(bins_of([(5, 2), (35, 2)]), 1.0, appended_design(2, 30.0), CFG)
    assert two == NOT_PERIODIC


def test_bins_that_merge_or_split_the_designed_bursts_assert_nothing():
    # Four designed bursts, but the bins join the last two (no empty bin between them).
    joined = bins_of([(5, 2), (15, 2), (25, 12)])
    assert truth.burst_outcomes(joined, 1.0, appended_design(4, 10.0), CFG) == {}


@pytest.mark.parametrize(
    "late, expected_periodic",
    [
        (1, True),  # segments 10, 11, 11, 11 s: log 1.1 apart, one cluster for sure
        (2, True),  # 10 and 12 s: log 1.2, under 0.9 x the bandwidth log 1.25
        (3, None),  # 10 and 13 s: log 1.3, past it: mean shift may split them
    ],
)
def test_segments_near_the_bandwidth_apart_assert_nothing(late, expected_periodic):
    third = 25 + late
    bins = bins_of([(5, 2), (15, 2), (third, 2), (third + 10 + late, 2)])
    got = truth.burst_outcomes(bins, 1.0, appended_design(4, 10.0), CFG)
    assert got.get("periodic") is expected_periodic


@pytest.mark.parametrize("period, expected", [(0.5, NOT_PERIODIC), (0.89, NOT_PERIODIC), (1.05, {})])
def test_bursts_under_min_period_seconds_are_not_periodic(period, expected):
    bins = bins_of([(5 * k, 2) for k in range(10)], 60)
    assert truth.burst_outcomes(bins, 0.1, appended_design(10, period), CFG) == expected


def test_designs_without_a_period_are_not_periodic_whatever_the_bins():
    steady = appended_design(1, 0.0)
    assert truth.burst_outcomes(bins_of([(3, 50)]), 1.0, steady, CFG) == NOT_PERIODIC
    random = appended_design(5, 0.0)  # irregular bursts: design rows without a period
    assert (
        truth.burst_outcomes(bins_of([(2, 3), (9, 1), (30, 5), (41, 2), (50, 3)]), 1.0, random, CFG)
        == NOT_PERIODIC
    )


def test_a_steady_append_and_random_appends_fill_the_bins_of_their_bursts():
    scenario = Scenario(
        "a",
        ranks=3,
        run_time=100.0,
        noise=False,
        phases=(Phase("write", 0.1, 0.8, 3000.0, append=True),),
        irregular=(Irregular("read", 4, (1e3, 1e4), (2, 5), append=True),),
    )
    built = build(scenario, np.random.default_rng(1), "/scratch/x")
    rows = built.table.table()
    assert len(rows) == 6 and len(set(rows["name"])) == 2  # one file per direction, a record per rank
    hm = built.heatmap
    assert hm.bin_seconds.tolist() == [0.2] * 3  # 100 s / 0.1 s > 512 bins
    write = hm.write_bins.reshape(3, -1)
    assert write.sum(axis=1).tolist() == [1000] * 3
    busy = np.flatnonzero(write.sum(axis=0))
    assert (busy.min(), busy.max(), len(busy)) == (50, 449, 400)  # [10, 90] s, every bin
    read = hm.read_bins.reshape(3, -1)
    assert read.sum() == rows["bytes_read"].sum()
    starts = built.design["start"][built.design["direction"] == "read"]
    first_bins = np.flatnonzero(np.diff((read.sum(axis=0) > 0).astype(int), prepend=0) == 1)
    assert len(first_bins) <= 4 and first_bins[0] >= int(starts.min() / 0.2)


def test_truth_of_an_appended_log_comes_from_its_heatmap():
    scenario = Scenario(
        "f",
        ranks=2,
        run_time=None,
        noise=False,
        periodic=(Periodic("write", 100.0, 0.25, 1e9, 3, offset=0.5, append=True),),
    )
    built = build(scenario, np.random.default_rng(0), "/scratch/x")
    # Bursts [50, 75], [150, 175], [250, 275] s; run 300 s, bins of 0.8 s.
    assert built.run_time == 300.0 and built.heatmap.bin_seconds[0] == pytest.approx(0.8)
    rows = built.table.table()
    facts = truth.facts(rows, built.table.paths, built.design, 300.0, CFG, heatmap=built.heatmap)
    # Bins 62-93, 187-218, 312-343 (the edge bins keep a part): 32 bins of 0.8 s every
    # 125 bins, busy 25.6 / 100 = 0.256: neither busy label is clear.
    assert facts.periodic["write"] == {
        "periodic": True,
        "periodic_second": False,
        "periodic_minute": True,
        "periodic_hour": False,
        "periodic_day_or_more": False,
        "periodic_high_busy_time": False,
    }
    assert truth.facts(rows, built.table.paths, built.design, 300.0, CFG).periodic["write"] == {}


# --------------------------------------------------------------------------- two series


def series(start: float, period: float, length: float, count: int, nbytes: float, component: int):
    return [
        (
            "write",
            start + k * period,
            start + k * period + length,
            nbytes,
            component,
            period,
            0.0,
            count,
            False,
        )
        for k in range(count)
    ]


@pytest.mark.parametrize(
    "heavy_start, low_busy",
    [
        (50.0, True),  # heavy burst 3 s before the next small one: cut busy 0.1, own 0.003
        (52.0, None),  # 1 s before it: cut busy 0.3, own 0.003, two answers: not asserted
    ],
)
def test_the_heavier_series_is_dominant_whatever_interleaves(heavy_start, low_busy):
    # 50 small writes of 20 MB every 10 s and 5 checkpoints of 1 GB every 100 s.
    design = np.array(
        series(3.0, 10.0, 0.5, 50, 2e7, 0) + series(heavy_start, 100.0, 0.3, 5, 1e9, 1), DESIGN_DTYPE
    )
    got = truth.periodicity_outcomes(design, 503.0, CFG)
    assert got["periodic"] is True and got["periodic_minute"] is True and got["periodic_second"] is False
    assert got.get("periodic_low_busy_time") is low_busy and got["periodic_high_busy_time"] is False


# --------------------------------------------------------------------------- the pipeline


def test_pipeline_meets_the_truth_of_every_new_scenario(tmp_path):
    write_scenarios(tmp_path / "logs", 1, scenarios=tuple(BY_NAME[name] for name in NEW))
    run([str(tmp_path / "logs")], tmp_path / "out", CFG, workers=0)
    scores = evaluate(tmp_path / "out", tmp_path / "logs" / "truth.jsonl")
    assert scores["traces"]["scored"] == len(NEW) and scores["traces"]["accuracy"] == 1.0


def test_epochs_read_from_one_file_are_in_the_read_bins_only():
    rng = np.random.default_rng(3)
    built = build(resolve(BY_NAME["read_appended_epochs"], rng), rng, "/scratch/x")
    rows = built.table.table()
    paths = np.array(built.table.paths)[rows["name"]]
    dataset = rows[np.char.endswith(paths.astype(str), "read_series0.log")]
    assert len(dataset) == built.nprocs and len(rows) == built.nprocs + 5  # + libraries, deck, stdout
    assert built.heatmap.read_bins.sum() == dataset["bytes_read"].sum()
    assert not built.heatmap.write_bins.any()


def test_a_heavy_series_split_into_several_clusters_is_still_dominant(tmp_path):
    # 19 checkpoints of 560 MB every 47.471 s (10.6 GB) between 20 MB logs every 5.133 s
    # (3.5 GB): the checkpoints cut the logs' segments at lengths that repeat, so mean shift
    # makes clusters of 5 checkpoints (2.8 GB each) beside the logs' cluster of 158 (3.2 GB).
    scenario = Scenario(
        "two_series_split",
        ranks=4,
        run_time=None,
        noise=False,
        periodic=(
            Periodic("write", 47.471, 0.0022, 5.6e8, 19),
            Periodic("write", 5.133, 0.06, 2e7, count=0, offset=0.3),
        ),
    )
    write_scenarios(tmp_path / "logs", 1, scenarios=(scenario,))
    run([str(tmp_path / "logs")], tmp_path / "out", CFG, workers=0)
    scores = evaluate(tmp_path / "out", tmp_path / "logs" / "truth.jsonl")
    assert scores["traces"]["accuracy"] == 1.0  # write_periodic_minute, not _second
