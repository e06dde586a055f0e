"""Why each label: one sentence per label of a trace, with the numbers that decided it.

:func:`explain` reads a :class:`~mosaic.analysis.categorize.TraceAnalysis`
(every intermediate is kept there) and never re-derives a decision: whether
a label is given is the analysis' own answer, and each sentence quotes the
figures the result object reports, so a reason never disagrees with the
categories. Only the comparisons a sentence shows (a quarter's share
against the others', a CV) are recomputed from those figures. Sentences
name no configuration field: a threshold is quoted by its value, a verdict
rule by what it asks.

A :class:`Reason`'s ``numbers`` name every number its ``text`` shows:

* a dotted path into the SPEC 4 result object (``"write.chunks_bytes.0"``,
  ``"write.periodicity.verdict.period"``, ``"metadata.spikes"``): the
  value at that path, exactly;
* ``"config.<field>"``: the threshold of :class:`~mosaic.config.Config`
  the rule compares with;
* a plain name (no dot): a figure computed from the two above or from the
  analysis' intermediates (a quarter's share of the bytes, a coefficient
  of variation, the second of the metadata peak, the bytes MPI-IO records
  stand in for).

**Close.** A figure is near its threshold when it lies within
``Config.explain_close_margin`` (20 % by default) of it, relative to the
threshold, on either side. A reason's ``close`` is true when the label
turned on near figures:

* a label not given is explained (``given=False``, always ``close``) only
  when every condition it missed was near: a share of 0.70 against 75 %,
  4 spikes where 5 are needed, a CV of 0.28 against 0.25, 110 MB against
  the 100 MB of ``insignificant``, a period of 33 s against the 30 s bound
  of ``periodic_second``, mean-shift clusters every 0.85 s refused by the
  1 s minimum period that would have filled the share of periodic
  segments, an FFT at 4.2 sigma where the verdict rule asks 5 of it alone;
* a label given is ``close`` when one of the conditions it met was near
  (busy 75.2 % against the 75 % of high busy time, the middle quarters at
  82.4 % against 4 x the ends' 20 %), and its sentence says "close call";
  ``unclassified`` and the ``insignificant`` labels are close when a label
  they stand against was near.

For ``periodic`` the figures are mean shift's share of segments in periodic
clusters and the FFT's significance and score, judged by the verdict rule
in force (:data:`mosaic.analysis.verdict.RULES`): near means the rule's
answer changes when they all move by the margin. A rule that ignores a
detector's verdict (the FFT's under ``"meanshift"``) has no figure to be
near. Not explained: a direction whose heatmap bursts mean shift also tried
(their clusters are not kept when they are not periodic), and the FFT's own
gates when it finds no period.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypedDict

import numpy as np

from mosaic.analysis import bursts as heatmap_bursts
from mosaic.analysis import metadata, segments, verdict
from mosaic.analysis.categorize import DirectionAnalysis, TraceAnalysis, TraceResult, analyze, result
from mosaic.analysis.labels import ALL_LABELS, FAMILIES
from mosaic.analysis.peak_files import peak_files
from mosaic.analysis.spectrum import FFTPeriodicity
from mosaic.analysis.temporality import coefficient_of_variation
from mosaic.config import Config
from mosaic.trace import Trace

Number = float | int | str
_ORDER = {label: i for i, label in enumerate(ALL_LABELS)}
_FAMILY = {label: family for family, members in FAMILIES.items() for label in members}
_MAGNITUDES = ("periodic_second", "periodic_minute", "periodic_hour", "periodic_day_or_more")
_BOUNDS = ("period_second_max", "period_minute_max", "period_hour_max")
_REFUSED_SHOWN = 3  # refused clusters a sentence details, the largest first; the rest are counted
_LOSSY = ("POSIX", "STDIO")  # modules whose lost records take bytes and requests with them


class Reason(TypedDict):
    """Why a label was given, or why a close one was not."""

    label: str  # the category given, or the one considered and not given
    given: bool
    close: bool  # decided by figures near their thresholds (module docstring); always so when not given
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
        found += _temporality(direction, analysis.trace, answer, config, moved)
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
        """The result object's value at a dotted path (list items by index), quoted."""
        value = self.numbers[path] = self.peek(path)
        return value

    def peek(self, path: str) -> Any:
        """The value at a dotted path, not quoted (what decides a sentence's wording)."""
        value: Any = self.answer
        for part in path.split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        return value

    def threshold(self, name: str) -> Any:
        value = getattr(self.config, name)
        self.numbers[f"config.{name}"] = value
        return value

    def derived(self, name: str, value: Number) -> Any:
        self.numbers[name] = value
        return value

    def reason(self, label: str, given: bool, rule: str, text: str, close: bool = True) -> Reason:
        """A reason; ``close`` matters only for a given label (one not given is shown only when close)."""
        words = label.replace("_", " ", 1)
        head = (words + " (close call)" if close else words) if given else words + " not given"
        return {
            "label": label,
            "given": given,
            "close": close or not given,
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


def _count(n: int, noun: str) -> str:
    """ "1 second", "0 seconds", "43 seconds"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


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


def _near(value: float, threshold: float, config: Config) -> bool:
    """``value`` lies within the close margin of ``threshold``, relative to it, either side."""
    return abs(value - threshold) <= config.explain_close_margin * abs(threshold)


def _distance(value: float, threshold: float) -> float:
    """How far ``value`` is from ``threshold``, relative to it (infinite from a threshold of 0)."""
    if value == threshold:
        return 0.0
    return abs(value - threshold) / abs(threshold) if threshold else math.inf


# --- what a log lost (SPEC 2): said where the bytes or requests it took away are quoted


def _partial(trace: Trace, quote: _Quote, name: str | None) -> str:
    """ "; a partial log: ..." for a log whose modules ran out of record memory, else "".

    ``name``: the direction whose bytes the sentence quotes (the share MPI-IO
    stand-ins carry is said), or None for metadata requests.
    """
    modules = [str(m) for m in trace.info.get("partial_modules", [])]
    if not trace.partial or not modules:
        return ""
    lossy = [m for m in modules if m in _LOSSY]
    shown = lossy or modules
    plural = "s" if len(shown) > 1 else ""
    head = f"; a partial log: Darshan's {' and '.join(shown)} module{plural} ran out of record memory"
    if not lossy:  # DXT alone: the files it traced count by their POSIX records, requests as ever
        return f"{head}, so the files traced there count by their whole-file records" if name else ""
    stood_in = trace.info.get("stand_in_bytes", {}).get(name, 0.0) if name else 0.0
    if stood_in > 0:
        part, total = _bytes(quote.derived("stand_in_bytes", stood_in)), _bytes(quote.at(f"{name}.bytes"))
        return f"{head}, and {part} of the {total} are inferred from MPI-IO records standing in for lost ones"
    return f"{head}, so the {'bytes' if name else 'requests'} of the files it lost are missing"


# --- temporality (SPEC 3.6)


class _Test(NamedTuple):
    """One condition of a temporality rule: its sentence piece, whether it holds, and its
    figure's distance to the threshold (relative; infinite when there is no figure)."""

    text: str
    holds: bool
    distance: float


_Condition = Callable[[_Quote, DirectionAnalysis], _Test]


def _uncounted(trace: Trace) -> list[str]:
    """The modules of the log whose traffic is not counted: DFS and DAOS (SPEC 2)."""
    return [name for name in ("DFS", "DAOS") if name in trace.info.get("modules", ())]


def _moved(trace: Trace) -> str:
    """How a direction's bytes were counted: "moved", or through which modules when the log
    also has DFS or DAOS records, whose bytes are not counted (SPEC 2: the real ior-DFS log
    moved 16.8 MB each way through DFS, and "0 B moved" read as no I/O)."""
    uncounted = _uncounted(trace)
    if not uncounted:
        return "moved"
    return f"through POSIX, MPI-IO and STDIO ({' and '.join(uncounted)} not counted)"


def _requests_counted(trace: Trace) -> str:
    """ "; requests of POSIX and STDIO only (...)" when the log has DFS or DAOS records, whose
    opens are not counted either (ior-DFS: 32 DFS opens and 2 lookups, "peak 0/s"), else ""."""
    uncounted = _uncounted(trace)
    return f"; requests of POSIX and STDIO only ({' and '.join(uncounted)} not counted)" if uncounted else ""


def _temporality(
    direction: DirectionAnalysis, trace: Trace, answer: TraceResult, config: Config, moved: str
) -> list[Reason]:
    name = direction.name
    insignificant = f"{name}_insignificant"
    margin = config.explain_close_margin
    quote = _Quote(answer, config)
    total = quote.at(f"{name}.bytes")
    limit = quote.threshold("significant_bytes")
    note = _partial(trace, quote, name)
    near = _near(total, limit, config)
    if not direction.significant:
        text = f"{_bytes(total, limit)} {moved}, under {_bytes(limit)}{note}"
        return [quote.reason(insignificant, True, "3.6", text, near)]
    found: list[Reason] = []
    if near:
        text = f"{_bytes(total, limit)} {moved}, not under {_bytes(limit)}{note}"
        found.append(quote.reason(insignificant, False, "3.6", text))
    nearest: tuple[float, str] | None = None
    for rule, conditions in _TEMPORALITY_RULES.items():
        label = f"{name}_{rule}"
        quote = _Quote(answer, config)
        quarters = _quarters(quote, name)
        tests = [condition(quote, direction) for condition in conditions]
        given = label in direction.labels
        shown = tests if given else [t for t in tests if not t.holds]
        text = f"{quarters}; " + ", and ".join(t.text for t in shown) + _partial(trace, quote, name)
        if given:  # a close call when a condition it met was near
            found.append(quote.reason(label, True, "3.6", text, min(t.distance for t in tests) <= margin))
            continue
        distance = max(t.distance for t in shown)  # explained when every condition it missed was near
        if nearest is None or distance < nearest[0]:
            nearest = (distance, rule)
        if distance <= margin:
            found.append(quote.reason(label, False, "3.6", text))
    unclassified = f"{name}_unclassified"
    if unclassified in direction.labels:
        assert nearest is not None  # unclassified: every rule missed
        distance, rule = nearest
        quote = _Quote(answer, config)
        quarters = _quarters(quote, name)
        missed = [t for t in (c(quote, direction) for c in _TEMPORALITY_RULES[rule]) if not t.holds]
        text = (
            f"{quarters} match none of SPEC 3.6's rules; the nearest, {rule}, misses: "
            + ", and ".join(t.text for t in missed)
            + _partial(trace, quote, name)
        )
        found.append(quote.reason(unclassified, True, "3.6", text, distance <= margin))
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
        return _Test(text, holds, _distance(mine, factor * rest))

    return test


def _minor(part: str, parts: tuple[int, ...], other: str, others: tuple[int, ...]) -> _Condition:
    """``part`` holds under 1/``chunk_minor_divisor`` of ``other`` (after_start, before_end)."""

    def test(quote: _Quote, direction: DirectionAnalysis) -> _Test:
        mine, rest = _share(quote, parts), _share(quote, others)
        divisor = quote.threshold("chunk_minor_divisor")
        holds = mine < rest / divisor
        verb = "is" if holds else "is not"
        text = f"{part} ({_percent(mine)}) {verb} under 1/{_number(divisor)} of {other} ({_percent(rest)})"
        return _Test(text, holds, _distance(mine, rest / divisor))

    return test


def _even(what: str, parts: tuple[int, ...]) -> _Condition:
    """These quarters' CV is under ``steady_cv`` (``cv_q1_q2_q3``): what the sentence
    states is the CV, not that the quarters are equal (22/22/22/33 % is steady)."""

    def test(quote: _Quote, direction: DirectionAnalysis) -> _Test:
        limit = quote.threshold("steady_cv")
        cv = coefficient_of_variation(direction.chunks[list(parts)])
        if not math.isfinite(cv):  # no bytes there: "no data" is not "even"
            return _Test(f"{what} hold no bytes (no CV)", False, math.inf)
        quote.derived("cv_" + "_".join(f"q{k}" for k in parts), cv)
        holds = cv < limit
        text = (
            f"the CV of {what} is {_number(cv, limit)}, {'under' if holds else 'not under'} {_number(limit)}"
        )
        return _Test(text, holds, _distance(cv, limit))

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
            *_busy(direction, answer, config),
        ]
    return _not_periodic(direction, answer, config)


