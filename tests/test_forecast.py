"""mosaic.forecast on hand-computed cases: two running jobs with known signatures and a candidate
give the load ahead bin by bin, the candidate's phases, slowdowns and conflicts; the risk class
at each threshold's edge; the answer for an unknown application, too few runs and no signature;
the visibility rule. (mosaic/forecast.py is new: every test here fails on e627ff0.)"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.forecast import (
    MONDAY_EPOCH,
    Group,
    RunningJob,
    Settings,
    Signature,
    Timeline,
    Viewer,
    expected_length,
    forecast,
    hour_of_week_mean,
    hour_of_week_slot,
    parse_signature,
    place,
    risk_class,
)
from mosaic_testing.contracts import signature_body

NOW = MONDAY_EPOCH + 3 * 7 * 86400 + 10 * 3600  # a Monday 10:00 UTC, three weeks on
FOUR_BINS = Settings(bins=4, medium_slowdown=1.25, high_slowdown=1.5)  # thresholds exact in binary


def sig(*args, **kwargs) -> Signature:
    parsed = parse_signature(signature_body(*args, **kwargs))
    assert isinstance(parsed, Signature), parsed
    return parsed


# A: writes 128 B/s in the first and last quarters of a 40 s run (two bursts).
A = sig(
    [0, 0, 0, 0],
    [128, 0, 0, 128],
    40.0,
    [
        {"direction": "write", "start": 0.0, "duration": 0.25, "bytes": 1280, "bandwidth": 128, "runs": 8},
        {"direction": "write", "start": 0.75, "duration": 0.25, "bytes": 1280, "bandwidth": 128, "runs": 8},
    ],
)
# B: reads 64 B/s in the first half of a 20 s run (no bursts: its phase comes from the series).
B = sig([64, 0], [0, 0], 20.0)
# The candidate C: writes 256 B/s in the second half of a 40 s run.
C = sig([0, 0], [0, 256], 40.0)


def groups(slope_a=1 / 512, label_a="sensitive") -> dict[str, Group]:
    return {
        "1:/a": Group("1:/a", A, runs=8, label=label_a, slope=slope_a),
        "2:/b": Group("2:/b", B, runs=8, label="insensitive", slope=0.0),
    }


# a started 10 s ago, no time limit: expected length 40 s, so [NOW-10, NOW+30).
# b starts now with a 10 s time limit: min(20, 10) = 10 s, so [NOW, NOW+10).
RUNNING = [
    RunningJob("101", 1, "/a", "1:/a", NOW - 10, None),
    RunningJob("102", 2, "/b", "2:/b", NOW, 10.0),
]


def candidate(slope: float | None = 1 / 256, label: str | None = "sensitive") -> Group:
    return Group("3:/c", C, runs=8, label=label, slope=slope)


def test_parse_signature_phases_and_bad_bodies():
    assert A.phases.tolist() == [[0.0, 0.25], [0.75, 1.0]]
    assert A.phase_directions == ("write", "write")
    assert B.phases.tolist() == [[0.0, 0.5]] and B.phase_directions == ("read",)
    assert C.phases.tolist() == [[0.5, 1.0]]
    # 5 % of the peak (100): 5 is in, 4.9 is not
    edge = sig([0, 4.9, 5, 100], [0, 0, 0, 0], 10.0)
    assert edge.phases.tolist() == [[0.5, 1.0]]
    assert isinstance(parse_signature(None), str)
    assert "same length" in parse_signature(signature_body([1, 2], [1], 10.0))
    assert "negative" in parse_signature(signature_body([-1.0], [0.0], 10.0))
    assert "positive" in parse_signature(signature_body([1.0], [0.0], 0.0))
    assert "lacks" in parse_signature({"normalized": {}})


def test_expected_length_is_the_median_capped_by_the_time_limit():
    assert expected_length(40.0, None) == 40.0
    assert expected_length(40.0, 10.0) == 10.0
    assert expected_length(40.0, 50.0) == 40.0
    assert expected_length(40.0, math.nan) == 40.0


def test_place_integrates_the_steps_exactly():
    edges = NOW + np.array([0.0, 10.0, 20.0, 30.0, 40.0])
    placed = place([A, B], np.array([0, 1]), np.array([NOW - 10, NOW]), np.array([40.0, 10.0]), edges)
    # a: 128 B/s over [NOW-10, NOW) (outside), 0 over [NOW, NOW+20), 128 over [NOW+20, NOW+30)
    assert placed.write[0].tolist() == [0.0, 0.0, 128.0, 0.0]
    # b squeezed to 10 s: 64 B/s over [NOW, NOW+5): a mean of 32 in the first bin
    assert placed.read[1].tolist() == [32.0, 0.0, 0.0, 0.0]
    assert placed.coverage[0].tolist() == [0.0, 0.0, 1.0, 0.0]
    assert placed.coverage[1].tolist() == [0.5, 0.0, 0.0, 0.0]
    # a bin edge inside a step: 128 B/s over 2.5 s of a 5 s bin
    half = place([A], np.array([0]), np.array([NOW]), np.array([40.0]), NOW + np.array([7.5, 12.5]))
    assert half.write[0].tolist() == [64.0]


def test_two_running_jobs_and_a_candidate_bin_by_bin():
    answer = forecast(NOW, candidate(), RUNNING, groups(), settings=FOUR_BINS, uid=3, application="/c")
    assert answer["status"] == "ok"
    assert answer["expected_run_time"] == 40.0 and answer["horizon"]["bin_seconds"] == 10.0
    ahead = answer["load_ahead"]["*"]
    assert ahead["read"] == [32.0, 0.0, 0.0, 0.0]
    assert ahead["write"] == [0.0, 0.0, 128.0, 0.0]
    assert ahead["meta"] == [0.0] * 4
    assert answer["running"] == {"jobs": 2, "with_signature": 2, "without_signature": 0}
    cand = answer["candidate"]
    # its one phase, [20, 40) s: the others' load is 128 then 0, a time mean of 64 B/s
    assert cand["phases"] == [
        {"direction": "write", "start": 20.0, "end": 40.0, "bytes": 5120.0, "load_bps": 64.0, "bins": 2}
    ]
    assert cand["load_during_io_bps"] == 64.0 and cand["io_seconds"] == 20.0
    assert cand["expected_slowdown"] == 1.25  # 1 + 64 / 256
    # a (sensitive, 1/512 per B/s) meets the candidate's 256 B/s in its last phase: +0.5
    assert answer["caused"] == [{"job": "another job", "added_load_bps": 256.0, "extra_slowdown": 0.5}]
    # a carries all the others' load during the candidate's phase; b none (it is over by then)
    assert answer["conflicts"] == [{"job": "another job", "share": 1.0}]
    assert answer["risk"] == {"class": "high", "score": 1.5, "why": None}


@pytest.mark.parametrize(
    ("slope_c", "slope_a", "expected"),
    [
        (1 / 256, 0.0, "medium"),  # 1.25 exactly: medium
        (1 / 256 - 1e-9, 0.0, "low"),  # just under
        (1 / 128, 0.0, "high"),  # 1.5 exactly: high
        (1 / 128 - 1e-9, 0.0, "medium"),
        (0.0, 1 / 512, "high"),  # what it does to a: 1 + 0.5
        (0.0, 1 / 512 - 1e-9, "medium"),
        (0.0, 1 / 1024, "medium"),  # 1 + 0.25
        (0.0, 1 / 1024 - 1e-9, "low"),
    ],
)
def test_risk_class_edges(slope_c, slope_a, expected):
    answer = forecast(NOW, candidate(slope_c), RUNNING, groups(slope_a), settings=FOUR_BINS)
    assert answer["risk"]["class"] == expected


def test_risk_class_default_thresholds():
    settings = Settings.of(Config())
    assert (settings.medium_slowdown, settings.high_slowdown) == (1.2, 1.5)
    assert risk_class(1.2, settings) == "medium"
    assert risk_class(1.1999999, settings) == "low"
    assert risk_class(1.5, settings) == "high"
    assert risk_class(1.4999999, settings) == "medium"
    assert risk_class(None, settings) is None
    with pytest.raises(ValueError, match="forecast_medium_slowdown"):
        Config(forecast_medium_slowdown=1.5, forecast_high_slowdown=1.5)


def test_insensitive_and_not_judged_candidates():
    insensitive = forecast(NOW, candidate(0.5, "insensitive"), RUNNING, groups(0.0), settings=FOUR_BINS)
    assert insensitive["candidate"]["expected_slowdown"] == 1.0
    assert insensitive["risk"]["class"] == "low"
    # not judged: the median slope of the sensitive groups known (a's 1/512): 1 + 64/512
    judged = forecast(NOW, candidate(None, None), RUNNING, groups(), settings=FOUR_BINS)
    assert judged["candidate"]["slope"] == 1 / 512
    assert judged["candidate"]["expected_slowdown"] == 1.125
    none = forecast(
        NOW, candidate(None, "not enough runs"), RUNNING, groups(0.0, "insensitive"), settings=FOUR_BINS
    )
    assert none["candidate"]["expected_slowdown"] is None
    assert none["risk"]["class"] is None and "no slope" in none["risk"]["why"]


@pytest.mark.parametrize(
    ("group", "status"),
    [
        (None, "unknown_application"),
        (Group("3:/c", None, runs=2), "too_few_runs"),
        (Group("3:/c", None, why="no signature stored", runs=12, median_run_time=20.0), "no_signature"),
    ],
)
def test_without_a_signature_the_answer_is_the_background_only(group, status):
    answer = forecast(NOW, group, RUNNING, groups(), settings=FOUR_BINS, time_limit=80.0)
    assert answer["status"] == status and answer["why"]
    assert answer["candidate"] is None and answer["conflicts"] == [] and answer["caused"] == []
    assert answer["risk"]["class"] is None
    # the load ahead is still there, over the median run time (20 s) or the time limit (80 s)
    length = 20.0 if status == "no_signature" else 80.0
    assert answer["expected_run_time"] == length
    assert len(answer["load_ahead"]["*"]["write"]) == 4


def test_visibility_rule():
    operator = forecast(NOW, candidate(), RUNNING, groups(), settings=FOUR_BINS, viewer=Viewer(operator=True))
    assert operator["conflicts"] == [{"job": "101", "uid": 1, "application": "/a", "share": 1.0}]
    own = forecast(NOW, candidate(), RUNNING, groups(), settings=FOUR_BINS, viewer=Viewer(uid=1))
    assert own["conflicts"][0]["job"] == "101"  # the caller names uid 1: its own job
    other = forecast(NOW, candidate(), RUNNING, groups(), settings=FOUR_BINS, viewer=Viewer(uid=2))
    assert other["conflicts"] == [{"job": "another job", "share": 1.0}]
    assert other["caused"] == [{"job": "another job", "added_load_bps": 256.0, "extra_slowdown": 0.5}]


def test_file_systems_apart():
    """b on /scratch only, a on /home only, the candidate on /scratch: a is not met."""
    g = groups()
    g["1:/a"] = Group("1:/a", A, runs=8, label="sensitive", slope=1 / 512, fs_shares={"/home": 1.0})
    g["2:/b"] = Group("2:/b", B, runs=8, fs_shares={"/scratch": 1.0})
    cand = Group("3:/c", C, runs=8, label="sensitive", slope=1 / 256, fs_shares={"/scratch": 1.0})
    answer = forecast(NOW, cand, RUNNING, g, settings=FOUR_BINS)
    assert answer["load_ahead"]["/home"]["write"] == [0.0, 0.0, 128.0, 0.0]
    assert answer["load_ahead"]["/scratch"]["read"] == [32.0, 0.0, 0.0, 0.0]
    assert answer["candidate"]["load_during_io_bps"] == 0.0
    assert answer["caused"] == [] and answer["conflicts"] == []
    assert answer["risk"]["class"] == "low"


def test_the_background_is_the_hour_of_week_mean_minus_the_signatures():
    assert hour_of_week_slot(
        np.array([MONDAY_EPOCH, MONDAY_EPOCH + 3599, MONDAY_EPOCH + 7 * 86400 - 1])
    ).tolist() == [
        0,
        0,
        167,
    ]
    # two weeks of hourly bins before NOW: 100 B/s written at every hour, 2 requests/s; the
    # Monday 10:00 hour held 300 B/s in one week and 100 in the other (mean 200)
    hours = 14 * 24
    origin = NOW - hours * 3600.0
    write = np.full(hours, 100.0 * 3600)
    slots = hour_of_week_slot(origin + (np.arange(hours) + 0.5) * 3600)
    write[np.flatnonzero(slots == 10)[0]] = 300.0 * 3600
    timeline = Timeline(origin, 3600.0, np.zeros(hours), write, np.full(hours, 2.0 * 3600))
    how = hour_of_week_mean(timeline)
    assert how["write"][10] == 200.0 and how["write"][11] == 100.0 and how["meta"][0] == 2.0
    # a bin after NOW is left out of a mean `until` NOW
    assert np.isnan(hour_of_week_mean(timeline, until=origin)["write"]).all()
    answer = forecast(NOW, candidate(), RUNNING, groups(), {"*": timeline}, settings=FOUR_BINS)
    ahead = answer["load_ahead"]["*"]
    assert ahead["background"]["write"] == [200.0, 200.0, 72.0, 200.0]  # 200 - 128 in bin 2
    assert ahead["write"] == [200.0, 200.0, 200.0, 200.0]  # the larger of usual and signatures
    assert ahead["background"]["meta"] == [2.0] * 4 and ahead["meta"] == [2.0] * 4
    assert answer["background"]["why"] is None
    # the candidate now meets 200 B/s in both its bins (32 + 0 read in bin 0 is outside)
    assert answer["candidate"]["load_during_io_bps"] == 200.0
