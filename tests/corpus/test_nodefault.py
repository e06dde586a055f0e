"""A worker that cannot see a log the parent scanned never records it as the log's eviction.

In process (``workers=0``: the worker's code runs in this process), the worker is
made blind by failing its ``os.open`` calls on the corpus while a task runs: what a
node without the shared file system meets. The parent's own reads, outside the
task, see the files. tests/cluster runs the same against real nodes in other
network and mount namespaces.
"""

import contextlib
import os
import shutil
import socket
import sqlite3

import pytest

from mosaic.corpus import pipeline
from mosaic.corpus.engine import Task
from mosaic.corpus.nodefault import NODE_FAULT, settle
from mosaic.corpus.pipeline import categorize_log, evicted, run, validate_log
from mosaic.corpus.scan import LogRef, Stamp
from mosaic.errors import EngineError, Reason
from mosaic_testing.outputs import comparable, lines, truth

HOST = socket.gethostname()


@contextlib.contextmanager
def blind_to(root, also=None):
    """`os.open` of any path under `root` fails as on a node that does not see it; `also(path)`
    runs first (e.g. to remove the file for good)."""
    real_open = os.open

    def refusing(path, *args, **kwargs):
        if os.fspath(path).startswith(str(root)):
            if also is not None:
                also(path)
            raise FileNotFoundError(2, "No such file or directory", path)
        return real_open(path, *args, **kwargs)

    os.open = refusing
    try:
        yield
    finally:
        os.open = real_open


def blind_task(task, root, also=None):
    def work(ref, config):
        with blind_to(root, also):
            return task.work(ref, config)

    return Task(work, task.give_up)


def stamp_of(path, size=None, mtime_ns=None):
    info = os.stat(path)
    return Stamp(
        info.st_size if size is None else size,
        info.st_mtime_ns if mtime_ns is None else mtime_ns,
        info.st_ctime_ns,
    )


def a_log(shared_logs, tmp_path):
    path = tmp_path / "x.darshan"
    shutil.copyfile(shared_logs[0], path)
    return path


@pytest.mark.parametrize("task", [validate_log, categorize_log])
def test_a_log_the_worker_cannot_open_is_a_node_fault_not_an_eviction(task, tmp_path, small_config):
    missing = tmp_path / "gone.darshan"
    ref = LogRef("gone.darshan", str(missing), stamp=Stamp(1000, 0, 0))
    result = task(ref, small_config)
    assert result == {
        "file": "gone.darshan",
        "status": NODE_FAULT,
        "ref": ref,
        "node": HOST,
        "detail": f"cannot open {missing}: No such file or directory",
    }


@pytest.mark.parametrize(
    "size_change, mtime_change_ns, scanned_at",
    [
        (0, 0, None),
        (0, 999_999_999, None),  # within the same second: file systems keep different fractions
        (0, 10**9, "2023-11-14T22:13:21Z"),  # the next second: another file
        (1, 0, "2023-11-14T22:13:20Z"),
    ],
)
def test_a_file_that_is_not_the_one_scanned_is_a_node_fault(
    shared_logs, tmp_path, small_config, size_change, mtime_change_ns, scanned_at
):
    path = a_log(shared_logs, tmp_path)
    second = 1_700_000_000 * 10**9  # 2023-11-14T22:13:20Z, a whole second
    os.utime(path, ns=(second, second))
    size = path.stat().st_size
    scanned = stamp_of(path, size + size_change, second + mtime_change_ns)
    result = validate_log(LogRef("x.darshan", str(path), stamp=scanned), small_config)
    if scanned_at is None:
        assert result["status"] == "ok"
        return
    assert result["status"] == NODE_FAULT
    assert result["detail"] == (
        f"{path} is another file here (size {size}, modified 2023-11-14T22:13:20Z) than the one "
        f"scanned (size {scanned.size}, modified {scanned_at})"
    )


