"""The final periodicity verdict of a direction (SPEC 3.4 last paragraph, 3.5).

Mean shift and the FFT detector fail differently: mean shift needs merged
operations of comparable size and spacing, the FFT needs enough periods and
a clean spectrum. ``verdict_rule`` says how their verdicts combine;
its default is the rule measured most accurate on the ground-truth corpora
(docs/periodicity.md has the tables): mean shift, or the FFT alone when its
periodicity is far beyond chance, or when it repeats closely and clearly
beyond chance over too few periods to be far beyond it. Mean shift misses
interleaved series, bursts merged by their short gaps and checkpoints
whose sizes vary more than its bandwidth; the FFT alone is fooled now and
then by random bursts, at a significance most real series exceed by far. (Mean shift's
own chance clusters among random same-size writes are rejected inside
mean shift, by the recurrence check of ``segments._recurs``.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict, get_args

import numpy as np

from mosaic.analysis.segments import MeanShiftPeriodicity
from mosaic.analysis.spectrum import FFTPeriodicity
from mosaic.config import Settings, VerdictRule


@dataclass(frozen=True)
class VerdictSettings(Settings):
    """What :func:`combine` reads of the Config: the rule and the thresholds its rules use."""

    verdict_rule: VerdictRule
    verdict_fft_min_score: float
    verdict_fft_min_significance: float
    verdict_fft_strong_min_significance: float
    fft_min_score: float


@dataclass(frozen=True)
class LabelSettings(Settings):
    """What :func:`labels` reads of the Config: period magnitudes and busy-time bounds."""

    period_second_max: float
    period_minute_max: float
    period_hour_max: float
    low_busy_max: float
    high_busy_min: float


class Verdict(TypedDict):
    """A direction's final periodicity: the period and busy fraction its labels come from.

    ``period`` (seconds) and ``busy_fraction`` are mean shift's dominant periodic
    operation's when mean shift says periodic, else the FFT's (SPEC 3.4); both
    None when not periodic. ``source``: which detectors said periodic.
    """

    periodic: bool
    period: float | None
    source: str | None  # "meanshift", "fft" or "both"
    busy_fraction: float | None


def _fft_confident(fft: FFTPeriodicity) -> bool:
    """FTIO's high confidence: one fundamental among the candidates."""
    return bool(fft.get("periodic")) and len(fft.get("candidates", ())) == 1


def _fft_scored(fft: FFTPeriodicity, *, verdict_fft_min_score: float) -> bool:
    return bool(fft.get("periodic")) and fft.get("score", 0.0) >= verdict_fft_min_score


def _fft_significant(fft: FFTPeriodicity, *, verdict_fft_min_significance: float) -> bool:
    """Periodic far beyond chance: random bursts reach a few sigmas, real series many."""
    return bool(fft.get("periodic")) and fft.get("significance", 0.0) >= verdict_fft_min_significance


def _fft_strong(
    fft: FFTPeriodicity,
    *,
    verdict_fft_min_score: float,
    verdict_fft_min_significance: float,
    verdict_fft_strong_min_significance: float,
) -> bool:
    """Significant, or a close repeat clearly but not far beyond chance.

    Significance grows with the number of periods in the window: six to
    eight checkpoints +-10 % apart in time and +-20 % in size (too unlike
    for mean shift's clusters) repeat with a correlation (score) of
    0.82-0.93 at only 4.0-4.9 sigmas. Chance alone, on every ground-truth
    corpus and the real logs, gave either a close repeat over ~3 periods
    (score up to 0.91, at 3.15 sigmas) or a weak one over many (4.2 sigmas,
    score 0.47): docs/periodicity.md, "A close repeat over few periods".
    """
    return _fft_significant(fft, verdict_fft_min_significance=verdict_fft_min_significance) or (
        _fft_scored(fft, verdict_fft_min_score=verdict_fft_min_score)
        and fft.get("significance", 0.0) >= verdict_fft_strong_min_significance
    )


def _meanshift_vetted(ms: bool, fft: FFTPeriodicity, *, fft_min_score: float) -> bool:
    """Mean shift, unless the FFT sees no repetition at all at any period.

    Mean shift's clusters form by chance among many random segments; the
    FFT's score there stays near zero, while every series mean shift finds
    for real repeats at the FFT's period too.
    """
    return ms and fft.get("score", 0.0) >= fft_min_score