def _accepted(config: Config, meanshift: bool, fft: FFTPeriodicity, scale: float) -> bool:
    """The verdict rule's answer to mean shift's verdict ``meanshift`` and the FFT's result
    with its significance and score times ``scale`` (the margin: module docstring)."""
    scaled: FFTPeriodicity = {
        **fft,
        "score": fft["score"] * scale,
        "significance": fft["significance"] * scale,
    }
    return verdict.RULES[config.verdict_rule](meanshift, scaled, verdict.VerdictSettings.of(config))


def _meanshift_periodic(direction: DirectionAnalysis, scale: float, config: Config) -> bool:
    """Mean shift's verdict with its share of periodic segments times ``scale``."""
    found = direction.meanshift
    assert found is not None
    return bool(found["operations"]) and found["share"] * scale >= config.periodic_segment_share


def _periodic(direction: DirectionAnalysis, answer: TraceResult, config: Config) -> Reason:
    name = direction.name
    base = f"{name}.periodicity"
    assert direction.fft is not None
    lower = 1 / (1 + config.explain_close_margin)  # every figure a margin lower: still periodic?
    close = not _accepted(config, _meanshift_periodic(direction, lower, config), direction.fft, lower)
    quote = _Quote(answer, config)
    period = quote.at(f"{base}.verdict.period")
    source = quote.at(f"{base}.verdict.source")
    if source == "fft":
        text = (
            f"every {_seconds(period)} by the FFT alone ({_fft_figures(quote, base)}), "
            f"enough: {_fft_needs(quote)}; mean shift: {_share_text(quote, base)}"
        )
        return quote.reason(f"{name}_periodic", True, "3.5", text, close)
    text = f"{_series(quote, direction)}; mean shift: {_share_text(quote, base)}{_counted(quote, name)}; "
    text += _fft_clause(quote, base, agrees=source == "both")
    return quote.reason(f"{name}_periodic", True, "3.4", text, close)


