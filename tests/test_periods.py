"""One notation for the period class: the magnitude a label names, with its range."""

import pytest

from mosaic.analysis.verdict import LabelSettings, labels
from mosaic.config import DEFAULT
from mosaic.periods import duration, magnitude, period_text, run_time_text


@pytest.mark.parametrize(
    "seconds, expected",
    [
        (0.5, "second: up to 30 s"),
        (30.0, "second: up to 30 s"),  # a bound belongs to the smaller magnitude, as in the labels
        (30.01, "minute: 30 s-30 min"),
        (1800.0, "minute: 30 s-30 min"),
        (1800.5, "hour: 30 min-12 h"),
        (43200.0, "hour: 30 min-12 h"),
        (43201.0, "day or more: over 12 h"),
    ],
)
def test_a_period_reads_as_the_magnitude_its_label_names(seconds, expected):
    assert magnitude(seconds) == expected
    given = labels({"periodic": True, "period": seconds, "busy_fraction": 0.5}, LabelSettings.of(DEFAULT))
    assert given[1] == "periodic_" + expected.split(":")[0].replace(" ", "_")


def test_durations_and_the_whole_text():
    assert [duration(s) for s in (0.07, 47, 90, 14660, 200000)] == [
        "0.07 s",
        "47 s",
        "1.5 min",
        "4.07 h",
        "2.31 d",
    ]
    assert period_text(47.0, "write") == "write, minute: 30 s-30 min (median 47 s)"
    assert period_text(None, "write") == period_text(47.0, None) == "-"


def test_run_times_read_in_seconds_and_in_a_larger_unit_when_long():
    """A 0.07 s job's plot title said "run time 0 s"; pages said "1.466e+04 s"."""
    assert run_time_text(0.07) == "0.07 s"
    assert run_time_text(59.0) == "59 s"
    assert run_time_text(1000.0) == "1,000 s (16.7 min)"
    assert run_time_text(14660.0) == "14,660 s (4.07 h)"
