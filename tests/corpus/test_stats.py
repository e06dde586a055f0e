"""CorpusStats, stability_summary and noteworthy_correlations on hand-computed cases."""

import json

import pytest

from mosaic.corpus.stats import CorpusStats, noteworthy_correlations, stability_summary

A, B, C = "read_on_start", "write_on_end", "metadata_high_spike"


def cell(view: dict, row: str, col: str) -> float:
    labels = view["labels"]
    return view["matrix"][labels.index(row)][labels.index(col)]


@pytest.fixture
def three_traces() -> dict:
    """{A,B} x1 run, {A} x2 runs, {B,C} x1 run."""
    stats = CorpusStats()
    stats.add([A, B], 1, 1)
    stats.add([A], 1, 2)
    stats.add([B, C], 1, 1)
    return stats.to_dict()


def test_distributions_single_and_all_runs(three_traces):
    single, all_runs = three_traces["distributions"]["single_run"], three_traces["distributions"]["all_runs"]
    assert single["traces"] == 3 and all_runs["traces"] == 4
    assert (single["counts"][A], single["counts"][B], single["counts"][C]) == (2, 2, 1)
    assert (all_runs["counts"][A], all_runs["counts"][B], all_runs["counts"][C]) == (3, 2, 1)
    assert single["counts"]["write_periodic"] == 0  # every label listed


def test_jaccard_is_weighted_intersection_over_union(three_traces):
    single, all_runs = three_traces["jaccard"]["single_run"], three_traces["jaccard"]["all_runs"]
    assert single["labels"] == [A, B, C]  # ALL_LABELS order, only labels present
    assert cell(single, A, B) == pytest.approx(1 / 3)
    assert cell(single, B, C) == pytest.approx(1 / 2)
    assert cell(single, A, C) == 0
    assert cell(single, A, A) == 1
    assert cell(all_runs, A, B) == pytest.approx(1 / 4)  # {A,B}:1 / (A:3 + B:2 - 1)
    assert single["matrix"] == [list(r) for r in zip(*single["matrix"], strict=True)]  # symmetric


def test_conditional_is_share_of_rows_having_column(three_traces):
    single, all_runs = three_traces["conditional"]["single_run"], three_traces["conditional"]["all_runs"]
    assert cell(single, A, B) == pytest.approx(1 / 2)
    assert cell(single, C, B) == 1
    assert cell(single, B, C) == pytest.approx(1 / 2)
    assert cell(all_runs, A, B) == pytest.approx(1 / 3)


def test_labels_present_in_one_view_only_appear_in_both():
    stats = CorpusStats()
    stats.add([A], 1, 1)
    stats.add([B], 0, 5)  # a non-representative run, --all-runs
    d = stats.to_dict()
    assert d["jaccard"]["single_run"]["labels"] == d["jaccard"]["all_runs"]["labels"] == [A, B]
    assert cell(d["conditional"]["single_run"], B, A) == 0  # w(B) = 0: 0, not NaN
    json.dumps(d, allow_nan=False)


def test_empty_and_label_free_traces():
    stats = CorpusStats()
    assert stats.to_dict()["jaccard"]["single_run"] == {"labels": [], "matrix": []}
    stats.add([], 1, 3)
    d = stats.to_dict()
    assert d["distributions"]["all_runs"]["traces"] == 3
    assert d["conditional"]["all_runs"]["labels"] == []


def test_duplicate_labels_count_once():
    stats = CorpusStats()
    stats.add([A, A], 1, 1)
    assert stats.to_dict()["distributions"]["single_run"]["counts"][A] == 1


def test_merge_equals_single_stream():
    one, left, right = CorpusStats(), CorpusStats(), CorpusStats()
    for labels, stream in (([A, B], left), ([B, C], right), ([A], right)):
        one.add(labels, 1, 2)
        stream.add(labels, 1, 2)
    assert left.merge(right).to_dict() == one.to_dict()


