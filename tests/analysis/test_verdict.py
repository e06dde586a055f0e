"""Combined periodicity verdict (SPEC 3.4 last paragraph, 3.5)."""

from typing import get_args

import pytest

from mosaic.analysis.verdict import RULES, LabelSettings, VerdictSettings, combine, labels
from mosaic.config import Config, VerdictRule

CONFIG = Config()
LABELS = LabelSettings.of(CONFIG)


def operation(period, occurrences, bytes_per_occurrence, busy_fraction):
    return {
        "period": period,
        "occurrences": occurrences,
        "bytes_per_occurrence": bytes_per_occurrence,
        "busy_fraction": busy_fraction,
        "start": 0.0,
        "end": period * occurrences,
    }


# Most bytes in total is 3 x 50 = 150 (not the 10 x 10 = 100 with more occurrences)
# Dominant first, as segments.meanshift_periodicity orders them: 150 bytes moved against 100.
MEANSHIFT = {"periodic": True, "operations": [operation(900.0, 3, 50.0, 0.8), operation(20.0, 10, 10.0, 0.1)]}
NO_MEANSHIFT = {"periodic": False, "operations": []}


def fft(periodic=True, fundamentals=1, score=0.9, significance=20.0, period=40.0, busy=0.3):
    return {
        "periodic": periodic,
        "period": period if periodic else None,
        "candidates": [{"period": period * k, "z": 10.0} for k in range(1, fundamentals + 1)],
        "score": score,
        "significance": significance,
        "busy_fraction": busy,
    }


def verdict(meanshift, fft_result, rule, **changes):
    return combine(meanshift, fft_result, VerdictSettings.of(CONFIG.replace(verdict_rule=rule, **changes)))


# (mean shift, FFT): (T, T), (T, F), (F, T), (F, F)
TRUTH_TABLES = [
    ("meanshift", (True, True, False, False)),
    ("fft", (True, False, True, False)),
    ("both", (True, False, False, False)),
    ("meanshift_or_fft", (True, True, True, False)),
    ("meanshift_or_confident_fft", (True, True, True, False)),
    ("meanshift_or_scored_fft", (True, True, True, False)),
    ("meanshift_or_significant_fft", (True, True, True, False)),
    ("meanshift_or_strong_fft", (True, True, True, False)),
    ("vetted_meanshift_or_significant_fft", (True, True, True, False)),
]


@pytest.mark.parametrize("rule, expected", TRUTH_TABLES)
def test_rule_truth_tables(rule, expected):
    got = tuple(
        verdict(ms, fft(periodic=f), rule)["periodic"]
        for ms, f in ((MEANSHIFT, True), (MEANSHIFT, False), (NO_MEANSHIFT, True), (NO_MEANSHIFT, False))
    )
    assert got == expected


def test_every_rule_is_tested():
    """Each rule a config may name has its truth table above and its meaning in RULES."""
    assert {rule for rule, _ in TRUTH_TABLES} == set(RULES) == set(get_args(VerdictRule))


def test_magnitude_and_busy_time_come_from_meanshift_dominant_operation():
    result = verdict(MEANSHIFT, fft(period=40.0, busy=0.3), "meanshift_or_fft")
    assert result == {
        "periodic": True,
        "period": 900.0,
        "source": "both",
        "busy_fraction": 0.8,
    }


def test_fft_alone_gives_its_period_and_busy_fraction():
    result = verdict(NO_MEANSHIFT, fft(period=40.0, busy=0.3), "meanshift_or_fft")
    assert result == {
        "periodic": True,
        "period": 40.0,
        "source": "fft",
        "busy_fraction": 0.3,
    }


def test_meanshift_alone_is_its_source():
    result = verdict(MEANSHIFT, fft(periodic=False), "meanshift_or_fft")
    assert result["source"] == "meanshift" and result["period"] == 900.0


def test_not_periodic_has_no_source_nor_period():
    assert verdict(NO_MEANSHIFT, fft(periodic=False), "meanshift_or_fft") == {
        "periodic": False,
        "period": None,
        "source": None,
        "busy_fraction": None,
    }


def test_meanshift_periodic_without_operations_does_not_count():
    assert not verdict({"periodic": True, "operations": []}, fft(periodic=False), "meanshift")["periodic"]


def test_confident_rule_ignores_moderate_fft():
    assert verdict(NO_MEANSHIFT, fft(fundamentals=1), "meanshift_or_confident_fft")["periodic"]
    assert not verdict(NO_MEANSHIFT, fft(fundamentals=2), "meanshift_or_confident_fft")["periodic"]


