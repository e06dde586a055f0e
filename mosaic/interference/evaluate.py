"""SPEC 3.11 scored against a contention truth (docs/accuracy.md "The contention year"),
counted from the truth's side: a synthetic year's truth.jsonl lines with their ``contention`` object, and the
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
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

SLOWED = 1.5  # a truly slowed run: io time at least 1.5x its uncontended time
STRONG_EFFECT = 0.6  # the designed effect (rho) from which recall must reach 0.95 ...
STRONG_RUNS = 30  # ... with at least this many runs
OWN_EFFECT_SHARE = 0.1  # an aggressor label's kind carrying this share of its demand has an effect of its own


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
        "counts": {  # the shares' numerators and denominators (for intervals)
            "not_sensitive": len(not_sensitive),
            "not_sensitive_called": sum(labels.get(k) == "sensitive" for k in not_sensitive),
            "strong": len(strong),
            "strong_found": sum(labels.get(k) == "sensitive" for k in strong),
            "called_insensitive": len(called_insensitive),
            "called_insensitive_right": sum(
                designed[k][0] in ("insensitive", "none") for k in called_insensitive
            ),
            "slowed_flagged": len(flagged),
            "named_run": len(named),
            "named_right": len(right),
        },
    }


def _bucket(n: int) -> str:
    for edge in (10, 20, 30, 60, 100):
        if n < edge:
            return f"<{edge}"
    return ">=100"


def designed_pairs(
    truth: Iterable[Mapping[str, Any]],
) -> tuple[set[tuple[str, str]], set[str], set[tuple[str, str]]]:
    """(designed non-zero victim x aggressor label pairs, designed-zero victim labels, pairs
    without an effect of their own) from the truth's own labels (each line's ``must``
    labels): the labels of the designed sensitive groups against those of the designed
    aggressors. An aggressor label stands for a designed effect when its kind (a read_,
    write_ or metadata_ label) carries at least ``OWN_EFFECT_SHARE`` of its aggressors'
    designed demand (:func:`mosaic.synth.contention_year.designed_demand`); a label it only
    comes with (the metadata storm's metadata labels: its requests ask 1.3 % of what its
    writes do) has no effect of its own for a joint fit to find, and its pairs are the third
    set. A victim label no slowed run carries is a designed-zero row (every pair in it must
    stay not conflicting). The labels the joint fit leaves out (its references: no
    significant I/O, period refinements) are left out here too."""
    from mosaic.interference.conflicts import fitted  # the labels the joint fit takes
    from mosaic.synth.contention_year import designed_demand

    victims: set[str] = set()
    demand: dict[str, list[float]] = {}  # aggressor label -> [its kind's bytes, all bytes]
    slowed_labels: set[str] = set()
    all_labels: set[str] = set()
    for t in truth:
        c = t.get("contention")
        if not isinstance(c, Mapping):
            continue
        labels = {str(x) for fam in (t.get("families") or {}).values() for x in fam.get("must", ())}
        all_labels |= labels
        kind = c.get("group_sensitivity")
        if kind == "sensitive":
            victims |= labels
        elif kind == "aggressor":
            asked = designed_demand(t.get("params") or {})
            for label in labels:
                mine = demand.setdefault(label, [0.0, 0.0])
                mine[0] += asked.get(label.split("_")[0], 0.0)
                mine[1] += sum(asked.values())
        if c.get("slowed"):
            slowed_labels |= labels
    aggressors = set(fitted(sorted(demand)))
    own = {a for a in aggressors if demand[a][0] >= OWN_EFFECT_SHARE * demand[a][1]}
    pairs = {(v, a) for v in fitted(sorted(victims)) for a in aggressors}
    zero = set(fitted(sorted(all_labels - slowed_labels)))
    return {p for p in pairs if p[1] in own}, zero, {p for p in pairs if p[1] not in own}


def matrix_score(
    db: sqlite3.Connection,
    nonzero: set[tuple[str, str]],
    zero_rows: set[str],
    without_own_effect: set[tuple[str, str]],
) -> dict[str, Any]:
    """The store's label_conflicts against the designed pairs: non-zero pairs found with a
    lower bound above 0, designed-zero pairs (victim in ``zero_rows``) called conflicting,
    and the pairs without an effect of their own as the fit left them (reported, not
    scored: a lower bound above 0 there would credit a label with its companion's effect)."""
    cells = {
        (str(v), str(a)): (lo, bool(c))
        for v, a, lo, c in db.execute("SELECT victim, aggressor, lo, conflicting FROM label_conflicts")
    }
    found = sorted(p for p in nonzero if p in cells and cells[p][0] is not None and cells[p][0] > 0)
    missing = sorted(p for p in nonzero if p not in found)
    zero = [p for p in cells if p[0] in zero_rows]
    wrong = sorted(p for p in zero if cells[p][1])
    return {
        "nonzero_pairs": len(nonzero),
        "nonzero_found": len(found),
        "nonzero_missing": [f"{v} x {a}" for v, a in missing],
        "zero_pairs_fitted": len(zero),
        "zero_pairs_conflicting": [f"{v} x {a}" for v, a in wrong],
        "without_own_effect": {
            f"{v} x {a}": _cell_state(cells.get((v, a))) for v, a in sorted(without_own_effect)
        },
    }


def _cell_state(cell: tuple[Any, bool] | None) -> str:
    if cell is None or cell[0] is None:
        return "null"
    return "conflicting" if cell[1] else "not conflicting"


def who_slows_whom(
    store_path: str | Path, truth_path: str | Path, match: Callable[[str], str | None]
) -> dict[str, Any]:
    """:func:`score` and :func:`matrix_score` of a store after ``mosaic run`` over a contention
    year (store file names matched to the truth's with ``match``)."""
    truth: list[dict[str, Any]] = []
    with open(truth_path) as fh:
        for line in fh:
            if '"contention"' not in line:
                continue
            t = json.loads(line)
            if isinstance(t.get("contention"), dict):
                truth.append({k: t.get(k) for k in ("file", "group", "contention", "families", "params")})
    db = sqlite3.connect(f"file:{Path(store_path)}?mode=ro", uri=True)
    try:
        try:
            labels, runs = stored(db)
        except sqlite3.OperationalError as error:  # a store without the analysis' tables
            return {"reason": f"the store has no contention analysis ({error})"}
        named = {}
        for file, value in runs.items():
            name = match(file)
            if name is not None:
                named[name] = value
        out = score(truth, labels, named)
        out["matrix"] = matrix_score(db, *designed_pairs(truth))
    finally:
        db.close()
    return out


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"


def format_scores(s: Mapping[str, Any]) -> list[str]:
    """Lines of ``mosaic eval``'s plain-text report."""
    if "reason" in s:
        return ["", f"who slows whom      not scored: {s['reason']}"]
    m = s["matrix"]
    lines = [
        "",
        f"who slows whom      {s['groups']} groups; not-sensitive called sensitive "
        f"{_pct(s['false_positive_share'])}; recall (effect >= {STRONG_EFFECT}, >= {STRONG_RUNS} runs) "
        f"{_pct(s['recall_strong'])}; insensitive precision {_pct(s['insensitive_precision'])}",
        f"  slowed runs (>= {SLOWED}x): {s['slowed_runs']}, flagged slow {_pct(s['slowed_flagged_share'])}, "
        f"named cause among the truth's {_pct(s['named_cause_share'])}",
        f"  matrix: {m['nonzero_found']} of {m['nonzero_pairs']} designed pairs with lower bound > 0; "
        f"{len(m['zero_pairs_conflicting'])} of {m['zero_pairs_fitted']} designed-zero pairs conflicting",
    ]
    if m["without_own_effect"]:
        lines.append(
            "  pairs without an effect of their own (not scored): "
            + "; ".join(f"{pair} {state}" for pair, state in m["without_own_effect"].items())
        )
    lines += [
        f"  recall {cell:<24}{v['found']:4d} of {v['groups']:4d}  {_pct(v['recall'])}"
        for cell, v in s["recall_by_cell"].items()
    ]
    return lines
