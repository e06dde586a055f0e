"""Deduplication (SPEC 3.2): one representative per (user, application).

The paper keeps the heaviest run of each group, on the hypothesis that runs
of one application behave alike (it checked: 97 % of LAMMPS runs). Groups
arrive as a stream sorted by key (from the store), so only one group is in
memory at a time.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Run:
    """The facts of one valid log that deduplication needs."""

    file: str
    group_key: str
    total_bytes: float
    run_time: float


@dataclass(frozen=True, slots=True)
class Group:
    key: str
    runs: int
    representative: str  # file name of the heaviest run


def heaviness(run: Run) -> tuple[Any, ...]:
    """Sort key, smallest = heaviest: most bytes, then longest run, then first name."""
    return (-run.total_bytes, -run.run_time, run.file)


def representative(runs: Iterable[Run]) -> Run:
    return min(runs, key=heaviness)


def groups(runs_by_key: Iterable[Run]) -> Iterator[Group]:
    """One Group per key of a stream of runs sorted (or at least clustered) by key."""
    for key, clustered in itertools.groupby(runs_by_key, key=lambda run: run.group_key):
        members = list(clustered)
        yield Group(key, len(members), representative(members).file)
