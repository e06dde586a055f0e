"""Why each label: one sentence per label of a trace, with the numbers that decided it.

:func:`explain` reads a :class:`~mosaic.analysis.categorize.TraceAnalysis`
(every intermediate is kept there) and never re-derives a decision: whether
a label is given is the analysis' own answer, and each sentence quotes the
figures the result object reports, so a reason never disagrees with the
categories. Only the comparisons a sentence shows (a quarter's share
against the others', a CV) are recomputed from those figures.

A :class:`Reason`'s ``numbers`` name every number its ``text`` shows:

* a dotted path into the SPEC 4 result object (``"write.chunks_bytes.0"``,
  ``"write.periodicity.verdict.period"``, ``"metadata.spikes"``): the
  value at that path, exactly;
* ``"config.<field>"``: the threshold of :class:`~mosaic.config.Config`
  the rule compares with;
* a plain name (no dot): a figure computed from the two above or from the
  analysis' intermediates (a quarter's share of the bytes, a coefficient
  of variation, the second of the metadata peak).

**Close.** A label not given is explained (``given=False``) only when it
was close, which means one of:

* every condition it missed was within ``Config.explain_close_margin``
  (20 % by default) of its threshold, relative to the threshold: a share
  of 0.70 against 75 %, 4 spikes where 5 are needed, a CV of 0.28 against
  0.25, 110 MB against the 100 MB of ``insignificant``, a period of 33 s
  against the 30 s bound of ``periodic_second``;
* for ``periodic``, a rule alone kept it off: mean-shift clusters that
  would have filled the 75 % share together but were refused by the
  minimum period or the steady-pace rule, or a detector that found a
  period the verdict rule does not accept alone.

Not explained: a direction whose heatmap bursts mean shift also tried
(their clusters are not kept when they are not periodic), and the FFT's
own gates when it finds no period (a verdict rule accepts the FFT alone
only far beyond them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypedDict

import numpy as np

from mosaic.analysis import segments, small
from mosaic.analysis.categorize import DirectionAnalysis, TraceAnalysis, TraceResult, analyze, result
from mosaic.analysis.labels import ALL_LABELS, FAMILIES
from mosaic.analysis.temporality import coefficient_of_variation
from mosaic.config import Config
from mosaic.trace import Trace

Number = float | int | str
_ORDER = {label: i for i, label in enumerate(ALL_LABELS)}
_FAMILY = {label: family for family, members in FAMILIES.items() for label in members}
_MAGNITUDES = ("periodic_second", "periodic_minute", "periodic_hour", "periodic_day_or_more")
_BOUNDS = ("period_second_max", "period_minute_max", "period_hour_max")
_REFUSED_SHOWN = 3  # refused clusters a sentence details, the largest first; the rest are counted


class Reason(TypedDict):
    """Why a label was given, or why a close one was not."""

    label: str  # the category given, or the one considered and not given
    given: bool
    family: str  # a key of labels.FAMILIES: "read_periodicity", "write_temporality", "metadata", ...
    rule: str  # the SPEC section it comes from, e.g. "3.4"
    text: str  # one sentence with the numbers that decided it
    numbers: dict[str, Number]  # every number in text, by name (module docstring)


def explain(analysis: TraceAnalysis, config: Config) -> list[Reason]:
    """The reasons of a trace's labels, family by family (:data:`labels.FAMILIES` order).

    ``config`` must be the one the analysis ran with (its thresholds are
    quoted). Every given label has exactly one reason with ``given=True``;
    labels not given appear (``given=False``) only when they were close
    (module docstring). Within a family, given labels come first, each
    group in vocabulary order.
    """
    return explain_result(analysis, result(analysis, config), config)


def explain_result(analysis: TraceAnalysis, answer: TraceResult, config: Config) -> list[Reason]:
    """:func:`explain` with the result object already built from ``analysis``."""
    found: list[Reason] = []
    moved = _moved(analysis.trace)
    for direction in (analysis.read, analysis.write):
        found += _temporality(direction, answer, config, moved)
        if direction.significant:
            found += _periodicity(direction, answer, config)
    found += _metadata(analysis, answer, config)
    return sorted(found, key=lambda r: (_family_index(r["family"]), not r["given"], _ORDER[r["label"]]))


class ExplainedResult(TraceResult):
    """The SPEC 4 result object with the reasons of its labels."""

    reasons: list[Reason]


def categorize_explained(trace: Trace, config: Config) -> ExplainedResult:
    """The result object with its ``reasons`` (``mosaic categorize --explain``, the API's explain)."""
    analysis = analyze(trace, config)
    answer = result(analysis, config)
    return {**answer, "reasons": explain_result(analysis, answer, config)}


def _family_index(family: str) -> int:
    return list(FAMILIES).index(family)


class _Quote:
    """The numbers of one sentence, each read by name where the reader can check it."""

    def __init__(self, answer: TraceResult, config: Config) -> None:
        self.answer, self.config = answer, config
        self.numbers: dict[str, Number] = {}

    def at(self, path: str) -> Any:
        """The result object's value at a dotted path (list items by index)."""
        value: Any = self.answer
        for part in path.split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        self.numbers[path] = value
        return value

    def threshold(self, name: str) -> Any:
        value = getattr(self.config, name)
        self.numbers[f"config.{name}"] = value
        return value

    def derived(self, name: str, value: Number) -> Any:
        self.numbers[name] = value
        return value

    def reason(self, label: str, given: bool, rule: str, text: str) -> Reason:
        head = label.replace("_", " ", 1) + ("" if given else " not given")
        return {
            "label": label,
            "given": given,
            "family": _FAMILY[label],
            "rule": rule,
            "text": f"{head}: {text}",
            "numbers": self.numbers,
        }


# --- how numbers read: enough digits to tell a figure from the threshold it is compared with


def _distinct(render: Callable[[float, int], str], value: float, reference: float | None) -> str:
    """``render(value, digits)`` with 3 significant digits, more while it reads as ``reference``."""
    text = render(value, 3)
    digits = 3
    while reference is not None and value != reference and text == render(reference, digits) and digits < 12:
        digits += 1
        text = render(value, digits)
    return text


def _number(value: float, reference: float | None = None) -> str:
    """A ratio, a CV, a sigma or a count of requests; never in exponent notation."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return _distinct(_general, value, reference)


def _general(value: float, digits: int) -> str:
    """``digits`` significant digits, or the whole part of a larger number."""
    return f"{value:.0f}" if abs(value) >= 10**digits else f"{value:.{digits}g}"


def _percent(share: float, reference: float | None = None) -> str:
    return _distinct(lambda v, d: f"{100 * v:.{d}g} %", share, reference)


_BYTE_UNITS = ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))
_TIME_UNITS = ((172_800.0, 86_400.0, "d"), (7_200.0, 3_600.0, "h"), (120.0, 60.0, "min"))


def _bytes(value: float, reference: float | None = None) -> str:
    scale, unit = next(((s, u) for s, u in _BYTE_UNITS if abs(value) >= s), (1.0, "B"))
    return _distinct(lambda v, d: f"{v / scale:.{d}g} {unit}", value, reference)


def _seconds(value: float, reference: float | None = None) -> str:
    """Seconds below 2 minutes, then minutes, hours and days."""
    above, scale, unit = next((t for t in _TIME_UNITS if abs(value) >= t[0]), (0.0, 1.0, "s"))
    del above
    return _distinct(lambda v, d: f"{v / scale:.{d}g} {unit}", value, reference)


def _close_above(value: float, threshold: float, config: Config) -> bool:
    """``value`` misses ``> threshold`` (or ``>=``) by at most the close margin."""
    return value >= threshold * (1 - config.explain_close_margin)


def _close_below(value: float, threshold: float, config: Config) -> bool:
    """``value`` misses ``< threshold`` (or ``<=``) by at most the close margin."""
    return value <= threshold * (1 + config.explain_close_margin)


# --- temporality (SPEC 3.6)


class _Test(NamedTuple):
    """One condition of a temporality rule: its sentence piece, whether it holds, whether it is close."""

    text: str
    holds: bool
    close: bool


_Condition = Callable[[_Quote, DirectionAnalysis], _Test]


def _moved(trace: Trace) -> str:
    """How a direction's bytes were counted: "moved", or through which modules when the log
    also has DFS or DAOS records, whose bytes are not counted (SPEC 2: the real ior-DFS log
    moved 16.8 MB each way through DFS, and "0 B moved" read as no I/O)."""
    uncounted = [name for name in ("DFS", "DAOS") if name in trace.info.get("modules", ())]
    if not uncounted:
        return "moved"
    return f"through POSIX, MPI-IO and STDIO ({' and '.join(uncounted)} not counted)"


def _temporality(
    direction: DirectionAnalysis, answer: TraceResult, config: Config, moved: str
) -> list[Reason]:
    name = direction.name
    insignificant = f"{name}_insignificant"
    quote = _Quote(answer, config)
    total = quote.at(f"{name}.bytes")
    limit = quote.threshold("significant_bytes")
    if not direction.significant:
        text = f"{_bytes(total, limit)} {moved}, under {_bytes(limit)}"
        return [quote.reason(insignificant, True, "3.6", text)]
    found: list[Reason] = []
    if _close_below(total, limit, config):
        text = f"{_bytes(total, limit)} {moved}, not under {_bytes(limit)}"
        found.append(quote.reason(insignificant, False, "3.6", text))
    for rule, conditions in _TEMPORALITY_RULES.items():
        label = f"{name}_{rule}"
        quote = _Quote(answer, config)
        quarters = _quarters(quote, name)
        tests = [condition(quote, direction) for condition in conditions]
        given = label in direction.labels
        shown = tests if given else [t for t in tests if not t.holds]
        if given or all(t.close for t in shown):
            found.append(
                quote.reason(label, given, "3.6", f"{quarters}; " + ", and ".join(t.text for t in shown))
            )
    unclassified = f"{name}_unclassified"
    if unclassified in direction.labels:
        quote = _Quote(answer, config)
        text = f"{_quarters(quote, name)} match none of SPEC 3.6's rules"
        found.append(quote.reason(unclassified, True, "3.6", text))
    return found


def _quarters(quote: _Quote, name: str) -> str:
    """ "quarters 24/26/25/25 % of 1.2 GB", each quarter's share kept as ``share_q<k>``."""
    total = quote.at(f"{name}.bytes")
    shares = [
        quote.derived(f"share_q{k}", quote.at(f"{name}.chunks_bytes.{k}") / total if total > 0 else 0.0)
        for k in range(4)
    ]
    return f"quarters {'/'.join(f'{100 * s:.0f}' for s in shares)} % of {_bytes(total)}"


def _share(quote: _Quote, parts: tuple[int, ...]) -> float:
    """The bytes share of these quarters (``share_q1_q2``)."""
    key = "share_" + "_".join(f"q{k}" for k in parts)
    return float(quote.derived(key, math.fsum(float(quote.numbers[f"share_q{k}"]) for k in parts)))


def _more(part: str, parts: tuple[int, ...], other: str, others: tuple[int, ...], key: str) -> _Condition:
    """``part`` holds more than ``config.<key>`` times ``other`` (on_start, ...)."""

    def test(quote: _Quote, direction: DirectionAnalysis) -> _Test:
        mine, rest = _share(quote, parts), _share(quote, others)
        factor = quote.threshold(key)
        holds = mine > factor * rest
        verb = ("is" if holds else "is not") if len(parts) == 1 else ("are" if holds else "are not")
        text = f"{part} ({_percent(mine)}) {verb} more than {_number(factor)} x {other} ({_percent(rest)})"
        return _Test(text, holds, _close_above(mine, factor * rest, quote.config))

    return test


def _minor(part: str, parts: tuple[int, ...], other: str, others: tuple[int, ...]) -> _Condition:
    """``part`` holds under 1/``chunk_minor_divisor`` of ``other`` (after_start, before_end)."""

    def test(quote: _Quote, direction: DirectionAnalysis) -> _Test:
        mine, rest = _share(quote, parts), _share(quote, others)
        divisor = quote.threshold("chunk_minor_divisor")
        holds = mine < rest / divisor
        verb = "is" if holds else "is not"
        text = f"{part} ({_percent(mine)}) {verb} under 1/{_number(divisor)} of {other} ({_percent(rest)})"
        return _Test(text, holds, _close_below(mine, rest / divisor, quote.config))

    return test


def _even(what: str, parts: tuple[int, ...]) -> _Condition:
    """These quarters' CV is under ``steady_cv`` (``cv_q1_q2_q3``)."""

    def test(quote: _Quote, direction: DirectionAnalysis) -> _Test:
        limit = quote.threshold("steady_cv")
        cv = coefficient_of_variation(direction.chunks[list(parts)])
        if not math.isfinite(cv):  # no bytes there: "no data" is not "even"
            return _Test(f"{what} hold no bytes (no CV)", False, False)
        quote.derived("cv_" + "_".join(f"q{k}" for k in parts), cv)
        holds = cv < limit
        relation = "<" if holds else ">="
        verb = "are" if holds else "are not"
        text = f"{what} {verb} even (CV {_number(cv, limit)} {relation} {_number(limit)})"
        return _Test(text, holds, _close_below(cv, limit, quote.config))

    return test


_FIRST, _LAST, _MIDDLE, _ENDS = (
    "the first quarter",
    "the last quarter",
    "the middle two",
    "the first and last",
)
_TEMPORALITY_RULES: dict[str, tuple[_Condition, ...]] = {
    "on_start": (_more(_FIRST, (0,), "the other three", (1, 2, 3), "chunk_dominance"),),
    "on_end": (_more(_LAST, (3,), "the other three", (0, 1, 2), "chunk_dominance"),),
    "after_start": (
        _minor(_FIRST, (0,), "the other three", (1, 2, 3)),
        _even("the other three", (1, 2, 3)),
    ),
    "before_end": (
        _minor(_LAST, (3,), "the first three", (0, 1, 2)),
        _even("the first three", (0, 1, 2)),
    ),
    "after_start_before_end": (_more(_MIDDLE, (1, 2), _ENDS, (0, 3), "chunk_middle_ratio"),),
    "on_start_and_end": (
        _more(_ENDS, (0, 3), _MIDDLE, (1, 2), "chunk_middle_ratio"),
        _even(_ENDS, (0, 3)),
    ),
    "steady": (_even("the four quarters", (0, 1, 2, 3)),),
}


# --- periodicity (SPEC 3.4, 3.5)


def _periodicity(direction: DirectionAnalysis, answer: TraceResult, config: Config) -> list[Reason]:
    assert direction.verdict is not None  # a significant direction has every detector's result
    if direction.verdict["periodic"]:
        return [
            _periodic(direction, answer, config),
            *_magnitudes(direction.name, answer, config),
            *_busy(direction.name, answer, config, _bin_bound(direction)),
        ]
    return _not_periodic(direction, answer, config)


def _periodic(direction: DirectionAnalysis, answer: TraceResult, config: Config) -> Reason:
    name = direction.name
    base = f"{name}.periodicity"
    quote = _Quote(answer, config)
    period = quote.at(f"{base}.verdict.period")
    source = quote.at(f"{base}.verdict.source")
    if source == "fft":
        text = f"every {_seconds(period)} by the FFT alone ({_fft_figures(quote, base)})"
        text += (
            f", which rule {quote.threshold('verdict_rule')} accepts; mean shift: {_share_text(quote, base)}"
        )
        return quote.reason(f"{name}_periodic", True, "3.5", text)
    occurrences = quote.at(f"{base}.meanshift.operations.0.occurrences")
    heatmap = quote.at(f"{base}.meanshift.source") == "heatmap"
    what = "heatmap bursts" if heatmap else "phases"
    every = f"every {_seconds(period)}"
    if heatmap:  # a period finer than the bins: say how fine (SPEC 3.5)
        every += f" (+- {_seconds(quote.at(f'{base}.meanshift.operations.0.period_resolution'))})"
    assert direction.meanshift is not None  # a periodic mean shift verdict has its occurrences
    cycles = _cycles(direction.meanshift["occurrences"][0]["starts"], period)
    if cycles < occurrences:  # several bursts per cycle (DLIO 2110720: 2 per epoch)
        per = round(quote.at(f"{base}.meanshift.segments") / cycles)
        text = f"{quote.derived('cycles', cycles)} cycles of {per} {name} {what} {every} (mean shift: "
    else:
        text = f"{occurrences} {name} {what} {every} (mean shift: "
    text += f"{_share_text(quote, base)}; "
    if source == "both":
        text += f"FFT {_seconds(quote.at(f'{base}.fft.period'))} at {_sigma(quote, base)} agrees)"
    elif answer[name]["periodicity"]["fft"]["period"] is None:  # type: ignore[literal-required]
        text += "the FFT finds no peak)"
    else:
        text += f"the FFT's {_seconds(quote.at(f'{base}.fft.period'))} at {_sigma(quote, base)} is no period)"
    return quote.reason(f"{name}_periodic", True, "3.4", text)


def _cycles(starts: np.ndarray, period: float) -> int:
    """The cycles a periodic operation's occurrences span: one more than the intervals of
    over half a period (a shorter one is another burst of the same cycle; DLIO 2110720's
    last segment copies the previous one's length and joins the other burst's cluster)."""
    return 1 + int(np.count_nonzero(np.diff(starts) > period / 2))


def _sigma(quote: _Quote, base: str) -> str:
    return f"{_number(quote.at(f'{base}.fft.significance'))} sigma"


def _fft_figures(quote: _Quote, base: str) -> str:
    score, signal = quote.at(f"{base}.fft.score"), quote.at(f"{base}.fft.signal")
    return f"{_sigma(quote, base)}, score {_number(score)}, on its {signal}"


def _share_text(quote: _Quote, base: str) -> str:
    """Mean shift's segments in periodic clusters against the share SPEC 3.4 needs."""
    share = quote.at(f"{base}.meanshift.share")
    count = quote.at(f"{base}.meanshift.segments")
    needed = quote.threshold("periodic_segment_share")
    inside = quote.derived("periodic_segments", round(share * count))
    relation = "at least" if share >= needed else "under"
    shares = f"{_percent(share, needed)}, {relation} {_percent(needed)}"
    return f"{inside} of {count} segments in periodic clusters ({shares})"


def _magnitudes(name: str, answer: TraceResult, config: Config) -> list[Reason]:
    """The magnitude given, and a neighbour whose bound the period is close to."""
    found = []
    for k, magnitude in enumerate(_MAGNITUDES):
        quote = _Quote(answer, config)
        period = quote.at(f"{name}.periodicity.verdict.period")
        label = f"{name}_{magnitude}"
        given = label in answer["categories"]
        low = quote.threshold(_BOUNDS[k - 1]) if k else None
        high = quote.threshold(_BOUNDS[k]) if k < len(_BOUNDS) else None
        if given:
            parts = ([f"over {_seconds(low)}"] if low is not None else []) + (
                [f"at most {_seconds(high)}"] if high is not None else []
            )
            nearest = min((b for b in (low, high) if b is not None), key=lambda b: abs(b - period))
            text = f"period {_seconds(period, nearest)}, {' and '.join(parts)}"
            found.append(quote.reason(label, True, "3.4", text))
        elif high is not None and high < period and _close_below(period, high, config):
            text = f"period {_seconds(period, high)}, over {_seconds(high)}"
            found.append(quote.reason(label, False, "3.4", text))
        elif low is not None and period <= low and _close_above(period, low, config):
            text = f"period {_seconds(period, low)}, not over {_seconds(low)}"
            found.append(quote.reason(label, False, "3.4", text))
    return found


def _bin_bound(direction: DirectionAnalysis) -> str:
    """What bounds a busy fraction measured on heatmap bursts of two bins or less (SPEC 3.5):
    the bins cannot show an access shorter than one (a few ms of append in a 0.8 s bin)."""
    bursts, meanshift, verdict = direction.bursts, direction.meanshift, direction.verdict
    if bursts is None or meanshift is None or verdict is None:
        return ""
    if meanshift["source"] != "heatmap" or verdict["source"] == "fft":
        return ""
    kept = bursts.busy[~bursts.minor]
    if not len(kept) or small.median(kept) > 2 * bursts.bin_seconds:
        return ""
    width = _seconds(bursts.bin_seconds)
    return f" (an upper bound: each burst fills one or two {width} heatmap bins, however short its I/O)"


def _busy(name: str, answer: TraceResult, config: Config, bound: str = "") -> list[Reason]:
    """The busy-time labels given, or missed closely; ``bound``: what bounds the figure."""
    found = []
    for label, key, given_word, missed_word, close in (
        ("periodic_low_busy_time", "low_busy_max", "at most", "over", _close_below),
        ("periodic_high_busy_time", "high_busy_min", "at least", "under", _close_above),
    ):
        quote = _Quote(answer, config)
        busy = quote.at(f"{name}.periodicity.verdict.busy_fraction")
        limit = quote.threshold(key)
        full = f"{name}_{label}"
        given = full in answer["categories"]
        if given or close(busy, limit, config):
            word = given_word if given else missed_word
            source = answer[name]["periodicity"]["verdict"]["source"]  # type: ignore[literal-required]
            how = "of the FFT signal's time above its mean" if source == "fft" else "of each period"
            text = f"busy {_percent(busy, limit)} {how}, {word} {_percent(limit)}{bound}"
            found.append(quote.reason(full, given, "3.4", text))
    return found


def _not_periodic(direction: DirectionAnalysis, answer: TraceResult, config: Config) -> list[Reason]:
    """A period found and refused: by the verdict rule, by the rules on mean shift's
    clusters, or by a share of periodic segments just short of SPEC 3.4's."""
    name = direction.name
    label = f"{name}_periodic"
    base = f"{name}.periodicity"
    assert direction.meanshift is not None and direction.fft is not None
    quote = _Quote(answer, config)
    if direction.meanshift["periodic"] or direction.fft["periodic"]:
        if direction.fft["periodic"]:
            seen = f"the FFT's {_seconds(quote.at(f'{base}.fft.period'))} ({_fft_figures(quote, base)})"
        else:
            seen = f"mean shift's {_share_text(quote, base)}"
        text = f"{seen} is not enough alone for rule {quote.threshold('verdict_rule')}"
        return [quote.reason(label, False, "3.5", text)]
    share_text = _share_text(quote, base)
    refused = _refused_clusters(direction, quote, config)
    if refused:
        return [quote.reason(label, False, "3.4", f"mean shift finds {share_text}; refused: {refused}")]
    share = answer[name]["periodicity"]["meanshift"]["share"]  # type: ignore[literal-required]
    if direction.meanshift["operations"] and _close_above(share, config.periodic_segment_share, config):
        return [quote.reason(label, False, "3.4", f"mean shift finds {share_text}")]
    return []


def _refused_clusters(direction: DirectionAnalysis, quote: _Quote, config: Config) -> str:
    """The clusters of ``min_periodic_segments`` or more that the minimum period or the
    steady-pace rule refused, when together they would have filled the share of periodic
    segments (SPEC 3.4); "" when they would not (or mean shift saw the heatmap's bursts).

    Random same-size writes form several such clusters that only fill the share together.
    """
    assert direction.meanshift is not None
    found = direction.meanshift
    ids = found["segments"]["cluster"]
    count, merged = len(ids), direction.merged
    if found["source"] != "operations" or count != len(merged) or not count:
        return ""
    kept = {op["cluster"] for op in found["operations"]}
    durations, nbytes = found["segments"]["durations"], found["segments"]["bytes"]
    candidates = segments.cluster_operations(
        ids, merged.starts, merged.ends, durations, nbytes, segments.MeanShiftSettings.of(config)
    )
    refused = sorted(
        (op for op in candidates if op["cluster"] not in kept), key=lambda op: -op["occurrences"]
    )
    inside = sum(op["occurrences"] for op in found["operations"])
    if (
        not refused
        or inside + sum(op["occurrences"] for op in refused) < config.periodic_segment_share * count
    ):
        return ""
    clauses, pace = [], False
    for i, op in enumerate(refused[:_REFUSED_SHOWN]):
        size = quote.derived(f"refused_{i}_segments", op["occurrences"])
        every = quote.derived(f"refused_{i}_period", op["period"])
        head = f"{size} segments every {_seconds(every)}"
        minimum = quote.threshold("min_period_seconds")
        if every < minimum:
            clauses.append(f"{head}, faster than the {_seconds(minimum)} minimum period")
            continue
        regular = segments.regular_share(
            merged.starts[ids == op["cluster"]], meanshift_bandwidth=config.meanshift_bandwidth
        )
        if regular is None:
            clauses.append(f"{head}, at no steady pace (two start together)")
            continue
        needed = quote.threshold("periodic_regular_share")
        alike = _percent(quote.derived(f"refused_{i}_regular_share", regular), needed)
        clauses.append(f"{head}, at no steady pace ({alike} of its gaps alike, under {_percent(needed)})")
        pace = True
    if len(refused) > _REFUSED_SHOWN:
        more = quote.derived("refused_more_clusters", len(refused) - _REFUSED_SHOWN)
        rest = quote.derived(
            "refused_more_segments", sum(op["occurrences"] for op in refused[_REFUSED_SHOWN:])
        )
        clauses.append(f"and {more} more cluster{'s' if more > 1 else ''} of {rest} segments")
    text = "; ".join(clauses)
    if pace:
        factor = quote.derived("gap_factor", math.exp(config.meanshift_bandwidth))
        text += f" (alike: within a factor {_number(factor)} of the cluster's median gap)"
    return text


# --- metadata (SPEC 3.7)


def _metadata(analysis: TraceAnalysis, answer: TraceResult, config: Config) -> list[Reason]:
    per_second = analysis.requests_per_second
    peak_second = int(np.argmax(per_second)) if per_second.size else 0
    labels = analysis.metadata_labels
    found = []

    def quote_peak(quote: _Quote) -> str:
        peak = quote.at("metadata.peak_per_second")
        second = quote.derived("peak_second", peak_second)
        return f"peak {_number(peak)}/s at {second} s"

    high = _Quote(answer, config)
    peak = high.at("metadata.peak_per_second")
    limit = high.threshold("metadata_high_spike")
    if "metadata_high_spike" in labels or _close_above(peak, limit, config):
        given = "metadata_high_spike" in labels
        second = high.derived("peak_second", peak_second)
        word = "more than" if given else "not more than"
        text = f"{_number(peak, limit)} requests in the second at {second} s, {word} {_number(limit)}"
        found.append(high.reason("metadata_high_spike", given, "3.7", text))

    spikes = _Quote(answer, config)
    count = spikes.at("metadata.spikes")
    level = spikes.threshold("metadata_spike_level")
    needed = spikes.threshold("metadata_min_spikes")
    multiple = "metadata_multiple_spikes" in labels
    if multiple or _close_above(count, needed, config):
        word = "at least" if multiple else "fewer than"
        text = f"{count} seconds with >= {level} requests ({quote_peak(spikes)}), {word} {needed}"
        found.append(spikes.reason("metadata_multiple_spikes", multiple, "3.7", text))

    dense = _Quote(answer, config)
    mean = dense.at("metadata.mean_per_second")
    floor = dense.threshold("metadata_density_mean")
    count = dense.at("metadata.spikes")
    needed = dense.threshold("metadata_min_spikes")
    density = "metadata_high_density" in labels
    near = (count >= needed or _close_above(count, needed, config)) and (
        mean >= floor or _close_above(mean, floor, config)
    )
    if density or near:
        run_time = dense.at("job.run_time")
        mean_word = "at least" if mean >= floor else "under"
        spike_word = "at least" if count >= needed else "fewer than"
        text = (
            f"{_number(mean, floor)} requests per second on average over {_seconds(run_time)} "
            f"({mean_word} {_number(floor)}) and {count} spikes ({spike_word} {needed})"
        )
        found.append(dense.reason("metadata_high_density", density, "3.7", text))

    if "metadata_insignificant_load" in labels:
        quiet = _Quote(answer, config)
        text = (
            f"{quote_peak(quiet)}, not more than {_number(quiet.threshold('metadata_high_spike'))}; "
            f"{quiet.at('metadata.spikes')} seconds with >= {quiet.threshold('metadata_spike_level')} "
            f"requests, fewer than {quiet.threshold('metadata_min_spikes')}"
        )
        found.append(quiet.reason("metadata_insignificant_load", True, "3.7", text))
    return found


def as_text(found: Mapping[str, Any]) -> str:
    """A result object for people (``mosaic categorize --text``): the log and its labels,
    then a line per reason, ``+`` given and ``-`` close but not given; an eviction says why."""
    if found["status"] != "ok":
        detail = f": {found['detail']}" if found.get("detail") else ""
        return f"{found['file']}: evicted ({found['reason']}){detail}"
    lines = [f"{found['file']}: {' '.join(found['categories'])}"]
    lines += [f"  {'+' if r['given'] else '-'} {r['text']}  [SPEC {r['rule']}]" for r in found["reasons"]]
    return "\n".join(lines)