def _series(quote: _Quote, direction: DirectionAnalysis) -> str:
    """The dominant periodic operation, and beside it every other one: never one series'
    occurrences with another's period (SPEC 3.4: the dominant moves the most bytes)."""
    name = direction.name
    base = f"{name}.periodicity.meanshift"
    heatmap = quote.at(f"{base}.source") == "heatmap"
    what = "heatmap bursts" if heatmap else "phases"
    operations = quote.peek(f"{name}.periodicity.meanshift.operations")
    first = f"{base}.operations.0"
    period = quote.at(f"{name}.periodicity.verdict.period")
    every = _every(quote, first, period, heatmap)
    occurrences = quote.at(f"{first}.occurrences")
    assert direction.meanshift is not None  # a periodic mean shift verdict has its occurrences
    cycles = _cycles(direction.meanshift["occurrences"][0]["starts"], period)
    if cycles < occurrences:  # several bursts per cycle (DLIO 2110720: 2 per epoch)
        per = round(quote.at(f"{base}.segments") / cycles)
        text = f"{quote.derived('cycles', cycles)} cycles of {per} {name} {what} {every}"
    else:
        text = f"{occurrences} {name} {what} {every}"
    if len(operations) == 1:
        return text
    text += f", {_bytes(quote.at(f'{first}.bytes_per_occurrence'))} each, the most bytes"
    if operations[0]["segmentation"] == "by_volume":
        text += f" (found among the {name}s of that size alone)"
    others = [
        f"{quote.at(f'{base}.operations.{k}.occurrences')} "
        f"{_every(quote, f'{base}.operations.{k}', quote.at(f'{base}.operations.{k}.period'), heatmap)}, "
        f"{_bytes(quote.at(f'{base}.operations.{k}.bytes_per_occurrence'))} each"
        for k in range(1, len(operations))
    ]
    return f"{text}; beside them {' and '.join(others)}"


