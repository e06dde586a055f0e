"""The scheduler path on a real Slurm (mosaic_testing.slurm): jobs of two users run a step
that writes its Darshan log as darshan-runtime does; the shipped epilog posts it to `mosaic
serve` and the shipped cli_filter.lua, run by Slurm's own cli_filter/lua plugin (Lua 5.1 on
Debian), puts the application's period class in the next submission's comment."""

from __future__ import annotations

import json
import pwd
import subprocess
from datetime import datetime

import pytest

from mosaic_testing.joblogs import darshan_name, periodic_logs, relabelled
from mosaic_testing.logs import REAL_LOGS
from mosaic_testing.slurm import MOSAIC, SlurmCluster, wait_for

pytestmark = pytest.mark.slow
ALICE, MALLORY = pwd.getpwnam("nobody"), pwd.getpwnam("daemon")  # jobs run as real accounts
VISIBLE_SECONDS = 15.0  # "within seconds": generous for a shared 2-core machine
OUTAGE_JOBS = 2
DLIO = sorted((REAL_LOGS / "dlio_logs").glob("*.darshan"))
DLIO_APP = "/home/snyder/software/dlio_benchmark/venv/bin/python3"  # their command line's first word


@pytest.fixture(scope="module")
def templates(slurm_cluster: SlurmCluster) -> list[bytes]:
    """Logs of the cluster's application whose writes recur every 600 s (period class 2)."""
    return periodic_logs(ALICE.pw_uid, str(slurm_cluster.application), 600.0, 4)


def script(cluster: SlurmCluster) -> str:
    return f"#!/bin/bash\n#SBATCH --job-name=ckpt\nsrun {cluster.application} -in in.ckpt\n"


def run_job(
    cluster: SlurmCluster, template: bytes, user=ALICE, name_as: str | None = None
) -> tuple[int, str]:
    """Submit the application as ``user``; its step writes ``template`` as its own log (the
    job's id and uid in its header; named with ``name_as``, the user's name by default)."""
    job, filtered = cluster.submit(script(cluster), uid=user.pw_uid)
    name = darshan_name(name_as or user.pw_name, "ckpt", job, "PID", datetime.now())
    cluster.stage(job, {name: relabelled(template, job, user.pw_uid)})
    return job, filtered


def stored_runs(cluster: SlurmCluster, job: int) -> list[dict]:
    with cluster.service.client() as client:
        answer = client.get(f"/v1/jobs/{job}")
    return answer.json()["runs"] if answer.status_code == 200 else []


def wait_visible(cluster: SlurmCluster, job: int) -> list[dict]:
    return wait_for(lambda: stored_runs(cluster, job), VISIBLE_SECONDS, f"job {job} in the store")


def lookup_runs(cluster: SlurmCluster, app: str | None = None) -> int:
    """The run count of alice's ``app`` (the cluster's application by default), as `mosaic
    lookup --server` tells it."""
    done = subprocess.run(
        [
            str(MOSAIC),
            "lookup",
            "--server",
            cluster.service.url,
            "--token-file",
            str(cluster.folder / "service" / "read-token"),
        ]
        + ["--uid", str(ALICE.pw_uid), "--app", app or str(cluster.application), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["profile"]["runs"]


def test_a_job_is_visible_and_the_next_submission_gets_its_class(slurm_cluster, templates):
    cluster = slurm_cluster
    first, filtered = run_job(cluster, templates[0])
    assert "period class" not in filtered  # nothing stored yet
    assert wait_visible(cluster, first)[0]["application"]["uid"] == ALICE.pw_uid
    assert cluster.wait_ended(first)["JobState"] == "COMPLETED"  # its step ran as alice and wrote
    assert lookup_runs(cluster) == 1
    # The second one through Slurm's own Lua: the comment holds the class; its log is named
    # with the numeric uid, as Darshan does when LOGNAME is unset.
    second, filtered = run_job(cluster, templates[1], name_as=str(ALICE.pw_uid))
    assert f"mosaic: {cluster.application} has I/O period class 2" in filtered, filtered
    # the whole comment (job() cuts a field at its first space): the class, and the application
    assert f" Comment=mosaic_period_class=2 mosaic_app={cluster.application} " in cluster.show(second)
    wait_visible(cluster, second)
    assert lookup_runs(cluster) == 2


def test_jobs_ended_while_the_service_was_down_are_recorded_once(slurm_cluster):
    """Real logs of tests/data (dlio's, each given its job's id and uid): OUTAGE_JOBS end while
    the service is stopped, one more after its restart: each recorded once."""
    cluster = slurm_cluster
    cluster.service.stop()
    try:
        down = [run_job(cluster, log.read_bytes())[0] for log in DLIO[:OUTAGE_JOBS]]
        for job in down:
            wait_for(
                lambda job=job: "kept in the spool" in "\n".join(cluster.epilog_lines(job)), 60, "spooled"
            )
    finally:
        cluster.service.start()
    pending = subprocess.run(
        [str(MOSAIC), "epilog", "status", "--spool", str(cluster.spool)], capture_output=True, text=True
    )
    assert pending.stdout.startswith(f"{OUTAGE_JOBS} pending"), pending
    after, _ = run_job(cluster, DLIO[OUTAGE_JOBS].read_bytes())  # its epilog drains the spool first
    wait_visible(cluster, after)
    assert [len(stored_runs(cluster, job)) for job in [*down, after]] == [1] * (OUTAGE_JOBS + 1)
    assert lookup_runs(cluster, DLIO_APP) == OUTAGE_JOBS + 1
    assert not any(cluster.spool.iterdir())


def test_a_planted_and_a_forged_log_are_refused_the_real_one_recorded(slurm_cluster, templates):
    """mallory's job writes a log claiming alice's next job id under mallory's uid (which
    used to block alice's), and plants one under alice's name pattern claiming her uid."""
    cluster = slurm_cluster
    mallory, _ = cluster.submit(script(cluster), uid=MALLORY.pw_uid)
    alice_next = mallory + 1
    now = datetime.now()
    forged = relabelled(templates[-1], alice_next, MALLORY.pw_uid)
    planted = relabelled(templates[-2], alice_next, ALICE.pw_uid)
    cluster.stage(
        mallory,
        {
            darshan_name(MALLORY.pw_name, "ckpt", mallory, "PID", now): forged,
            darshan_name(ALICE.pw_name, "ckpt", alice_next, "PID", now, 2): planted,
        },
    )
    said = wait_for(lambda: "\n".join(cluster.epilog_lines(mallory)), 60, "mallory's epilog")
    assert f"not posted: its header claims job {alice_next} of uid {MALLORY.pw_uid}" in said, said
    alice, _ = run_job(cluster, templates[-1])
    assert alice == alice_next
    runs = wait_visible(cluster, alice)
    refusal = f"not posted: owned by uid {MALLORY.pw_uid}, not by the job's user"
    wait_for(lambda: refusal in "\n".join(cluster.epilog_lines(alice)), 30, "the planted log's refusal")
    assert len(runs) == 1 and runs[0]["application"]["uid"] == ALICE.pw_uid
    assert not stored_runs(cluster, mallory)
