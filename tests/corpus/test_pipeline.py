"""The pipeline in-process (`--workers 0`): outputs, dedup, grouping, all runs, resume."""

import json
from collections import Counter, defaultdict

import pytest

from mosaic.corpus import pipeline
from mosaic.corpus.engine import Task
from mosaic.corpus.pipeline import one_screen, run, stability_shares
from mosaic.corpus.scan import scan
from mosaic_testing.outputs import comparable, lines, truth


def test_representatives_are_the_generators_heaviest_runs(reference_run, year_corpus):
    expected = truth(year_corpus)
    traces = lines(reference_run, "traces.jsonl")
    runs_per_group = Counter(t["group"] for t in expected if t["valid"])
    assert {t["file"] for t in traces} == {t["file"] for t in expected if t["heaviest"]}
    assert {t["group"]["key"]: t["group"]["runs"] for t in traces} == runs_per_group
    assert all(t["group"]["representative"] for t in traces)
    assert [t["file"] for t in traces] == sorted(t["file"] for t in traces)


def test_funnel_adds_up_and_evicted_file_lists_every_eviction(reference_run, year_corpus):
    summary = json.loads((reference_run / "summary.json").read_text())
    funnel = summary["funnel"]
    evicted = lines(reference_run, "evicted.jsonl")
    valid = sum(t["valid"] for t in truth(year_corpus))
    assert funnel["logs"] == len(truth(year_corpus))
    assert funnel["valid"] == valid and funnel["logs"] == valid + funnel["evicted_total"]
    assert funnel["files_seen"] == funnel["non_log_files"] + funnel["logs"] - sum(
        "tar.gz/" in t["file"] for t in truth(year_corpus)
    ) + len({t["file"].split(".tar.gz/")[0] for t in truth(year_corpus) if ".tar.gz/" in t["file"]})
    assert funnel["non_log_files"] == 1  # truth.jsonl
    assert funnel["paths_not_read"] == {}
    assert "skipped_files" not in funnel and "skipped" not in funnel  # names that said too little
    assert Counter(e["reason"] for e in evicted) == Counter(
        {**funnel["evicted"], **funnel["categorize_evicted"]}
    )
    assert funnel["categorized"] == funnel["groups"] == len(lines(reference_run, "traces.jsonl"))
    assert summary["distributions"]["single_run"]["traces"] == funnel["categorized"]
    assert summary["distributions"]["all_runs"]["traces"] == funnel["valid"]
    assert summary["stability"] is None
    assert summary["config_hash"] == pipeline.Config(batch_size=16, trace_timeout_seconds=20.0).hash()


def test_group_by_command_line_splits_groups_by_arguments(year_corpus, small_config, reference_run, tmp_path):
    summary = run([year_corpus], tmp_path, small_config.replace(group_by="cmdline"), workers=0)
    traces = lines(tmp_path, "traces.jsonl")
    by_app = json.loads((reference_run / "summary.json").read_text())["funnel"]["groups"]
    # the generator gives each run its own input file ("-i in.N"): one group per run
    assert summary["funnel"]["groups"] == summary["funnel"]["valid"] == len(traces) > by_app
    assert all(
        t["group"]["runs"] == 1
        and " -i in." in t["group"]["key"]
        and t["group"]["key"] == f"{t['job']['uid']}:{t['job']['exe']}"
        for t in traces
    )


def test_all_runs_reports_each_groups_share_like_its_representative(reference_all_runs, reference_run):
    traces = lines(reference_all_runs, "traces.jsonl")
    summary = json.loads((reference_all_runs / "summary.json").read_text())
    by_group = defaultdict(list)
    for t in traces:
        by_group[t["group"]["key"]].append(t)
    expected = {}
    for key, members in by_group.items():
        [rep] = [t for t in members if t["group"]["representative"]]
        same = sum(set(t["categories"]) == set(rep["categories"]) for t in members)
        expected[key] = same / len(members)
        assert all(t["group"]["same_as_representative"] == expected[key] for t in members)
    assert summary["stability"]["count"] == len(expected) == summary["funnel"]["groups"]
    assert summary["stability"]["mean"] == pytest.approx(sum(expected.values()) / len(expected))
    assert len(traces) == summary["funnel"]["valid"] == summary["funnel"]["categorized"]
    single = json.loads((reference_run / "summary.json").read_text())["distributions"]
    assert summary["distributions"]["single_run"] == single["single_run"]