def _every(quote: _Quote, operation: str, period: float, heatmap: bool) -> str:
    """ "every 8 s", and for heatmap bursts how fine the period is (SPEC 3.5: a period finer
    than the bins), each series its own (DLIO 2110720's second bursts: 7.73 +- 0.267 s)."""
    every = f"every {_seconds(period)}"
    if heatmap:
        every += f" (+- {_seconds(quote.at(f'{operation}.period_resolution'))})"
    return every


def _counted(quote: _Quote, name: str) -> str:
    """Which series fill the share, when one does not (a series found by volume, SPEC 3.4)."""
    operations = quote.peek(f"{name}.periodicity.meanshift.operations")
    if all(op["segmentation"] == "all" for op in operations):
        return ""
    periods = [_seconds(op["period"]) for op in operations if op["segmentation"] == "all"]
    return f", all of the {' and '.join(periods)} series" if periods else ""


def _fft_clause(quote: _Quote, base: str, agrees: bool) -> str:
    """What the FFT says beside mean shift's period."""
    if quote.peek(f"{base}.fft.period") is None:
        return "the FFT finds no peak"
    period = _seconds(quote.at(f"{base}.fft.period"))
    sigma = _sigma(quote, base)
    if agrees:
        return (
            f"FFT {period} at {sigma} agrees" if sigma else f"FFT {period} agrees, not judged against chance"
        )
    if sigma:
        return f"the FFT's {period} at {sigma} is no period"
    return f"the FFT's strongest peak, {period}, could not be judged against chance"


