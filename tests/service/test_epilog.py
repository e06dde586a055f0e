"""cluster/slurm-epilog.sh (`mosaic epilog post`) against a live service: it finds logs by
the names Darshan 3.4 gives them (real logs of tests/data), searches from the job's start
day, logs to syslog with a PATH of its own, spools what the service could not take, and
posts only the job's own files, which the service checks against the job it is told."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest

from mosaic.service.pool import posted_name
from tests.service.conftest import epilog_post, site_env

EPILOG = Path(__file__).resolve().parents[2] / "cluster" / "slurm-epilog.sh"
MOSAIC = str(Path(sys.executable).with_name("mosaic"))
DATA = Path(__file__).resolve().parents[1] / "data" / "darshan-logs"
DLIO = sorted((DATA / "dlio_logs").glob("*.darshan"))  # ten logs of job 3116902, uid 31074
DLIO_JOB, DLIO_UID = "3116902", 31074
TREDDY = (
    DATA / "mpi_io_test_with_dxt" / "treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
)
ALICE, MALLORY, BOB = 41001, 41002, 41003
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="giving files to other uids needs root")


def day_folder(root: Path, days_ago: int = 0) -> Path:
    day = datetime.now() - timedelta(days=days_ago)
    folder = root / str(day.year) / str(day.month) / str(day.day)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def owned(path: Path, uid: int) -> Path:
    """``path`` given to ``uid`` (root), as darshan-runtime leaves a log: its writer's."""
    if os.geteuid() == 0:
        os.chown(path, uid, uid)
    return path


# The code under test, not the venv's editable install, in the epilog's clean environment.
THIS_TREE = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


