"""The held-out generator's own SPEC formulas, checked on hand-computed cases.

The held-out corpus is only as good as its truth, so every formula it
applies (chunks, rule margins, requests per second, magnitudes, the 75 %
claim) is pinned here on both sides of its threshold.
"""

import numpy as np
import pytest

from mosaic.analysis.labels import PERIODICITY
from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.darshan.reader import read_log
from mosaic.holdout.design import NOT_PERIODIC, Design, Periodicity, Records, Series, periodic_claim
from mosaic.holdout.scenarios import SCENARIOS, series_truth
from mosaic.holdout.truth import (
    chunk_bytes,
    magnitude,
    metadata_family,
    periodicity_family,
    requests_per_second,
    significance,
    temporality_rules,
    truth_families,
)
from mosaic.holdout.writing import generate

CONFIG = Config()


def test_chunk_bytes_spreads_long_ops_and_keeps_instants_whole():
    q = chunk_bytes([0.0, 20.0, 80.0], [50.0, 30.0, 80.0], [100.0, 10.0, 10.0], 100.0)
    np.testing.assert_allclose(q, [55.0, 55.0, 0.0, 10.0])


def test_instant_at_the_run_end_counts_in_the_last_quarter():
    np.testing.assert_allclose(chunk_bytes([100.0], [100.0], [7.0], 100.0), [0, 0, 0, 7])


@pytest.mark.parametrize(
    "q, expected",
    [
        ([90, 5, 5, 0], {"on_start": True, "steady": False, "on_end": False, "unclassified": False}),
        ([10, 10, 10, 10], {"steady": True, "on_start": False, "after_start": False, "unclassified": False}),
        # on_start: 21 vs 2 x 10 is within 10 % of the threshold either way: not asserted.
        ([21, 4, 3, 3], {"on_start": None}),
        ([0, 10, 10, 10], {"after_start": True, "before_end": False, "steady": False}),
        ([50, 1, 1, 50], {"on_start_and_end": True, "after_start_before_end": False}),
        (
            [10, 0, 40, 20],
            {
                "on_start": False,
                "on_end": False,
                "after_start": False,
                "before_end": False,
                "after_start_before_end": False,
                "on_start_and_end": False,
                "steady": False,
                "unclassified": True,
            },
        ),
    ],
)
def test_temporality_rules_with_margin(q, expected):
    rules = temporality_rules(np.array(q, float), CONFIG)
    assert {k: rules[k] for k in expected} == expected


def test_significance_has_a_margin_around_100_mb():
    assert significance(1.3e8, CONFIG) is True
    assert significance(0.8e8, CONFIG) is False
    assert significance(1.05e8, CONFIG) is None
    assert significance(0.0, CONFIG) is False


def test_requests_per_second_spreads_windows_and_honours_unrecorded_closes():
    table = {
        "opens": np.array([4.0, 2.0]),
        "seeks": np.array([0.0, 0.0]),
        "open_start": np.array([0.5, 4.0]),
        "open_end": np.array([2.5, 0.0]),
        "close_start": np.array([3.2, 0.0]),
        "close_end": np.array([3.2, 0.0]),
    }
    np.testing.assert_allclose(requests_per_second(table, 5.0), [1, 2, 1, 4, 2])


def test_metadata_family_both_sides():
    five_spikes = np.array([60.0] * 5)
    assert metadata_family(five_spikes, 5.0, CONFIG) == {
        "must": ["metadata_multiple_spikes", "metadata_high_density"],
        "must_not": ["metadata_high_spike", "metadata_insignificant_load"],
    }
    # 50 per second is on the spike level: nothing about spikes is asserted.
    at_level = metadata_family(np.array([50.0] * 5), 5.0, CONFIG)
    assert "metadata_multiple_spikes" not in at_level["must"] + at_level["must_not"]
    quiet = metadata_family(np.array([300.0, 1.0, 1.0, 1.0]), 400.0, CONFIG)
    assert quiet == {
        "must": ["metadata_high_spike"],
        "must_not": ["metadata_multiple_spikes", "metadata_high_density", "metadata_insignificant_load"],
    }


