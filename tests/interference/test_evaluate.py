"""Scoring SPEC 3.11 against a contention truth (docs/accuracy.md "The contention year"), on
hand-made lines."""

from mosaic.interference.evaluate import score


def _line(file, group, kind, effect=0.0, slowdown=1.0, by=()):
    contention = {
        "slowed": slowdown > 1.0,
        "slowdown": slowdown,
        "by": [{"job_id": j, "share": 0.5} for j in by],
        "demand_bps": 1e8,
        "got_bps": 1e8 / slowdown,
        "group_sensitivity": kind,
        "effect": effect,
    }
    return {"file": file, "group": group, "contention": contention}


def test_score_counts_from_the_truths_side():
    truth = [_line(f"s{i}", "1:/bin/s", "sensitive", 0.7) for i in range(30)]
    truth += [_line(f"w{i}", "2:/bin/w", "sensitive", 0.3) for i in range(10)]
    truth += [_line(f"n{i}", "3:/bin/n", "none") for i in range(5)]
    truth += [_line(f"i{i}", "4:/bin/i", "insensitive") for i in range(5)]
    truth += [
        _line("v1", "5:/bin/v", "sensitive", 0.7, 2.0, ["900"]),
        _line("v2", "5:/bin/v", "sensitive", 0.7, 1.6, ["901"]),
    ]
    truth += [_line("v3", "5:/bin/v", "sensitive", 0.7, 1.49, ["902"])]  # below 1.5x: not counted
    truth += [{"file": "plain", "group": "6:/bin/x"}]  # no contention object: left out
    labels = {
        "1:/bin/s": "sensitive",
        "2:/bin/w": "inconclusive",
        "3:/bin/n": "sensitive",
        "4:/bin/i": "insensitive",
    }
    runs = {
        "v1": (True, {"kind": "run", "job_id": "900"}),
        "v2": (True, {"kind": "run", "job_id": "777"}),  # named the wrong one
    }
    out = score(truth, labels, runs)
    assert out["groups"] == 5
    assert out["false_positive_share"] == 1 / 2  # 3:/bin/n called sensitive, 4:/bin/i not
    assert out["recall_strong"] == 1 / 1  # only 1:/bin/s has effect >= 0.6 and >= 30 runs
    assert out["recall_by_cell"]["effect 0.3, runs <20"] == {"groups": 1, "found": 0, "recall": 0.0}
    assert out["insensitive_precision"] == 1.0
    assert out["slowed_runs"] == 2 and out["slowed_flagged_share"] == 1.0 and out["named_cause_share"] == 0.5


def test_nothing_to_count_is_none():
    out = score([], {}, {})
    assert out["false_positive_share"] is None and out["recall_strong"] is None and out["slowed_runs"] == 0
