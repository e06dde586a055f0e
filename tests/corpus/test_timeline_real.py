"""The 34 real darshan-runtime logs of IOR jobs that shared one 60 MB/s file system
(tests/data/darshan-logs-interference): the timeline against the driver's wall windows and
darshan-parser's bytes, and each run's concurrent load against who truly ran beside it."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.corpus import timeline
from mosaic.corpus.pipeline import run
from mosaic.corpus.store import Store

DATA = Path(__file__).parents[1] / "data" / "darshan-logs-interference"
IFS = "/mnt/mosaic-ifs"
CONFIG = Config(shared_file_systems=(IFS,), timeline_bin_seconds=1.0)


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("interference")
    summary = run([DATA / "logs"], out, CONFIG, workers=0)
    return out, summary


def truth():
    rows = [json.loads(line) for line in (DATA / "truth.jsonl").read_text().splitlines()]
    return {row["file"]: row for row in rows}


def perf(column="total_bytes"):
    with open(DATA / "darshan-parser-perf.tsv") as fh:
        return {
            r["file"]: float(r[column]) for r in csv.DictReader(fh, delimiter="\t") if r["module"] == "POSIX"
        }


def by_file(out):
    """file -> (run identity, start epoch, end epoch, {fs: load row})"""
    with Store(out / "store.sqlite") as store, store._snapshot() as db:
        runs = db.execute(
            "SELECT l.file, a.run, a.start_epoch, a.end_epoch FROM logs l "
            "JOIN run_activity a ON a.run = l.run"
        ).fetchall()
        loads = db.execute(
            "SELECT run, fs, read_rate, write_rate, meta_rate, other_jobs, io_seconds FROM run_load"
        )
        load: dict[int, dict[str, tuple]] = {}
        for row in loads.fetchall():
            load.setdefault(row[0], {})[row[1]] = tuple(row[2:])
    return {f: (r, s, e, load.get(r, {})) for f, r, s, e in runs}


def test_timeline_holds_darshan_util_bytes_within_the_wall_windows(corpus_run):
    out, summary = corpus_run
    facts, runs = truth(), by_file(out)
    coverage = summary["timeline"]["coverage"]
    assert coverage["runs"] == 34 and coverage["sources"] == {"dxt": 15, "heatmap": 19}
    assert coverage["evicted_logs"] == 0 and coverage["partial_logs"] == 0
    (entry,) = summary["timeline"]["file_systems"].values()  # "/" is node-local: not there
    on_ifs = [f for f, t in facts.items() if t["group"] != "insensitive"]
    assert entry["write_bytes"] == sum(perf()[f] for f in on_ifs) == 8 * 335544320 + 18 * 201326592
    assert entry["read_bytes"] == 0.0 and entry["meta_requests"] == 8 * 2 + 18 * 8
    # The driver's clock and Darshan's differ by one offset: every run inside its wall window.
    offset = min(runs[f][1] - t["wall"][0] for f, t in facts.items())
    for f, t in facts.items():
        assert t["wall"][0] <= runs[f][1] - offset <= t["wall"][0] + 0.1
        assert runs[f][2] - offset <= t["wall"][1]
    # 1 s bins: never more runs doing I/O in a bin than wall windows of I/O runs meet it
    with Store(out / "store.sqlite") as store:
        (tl,) = timeline.center_timeline(store, 1.0).values()
    walls = np.array([t["wall"] for f, t in facts.items() if f in on_ifs]) + offset
    starts = tl.starts
    meeting = ((walls[:, :1] < starts + 1.0) & (walls[:, 1:] > starts)).sum(axis=0)
    assert (tl.jobs <= meeting).all() and tl.jobs.max() >= 3
    assert tl.write.sum() == entry["write_bytes"]


def test_victims_load_follows_the_aggressor(corpus_run):
    out, _ = corpus_run
    facts, runs = truth(), by_file(out)
    victims = {f: t for f, t in facts.items() if t["group"] == "sensitive"}
    alone = [f for f, t in victims.items() if not t["overlaps"]]
    beside_aggressor = [f for f, t in victims.items() if t["aggressors"]]
    assert len(alone) == 2 and len(beside_aggressor) == 5
    for f in alone:
        read, write, meta, others, seconds = runs[f][3][IFS]
        assert (read, write, meta, others) == (0.0, 0.0, 0.0, 0)
        assert seconds > 3.0  # it wrote 192 MiB at up to 60 MB/s
    for f in beside_aggressor:
        read, write, meta, others, _ = runs[f][3][IFS]
        assert write > 20e6 and others >= 1  # over a third of the 60 MB/s budget was another job's
    quiet = max(runs[f][3][IFS][1] for f in alone)
    assert min(runs[f][3][IFS][1] for f in beside_aggressor) > quiet + 20e6


def test_the_aggressor_is_named_among_the_victims_overlaps(corpus_run):
    out, _ = corpus_run
    facts, runs = truth(), by_file(out)
    with Store(out / "store.sqlite") as store:
        for f, t in facts.items():
            if t["group"] != "sensitive" or not t["aggressors"]:
                continue
            (load,) = timeline.job_load(store, runs[f][0])
            ids = {int(o["job_id"]) for o in load["others"]}
            assert set(t["aggressors"]) <= ids <= set(t["overlaps"])
            assert sum(o["share"] for o in load["others"]) == pytest.approx(1.0)


def test_the_control_has_no_load_on_its_own_file_system(corpus_run):
    out, _ = corpus_run
    facts, runs = truth(), by_file(out)
    for f, t in facts.items():
        if t["group"] == "insensitive":
            assert set(runs[f][3]) == {"/"}
            assert runs[f][3]["/"][:4] == (0.0, 0.0, 0.0, 0)


def test_victims_io_time_ranks_with_their_load(corpus_run):
    """Spearman of the victims' POSIX agg_time_by_slowest against the others' bytes/s during
    their I/O, at the logs' own resolution (0.991 measured; the issue's 1 s grid gave 0.91)."""
    out, _ = corpus_run
    facts, runs = truth(), by_file(out)
    times = perf("agg_time_by_slowest_s")
    victims = sorted(f for f, t in facts.items() if t["group"] == "sensitive")
    rate = np.array([runs[f][3][IFS][0] + runs[f][3][IFS][1] for f in victims])
    io = np.array([times[f] for f in victims])

    def ranks(x):
        return np.argsort(np.argsort(x)).astype(float)

    loaded = rate > 0  # ranks without ties: the victims some other job loaded (14 of 18)
    assert loaded.sum() == 14
    assert np.corrcoef(ranks(rate[loaded]), ranks(io[loaded]))[0, 1] > 0.95
    from scipy.stats import spearmanr  # all 18, the four unloaded tied

    assert spearmanr(rate, io).statistic > 0.98


def test_same_timeline_with_two_workers_and_after_a_rerun(corpus_run, tmp_path):
    out, summary = corpus_run
    other = run([DATA / "logs"], tmp_path / "w2", CONFIG, workers=2)
    assert other["timeline"] == summary["timeline"]
    again = run([DATA / "logs"], tmp_path / "w2", CONFIG, workers=0)  # resumes: nothing new
    assert again["timeline"] == summary["timeline"]
    with Store(out / "store.sqlite") as a, Store(tmp_path / "w2" / "store.sqlite") as b:
        ta, tb = timeline.center_timeline(a, 1.0), timeline.center_timeline(b, 1.0)
        assert ta[IFS].write.tobytes() == tb[IFS].write.tobytes()
        assert ta[IFS].jobs.tobytes() == tb[IFS].jobs.tobytes()
        assert timeline.stored_bytes(a) == timeline.stored_bytes(b)


def test_traces_jsonl_carries_each_runs_load(corpus_run):
    out, _ = corpus_run
    runs = by_file(out)
    lines = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]
    assert len(lines) == 3  # one representative a group
    for line in lines:
        (load,) = line["load"]
        stored = runs[line["file"]][3][load["fs"]]
        assert (load["read_rate"], load["write_rate"], load["meta_rate"], load["other_jobs"]) == stored[:4]
        assert load["source"] in ("dxt", "heatmap") and set(load) >= {"io_seconds", "largest_share"}


def test_one_log_under_two_names_counts_once(corpus_run, tmp_path):
    out, summary = corpus_run
    logs = tmp_path / "logs"
    logs.mkdir()
    for path in (DATA / "logs").iterdir():
        (logs / path.name).write_bytes(path.read_bytes())
    victim = next((DATA / "logs").glob("*lmp_restart_id70007*"))
    (logs / ("copy-of-" + victim.name)).write_bytes(victim.read_bytes())
    again = run([logs], tmp_path / "out", CONFIG, workers=0)
    assert again["funnel"]["logs"] == 35
    # the copy is the same run: counted once
    assert again["timeline"]["file_systems"] == summary["timeline"]["file_systems"]
    assert (again["timeline"]["coverage"]["runs"], again["timeline"]["coverage"]["logs"]) == (34, 35)
