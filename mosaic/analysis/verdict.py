"""The final periodicity verdict of a direction (SPEC 3.4 last paragraph, 3.5).

Mean shift and the FFT detector fail differently: mean shift needs merged
operations of comparable size and spacing, the FFT needs enough periods and
a clean spectrum. ``config.verdict_rule`` says how their verdicts combine;
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
from typing import TypedDict, get_args

import numpy as np

from mosaic.analysis.segments import MeanShiftPeriodicity
from mosaic.analysis.spectrum import FFTPeriodicity
from mosaic.config import Config, VerdictRule


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


def _fft_confident(fft: FFTPeriodicity, config: Config) -> bool:
    """FTIO's high confidence: one fundamental among the candidates."""
    return bool(fft.get("periodic")) and len(fft.get("candidates", ())) == 1


def _fft_scored(fft: FFTPeriodicity, config: Config) -> bool:
    return bool(fft.get("periodic")) and fft.get("score", 0.0) >= config.verdict_fft_min_score


def _fft_significant(fft: FFTPeriodicity, config: Config) -> bool:
    """Periodic far beyond chance: random bursts reach a few sigmas, real series many."""
    return bool(fft.get("periodic")) and fft.get("significance", 0.0) >= config.verdict_fft_min_significance


def _fft_strong(fft: FFTPeriodicity, config: Config) -> bool:
    """Significant, or a close repeat clearly but not far beyond chance.

    Significance grows with the number of periods in the window: six to
    eight checkpoints +-10 % apart in time and +-20 % in size (too unlike
    for mean shift's clusters) repeat with a correlation (score) of
    0.82-0.93 at only 4.0-4.9 sigmas. Chance alone, on every ground-truth
    corpus and the real logs, gave either a close repeat over ~3 periods
    (score up to 0.91, at 3.15 sigmas) or a weak one over many (4.2 sigmas,
    score 0.47): docs/periodicity.md, "A close repeat over few periods".
    """
    return _fft_significant(fft, config) or (
        _fft_scored(fft, config)
        and fft.get("significance", 0.0) >= config.verdict_fft_strong_min_significance
    )


def _meanshift_vetted(ms: bool, fft: FFTPeriodicity, config: Config) -> bool:
    """Mean shift, unless the FFT sees no repetition at all at any period.

    Mean shift's clusters form by chance among many random segments; the
    FFT's score there stays near zero, while every series mean shift finds
    for real repeats at the FFT's period too.
    """
    return ms and fft.get("score", 0.0) >= config.fft_min_score


# The rules' names are config.VerdictRule (what a TOML file may choose); their
# meanings are here, one per name, checked below so neither list can drift.
RULES: dict[VerdictRule, Callable[[bool, FFTPeriodicity, Config], bool]] = {
    "meanshift": lambda ms, fft, config: ms,
    "fft": lambda ms, fft, config: bool(fft.get("periodic")),
    "both": lambda ms, fft, config: ms and bool(fft.get("periodic")),
    "meanshift_or_fft": lambda ms, fft, config: ms or bool(fft.get("periodic")),
    "meanshift_or_confident_fft": lambda ms, fft, config: ms or _fft_confident(fft, config),
    "meanshift_or_scored_fft": lambda ms, fft, config: ms or _fft_scored(fft, config),
    "meanshift_or_significant_fft": lambda ms, fft, config: ms or _fft_significant(fft, config),
    "meanshift_or_strong_fft": lambda ms, fft, config: ms or _fft_strong(fft, config),
    "vetted_meanshift_or_significant_fft": lambda ms, fft, config: (
        _meanshift_vetted(ms, fft, config) or _fft_significant(fft, config)
    ),
}
if set(RULES) != set(get_args(VerdictRule)):
    raise ImportError(f"verdict rules {sorted(RULES)} differ from config.VerdictRule")


def combine(meanshift: MeanShiftPeriodicity, fft: FFTPeriodicity, config: Config) -> Verdict:
    """Final verdict, its source, and the period and busy fraction behind the labels."""
    rule = RULES[config.verdict_rule]  # Config accepts only these names
    ms_periodic = bool(meanshift.get("periodic")) and bool(meanshift.get("operations"))
    fft_periodic = bool(fft.get("periodic"))
    verdict: Verdict = {
        "periodic": False,
        "period": None,
        "source": None,
        "busy_fraction": None,
    }
    if not rule(ms_periodic, fft, config):
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


def labels(verdict: Verdict, config: Config) -> list[str]:
    """Periodicity labels (unprefixed) from a direction's final verdict (SPEC 3.4).

    ``verdict`` holds ``periodic``, ``period`` (its magnitude) and ``busy_fraction``
    as :func:`combine` returns them.
    """
    if not verdict.get("periodic"):
        return []
    period, busy = verdict["period"], verdict["busy_fraction"]
    assert period is not None and busy is not None  # a periodic verdict has both
    bounds = (config.period_second_max, config.period_minute_max, config.period_hour_max)
    magnitudes = ("periodic_second", "periodic_minute", "periodic_hour", "periodic_day_or_more")
    found = ["periodic", magnitudes[int(np.searchsorted(bounds, period, side="left"))]]
    if busy <= config.low_busy_max:
        found.append("periodic_low_busy_time")
    if busy >= config.high_busy_min:
        found.append("periodic_high_busy_time")
    return found
