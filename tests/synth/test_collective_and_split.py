"""Scenarios of SPEC 3.7's collective opens and SPEC 3.5's split occurrences: the records and
bins the generator writes, their truth by hand, then scored through the pipeline."""

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.corpus.pipeline import run
from mosaic.darshan import formats as F
from mosaic.synth import truth
from mosaic.synth.catalog import BY_NAME
from mosaic.synth.corpus import write_scenarios
from mosaic.synth.evaluate import evaluate
from mosaic.synth.records import FILE_DTYPE
from mosaic.synth.scenarios import DESIGN_DTYPE, Irregular, Periodic, Phase, Scenario, build

CFG = Config()
NEW = (
    "metadata_collective_open",
    "metadata_independent_open_window",
    "read_appended_epochs_split",
    "write_appended_random_split_bursts",
)
ONLY_SPIKE = {
    "metadata_high_spike": True,
    "metadata_multiple_spikes": False,
    "metadata_high_density": False,
    "metadata_insignificant_load": False,
}


def row(module, rank, opens, open_window, close_window, name=0):
    out = np.zeros(1, FILE_DTYPE)
    out["name"], out["module"], out["rank"], out["opens"] = name, module, rank, opens
    (out["open_start"], out["open_end"]), (out["close_start"], out["close_end"]) = open_window, close_window
    return out


def test_collective_view_moves_the_mpiio_opens_into_its_windows():
    """11 POSIX opens over [0, 10], closes over [0.5, 20.5]; the MPI-IO record's 10 collective
    opens at [10.25, 10.5] and closes at [20.5, 20.75]: 10 opens and closes move there."""
    rows = np.concatenate(
        [
            row(F.POSIX, -1, 11, (0.0, 10.5), (0.5, 20.75)),
            row(F.MPIIO, -1, 10, (10.25, 10.5), (20.5, 20.75)),
            row(F.POSIX, 0, 4, (0.0, 10.0), (1.0, 2.0), name=1),  # a rank's record: unchanged
        ]
    )
    view = truth.collective_view(rows)
    posix = view[view["module"] == F.POSIX]
    assert posix["opens"].tolist() == [1, 4, 10]
    assert posix[-1][["open_start", "open_end", "close_start", "close_end"]].tolist() == (
        10.25,
        10.5,
        20.5,
        20.75,
    )
    per_second = truth.requests_per_second(posix, 30.0)
    # 10 moved, and the rest's share of the second: 0.5 s of 10.5 s of opens, 1 s of 20.25 s of closes
    assert per_second[10] == pytest.approx(10 + 0.5 / 10.5 + 1 / 20.25)
    assert per_second[20] == pytest.approx(10 + 0.75 / 20.25)
    assert per_second.sum() == pytest.approx(2 * 15)


def test_an_unrecorded_mpiio_close_leaves_the_closes_in_the_posix_window():
    rows = np.concatenate(
        [row(F.POSIX, -1, 11, (0.0, 10.5), (0.5, 20.75)), row(F.MPIIO, -1, 10, (10.25, 10.5), (0.0, 0.0))]
    )
    moved = truth.collective_view(rows)[-1]
    assert (moved["opens"], moved["close_start"], moved["close_end"]) == (10, 0.5, 20.75)


def build_phase(collective: bool):
    phase = Phase("write", 0.5, 0.3, 1e10, shared=True, early_open=8.0, collective=collective)
    scenario = Scenario("s", ranks=800, run_time=1000.0, noise=False, phases=(phase,))
    return build(scenario, np.random.default_rng(0), "/x")


def test_a_collective_open_is_one_spike_and_an_independent_window_many():
    """800 ranks open the file at 500.25 s, rank 0 also at 492.25 s; they close at 800.5 s.
    Collective: 800 opens and 800 closes in one second each (high spike only). Independent:
    801 opens over 8.001 s (100/s: eight spikes), no high spike."""
    built = build_phase(True)
    rows = built.table.table()
    posix, mpiio = rows[rows["module"] == F.POSIX][0], rows[rows["module"] == F.MPIIO][0]
    assert (posix["opens"], posix["open_start"], posix["close_start"]) == (801, 492.25, 492.252)
    assert (mpiio["opens"], mpiio["open_start"], mpiio["close_start"]) == (800, 500.25, 800.5)
    facts = truth.facts(rows, built.table.paths, built.design, built.run_time, CFG)
    assert facts.metadata == ONLY_SPIKE
    alone = build_phase(False)
    rows = alone.table.table()
    assert not (rows["module"] == F.MPIIO).any()
    per_second = truth.requests_per_second(rows, alone.run_time)
    assert (per_second >= 50).sum() == 8 and per_second.max() < 250
    assert truth.facts(rows, alone.table.paths, alone.design, alone.run_time, CFG).metadata == {
        "metadata_high_spike": False,
        "metadata_multiple_spikes": True,
        "metadata_high_density": False,
        "metadata_insignificant_load": False,
    }


