"""Score a results folder against a synthetic corpus' truth (``mosaic eval``).

A categorized log is right in a family when all of the family's ``must``
labels are among its categories and none of its ``must_not`` labels are;
it is right overall when every family is. Labels the truth leaves out (too
close to a threshold to call) are never counted either way.

Scores: trace accuracy (overall, per family, per scenario), per-label
precision and recall (over the logs where the truth asserts the label),
eviction accuracy (invalid logs evicted with the expected reason, valid logs
kept), and dedup accuracy (each group's categorized representatives are
exactly its heaviest run; with ``--all-runs`` results, the
``representative`` flags must single out the heaviest run).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Container, Hashable, Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from mosaic.analysis.labels import ALL_LABELS, FAMILIES
from mosaic.synth.contention_eval import contention_figures, format_contention, io_scores

UNRECORDED = "unrecorded"  # the version of a result line written before versions were (0.1.0)
# What the scores read of a truth line (its ``params``, most of its bytes, are never read).
TRUTH_KEYS = ("valid", "reason", "partial", "families", "group", "heaviest", "scenario")


def _jsonl(path: Path, keys: tuple[str, ...] = ("file",)) -> Iterator[dict[str, Any]]:
    """The JSON objects of ``path``, one a line, each holding ``keys``; a malformed file
    is a ValueError naming the file, the line and what is wrong (never a traceback)."""
    if not path.exists():
        return
    if not path.is_file():  # a FIFO would block the command, a device never end
        raise ValueError(f"{path} is not a regular file")
    with open(path, errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}, line {number}: not JSON ({error.msg})") from None
            missing = [key for key in keys if key not in obj] if isinstance(obj, dict) else ["an object"]
            if missing:
                raise ValueError(f"{path}, line {number}: no {', '.join(map(repr, missing))}")
            yield obj


def _ratio(right: int, total: int) -> float | None:
    return right / total if total else None


class TruthNames:
    """Match result file names to truth names (results and stores may hold longer paths):
    the longest trailing part of a name that ``truth`` (names, or a dict keyed by them) holds."""

    def __init__(self, truth: Container[str]):
        self.truth = truth

    def __call__(self, name: str) -> str | None:
        parts = Path(name).as_posix().split("/")
        for i in range(len(parts)):
            candidate = "/".join(parts[i:])
            if candidate in self.truth:
                return candidate
        return None


def family_right(expected: dict[str, Any], categories: AbstractSet[str]) -> bool:
    return set(expected["must"]) <= categories and not set(expected["must_not"]) & categories


class _Shared:
    """One copy of each value that many lines repeat (label sets, families, groups).

    A year's truth and all-runs results hold 462,502 and 314,501 lines that
    differ in a few fields: kept line by line, as parsed, they took 4.8 GB.
    """

    def __init__(self) -> None:
        self._values: dict[tuple[str, Hashable], Any] = {}

    def __call__(self, kind: str, key: Hashable, value: Any = None) -> Any:
        """The first value of this kind seen under ``key`` (``key`` itself by default)."""
        return self._values.setdefault((kind, key), key if value is None else value)

    def truth(self, line: dict[str, Any]) -> dict[str, Any]:
        """The keys the scores read of a truth line, repeated values shared."""
        kept = {key: line[key] for key in TRUTH_KEYS}
        families = kept["families"]
        same = tuple((fam, tuple(v["must"]), tuple(v["must_not"])) for fam, v in families.items())
        kept["families"] = self("families", same, families)
        kept["group"], kept["scenario"] = self("text", kept["group"]), self("text", kept["scenario"])
        return kept

    def trace(self, obj: dict[str, Any]) -> dict[str, Any]:
        """What the scores read of a categorized log's result object."""
        categories = tuple(obj.get("categories", ()))
        return {
            "categories": self("labels", categories, frozenset(categories)),
            "partial": bool(obj.get("partial")),
            "representative": bool(obj.get("group", {}).get("representative", True)),
        }


