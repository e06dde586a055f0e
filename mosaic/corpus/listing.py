"""The store's applications as a list: filtered, sorted and paged (`mosaic apps`,
``GET /v1/applications`` without ``app``).

After `mosaic run` the (uid, application) pairs a lookup needs were only
inside ``traces.jsonl``; this is the index of them. Each line carries what
the lookup's profile says first (runs, the heaviest run's bytes, label
shares, the period class) without the spreads, so a year's groups list in
one pass:

* filters and the scalar columns come from SQL (``applications``, the
  profile counters), one row per group;
* label shares and the period direction come from the label counters, as
  :func:`mosaic.corpus.profiles.profile` derives them;
* the period class needs the median period of the group's periodic runs:
  read from their packed numbers for the groups shown (every matching group
  when sorting by it), the medians taken for all groups at once in numpy,
  rounded as ``np.nanquantile`` rounds them so each equals the lookup's.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from typing_extensions import TypedDict

from mosaic.analysis.labels import ALL_LABELS, DIRECTIONS
from mosaic.corpus import profiles

# Sort keys besides a label's name (its share of runs); every key but app and uid
# lists the largest first, and a group without the value (no period class) last.
SORT_FIELDS = {
    "runs": "runs",
    "bytes": "heaviest_bytes",
    "period_class": "period_class",
    "last_seen": "last_seen",
    "app": "application",
    "uid": "uid",
}
SORT_KEYS = tuple(SORT_FIELDS)
ASCENDING = ("app", "uid")
DEFAULT_LIMIT = 50
MAX_LIMIT = 1000  # one page: a year holds ~38,000 groups


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

    def __post_init__(self) -> None:
        if self.sort not in SORT_KEYS and self.sort not in ALL_LABELS:
            raise ValueError(f"sort by {self.sort!r}: choose from {', '.join(SORT_KEYS)} or a label")
        if self.label is not None and self.label not in ALL_LABELS:
            raise ValueError(f"label {self.label!r}: not a label (see mosaic.analysis.labels)")
        if self.offset < 0 or not 1 <= self.limit <= MAX_LIMIT:
            raise ValueError(f"offset >= 0 and 1 <= limit <= {MAX_LIMIT}")


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


def list_applications(db: sqlite3.Connection, filters: Filters, min_periodic_share: float) -> ApplicationList:
    """The page of groups ``filters`` asks for (the caller holds the store's lock)."""
    where, args = _where(filters)
    rows = db.execute(
        "SELECT a.group_key, a.uid, a.runs, a.last_seen, a.total_bytes, a.categories, "
        f"coalesce(g.runs, 0) FROM applications a LEFT JOIN profile_groups g USING (group_key) {where}",
        args,
    ).fetchall()
    shares: dict[str, dict[str, float]] = {row[0]: {} for row in rows}
    for key, label, runs in db.execute(
        "SELECT l.group_key, l.label, l.runs FROM profile_labels l JOIN applications a USING (group_key) "
        f"LEFT JOIN profile_groups g USING (group_key) {where} ORDER BY l.label",
        args,
    ):
        shares[key][label] = runs
    listed: list[ListedApplication] = []
    for key, uid, runs, last_seen, heaviest, categories, profiled in rows:
        counts = shares[key]
        direction = _period_direction(counts, profiled, min_periodic_share)
        listed.append(
            {
                "uid": uid,
                "application": key.split(":", 1)[1],  # what a lookup asks (a command line if so grouped)
                "runs": runs,
                "profile_runs": profiled,
                "heaviest_bytes": heaviest,
                "last_seen": last_seen,
                "categories": json.loads(categories) if categories else None,
                "label_shares": {label: n / profiled for label, n in counts.items()} if profiled else {},
                "period_class": None,
                "period_direction": direction,
            }
        )
    if filters.periodic is not None:
        listed = [item for item in listed if (item["period_direction"] is not None) == filters.periodic]
    if filters.sort == "period_class":
        _add_period_classes(db, listed)
    listed.sort(key=lambda item: (item["uid"], item["application"]))  # ties, in a fixed order
    # largest first but for app and uid; a stable sort keeps the ties' order either way
    listed.sort(key=_sort_key(filters.sort), reverse=(filters.sort not in ASCENDING) != filters.reverse)
    page = listed[filters.offset : filters.offset + filters.limit]
    if filters.sort != "period_class":
        _add_period_classes(db, page)
    return {
        "total": len(listed),
        "offset": filters.offset,
        "limit": filters.limit,
        "sort": filters.sort,
        "applications": page,
    }


def _where(filters: Filters) -> tuple[str, tuple[object, ...]]:
    """The SQL filter on ``applications a`` (and ``profile_groups g``) and its parameters."""
    conditions: list[str] = ["1"]
    args: list[object] = []
    if filters.uid is not None:
        conditions.append("a.uid = ?")
        args.append(filters.uid)
    if filters.match:
        conditions.append("instr(substr(a.group_key, instr(a.group_key, ':') + 1), ?) > 0")
        args.append(filters.match)
    if filters.label is not None:
        conditions.append(
            "EXISTS (SELECT 1 FROM profile_labels p WHERE p.group_key = a.group_key "
            "AND p.label = ? AND p.runs > 0)"
        )
        args.append(filters.label)
    return "WHERE " + " AND ".join(conditions), tuple(args)


def _period_direction(
    counts: dict[str, float], runs: int, min_periodic_share: float
) -> Literal["read", "write"] | None:
    """The direction periodic in the most runs (write on a tie), if in enough of them: the
    rule of :func:`mosaic.corpus.profiles.profile`, on the label counters alone."""
    leading = max(reversed(DIRECTIONS), key=lambda d: counts.get(f"{d}_periodic", 0))
    periodic = counts.get(f"{leading}_periodic", 0)
    return leading if periodic > 0 and periodic / runs >= min_periodic_share else None


def _sort_key(sort: str) -> Callable[[ListedApplication], tuple[bool, object]]:
    """The key of a sort by ``sort``: a missing value (no period class) is the smallest."""
    if sort in ALL_LABELS:
        return lambda item: (True, item["label_shares"].get(sort, 0.0))
    field = SORT_FIELDS[sort]
    return lambda item: (item[field] is not None, item[field])  # type: ignore[literal-required]


def _add_period_classes(db: sqlite3.Connection, listed: list[ListedApplication]) -> None:
    """Each periodic group's period class, from the median period of its periodic direction."""
    wanted = {group_key(item): item for item in listed if item["period_direction"]}
    if not wanted:
        return
    db.execute("CREATE TEMP TABLE IF NOT EXISTS listing_groups (group_key TEXT PRIMARY KEY)")
    db.execute("DELETE FROM temp.listing_groups")
    db.executemany("INSERT INTO temp.listing_groups VALUES (?)", [(key,) for key in wanted])
    rows = db.cursor()
    rows.row_factory = None  # plain tuples
    rows.execute(
        "SELECT group_key, coalesce(numbers, ?) FROM profile_runs "
        "WHERE group_key IN (SELECT group_key FROM temp.listing_groups) ORDER BY group_key",
        (profiles.UNMEASURED,),
    )
    keys, packed = zip(*rows.fetchall(), strict=True)
    names, groups = np.unique(np.array(keys, dtype=object), return_inverse=True)
    values = np.frombuffer(b"".join(packed), profiles.PACKED).reshape(-1, len(profiles.NUMBERS))
    for direction in DIRECTIONS:
        medians = group_medians(groups, values[:, profiles.NUMBERS.index(f"{direction}_period")], len(names))
        for name, median in zip(names, medians, strict=True):
            item = wanted[name]
            if item["period_direction"] == direction and median > 0:
                item["period_class"] = profiles.period_class(float(median))


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