def run_epilog(env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The shipped script as slurmctld runs it: no PATH, only Slurm's and the site's variables;
    its messages land in MOSAIC_EPILOG_LOG (returned as stdout)."""
    log = Path(env["MOSAIC_EPILOG_LOG"]) if "MOSAIC_EPILOG_LOG" in env else None
    done = subprocess.run(
        ["/bin/bash", str(EPILOG)],
        env={"MOSAIC_BIN": MOSAIC, **THIS_TREE, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    done.stdout = log.read_text() if log and log.exists() else ""
    return done


def job_env(job_id: str, user: str, uid: int) -> dict[str, str]:
    return {"SLURM_JOB_ID": job_id, "SLURM_JOB_USER": user, "SLURM_JOB_UID": str(uid)}


def runs(server, job_id: str) -> list[dict]:
    with server.client() as client:
        answer = client.get(f"/v1/jobs/{job_id}")
    return answer.json()["runs"] if answer.status_code == 200 else []


def test_epilog_finds_logs_by_the_names_darshan_3_4_gives(server, site):
    """Darshan 3.3.1+ puts the process id after the job id (idJOB-PID), and writes the numeric
    uid when LOGNAME is unset; a log still being written (.darshan_partial) waits."""
    folder = day_folder(Path(site["DARSHAN_LOGDIR"]))
    for log in DLIO[:3]:
        owned(Path(shutil.copy(log, folder)), DLIO_UID)
    numeric = folder / DLIO[3].name.replace("snyder_", f"{DLIO_UID}_", 1)
    owned(Path(shutil.copy(DLIO[3], numeric)), DLIO_UID)
    owned(Path(shutil.copy(DLIO[4], folder / (DLIO[4].name + "_partial"))), DLIO_UID)
    owned(Path(shutil.copy(TREDDY, folder)), DLIO_UID)  # another job (old form: idJOB_)
    done = run_epilog({**site, **job_env(DLIO_JOB, "snyder", DLIO_UID)})
    assert done.returncode == 0
    for log in [*DLIO[:3], numeric]:
        assert f"recorded {log.name}" in done.stdout, done.stdout
    assert len(runs(server, DLIO_JOB)) == 4  # stored by content: DLIO[:3] and the renamed one
    assert DLIO[4].name not in done.stdout and not runs(server, "4373053")


def test_epilog_searches_from_the_jobs_start_day_and_old_names(server, site):
    """A 3-day job's log sits in its start day's folder; Darshan before 3.3.1 named it idJOB_."""
    start = datetime.now() - timedelta(days=3)
    owned(Path(shutil.copy(TREDDY, day_folder(Path(site["DARSHAN_LOGDIR"]), 3))), 28751)
    times = {"SLURM_JOB_START_TIME": str(int(start.timestamp())), "SLURM_JOB_END_TIME": str(int(time.time()))}
    done = run_epilog({**site, **job_env("4373053", "treddy", 28751), **times})
    assert f"recorded {TREDDY.name}" in done.stdout, done.stdout
    assert len(runs(server, "4373053")) == 1


def test_epilog_logs_to_syslog_with_its_own_path(server, site, tmp_path):
    """slurmctld keeps nothing an EpilogSlurmctld prints and gives it no PATH: the messages
    reach syslog (here a socket of the test, where `logger` sends them)."""
    address = str(tmp_path / "log.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as syslog:
        syslog.bind(address)
        syslog.settimeout(20)
        env = {k: v for k, v in site.items() if k != "MOSAIC_EPILOG_LOG"}
        done = run_epilog({**env, **job_env("4242", "nobody", 65534), "MOSAIC_SYSLOG_SOCKET": address})
        message = syslog.recv(4096).decode()
    assert done.returncode == 0 and done.stderr == ""
    assert "mosaic-epilog" in message and "job 4242: no Darshan log under" in message


def test_a_log_the_service_cannot_take_waits_in_the_spool(server, site, log_factory):
    """Service down, then silent past the timeout: each log is spooled (one entry per log,
    private folder), and once one post got no answer the others are not tried (each would
    wait as long); the next epilog posts them first; drain and status tell what is left.
    Posting a log twice counts it once."""
    folder = day_folder(Path(site["DARSHAN_LOGDIR"]))
    me = os.geteuid()
    for job, pid in ((5101, 77), (5102, 78), (5102, 79)):
        name = f"carol_lmp_id{job}-{pid}_11-29-100-{job}_1.darshan"
        # two steps of job 5102: two runs (another input each; one log is one run, docs/operations.md)
        step = log_factory(job_id=job, uid=me, write_bytes=1e6 * pid, cmdline=f"/apps/lmp -in in.{pid}")
        (folder / name).write_bytes(step)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{closed.getsockname()[1]}"
    done = run_epilog({**site, **job_env("5101", "carol", me), "MOSAIC_URL": down})
    assert "kept in the spool: no answer" in done.stdout, done.stdout
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        slow = f"http://127.0.0.1:{silent.getsockname()[1]}"
        env = {**site, **job_env("5102", "carol", me), "MOSAIC_URL": slow, "MOSAIC_EPILOG_TIMEOUT": "0.5"}
        done = run_epilog(env)
        assert accepted(silent) == 1  # the spooled log's retry; the job's two logs: not tried
    kept = [
        line
        for line in done.stdout.splitlines()
        if "job 5102" in line and ".darshan kept in the spool" in line
    ]
    assert len(kept) == 2 and all(line.endswith("(ReadTimeout)") for line in kept), done.stdout
    spool = Path(site["MOSAIC_SPOOL_DIR"])
    assert stat.S_IMODE(spool.stat().st_mode) == 0o700
    assert sorted(entry.name.split(".")[0] for entry in spool.iterdir()) == ["5101", "5102", "5102"]
    status = subprocess.run(
        [MOSAIC, "epilog", "status", "--spool", str(spool)], capture_output=True, text=True
    )
    assert status.stdout.startswith("3 pending, the oldest for "), status
    again = next(spool.glob("5101.*")).read_bytes()
    done = run_epilog({**site, **job_env("5199", "carol", me)})  # the next job's epilog drains first
    assert (
        "spooled log of job 5101 recorded" in done.stdout
        and "spooled log of job 5102 recorded" in done.stdout
    )
    assert not list(spool.iterdir())
    (spool / f"5101.{me}.{'0' * 64}.darshan").write_bytes(again)  # the same log, spooled again
    drained = subprocess.run(
        [
            MOSAIC,
            "epilog",
            "drain",
            "--spool",
            str(spool),
            "--url",
            server.url,
            "--token-file",
            site["MOSAIC_TOKEN_FILE"],
        ],
        capture_output=True,
        text=True,
    )
    assert drained.stdout == "0 pending\n0 start and end posts pending\n" and "recorded" in drained.stderr, (
        drained
    )
    assert (
        len(runs(server, "5101")) == 1 and len(runs(server, "5102")) == 2
    )  # 5101 posted twice, counted once


def accepted(listening: socket.socket) -> int:
    """How many connections wait in ``listening``'s backlog."""
    listening.settimeout(0.2)
    count = 0
    with contextlib.suppress(TimeoutError):
        while True:
            listening.accept()[0].close()
            count += 1
    return count


def test_a_store_answering_503_spools_the_log(fresh_server, tmp_path, log_factory, write_secret):
    """A service whose store is gone answers 503: the log waits for the next epilog."""
    env = {**site_env(fresh_server, tmp_path, write_secret), **job_env("5301", "dave", os.geteuid())}
    (day_folder(tmp_path / "darshan") / "dave_lmp_id5301-1_11-29-1-1_1.darshan").write_bytes(
        log_factory(job_id=5301, uid=os.geteuid())
    )
    fresh_server.store.unlink()
    done = run_epilog(env)
    assert "kept in the spool: service answered 503" in done.stdout, done.stdout
    assert len(list((tmp_path / "spool").iterdir())) == 1


@ROOT_ONLY
def test_no_user_forges_or_blocks_another_users_run(server, site, log_factory, tmp_path):
    """mallory's job writes a log claiming alice's next job; mallory plants a file and links
    under alice's name pattern, a FIFO and a name with a newline: alice's job records her one
    real log, and mallory's is refused for what its header claims."""
    folder = day_folder(Path(site["DARSHAN_LOGDIR"]))
    forged = folder / "mallory_lmp_id6001-9_11-29-1-1_1.darshan"
    forged.write_bytes(log_factory(job_id=6002, uid=MALLORY))  # claims alice's next job id
    owned(forged, MALLORY)
    done = run_epilog({**site, **job_env("6001", "mallory", MALLORY)})
    assert f"not posted: its header claims job 6002 of uid {MALLORY}" in done.stdout, done.stdout
    assert not runs(server, "6002") and not list(Path(site["MOSAIC_SPOOL_DIR"]).iterdir())

    real = folder / "alice_lmp_id6002-10_11-29-1-1_1.darshan"
    real.write_bytes(log_factory(job_id=6002, uid=ALICE))
    owned(real, ALICE)
    planted = folder / "alice_lmp_id6002-11_11-29-1-1_1.darshan"
    planted.write_bytes(log_factory(job_id=6002, uid=ALICE, write_bytes=3e8))
    owned(planted, MALLORY)
    private = tmp_path / "bob-private.darshan"
    private.write_bytes(log_factory(job_id=6002, uid=ALICE, write_bytes=4e8))
    owned(private, ALICE)  # alice's own file elsewhere, reached by a link mallory made
    (folder / "alice_lmp_id6002-12_11-29-1-1_1.darshan").symlink_to(private)
    root_only = tmp_path / "root-only"
    root_only.write_bytes(b"secret")
    root_only.chmod(0o600)
    (folder / "alice_lmp_id6002-13_11-29-1-1_1.darshan").symlink_to(root_only)
    os.mkfifo(folder / "alice_lmp_id6002-14_11-29-1-1_1.darshan")
    (folder / "alice_lmp_id6002-15_11-29-1-1_1.darshan\nalice_x_id6002-16_1-1-1-1_1.darshan").write_bytes(b"")
    done = run_epilog({**site, **job_env("6002", "alice", ALICE)}, timeout=30)
    assert f"recorded {real.name}" in done.stdout, done.stdout
    assert f"'{planted.name}' not posted: owned by uid {MALLORY}" in done.stdout
    assert done.stdout.count("not posted: a symbolic link") == 2
    assert "-14_11-29-1-1_1.darshan' not posted: not a regular file" in done.stdout
    recorded = runs(server, "6002")
    assert len(recorded) == 1 and recorded[0]["application"]["uid"] == ALICE


def test_the_token_file_is_checked_as_the_service_checks_its_own(server, site, log_factory):
    """A FIFO (used to hang the epilog), a second line (used to become a request header), a
    file others may read: no post, the log waits in the spool, a message says why."""
    me = os.geteuid()
    (day_folder(Path(site["DARSHAN_LOGDIR"])) / "erin_lmp_id7001-1_11-29-1-1_1.darshan").write_bytes(
        log_factory(job_id=7001, uid=me)
    )
    token = Path(site["MOSAIC_TOKEN_FILE"])
    fifo = token.with_name("fifo")
    os.mkfifo(fifo)
    two_lines = token.with_name("two-lines")
    two_lines.write_text(f"{server.token}\nX-Evil: 1\n")
    two_lines.chmod(0o600)
    readable = token.with_name("readable")
    readable.write_text(server.token)
    readable.chmod(0o644)
    for path, why in [(fifo, "not a regular file"), (two_lines, "without spaces"), (readable, "chmod 600")]:
        done = run_epilog({**site, **job_env("7001", "erin", me), "MOSAIC_TOKEN_FILE": str(path)}, timeout=30)
        assert "kept in the spool: token file:" in done.stdout and why in done.stdout, done.stdout
    assert not runs(server, "7001")


def test_logs_past_the_cap_wait_in_the_spool_and_past_the_second_cap_are_lost(server, site, tmp_path):
    """Ten logs of one job, epilog_max_logs 3 and epilog_max_deferred_logs 4: the first 3
    (by name) are posted, the next 4 spooled without a post, the last 3 reported lost;
    `mosaic epilog drain` then records the 4 spooled ones."""
    config = tmp_path / "epilog.toml"
    config.write_text("epilog_max_logs = 3\nepilog_max_deferred_logs = 4\n")
    folder = day_folder(Path(site["DARSHAN_LOGDIR"]))
    for log in DLIO:
        owned(Path(shutil.copy(log, folder)), DLIO_UID)
    env = {**site, **job_env(DLIO_JOB, "snyder", DLIO_UID), "MOSAIC_BIN": MOSAIC}
    done = epilog_post(config, env)
    assert done.returncode == 0 and done.stderr.count("recorded ") == 3
    assert done.stderr.count("kept in the spool: past epilog_max_logs posts for one job") == 4
    assert f"{DLIO[7].name} and the job's next logs lost: more than 7 (epilog_max_logs)" in done.stderr
    names = [posted_name(log.read_bytes()) for log in DLIO]  # a posted log's stored name

    def stored() -> set[str]:
        return {run["file"] for run in runs(server, DLIO_JOB)}

    assert set(names[:3]) <= stored() and not stored() & set(names[4:])  # 3: an earlier test's
    spool = Path(site["MOSAIC_SPOOL_DIR"])
    assert len(list(spool.iterdir())) == 4
    drained = subprocess.run(
        [MOSAIC, "epilog", "drain", "--spool", str(spool), "--config", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert drained.returncode == 0 and not list(spool.iterdir()), drained.stderr
    assert set(names[:7]) <= stored() and not stored() & set(names[7:])


def test_the_service_refuses_a_log_of_another_job_or_uid(server, log_factory):
    """POST ?job_id=J&uid=U: 409 job_mismatch unless the log claims both; nothing recorded."""
    data = log_factory(job_id=8001, uid=8)
    with server.client() as client:

        def post(**params: str | int) -> httpx.Response:
            return client.post("/v1/categorize", params={"store": "true", **params}, content=data)

        assert post(job_id="8002", uid=8).json()["error"] == "job_mismatch"
        assert post(job_id="8001", uid=9).status_code == 409
        assert client.get("/v1/jobs/8001").status_code == 404
        assert post(job_id="8001", uid=8).status_code == 200
        assert post().status_code == 200  # without them, as before
        assert len(client.get("/v1/jobs/8001").json()["runs"]) == 1
    assert httpx.get(server.url + "/healthz").status_code == 200
