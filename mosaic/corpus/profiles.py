"""Application profiles: what the stored runs of one (uid, application) group did.

A scheduler asks before a job starts (``GET /v1/applications``, ``mosaic
lookup``) and gets numbers it can plan with, and how far to trust them: runs
counted, each label's share of them, stability (the share of runs whose
categories equal the most common set, the paper's check of its hypothesis),
per direction the bytes per run and, over the runs where the direction is
periodic, the period, busy fraction and bytes per occurrence (median and
p10-p90), the power-of-ten class of the median period (IO-Sets' Set-10
groups applications by the power of ten of their characteristic time),
median run time and peak metadata load, first and last seen.

Why the tables look like this (a post must stay cheap whatever the group's
size, and so must a lookup: a center keeps its store for years):

* ``profile_runs``: one summary row per stored run, keyed by its run
  identity (:func:`run_identity`) and clustered by group, then start
  (``WITHOUT ROWID``, primary key group + start + run; a start the log does
  not give is stored as ``''`` and sorts oldest): a group's most recent runs
  sit together at the end of its range, so a lookup reads them in one
  backward range scan. ~150 bytes a run.
* counters, changed in the transaction that adds the row, by one per
  label: ``profile_groups`` (runs, first and last seen), ``profile_labels``
  (runs per label), ``profile_label_sets`` (runs per distinct label set;
  stability is the largest count over the runs). A post costs the same for
  the first run of a group and the millionth. Label shares, stability, run
  counts, first and last seen are over every stored run, exactly.
* quantiles (median, p10-p90) are exact over the group's most recent
  ``profile_window_runs`` runs (Config, service section; 2,000 by default),
  by start: the lookup reads at most that many rows whatever the group's
  history, ~1-2 ms. Chosen over a mergeable sketch (KLL, DDSketch) because
  (1) every group up to the window is answered exactly (all of the
  calibrated year's 25,178 groups: the largest holds 1,709 runs), with no
  rank error to document or test around; (2) a scheduler planning the next
  job wants what the application does now, and ten years of history would
  pin an all-time median to a code long since changed; (3) a post stays one
  row and counters, never a read-modify-write of a per-group blob, and
  pruning needs nothing but deleting rows. The cost: a group's quantiles
  forget runs older than its latest window (documented in docs/api.md).
  ``benchmarks/bench_profiles.py`` measures both costs up to 1,000,000 runs.

A batch run (``mosaic run``) adds its categorized runs and rebuilds the
counters of the groups it saw from their rows (:func:`publish`); a post adds
one run (:func:`add_run`). Both leave the same counters
(tests/corpus/test_profiles.py). A store keeps every run it was given until
``mosaic store prune`` drops some (:func:`rebuild` recounts what remains): a
re-run over the same logs replaces their rows, it never forgets other runs.

**What identifies a run** (:func:`run_identity`): the log's job record as
Darshan wrote it: uid, job id, command line, process count, start and end
(to the nanosecond where the log has them), hashed to a 64-bit integer.
``mosaic run`` and a post of the same log compute the same identity, so one
log is one run whichever path recorded it first, under whatever file name;
a file name recorded again with other contents replaces its former run.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NotRequired

import numpy as np
from typing_extensions import TypedDict

from mosaic.config import DEFAULT
from mosaic.directions import DIRECTIONS
from mosaic.interference.tables import ContentionSummary

PERIODIC_NUMBERS = ("period", "busy_fraction", "bytes_per_occurrence")
# The numbers of one run, in this order, packed as little-endian float64 (NaN: not measured)
# in one BLOB: a lookup turns a group's rows into one array with one join, 4x faster on
# 20,000 runs than building a Python float per column and row.
NUMBERS = (
    "run_time",
    *(f"{d}_{name}" for d in DIRECTIONS for name in ("bytes", *PERIODIC_NUMBERS)),
    "metadata_peak_per_second",
)
PACKED = np.dtype("<f8")
UNMEASURED = np.full(len(NUMBERS), np.nan, PACKED).tobytes()  # a run whose numbers were never kept
# What a categorization adds to its store row: its label set and its numbers.
SUMMARY_COLUMNS = ("label_set", "numbers")
SUMMARY_COLUMNS_SQL = "label_set TEXT, numbers BLOB"
QUANTILES = (0.5, 0.1, 0.9)  # median, p10, p90 (numpy's default linear interpolation)

RUNS_TABLE = f"""
CREATE TABLE IF NOT EXISTS profile_runs (
    group_key TEXT NOT NULL, start TEXT NOT NULL, run INTEGER NOT NULL, file TEXT NOT NULL,
    {SUMMARY_COLUMNS_SQL}, PRIMARY KEY (group_key, start, run)) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS profile_runs_by_file ON profile_runs (file);
