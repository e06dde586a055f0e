"""The store's applications as a list: filtered, sorted and paged (`mosaic apps`,
``GET /v1/applications`` without ``app``).

After `mosaic run` the (uid, application) pairs a lookup needs were only
inside ``traces.jsonl``; this is the index of them. Each line carries what
the lookup's profile says first (runs, the heaviest run's bytes, label
shares, the period class) without the spreads:

* SQL filters, sorts and pages the groups (``applications`` joined with the
  profile counters), so only a page's rows become Python objects;
* label shares and the period direction come from the label counters, as
  :func:`mosaic.corpus.profiles.profile` derives them;
* the period class needs the median period of the group's periodic runs:
  read from their packed numbers for the page's groups (every matching group
  when sorting by it), the medians taken for all groups at once in numpy,
  rounded as ``np.nanquantile`` rounds them so each equals the lookup's.

On 4,000 groups of 5 runs: ~12-25 ms a page, ~130 ms sorted by period class
(every run's numbers read); a lookup of one group ~0.5-1 ms.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from typing_extensions import TypedDict

from mosaic.analysis.labels import ALL_LABELS
from mosaic.corpus import profiles
from mosaic.directions import DIRECTIONS

PROFILED = "coalesce(g.runs, 0)"  # runs behind a group's profile
# Sort keys besides a label's name (its share of runs); every key but app and uid
# lists the largest first, and a group without the value (no period class) last.
SORT_KEYS = ("runs", "bytes", "period_class", "last_seen", "app", "uid")
ASCENDING = ("app", "uid")
DEFAULT_LIMIT = 50
MAX_LIMIT = 1000  # one page: a year holds ~38,000 groups
MAX_OFFSET = (1 << 63) - 1  # SQLite's OFFSET is an int64: a larger one overflowed into a 500


@dataclass(frozen=True)
class Filters:
    """Which applications, in which order, which page."""

    uid: int | None = None
    match: str | None = None
    """A substring of the application (case-sensitive, as paths are)."""
    label: str | None = None
    """Only groups with at least one profiled run carrying this label."""
    periodic: bool | None = None
    """True: only groups with a period class (a direction periodic in at least
    profile_min_periodic_share of their runs); False: only groups without."""
    sort: str = "runs"
    reverse: bool = False
    """The order flipped; ties stay in (uid, application) order."""
    offset: int = 0
    limit: int = DEFAULT_LIMIT
    sensitive: bool | None = None
    """True: only groups whose contention label (SPEC 3.11) is ``sensitive``; False: only others."""
    aggressor: bool | None = None
    """True: only groups with an aggressor trait (n1, metadata, bandwidth, small_requests)."""

    def __post_init__(self) -> None:
        if self.sort not in SORT_KEYS and self.sort not in ALL_LABELS:
            raise ValueError(f"sort by {self.sort!r}: choose from {', '.join(SORT_KEYS)} or a label")
        if self.label is not None and self.label not in ALL_LABELS:
            raise ValueError(f"label {self.label!r}: not a label (see mosaic.analysis.labels)")
        if not 0 <= self.offset <= MAX_OFFSET or not 1 <= self.limit <= MAX_LIMIT:
            raise ValueError(f"0 <= offset <= {MAX_OFFSET} and 1 <= limit <= {MAX_LIMIT}")


class ListedApplication(TypedDict):
    """One (uid, application) group: what its lookup's profile says first."""

    uid: int
    application: str
    runs: int
    """Valid runs stored for the group."""
    profile_runs: int
    """Categorized runs behind the label shares and the period class (0: no profile)."""
    heaviest_bytes: float
    """Bytes read and written by the group's heaviest run."""
    last_seen: str | None
    categories: list[str] | None
    """The heaviest run's categories."""
    label_shares: dict[str, float]
    """Per label, the share of profiled runs carrying it."""
    period_class: int | None
    """As the lookup's profile: k when 10^k <= median period < 10^(k+1) s."""
    period_seconds: float | None
    """The median period (s) of period_direction over the runs where it is periodic."""
    period_direction: Literal["read", "write"] | None


class ApplicationList(TypedDict):
    """``GET /v1/applications`` without ``app``: one page of the matching groups."""

    total: int
    """Groups matching the filters, on every page."""
    offset: int
    limit: int
    sort: str
    applications: list[ListedApplication]


profiles._documented(ListedApplication, ApplicationList)


