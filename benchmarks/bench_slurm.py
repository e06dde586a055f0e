"""The scheduler path on a real Slurm: how soon a finished job is in the store, and what the
submission filter adds to ``sbatch``.

    .venv/bin/python -m benchmarks.bench_slurm [--jobs 8] [--submissions 30] [--prologs 200]

Starts the real Slurm of the tests (tests/support/mosaic_testing/slurm.py: munged,
slurmctld, slurmd on this host with the shipped epilog and cli_filter.lua, and `mosaic
serve`; needs root and Debian's slurm-wlm), then, side by side in one run:

* job end -> visible: ``--jobs`` jobs whose step writes a Darshan log as darshan-runtime
  does; from the moment the log appears under its final name (the step's last act) to the
  first ``GET /v1/jobs/ID`` that finds it, polled every 10 ms. It holds Slurm ending the
  job, slurmctld starting ``EpilogSlurmctld``, `mosaic epilog post` (a Python start),
  the post and its categorization.
* the prolog (cluster/slurm-prolog.sh, PrologSlurmctld): what it adds to a job's start,
  its p50/p99/max over ``--prologs`` runs of the shipped script through the site's
  wrapper, with Slurm's variables and a real held job for its squeue, on a loaded
  controller (two threads submitting and listing jobs meanwhile); and as slurmctld ran it
  for ``--prolog-jobs`` real jobs started one after the other (a timing wrapper around it:
  its own ~2 ms included). The machine's load average is printed beside: on a shared
  machine, read the prolog against the Python start measured in the same run.
  Beside it, what a Python prolog would start with: ``mosaic epilog --help``.
* sbatch with the filter, and without (a copy of slurm.conf without
  ``CliFilterPlugins``): ``--submissions`` held submissions each, alternated; the filter's
  cost is the difference of the medians (one curl lookup of a known application).

The machine is shared: read the two sbatch columns against each other, not alone.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))  # the tests' Slurm

from mosaic_testing.joblogs import darshan_name, periodic_logs, relabelled  # noqa: E402
from mosaic_testing.slurm import MOSAIC, SlurmCluster, missing, start_cluster, wait_for  # noqa: E402

UID = 65534  # nobody: jobs run as a real account


def job_end_to_visible(cluster: SlurmCluster, jobs: int) -> list[float]:
    templates = periodic_logs(UID, str(cluster.application), 600.0, jobs)
    script = f"#!/bin/bash\nsrun {cluster.application}\n"
    delays = []
    for template in templates:
        job, _ = cluster.submit(script, uid=UID)
        name = darshan_name("nobody", "ckpt", job, "PID", datetime.now())
        cluster.stage(job, {name: relabelled(template, job, UID)})
        day = cluster.logdir / datetime.now().strftime("%Y/%-m/%-d")
        final = name.split("-PID_")[1]
        wait_for(lambda: any(p.name.endswith(final) for p in day.iterdir()), 60, "the log", step=0.005)
        ended = time.monotonic()
        with cluster.service.client() as client:
            wait_for(lambda: client.get(f"/v1/jobs/{job}").status_code == 200, 60, "the job", step=0.01)
        delays.append(time.monotonic() - ended)
    return delays


def sbatch_seconds(cluster: SlurmCluster, submissions: int) -> tuple[list[float], list[float]]:
    """Held submissions with and without the filter, alternated; each cancelled after."""
    plain = cluster.folder / "etc-plain"
    plain.mkdir(exist_ok=True)
    conf = cluster.conf.read_text().replace("CliFilterPlugins=cli_filter/lua\n", "")
    (plain / "slurm.conf").write_text(conf)
    script = cluster.folder / "stage" / "held.sh"
    script.write_text(f"#!/bin/bash\nsrun {cluster.application}\n")
    times: dict[str, list[float]] = {"filter": [], "plain": []}
    jobs = []
    for _ in range(submissions):
        for kind, conf_path in (("filter", cluster.conf), ("plain", plain / "slurm.conf")):
            env = {**cluster.env, "SLURM_CONF": str(conf_path)}
            started = time.perf_counter()
            done = subprocess.run(
                ["sbatch", "--parsable", "--hold", f"--uid={UID}", "-o", "/dev/null", str(script)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            times[kind].append(time.perf_counter() - started)
            jobs.append(done.stdout.strip())
    subprocess.run(["scancel", *jobs], env=cluster.env, check=True)
    return times["filter"], times["plain"]


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (p99 of 200 values: the 198th smallest)."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered), math.ceil(share * len(ordered))) - 1)]


def held_jobs(cluster: SlurmCluster, count: int) -> list[str]:
    script = cluster.folder / "stage" / "held.sh"
    script.write_text("#!/bin/bash\n#MOSAIC app=/apps/bench\ntrue\n")
    jobs = []
    for _ in range(count):
        done = subprocess.run(
            ["sbatch", "--parsable", "--hold", f"--uid={UID}", "--time=30", "-o", "/dev/null", str(script)],
            env=cluster.env,
            capture_output=True,
            text=True,
            check=True,
        )
        jobs.append(done.stdout.strip())
    return jobs


def load_controller(cluster: SlurmCluster, stop: threading.Event) -> list[threading.Thread]:
    """Two threads keeping slurmctld busy: held submissions (cancelled after), and squeue."""
    submitted: list[str] = []

    def submitting() -> None:
        while not stop.is_set():
            submitted.extend(held_jobs(cluster, 1))
        subprocess.run(["scancel", *submitted], env=cluster.env, capture_output=True)

    def listing() -> None:
        while not stop.is_set():
            subprocess.run(["squeue", "-a"], env=cluster.env, capture_output=True)

    threads = [threading.Thread(target=submitting), threading.Thread(target=listing)]
    for thread in threads:
        thread.start()
    return threads


def prolog_seconds(cluster: SlurmCluster, runs: int) -> list[float]:
    """The shipped prolog through the site's wrapper, as slurmctld starts it (Slurm's
    variables only), for ``runs`` real held jobs, on a loaded controller."""
    jobs = held_jobs(cluster, runs)
    wrapper = str(cluster.folder / "etc" / "mosaic-prolog.sh")
    host = cluster.job(int(jobs[0])).get("BatchHost") or os.uname().nodename
    stop = threading.Event()
    threads = load_controller(cluster, stop)
    times = []
    try:
        for job in jobs:
            env = {
                "SLURM_JOB_ID": job,
                "SLURM_JOB_UID": str(UID),
                "SLURM_JOB_COMMENT": "mosaic_period_class=2 mosaic_app=/apps/bench",
                "SLURM_JOB_NODELIST": host,
            }
            started = time.perf_counter()
            subprocess.run([wrapper], env=env, check=True)
            times.append(time.perf_counter() - started)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        subprocess.run(["scancel", *jobs], env=cluster.env, capture_output=True)
    with cluster.service.client() as client:  # the write token: the operator's view
        client.headers["Authorization"] = (
            f"Bearer {(cluster.folder / 'etc' / 'write-token').read_text().strip()}"
        )
        shown = {job["job_id"] for job in client.get("/v1/running").json()["jobs"]}
    assert set(jobs) <= shown, "a prolog's start is missing from /v1/running"
    return times


def prolog_in_slurm(cluster: SlurmCluster, jobs: int) -> list[float]:
    """The prolog's time as slurmctld ran it for ``jobs`` real jobs: a timing wrapper (``date
    +%s%N`` before and after) around the site's wrapper."""
    stamps = cluster.folder / "log" / "prolog-times"
    wrapper = cluster.folder / "etc" / "mosaic-prolog.sh"
    real = wrapper.with_name("mosaic-prolog-real.sh")
    wrapper.rename(real)
    wrapper.write_text(
        f"#!/bin/sh\nbegan=$(date +%s%N)\n{real}\n"
        f"echo $SLURM_JOB_ID $began $(date +%s%N) >>{stamps}\nexit 0\n"
    )
    wrapper.chmod(0o755)
    # Each job waits for its release (so no epilog runs beside the next prologs), submitted
    # once the one before runs.
    release = cluster.folder / "stage" / "release"
    script = f"#!/bin/bash\n#MOSAIC app=/apps/bench\nwhile [ ! -e {release} ]; do sleep 0.1; done\n"
    ids = []
    for _ in range(jobs):
        job = cluster.submit(script, uid=UID, options=("--oversubscribe",))[0]
        wait_for(lambda job=job: cluster.job(job).get("JobState") == "RUNNING", 60, "the job running")
        ids.append(job)
    release.touch()
    for job in ids:
        cluster.wait_ended(job, 300)
    lines = [line.split() for line in stamps.read_text().splitlines()]
    return [(int(end) - int(began)) / 1e9 for _, began, end in lines]


