"""The conflict matrix scored against the designed pairs, and a group's designed layout."""

import sqlite3

from mosaic.interference.evaluate import designed_pairs, matrix_score
from mosaic.synth.contention_year import designed_demand, designed_layout


def _line(kind, labels, slowed, params=None):
    return {
        "contention": {"group_sensitivity": kind, "slowed": slowed},
        "families": {"f": {"must": list(labels), "must_not": []}},
        "params": params or {},
    }


def _aggressor(read_bytes: float) -> dict:
    """Reads ``read_bytes``; 10 metadata requests/s for 1 s at META_COST_BYTES (1e5): 1e6."""
    return {
        "phases": [{"direction": "read", "volume": read_bytes}],
        "metadata": [{"start": 0.0, "duration": 1.0, "rate": 10.0}],
    }


def test_designed_pairs_leave_the_fits_references_out():
    truth = [
        _line("sensitive", ["write_after_start_before_end", "read_insignificant"], True),
        _line("aggressor", ["read_after_start_before_end", "metadata_high_spike"], True, _aggressor(9e6)),
        _line("none", ["write_on_end", "read_insignificant"], False),
        {"file": "no contention"},
    ]
    pairs, zero, without = designed_pairs(truth)
    # metadata 1e6 of 1e7 bytes of demand: exactly OWN_EFFECT_SHARE (10 %), an effect of its own
    assert pairs == {
        ("write_after_start_before_end", "read_after_start_before_end"),
        ("write_after_start_before_end", "metadata_high_spike"),
    }
    assert zero == {"write_on_end"}  # read_insignificant: a reference, never fitted
    assert without == set()


def test_a_label_that_only_comes_with_the_demand_has_no_effect_of_its_own():
    truth = [
        _line("sensitive", ["write_after_start_before_end"], True),
        _line(
            "aggressor", ["read_after_start_before_end", "metadata_high_spike"], True, _aggressor(9.0001e6)
        ),
    ]
    pairs, _, without = designed_pairs(truth)  # metadata just under 10 %
    assert pairs == {("write_after_start_before_end", "read_after_start_before_end")}
    assert without == {("write_after_start_before_end", "metadata_high_spike")}


def test_designed_demand_by_kind():
    params = {
        "volume": 2.0,
        "run_time": 100.0,
        "phases": [{"direction": "write", "volume": 10.0}],
        "periodic": [{"direction": "read", "burst_bytes": 3.0, "count": 0, "period": 25.0}],  # 4 bursts
        "metadata": [{"start": 0.5, "duration": 0, "rate": 4.0}],  # the last 50 s: 200 requests
    }
    assert designed_demand(params) == {"read": 12.0, "write": 20.0, "metadata": 200 * 1e5}


def test_matrix_score_counts_lower_bounds_and_designed_zero_rows():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE label_conflicts (victim, aggressor, lo, conflicting)")
    db.executemany(
        "INSERT INTO label_conflicts VALUES (?, ?, ?, ?)",
        [
            ("w", "a", 1e-9, 1),  # found
            ("w", "b", 0.0, 0),  # lower bound exactly 0: not found
            ("z", "a", 2e-9, 1),  # a designed-zero row called conflicting
            ("z", "b", None, None),  # no evidence
        ],
    )
    out = matrix_score(db, {("w", "a"), ("w", "b"), ("w", "c")}, {"z"}, {("w", "m"), ("z", "b")})
    assert out["nonzero_pairs"] == 3 and out["nonzero_found"] == 1
    assert out["nonzero_missing"] == ["w x b", "w x c"]
    assert out["zero_pairs_fitted"] == 2 and out["zero_pairs_conflicting"] == ["z x a"]
    assert out["without_own_effect"] == {"w x m": "null", "z x b": "null"}  # reported, not scored