def evaluate(results_dir: str | Path, truth_path: str | Path) -> dict[str, Any]:
    """Scores of ``results_dir`` (traces.jsonl, evicted.jsonl) against ``truth_path``."""
    results_dir = Path(results_dir)
    if not any((results_dir / name).is_file() for name in ("traces.jsonl", "evicted.jsonl")):
        # scoring nothing would print accuracies of an empty run as if measured
        raise ValueError(
            f"no traces.jsonl nor evicted.jsonl in {results_dir}: "
            f"run `mosaic run ... --out {results_dir}` first"
        )
    shared = _Shared()
    try:
        truth = {t["file"]: shared.truth(t) for t in _jsonl(Path(truth_path), ("file", *TRUTH_KEYS))}
    except (TypeError, AttributeError, KeyError) as error:  # a value of the wrong kind
        raise ValueError(f"{truth_path}: not a truth file of `mosaic synth` ({error!r})") from None
    if not truth:
        raise ValueError(f"no truth lines in {truth_path}")
    match = TruthNames(truth)
    traces: dict[str, dict[str, Any]] = {}
    evicted: dict[str, str | None] = {}  # name: eviction reason
    unknown = 0
    versions: set[str] = set()  # of mosaic, as each line records it (0.2.0 on: docs/release.md)
    try:
        for obj in _jsonl(results_dir / "traces.jsonl"):
            versions.add(obj.get("mosaic_version", UNRECORDED))
            name = match(obj["file"])
            if name is None:
                unknown += 1
            elif obj.get("status", "ok") == "ok":
                traces[name] = shared.trace(obj)
            else:
                evicted[name] = shared("text", obj.get("reason"))
        for obj in _jsonl(results_dir / "evicted.jsonl"):
            versions.add(obj.get("mosaic_version", UNRECORDED))
            name = match(obj["file"])
            if name is None:
                unknown += 1
            else:
                evicted[name] = shared("text", obj.get("reason"))
    except (TypeError, AttributeError) as error:  # a value of the wrong kind
        raise ValueError(f"{results_dir}: not the outputs of `mosaic run` ({error!r})") from None
    extra: dict[str, Any] = {}
    figures = contention_figures(truth_path)
    if figures is not None:  # a contention year (`mosaic synth contention`)
        extra["contention"] = figures
        if (results_dir / "store.sqlite").is_file():  # SPEC 3.11 scored from the truth's side
            from mosaic.interference.evaluate import who_slows_whom

            extra["who_slows_whom"] = who_slows_whom(results_dir / "store.sqlite", truth_path, match)
    io = io_scores(results_dir, truth_path, match)
    if io is not None:  # the truth's time counters against the results' darshan-util figures
        extra["io"] = io
    return {
        "logs": len(truth),
        "categorized": len(traces),
        "evicted": len(evicted),
        "unknown_result_files": unknown,
        "versions": sorted(versions, key=str),
        "traces": _trace_scores(truth, traces),
        "eviction": _eviction_scores(truth, traces, evicted),
        "dedup": _dedup_scores(truth, traces),
        **extra,
    }


def _trace_scores(truth: dict[str, Any], traces: dict[str, Any]) -> dict[str, Any]:
    right = 0
    family: Counter[str] = Counter()
    per_scenario: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    counts: dict[str, Counter[str]] = {label: Counter() for label in ALL_LABELS}
    scored = 0
    wrong_examples: dict[str, list[Any]] = defaultdict(list)
    for name, obj in traces.items():
        expected = truth[name]
        if not expected["valid"] or not expected["families"]:
            continue
        scored += 1
        categories = obj["categories"]
        ok_all = True
        for fam in FAMILIES:
            exp = expected["families"].get(fam, {"must": [], "must_not": []})
            ok = family_right(exp, categories)
            family[fam] += ok
            ok_all &= ok
            for label in exp["must"]:
                counts[label]["tp" if label in categories else "fn"] += 1
            for label in exp["must_not"]:
                counts[label]["fp" if label in categories else "tn"] += 1
        right += ok_all
        per_scenario[expected["scenario"]][0] += ok_all
        per_scenario[expected["scenario"]][1] += 1
        if not ok_all and len(wrong_examples[expected["scenario"]]) < 3:
            wrong_examples[expected["scenario"]].append(name)
    labels = {}
    for label, c in counts.items():
        if sum(c.values()):
            labels[label] = {
                "precision": _ratio(c["tp"], c["tp"] + c["fp"]),
                "recall": _ratio(c["tp"], c["tp"] + c["fn"]),
                "asserted": sum(c.values()),
                **{k: c[k] for k in ("tp", "fp", "fn", "tn")},
            }
    return {
        "scored": scored,
        "accuracy": _ratio(right, scored),
        "families": {fam: _ratio(family[fam], scored) for fam in FAMILIES},
        "scenarios": {
            s: {"accuracy": _ratio(r, n), "logs": n, "wrong_examples": wrong_examples[s]}
            for s, (r, n) in sorted(per_scenario.items())
        },
        "labels": labels,
    }