def _cycles(starts: np.ndarray, period: float) -> int:
    """The cycles a periodic operation's occurrences span: one more than the intervals of
    over half a period (a shorter one is another burst of the same cycle; DLIO 2110720's
    last segment copies the previous one's length and joins the other burst's cluster)."""
    return 1 + int(np.count_nonzero(np.diff(starts) > period / 2))


def _sigma(quote: _Quote, base: str) -> str:
    """ "2.05 sigma", or "" when the FFT could not judge its peak (a significance of 0:
    too few independent samples at the period's lag, or no correlation to test)."""
    significance = quote.at(f"{base}.fft.significance")
    return f"{_number(significance)} sigma" if significance > 0 else ""


def _fft_figures(quote: _Quote, base: str) -> str:
    score, signal = quote.at(f"{base}.fft.score"), quote.at(f"{base}.fft.signal")
    sigma = _sigma(quote, base) or "not judged against chance"
    return f"{sigma}, score {_number(score)}, on its {signal}"


def _fft_needs(quote: _Quote) -> str:
    """What the verdict rule in force asks of the FFT alone, in words (SPEC 3.5)."""
    rule = quote.config.verdict_rule
    if rule in ("meanshift", "both"):
        return "the FFT never decides alone"
    if rule in ("fft", "meanshift_or_fft"):
        return "any period the FFT finds is enough"
    if rule == "meanshift_or_confident_fft":
        return "the FFT alone needs a single candidate period"
    if rule == "meanshift_or_scored_fft":
        return f"the FFT alone needs a score of at least {_number(quote.threshold('verdict_fft_min_score'))}"
    sigmas = f"at least {_number(quote.threshold('verdict_fft_min_significance'))} sigma"
    if rule == "meanshift_or_strong_fft":
        strong = _number(quote.threshold("verdict_fft_strong_min_significance"))
        score = _number(quote.threshold("verdict_fft_min_score"))
        return f"the FFT alone needs {sigmas}, or {strong} with a score of at least {score}"
    return f"the FFT alone needs {sigmas}"  # the significant FFT's rules


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
            found.append(quote.reason(label, True, "3.4", text, _near(period, nearest, config)))
        elif high is not None and high < period and _near(period, high, config):
            text = f"period {_seconds(period, high)}, over {_seconds(high)}"
            found.append(quote.reason(label, False, "3.4", text))
        elif low is not None and period <= low and _near(period, low, config):
            text = f"period {_seconds(period, low)}, not over {_seconds(low)}"
            found.append(quote.reason(label, False, "3.4", text))
    return found


def _bin_bound(direction: DirectionAnalysis, name: str) -> str:
    """What bounds a busy fraction measured on heatmap bursts (SPEC 3.5): the time the job
    spent in the direction's calls when it cut the bins' figure (docs/method.md 3.5), else,
    for bursts of two bins or less, the bins (they cannot show an access shorter than one:
    a few ms of append in a 0.8 s bin)."""
    bursts, meanshift, verdict = direction.bursts, direction.meanshift, direction.verdict
    if bursts is None or meanshift is None or verdict is None:
        return ""
    if meanshift["source"] != "heatmap" or verdict["source"] == "fft":
        return ""
    width = _seconds(bursts.bin_seconds)
    if bursts.bound is not None:
        bins, spent = bursts.bound
        doing = "reading" if name == "read" else "writing"
        was = _percent(float(verdict["busy_fraction"] or 0.0) * bins / spent)
        spent_text = f"the {_seconds(spent)} the job spent {doing}, its slowest rank's path"
        return f" (bounded by {spent_text}: its {width} heatmap bins gave {was})"
    if not heatmap_bursts.coarse(bursts.busy[~bursts.minor], bursts.bin_seconds):
        return ""
    return f" (an upper bound: each burst fills one or two {width} heatmap bins, however short its I/O)"


