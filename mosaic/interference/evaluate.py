"""SPEC 3.11 scored against a contention truth (data contract 5), counted from the truth's
side: a synthetic year's truth.jsonl lines with their ``contention`` object, and the
store's ``app_contention`` and ``run_contention`` after ``mosaic run`` over that year.

- groups: the share of not-sensitive groups called sensitive (the null year: all of
  them), recall of the designed sensitive groups by designed effect and run count, and the
  precision of ``insensitive``;
- runs: among the truth's slowed runs (slowdown >= ``SLOWED``), the share flagged slow,
  and among those named, the share whose named run is one of the truth's slowing jobs.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

SLOWED = 1.5  # a truly slowed run: io time at least 1.5x its uncontended time
STRONG_EFFECT = 0.6  # the designed effect (rho) from which recall must reach 0.95 ...
STRONG_RUNS = 30  # ... with at least this many runs


def stored(db: sqlite3.Connection) -> tuple[dict[str, str], dict[str, tuple[bool, dict[str, Any] | None]]]:
    """(group key -> label, log file -> (slow, cause)) from a store after the analysis."""
    labels = {
        str(key): str(label) for key, label in db.execute("SELECT group_key, label FROM app_contention")
    }
    runs = {
        str(file): (bool(slow), json.loads(cause) if cause else None)
        for file, slow, cause in db.execute(
            "SELECT j.file, c.slow, c.cause FROM run_contention c JOIN jobs j ON j.run = c.run"
        )
    }
    return labels, runs


def _share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def score(
    truth: Iterable[Mapping[str, Any]],
    labels: Mapping[str, str],
    runs: Mapping[str, tuple[bool, Mapping[str, Any] | None]],
) -> dict[str, Any]:
    """The acceptance numbers (None where nothing was there to count)."""
    lines = [t for t in truth if t.get("contention")]
    by_group: dict[str, list[Mapping[str, Any]]] = {}
    for t in lines:
        by_group.setdefault(str(t["group"]), []).append(t)
    designed: dict[str, tuple[str, float, int]] = {}
    for key, members in by_group.items():
        kind = Counter(str(m["contention"].get("group_sensitivity")) for m in members).most_common(1)[0][0]
        effect = max(float(m["contention"].get("effect") or 0.0) for m in members)
        designed[key] = (kind, effect, len(members))
    not_sensitive = [k for k, (kind, _, _) in designed.items() if kind != "sensitive"]
    sensitive = [k for k, (kind, _, _) in designed.items() if kind == "sensitive"]
    strong = [k for k in sensitive if designed[k][1] >= STRONG_EFFECT and designed[k][2] >= STRONG_RUNS]
    called_insensitive = [k for k in designed if labels.get(k) == "insensitive"]
    curve: dict[str, dict[str, Any]] = {}
    for k in sensitive:
        _, effect, n = designed[k]
        cell = curve.setdefault(f"effect {effect:.1f}, runs {_bucket(n)}", {"groups": 0, "found": 0})
        cell["groups"] += 1
        cell["found"] += labels.get(k) == "sensitive"
    for cell in curve.values():
        cell["recall"] = cell["found"] / cell["groups"]
    slowed = [t for t in lines if float(t["contention"].get("slowdown") or 0.0) >= SLOWED]
    flagged = [t for t in slowed if runs.get(str(t["file"]), (False, None))[0]]
    named = [t for t in flagged if (runs[str(t["file"])][1] or {}).get("kind") == "run"]
    right = [
        t
        for t in named
        if str((runs[str(t["file"])][1] or {}).get("job_id"))
        in {str(b["job_id"]) for b in t["contention"]["by"]}
    ]
    return {
        "groups": len(designed),
        "false_positive_share": _share(
            sum(labels.get(k) == "sensitive" for k in not_sensitive), len(not_sensitive)
        ),
        "recall_strong": _share(sum(labels.get(k) == "sensitive" for k in strong), len(strong)),
        "recall_by_cell": dict(sorted(curve.items())),
        "insensitive_precision": _share(
            sum(designed[k][0] in ("insensitive", "none") for k in called_insensitive),
            len(called_insensitive),
        ),
        "slowed_runs": len(slowed),
        "slowed_flagged_share": _share(len(flagged), len(slowed)),
        "named_cause_share": _share(len(right), len(named)),
    }


def _bucket(n: int) -> str:
    for edge in (10, 20, 30, 60, 100):
        if n < edge:
            return f"<{edge}"
    return ">=100"