def _eviction_scores(
    truth: dict[str, Any], traces: dict[str, Any], evicted: dict[str, str | None]
) -> dict[str, Any]:
    invalid = [n for n, t in truth.items() if not t["valid"]]
    valid = [n for n, t in truth.items() if t["valid"]]
    confusion: dict[str, Counter[str | None]] = defaultdict(Counter)
    for name in invalid:
        got = evicted[name] if name in evicted else ("categorized" if name in traces else "missing")
        confusion[truth[name]["reason"]][got] += 1
    invalid_right = sum(confusion[r][r] for r in confusion)
    valid_evicted = Counter(evicted[n] for n in valid if n in evicted)
    # A --strict run evicts partial logs as "partial": right for a partial log.
    valid_right = sum(
        1 for n in valid if n not in evicted or (truth[n]["partial"] and evicted[n] == "partial")
    )
    partial = [n for n in valid if truth[n]["partial"] and n in traces]
    flagged = sum(traces[n]["partial"] for n in partial)
    return {
        "accuracy": _ratio(invalid_right + valid_right, len(invalid) + len(valid)),
        "invalid_evicted_right": _ratio(invalid_right, len(invalid)),
        "valid_kept": _ratio(valid_right, len(valid)),
        "confusion": {r: dict(c) for r, c in sorted(confusion.items())},
        "valid_evicted_reasons": dict(valid_evicted),
        "partial_flagged": _ratio(flagged, len(partial)),
    }


def _dedup_scores(truth: dict[str, Any], traces: dict[str, Any]) -> dict[str, Any]:
    groups: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"heaviest": set(), "representatives": set(), "categorized": 0}
    )
    for name, t in truth.items():
        if t["valid"]:
            g = groups[t["group"]]
            if t["heaviest"]:
                g["heaviest"].add(name)
            if name in traces:
                g["categorized"] += 1
                if traces[name]["representative"]:
                    g["representatives"].add(name)
    all_runs = any(g["categorized"] > len(g["representatives"]) for g in groups.values()) or any(
        len(g["representatives"]) > 1 for g in groups.values()
    )
    right = sum(g["representatives"] == g["heaviest"] for g in groups.values())
    return {
        "groups": len(groups),
        "accuracy": _ratio(right, len(groups)),
        "all_runs": all_runs,
        "wrong_examples": [k for k, g in groups.items() if g["representatives"] != g["heaviest"]][:5],
    }


def _pct(value: float | None) -> str:
    return "   n/a" if value is None else f"{100 * value:5.1f}%"


def mixed_versions(scores: dict[str, Any]) -> str | None:
    """The warning when the results scored were made by more than one version of mosaic."""
    if len(scores["versions"]) < 2:
        return None
    return (
        f"warning: these results mix versions of mosaic ({', '.join(scores['versions'])}): "
        "their labels may follow different rules; rerun `mosaic run` into a new --out"
    )


def format_table(scores: dict[str, Any]) -> str:
    """Plain-text report of :func:`evaluate`'s scores."""
    t, e, d = scores["traces"], scores["eviction"], scores["dedup"]
    lines = [
        f"results of mosaic {', '.join(scores['versions']) or '(none)'}",
        f"logs in truth {scores['logs']}, categorized {scores['categorized']}, "
        f"evicted {scores['evicted']}, "
        f"unmatched result files {scores['unknown_result_files']}",
        "",
        f"trace accuracy      {_pct(t['accuracy'])}  ({t['scored']} categorized logs scored)",
    ]
    lines += [f"  {fam:<22}{_pct(v)}" for fam, v in t["families"].items()]
    lines += [
        "",
        f"eviction accuracy   {_pct(e['accuracy'])}  "
        f"(invalid evicted with the right reason {_pct(e['invalid_evicted_right'])}, "
        f"valid kept {_pct(e['valid_kept'])}, "
        f"partial flagged {_pct(e['partial_flagged'])})",
    ]
    lines += [f"  {reason:<22}{dict(got)}" for reason, got in e["confusion"].items()]
    lines += [
        "",
        f"dedup accuracy      {_pct(d['accuracy'])}  ({d['groups']} groups"
        f"{', all runs categorized' if d['all_runs'] else ''})",
        "",
        "per scenario",
    ]
    lines += [f"  {name:<40}{_pct(s['accuracy'])}  ({s['logs']})" for name, s in t["scenarios"].items()]
    lines += ["", f"per label{'':<32}precision  recall  asserted"]
    lines += [
        f"  {label:<40}{_pct(v['precision'])}  {_pct(v['recall'])}  {v['asserted']:8d}"
        for label, v in t["labels"].items()
    ]
    if "contention" in scores:
        lines += format_contention(scores["contention"])
    if "who_slows_whom" in scores:
        from mosaic.interference.evaluate import format_scores

        lines += format_scores(scores["who_slows_whom"])
    if "io" in scores and scores["io"]["checked"]:
        lines += [
            "",
            f"I/O time per log    {_pct(scores['io']['accuracy'])}  ({scores['io']['checked']} modules)",
        ]
    return "\n".join(lines)
