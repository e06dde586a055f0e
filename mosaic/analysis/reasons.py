"""Why each label: one sentence per label of a trace, with the numbers that decided it.

:func:`explain` reads a :class:`~mosaic.analysis.categorize.TraceAnalysis`
(every intermediate is kept there) and never re-derives a rule: the labels
are the analysis' own, and each sentence quotes the figures the result
object reports, so a reason can never disagree with the categories.

A :class:`Reason`'s ``numbers`` name every number its ``text`` shows:

* a dotted path into the SPEC 4 result object (``"write.chunks_bytes.0"``,
  ``"write.periodicity.verdict.period"``, ``"metadata.spikes"``): the
  value at that path, exactly;
* ``"config.<field>"``: the threshold of :class:`~mosaic.config.Config`
  the rule compares with;
* a plain name (no dot): a figure computed from the two above or from the
  analysis' intermediates (a quarter's share of the bytes, a coefficient
  of variation, the second of the metadata peak).
"""

from __future__ import annotations

from typing import TypedDict

from mosaic.analysis.categorize import TraceAnalysis
from mosaic.analysis.labels import FAMILIES
from mosaic.config import Config


class Reason(TypedDict):
    """Why a label was given, or why a close one was not."""

    label: str  # the category given, or the one considered and not given
    given: bool
    family: str  # a key of labels.FAMILIES: "read_periodicity", "write_temporality", "metadata", ...
    rule: str  # the SPEC section it comes from, e.g. "3.4"
    text: str  # one sentence with the numbers that decided it
    numbers: dict[str, float | int | str]  # every number in text, by name (module docstring)


def explain(analysis: TraceAnalysis, config: Config) -> list[Reason]:
    """The reasons of a trace's labels, in the order of :data:`labels.FAMILIES`.

    ``config`` must be the one the analysis ran with (its thresholds are
    quoted). Every given label has exactly one reason with ``given=True``;
    labels not given appear (``given=False``) only when they were close.
    """
    families = {label: family for family, members in FAMILIES.items() for label in members}
    return [
        {"label": label, "given": True, "family": families[label], "rule": "", "text": label, "numbers": {}}
        for label in analysis.categories
    ]  # placeholder until the sentences land: the interface is what is fixed here
