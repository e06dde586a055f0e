"""Batch (`mosaic run`) and service decide a log alike.

Logs are built with the project's writer, or by hand (tests/darshan/handmade.py)
where the writer cannot go: it keeps the job region within darshan-util's
4,096 bytes, and a hostile log does not.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from mosaic.config import Config
from mosaic.corpus.pipeline import run
from mosaic.darshan import formats as F
from mosaic.darshan.reader import DXT_MEMORY_PER_BYTE
from mosaic.service.pool import categorize_posted
from mosaic_testing.handmade import job_region, posix_v4, v3_log
from mosaic_testing.written import dxt_log, dxt_region

MAX_JOB = Config().max_job_bytes  # 1 MiB


def log_with_job_region(size: int, uid: int = 1000, jobid: int = 42) -> bytes:
    """A good 3.41 log whose job region inflates to exactly ``size`` bytes (the command
    line fills what the job record, metadata and mount table leave)."""
    room = size - len(job_region("3.41", cmdline=""))
    region = job_region("3.41", uid=uid, jobid=jobid, cmdline="/bin/app " + "x" * (room - len("/bin/app ")))
    assert len(region) == size
    return v3_log(
        "3.41", job=region, names={1: "/scratch/a"}, modules={"POSIX": (4, [posix_v4(1, bytes_read=5)])}
    )


def batch_outcomes(tmp: Path, logs: dict[str, bytes], config: Config) -> dict[str, tuple[str, str]]:
    """(status, reason) of each log after `mosaic run` (in process) on a folder of them."""
    folder = tmp / "in"
    folder.mkdir()
    for name, data in logs.items():
        (folder / name).write_bytes(data)
    run([folder], tmp / "out", config, workers=0)
    outcomes = {}
    for output in ("traces.jsonl", "evicted.jsonl"):
        for line in (tmp / "out" / output).read_text().splitlines():
            row = json.loads(line)
            outcomes[row["file"]] = ("evicted", row["reason"]) if "reason" in row else ("ok", "")
    return outcomes


# ----- One limit on the job region -----


def test_the_job_region_limit_is_one_rule_for_batch_and_service(tmp_path):
    logs = {"at.darshan": log_with_job_region(MAX_JOB), "past.darshan": log_with_job_region(MAX_JOB + 1)}
    assert len(logs["past.darshan"]) < 8 << 10  # a few KB stored
    assert batch_outcomes(tmp_path, logs, Config().replace(all_runs=True)) == {
        "at.darshan": ("ok", ""),
        "past.darshan": ("evicted", "too_large"),
    }
    at, past = (categorize_posted(logs[name], Config()) for name in ("at.darshan", "past.darshan"))
    assert (at.status, past.status, past.reason) == ("ok", "evicted", "too_large")
    assert json.loads(past.body)["detail"] == (
        f"job region (command line, metadata, mounts) over max_job_bytes = {MAX_JOB}"
    )


def test_the_job_region_limit_holds_on_a_real_server(open_server):
    with open_server.client() as client:
        at = client.post("/v1/categorize", content=log_with_job_region(MAX_JOB))
        past = client.post("/v1/categorize", content=log_with_job_region(MAX_JOB + 1))
    whole = MAX_JOB - len(job_region("3.41", cmdline=""))  # kept as its start and a hash
    assert at.status_code == 200 and len(at.json()["job"]["exe"]) == Config().max_name_chars < whole
    assert past.status_code == 422 and past.json()["reason"] == "too_large"


# ----- A DXT log under the cap -----

# VmHWM, not ru_maxrss: ru_maxrss survives exec and would start at the test's own peak.
PEAK_SCRIPT = """
import sys
from mosaic.config import Config
from mosaic.corpus.pipeline import categorize_log, validate_log
from mosaic.corpus.scan import LogRef
from mosaic.service.pool import categorize_posted
def high_water():
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) << 10
path, how = sys.argv[1], sys.argv[2]
body = open(path, "rb").read() if how == "service" else b""
before = high_water()
if how == "service":
    status = categorize_posted(body, Config()).status
elif how == "categorize":
    status = categorize_log(LogRef("x", path), Config())["status"]
else:
    status = (validate_log(LogRef("x", path), Config(all_runs=True))["result"] or {})["status"]
print(status, high_water() - before)
"""


def peak_of(path: Path, how: str) -> int:
    """Peak RSS growth (bytes) of one way to categorize the log at ``path``, in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT, str(path), how],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.split()
    assert out[0] == "ok", (how, out)
    return int(out[1])


