"""A slow run's cause on the job page (`mosaic explain --store`, SPEC 3.11), on the real
interference logs: a victim run beside hdf_bulk names it, a victim that overlapped nothing
reads "Not slow", and the words of each cause kind. (New: fails on e627ff0.)"""

import html
import json
import re

import pytest
from click.testing import CliRunner

from mosaic.cli import main as cli
from mosaic.config import Config
from mosaic.corpus import pipeline
from mosaic.corpus.store import Store
from mosaic.interference.analyse import analyse
from mosaic.interference.words import NOT_JUDGED, cause_text, slowdown_text
from mosaic_testing.contention_tables import INTERFERENCE, THROTTLED, interference_truth

CONFIG = Config(contention_min_runs=8, shared_file_systems=(THROTTLED,))


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """The 34 logs through `mosaic run` and the contention step: the store, and per job id its
    log file and stored verdict."""
    out = tmp_path_factory.mktemp("judged")
    pipeline.run([INTERFERENCE / "logs"], out, CONFIG, workers=0)
    with Store(out / "store.sqlite") as store:
        analyse(store, CONFIG)
        with store._snapshot() as db:
            rows = db.execute(
                "SELECT j.job_id, j.file, c.slow, c.cause FROM jobs j JOIN run_contention c USING (run)"
            ).fetchall()
    logs = INTERFERENCE / "logs"
    return out / "store.sqlite", {
        int(job): (logs / file, bool(slow), json.loads(cause)) for job, file, slow, cause in rows
    }


def section(store, log, tmp_path) -> str:
    page = tmp_path / "job.html"
    done = CliRunner().invoke(cli, ["explain", str(log), "-o", str(page), "--store", str(store)])
    assert done.exit_code == 0, done.output
    found = re.search(r'id="contention".*?</section>', page.read_text(), re.S)
    assert found, "no contention section"
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(0))).replace("\u00a0", " ")


def test_a_victim_beside_the_aggressor_names_it(judged, tmp_path):
    store, by_job = judged
    truth = {t["job_id"]: t for t in interference_truth()}
    victim = next(
        job for job, (_, slow, cause) in sorted(by_job.items())
        if truth[job]["app"] == "lmp_restart" and truth[job]["aggressors"] and slow and cause["kind"] == "run"
    )  # fmt: skip
    file, _, cause = by_job[victim]
    text = section(store, file, tmp_path)
    assert f"job {cause['job_id']} (/opt/mosaic-ifs/bin/hdf_bulk, uid 0) moved" in text, text
    assert int(cause["job_id"]) in truth[victim]["aggressors"]
    assert "Slow: " in text and "N:1 I/O mode" in text


def test_a_victim_alone_is_not_slow(judged, tmp_path):
    store, by_job = judged
    truth = {t["job_id"]: t for t in interference_truth()}
    alone = next(
        job for job in sorted(by_job) if truth[job]["app"] == "lmp_restart" and not truth[job]["overlaps"]
    )
    text = section(store, by_job[alone][0], tmp_path)
    assert "Not slow: " in text and "within its application's usual spread" in text, text


def test_without_a_judgement_the_page_says_so(tmp_path):
    log = sorted((INTERFERENCE / "logs").glob("*lmp_restart*"))[0]
    empty = tmp_path / "empty.sqlite"
    Store(empty).close()
    assert NOT_JUDGED in section(empty, log, tmp_path)


def test_the_words_of_each_cause():
    """Hand-written stored causes: a named run (its identity, share, traits), the same run
    withheld, many jobs at once, not explained."""
    named = {"kind": "run", "job_id": "77", "application": "/a/hdf", "uid": 5, "share": 0.6431,
             "others": 3, "traits": ["n1", "bandwidth"]}  # fmt: skip
    assert cause_text(named) == (
        "job 77 (/a/hdf, uid 5) moved 64% of the bytes that overlapped its I/O on the same file "
        "system (N:1 I/O mode, the largest bandwidth share); 3 other jobs overlapped it in all."
    )
    hidden = {"kind": "run", "job": "another job", "share": 0.3, "others": 1, "traits": ["small_requests"]}
    assert "(small requests (under 65.5\u00a0kB on average))" in cause_text(hidden)
    assert "over 500 metadata" in cause_text(
        {**named, "traits": ["metadata"]}, Config(contention_metadata_rate=500)
    )
    assert cause_text(hidden).startswith("another job moved 30% of the bytes")
    assert cause_text(hidden).endswith("; 1 other job overlapped it in all.")
    many = {"kind": "many jobs at once", "others": 12, "load": 3.0e8, "p95_load": 2.0e8}
    assert cause_text(many) == (
        "many jobs at once: 12 other jobs overlapped its I/O, 300\u00a0MB/s together, above its "
        "application's 95th percentile (200\u00a0MB/s)."
    )
    lost = {"kind": "not explained", "others": 0, "load": 0.0}
    assert (
        cause_text(lost)
        == "not explained: 0 other jobs overlapped its I/O (0\u00a0B/s), no run and no crowd stands out."
    )
    assert slowdown_text({"slowdown": 2.345, "slow": True, "cause": many}).startswith(
        "Slow: 2.35x its application's I/O time per byte at low load. Cause: many jobs at once"
    )
    assert slowdown_text({"slowdown": 1.1, "slow": False, "cause": None}) == (
        "Not slow: 1.10x its application's I/O time per byte at low load, "
        "within its application's usual spread."
    )
    assert slowdown_text(None) == NOT_JUDGED
