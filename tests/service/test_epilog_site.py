"""The epilog on sites unlike the Slurm fixture's: user names and uids longer than the 8
characters darshan-runtime keeps in a log's name, Slurm giving SLURM_JOB_UID without
SLURM_JOB_USER, an epilog user that is not root (SlurmUser=slurm: root here, without the
capabilities that let root read any file), and a setuid-collector site where every log is
the collector's and files planted for a job must not use up epilog_max_logs."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from mosaic.service.epilog_spool import keep, open_spool
from tests.service.conftest import epilog_post
from tests.service.test_epilog import (
    EPILOG,
    MALLORY,
    MOSAIC,
    ROOT_ONLY,
    day_folder,
    job_env,
    owned,
    run_epilog,
    runs,
)

ALEXANDER = 41004  # a user name of 9 characters
WIDE_UID = 1870400123  # an uid of 10 digits, as directory services give
COLLECTOR = 41005  # the uid a setuid Darshan collector writes every log as


def log_in(site: dict[str, str], name: str, data: bytes, uid: int, mode: int = 0o400) -> Path:
    """A log as darshan-runtime leaves it: ``uid``'s, mode 400 (440 with group-readable logs)."""
    path = day_folder(Path(site["DARSHAN_LOGDIR"])) / name
    path.write_bytes(data)
    owned(path, uid)
    path.chmod(mode)
    return path


@ROOT_ONLY
def test_long_user_names_and_uids_are_cut_as_darshan_cuts_them(server, site, log_factory):
    """alexander's logs are named alexande_...; uid 1870400123's 18704001_... (LOGNAME unset),
    and that job's epilog gets SLURM_JOB_UID without SLURM_JOB_USER."""
    named = log_in(
        site, "alexande_lmp_id9101-7_11-29-1-1_1.darshan", log_factory(job_id=9101, uid=ALEXANDER), ALEXANDER
    )
    done = run_epilog({**site, **job_env("9101", "alexander", ALEXANDER)})
    assert f"recorded {named.name}" in done.stdout, done.stdout
    numeric = log_in(
        site, "18704001_lmp_id9102-7_11-29-1-1_1.darshan", log_factory(job_id=9102, uid=WIDE_UID), WIDE_UID
    )
    done = run_epilog({**site, "SLURM_JOB_ID": "9102", "SLURM_JOB_UID": str(WIDE_UID)})
    assert f"recorded {numeric.name}" in done.stdout, done.stdout
    assert [run["application"]["uid"] for job in ("9101", "9102") for run in runs(server, job)] == [
        ALEXANDER,
        WIDE_UID,
    ]


@ROOT_ONLY
def test_an_epilog_user_that_may_not_read_the_logs_says_what_to_do(server, site, log_factory):
    """As SlurmUser=slurm would: a log of mode 400 cannot be read, and the message says so
    (it used to blame a link); once group-readable by the epilog's group, it is recorded."""
    log = log_in(site, "alice_lmp_id9103-7_11-29-1-1_1.darshan", log_factory(job_id=9103, uid=41001), 41001)
    env = {"MOSAIC_BIN": MOSAIC, **site, **job_env("9103", "alice", 41001)}
    no_override = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", "/bin/bash", str(EPILOG)]
    subprocess.run(no_override, env=env, check=True, timeout=60)
    said = Path(site["MOSAIC_EPILOG_LOG"]).read_text()
    assert (
        f"'{log.name}' not posted: the epilog's user (uid 0) may not read it: make Darshan's logs" in said
    ), said
    os.chown(log, 41001, os.getegid())  # darshan-runtime's --enable-group-readable-logs, setgid day folder
    log.chmod(0o440)
    subprocess.run(no_override, env=env, check=True, timeout=60)
    assert f"recorded {log.name}" in Path(site["MOSAIC_EPILOG_LOG"]).read_text()
    assert len(runs(server, "9103")) == 1