# The rules' names are config.VerdictRule (what a TOML file may choose); their
# meanings are here, one per name, checked below so neither list can drift. A rule
# takes mean shift's verdict, the FFT's result and the VerdictSettings.
RULES: dict[VerdictRule, Callable[[bool, FFTPeriodicity, VerdictSettings], bool]] = {
    "meanshift": lambda ms, fft, s: ms,
    "fft": lambda ms, fft, s: bool(fft.get("periodic")),
    "both": lambda ms, fft, s: ms and bool(fft.get("periodic")),
    "meanshift_or_fft": lambda ms, fft, s: ms or bool(fft.get("periodic")),
    "meanshift_or_confident_fft": lambda ms, fft, s: ms or _fft_confident(fft),
    "meanshift_or_scored_fft": lambda ms, fft, s: (
        ms or _fft_scored(fft, verdict_fft_min_score=s.verdict_fft_min_score)
    ),
    "meanshift_or_significant_fft": lambda ms, fft, s: (
        ms or _fft_significant(fft, verdict_fft_min_significance=s.verdict_fft_min_significance)
    ),
    "meanshift_or_strong_fft": lambda ms, fft, s: (
        ms
        or _fft_strong(
            fft,
            verdict_fft_min_score=s.verdict_fft_min_score,
            verdict_fft_min_significance=s.verdict_fft_min_significance,
            verdict_fft_strong_min_significance=s.verdict_fft_strong_min_significance,
        )
    ),
    "vetted_meanshift_or_significant_fft": lambda ms, fft, s: (
        _meanshift_vetted(ms, fft, fft_min_score=s.fft_min_score)
        or _fft_significant(fft, verdict_fft_min_significance=s.verdict_fft_min_significance)
    ),
}
if set(RULES) != set(get_args(VerdictRule)):
    raise ImportError(f"verdict rules {sorted(RULES)} differ from config.VerdictRule")


def combine(meanshift: MeanShiftPeriodicity, fft: FFTPeriodicity, settings: VerdictSettings) -> Verdict:
    """Final verdict, its source, and the period and busy fraction behind the labels."""
    rule = RULES[settings.verdict_rule]  # Config accepts only these names
    ms_periodic = bool(meanshift.get("periodic")) and bool(meanshift.get("operations"))
    fft_periodic = bool(fft.get("periodic"))
    verdict: Verdict = {
        "periodic": False,
        "period": None,
        "source": None,
        "busy_fraction": None,
    }
    if not rule(ms_periodic, fft, settings):
        return verdict
    if ms_periodic:
        dominant = meanshift["operations"][0]  # dominant first (segments.meanshift_periodicity)
        period, busy = float(dominant["period"]), float(dominant["busy_fraction"])
    else:
        assert fft["period"] is not None  # every rule passes without mean shift only on a periodic FFT
        period, busy = float(fft["period"]), float(fft["busy_fraction"])
    source = "both" if ms_periodic and fft_periodic else ("meanshift" if ms_periodic else "fft")
    return {
        "periodic": True,
        "period": period,
        "source": source,
        "busy_fraction": busy,
    }


def labels(verdict: Verdict, settings: LabelSettings) -> list[str]:
    """Periodicity labels (unprefixed) from a direction's final verdict (SPEC 3.4).

    ``verdict`` holds ``periodic``, ``period`` (its magnitude) and ``busy_fraction``
    as :func:`combine` returns them.
    """
    if not verdict.get("periodic"):
        return []
    period, busy = verdict["period"], verdict["busy_fraction"]
    assert period is not None and busy is not None  # a periodic verdict has both
    bounds = (settings.period_second_max, settings.period_minute_max, settings.period_hour_max)
    magnitudes = ("periodic_second", "periodic_minute", "periodic_hour", "periodic_day_or_more")
    found = ["periodic", magnitudes[int(np.searchsorted(bounds, period, side="left"))]]
    if busy <= settings.low_busy_max:
        found.append("periodic_low_busy_time")
    if busy >= settings.high_busy_min:
        found.append("periodic_high_busy_time")
    return found
