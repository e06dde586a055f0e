"""One log is one run in the store, whichever path (``mosaic run`` or a post) recorded it
first, under whatever name (issue 43 item 7: 3 logs gave a profile of 6 runs)."""

import shutil
from pathlib import Path

import pytest

from mosaic import categorize
from mosaic.config import Config
from mosaic.corpus import profiles
from mosaic.corpus.pipeline import run
from mosaic.corpus.store import Store
from mosaic.service.pool import posted_name

REAL = Path(__file__).resolve().parents[1] / "data" / "darshan-logs-runtime" / "darshan-main"
LOGS = ("pub_ckpt_newfile_7s.darshan", "pub_heatmap_append_7s.darshan", "pub_stdio_5s.darshan")


@pytest.fixture
def logs(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in LOGS:
        shutil.copy(REAL / name, folder / name)
    return folder


def post_all(store_path: Path) -> None:
    """The three logs as the service records them: named by their content hash."""
    with Store(store_path) as store:
        for name in LOGS:
            result = dict(categorize(str(REAL / name)))
            result["file"] = posted_name((REAL / name).read_bytes())
            store.record(result)


def counted(store_path: Path) -> list[tuple]:
    """Per group: stored runs, profile runs, and the runs of its job id."""
    with Store(store_path) as store:
        rows = []
        for name in LOGS:
            job = categorize(str(REAL / name))["job"]
            answer = store.application(job["uid"], job["application"])
            rows.append((answer["runs"], answer["profile"]["runs"], len(store.job(job["job_id"]))))
        return rows


def test_a_batch_run_then_posts_of_the_same_logs_count_each_log_once(logs, tmp_path):
    out = tmp_path / "out"
    run([logs], out, Config(all_runs=True), workers=0)
    post_all(out / "store.sqlite")
    assert counted(out / "store.sqlite") == [(1, 1, 1)] * 3
    run([logs], out, Config(all_runs=True), workers=0)  # a rerun keeps the count
    assert counted(out / "store.sqlite") == [(1, 1, 1)] * 3


def test_posts_then_a_batch_run_count_each_log_once(logs, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    post_all(out / "store.sqlite")
    assert counted(out / "store.sqlite") == [(1, 1, 1)] * 3
    run([logs], out, Config(all_runs=True), workers=0)
    assert counted(out / "store.sqlite") == [(1, 1, 1)] * 3
    post_all(out / "store.sqlite")  # posted again after the batch: still once
    assert counted(out / "store.sqlite") == [(1, 1, 1)] * 3


def test_the_identity_is_the_job_record_not_the_name():
    job = dict(categorize(str(REAL / LOGS[0]))["job"])
    assert profiles.run_identity(job) == profiles.run_identity(dict(job))
    for field, other in (("job_id", "1"), ("start_epoch", job["start_epoch"] + 1e-6), ("nprocs", 5)):
        assert profiles.run_identity({**job, field: other}) != profiles.run_identity(job)
    assert -(1 << 63) <= profiles.run_identity(job) < 1 << 63  # an SQLite INTEGER