def test_all_runs_reads_each_log_once_and_categorizes_as_the_single_run(
    year_corpus, small_config, reference_run, tmp_path, monkeypatch
):
    """--all-runs categorizes from validation's read; representatives come out as in a
    single run, which categorizes them in a stage of its own."""
    reads, read = Counter(), pipeline._read
    monkeypatch.setattr(pipeline, "_read", lambda ref, config: reads.update([ref.name]) or read(ref, config))
    summary = run([year_corpus], tmp_path, small_config.replace(all_runs=True), workers=0)
    assert len(reads) == summary["funnel"]["logs"] and set(reads.values()) == {1}
    assert summary["funnel"]["categorized"] == summary["funnel"]["valid"]
    # all_runs is a method setting: the lines differ in their group and configuration hash alone
    ungrouped = lambda t: {k: v for k, v in t.items() if k not in ("group", "config_hash")}  # noqa: E731
    fused = {t["file"]: ungrouped(t) for t in lines(tmp_path, "traces.jsonl") if t["group"]["representative"]}
    assert fused == {t["file"]: ungrouped(t) for t in lines(reference_run, "traces.jsonl")}


def test_stability_share_hand_computed():
    def row(key, representative, *categories):
        return {
            "group_key": key,
            "representative": representative,
            "categories": json.dumps(list(categories)),
        }

    rows = [
        row("a", 0, "x"),
        row("a", 1, "x", "y"),
        row("a", 0, "y", "x"),  # 2 of 3 alike
        row("b", 0, "x"),  # representative not categorized: no share
        row("c", 1),
        row("c", 0),
        row("c", 0, "x"),
        row("c", 0, "y"),
    ]  # 2 of 4
    assert stability_shares(rows) == {"a": 2 / 3, "c": 0.5}


def test_strict_evicts_partial_logs(shared_logs, small_config, tmp_path):
    facts = [pipeline.validate_log(ref, small_config) for ref in scan(shared_logs)]
    partial = [fact["location"] for fact in facts if fact.get("partial")]
    assert 0 < len(partial) < len(facts)
    lenient = run(partial, tmp_path / "lenient", small_config, workers=0)
    assert lenient["funnel"]["partial"] == lenient["funnel"]["valid"] == len(partial)
    strict = run(partial, tmp_path / "strict", small_config.replace(strict=True), workers=0)
    assert strict["funnel"]["evicted"] == {"partial": len(partial)}
    assert strict["funnel"]["valid"] == strict["funnel"]["partial"] == 0


def test_rerun_redoes_nothing_and_a_changed_config_redoes_everything(
    year_corpus, reference_run, small_config, tmp_path, monkeypatch
):
    calls = Counter()
    for name in ("VALIDATE", "CATEGORIZE"):
        task = getattr(pipeline, name)
        monkeypatch.setattr(
            pipeline,
            name,
            Task(
                lambda ref, config, _f=task.work, _n=name: (calls.update([_n]), _f(ref, config))[1],
                task.give_up,
            ),
        )
    fresh = run([year_corpus], tmp_path, small_config, workers=0)
    first = dict(calls)
    assert comparable(tmp_path) == comparable(reference_run)
    calls.clear()
    again = run([year_corpus], tmp_path, small_config.replace(batch_size=7), workers=0)
    assert calls == Counter()  # batch size is not a result setting
    # what the progress bar counts as done: every log (archive members included), then none
    assert fresh["timings"]["validated_before"] == 0
    assert again["timings"]["validated_before"] == again["funnel"]["logs"] == fresh["funnel"]["logs"]
    # the rate counts the work done: all of it at first, none on the rerun (not every log skipped)
    assert fresh["timings"]["validated_now"] == fresh["funnel"]["logs"] > 0
    assert fresh["timings"]["categorized_now"] == first["CATEGORIZE"] > 0
    assert again["timings"]["validated_now"] == again["timings"]["categorized_now"] == 0
    assert again["timings"]["logs_per_second"] == 0.0 and fresh["timings"]["logs_per_second"] > 0
    assert "logs/s  ->" in one_screen(fresh, tmp_path) and "resumed" not in one_screen(fresh, tmp_path)
    assert (
        f"resumed: 0 new logs (0 logs/s), 0 categorized, {again['funnel']['logs']:,} done by an earlier run"
        in (one_screen(again, tmp_path))
    )
    assert comparable(tmp_path)["traces"] == comparable(reference_run)["traces"]
    changed = small_config.replace(significant_bytes=2e8)
    assert changed.hash() != small_config.hash()
    run([year_corpus], tmp_path, changed, workers=0)
    assert calls == first