CREATE UNIQUE INDEX IF NOT EXISTS profile_runs_by_run ON profile_runs (run);
"""
SCHEMA = f"""{RUNS_TABLE}
CREATE TABLE IF NOT EXISTS profile_groups (
    group_key TEXT PRIMARY KEY, runs INTEGER NOT NULL, first_seen TEXT, last_seen TEXT);
CREATE TABLE IF NOT EXISTS profile_labels (
    group_key TEXT, label TEXT, runs INTEGER NOT NULL, PRIMARY KEY (group_key, label)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS profile_label_sets (
    group_key TEXT, label_set TEXT, runs INTEGER NOT NULL,
    PRIMARY KEY (group_key, label_set)) WITHOUT ROWID;
"""
RUN_COLUMNS = ("group_key", "file", "start", "run", *SUMMARY_COLUMNS)
_INSERT_RUN = (
    f"INSERT OR REPLACE INTO profile_runs ({', '.join(RUN_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(RUN_COLUMNS))})"
)
_TOUCHED = "SELECT group_key FROM temp.profile_touched"


def _documented(*types: type) -> None:
    """Field descriptions in the OpenAPI schema come from the attribute docstrings below
    (pydantic reads them; setting the option here keeps pydantic out of batch workers)."""
    for cls in types:
        cls.__pydantic_config__ = {"use_attribute_docstrings": True}  # type: ignore[attr-defined]


class Spread(TypedDict):
    """Median and 10th-90th percentile spread of one quantity over the runs that have it."""

    median: float
    p10: float
    p90: float
    runs: int
    """Runs behind these numbers."""


class PeriodicProfile(TypedDict):
    """One direction over the runs where it is periodic (the final verdict, SPEC 3.4-3.5)."""

    runs: int
    """Runs whose categories say this direction is periodic."""
    share: float
    """Those runs over the profile's runs."""
    period_seconds: Spread | None
    """The verdict's period (the dominant periodic operation's, or the FFT's)."""
    period_class: int | None
    """Power of ten of the median period: k when 10^k <= period < 10^(k+1) seconds."""
    busy_fraction: Spread | None
    """Share of each period spent in I/O."""
    bytes_per_occurrence: Spread | None
    """Bytes of one I/O phase: the dominant mean-shift operation's, else bytes x period / run time."""


class DirectionProfile(TypedDict):
    bytes: Spread | None
    """Bytes moved per run."""
    periodic: PeriodicProfile


class ApplicationProfile(TypedDict):
    """What the group's stored runs did."""

    runs: int
    """Categorized runs the profile is built from."""
    basis: Literal["every_run", "representative", "some_runs"]
    """every_run: all the group's stored runs; representative: its heaviest run alone (a batch
    run without --all-runs); some_runs: the others (e.g. runs evicted while categorizing)."""
    label_shares: dict[str, float]
    """Per label, the share of runs carrying it."""
    stability: float
    """Share of runs whose categories equal the most common set (usual_categories)."""
    usual_categories: list[str]
    """The most common set of categories (sorted)."""
    period_class: int | None
    """period_class of period_direction: given when a direction is periodic in at least
    profile_min_periodic_share of the runs (Config, service section)."""
    period_direction: Literal["read", "write"] | None
    """The direction periodic in the most runs (write on a tie)."""
    read: DirectionProfile
    write: DirectionProfile
    run_time_seconds: Spread | None
    metadata_peak_per_second: Spread | None
    """Peak metadata requests in one second of a run."""
    first_seen: str | None
    """Earliest start among the group's stored runs."""
    last_seen: str | None
    """Latest start among the group's stored runs."""


class Application(TypedDict):
    """A (uid, application) group as the store keeps it: its heaviest run's categories."""

    group_key: str
    uid: int
    application: str
    categories: list[str] | None
    """The representative's (heaviest run's) categories."""
    runs: int
    """Valid runs stored for the group."""
    last_seen: str | None
    representative: str
    """Log file name of the heaviest run."""


class SignatureAnswer(TypedDict):
    """The group's I/O signature in brief (docs/method.md 3.12), or why it has none."""

    signature: dict[str, Any] | None
    """runs, resolution (s), run_time p10/p50/p90 (s), unslowed_run_time (s), the bursts (direction,
    start and duration as fractions of the run, bytes, bandwidth in B/s, runs showing it, seconds
    p10/p50/p90), absolute (whether a signature over absolute time exists): the stored signature
    without its curves. None: see reason."""
    reason: str | None
    """Why the group has no signature (too few runs, runs without timing), else None."""


class ApplicationAnswer(Application):
    """``GET /v1/applications``: the group and its profile."""

    profile: ApplicationProfile | None
    """None when no run of the group was categorized into the store."""
    performance: NotRequired[dict[str, Any] | None]
    """SPEC 3.9: p10 / p50 / p90 of each metric over the group's runs (corpus/perfstore.py)."""
    contention: ContentionSummary | None
    """Its sensitivity to the file system's load and its aggressor traits (SPEC 3.11); None
    until a `mosaic run` over runs with performance and load computed it."""
    signature: NotRequired[SignatureAnswer]
    """Its I/O signature over the run (docs/method.md 3.12)."""


_documented(
    Spread,
    PeriodicProfile,
    DirectionProfile,
    ApplicationProfile,
    Application,
    SignatureAnswer,
    ApplicationAnswer,
    ContentionSummary,
)


# ----- one run's summary (workers, service posts) -----


def run_identity(job: Mapping[str, Any]) -> int:
    """What identifies a run whichever path records it: a signed 64-bit integer hashed from
    the log's job record (uid, job id, command line, processes, start and end, in seconds
    since the epoch to the nanosecond where the log keeps them, and as the start text and
    run time a hand-made object may give instead). One log always gives the same number;
    two launches differ in their start or end unless they began and ended within the
    same clock tick of the log's resolution (2.x logs and 3.x before 3.4: one second)."""
    fields = [job.get(k) for k in ("uid", "job_id", "exe", "nprocs", "start_epoch", "end_epoch", "start")]
    fields.append(job.get("run_time"))
    digest = hashlib.sha256(json.dumps(fields, default=str).encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "little", signed=True)


def label_set(categories: Iterable[str]) -> str:
    """A run's categories as one comparable value: sorted, in SQLite's compact JSON."""
    return json.dumps(sorted(categories), separators=(",", ":"))


def run_summary(result: dict[str, Any]) -> tuple[str | None, bytes | None]:
    """The SUMMARY_COLUMNS of a categorization (a SPEC 4 trace object); Nones for an eviction."""
    if result.get("status", "ok") != "ok" or result.get("categories") is None:
        return (None, None)
    run_time = float(result.get("job", {}).get("run_time") or 0.0)
    numbers: list[float | None] = [run_time]
    for direction in DIRECTIONS:
        side = result.get(direction, {})
        moved = float(side.get("bytes", 0.0))
        numbers += [moved, *_periodic_numbers(side.get("periodicity", {}), moved, run_time)]
    numbers.append(result.get("metadata", {}).get("peak_per_second"))
    packed = np.array([np.nan if n is None else n for n in numbers], PACKED).tobytes()
    return (label_set(result["categories"]), packed)


def _periodic_numbers(
    periodicity: dict[str, Any], moved: float, run_time: float
) -> tuple[float | None, float | None, float | None]:
    """(period, busy fraction, bytes per occurrence) of a periodic direction, else Nones.

    Bytes per occurrence: of the mean-shift operation whose period the verdict
    reports (its dominant one); when the FFT alone found the period, the
    direction's bytes spread evenly over the run's periods.
    """
    verdict = periodicity.get("verdict", {})
    if not verdict.get("periodic"):
        return (None, None, None)
    period = float(verdict["period"])
    behind = [
        op for op in periodicity.get("meanshift", {}).get("operations", []) if float(op["period"]) == period
    ]
    if behind:
        per_occurrence = float(max(op["bytes_per_occurrence"] for op in behind))
    else:
        per_occurrence = moved * period / run_time if run_time > 0 else moved
    busy = verdict.get("busy_fraction")
    return (period, None if busy is None else float(busy), per_occurrence)


def period_class(seconds: float) -> int:
    """k with 10^k <= seconds < 10^(k+1) (log10 is off by one ulp near some powers of ten)."""
    k = math.floor(math.log10(seconds))
    if 10.0 ** (k + 1) <= seconds:
        return k + 1
    return k - 1 if 10.0**k > seconds else k


# ----- writing (inside the caller's transaction) -----


def add_run(db: sqlite3.Connection, row: Sequence[Any]) -> None:
    """Add one run (a RUN_COLUMNS row) to its group's profile: its row, and the counters moved
    by one. A run already stored (same identity, or the same file name) is replaced: its
    former contribution is taken back first."""
    group_key, file, start, run, labels = row[0], row[1], row[2] or "", row[3], row[4]
    if labels is None:  # not a categorization
        return
    formers = db.execute(
        "SELECT group_key, label_set, start FROM profile_runs WHERE run = ? OR file = ?", (run, file)
    ).fetchall()
    for former in formers:
        _count(db, former[0], former[1], -1, None)
    db.execute(_INSERT_RUN, (group_key, file, start, *row[3:]))
    _count(db, group_key, labels, 1, start or None)
    for former_group in {former[0] for former in formers if (former[0], former[2]) != (group_key, start)}:
        # Not the same log posted again (that keeps its group and start): first and last seen
        # of the group it left may have been its start. Two index seeks.
        db.execute(
            f"UPDATE profile_groups SET first_seen = ({_SEEN.format('min', 'ASC')}), "
            f"last_seen = ({_SEEN.format('max', 'DESC')}) WHERE group_key = ?",
            (former_group,),
        )


# A group's earliest or latest known start (the group is profile_groups' row being updated).
_SEEN = (
    "SELECT {0}(start) FROM (SELECT start FROM profile_runs p WHERE p.group_key = "
    "profile_groups.group_key AND start != '' ORDER BY start {1} LIMIT 1)"
)


def _count(db: sqlite3.Connection, group_key: str, labels: str, delta: int, start: str | None) -> None:
    db.execute(
        "INSERT INTO profile_groups VALUES (?, ?, ?, ?) ON CONFLICT (group_key) DO UPDATE SET "
        "runs = runs + excluded.runs, "
        "first_seen = coalesce(min(first_seen, excluded.first_seen), first_seen, excluded.first_seen), "
        "last_seen = coalesce(max(last_seen, excluded.last_seen), last_seen, excluded.last_seen)",
        (group_key, delta, start, start),
    )
    db.executemany(
        "INSERT INTO profile_labels VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET runs = runs + excluded.runs",
        [(group_key, label, delta) for label in json.loads(labels)],
    )
    db.execute(
        "INSERT INTO profile_label_sets VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET "
        "runs = runs + excluded.runs",
        (group_key, labels, delta),
    )
    if delta < 0:
        for table in ("profile_groups", "profile_labels", "profile_label_sets"):
            db.execute(f"DELETE FROM {table} WHERE group_key = ? AND runs <= 0", (group_key,))


def publish(db: sqlite3.Connection, run_id: int) -> None:
    """A batch run's categorized runs into the profiles; the counters of the groups it saw
    rebuilt from their rows; first and last seen over every valid run of theirs."""
    db.execute(
        f"INSERT OR REPLACE INTO profile_runs ({', '.join(RUN_COLUMNS)}) "
        "SELECT l.group_key, l.file, coalesce(l.start, ''), l.run, "
        f"{', '.join('r.' + c for c in SUMMARY_COLUMNS)} "
        "FROM logs l JOIN results r USING (file) WHERE l.seen = ? AND l.status = 'ok' AND r.status = 'ok'",
        (run_id,),
    )
    rebuild(db, "SELECT DISTINCT group_key FROM logs WHERE seen = ? AND status = 'ok'", (run_id,))
    db.execute(
        "UPDATE profile_groups SET first_seen = coalesce(min(first_seen, s.first), first_seen, s.first), "
        "last_seen = coalesce(max(last_seen, s.last), last_seen, s.last) FROM (SELECT group_key, "
        "min(start) AS first, "
        "max(start) AS last FROM logs WHERE seen = ? AND status = 'ok' GROUP BY group_key) AS s "
        "WHERE profile_groups.group_key = s.group_key",
        (run_id,),
    )


def drop_runs(db: sqlite3.Connection, runs_sql: str) -> None:
    """Drop the rows of the runs ``runs_sql`` selects; their groups' counters move down by
    what the rows counted (in SQL, whatever their number), first and last seen sought again."""
    doomed = f"SELECT group_key, label_set FROM profile_runs WHERE run IN ({runs_sql})"
    db.execute(
        "UPDATE profile_groups SET runs = runs - d.n FROM (SELECT group_key, count(*) AS n "
        f"FROM ({doomed}) GROUP BY group_key) AS d WHERE profile_groups.group_key = d.group_key"
    )
    db.execute(
        "UPDATE profile_labels SET runs = runs - d.n FROM (SELECT p.group_key, j.value AS label, "
        f"count(*) AS n FROM ({doomed}) p, json_each(p.label_set) j GROUP BY p.group_key, j.value) AS d "
        "WHERE profile_labels.group_key = d.group_key AND profile_labels.label = d.label"
    )
    db.execute(
        "UPDATE profile_label_sets SET runs = runs - d.n FROM (SELECT group_key, label_set, count(*) AS n "
        f"FROM ({doomed}) GROUP BY group_key, label_set) AS d "
        "WHERE profile_label_sets.group_key = d.group_key AND profile_label_sets.label_set = d.label_set"
    )
    _touch(db, f"SELECT group_key FROM ({doomed})")
    db.execute(f"DELETE FROM profile_runs WHERE run IN ({runs_sql})")
    for table in ("profile_groups", "profile_labels", "profile_label_sets"):
        db.execute(f"DELETE FROM {table} WHERE runs <= 0 AND group_key IN ({_TOUCHED})")
    db.execute(
        f"UPDATE profile_groups SET first_seen = ({_SEEN.format('min', 'ASC')}), "
        f"last_seen = ({_SEEN.format('max', 'DESC')}) WHERE group_key IN ({_TOUCHED})"
    )


def rebuild(db: sqlite3.Connection, groups_sql: str, args: tuple[Any, ...] = ()) -> None:
    """The counters of the groups ``groups_sql`` selects, recounted from their rows in SQL
    (the batch view that :func:`add_run` keeps up one run at a time)."""
    _touch(db, groups_sql, args)
    for table in ("profile_groups", "profile_labels", "profile_label_sets"):
        db.execute(f"DELETE FROM {table} WHERE group_key IN ({_TOUCHED})")
    db.execute(
        "INSERT INTO profile_groups SELECT group_key, count(*), min(nullif(start, '')), "
        "max(nullif(start, '')) FROM profile_runs "
        f"WHERE group_key IN ({_TOUCHED}) GROUP BY group_key"
    )
    db.execute(
        "INSERT INTO profile_labels SELECT p.group_key, j.value, count(*) FROM profile_runs p, "
        f"json_each(p.label_set) j WHERE p.group_key IN ({_TOUCHED}) GROUP BY p.group_key, j.value"
    )
    db.execute(
        "INSERT INTO profile_label_sets SELECT group_key, label_set, count(*) FROM profile_runs "
        f"WHERE group_key IN ({_TOUCHED}) GROUP BY group_key, label_set"
    )


def _touch(db: sqlite3.Connection, groups_sql: str, args: tuple[Any, ...] = ()) -> None:
    """The groups ``groups_sql`` selects, in temp.profile_touched (_TOUCHED reads them)."""
    db.execute("CREATE TEMP TABLE IF NOT EXISTS profile_touched (group_key TEXT PRIMARY KEY)")
    db.execute("DELETE FROM temp.profile_touched")
    db.execute(f"INSERT OR IGNORE INTO temp.profile_touched {groups_sql}", args)


def rebuild_all(db: sqlite3.Connection) -> None:
    """Every group's counters from the rows (what a batch would count)."""
    rebuild(db, "SELECT DISTINCT group_key FROM profile_runs")


def backfill(db: sqlite3.Connection) -> None:
    """A store from before the profiles (lookup layout 1, before 2026-11-25; its ``jobs`` already
    upgraded, each run with its identity): every categorized run in ``jobs`` gets a
    row with its labels (its numbers were never kept: None), then the counters are built.
    Last seen comes from ``applications``; first seen stays unknown."""
    db.execute(
        "INSERT OR IGNORE INTO profile_runs (group_key, start, run, file, label_set) SELECT group_key, '', "
        "run, file, (SELECT json_group_array(value) FROM (SELECT value FROM json_each(jobs.categories) "
        "ORDER BY value)) FROM jobs WHERE json_type(categories) = 'array'"
    )
    rebuild_all(db)
    db.execute(
        "UPDATE profile_groups SET last_seen = a.last_seen FROM applications a "
        "WHERE profile_groups.group_key = a.group_key AND profile_groups.last_seen IS NULL"
    )


# ----- reading -----


def profile(
    db: sqlite3.Connection,
    group_key: str,
    known_runs: int,
    min_periodic_share: float,
    window: int = DEFAULT.profile_window_runs,
) -> ApplicationProfile | None:
    """The profile of one group (None when none of its runs is in the profile tables): counts
    over every stored run, spreads over the ``window`` most recent."""
    counted = db.execute(
        "SELECT runs, first_seen, last_seen FROM profile_groups WHERE group_key = ?", (group_key,)
    ).fetchone()
    if counted is None or counted[0] <= 0:
        return None
    runs, first_seen, last_seen = int(counted[0]), counted[1], counted[2]
    labels = dict(
        db.execute("SELECT label, runs FROM profile_labels WHERE group_key = ? ORDER BY label", (group_key,))
    )
    usual = db.execute(
        "SELECT label_set, runs FROM profile_label_sets WHERE group_key = ? ORDER BY runs DESC, label_set "
        "LIMIT 1",
        (group_key,),
    ).fetchone()
    spread = dict(zip(NUMBERS, spreads(recent_numbers(db, group_key, window))))
    directions = {d: _direction(d, spread, labels.get(f"{d}_periodic", 0), runs) for d in DIRECTIONS}
    leading = max(reversed(DIRECTIONS), key=lambda d: directions[d]["periodic"]["runs"])
    periodic = directions[leading]["periodic"]
    regular = periodic["runs"] > 0 and periodic["share"] >= min_periodic_share
    profile: ApplicationProfile = {
        "runs": runs,
        "basis": "every_run" if runs >= known_runs else "representative" if runs == 1 else "some_runs",
        "label_shares": {label: count / runs for label, count in labels.items()},
        "stability": int(usual[1]) / runs,
        "usual_categories": json.loads(usual[0]),
        "period_class": periodic["period_class"] if regular else None,
        "period_direction": leading if regular else None,
        "read": directions["read"],
        "write": directions["write"],
        "run_time_seconds": spread["run_time"],
        "metadata_peak_per_second": spread["metadata_peak_per_second"],
        "first_seen": first_seen,
        "last_seen": last_seen,
    }
    return profile


def _direction(
    direction: str, spread: dict[str, Spread | None], periodic_runs: int, runs: int
) -> DirectionProfile:
    period = spread[f"{direction}_period"]
    return {
        "bytes": spread[f"{direction}_bytes"],
        "periodic": {
            "runs": periodic_runs,
            "share": periodic_runs / runs,
            "period_seconds": period,
            "period_class": period_class(period["median"]) if period and period["median"] > 0 else None,
            "busy_fraction": spread[f"{direction}_busy_fraction"],
            "bytes_per_occurrence": spread[f"{direction}_bytes_per_occurrence"],
        },
    }


def recent_numbers(db: sqlite3.Connection, group_key: str, window: int) -> np.ndarray:
    """The numbers of the group's ``window`` most recent runs (runs x NUMBERS, in no set order;
    most recent: latest start, ties by identity): one backward range scan of the group's rows.

    SQLite joins the rows' BLOBs itself (group_concat copies their bytes as they are in a
    UTF-8 store, NULs included; CAST gives them back as a BLOB): one Python object instead
    of one per run, 2.3x less CPU on a window of 2,000.
    """
    rows = db.cursor()
    rows.row_factory = None  # a plain tuple: a caller's row class would cost
    (joined,) = rows.execute(
        "SELECT CAST(group_concat(numbers, '') AS BLOB) FROM (SELECT coalesce(numbers, ?) AS numbers "
        "FROM profile_runs WHERE group_key = ? ORDER BY start DESC, run DESC LIMIT ?)",
        (UNMEASURED, group_key, window),
    ).fetchone()
    return np.frombuffer(joined or b"", PACKED).reshape(-1, len(NUMBERS))


def spreads(values: np.ndarray) -> list[Spread | None]:
    """Median, p10, p90 and count of each column of ``values`` (runs x quantities), NaN (not
    measured) left out; None for a column without any value."""
    counts = (~np.isnan(values)).sum(axis=0)
    present = np.flatnonzero(counts)
    out: list[Spread | None] = [None] * values.shape[1]
    if not len(present):
        return out
    # np.nanquantile's linear method, bit for bit, for every column from one sort (NaNs sort
    # last): numpy takes the columns one by one, 4x the time of the lookup's window read.
    ordered = np.sort(values[:, present], axis=0)
    last = counts[present] - 1
    virtual = last * np.array(QUANTILES)[:, None]  # quantiles x columns
    below = np.floor(virtual).astype(np.intp)
    above = np.minimum(below + 1, last)
    below = np.where(virtual >= last, last, below)
    low, high = ordered[below, np.arange(len(present))], ordered[above, np.arange(len(present))]
    weight = virtual - below
    step = high - low
    # numpy's _lerp: from the nearer end
    found = np.where(weight >= 0.5, high - step * (1 - weight), low + step * weight).tolist()
    for i, column in enumerate(present):
        median, p10, p90 = found[0][i], found[1][i], found[2][i]
        out[column] = {"median": median, "p10": p10, "p90": p90, "runs": int(counts[column])}
    return out
