"""The scheduler path on a real Slurm: how soon a finished job is in the store, and what the
submission filter adds to ``sbatch``.

    .venv/bin/python -m benchmarks.bench_slurm [--jobs 8] [--submissions 30]

Starts the real Slurm of the tests (tests/support/mosaic_testing/slurm.py: munged,
slurmctld, slurmd on this host with the shipped epilog and cli_filter.lua, and `mosaic
serve`; needs root and Debian's slurm-wlm), then, side by side in one run:

* job end -> visible: ``--jobs`` jobs whose step writes a Darshan log as darshan-runtime
  does; from the moment the log appears under its final name (the step's last act) to the
  first ``GET /v1/jobs/ID`` that finds it, polled every 10 ms. It holds Slurm ending the
  job, slurmctld starting ``EpilogSlurmctld``, `mosaic epilog post` (a Python start),
  the post and its categorization.
* sbatch with the filter, and without (a copy of slurm.conf without
  ``CliFilterPlugins``): ``--submissions`` held submissions each, alternated; the filter's
  cost is the difference of the medians (one curl lookup of a known application).

The machine is shared: read the two sbatch columns against each other, not alone.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))  # the tests' Slurm

from mosaic_testing.joblogs import darshan_name, periodic_logs, relabelled  # noqa: E402
from mosaic_testing.slurm import SlurmCluster, missing, start_cluster, wait_for  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--submissions", type=int, default=30)
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


if __name__ == "__main__":
    main()