@ROOT_ONLY
def test_logs_planted_for_a_job_never_use_up_its_cap(server, site, log_factory, tmp_path):
    """Every log is the collector's: mallory's own processes, posing as alice's next job (her
    LOGNAME and SLURM_JOB_ID set by hand), leave more logs than epilog_max_logs named for it;
    their headers carry mallory's uid, so they are not posted, and alice's is."""
    config = tmp_path / "epilog.toml"
    config.write_text("epilog_max_logs = 2\n")
    for pid in (1, 2, 3):
        log_in(
            site,
            f"alice_lmp_id9104-{pid}_11-29-1-1_1.darshan",
            log_factory(job_id=9104, uid=MALLORY),
            COLLECTOR,
        )
    real = log_in(
        site, "alice_lmp_id9104-9_11-29-1-1_1.darshan", log_factory(job_id=9104, uid=41001), COLLECTOR
    )
    env = {**site, **job_env("9104", "alice", 41001), "MOSAIC_DARSHAN_UID": str(COLLECTOR)}
    done = epilog_post(config, env)
    assert done.stderr.count(f"not posted: its header claims job 9104 of uid {MALLORY}") == 3, done.stderr
    assert f"recorded {real.name}" in done.stderr and "epilog_max_logs" not in done.stderr
    assert [run["application"]["uid"] for run in runs(server, "9104")] == [41001]


def test_each_epilog_drains_a_bounded_share_of_the_spool(server, site, log_factory, tmp_path):
    """After an outage the spool holds more than epilog_max_logs: a job's epilog posts the
    oldest epilog_max_logs and leaves the rest to the next epilogs (or `mosaic epilog drain`)."""
    config = tmp_path / "epilog.toml"
    config.write_text("epilog_max_logs = 2\n")
    spool = open_spool(site["MOSAIC_SPOOL_DIR"])
    for k, job in enumerate(("9301", "9302", "9303")):
        entry = keep(spool, job, 41001, log_factory(job_id=int(job), uid=41001))
        os.utime(entry, (1e9 + k, 1e9 + k))  # spooled in this order
    env = {**site, **job_env("9399", "alice", 41001)}
    done = epilog_post(config, env)
    assert "1 spooled logs left for the next epilogs or `mosaic epilog drain`" in done.stderr, done.stderr
    assert [len(runs(server, job)) for job in ("9301", "9302", "9303")] == [1, 1, 0]
    assert [entry.name.split(".")[0] for entry in spool.iterdir()] == ["9303"]
    epilog_post(config, env)  # the next job's
    assert len(runs(server, "9303")) == 1 and not list(spool.iterdir())


@ROOT_ONLY
def test_a_full_spool_says_the_log_is_lost_and_leaves_no_part_of_it(site, log_factory, tmp_path):
    """The service is down and the spool's file system full (a 4 KiB tmpfs): each log is
    reported lost with the reason, the epilog still exits 0, and no partial entry remains."""
    spool = tmp_path / "full-spool"
    spool.mkdir(mode=0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k,mode=700", "infra-spool", str(spool)], check=True)
    try:
        for pid in (1, 2):
            log_in(
                site,
                f"alice_lmp_id9401-{pid}_11-29-1-1_1.darshan",
                log_factory(job_id=9401, uid=41001),
                41001,
            )
        with socket.socket() as closed:  # an address where nothing listens
            closed.bind(("127.0.0.1", 0))
            down = f"http://127.0.0.1:{closed.getsockname()[1]}"
        env = {**site, **job_env("9401", "alice", 41001), "MOSAIC_URL": down, "MOSAIC_SPOOL_DIR": str(spool)}
        done = run_epilog(env)
        assert done.returncode == 0
        said = done.stdout.splitlines()
        kept = [line for line in said if ".darshan kept in the spool: no answer from" in line]
        lost = [line for line in said if "the spool failed: [Errno 28] No space left on device" in line]
        assert len(kept) + len(lost) == 2 and lost, done.stdout  # the first may fit in 4 KiB
        assert all(f"lost: no answer from {down}" in line for line in lost)
        assert len(list(spool.iterdir())) == len(kept)  # no partial entry left
    finally:
        subprocess.run(["umount", str(spool)], check=True)