def _busy(direction: DirectionAnalysis, answer: TraceResult, config: Config) -> list[Reason]:
    """The busy-time labels given, or missed closely, with what bounds the figure
    (:func:`_bin_bound`) and what it is a share of (:func:`_busy_of`)."""
    name = direction.name
    bound = _bin_bound(direction, name)
    found = []
    for label, key, given_word, missed_word in (
        ("periodic_low_busy_time", "low_busy_max", "at most", "over"),
        ("periodic_high_busy_time", "high_busy_min", "at least", "under"),
    ):
        quote = _Quote(answer, config)
        busy = quote.at(f"{name}.periodicity.verdict.busy_fraction")
        limit = quote.threshold(key)
        full = f"{name}_{label}"
        given = full in answer["categories"]
        near = _near(busy, limit, config)
        if given or near:
            word = given_word if given else missed_word
            text = (
                f"busy {_percent(busy, limit)} {_busy_of(direction, quote)}, {word} {_percent(limit)}{bound}"
            )
            found.append(quote.reason(full, given, "3.4", text, near))
    return found


def _busy_of(direction: DirectionAnalysis, quote: _Quote) -> str:
    """What a busy fraction is a share of: each period, the FFT signal's time, or, when a
    cycle holds several bursts of the dominant operation's cluster, each segment (SPEC 3.4:
    operation duration / segment duration), which the cycle's next burst cuts short (DLIO
    2110720: 62.3 % of the 4.0-5.6 s to its second burst, not of the 8 s epoch)."""
    name = direction.name
    if quote.peek(f"{name}.periodicity.verdict.source") == "fft":
        return "of the FFT signal's time above its mean"
    assert direction.meanshift is not None  # a mean shift verdict has its occurrences
    occurrences = quote.peek(f"{name}.periodicity.meanshift.operations.0.occurrences")
    period = quote.peek(f"{name}.periodicity.verdict.period")
    if _cycles(direction.meanshift["occurrences"][0]["starts"], period) < occurrences:
        return "of each segment, from a burst to the next of its cycle (not of the period)"
    return "of each period"


def _not_periodic(direction: DirectionAnalysis, answer: TraceResult, config: Config) -> list[Reason]:
    """A period found and refused by the verdict rule, by the rules on mean shift's
    clusters, or a share of periodic segments just short of SPEC 3.4's: each only when
    the figures that refused it were near (module docstring)."""
    name = direction.name
    label = f"{name}_periodic"
    base = f"{name}.periodicity"
    assert direction.meanshift is not None and direction.fft is not None
    fft = direction.fft
    higher = 1 / (1 - config.explain_close_margin)  # every figure a margin higher: periodic then?
    meanshift_counts = _accepted(config, True, fft, higher)  # the rule takes mean shift's verdict
    quote = _Quote(answer, config)
    if fft["periodic"] and _accepted(config, False, fft, higher):
        seen = f"the FFT's {_seconds(quote.at(f'{base}.fft.period'))} ({_fft_figures(quote, base)})"
        return [quote.reason(label, False, "3.5", f"{seen} is not enough alone: {_fft_needs(quote)}")]
    if _meanshift_periodic(direction, 1.0, config):
        if not meanshift_counts:
            return []
        minimum = _number(quote.threshold("fft_min_score"))
        text = (
            f"mean shift's {_share_text(quote, base)} counts only where the FFT's score is at least "
            f"{minimum}, and it is {_number(quote.at(f'{base}.fft.score'))}"
        )
        return [quote.reason(label, False, "3.5", text)]
    if not meanshift_counts:
        return []
    share_text = _share_text(quote, base)
    refused = _refused_clusters(direction, quote, config)
    if refused:
        return [quote.reason(label, False, "3.4", f"mean shift finds {share_text}; refused: {refused}")]
    if _meanshift_periodic(direction, higher, config):
        return [quote.reason(label, False, "3.4", f"mean shift finds {share_text}")]
    return []