def test_designed_layout_of_phases_and_periods():
    params = {
        "run_time": 1000.0,
        "volume": 2.0,
        "phases": [{"direction": "write", "start": 0.45, "duration": 0.1, "volume": 100.0}],
        "periodic": [
            {
                "direction": "read",
                "period": 100.0,
                "busy": 0.1,
                "burst_bytes": 5.0,
                "count": 2.0,
                "offset": 0.5,
            }
        ],
        "irregular": [],
    }
    assert designed_layout(params) == [
        ("write", 450.0, 550.0, 200.0),
        ("read", 50.0, 60.0, 5.0),
        ("read", 150.0, 160.0, 5.0),
    ]
    assert designed_layout({**params, "irregular": [{"direction": "read"}]}) is None
    jittered = {**params, "periodic": [{**params["periodic"][0], "jitter": 0.1}]}
    assert designed_layout(jittered) is None


def _truth_line(file, group, kind, slowdown=1.0, by=(), labels=("write_after_start_before_end",)):
    return {
        "file": file,
        "group": group,
        "valid": True,
        "families": {"f": {"must": list(labels), "must_not": []}},
        "contention": {
            "slowed": slowdown > 1.001,
            "slowdown": slowdown,
            "by": [{"job_id": j, "share": 1.0} for j in by],
            "group_sensitivity": kind,
            "effect": 1.0 if kind == "sensitive" else 0.0,
        },
    }


def test_who_slows_whom_reads_a_store_and_a_truth_file(tmp_path):
    import json

    from mosaic.interference.evaluate import format_scores, who_slows_whom
    from mosaic.synth.evaluate import TruthNames

    truth = [_truth_line(f"2019/v{i}.darshan", "1:/bin/v", "sensitive") for i in range(29)]
    truth.append(_truth_line("2019/v29.darshan", "1:/bin/v", "sensitive", 2.0, ["77"]))
    truth.append(
        _truth_line("2019/a.darshan", "2:/bin/a", "aggressor", labels=("read_after_start_before_end",))
    )
    (tmp_path / "truth.jsonl").write_text("".join(json.dumps(t) + "\n" for t in truth))
    db = sqlite3.connect(tmp_path / "store.sqlite")
    db.execute("CREATE TABLE app_contention (group_key, label)")
    db.execute("CREATE TABLE jobs (run, file)")
    db.execute("CREATE TABLE run_contention (run, slow, cause)")
    db.execute("CREATE TABLE label_conflicts (victim, aggressor, lo, conflicting)")
    db.executemany(
        "INSERT INTO app_contention VALUES (?, ?)", [("1:/bin/v", "sensitive"), ("2:/bin/a", "sensitive")]
    )
    db.execute("INSERT INTO jobs VALUES (1, '/data/year/2019/v29.darshan')")  # a longer path than the truth's
    db.execute("INSERT INTO run_contention VALUES (1, 1, ?)", (json.dumps({"kind": "run", "job_id": "77"}),))
    db.execute(
        "INSERT INTO label_conflicts VALUES (?, ?, 3e-10, 1)",
        ("write_after_start_before_end", "read_after_start_before_end"),
    )
    db.commit()
    db.close()
    match = TruthNames({t["file"]: t for t in truth})
    out = who_slows_whom(tmp_path / "store.sqlite", tmp_path / "truth.jsonl", match)
    assert out["recall_strong"] == 1.0 and out["counts"]["strong"] == 1  # 30 runs, effect 1.0
    assert out["false_positive_share"] == 1.0  # the aggressor group, called sensitive
    assert out["slowed_runs"] == 1 and out["slowed_flagged_share"] == 1.0 and out["named_cause_share"] == 1.0
    assert out["matrix"]["nonzero_pairs"] == 1 and out["matrix"]["nonzero_found"] == 1
    lines = format_scores(out)
    assert any("1 of 1 designed pairs with lower bound > 0" in line for line in lines)


def test_who_slows_whom_without_the_analysis_says_why(tmp_path):
    from mosaic.interference.evaluate import format_scores, who_slows_whom

    (tmp_path / "truth.jsonl").write_text("")
    sqlite3.connect(tmp_path / "store.sqlite").close()
    out = who_slows_whom(tmp_path / "store.sqlite", tmp_path / "truth.jsonl", lambda name: name)
    assert out["reason"].startswith("the store has no contention analysis")
    assert "not scored" in format_scores(out)[1]