def test_every_path_categorizes_a_dxt_log_within_the_same_memory(tmp_path):
    """`mosaic run --all-runs` categorizes at validation; it held the whole log through the
    analysis (measured: 7.4 times the DXT region at its peak, where the service and a single-run
    batch needed 6.0-6.1), so a log under the cap (worker_memory_bytes / 8) could be
    too_large in batch and answered by the service. Now every path drops the log once its
    trace is built. Since 2026-12-02 validation also builds the run's activity (SPEC 3.10: a DXT
    log's every segment) and packs it before the trace: the service and an all-runs batch, which
    both build it, agree (measured 8.1 and 8.2 times the region, the single-run categorization,
    which does not, 7.5)."""
    segments = 500_000
    region = dxt_region(F.DXT_POSIX, 2, segments)  # 20 MB
    path = tmp_path / "dxt.darshan"
    path.write_bytes(dxt_log(segments))
    assert region * DXT_MEMORY_PER_BYTE < Config().worker_memory_bytes  # under the documented cap
    single, service, all_runs = (peak_of(path, how) for how in ("categorize", "service", "all_runs"))
    shares = {"single run": single, "service": service, "all runs": all_runs}
    print("peak / DXT region:", ", ".join(f"{k} {v / region:.1f}" for k, v in shares.items()))
    assert all_runs < service + region / 4
    assert single < service + region / 4


# ----- A log's name is the hash of the log, whatever its wrappers -----


def test_raw_gzip_and_double_gzip_are_one_posted_log():
    log = log_with_job_region(4096)
    forms = [log, gzip.compress(log), gzip.compress(gzip.compress(log), 1)]
    answers = [categorize_posted(body, Config()) for body in forms]
    assert {answer.status for answer in answers} == {"ok"}
    assert len({json.loads(answer.body)["file"] for answer in answers}) == 1
    triple = categorize_posted(gzip.compress(forms[2]), Config())
    assert (triple.status, triple.reason) == ("evicted", "unreadable")
    assert json.loads(triple.body)["detail"] == "more than 2 gzip/bzip2 layers"


def test_double_gzip_counts_one_run_on_a_real_server(server):
    log = log_with_job_region(4096, uid=8760, jobid=8761)
    bodies = [
        (log, {}),
        (gzip.compress(log), {}),
        (gzip.compress(log), {"Content-Encoding": "gzip"}),  # a .darshan.gz sent gzip-encoded
        (gzip.compress(gzip.compress(log)), {}),
    ]
    with server.client() as client:
        files = {
            client.post("/v1/categorize", params={"store": "true"}, content=body, headers=headers).json()[
                "file"
            ]
            for body, headers in bodies
        }
        runs = client.get("/v1/jobs/8761").json()["runs"]
    assert len(files) == 1 and len(runs) == 1


def test_batch_reads_the_wrapped_logs_the_service_reads(tmp_path):
    log = log_with_job_region(4096)
    once = gzip.compress(log)
    logs = {
        "raw.darshan": log,
        "once.darshan.gz": once,
        "twice.darshan.gz": gzip.compress(once),
        "thrice.darshan.gz": gzip.compress(gzip.compress(once)),
    }
    assert batch_outcomes(tmp_path, logs, Config().replace(all_runs=True)) == {
        "raw.darshan": ("ok", ""),
        "once.darshan.gz": ("ok", ""),
        "twice.darshan.gz": ("ok", ""),
        "thrice.darshan.gz": ("evicted", "unreadable"),
    }


# ----- One inflation budget for a wrapped log's layers and its regions -----


def _smallest_budget(log: bytes) -> int:
    """The least max_inflated_bytes under which `log` (unwrapped) reads, by bisection."""
    low, high = 0, 1 << 20
    while low < high:
        middle = (low + high) // 2
        outcome = categorize_posted(log, Config().replace(max_inflated_bytes=middle))
        low, high = (low, middle) if outcome.status == "ok" else (middle + 1, high)
    return low


def test_a_wrapped_log_spends_one_inflation_budget_in_batch_and_service(tmp_path):
    """The service unwrapped a posted .darshan.gz under max_inflated_bytes and then read
    the log under a fresh max_inflated_bytes, so it inflated up to twice the bound that
    batch keeps (batch counts the layers against the regions' budget)."""
    log = log_with_job_region(64 << 10)
    regions = _smallest_budget(log)  # what the log's own regions inflate to
    wrapped = gzip.compress(log)
    budget = regions + len(log)  # the layer inflates to the log itself
    for cap, expected in ((budget, ("ok", "")), (budget - 1, ("evicted", "too_large"))):
        config = Config().replace(max_inflated_bytes=cap, all_runs=True)
        folder = tmp_path / str(cap)
        folder.mkdir()
        assert batch_outcomes(folder, {"log.darshan.gz": wrapped}, config) == {"log.darshan.gz": expected}
        answer = categorize_posted(wrapped, config)
        assert (answer.status, answer.reason) == expected
