"""cluster/mosaic-run.sbatch on the real Slurm of mosaic_testing.slurm: one job of two tasks
on this one machine (two dispynodes, 127.0.0.1 and 127.0.0.2, a port each) gives the
results of a local `mosaic run --workers 2`, the nodes do its work, and nothing of the job is
left once it ends (no dispynode, no node folder)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import psutil
import pytest

from mosaic.corpus.node import write_secret
from mosaic_testing.outputs import comparable
from mosaic_testing.slurm import MOSAIC, REPO, UNFINISHED, SlurmCluster, free_port

pytestmark = pytest.mark.slow
LOGS = 300  # a small corpus: the job's fixed costs (nodes starting, joining) dominate anyway
JOB_SECONDS = 300.0


def node_processes(folder: Path) -> list[psutil.Process]:
    """The dispynodes (mosaic.corpus.node) whose node folder is under `folder`."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        command = process.info["cmdline"] or []
        if "mosaic.corpus.node" in command and any(part.startswith(f"{folder}/") for part in command):
            found.append(process)
    return found


def working_addresses(folder: Path) -> set[str]:
    """The `-i` addresses of the dispynodes under `folder` that run a job process now."""
    working = set()
    for process in node_processes(folder):
        try:
            command, children = process.cmdline(), process.children()
        except psutil.NoSuchProcess:
            continue
        if children and "-i" in command:
            working.add(command[command.index("-i") + 1])
    return working


def without_node_settings(outputs: dict) -> dict:
    """`outputs` less the settings that say how the run reached its nodes (the job's port and
    secret file), which a local run does not use."""
    for name in ("dispy_port", "node_secret_file"):
        outputs["summary"]["config"].pop(name)
    return outputs


def test_one_job_of_two_nodes_on_one_machine_gives_the_local_results(slurm_cluster: SlurmCluster, tmp_path):
    corpus, reference, out, tmp = (tmp_path / name for name in ("corpus", "reference", "out", "tmp"))
    subprocess.run(
        [str(MOSAIC), "synth", "year", str(corpus), "--count", str(LOGS), "--seed", "7"], check=True
    )
    tmp.mkdir(mode=0o700)
    write_secret(str(tmp_path / "node-secret"))
    started = time.monotonic()
    local = [str(MOSAIC), "run", str(corpus), "--out", str(reference), "--workers", "2", "--quiet"]
    subprocess.run(local, check=True, timeout=JOB_SECONDS)
    local_seconds = time.monotonic() - started

    port = free_port()
    settings = f"MOSAIC_NODE_SECRET_FILE={tmp_path / 'node-secret'},MOSAIC_PORT={port},TMPDIR={tmp}"
    started = time.monotonic()
    job, _ = slurm_cluster.submit(
        (REPO / "cluster" / "mosaic-run.sbatch").read_text(),
        str(corpus),
        str(out),
        uid=0,
        chdir=str(REPO),
        output=str(tmp_path / "job.out"),
        options=("--nodes=1", "--ntasks-per-node=2", f"--export=ALL,{settings}"),
    )
    working: set[str] = set()
    deadline = started + JOB_SECONDS
    while slurm_cluster.job(job).get("JobState") in UNFINISHED:
        assert time.monotonic() < deadline, f"job {job} still running after {JOB_SECONDS} s"
        working |= working_addresses(tmp)
        time.sleep(0.05)
    job_seconds = time.monotonic() - started
    said = (tmp_path / "job.out").read_text()

    assert slurm_cluster.job(job)["JobState"] == "COMPLETED", said
    listed = next(line for line in said.splitlines() if line.startswith("mosaic-run.sbatch: nodes "))
    assert sorted(listed.split()[-1].split(",")) == [f"127.0.0.1:{port}", f"127.0.0.2:{port + 2}"]
    # Job processes were seen on the job's nodes. Not necessarily on both: dispy sends the few
    # batches of 300 logs to whichever node has joined (one of 5 full-suite runs on
    # 2026-11-29 saw only 127.0.0.2 at work), and the 50 ms sampling can miss a short batch.
    assert working and working <= {"127.0.0.1", "127.0.0.2"}
    assert without_node_settings(comparable(out)) == without_node_settings(comparable(reference))
    assert node_processes(tmp) == []
    assert list(tmp.iterdir()) == []  # node folders and the job's node list removed
    print(
        f"\nmosaic-run.sbatch, {LOGS} logs: job {job_seconds:.1f} s (2 tasks), "
        f"local run {local_seconds:.1f} s"
    )