def test_a_split_epoch_leaves_exactly_one_empty_bin():
    """Five 20 s epochs every 40 s (0.1 s bins): the first moves 40 % of its bytes up to a bin
    edge, then one empty bin, then the rest."""
    series = Periodic("read", 40.0, 0.5, 2e9, 5, append=True, split=0.4)
    scenario = Scenario("s", ranks=4, run_time=None, noise=False, periodic=(series,))
    built = build(scenario, np.random.default_rng(0), "/x")
    bins, width = truth.heatmap_bins(built.heatmap, "read")
    edges = np.diff((bins > 0).astype(np.int8), prepend=0, append=0)
    first, after = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    assert len(first) == 6 and first[1] - after[0] == 1
    assert bins[first[0] : after[0]].sum() == pytest.approx(0.8e9, rel=1e-6)
    assert bins[first[1] : after[1]].sum() == pytest.approx(1.2e9, rel=1e-6)
    got = truth.burst_outcomes(bins, width, built.design[built.design["component"] == 0], CFG)
    assert got["periodic"] is True and got["periodic_second"] is False and got["periodic_minute"] is True


def split_design(count: int) -> np.ndarray:
    return np.array(
        [("read", 10 * k, 10 * k + 4, 1e9, 0, 10.0, 0.0, count, True) for k in range(count)], DESIGN_DTYPE
    )


def bins_of(runs, size: int = 60) -> np.ndarray:
    bins = np.zeros(size)
    for start, length, total in runs:
        bins[start : start + length] = total / length
    return bins


EPOCHS = [(15, 4, 1e9), (25, 4, 1e9), (35, 4, 1e9), (45, 4, 1e9)]


@pytest.mark.parametrize(
    "first, second, gap, expected",
    [
        (0.5e9, 0.5e9, 1, True),  # one empty bin, halves: one occurrence
        (0.5e9, 0.5e9, 2, None),  # two empty bins: two bursts for one designed: nothing asserted
        (0.7e9, 0.3e9, 1, True),  # 0.70 < 0.8 x (1 - 0.1): clearly a part
        (0.78e9, 0.3e9, 1, None),  # 0.78: within the margin of the 0.8 GB edge
        (0.85e9, 0.3e9, 1, None),  # a whole occurrence and another burst: not one designed burst
    ],
)
def test_split_occurrences_from_the_bins(first, second, gap, expected):
    runs = [(3, 2, first), (5 + gap, 2, second)] + EPOCHS
    got = truth.burst_outcomes(bins_of(runs), 1.0, split_design(5), CFG)
    assert got.get("periodic") is expected


def test_random_split_bursts_have_no_period():
    bursts = Irregular("write", 8, (1e9, 1e9), (60, 60), append=True, split=True)
    built = build(
        Scenario("s", ranks=4, run_time=3600.0, noise=False, irregular=(bursts,)),
        np.random.default_rng(1),
        "/x",
    )
    bins, width = truth.heatmap_bins(built.heatmap, "write")
    assert truth.burst_outcomes(bins, width, built.design, CFG) == {
        label: False for label in truth.PERIODICITY
    }


def test_pipeline_meets_the_truth_of_every_new_scenario(tmp_path):
    write_scenarios(tmp_path / "logs", 2, scenarios=tuple(BY_NAME[name] for name in NEW))
    run([str(tmp_path / "logs")], tmp_path / "out", CFG, workers=0)
    scores = evaluate(tmp_path / "out", tmp_path / "logs" / "truth.jsonl")
    assert scores["traces"]["scored"] == 2 * len(NEW) and scores["traces"]["accuracy"] == 1.0