def python_start_seconds(runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([str(MOSAIC), "epilog", "--help"], capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def show(what: str, times: list[float]) -> None:
    print(
        f"{what} ({len(times)}): p50 {statistics.median(times) * 1e3:.0f} ms, "
        f"p99 {percentile(times, 0.99) * 1e3:.0f} ms, max {max(times) * 1e3:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--submissions", type=int, default=30)
    parser.add_argument("--prologs", type=int, default=200)
    parser.add_argument("--prolog-jobs", type=int, default=15)  # at most the node's shared slots (16)
    args = parser.parse_args()
    why = missing()
    if why:
        print(f"skipped: {why}")
        return
    cluster = start_cluster("mosaic-bench-slurm-")
    try:
        # a first run, so the application is known to the filter's lookup
        delays = job_end_to_visible(cluster, args.jobs)
        with_filter, plain = sbatch_seconds(cluster, args.submissions)
        prologs = prolog_seconds(cluster, args.prologs)
        show("prolog, a loaded controller", prologs)
        in_slurm = prolog_in_slurm(cluster, args.prolog_jobs)
        python = python_start_seconds()
    finally:
        cluster.stop()
        shutil.rmtree(cluster.folder, ignore_errors=True)
    print(f"job end -> visible ({len(delays)} jobs): median {statistics.median(delays):.2f} s, ", end="")
    print(f"min {min(delays):.2f} s, max {max(delays):.2f} s")
    filtered, bare = statistics.median(with_filter) * 1e3, statistics.median(plain) * 1e3
    print(
        f"sbatch ({len(plain)} each, median): with the filter {filtered:.0f} ms, without {bare:.0f} ms, ",
        end="",
    )
    print(f"the filter adds {filtered - bare:.0f} ms")
    show("prolog, a loaded controller", prologs)
    show("prolog as slurmctld ran it", in_slurm)
    print(f"a Python prolog's start alone (mosaic epilog --help, median): {python * 1e3:.0f} ms")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (1 min), on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