def list_applications(
    db: sqlite3.Connection, filters: Filters, min_periodic_share: float, window: int
) -> ApplicationList:
    """The page of groups ``filters`` asks for; period classes over each group's ``window``
    most recent runs, as the lookup's."""
    where, args = _where(filters, min_periodic_share)
    rows = db.cursor()
    rows.row_factory = None  # plain tuples: the store's row class costs per row
    # Filters and sorts on the applications table alone count and order it alone (three
    # index lookups a group fewer: 250,000 groups in a ten-year store); the page's rows
    # are joined after.
    alone = filters.periodic is None and filters.sort not in ALL_LABELS
    source = "FROM applications a" if alone else GROUPS
    (total,) = rows.execute(f"SELECT count(*) {source} {where}", args).fetchone()
    if filters.sort == "period_class":  # known only from the runs' periods: every match read
        chosen = rows.execute(f"SELECT {COLUMNS} {GROUPS} {where} ORDER BY a.uid, {APPLICATION}", args)
        everyone = [_listed(row, min_periodic_share) for row in chosen.fetchall()]
        _add_period_classes(rows, everyone, f"IN (SELECT a.group_key {GROUPS} {where})", args, window)
        # largest first, a missing class last; a stable sort keeps ties in (uid, application) order
        everyone.sort(
            key=lambda item: (item["period_class"] is not None, item["period_class"] or 0),
            reverse=not filters.reverse,
        )
        page = everyone[filters.offset : filters.offset + filters.limit]
    else:
        order = _order(filters)
        chosen = rows.execute(
            f"SELECT {COLUMNS} {GROUPS} WHERE a.group_key IN (SELECT a.group_key {source} {where} "
            f"ORDER BY {order} LIMIT ? OFFSET ?) ORDER BY {order}",
            (*args, filters.limit, filters.offset),
        )
        page = [_listed(row, min_periodic_share) for row in chosen.fetchall()]
        keys = tuple(group_key(item) for item in page)
        _add_period_classes(rows, page, f"IN ({', '.join('?' * len(keys))})", keys, window)
    _add_label_shares(rows, page)
    for item in page:  # kept as stored text until now: only the page's are decoded
        item["categories"] = json.loads(item["categories"]) if item["categories"] else None  # type: ignore[arg-type]
    return {
        "total": total,
        "offset": filters.offset,
        "limit": filters.limit,
        "sort": filters.sort,
        "applications": page,
    }


# One row per group: the group, its profiled runs and the runs where each direction is periodic.
APPLICATION = "substr(a.group_key, instr(a.group_key, ':') + 1)"  # what a lookup asks
PERIODIC_RUNS = tuple(f"coalesce(periodic_{d}.runs, 0)" for d in DIRECTIONS)
LEADING = f"max({', '.join(PERIODIC_RUNS)})"  # runs of the direction periodic in the most
COLUMNS = f"a.group_key, a.uid, a.runs, a.last_seen, a.total_bytes, a.categories, {PROFILED}, " + ", ".join(
    PERIODIC_RUNS
)
GROUPS = "FROM applications a LEFT JOIN profile_groups g USING (group_key) " + " ".join(
    f"LEFT JOIN profile_labels periodic_{d} ON periodic_{d}.group_key = a.group_key "
    f"AND periodic_{d}.label = '{d}_periodic'"
    for d in DIRECTIONS
)


def _where(filters: Filters, min_periodic_share: float) -> tuple[str, tuple[object, ...]]:
    """The SQL filter on the groups and its parameters."""
    conditions: list[str] = ["1"]
    args: list[object] = []
    if filters.uid is not None:
        conditions.append("a.uid = ?")
        args.append(filters.uid)
    if filters.match:
        conditions.append(f"instr({APPLICATION}, ?) > 0")
        args.append(filters.match)
    if filters.label is not None:
        conditions.append(
            "EXISTS (SELECT 1 FROM profile_labels p WHERE p.group_key = a.group_key "
            "AND p.label = ? AND p.runs > 0)"
        )
        args.append(filters.label)
    if filters.sensitive is not None:
        conditions.append(
            f"{'' if filters.sensitive else 'NOT '}EXISTS (SELECT 1 FROM app_contention c "
            "WHERE c.group_key = a.group_key AND c.label = 'sensitive')"
        )
    if filters.aggressor is not None:
        conditions.append(
            f"{'' if filters.aggressor else 'NOT '}EXISTS (SELECT 1 FROM app_contention c "
            "WHERE c.group_key = a.group_key AND coalesce(c.traits, '[]') != '[]')"
        )
    if filters.periodic is not None:
        conditions.append(
            f"{'' if filters.periodic else 'NOT '}({LEADING} > 0 AND 1.0 * {LEADING} / {PROFILED} >= ?)"
        )
        args.append(min_periodic_share)
    return "WHERE " + " AND ".join(conditions), tuple(args)


def _order(filters: Filters) -> str:
    """ORDER BY of every sort but the period class: largest first but for app and uid, a
    missing value (no last seen) last, ties by uid then application."""
    if filters.sort in ALL_LABELS:
        value = (
            f"CASE WHEN {PROFILED} > 0 THEN 1.0 * coalesce((SELECT runs FROM profile_labels p "
            f"WHERE p.group_key = a.group_key AND p.label = '{filters.sort}'), 0) / {PROFILED} ELSE 0 END"
        )
    else:
        value = {
            "runs": "a.runs",
            "bytes": "a.total_bytes",
            "last_seen": "a.last_seen",
            "app": APPLICATION,
            "uid": "a.uid",
        }[filters.sort]
    way = "ASC" if (filters.sort in ASCENDING) != filters.reverse else "DESC"
    return f"({value}) IS NOT NULL {way}, {value} {way}, a.uid, {APPLICATION}"