def test_scored_rule_threshold_both_sides():
    assert verdict(NO_MEANSHIFT, fft(score=0.6), "meanshift_or_scored_fft", verdict_fft_min_score=0.6)[
        "periodic"
    ]
    assert not verdict(NO_MEANSHIFT, fft(score=0.59), "meanshift_or_scored_fft", verdict_fft_min_score=0.6)[
        "periodic"
    ]


def test_significant_rule_threshold_both_sides():
    assert verdict(
        NO_MEANSHIFT, fft(significance=5.0), "meanshift_or_significant_fft", verdict_fft_min_significance=5.0
    )["periodic"]
    assert not verdict(
        NO_MEANSHIFT, fft(significance=4.9), "meanshift_or_significant_fft", verdict_fft_min_significance=5.0
    )["periodic"]


@pytest.mark.parametrize(
    "score, significance, periodic",
    [
        (0.1, 5.0, True),  # far beyond chance: the score does not matter
        (0.8, 3.5, True),  # both edges of the strong repeat
        (0.79, 4.99, False),  # a weaker repeat needs the 5 sigmas
        (0.8, 3.49, False),
        (0.91, 3.15, False),  # appended_on_off (held-out): a close repeat over ~3 periods, chance
        (0.47, 4.2, False),  # poisson_random_bytes (held-out): a weak repeat over many periods, chance
        (0.82, 3.97, True),  # few_size_varying_ckpts (held-out): 7 checkpoints +-10 % apart, +-20 % in size
    ],
)
def test_strong_rule_edges(score, significance, periodic):
    got = verdict(
        NO_MEANSHIFT,
        fft(score=score, significance=significance),
        "meanshift_or_strong_fft",
        verdict_fft_min_significance=5.0,
        verdict_fft_min_score=0.8,
        verdict_fft_strong_min_significance=3.5,
    )
    assert got["periodic"] is periodic
    assert got["source"] == ("fft" if periodic else None)


def test_strong_rule_needs_a_periodic_fft():
    assert not verdict(
        NO_MEANSHIFT, fft(periodic=False, score=0.95, significance=4.0), "meanshift_or_strong_fft"
    )["periodic"]


def test_default_rule_is_the_strong_one():
    assert CONFIG.verdict_rule == "meanshift_or_strong_fft"


def test_gated_rules_keep_meanshift_verdicts():
    weak = fft(score=0.1, significance=0.5, fundamentals=2)
    for rule in (
        "meanshift_or_confident_fft",
        "meanshift_or_scored_fft",
        "meanshift_or_significant_fft",
        "meanshift_or_strong_fft",
    ):
        assert verdict(MEANSHIFT, weak, rule)["source"] == "both"


def test_vetted_rule_drops_meanshift_when_the_fft_sees_no_repetition():
    rule = "vetted_meanshift_or_significant_fft"
    aperiodic = fft(periodic=False, score=0.29, significance=0.0)
    assert not verdict(MEANSHIFT, aperiodic, rule, fft_min_score=0.3)["periodic"]
    assert verdict(MEANSHIFT, fft(periodic=False, score=0.3), rule, fft_min_score=0.3)["periodic"]
    assert (
        verdict(NO_MEANSHIFT, fft(significance=5.0), rule, verdict_fft_min_significance=5.0)["source"]
        == "fft"
    )


def test_unknown_rule_is_an_error():
    with pytest.raises(ValueError, match="verdict_rule = 'majority': choose from"):
        verdict(MEANSHIFT, fft(), "majority")


# Labels from a periodic verdict (SPEC 3.4): magnitude and busy-time edges.
def periodic_verdict(period, busy=0.5):
    return {"periodic": True, "period": period, "busy_fraction": busy}


@pytest.mark.parametrize(
    "period, magnitude",
    [
        (30.0, "periodic_second"),
        (30.001, "periodic_minute"),
        (1800.0, "periodic_minute"),
        (1800.001, "periodic_hour"),
        (43200.0, "periodic_hour"),
        (43200.001, "periodic_day_or_more"),
    ],
)
def test_magnitude_thresholds(period, magnitude):
    assert labels(periodic_verdict(period), LABELS) == ["periodic", magnitude]


@pytest.mark.parametrize(
    "busy, extra",
    [(0.25, ["periodic_low_busy_time"]), (0.2501, []), (0.7499, []), (0.75, ["periodic_high_busy_time"])],
)
def test_busy_time_thresholds(busy, extra):
    assert labels(periodic_verdict(60.0, busy), LABELS) == ["periodic", "periodic_minute"] + extra


def test_no_labels_when_the_verdict_is_not_periodic():
    assert labels({"periodic": False, "period": None}, LABELS) == []
