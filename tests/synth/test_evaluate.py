"""Scoring crafted results: perfect gives 100 %, each mistake costs exactly its share."""

import json
import os

import pytest
from click.testing import CliRunner

from mosaic.analysis.labels import FAMILIES
from mosaic.cli import main
from mosaic.synth.evaluate import TRUTH_KEYS, _Shared, evaluate

EMPTY = {"must": [], "must_not": []}


def families(**given):
    return {fam: given.get(fam, EMPTY) for fam in FAMILIES}


TRUTH = [  # group g1 has two runs (a heaviest), g2 one run, d is broken
    {
        "file": "2019/01/01/a.darshan",
        "valid": True,
        "reason": None,
        "partial": False,
        "group": "1:/bin/x",
        "heaviest": True,
        "scenario": "s1",
        "params": {},
        "families": families(
            write_temporality={"must": ["write_on_end"], "must_not": ["write_steady"]},
            metadata={"must": ["metadata_high_spike"], "must_not": []},
        ),
    },
    {
        "file": "2019/01/02/b.darshan",
        "valid": True,
        "reason": None,
        "partial": False,
        "group": "1:/bin/x",
        "heaviest": False,
        "scenario": "s1",
        "params": {},
        "families": families(write_temporality={"must": ["write_on_end"], "must_not": []}),
    },
    {
        "file": "2019/01/03.tar.gz/c.darshan",
        "valid": True,
        "reason": None,
        "partial": True,
        "group": "2:/bin/y",
        "heaviest": True,
        "scenario": "s2",
        "params": {},
        "families": families(
            read_temporality={"must": ["read_insignificant"], "must_not": ["read_on_start"]}
        ),
    },
    {
        "file": "2019/01/04/d.darshan",
        "valid": False,
        "reason": "truncated",
        "partial": False,
        "group": "3:/bin/z",
        "heaviest": False,
        "scenario": "broken",
        "params": {},
        "families": {},
    },
]


def write_results(folder, traces, evicted, truth=TRUTH):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "traces.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces))
    (folder / "evicted.jsonl").write_text("".join(json.dumps(e) + "\n" for e in evicted))
    (folder / "truth.jsonl").write_text("".join(json.dumps(t) + "\n" for t in truth))


def trace(name, categories, representative=True, partial=False):
    return {
        "file": name,
        "status": "ok",
        "partial": partial,
        "categories": categories,
        "group": {"representative": representative},
    }


PERFECT_TRACES = [
    trace("2019/01/01/a.darshan", ["write_on_end", "metadata_high_spike", "read_insignificant"]),
    trace("2019/01/03.tar.gz/c.darshan", ["read_insignificant", "write_insignificant"], partial=True),
]
PERFECT_EVICTED = [{"file": "2019/01/04/d.darshan", "reason": "truncated", "detail": ""}]


def test_perfect_results_score_100(tmp_path):
    write_results(tmp_path, PERFECT_TRACES, PERFECT_EVICTED)
    s = evaluate(tmp_path, tmp_path / "truth.jsonl")
    assert s["traces"]["accuracy"] == 1.0 and s["traces"]["scored"] == 2
    assert set(s["traces"]["families"].values()) == {1.0}
    assert s["eviction"]["accuracy"] == 1.0 and s["eviction"]["partial_flagged"] == 1.0
    assert s["dedup"]["accuracy"] == 1.0 and not s["dedup"]["all_runs"]
    assert s["traces"]["labels"]["write_on_end"] == {
        "precision": 1.0,
        "recall": 1.0,
        "asserted": 1,
        "tp": 1,
        "fp": 0,
        "fn": 0,
        "tn": 0,
    }


def test_one_wrong_label_costs_one_log_and_one_family(tmp_path):
    wrong = PERFECT_TRACES[0]["categories"] + ["write_steady"]
    traces = [dict(PERFECT_TRACES[0], categories=wrong), PERFECT_TRACES[1]]
    write_results(tmp_path, traces, PERFECT_EVICTED)
    s = evaluate(tmp_path, tmp_path / "truth.jsonl")
    assert s["traces"]["accuracy"] == 0.5
    assert s["traces"]["families"]["write_temporality"] == 0.5
    assert s["traces"]["families"]["metadata"] == 1.0
    assert s["traces"]["scenarios"]["s1"]["accuracy"] == 0.0
    assert s["traces"]["scenarios"]["s2"]["accuracy"] == 1.0
    assert s["traces"]["labels"]["write_steady"]["fp"] == 1
    assert s["traces"]["labels"]["write_steady"]["precision"] == 0.0