def test_the_parent_stops_on_a_log_it_reads_and_evicts_one_it_cannot_read_either(
    shared_logs, tmp_path, small_config
):
    path = a_log(shared_logs, tmp_path)
    fault = {"status": NODE_FAULT, "ref": LogRef("x.darshan", str(path)), "node": "node7", "detail": "d"}
    stop = settle(fault, small_config.max_log_bytes)
    assert isinstance(stop, EngineError)
    assert str(stop).startswith("node node7 cannot read a log this machine reads: d. The nodes must see")
    assert "add --ship-logs" in str(stop) and "rerun the same command to resume" in str(stop)
    path.unlink()
    assert settle(fault, small_config.max_log_bytes) == (Reason.UNREADABLE, f"no such file: {path}")


def test_a_blind_node_stops_the_run_and_a_rerun_that_sees_redoes_those_logs(
    year_corpus, small_config, reference_run, tmp_path, monkeypatch
):
    # Until 2026-11-29 every plain log file was evicted as unreadable ("no such file"), exit 0,
    # and a rerun kept those evictions.
    for name in ("VALIDATE", "CATEGORIZE"):
        monkeypatch.setattr(pipeline, name, blind_task(getattr(pipeline, name), year_corpus))
    with pytest.raises(EngineError) as stopped:
        run([year_corpus], tmp_path, small_config, workers=0)
    assert f"node {HOST} cannot read a log this machine reads: cannot open {year_corpus}/" in str(
        stopped.value
    )
    assert not (tmp_path / "summary.json").exists()
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        logs, members = db.execute("SELECT count(*), count(archive) FROM logs").fetchone()
    assert logs == members  # archive members only (the parent ships their bytes): no plain log file
    monkeypatch.undo()
    run([year_corpus], tmp_path, small_config, workers=0)
    assert comparable(tmp_path) == comparable(reference_run)


def test_a_log_gone_for_the_parent_too_is_evicted_for_what_the_parent_met(
    year_corpus, small_config, reference_run, tmp_path, monkeypatch
):
    corpus = tmp_path / "corpus"
    shutil.copytree(year_corpus, corpus)
    gone = next(
        t["file"] for t in truth(corpus) if t["valid"] and ".tar" not in t["file"] and not t["heaviest"]
    )

    def remove(path):  # the file vanishes between the scan and the read, for everyone
        if os.fspath(path) == str(corpus / gone):
            os.unlink(path)

    monkeypatch.setattr(pipeline, "VALIDATE", blind_task(pipeline.VALIDATE, corpus / gone, remove))
    out = tmp_path / "out"
    run([corpus], out, small_config, workers=0)
    [eviction] = [e for e in lines(out, "evicted.jsonl") if e["file"] == gone]
    expected = {"file": gone, "reason": "unreadable", "detail": f"no such file: {corpus / gone}"}
    assert {key: eviction[key] for key in expected} == expected
    assert len(lines(out, "evicted.jsonl")) == len(lines(reference_run, "evicted.jsonl")) + 1


def test_a_rerun_redoes_what_an_older_run_evicted_because_a_node_could_not_open_the_file(
    year_corpus, small_config, reference_run, tmp_path, monkeypatch
):
    plain = [t for t in truth(year_corpus) if ".tar" not in t["file"]]
    unseen = {t["file"] for t in plain[::2]}  # validated as unreadable; the others at categorization
    validate, categorize = pipeline.VALIDATE, pipeline.CATEGORIZE

    def validating(ref, config):  # as the code before 2026-11-29 on a node without the files
        if ref.name in unseen:
            return evicted(ref, Reason.UNREADABLE, f"no such file: {ref.location}")
        return validate.work(ref, config)

    def categorizing(ref, config):
        if ref.data is None:  # a plain log file
            return pipeline.as_row(
                evicted(ref, Reason.UNREADABLE, f"cannot open {ref.location}: Permission denied")
            )
        return categorize.work(ref, config)

    monkeypatch.setattr(pipeline, "VALIDATE", Task(validating, validate.give_up))
    monkeypatch.setattr(pipeline, "CATEGORIZE", Task(categorizing, categorize.give_up))
    run([year_corpus], tmp_path, small_config, workers=0)  # what an older run left
    reasons = {e["file"]: e["detail"].split(" ")[0] for e in lines(tmp_path, "evicted.jsonl")}
    assert {"no", "cannot"} <= set(reasons.values())
    monkeypatch.undo()
    run([year_corpus], tmp_path, small_config, workers=0)
    assert comparable(tmp_path) == comparable(reference_run)
