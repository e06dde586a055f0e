"""Acceptance on the contention year (docs/accuracy.md "The contention year"), counted from
the truth's side: who slows whom (docs/method.md 3.11), signatures (3.12), the forecast
backtest (3.13).

    python -m benchmarks.contention_acceptance [--year DIR --out DIR] [--null-year DIR --null-out DIR]
        [--count N --seed S --dir TMP] [--null-seeds 1 2 3 --null-count M] [--json FILE]

Without ``--year``, a contention year of ``--count`` logs and its null year are made in
``--dir`` (``mosaic synth contention``) and run (``mosaic run --workers 2 --all-runs``),
each step timed. ``--null-seeds``: more null years of ``--null-count`` logs, made and run
here, for the false-positive share over seeds.

1. **Who slows whom:** :func:`mosaic.interference.evaluate.who_slows_whom` (what
   ``mosaic eval`` prints), with Wilson 95 % intervals, each designed group's label, and
   beside each designed sensitive group the power one Spearman test (one-sided, level q,
   no correction) has at its run count and at the rho the truth itself reaches: Spearman
   of the truth's slowdown against the store's load over the same runs (simulated,
   Gaussian copula, 2,000 draws).
2. **Signatures**, groups with >= 10 runs with their activity stored: normalized cross-correlation
   (``mosaic.signature.normalized_cross_correlation``, lags up to
   ``signature_max_lag_share``) of the signature's p50, the heaviest run alone and the
   plain mean of the lag-aligned runs with the designed curve
   (:func:`mosaic.synth.contention_year.designed_layout` of the group's truth ``params``),
   bytes-weighted over directions, as tests/test_signature.py scores them.
3. **Forecast backtest:** ``benchmarks.bench_forecast.backtest`` on the year's arrays
   (:func:`forecast_year`): starts and run times from ``run_performance``, the center's
   timeline of ``/scratch`` (``mosaic timeline export``, read + write), each held-out
   job's others' load over its run time (the timeline less its own activity), slowdowns
   from the truth; held out: the last 30 days of starts (the last quarter of the span if
   shorter).
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import scipy.stats

from benchmarks.bench_forecast import Year, backtest, render
from mosaic.config import DEFAULT
from mosaic.corpus.timeline import load_activity
from mosaic.interference.evaluate import SLOWED, who_slows_whom
from mosaic.series import load_series, series_from_intervals
from mosaic.signature import GROUPS_WITH_RUNS, SignatureSettings, build, normalized_cross_correlation
from mosaic.synth.contention_year import SHARED_FS, designed_layout
from mosaic.synth.evaluate import TruthNames

PY = [sys.executable, "-m", "mosaic"]
Z = 1.959963984540054  # 95 %
DAY = 86400.0
HELD_DAYS = 30.0
FORECAST_BIN = 300.0
BURST_START = 0.02  # a designed burst is found by a signature burst starting this near (share of run)
MAJOR = 0.05  # a designed burst with at least this share of its direction's designed bytes


def wilson(hits: int, n: int) -> tuple[float, float] | None:
    """Wilson 95 % interval of a share (None for n = 0)."""
    if n == 0:
        return None
    p = hits / n
    d = 1 + Z * Z / n
    c = (p + Z * Z / (2 * n)) / d
    h = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def timed(cmd: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def make(folder: Path, count: int, seed: int, null: bool) -> tuple[Path, Path, dict[str, float]]:
    year, out = (
        folder / f"year{'-null' if null else ''}-{seed}",
        folder / f"out{'-null' if null else ''}-{seed}",
    )
    t_synth = timed(
        [*PY, "synth", "contention", str(year), "--count", str(count), "--seed", str(seed)]
        + (["--null"] if null else [])
    )
    t_run = timed([*PY, "run", str(year), "--out", str(out), "--workers", "2", "--all-runs"])
    return year, out, {"synth_seconds": t_synth, "run_seconds": t_run}


def truth_lines(path: Path) -> list[dict[str, Any]]:
    out = []
    with open(path) as fh:
        for line in fh:
            t = json.loads(line)
            if t.get("valid"):
                out.append(t)
    return out


def spearman_power(rho: float, n: int, q: float, draws: int = 2000, seed: int = 0) -> float:
    """Power of one one-sided Spearman test at level q with n runs at Spearman rho."""
    if n < 3 or not math.isfinite(rho):
        return math.nan
    rng = np.random.default_rng([seed, n, int(1000 * max(rho, 0))])
    r = 2 * math.sin(math.pi * max(min(rho, 0.999), -0.999) / 6)
    z = rng.standard_normal((draws, n, 2))
    y = r * z[..., 0] + math.sqrt(1 - r * r) * z[..., 1]
    rx = scipy.stats.rankdata(z[..., 0], axis=1)
    ry = scipy.stats.rankdata(y, axis=1)
    rx -= rx.mean(1, keepdims=True)
    ry -= ry.mean(1, keepdims=True)
    rs = (rx * ry).sum(1) / np.sqrt((rx * rx).sum(1) * (ry * ry).sum(1))
    t = rs * np.sqrt((n - 2) / np.maximum(1 - rs * rs, 1e-12))
    p = scipy.stats.t.sf(t, n - 2)
    return float(np.mean(p <= q))


# --------------------------------------------------------------------------- 1. who slows whom


def groups_side(out: Path, truth: list[dict[str, Any]]) -> dict[str, Any]:
    match = TruthNames({t["file"] for t in truth})
    db = sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT group_key, label, n, rho, p, q FROM app_contention").fetchall()
        loads = {
            str(f): (float(ld) if ld is not None else math.nan)
            for f, ld in db.execute(
                "SELECT j.file, sum(l.io_seconds * (coalesce(l.read_rate, 0) + coalesce(l.write_rate, 0)))"
                " / nullif(sum(l.io_seconds), 0) FROM run_load l JOIN jobs j ON j.run = l.run GROUP BY l.run"
            )
        }
    finally:
        db.close()
    labels = {str(k): (str(lb), n, rho, p, q) for k, lb, n, rho, p, q in rows}
    run_load = {match(f): v for f, v in loads.items()}
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in truth:
        if t.get("contention"):
            by_group[t["group"]].append(t)
    designed = []
    for key, members in by_group.items():
        c = members[0]["contention"]
        kind = str(c.get("group_sensitivity"))
        if kind == "none":
            continue
        s = np.array([float(m["contention"]["slowdown"]) for m in members])
        ld = np.array([run_load.get(m["file"], math.nan) for m in members])
        ok = np.isfinite(ld)
        rho_truth = (
            float(scipy.stats.spearmanr(ld[ok], s[ok]).statistic)
            if ok.sum() >= 3 and np.ptp(s[ok]) > 0 and np.ptp(ld[ok]) > 0
            else math.nan
        )
        label, n, rho, p, q = labels.get(key, ("absent", None, None, None, None))
        designed.append(
            {
                "group": key.rsplit("/", 1)[-1],
                "kind": kind,
                "effect": float(c.get("effect") or 0.0),
                "fs": c.get("fs"),
                "runs": len(members),
                "slowed_share": float(np.mean(s > 1.001)),
                "rho_truth": rho_truth,
                "label": label,
                "n": n,
                "rho": rho,
                "q": q,
                "power_one_test": spearman_power(rho_truth, int(n or len(members)), DEFAULT.contention_fdr_q),
            }
        )
    designed.sort(key=lambda d: (d["kind"], d["effect"], d["runs"], d["group"]))
    strong = [
        d for d in designed if d["kind"] == "sensitive" and d["runs"] >= 30 and (d["rho_truth"] or 0) >= 0.6
    ]
    found = sum(d["label"] == "sensitive" for d in strong)
    tested = [lb for lb, *_ in labels.values() if lb in ("sensitive", "insensitive", "inconclusive")]
    return {
        "designed": designed,
        "recall_truth_rho_strong": {
            "groups": len(strong),
            "found": found,
            "interval": wilson(found, len(strong)),
        },
        "tested_groups": len(tested),
        "labels": dict(Counter(lb for lb, *_ in labels.values())),
    }


def null_share(out: Path) -> dict[str, Any]:
    db = sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True)
    try:
        labels = [str(r[0]) for r in db.execute("SELECT label FROM app_contention")]
    finally:
        db.close()
    tested = [lb for lb in labels if lb in ("sensitive", "insensitive", "inconclusive")]
    called = sum(lb == "sensitive" for lb in tested)
    return {
        "groups": len(labels),
        "tested": len(tested),
        "sensitive": called,
        "share_of_tested": called / len(tested) if tested else None,
        "interval": wilson(called, len(tested)),
    }


def signatures_side(out: Path, truth: list[dict[str, Any]], min_runs: int = 10) -> dict[str, Any]:
    settings = SignatureSettings.of(DEFAULT)
    k = settings.signature_points
    lag = int(settings.signature_max_lag_share * k)
    params: dict[str, dict[str, Any]] = {}
    for t in truth:
        params.setdefault(t["group"], t["params"])
    db = sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True)
    rows: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    bursts: dict[str, list[int]] = {"major": [0, 0], "minor": [0, 0]}  # [missed, found]
    missed: list[str] = []
    try:
        keys = [str(r[0]) for r in db.execute(GROUPS_WITH_RUNS, (min_runs,))]
        for key in keys:
            layout = designed_layout(params[key]) if key in params else None
            if layout is None:
                skipped["no designed layout (irregular bursts: random per template)"] += 1
                continue
            runs = [s for _, s in load_series(db, key, DEFAULT.signature_max_runs)]
            built = build(runs, settings)
            if built.body is None:
                skipped[f"no signature: {built.reason}"] += 1
                continue
            run_time = float(params[key]["run_time"])
            weights = {d: sum(b for dd, _, _, b in layout if dd == d) for d in ("read", "write")}
            total = sum(weights.values())
            if total <= 0:
                skipped["designed layout moves no byte"] += 1
                continue
            start = np.array([s for _, s, _, _ in layout])
            end = np.array([e for _, _, e, _ in layout])
            read = np.array([b if d == "read" else 0.0 for d, _, _, b in layout])
            write = np.array([b if d == "write" else 0.0 for d, _, _, b in layout])
            design = series_from_intervals(start, end, read, write, run_time, "dxt", 1 << 20)
            heavy = max(runs, key=lambda s: s.total("read") + s.total("write"))
            curves_of = {d: design.normalized(d, k) for d, w in weights.items() if w > 0}
            # a flat designed curve (a steady phase over the whole run) has no shape to
            # correlate with: the measure is 0 for it whatever the signature (docs/method.md
            # 3.12), so such a direction is left out and a group with only those is counted apart
            flat = {
                d
                for d in curves_of
                if all(a <= 0.0 and b >= run_time for dd, a, b, _ in layout if dd == d)
                or np.std(curves_of[d]) <= 0.01 * max(float(np.mean(curves_of[d])), 1e-300)
            }
            for d in flat:
                weights[d] = 0.0
            total = sum(weights.values())
            if total <= 0:
                skipped["flat designed curve (steady over the run): cross-correlation undefined"] += 1
                continue
            got = np.zeros(3)
            for direction, w in weights.items():
                if w == 0:
                    continue
                truth_curve = curves_of[direction]
                curves = (
                    np.array(built.body["normalized"][direction]["p50"]),
                    heavy.normalized(direction, k),
                    built.lagged[direction].mean(axis=0),
                )
                got += (
                    w / total * np.array([normalized_cross_correlation(c, truth_curve, lag) for c in curves])
                )
            # designed bursts found: a signature burst of the direction starting within
            # BURST_START of the designed start (bytes not compared: each run's bytes are its
            # group's times its own scale); "major": >= MAJOR of its direction's designed bytes
            found_bursts = built.body.get("bursts") or []
            designed_bursts = [(d, a / run_time, b) for d, a, _, b in layout if b > 0]
            by_dir = {d: sum(b for dd, _, b in designed_bursts if dd == d) for d in ("read", "write")}
            for d, at, b in designed_bursts:
                major = b >= MAJOR * by_dir[d]
                hit = any(f["direction"] == d and abs(f["start"] - at) <= BURST_START for f in found_bursts)
                bursts["major" if major else "minor"][int(hit)] += 1
                if major:
                    kind = str(params[key].get("name") or "").split("_")[0]
                    side = (
                        "designed groups"
                        if kind in ("sensitive", "insensitive", "aggressor")
                        else "background"
                    )
                    bursts.setdefault(f"major, {side}", [0, 0])[int(hit)] += 1
                if major and not hit and len(missed) < 10:
                    missed.append(f"{key} {d} at {at:.2f}")
            rows.append(
                {"group": key, "runs": len(runs), "signature": got[0], "heaviest": got[1], "mean": got[2]}
            )
    finally:
        db.close()
    if not rows:
        return {"groups": 0, "skipped": dict(skipped)}
    a = np.array([[r["signature"], r["heaviest"], r["mean"]] for r in rows])
    return {
        "groups": len(rows),
        "skipped": dict(skipped),
        "mean": a.mean(0).tolist(),
        "min": a.min(0).tolist(),
        "p10": np.quantile(a, 0.1, axis=0).tolist(),
        "at_least_0.9": int((a[:, 0] >= 0.9).sum()),
        "beats_both": int(((a[:, 0] > a[:, 1]) & (a[:, 0] > a[:, 2])).sum()),
        "within_0.003_of_the_better_baseline": int((a[:, 0] >= a[:, 1:].max(1) - 0.003).sum()),
        "beats_heaviest": int((a[:, 0] > a[:, 1]).sum()),
        "beats_mean": int((a[:, 0] > a[:, 2]).sum()),
        # over the groups, paired: is the signature's score higher than each baseline's?
        # (Wilcoxon signed-rank, one-sided; scipy.stats, its exact or normal p-value)
        "paired": {
            name: {
                "median_difference": float(np.median(a[:, 0] - a[:, j])),
                "p_value": float(scipy.stats.wilcoxon(a[:, 0], a[:, j], alternative="greater").pvalue),
            }
            for j, name in ((1, "heaviest"), (2, "mean"))
        },
        "designed_bursts": {k: {"found": v[1], "missed": v[0]} for k, v in bursts.items()},
        "missed_examples": missed,
        "worst": sorted(rows, key=lambda r: r["signature"])[:5],
    }


# --------------------------------------------------------------------------- 3. forecast


def forecast_year(out: Path, truth: list[dict[str, Any]], bins: int) -> tuple[Year, float, float]:
    """The bench_forecast arrays of a run contention year, and its held-out window."""
    store = out / "store.sqlite"
    npz = out / "timeline-acceptance.npz"
    subprocess.run(
        [*PY, "timeline", "export", str(store), "-o", str(npz), "--bin-seconds", str(FORECAST_BIN)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    data = np.load(npz)
    first = float(data[f"{SHARED_FS}/start"][0])
    timeline = data[f"{SHARED_FS}/read"] + data[f"{SHARED_FS}/write"]
    match = TruthNames({t["file"] for t in truth})
    slow = {t["file"]: float(t["contention"]["slowdown"]) for t in truth if t.get("contention")}
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT p.run, j.file, coalesce(p.group_key, j.group_key), p.start_epoch, p.end_epoch "
            "FROM run_performance p JOIN jobs j ON j.run = p.run "
            "WHERE p.start_epoch IS NOT NULL AND p.end_epoch > p.start_epoch ORDER BY p.start_epoch"
        ).fetchall()
        sig = {str(k): json.loads(b) for k, b in db.execute("SELECT group_key, body FROM signatures")}
        sens = {
            str(k): (str(lb), s)
            for k, lb, s in db.execute("SELECT group_key, label, slope FROM app_contention")
        }
    finally:
        db.close()
    keys = sorted({str(r[2]) for r in rows})
    index = {k: i for i, k in enumerate(keys)}
    starts = np.array([float(r[3]) for r in rows])
    ends = np.array([float(r[4]) for r in rows])
    run_times = ends - starts
    span = starts[-1] - starts[0]
    held_from = starts[-1] - HELD_DAYS * DAY if span >= 4 * HELD_DAYS * DAY else starts[-1] - span / 4
    held_to = starts[-1] + 1.0
    loads = np.zeros((len(rows), bins))
    cum = np.concatenate([[0.0], np.cumsum(timeline)])
    edges_tl = first + FORECAST_BIN * np.arange(len(timeline) + 1)
    with _store(store) as s:
        for i in np.flatnonzero(starts >= held_from):
            edges = starts[i] + np.linspace(0, run_times[i], bins + 1)
            moved = np.diff(np.interp(edges, edges_tl, cum))
            act = load_activity(s, int(rows[i][0]))
            fs = act.by_fs.get(SHARED_FS) if act is not None else None
            if fs is not None and len(fs.start):
                own = np.zeros(bins)
                rel = edges - starts[i]
                span_ = np.maximum(fs.end - fs.start, 1e-9)
                amount = fs.read + fs.write
                for b in range(bins):
                    overlap = np.clip(np.minimum(fs.end, rel[b + 1]) - np.maximum(fs.start, rel[b]), 0, None)
                    own[b] = float((amount * overlap / span_).sum())
                moved = np.maximum(moved - own, 0.0)
            loads[i] = moved / (run_times[i] / bins)
    year = Year(
        starts=starts,
        run_times=run_times,
        groups=np.array([index[str(r[2])] for r in rows], dtype=np.int64),
        time_limits=np.full(len(rows), np.nan),
        slowdowns=np.array([slow.get(match(str(r[1])) or "", math.nan) for r in rows]),
        loads=loads,
        origin=first,
        bin_seconds=FORECAST_BIN,
        timeline=timeline,
        signatures=[sig.get(k) for k in keys],
        sensitivity=[(sens[k][0], sens[k][1]) if k in sens else (None, None) for k in keys],
    )
    return year, held_from, held_to


class _store:
    """A Store opened for reading, closed after."""

    def __init__(self, path: Path):
        from mosaic.corpus.store import Store

        self.store = Store(path)

    def __enter__(self) -> Any:
        return self.store

    def __exit__(self, *exc: object) -> None:
        close = getattr(self.store, "close", None)
        if close is not None:
            close()


# --------------------------------------------------------------------------- report


def _f(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--year", type=Path, help="a contention year already made")
    parser.add_argument("--out", type=Path, help="its `mosaic run --all-runs` outputs")
    parser.add_argument("--null-year", type=Path)
    parser.add_argument("--null-out", type=Path)
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, help="where to make the years (default: a temporary folder)")
    parser.add_argument("--null-seeds", type=int, nargs="*", default=[])
    parser.add_argument("--null-count", type=int, default=5000)
    parser.add_argument("--skip", nargs="*", default=[], choices=["groups", "signatures", "forecast"])
    parser.add_argument("--json", type=Path, help="write every number here too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        times: dict[str, Any] = {}
        if args.year is None:
            args.year, args.out, times["year"] = make(folder, args.count, args.seed, False)
            args.null_year, args.null_out, times["null"] = make(folder, args.count, args.seed, True)
        result: dict[str, Any] = {"times": times}
        truth = truth_lines(args.year / "truth.jsonl")
        match = TruthNames({t["file"] for t in truth})
        began = time.process_time()
        if "groups" not in args.skip:
            scores = who_slows_whom(args.out / "store.sqlite", args.year / "truth.jsonl", match)
            result["who_slows_whom"] = scores
            result["designed_groups"] = groups_side(args.out, truth)
            nulls = {}
            if args.null_out is not None:
                nulls[f"seed {args.seed}, {args.count} logs"] = null_share(args.null_out)
            for seed in args.null_seeds:
                _, out, t = make(folder, args.null_count, seed, True)
                times[f"null seed {seed}"] = t
                nulls[f"seed {seed}, {args.null_count} logs"] = null_share(out)
            result["null"] = nulls
        if "signatures" not in args.skip:
            result["signatures"] = signatures_side(args.out, truth)
        if "forecast" not in args.skip:
            year, held_from, held_to = forecast_year(args.out, truth, 30)
            result["forecast"] = backtest(year, held_from, held_to, SLOWED)
            result["forecast"]["held_days"] = (held_to - held_from) / DAY
            result["forecast_any_slowdown"] = backtest(year, held_from, held_to, 1.1)["confusion"]
        result["cpu_seconds"] = time.process_time() - began
        print(report(result))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1, default=str))


def report(r: dict[str, Any]) -> str:
    lines = [f"steps: {json.dumps(r['times'])}"]
    if "who_slows_whom" in r:
        s = r["who_slows_whom"]
        lines += [
            "",
            "## who slows whom",
            json.dumps({k: v for k, v in s.items() if k != "recall_by_cell"}, default=str),
        ]
        lines += [
            "",
            "| group | kind | effect | runs | slowed | truth rho | label | n | rho | q | one-test power |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for d in r["designed_groups"]["designed"]:
            lines.append(
                f"| {d['group']} ({d['fs']}) | {d['kind']} | {d['effect']:g} | {d['runs']} | "
                f"{d['slowed_share']:.2f} | {_f(d['rho_truth'], 2)} | {d['label']} | {_f(d['n'])} | "
                f"{_f(d['rho'], 2)} | {_f(d['q'], 4)} | {_f(d['power_one_test'], 2)} |"
            )
        lines.append(
            f"labels: {r['designed_groups']['labels']}; tested {r['designed_groups']['tested_groups']}"
        )
        c = s.get("counts", {})
        for name, (hits, n) in {
            "not-sensitive called sensitive": (c.get("not_sensitive_called", 0), c.get("not_sensitive", 0)),
            "recall, effect >= 0.6 and >= 30 runs": (c.get("strong_found", 0), c.get("strong", 0)),
            "insensitive precision": (c.get("called_insensitive_right", 0), c.get("called_insensitive", 0)),
            "slowed runs flagged slow": (c.get("slowed_flagged", 0), s.get("slowed_runs", 0)),
            "named run among the truth's by, of the named": (c.get("named_right", 0), c.get("named_run", 0)),
            "named run among the truth's by, of the slowed": (
                c.get("named_right", 0),
                s.get("slowed_runs", 0),
            ),
        }.items():
            iv = wilson(hits, n)
            lines.append(f"{name}: {hits} of {n}  95 % {iv and tuple(round(x, 3) for x in iv)}")
        rs = r["designed_groups"]["recall_truth_rho_strong"]
        lines.append(
            f"recall, truth rho >= 0.6 and >= 30 runs: {rs['found']} of {rs['groups']}  95 % {rs['interval']}"
        )
        for name, v in r.get("null", {}).items():
            iv = v["interval"]
            lines.append(
                f"null {name}: {v['sensitive']} of {v['tested']} tested groups called sensitive "
                f"({_f(v['share_of_tested'], 4)}; 95 % {iv and tuple(round(x, 4) for x in iv)}) "
                f"of {v['groups']}"
            )
    if "signatures" in r:
        g = r["signatures"]
        lines += ["", "## signatures (groups >= 10 runs)", json.dumps(g, default=str)]
    if "forecast" in r:
        lines += [
            "",
            f"## forecast backtest (held-out {r['forecast']['held_days']:.1f} days)",
            render(r["forecast"]),
        ]
        lines += ["risk classes against slowdown >= 1.1: " + json.dumps(r["forecast_any_slowdown"])]
    lines.append(f"analysis CPU {r['cpu_seconds']:.1f} s")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
