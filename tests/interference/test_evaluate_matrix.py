"""The conflict matrix scored against the designed pairs, and a group's designed layout."""

import sqlite3

from mosaic.interference.evaluate import designed_pairs, matrix_score
from mosaic.synth.contention_year import designed_layout


def _line(kind, labels, slowed):
    return {
        "contention": {"group_sensitivity": kind, "slowed": slowed},
        "families": {"f": {"must": list(labels), "must_not": []}},
    }


def test_designed_pairs_leave_the_fits_references_out():
    truth = [
        _line("sensitive", ["write_after_start_before_end", "read_insignificant"], True),
        _line("aggressor", ["read_after_start_before_end", "metadata_high_spike"], True),
        _line("none", ["write_on_end", "read_insignificant"], False),
        {"file": "no contention"},
    ]
    pairs, zero = designed_pairs(truth)
    assert pairs == {
        ("write_after_start_before_end", "read_after_start_before_end"),
        ("write_after_start_before_end", "metadata_high_spike"),
    }
    assert zero == {"write_on_end"}  # read_insignificant: a reference, never fitted


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
    out = matrix_score(db, {("w", "a"), ("w", "b"), ("w", "c")}, {"z"})
    assert out["nonzero_pairs"] == 3 and out["nonzero_found"] == 1
    assert out["nonzero_missing"] == ["w x b", "w x c"]
    assert out["zero_pairs_fitted"] == 2 and out["zero_pairs_conflicting"] == ["z x a"]


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