def _refused_clusters(direction: DirectionAnalysis, quote: _Quote, config: Config) -> str:
    """The clusters of ``min_periodic_segments`` or more that the minimum period or the
    steady-pace rule refused by a near figure (a period or a share of alike gaps within the
    margin), when with the periodic ones they fill the share of periodic segments within the
    margin too (SPEC 3.4); "" otherwise (or when mean shift saw the heatmap's bursts).

    Same-size writes at a nearly steady pace form several such clusters that only fill the
    share together.
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
    minimum, alike = config.min_period_seconds, config.periodic_regular_share
    refused = []
    for op in sorted(
        (op for op in candidates if op["cluster"] not in kept), key=lambda op: -op["occurrences"]
    ):
        regular = segments.regular_share(
            merged.starts[ids == op["cluster"]], meanshift_bandwidth=config.meanshift_bandwidth
        )
        fast, unsteady = op["period"] < minimum, regular is None or regular < alike
        if (not fast or _near(op["period"], minimum, config)) and (
            not unsteady or (regular is not None and _near(regular, alike, config))
        ):
            refused.append((op, regular if unsteady else None))
    inside = sum(op["occurrences"] for op in found["operations"])
    needed = config.periodic_segment_share * count * (1 - config.explain_close_margin)
    if not refused or inside + sum(op["occurrences"] for op, _ in refused) < needed:
        return ""
    clauses = []
    for i, (op, regular) in enumerate(refused[:_REFUSED_SHOWN]):
        size = quote.derived(f"refused_{i}_segments", op["occurrences"])
        every = quote.derived(f"refused_{i}_period", op["period"])
        why = []
        if every < minimum:
            why.append(f"faster than the {_seconds(quote.threshold('min_period_seconds'))} minimum period")
        if regular is not None:
            share = _percent(quote.derived(f"refused_{i}_regular_share", regular), alike)
            wanted = _percent(quote.threshold("periodic_regular_share"))
            why.append(f"at no steady pace ({share} of its gaps alike, under {wanted})")
        clauses.append(f"{size} segments every {_seconds(every, minimum)}, {' and '.join(why)}")
    if len(refused) > _REFUSED_SHOWN:
        more = quote.derived("refused_more_clusters", len(refused) - _REFUSED_SHOWN)
        rest = quote.derived(
            "refused_more_segments", sum(op["occurrences"] for op, _ in refused[_REFUSED_SHOWN:])
        )
        clauses.append(f"and {more} more cluster{'s' if more > 1 else ''} of {rest} segments")
    text = "; ".join(clauses)
    if "steady pace" in text:
        factor = quote.derived("gap_factor", math.exp(config.meanshift_bandwidth))
        text += f" (alike: within a factor {_number(factor)} of the cluster's median gap)"
    return text


# --- metadata (SPEC 3.7)


def _metadata(analysis: TraceAnalysis, answer: TraceResult, config: Config) -> list[Reason]:
    per_second = analysis.requests_per_second
    peak_second = int(np.argmax(per_second)) if per_second.size else 0
    labels = analysis.metadata_labels
    counted = _requests_counted(analysis.trace)
    found = []

    def quote_peak(quote: _Quote) -> str:
        peak = quote.at("metadata.peak_per_second")
        second = quote.derived("peak_second", peak_second)
        return f"peak {_number(peak)}/s at {second} s"

    high = _Quote(answer, config)
    peak = high.at("metadata.peak_per_second")
    limit = high.threshold("metadata_high_spike")
    peak_near = _near(peak, limit, config)
    if "metadata_high_spike" in labels or peak_near:
        given = "metadata_high_spike" in labels
        second = high.derived("peak_second", peak_second)
        word = "more than" if given else "not more than"
        text = f"{_number(peak, limit)} requests in the second at {second} s, {word} {_number(limit)}"
        text += _behind(analysis, high, [peak_second], "peak", config)
        found.append(
            high.reason(
                "metadata_high_spike",
                given,
                "3.7",
                text + _partial(analysis.trace, high, None) + counted,
                peak_near,
            )
        )

    spikes = _Quote(answer, config)
    count = spikes.at("metadata.spikes")
    level = spikes.threshold("metadata_spike_level")
    needed = spikes.threshold("metadata_min_spikes")
    multiple = "metadata_multiple_spikes" in labels
    count_near = _near(count, needed, config)
    if multiple or count_near:
        word = "at least" if multiple else "fewer than"
        text = f"{_count(count, 'second')} with >= {level} requests ({quote_peak(spikes)}), {word} {needed}"
        seconds = metadata.spike_seconds(per_second, metadata_spike_level=config.metadata_spike_level)
        text += _behind(analysis, spikes, seconds.tolist(), "spike", config)
        found.append(
            spikes.reason(
                "metadata_multiple_spikes",
                multiple,
                "3.7",
                text + _partial(analysis.trace, spikes, None) + counted,
                count_near,
            )
        )

    dense = _Quote(answer, config)
    mean = dense.at("metadata.mean_per_second")
    floor = dense.threshold("metadata_density_mean")
    count = dense.at("metadata.spikes")
    needed = dense.threshold("metadata_min_spikes")
    density = "metadata_high_density" in labels
    mean_near = _near(mean, floor, config)
    if density or ((count >= needed or count_near) and (mean >= floor or mean_near)):
        run_time = dense.at("job.run_time")
        mean_word = "at least" if mean >= floor else "under"
        spike_word = "at least" if count >= needed else "fewer than"
        text = (
            f"{_number(mean, floor)} requests per second on average over {_seconds(run_time)} "
            f"({mean_word} {_number(floor)}) and {count} spikes ({spike_word} {needed})"
        )
        text += _partial(analysis.trace, dense, None) + counted
        found.append(dense.reason("metadata_high_density", density, "3.7", text, mean_near or count_near))

    if "metadata_insignificant_load" in labels:
        quiet = _Quote(answer, config)
        text = (
            f"{quote_peak(quiet)}, not more than {_number(quiet.threshold('metadata_high_spike'))}; "
            f"{_count(quiet.at('metadata.spikes'), 'second')} with "
            f">= {quiet.threshold('metadata_spike_level')} requests, "
            f"fewer than {quiet.threshold('metadata_min_spikes')}"
        )
        text += _partial(analysis.trace, quiet, None) + counted
        found.append(quiet.reason("metadata_insignificant_load", True, "3.7", text, peak_near or count_near))
    return found


def _behind(analysis: TraceAnalysis, quote: _Quote, seconds: list[int], what: str, config: Config) -> str:
    """ "; the files behind the peak: FILE (N requests, S %), ... and K more files": those with
    the most requests in the peak second (``what`` "peak") or in every spike second together
    ("spike": "the files behind the 43 spikes"), from :mod:`~mosaic.analysis.peak_files`;
    "" for none. Their figures are quoted as ``{what}_file_K_...`` and ``{what}_files_others``."""
    behind = peak_files(
        analysis.trace, seconds, config.explain_peak_files, metadata_seeks=config.metadata_seeks
    )
    parts = []
    for rank, file in enumerate(behind["files"], 1):
        quote.derived(f"{what}_file_{rank}_record_id", file["record_id"])
        requests = _number(quote.derived(f"{what}_file_{rank}_requests", file["requests"]))
        share = _percent(quote.derived(f"{what}_file_{rank}_share", file["share"]))
        parts.append(f"{file['name']} ({requests} requests, {share})")
    if not parts:
        return ""
    if behind["others"]:
        more = quote.derived(f"{what}_files_others", behind["others"])
        parts[-1] += f" and {more} more file{'s' if more > 1 else ''}"
    where = "the peak" if what == "peak" else f"the {len(seconds)} spike{'s' if len(seconds) > 1 else ''}"
    return f"; the files behind {where}: {', '.join(parts)}"


def as_text(found: Mapping[str, Any]) -> str:
    """A result object for people (``mosaic categorize --text``): the log and its labels,
    then a line per reason, ``+`` given and ``-`` close but not given; an eviction says why."""
    if found["status"] != "ok":
        detail = f": {found['detail']}" if found.get("detail") else ""
        return f"{found['file']}: evicted ({found['reason']}){detail}"
    lines = [f"{found['file']}: {' '.join(found['categories'])}"]
    lines += [f"  {'+' if r['given'] else '-'} {r['text']}  [SPEC {r['rule']}]" for r in found["reasons"]]
    return "\n".join(lines)
