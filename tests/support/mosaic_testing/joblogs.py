"""Darshan logs of a chosen job and user, named as darshan-runtime names them: what the
scheduler path (cluster/slurm-epilog.sh, cluster/cli_filter.lua) sees on a cluster."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import numpy as np

from mosaic.config import Config
from mosaic.darshan.reader import read_log
from mosaic.darshan.writer import write_log
from mosaic.synth.corpus import Identity, generate_runs
from mosaic.synth.scenarios import Periodic, Scenario


def periodic_logs(uid: int, app: str, period: float, runs: int) -> list[bytes]:
    """Logs of one group whose writes recur every ``period`` seconds (the synth generator)."""
    scenario = Scenario(
        "profile_checkpoints",
        ranks=4,
        run_time=None,
        periodic=(Periodic("write", period, 0.1, 2e9, 10, shared=True),),
        runs=runs,
    )
    rng = np.random.default_rng(uid)
    made = generate_runs(
        scenario, rng, Identity(uid, f"u{uid}", app), "ckpt", 1_600_000_000, 10 * uid, Config()
    )
    return [run.data for run in made]


def relabelled(data: bytes, job_id: int, uid: int) -> bytes:
    """The log ``data`` (a real one of tests/data, say) as job ``job_id`` of ``uid`` wrote it:
    the job record's two fields changed, every record kept, rewritten in its own format."""
    log = read_log(data)
    job = dataclasses.replace(log.job, uid=uid, job_id=job_id)
    return write_log(dataclasses.replace(log, job=job), log.job.version)


def darshan_name(user: str, exe: str, job_id: int, pid: int | str, when: datetime, n: int = 1) -> str:
    """Darshan 3.3.1+'s name: USER_EXE_idJOB-PID_MONTH-DAY-SECONDS-HASH_N.darshan (USER is the
    numeric uid when LOGNAME is unset; the hash part is any number)."""
    seconds = when.hour * 3600 + when.minute * 60 + when.second
    return f"{user}_{exe}_id{job_id}-{pid}_{when.month}-{when.day}-{seconds}-{job_id * 7919}_{n}.darshan"