def test_a_rerun_after_heavier_runs_joined_counts_only_the_new_representatives(
    year_corpus, reference_run, small_config, tmp_path
):
    """The heaviest run of some groups arrives after a first run: the rerun's outputs are
    those of a fresh run on the whole corpus, funnel included (the former representatives'
    results stay in the store but are no longer categorized traces of a single run)."""
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(year_corpus, corpus)
    late = [
        t["file"]
        for t in truth(year_corpus)
        if t["valid"]
        and t["heaviest"]
        and ".tar.gz/" not in t["file"]
        and t["group"] in _groups_of_several(year_corpus)
    ][:5]
    assert len(late) == 5
    aside = tmp_path / "aside"
    for name in late:
        (aside / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).rename(aside / name)
    out = tmp_path / "out"
    first = run([corpus], out, small_config, workers=0)
    for name in late:
        (aside / name).rename(corpus / name)
    again = run([corpus], out, small_config, workers=0)
    fresh = run([corpus], tmp_path / "fresh", small_config, workers=0)
    assert first["funnel"]["categorized"] == first["funnel"]["groups"]
    assert again["funnel"] == fresh["funnel"]
    assert again["funnel"]["categorized"] == again["funnel"]["groups"] == len(lines(out, "traces.jsonl"))
    assert comparable(out)["traces"] == comparable(tmp_path / "fresh")["traces"]


def _groups_of_several(corpus):
    runs = Counter(t["group"] for t in truth(corpus) if t["valid"])
    return {group for group, count in runs.items() if count > 1}


def test_a_defect_is_counted_as_internal_error_not_as_bad_data(
    year_corpus, small_config, tmp_path, monkeypatch
):
    """A bug of ours met on one log: evicted ``internal_error`` with where it was raised,
    counted apart in the funnel, its own row in the funnel figure's table, named on screen."""
    from mosaic.analysis import categorize
    from mosaic.report.tables import funnel_table

    victim = sorted(t["file"] for t in truth(year_corpus) if t["heaviest"] and t["valid"])[0]
    real = categorize.categorize_trace

    def defective(trace, config):
        if trace.file == victim:
            raise KeyError("a defect")
        return real(trace, config)

    monkeypatch.setattr(categorize, "categorize_trace", defective)
    summary = run([year_corpus], tmp_path, small_config, workers=0)
    funnel = summary["funnel"]
    assert funnel["internal_errors"] == 1
    assert funnel["categorize_evicted"] == {"internal_error": 1}
    [row] = [e for e in lines(tmp_path, "evicted.jsonl") if e["file"] == victim]
    assert row["reason"] == "internal_error"
    assert row["detail"].startswith("KeyError: 'a defect' [at test_pipeline.py:")
    stages = funnel_table(summary).set_index("stage")["logs"]
    assert stages["evicted while categorizing: internal error"] == 1
    assert "1 log met a defect of mosaic, not bad data" in pipeline.one_screen(summary, tmp_path)
