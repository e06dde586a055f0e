"""`mosaic run` against a hostile or careless file system.

Real files, real FIFOs, real symlinks, real locks; each test reproduces one attack.
"""

import fcntl
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mosaic.config import Config
from mosaic.corpus import pipeline
from mosaic.corpus.engine import Task, preload, run_batch
from mosaic.corpus.pipeline import CATEGORIZE, LOCK_FILE, WORKER_PRELOAD, engine_settings, evicted, run
from mosaic.corpus.scan import (
    NOT_REGULAR,
    REPEATED_FOLDER,
    VANISHED,
    LogRef,
    ScanCounts,
    folder_prefixes,
    read_regular,
    scan,
)
from mosaic.errors import EngineError
from mosaic_testing.outputs import comparable, lines, truth
from mosaic_testing.written import longest_run_log

MOSAIC = str(Path(sys.executable).parent / "mosaic")
NON_UTF8 = b"caf\xe9-\xff.darshan"


def link(path: Path, target: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    return path


def test_non_utf8_names_are_kept_byte_exact_and_reruns_work(shared_logs, small_config, tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    os.symlink(shared_logs[0], os.path.join(os.fsencode(root), NON_UTF8))
    link(root / "plain.darshan", shared_logs[1])
    out = tmp_path / "out"
    run([root], out, small_config, workers=0)
    first = comparable(out)
    names = [
        json.loads(line)["file"]
        for name in ("traces.jsonl", "evicted.jsonl")
        for line in (out / name).read_text().splitlines()
    ]
    assert sorted(map(os.fsencode, names)) == sorted([NON_UTF8, b"plain.darshan"])
    run([root], out, small_config, workers=0)  # the rerun reads the store back
    assert comparable(out) == first


def test_symlink_loops_and_links_to_a_sibling_are_walked_once(shared_logs, tmp_path):
    root = tmp_path / "in"
    link(root / "a" / "x.darshan", shared_logs[0])
    link(root / "a" / "loop", Path("."))  # ln -s . loop
    link(root / "b", Path("a"))  # a sibling folder under a second name
    counts = ScanCounts()
    assert [ref.name for ref in scan([root], counts)] == ["a/x.darshan"]
    assert counts.skipped == {REPEATED_FOLDER: 2} and counts.logs == 1


def test_a_folder_and_a_file_vanishing_mid_scan_are_counted(shared_logs, tmp_path):
    root = tmp_path / "in"
    for name in ("a/1.darshan", "a/2.darshan", "b/3.darshan"):
        link(root / name, shared_logs[0])
    counts = ScanCounts()
    refs = scan([root], counts)
    assert next(refs).name == "a/1.darshan"
    (root / "a" / "2.darshan").unlink()
    (root / "b" / "3.darshan").unlink()
    (root / "b").rmdir()
    assert list(refs) == []
    assert counts.skipped == {VANISHED: 2} and counts.logs == 1


def test_fifos_and_devices_are_skipped_unopened_even_when_shipping(shared_logs, tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    os.mkfifo(root / "fifo.darshan")  # opening it for reading would block forever
    link(root / "null.darshan", Path("/dev/null"))
    link(root / "ok.darshan", shared_logs[0])
    counts = ScanCounts()
    refs = list(scan([root], counts, ship_bytes=True, max_bytes=1 << 30))
    assert [ref.name for ref in refs] == ["ok.darshan"]
    assert refs[0].data == shared_logs[0].read_bytes()
    assert counts.skipped == {NOT_REGULAR: 2} and counts.files_seen == 1
    data, error = read_regular(str(root / "fifo.darshan"), 1 << 30)  # swapped in after the scan
    assert data is None and error[1].startswith("not a regular file")


def test_shipped_files_are_never_read_past_the_limit(tmp_path):
    sparse = tmp_path / "huge.darshan"
    with open(sparse, "wb") as fh:
        fh.truncate(3 << 30)  # 3 GiB that occupy no disk
    [ref] = scan([sparse], ship_bytes=True, max_bytes=1 << 30)
    assert ref.data is None and ref.error == ("too_large", f"{3 << 30} bytes > limit {1 << 30}")
    small = tmp_path / "small.darshan"
    small.write_bytes(b"3." + b"x" * 98)  # starts as a 3.x log does: read whole
    assert read_regular(str(small), 100) == (b"3." + b"x" * 98, None)  # exactly at the limit
    assert read_regular(str(small), 99)[1][0] == "too_large"


@pytest.mark.parametrize(
    "folders, expected",
    [
        (["/r/a"], [""]),
        (["/r/a", "/s/b"], ["a/", "b/"]),
        (["/r/d1/logs", "/r/d2/logs"], ["d1/logs/", "d2/logs/"]),
        (["/x/d/logs", "/y/d/logs", "/y/e/logs"], ["x/d/logs/", "y/d/logs/", "y/e/logs/"]),
        (["/r/a", "/r/a/"], ["a/", "a/"]),  # the same folder twice: walked once
    ],
)
def test_folder_prefixes_are_the_shortest_distinct_tails(folders, expected):
    assert list(folder_prefixes(folders).values()) == expected


def test_inputs_with_equal_basenames_are_kept_apart(shared_logs, tmp_path):
    for folder in ("d1", "d2"):
        link(tmp_path / folder / "logs" / "x.darshan", shared_logs[0])
    names = [ref.name for ref in scan([tmp_path / "d1" / "logs", tmp_path / "d2" / "logs"])]
    assert names == ["d1/logs/x.darshan", "d2/logs/x.darshan"]


def test_a_second_run_on_a_locked_out_is_refused(shared_logs, small_config, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with open(out / LOCK_FILE, "w") as held:  # what a running `mosaic run` holds
        held.write("pid 4242\n")
        held.flush()
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(EngineError, match="in use by another mosaic run \\(pid 4242\\)"):
            run([shared_logs[0]], out, small_config, workers=0)
        cli = subprocess.run(
            [MOSAIC, "run", str(shared_logs[0]), "--out", str(out), "--workers", "0", "--quiet"],
            capture_output=True,
            text=True,
        )
        assert cli.returncode == 1 and "in use by another mosaic run" in cli.stderr
        assert not (out / "summary.json").exists()
    run([shared_logs[0]], out, small_config, workers=0)  # released: runs
    assert (out / "summary.json").exists()


def test_next_heaviest_run_stands_in_for_an_evicted_representative(
    year_corpus, small_config, reference_run, tmp_path, monkeypatch
):
    groups = {}
    for t in truth(year_corpus):
        if t["valid"]:
            groups.setdefault(t["group"], []).append(t)
    key, runs = next((k, r) for k, r in sorted(groups.items()) if len(r) >= 3)
    [heaviest] = [t["file"] for t in runs if t["heaviest"]]

    def fails_on_heaviest(ref, config):
        if ref.name == heaviest:
            return evicted(ref, "timeout", "test: no result")
        return CATEGORIZE.work(ref, config)

    monkeypatch.setattr(pipeline, "CATEGORIZE", Task(fails_on_heaviest, CATEGORIZE.give_up))
    summary = run([year_corpus], tmp_path, small_config, workers=0)

    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        rest = db.execute(
            "SELECT file FROM logs WHERE group_key = ? AND status = 'ok' AND "
            "file != ? ORDER BY total_bytes DESC, run_time DESC, file",
            (key, heaviest),
        ).fetchall()
    [trace] = [t for t in lines(tmp_path, "traces.jsonl") if t["group"]["key"] == key]
    assert trace["file"] == rest[0][0] and trace["group"]["representative"]
    assert trace["group"]["runs"] == len(runs)
    timed_out = {"file": heaviest, "reason": "timeout", "detail": "test: no result"}
    assert any(timed_out.items() <= line.items() for line in lines(tmp_path, "evicted.jsonl"))
    reference = json.loads((reference_run / "summary.json").read_text())["funnel"]
    assert summary["funnel"]["stand_ins"] == 1 and reference["stand_ins"] == 0
    assert summary["funnel"]["categorized"] == reference["categorized"]
    assert summary["funnel"]["categorize_evicted"] == {"timeout": 1}


def test_a_worker_past_its_memory_bound_evicts_the_log_too_large(shared_logs):
    preload(WORKER_PRELOAD)  # as a node's setup does: workers are forked warm
    heaviest = max(shared_logs, key=lambda path: path.stat().st_size)  # tens of MB inflated
    ref = LogRef(heaviest.name, str(heaviest))
    bounded_config = Config(worker_memory_bytes=1 << 20)
    limits = engine_settings(bounded_config, None).limits
    [bounded] = run_batch(CATEGORIZE, [ref], bounded_config, limits, isolate=True)
    assert (bounded["status"], bounded["reason"]) == ("evicted", "too_large")
    assert "memory" in bounded["detail"]  # the reader's budget or the RLIMIT_AS bound
    [free] = run_batch(CATEGORIZE, [ref], Config(), engine_settings(Config(), None).limits, isolate=True)
    assert free.get("reason") != "too_large"


def test_the_longest_valid_run_is_categorized_within_a_workers_memory_bound(tmp_path):
    # Its metadata spreads over 34.5 million seconds (a 276 MB array). Before the
    # running sum was added in place (2026-11-26), that took four such arrays at once
    # and the bounded worker evicted the log too_large.
    preload(WORKER_PRELOAD)
    path = tmp_path / "u1_app_id2.darshan"
    path.write_bytes(longest_run_log())
    limits = engine_settings(Config(), None).limits
    [result] = run_batch(CATEGORIZE, [LogRef(path.name, str(path))], Config(), limits, isolate=True)
    assert (result["status"], result["reason"]) == ("ok", None)
    assert json.loads(result["row"][5])["metadata"]["requests"] == 20.0


def test_progress_total_counts_archive_members(year_corpus, small_config, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(pipeline, "_show_progress", lambda quiet: True)
    summary = run([year_corpus], tmp_path, small_config, workers=0)
    logs = summary["funnel"]["logs"]
    assert logs > sum(1 for t in truth(year_corpus) if ".tar.gz/" not in t["file"])
    assert f"{logs}/{logs}" in capsys.readouterr().err.split("validate")[-1]
