"""Results store: scheduler lookups, posted results, configuration invalidation, WAL readers."""

import os
import threading

import pytest

from mosaic.corpus.dedup import Group
from mosaic.corpus.store import Store


def posted(
    file,
    job_id="7",
    uid=42,
    app="/bin/lmp",
    read=0.0,
    write=0.0,
    run_time=10.0,
    start="2019-03-14T10:00:00Z",
    categories=("read_insignificant",),
):
    return {
        "file": file,
        "status": "ok",
        "job": {
            "uid": uid,
            "job_id": job_id,
            "exe": f"{app} -in x",
            "application": app,
            "run_time": run_time,
            "start": start,
        },
        "categories": list(categories),
        "read": {"bytes": read},
        "write": {"bytes": write},
    }


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "store.sqlite") as opened:
        yield opened


def test_unknown_application_and_job_are_empty(store):
    assert store.application(1, "/bin/x") is None
    assert store.job("nope") == []


def test_record_counts_runs_and_keeps_the_heaviest(store):
    store.record(posted("a", read=100, categories=["read_on_start"]))
    store.record(
        posted("b", job_id="8", read=50, write=49, start="2019-03-15T00:00:00Z", categories=["write_on_end"])
    )
    app = store.application(42, "/bin/lmp")
    assert app["runs"] == 2 and app["representative"] == "a"  # 100 > 99 bytes
    assert app["categories"] == ["read_on_start"] and app["last_seen"] == "2019-03-15T00:00:00Z"
    # equal bytes, longer run time takes over
    store.record(posted("c", job_id="9", read=100, run_time=11.0, categories=["write_steady"]))
    app = store.application(42, "/bin/lmp")
    assert (app["runs"], app["representative"], app["categories"]) == (3, "c", ["write_steady"])
    # equal bytes and run time: the first name ("a" < "c") wins back
    store.record(posted("a", read=100, run_time=11.0, categories=["read_on_start"]))
    app = store.application(42, "/bin/lmp")
    assert (app["runs"], app["representative"]) == (3, "a")  # "a" again: not a new run


def test_job_lookup_returns_own_and_group_categories(store):
    store.record(posted("a", job_id="77", read=10, categories=["read_steady"]))
    store.record(posted("b", job_id="78", read=99, categories=["read_on_end"]))
    [hit] = store.job("77")
    assert hit["file"] == "a" and hit["categories"] == ["read_steady"]
    assert hit["application"]["representative"] == "b"
    assert hit["application"]["categories"] == ["read_on_end"]


def facts(file, status="ok", key="1:app", total=1.0, run_time=1.0, size=10, mtime_ns=5, ctime_ns=6):
    return {
        "file": file,
        "location": f"/data/{file}",
        "size": size,
        "mtime_ns": mtime_ns,
        "ctime_ns": ctime_ns,
        "status": status,
        "group_key": key,
        "uid": 1,
        "job_id": file,
        "application": "app",
        "total_bytes": total,
        "run_time": run_time,
        "partial": 0,
        "dropped_records": 0,
        "reason": None if status == "ok" else "bad_job",
    }


def seen(file, size=10, mtime_ns=5, ctime_ns=6):
    return (file, f"/data/{file}", size, mtime_ns, ctime_ns)