@pytest.mark.parametrize(
    "period, expected",
    [
        (20.0, "periodic_second"),
        (29.0, None),
        (35.0, "periodic_minute"),
        (1700.0, None),
        (3600.0, "periodic_hour"),
        (86400.0, "periodic_day_or_more"),
    ],
)
def test_magnitude(period, expected):
    assert magnitude(period, CONFIG) == expected


@pytest.mark.parametrize(
    "counts, others, expected",
    [
        ([10], 0, True),
        ([4], 0, None),
        ([], 1, False),
        ([], 3, None),
        ([10], 2, None),
        ([20], 1, True),
        ([10, 10], 0, True),
    ],
)
def test_periodic_claim(counts, others, expected):
    assert periodic_claim(counts, others, CONFIG) is expected


def test_series_truth_measures_busy_on_merged_spans():
    spans = np.array([[0.0, 10.0], [100.0, 110.0], [200.0, 230.0]])
    s = series_truth(spans, 3e9)
    assert s.period == pytest.approx(100.0)
    assert s.busy == pytest.approx((0.1 + 0.1 + 0.3) / 3)


def test_filtered_files_leave_the_truth():
    records = Records()
    records.add("<STDOUT>", 0, write=(1.0, 2.0, 5e8), stdio=True)
    records.add("/proc/self/status", 0, read=(1.0, 2.0, 5e8))
    records.add("/scratch/a", 0, write=(1.0, 2.0, 2e8))
    design = Design(10.0, 1, records, NOT_PERIODIC, NOT_PERIODIC, {})
    families = truth_families(design, CONFIG)
    assert families["read_temporality"]["must"] == ["read_insignificant"]
    assert "write_on_start" in families["write_temporality"]["must"]


def test_lost_files_are_mpiio_only_in_a_partial_log_and_count_in_the_truth(tmp_path):
    truth = generate(tmp_path, 1, ["partial_lost_files"])[0]
    log = read_log(tmp_path / truth["file"])
    assert log.job.partial and F.POSIX in log.partial_modules
    lost = {i for i, name in log.names.items() if "/out." in name}
    assert lost and lost <= set(log.modules[F.MPIIO].ids.tolist())
    assert not lost & set(log.modules[F.POSIX].ids.tolist())
    assert truth["families"]["write_temporality"]["must"] == ["write_on_end"]


def test_dxt_request_cadence_is_under_a_second_and_not_periodic():
    design = SCENARIOS["dxt_request_cadence"](np.random.default_rng(3), CONFIG)
    gaps = np.diff(np.sort(design.records.dxt[0]["starts"]))
    assert 0.1 <= gaps.min() and gaps.max() <= 0.6 and len(gaps) >= 39
    assert design.read.claim is False


def test_appended_checkpoints_keep_their_bursts_in_the_heatmap_only(tmp_path):
    truth = generate(tmp_path, 1, ["appended_checkpoints"])[0]
    log = read_log(tmp_path / truth["file"])
    assert log.job.version in ("3.21", "3.41")
    posix, hm = log.modules[F.POSIX].canonical(), log.heatmaps
    assert len(posix["bytes_written"]) == log.job.nprocs == len(hm.ranks)  # one record per rank
    assert hm.write_bins.sum() == posix["bytes_written"].sum() and hm.nbins.max() <= 256
    width = truth["params"]["bin_seconds"]
    assert np.log2(width / 0.1) == int(np.log2(width / 0.1) + 1e-9)  # 0.1 s x a power of two
    assert hm.nbins[0] * width >= log.job.run_time
    assert "write_periodic" in truth["families"]["write_periodicity"]["must"]
    assert not {"write_periodic_low_busy_time", "write_periodic_high_busy_time"} & set(
        truth["families"]["write_periodicity"]["must"] + truth["families"]["write_periodicity"]["must_not"]
    )


@pytest.mark.parametrize(
    "period, expected",
    [
        (0.89, ([], list(PERIODICITY))),  # clearly under 1 s: request cadence, not periodic
        (0.9, ([], [])),
        (1.09, ([], [])),  # within 10 % of min_period_seconds: not asserted
        (
            1.11,
            (["periodic", "periodic_second"], ["periodic_minute", "periodic_hour", "periodic_day_or_more"]),
        ),
    ],
)
def test_periods_under_min_period_seconds_are_not_periodic(period, expected):
    assert periodicity_family(Periodicity(True, [Series(period, None, 1e9)]), CONFIG) == expected