@pytest.mark.parametrize(
    "labels, weights", [(["not_a_label"], (1, 1)), ([A], (-1, 1)), ([A], (1, float("nan")))]
)
def test_bad_input_is_rejected(labels, weights):
    with pytest.raises(ValueError):
        CorpusStats().add(labels, *weights)


def test_stability_summary():
    s = stability_summary([1.0, 0.97, 0.8, 0.05], bins=10)
    assert s["count"] == 4
    assert s["mean"] == pytest.approx(0.705)
    assert s["median"] == pytest.approx(0.885)
    assert s["histogram"]["counts"] == [1, 0, 0, 0, 0, 0, 0, 0, 1, 2]  # 1.0 in the last bin
    assert s["histogram"]["edges"][0] == 0 and s["histogram"]["edges"][-1] == 1


def test_stability_summary_empty_and_bad():
    s = stability_summary([])
    assert (s["count"], s["mean"], s["median"]) == (0, None, None)
    assert sum(s["histogram"]["counts"]) == 0
    with pytest.raises(ValueError):
        stability_summary([1.5])


def correlations_of(traces: list[tuple[list[str], float]], **kwargs) -> list[dict]:
    stats = CorpusStats()
    for labels, weight in traces:
        stats.add(labels, weight, weight)
    d = stats.to_dict()
    return noteworthy_correlations(d["conditional"]["single_run"], d["distributions"]["single_run"], **kwargs)


def pairs(found: list[dict]) -> list[tuple[str, str]]:
    return [(c["if"], c["then"]) for c in found]


def test_noteworthy_probability_threshold_both_sides():
    # P(B|A) = 3/5 = 0.6 exactly: kept at min_p=0.6, dropped just above.
    corpus = [([A, B], 3), ([A], 2), ([C], 95)]
    assert (A, B) in pairs(correlations_of(corpus, min_p=0.6, min_support=0.01))
    assert (A, B) not in pairs(correlations_of(corpus, min_p=0.61, min_support=0.01))


def test_noteworthy_support_threshold_both_sides():
    # A and B together on 1 trace of 100: support 0.01.
    corpus = [([A, B], 1), ([C], 99)]
    found = correlations_of(corpus, min_p=0.6, min_support=0.01)
    assert pairs(found) == [(A, B), (B, A)]
    assert found[0]["probability"] == 1 and found[0]["support"] == pytest.approx(0.01)
    assert correlations_of(corpus, min_p=0.6, min_support=0.011) == []


def test_noteworthy_sorted_strongest_first_and_skips_definitions():
    corpus = [([A, B, C], 2), ([A, B], 1), ([A], 1), (["write_periodic", "write_periodic_minute"], 10)]
    found = correlations_of(corpus)
    probabilities = [c["probability"] for c in found]
    assert probabilities == sorted(probabilities, reverse=True)
    assert ("write_periodic_minute", "write_periodic") not in pairs(found)
    assert ("write_periodic", "write_periodic_minute") in pairs(found)  # 10/10, not by definition
    assert pairs(found)[-2:] == [(A, B), (B, C)]  # 3/4, then 2/3; P(C|A) = 1/2 dropped
    assert (A, C) not in pairs(found)


def test_folding_pending_label_sets_early_changes_nothing(monkeypatch):
    import mosaic.corpus.stats as stats_module

    traces = [([A], 1, 2), ([A, B], 1, 1), ([B, C], 0, 4), ([A], 1, 3), ([C], 1, 1), ([A, B], 1, 1)]
    expected = CorpusStats()
    for labels, single, all_runs in traces:
        expected.add(labels, single, all_runs)
    monkeypatch.setattr(stats_module, "_MAX_PENDING_SETS", 2)  # fold every second new set
    folded = CorpusStats()
    for labels, single, all_runs in traces:
        folded.add(labels, single, all_runs)
    assert folded.to_dict() == expected.to_dict()
    assert expected.to_dict()["distributions"]["all_runs"]["counts"][A] == 7
