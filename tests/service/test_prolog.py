"""cluster/slurm-prolog.sh under /bin/sh (dash) as slurmctld runs it (no PATH, Slurm's
variables), against a live `mosaic serve`: the start it posts (the application from the
cli_filter's mosaic_app= word, decoded by the service), what it spools when the service is
down or silent and how the next prolog or epilog posts it, a refusal logged and dropped; and
the epilog's end post, for a job without a log, spooled and drained after the start."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import MOSAIC
from .test_epilog import EPILOG, job_env

# The code under test, not the venv's editable install, in the epilog's clean environment.
THIS_TREE = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
PROLOG = Path(__file__).resolve().parents[2] / "cluster" / "slurm-prolog.sh"
STRANGE = "/apps/my app/x=1%+'\"\\é\tend"
ENCODED = "/apps/my%20app/x%3D1%25%2B%27%22%5C%C3%A9%09end"  # as cli_filter.lua writes it


@pytest.fixture
def prolog_site(server, tmp_path, write_secret):
    write_secret(tmp_path / "token", server.token + "\n")
    return {
        "MOSAIC_URL": server.url,
        "MOSAIC_TOKEN_FILE": str(tmp_path / "token"),
        "MOSAIC_SPOOL_DIR": str(tmp_path / "spool"),
        "MOSAIC_PROLOG_LOG": str(tmp_path / "prolog.log"),
        "MOSAIC_EPILOG_LOG": str(tmp_path / "epilog.log"),
    }


def prolog(site: dict[str, str], job: str, uid: int = 4343, comment: str = "", **extra: str) -> list[str]:
    """Run the prolog for ``job``: the lines it logged for it."""
    env = {**site, "SLURM_JOB_ID": job, "SLURM_JOB_UID": str(uid), "SLURM_JOB_COMMENT": comment, **extra}
    done = subprocess.run(["/bin/sh", str(PROLOG)], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done
    log = Path(site.get("MOSAIC_PROLOG_LOG", "/nonexistent"))
    return [line for line in log.read_text().splitlines() if f" job {job}: " in line] if log.exists() else []


def registered(server) -> dict[str, dict]:
    with server.client() as client:
        return {job["job_id"]: job for job in client.get("/v1/running").json()["jobs"]}


def running_spool(site: dict[str, str]) -> Path:
    return Path(site["MOSAIC_SPOOL_DIR"] + ".running")


def down_url() -> str:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{closed.getsockname()[1]}"


def test_a_start_is_posted_with_the_application_of_the_comment(server, prolog_site):
    before = time.time()
    said = prolog(
        prolog_site, "880001", comment=f"nightly mosaic_app={ENCODED}", SLURM_JOB_NODELIST="n[1-2],g3"
    )
    job = registered(server)["880001"]
    assert (job["uid"], job["application"], job["nodes"]) == (4343, STRANGE, "n[1-2],g3")
    assert before - 1 <= job["start_epoch"] <= time.time()
    # No Slurm here: squeue answers nothing, the limit is unknown (it expires as UNLIMITED would).
    assert job["time_limit"] is None and job["tasks"] is None
    assert said == [line for line in said if "no time limit from squeue" in line]


def test_a_job_that_bypassed_the_filter_is_posted_without_application(server, prolog_site):
    said = prolog(prolog_site, "880002", comment="mosaic_period_class=2")
    assert registered(server)["880002"]["application"] is None
    assert any("no mosaic_app= in the job's comment (the cli_filter did not run)" in line for line in said)
    said = prolog(prolog_site, "880003", comment="mosaic_app=/a&uid=0")  # not the filter's encoding
    assert registered(server)["880003"]["application"] is None and registered(server)["880003"]["uid"] == 4343
    assert any("not the cli_filter's encoding" in line for line in said)


def test_a_start_the_service_cannot_take_is_spooled_then_posted_by_the_next_prolog(server, prolog_site):
    down = {**prolog_site, "MOSAIC_URL": down_url()}
    said = prolog(down, "880010", comment="mosaic_app=/apps/a")
    assert any("start kept in the spool: service answered 000" in line for line in said), said
    [entry] = list(running_spool(prolog_site).iterdir())
    assert entry.name.endswith(".880010.1.start") and "application=/apps/a" in entry.read_text()
    assert stat_mode(running_spool(prolog_site)) == 0o700
    with socket.socket() as silent:  # accepts, never answers: the prolog gives up at its timeout
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        began = time.monotonic()
        prolog(
            {
                **down,
                "MOSAIC_URL": f"http://127.0.0.1:{silent.getsockname()[1]}",
                "MOSAIC_PROLOG_TIMEOUT": "0.3",
            },
            "880011",
        )
        assert time.monotonic() - began < 2.0
    assert "880010" not in registered(server)
    prolog(prolog_site, "880012")  # the service is back: its own post, then the spooled ones
    assert {"880010", "880011", "880012"} <= set(registered(server))
    assert not list(running_spool(prolog_site).iterdir())


def stat_mode(path: Path) -> int:
    return os.stat(path).st_mode & 0o777


def test_a_refused_start_is_logged_and_dropped(server, prolog_site):
    prolog(prolog_site, "880020", uid=1)
    said = prolog(prolog_site, "880020", uid=2)  # another uid claims the job
    assert any("start refused: 409" in line and "job_mismatch" in line for line in said), said
    assert registered(server)["880020"]["uid"] == 1
    assert not running_spool(prolog_site).exists() or not list(running_spool(prolog_site).iterdir())


def epilog(site: dict[str, str], job: str, uid: int) -> str:
    env = {"MOSAIC_BIN": str(MOSAIC), **site, **job_env(job, "u", uid), **THIS_TREE}
    done = subprocess.run(["/bin/bash", str(EPILOG)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done
    return Path(site["MOSAIC_EPILOG_LOG"]).read_text()


def test_the_epilog_posts_the_end_of_every_job_spooled_after_its_start(server, prolog_site):
    prolog(prolog_site, "880030")
    said = epilog(prolog_site, "880030", 4343)  # no DARSHAN_LOGDIR, no log: the end all the same
    assert "880030" not in registered(server)
    assert "DARSHAN_LOGDIR None is not a directory" in said
    down = {**prolog_site, "MOSAIC_URL": down_url()}
    prolog(down, "880031")  # start and end both while the service is down
    said = epilog(down, "880031", 4343)
    assert "end kept in the spool" in said
    assert sorted(entry.name.split(".", 1)[1] for entry in running_spool(prolog_site).iterdir()) == [
        "880031.1.start",
        "880031.2.end",
    ]
    said = epilog(prolog_site, "880032", 4343)  # the next job's epilog: the start, then the end
    assert said.index("spooled start of job 880031: 200") < said.index("spooled end of job 880031: 200")
    assert "880031" not in registered(server) and not list(running_spool(prolog_site).iterdir())


def test_the_prolog_logs_to_syslog_and_takes_the_task_count_slurm_gives(server, prolog_site, tmp_path):
    """No MOSAIC_PROLOG_LOG: its lines reach syslog with the tag mosaic-prolog (here a socket
    of the test, where `logger` sends them). Without squeue's answer, SLURM_JOB_NTASKS."""
    address = str(tmp_path / "log.sock")
    site = {k: v for k, v in prolog_site.items() if k != "MOSAIC_PROLOG_LOG"}
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as syslog:
        syslog.bind(address)
        syslog.settimeout(20)
        prolog(site, "880040", MOSAIC_SYSLOG_SOCKET=address, SLURM_JOB_NTASKS="6")
        message = syslog.recv(4096).decode()
    assert "mosaic-prolog" in message and "job 880040: no mosaic_app= in the job's comment" in message
    assert registered(server)["880040"]["tasks"] == 6
