"""The running registry on a real Slurm (mosaic_testing.slurm): the shipped cli_filter.lua
puts the application in the comment, cluster/slurm-prolog.sh (PrologSlurmctld) posts the
start, the epilog the end, and GET /v1/running follows: a plain job, an array, a cancelled
job, a job killed at its time limit, a job whose node dies, the service restarted while
jobs run, and the service down for a job's start and back before its end. Nothing is left
running after.

Jobs run a script that waits for a release file the test writes (MOSAIC_STAGE/release-JOB),
so each test says when its jobs end. The time-limit job is started first (Slurm's limits
are whole minutes and slurmctld looks at them every 30 s: it is killed 60 to 90 s after its
start) and checked last but one, while the other tests run beside it."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import time

import pytest

from mosaic_testing.slurm import TOKEN, WRITE_TOKEN, SlurmCluster, wait_for

pytestmark = pytest.mark.slow
NOBODY = 65534
APP = "/apps/sim"
VISIBLE_SECONDS = 20.0  # a post after Slurm's own step (prolog, epilog): generous on 2 shared cores
SCRIPT = f"""#!/bin/bash
#MOSAIC app={APP}
release="$MOSAIC_STAGE/release-$SLURM_JOB_ID"
for _ in $(seq 3000); do [ -e "$release" ] && exit 0; sleep 0.1; done
"""


def submit(cluster: SlurmCluster, *options: str) -> int:
    job, _ = cluster.submit(SCRIPT, uid=NOBODY, options=("--no-requeue", "--oversubscribe", *options))
    return job


def release(cluster: SlurmCluster, *jobs: int) -> None:
    for job in jobs:
        (cluster.folder / "stage" / f"release-{job}").touch()


def registry(cluster: SlurmCluster, token: str = WRITE_TOKEN, **params: int) -> dict:
    """GET /v1/running (the write token is the operator's)."""
    with cluster.service.client() as client:
        answer = client.get("/v1/running", params=params, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def listed(cluster: SlurmCluster) -> dict[int, dict]:
    return {int(job["job_id"]): job for job in registry(cluster)["jobs"]}


def wait_listed(cluster: SlurmCluster, *jobs: int) -> dict[int, dict]:
    def shown() -> dict[int, dict] | None:
        found = listed(cluster)
        return found if all(job in found for job in jobs) else None

    return wait_for(shown, VISIBLE_SECONDS, f"jobs {jobs} in /v1/running", step=0.1)


def wait_gone(cluster: SlurmCluster, *jobs: int) -> None:
    wait_for(
        lambda: not set(jobs) & set(listed(cluster)), VISIBLE_SECONDS, f"jobs {jobs} out of /v1/running", 0.1
    )


def state(cluster: SlurmCluster, job: int) -> str:
    return cluster.job(job).get("JobState", "")


def wait_running(cluster: SlurmCluster, job: int) -> None:
    wait_for(lambda: state(cluster, job) == "RUNNING", 60, f"job {job} running", step=0.1)


def rows(cluster: SlurmCluster) -> dict[int, tuple[str, float | None]]:
    """The registry's rows as the store holds them: {job: (state, ended_epoch)}."""
    db = sqlite3.connect(cluster.service.folder / "store.sqlite")
    try:
        return {
            int(j): (s, e) for j, s, e in db.execute("SELECT job_id, state, ended_epoch FROM running_jobs")
        }
    finally:
        db.close()


@pytest.fixture(scope="module")
def timed_out(slurm_cluster):
    """A job of a one-minute limit that never ends by itself, submitted before the others."""
    job = submit(slurm_cluster, "--time=1")
    wait_running(slurm_cluster, job)
    return job, time.monotonic()


def test_a_plain_job_is_listed_while_it_runs(slurm_cluster, timed_out):
    cluster = slurm_cluster
    job = submit(cluster, "--time=5")
    assert cluster.job(job)["Comment"] == f"mosaic_app={APP}"
    wait_running(cluster, job)
    shown = wait_listed(cluster, job)[job]
    assert (shown["uid"], shown["application"], shown["time_limit"], shown["tasks"]) == (
        NOBODY,
        APP,
        300.0,
        1,
    )
    assert shown["nodes"] == cluster.job(job)["NodeList"] and shown["unlimited"] is False
    assert abs(shown["start_epoch"] - time.time()) < 60
    own = registry(cluster, TOKEN, uid=NOBODY)  # the read token naming the job's user
    assert job in {int(j["job_id"]) for j in own["jobs"]}
    others = registry(cluster, TOKEN, uid=0)
    assert others["jobs"] == [] and others["jobs_running"] >= 2 and APP not in str(others)
    assert all(set(other) == {"job", "tasks", "share", "file_systems"} for other in others["others"])
    release(cluster, job)
    assert cluster.wait_ended(job)["JobState"] == "COMPLETED"
    wait_gone(cluster, job)
    assert rows(cluster)[job][0] == "ended"


def test_a_job_that_bypassed_the_filter_has_no_application(slurm_cluster, timed_out):
    cluster = slurm_cluster
    env = {**cluster.env, "SLURM_CONF": str(cluster.folder / "etc-plain" / "slurm.conf")}
    (cluster.folder / "etc-plain").mkdir(exist_ok=True)
    (cluster.folder / "etc-plain" / "slurm.conf").write_text(
        cluster.conf.read_text().replace("CliFilterPlugins=cli_filter/lua\n", "")
    )
    script = cluster.folder / "stage" / "bypass.sh"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [
            "sbatch",
            "--parsable",
            f"--uid={NOBODY}",
            "--no-requeue",
            "--oversubscribe",
            "-o",
            "/dev/null",
            str(script),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    job = int(done.stdout.strip())
    shown = wait_listed(cluster, job)[job]
    assert shown["application"] is None and shown["group_key"] is None
    assert registry(cluster)["without_application"] >= 1
    release(cluster, job)
    wait_gone(cluster, job)


def test_an_array_s_tasks_are_listed_each(slurm_cluster, timed_out):
    cluster = slurm_cluster
    array = submit(cluster, "--array=0-2")

    def tasks() -> list[int] | None:
        shown = subprocess.run(
            ["squeue", "-h", "-r", "-j", str(array), "-t", "R", "-o", "%A"],
            env=cluster.env,
            capture_output=True,
            text=True,
        ).stdout.split()
        return [int(job) for job in shown] if len(shown) == 3 else None

    ids = wait_for(tasks, 60, "the array's 3 tasks running", step=0.2)
    assert array in ids  # the first task keeps the array's id
    found = wait_listed(cluster, *ids)
    assert all(found[job]["application"] == APP for job in ids)
    release(cluster, *ids)
    wait_gone(cluster, *ids)
    assert all(rows(cluster)[job][0] == "ended" for job in ids)


def test_a_cancelled_job_leaves(slurm_cluster, timed_out):
    cluster = slurm_cluster
    job = submit(cluster)
    wait_listed(cluster, job)
    subprocess.run(["scancel", str(job)], env=cluster.env, check=True)
    assert cluster.wait_ended(job)["JobState"] == "CANCELLED"
    wait_gone(cluster, job)


def test_the_service_restarted_while_jobs_run(slurm_cluster, timed_out):
    cluster = slurm_cluster
    job = submit(cluster)
    wait_listed(cluster, job)
    cluster.service.stop()
    cluster.service.start()
    assert job in listed(cluster)  # from the store
    release(cluster, job)
    wait_gone(cluster, job)


def test_the_service_down_for_a_start_and_back_before_the_end(slurm_cluster, timed_out):
    cluster = slurm_cluster
    cluster.service.stop()
    try:
        job = submit(cluster)
        wait_running(cluster, job)
        wait_for(
            lambda: f"job {job}: start kept in the spool" in cluster.prolog_log.read_text(),
            30,
            "the start spooled",
        )
    finally:
        cluster.service.start()
    assert job not in listed(cluster)  # still in the spool
    nudge = submit(cluster)  # the next job's prolog posts its own start, then the spooled ones
    found = wait_listed(cluster, job, nudge)
    assert found[job]["application"] == APP and found[job]["time_limit"] is None  # partition: UNLIMITED
    release(cluster, job, nudge)
    wait_gone(cluster, job, nudge)
    assert not list((cluster.spool.parent / (cluster.spool.name + ".running")).iterdir())


def test_a_job_killed_at_its_time_limit_leaves(slurm_cluster, timed_out):
    cluster = slurm_cluster
    job, started = timed_out
    assert listed(cluster)[job]["time_limit"] == 60.0
    ended = cluster.wait_ended(job, seconds=150)
    print(f"time-limit job killed {time.monotonic() - started:.0f} s after it was seen running")
    assert ended["JobState"] == "TIMEOUT"
    wait_gone(cluster, job)


def test_a_job_whose_node_dies_leaves(slurm_cluster):
    """slurmd killed, then its node marked down as a site's node health check does: the job
    ends NODE_FAIL, EpilogSlurmctld runs on the controller, and the job leaves the registry.
    Slurm's own detection (SlurmdTimeout, then up to two ping rounds) took 28-30 s in eight
    trials here but over 60 s in two full runs of the suite; what mosaic sees of a dead node
    is the same either way, so the test does not wait for Slurm's pings."""
    cluster = slurm_cluster
    job = submit(cluster)
    wait_listed(cluster, job)
    slurmd = cluster.daemons["slurmd"]
    os.killpg(slurmd.pid, signal.SIGKILL)
    slurmd.wait()
    began = time.monotonic()
    try:
        down = ["scontrol", "update", f"NodeName={socket.gethostname()}", "State=DOWN", "Reason=slurmd died"]
        subprocess.run(down, env=cluster.env, check=True, capture_output=True)
        ended = cluster.wait_ended(job, seconds=30)
        assert ended["JobState"] == "NODE_FAIL", ended
        wait_gone(cluster, job)
        print(f"the job out of the registry {time.monotonic() - began:.1f} s after its node was marked down")
    finally:
        release(cluster, job)  # its step outlived slurmd: let it end
        cluster.launch("slurmd", ["slurmd", "-D", "-f", str(cluster.conf)])
        wait_for(cluster.node_idle, 90, "the node back", step=0.5)


def test_nothing_is_left_running(slurm_cluster):
    cluster = slurm_cluster
    assert cluster.queued() == []
    assert registry(cluster)["jobs_running"] == 0
    wait_for(lambda: not cluster.stray_steps(), 30, "no slurmstepd left", step=0.2)