def test_missing_label_lowers_recall(tmp_path):
    traces = [trace("2019/01/01/a.darshan", ["write_on_end"]), PERFECT_TRACES[1]]
    write_results(tmp_path, traces, PERFECT_EVICTED)
    s = evaluate(tmp_path, tmp_path / "truth.jsonl")
    assert s["traces"]["labels"]["metadata_high_spike"]["recall"] == 0.0
    assert s["traces"]["families"]["metadata"] == 0.5


def test_eviction_mistakes(tmp_path):
    evicted = [
        {"file": "2019/01/04/d.darshan", "reason": "corrupt_stream", "detail": ""},
        {"file": "2019/01/03.tar.gz/c.darshan", "reason": "bad_job", "detail": ""},
    ]
    write_results(tmp_path, PERFECT_TRACES[:1], evicted)
    s = evaluate(tmp_path, tmp_path / "truth.jsonl")
    e = s["eviction"]
    assert e["invalid_evicted_right"] == 0.0
    assert e["valid_kept"] == pytest.approx(2 / 3)
    assert e["accuracy"] == 0.5  # 2 of 4 logs right
    assert e["confusion"] == {"truncated": {"corrupt_stream": 1}}
    assert e["valid_evicted_reasons"] == {"bad_job": 1}


def test_strict_partial_eviction_is_right(tmp_path):
    evicted = PERFECT_EVICTED + [{"file": "2019/01/03.tar.gz/c.darshan", "reason": "partial"}]
    write_results(tmp_path, PERFECT_TRACES[:1], evicted)
    assert evaluate(tmp_path, tmp_path / "truth.jsonl")["eviction"]["accuracy"] == 1.0


def test_dedup_wrong_representative(tmp_path):
    traces = [dict(trace("2019/01/02/b.darshan", ["write_on_end"])), PERFECT_TRACES[1]]
    write_results(tmp_path, traces, PERFECT_EVICTED)
    s = evaluate(tmp_path, tmp_path / "truth.jsonl")
    assert s["dedup"]["accuracy"] == 0.5 and s["dedup"]["wrong_examples"] == ["1:/bin/x"]


def test_all_runs_results_judge_the_representative_flag(tmp_path):
    traces = PERFECT_TRACES + [trace("2019/01/02/b.darshan", ["write_on_end"], representative=False)]
    write_results(tmp_path, traces, PERFECT_EVICTED)
    s = evaluate(tmp_path, tmp_path / "truth.jsonl")
    assert s["dedup"]["all_runs"] and s["dedup"]["accuracy"] == 1.0
    assert s["traces"]["scored"] == 3 and s["traces"]["accuracy"] == 1.0