def test_a_log_is_validated_again_when_its_size_mtime_or_ctime_changed(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("h")
        store.save_facts([facts("a"), facts("b"), facts("c"), facts("d")])
        store.save_results([{"file": "b", "status": "ok", "categories": []}])
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("h")
        changed = [seen("b", size=11), seen("c", mtime_ns=6), seen("d", ctime_ns=7)]
        assert store.mark_seen([seen("a"), *changed]) == {"a"}
        store.save_facts([facts("b", size=11)])  # validated again: its old result goes
        assert store.funnel_counts(all_runs=False)["categorized"] == 0


def test_an_unchanged_archive_validated_whole_is_reused(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("h")
        store.save_facts(
            [{**facts("day.tar/a"), "archive": "/d/day.tar"}, {**facts("day.tar/b"), "archive": "/d/day.tar"}]
        )
        store.save_archives([("/d/day.tar", 100, 7, 9, 2)])
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("h")
        assert store.reuse_archive("/d/day.tar", 100, 8, 9) is None  # touched since
        assert store.reuse_archive("/d/day.tar", 100, 7, 10) is None  # rewritten, mtime put back
        assert store.reuse_archive("/d/other.tar", 100, 7, 9) is None
        assert store.reuse_archive("/d/day.tar", 100, 7, 9) == 2
        assert store.funnel_counts(all_runs=False)["valid"] == 2  # both logs are part of this run


def test_non_utf8_names_round_trip_byte_exact(tmp_path):
    name = os.fsdecode(b"caf\xe9-\xff.darshan")
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("h")
        store.save_facts(
            [facts(name, status="evicted") | {"detail": f"no such file: {name}"}, facts("plain")]
        )
        store.save_groups([Group("1:app", 1, "plain")])
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("h")
        assert store.mark_seen([seen(name), seen("plain")]) == {name, "plain"}
        [row] = store.evicted()
        assert os.fsencode(row["file"]) == b"caf\xe9-\xff.darshan"
        assert row["detail"] == f"no such file: {name}"


def test_next_heaviest_run_stands_in_for_an_evicted_representative(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("h")
        store.save_facts(
            [
                facts("a", total=9.0),
                facts("b", total=5.0, run_time=2.0),
                facts("c", total=5.0, run_time=1.0),
                facts("d", total=1.0),
                facts("z", key="2:other"),
            ]
        )
        store.save_groups([Group("1:app", 4, "a"), Group("2:other", 1, "z")])
        store.save_results(
            [
                {"file": "a", "status": "evicted", "reason": "timeout"},
                {"file": "z", "status": "evicted", "reason": "worker_crash"},
            ]
        )
        assert store.promote_stand_ins() == 1  # "2:other" has no other run
        assert [r["file"] for r in store.to_categorize(all_runs=False)] == ["b"]  # longer run
        store.save_results([{"file": "b", "status": "evicted", "reason": "timeout"}])
        assert store.promote_stand_ins() == 1
        assert [r["file"] for r in store.to_categorize(all_runs=False)] == ["c"]
        store.save_results([{"file": "c", "status": "ok", "categories": ["x"]}])
        assert store.promote_stand_ins() == 0
        assert store.funnel_counts(all_runs=False)["stand_ins"] == 1
        assert store.funnel_counts(all_runs=False)["categorized"] == 1


def test_same_configuration_resumes_and_another_one_invalidates(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("hash-1")
        store.save_facts([facts("x"), facts("y", status="evicted")])
        store.save_results([{"file": "x", "status": "ok", "categories": ["read_steady"]}])
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("hash-1")
        assert store.mark_seen([seen("x"), seen("y"), seen("z")]) == {"x", "y"}
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("hash-2")
        assert store.mark_seen([seen("x"), seen("y")]) == set()
        assert list(store.categorized(all_runs=True)) == []


def test_only_logs_seen_in_this_run_are_reported(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("h")
        store.save_facts([facts("old")])
    with Store(tmp_path / "s.sqlite") as store:
        store.begin_run("h")
        store.mark_seen([seen("new")])
        store.save_facts([facts("new", total=5.0)])
        store.save_groups([Group("1:app", 1, "new")])
        assert [run.file for run in store.runs_by_group()] == ["new"]
        assert store.funnel_counts(all_runs=False) == {
            "valid": 1,
            "partial": 0,
            "groups": 1,
            "categorized": 0,
            "stand_ins": 0,
        }
        assert [row["file"] for row in store.to_categorize(all_runs=False)] == ["new"]


def test_readers_in_other_threads_see_committed_records(tmp_path):
    path = tmp_path / "s.sqlite"
    writer = Store(path)
    errors = []

    def read():
        with Store(path) as reader:
            for _ in range(200):
                try:
                    app = reader.application(42, "/bin/lmp")
                    assert app is None or app["runs"] >= 1
                except Exception as error:  # noqa: BLE001 - reported below
                    errors.append(error)

    thread = threading.Thread(target=read)
    thread.start()
    for i in range(200):
        writer.record(posted(f"f{i:03d}", job_id=str(i), read=i))
    thread.join()
    writer.close()
    assert errors == []
    with Store(path) as store:
        assert store.application(42, "/bin/lmp")["runs"] == 200
        assert store.application(42, "/bin/lmp")["representative"] == "f199"