def _listed(row: tuple[Any, ...], min_periodic_share: float) -> ListedApplication:
    """A listed group from its row (label shares and period class come after)."""
    key, uid, runs, last_seen, heaviest, categories, profiled, *periodic = row
    # the direction periodic in the most runs (write on a tie), if in enough of them: the
    # rule of mosaic.corpus.profiles.profile, on the label counters alone
    leading = max(reversed(range(len(DIRECTIONS))), key=lambda i: periodic[i])
    regular = periodic[leading] > 0 and periodic[leading] / profiled >= min_periodic_share
    return {
        "uid": uid,
        "application": key.split(":", 1)[1],  # what a lookup asks (a command line if so grouped)
        "runs": runs,
        "profile_runs": profiled,
        "heaviest_bytes": heaviest,
        "last_seen": last_seen,
        "categories": categories,  # decoded for the page alone (list_applications)
        "label_shares": {},
        "period_class": None,
        "period_seconds": None,
        "period_direction": DIRECTIONS[leading] if regular else None,
    }


def _add_label_shares(rows: sqlite3.Cursor, page: list[ListedApplication]) -> None:
    """Each listed group's label shares, from the label counters."""
    by_key = {group_key(item): item for item in page if item["profile_runs"]}
    marks = ", ".join("?" * len(by_key))
    for key, label, runs in rows.execute(
        f"SELECT group_key, label, runs FROM profile_labels WHERE group_key IN ({marks}) ORDER BY label",
        tuple(by_key),
    ):
        item = by_key[key]
        item["label_shares"][label] = runs / item["profile_runs"]


def _add_period_classes(
    rows: sqlite3.Cursor,
    listed: list[ListedApplication],
    among: str,
    args: tuple[object, ...],
    window: int,
) -> None:
    """Each periodic group's period class, from the median period of its periodic direction
    over its ``window`` most recent runs; ``among`` (with ``args``) is the SQL condition on
    ``group_key`` that selects the listed. Groups within the window (nearly all) are read in
    one query; each larger one alone, its window only."""
    wanted = {group_key(item): item for item in listed if item["period_direction"]}
    if not wanted:
        return
    rows.execute(
        f"SELECT group_key, coalesce(numbers, ?) FROM profile_runs WHERE group_key {among} "
        "AND group_key NOT IN (SELECT group_key FROM profile_groups WHERE runs > ?) ORDER BY group_key",
        (profiles.UNMEASURED, *args, window),
    )
    found = rows.fetchall()
    keys = [key for key, _ in found]
    chunks = [numbers for _, numbers in found]
    for key, entry in wanted.items():
        if entry["profile_runs"] > window:
            recent = profiles.recent_numbers(rows.connection, key, window)
            keys += [key] * len(recent)
            chunks.append(recent.tobytes())
    if not keys:
        return
    ordered = np.array(keys, dtype=object)
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # rows come grouped by key
    groups = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(ordered)]))
    values = np.frombuffer(b"".join(chunks), profiles.PACKED).reshape(-1, len(profiles.NUMBERS))
    for direction in DIRECTIONS:
        column = values[:, profiles.NUMBERS.index(f"{direction}_period")]
        for start, median in zip(starts, group_medians(groups, column, len(starts)), strict=True):
            item = wanted.get(keys[start])
            if item is not None and item["period_direction"] == direction and median > 0:
                item["period_class"] = profiles.period_class(float(median))
                item["period_seconds"] = float(median)


def group_key(item: ListedApplication) -> str:
    """The store's key of a listed group (:func:`mosaic.trace.group_key`'s form)."""
    return f"{item['uid']}:{item['application']}"


def group_medians(groups: np.ndarray, values: np.ndarray, count: int) -> np.ndarray:
    """The median of each group's non-NaN ``values`` (NaN for a group without any), rounded
    as ``np.nanquantile(.., 0.5)`` rounds it: the middle value, or for an even count
    ``b - (b - a) * 0.5`` of the two middle ones (numpy's lerp for a weight of one half)."""
    kept = ~np.isnan(values)
    groups, values = groups[kept], values[kept]
    order = np.lexsort((values, groups))
    groups, values = groups[order], values[order]
    counts = np.bincount(groups, minlength=count)
    starts = np.cumsum(counts) - counts
    medians = np.full(count, np.nan)
    has = counts > 0
    low = values[(starts + (counts - 1) // 2)[has]]
    high = values[(starts + counts // 2)[has]]
    medians[has] = np.where(counts[has] % 2 == 1, low, high - (high - low) * 0.5)
    return medians