def test_absolute_result_paths_match_and_cli(tmp_path):
    traces = [dict(t, file=f"/data/sample/{t['file']}") for t in PERFECT_TRACES]
    write_results(tmp_path, traces, PERFECT_EVICTED)
    truth_file = str(tmp_path / "truth.jsonl")
    result = CliRunner().invoke(main, ["eval", str(tmp_path), "--truth", truth_file, "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["traces"]["accuracy"] == 1.0 and scores["unknown_result_files"] == 0
    table = CliRunner().invoke(main, ["eval", str(tmp_path), "--truth", truth_file])
    assert "trace accuracy      100.0%" in table.output


def test_empty_truth_is_an_error(tmp_path):
    write_results(tmp_path, [], [], truth=[])
    with pytest.raises(ValueError, match="no truth"):
        evaluate(tmp_path, tmp_path / "truth.jsonl")


def test_an_uncategorized_trace_beside_an_invalid_log_scores_as_no_labels(tmp_path):
    """The invalid log's families ({}) and a trace's empty label list are both ()
    once made hashable: shared by kind, the trace still has no labels, so its
    ``must`` label is a miss (not a crash on a dict taken for a label set)."""
    traces = [trace("2019/01/01/a.darshan", []), PERFECT_TRACES[1]]
    write_results(tmp_path, traces, PERFECT_EVICTED)
    s = evaluate(tmp_path, tmp_path / "truth.jsonl")
    assert s["traces"]["accuracy"] == 0.5
    assert s["traces"]["labels"]["write_on_end"]["fn"] == 1
    assert s["traces"]["labels"]["write_steady"]["tn"] == 1


def test_truth_lines_keep_only_what_is_scored_and_share_repeated_values():
    shared = _Shared()
    first, second = (shared.truth(dict(line)) for line in (TRUTH[0], dict(TRUTH[0], file="other")))
    assert set(first) == set(TRUTH_KEYS) and "params" not in first
    assert first["families"] is second["families"] and first["group"] is second["group"]
    labels = ["write_on_end", "read_insignificant"]
    a, b = (shared.trace(trace(name, list(labels))) for name in ("x", "y"))
    assert a["categories"] == frozenset(labels) and a["categories"] is b["categories"]
    assert (
        a["representative"] and not shared.trace(trace("z", labels, representative=False))["representative"]
    )


def test_a_folder_without_outputs_is_an_error_not_a_score(tmp_path):
    """`mosaic eval` on a folder `mosaic run` never wrote into exits 1 and says so; one of
    the two outputs alone is enough to score (a run where every log was evicted)."""
    write_results(tmp_path, PERFECT_TRACES, PERFECT_EVICTED)
    truth_file = str(tmp_path / "truth.jsonl")
    (tmp_path / "traces.jsonl").unlink()
    (tmp_path / "evicted.jsonl").unlink()
    result = CliRunner().invoke(main, ["eval", str(tmp_path), "--truth", truth_file])
    assert result.exit_code == 1
    assert f"no traces.jsonl nor evicted.jsonl in {tmp_path}" in result.output
    assert "accuracy" not in result.output
    (tmp_path / "evicted.jsonl").write_text(json.dumps(PERFECT_EVICTED[0]) + "\n")
    result = CliRunner().invoke(main, ["eval", str(tmp_path), "--truth", truth_file, "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["evicted"] == 1
    (tmp_path / "evicted.jsonl").unlink()
    (tmp_path / "traces.jsonl").write_text(json.dumps(PERFECT_TRACES[0]) + "\n")
    result = CliRunner().invoke(main, ["eval", str(tmp_path), "--truth", truth_file, "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["categorized"] == 1


def test_an_empty_truth_file_exits_1(tmp_path):
    write_results(tmp_path, PERFECT_TRACES, PERFECT_EVICTED, truth=[])
    result = CliRunner().invoke(main, ["eval", str(tmp_path), "--truth", str(tmp_path / "truth.jsonl")])
    assert result.exit_code == 1 and "no truth lines" in result.output


@pytest.mark.parametrize(
    "truth_text, message",
    [
        ("not json\n", "truth.jsonl, line 1: not JSON (Expecting value)"),
        ('{"file": "x"}\n', "truth.jsonl, line 1: no 'valid', 'reason', 'partial', 'families'"),
        ("[1, 2]\n", "truth.jsonl, line 1: no 'an object'"),
        (
            '\n{"file": "x", "valid": 1, "reason": null, "partial": false, "families": [], '
            '"group": "g", "heaviest": true, "scenario": "s"}\n',
            "truth.jsonl: not a truth file of `mosaic synth`",
        ),
    ],
    ids=["not json", "missing keys", "not an object", "families not a mapping"],
)
def test_a_malformed_truth_file_is_one_clear_error(tmp_path, truth_text, message):
    write_results(tmp_path, PERFECT_TRACES, PERFECT_EVICTED)
    (tmp_path / "truth.jsonl").write_text(truth_text)
    result = CliRunner().invoke(main, ["eval", str(tmp_path), "--truth", str(tmp_path / "truth.jsonl")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)  # no traceback
    assert message in result.output


@pytest.mark.parametrize(
    "traces_text, message",
    [
        ('{"file": "a", "status": "ok"}\n{"status": "ok"}\n', "traces.jsonl, line 2: no 'file'"),
        ("{]\n", "traces.jsonl, line 1: not JSON"),
        ('{"file": 7}\n', "not the outputs of `mosaic run`"),
    ],
    ids=["a line without file", "not json", "file not a string"],
)
def test_malformed_results_are_one_clear_error(tmp_path, traces_text, message):
    write_results(tmp_path, PERFECT_TRACES, PERFECT_EVICTED)
    (tmp_path / "traces.jsonl").write_text(traces_text)
    result = CliRunner().invoke(main, ["eval", str(tmp_path), "--truth", str(tmp_path / "truth.jsonl")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert message in result.output


def test_a_truth_fifo_is_refused_not_waited_on(tmp_path):
    write_results(tmp_path, PERFECT_TRACES, PERFECT_EVICTED)
    fifo = tmp_path / "truth.fifo"
    os.mkfifo(fifo)
    result = CliRunner().invoke(main, ["eval", str(tmp_path), "--truth", str(fifo)])
    assert result.exit_code == 1 and f"{fifo} is not a regular file" in result.output
