"""A real Slurm on this one host, set up as cluster/README.md tells a site: munged,
slurmctld and slurmd (proctrack/linuxproc, task/none: no cgroups), the shipped
cluster/slurm-epilog.sh as EpilogSlurmctld through a site wrapper, cluster/cli_filter.lua as
the cli_filter/lua plugin's script, and a `mosaic serve` on loopback with a read and a write
token. Everything lives in one private folder (ports chosen at run time); :meth:`stop`
kills every daemon it started, whatever state the tests left.

Jobs run an "application" (``bin/ckpt``) that waits for the logs the test stages for its
job (:meth:`stage`: a log's header must carry the job id, known once submitted), then does
what darshan-runtime does at the end of a process: each log (``PID`` in its name becomes
the step's process id) is written into ``DARSHAN_LOGDIR/YEAR/MONTH/DAY`` as
``NAME.darshan_partial``, then renamed ``NAME.darshan``; the file is the job user's, as
Darshan's would be.

Needs root (slurmd starts jobs as their users) and Debian's slurm-wlm and munge.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from mosaic_testing.ports import free_port

REPO = Path(__file__).resolve().parents[3]  # tests/support/mosaic_testing/slurm.py
MOSAIC = Path(sys.executable).with_name("mosaic")
DAEMONS = ("munged", "slurmctld", "slurmd")
START_SECONDS = 60.0
# Jobs submitted with --oversubscribe share a CPU this many at once (jobs that wait side by
# side: tests/slurm/test_running.py); the others keep theirs.
SHARED_JOBS = 8
# A job's states before its end (CONFIGURING: while its PrologSlurmctld runs).
UNFINISHED = (None, "PENDING", "CONFIGURING", "RUNNING", "COMPLETING")
SLURMD_TIMEOUT = 10  # seconds before Slurm calls a silent slurmd's node down (Slurm's default: 300)
TOKEN, WRITE_TOKEN = "read-token-of-the-slurm-tests", "write-token-of-the-slurm-tests"
APPLICATION = """#!/bin/bash
# Runs until the test has staged its logs (at most a minute), then does what darshan-runtime
# does at the end of a process: each log, PID in its name made this process's id, written
# as NAME.darshan_partial in the day's folder, then renamed NAME.darshan.
set -eu
stage="$MOSAIC_STAGE/$SLURM_JOB_ID"
for _ in $(seq 1200); do [ -e "$stage/.ready" ] && break; sleep 0.05; done
day="$DARSHAN_LOGDIR/$(date +%Y/%-m/%-d)"
for staged in "$stage"/*; do
    name=$(basename "$staged")
    name=${name//PID/$$}
    cp "$staged" "$day/${name}_partial"
    mv "$day/${name}_partial" "$day/$name"
done
"""


def missing() -> str | None:
    """Why this host cannot run the cluster (None when it can)."""
    if os.geteuid() != 0:
        return "a Slurm of its own needs root (slurmd starts jobs as their users)"
    absent = [name for name in (*DAEMONS, "sbatch", "scontrol") if shutil.which(name, path=SBIN_PATH) is None]
    if absent:
        return (
            f"{', '.join(absent)} not installed (`make slurm` installs Debian's slurm-wlm and munge as root)"
        )
    return None


# The code under test (a worktree's, not the venv's editable install) for the epilog too.
THIS_TREE = f" PYTHONPATH={os.environ['PYTHONPATH']}" if os.environ.get("PYTHONPATH") else ""
SBIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def wait_for(check, seconds: float, what: str, step: float = 0.05):  # type: ignore[no-untyped-def]
    """``check()``'s first true value, polled; TimeoutError naming ``what`` past ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(step)
    raise TimeoutError(f"{what} not within {seconds} s")


@dataclass
class Service:
    """`mosaic serve` on a fixed loopback port (kept across a restart) and store."""

    folder: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, wait: bool = True) -> None:
        args = [
            str(MOSAIC),
            "serve",
            "--store",
            str(self.folder / "store.sqlite"),
            "--create",
            "--port",
            str(self.port),
        ]
        args += ["--workers", "1", "--token-file", str(self.folder / "read-token")]
        args += ["--write-token-file", str(self.folder / "write-token")]
        with open(self.folder / "serve.log", "ab") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        if wait:
            wait_for(self.healthy, START_SECONDS, "mosaic serve")

    def healthy(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError((self.folder / "serve.log").read_text())
        try:
            return httpx.get(self.url + "/healthz").status_code == 200
        except httpx.TransportError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)


@dataclass
class SlurmCluster:
    """The cluster's folders, its service and its daemons (see the module docstring)."""

    folder: Path
    service: Service
    daemons: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.folder / "etc" / "slurm.conf"

    @property
    def logdir(self) -> Path:
        return self.folder / "darshan"

    @property
    def application(self) -> Path:
        return self.folder / "bin" / "ckpt"

    @property
    def epilog_log(self) -> Path:
        return self.folder / "log" / "mosaic-epilog.log"

    @property
    def spool(self) -> Path:
        return self.folder / "spool" / "mosaic-epilog"

    @property
    def env(self) -> dict[str, str]:
        """A login node's environment: Slurm's configuration, the site's profile.d for the
        filter (read token), and what jobs inherit (Darshan's folder, the staged logs)."""
        return {
            "PATH": SBIN_PATH,
            "SLURM_CONF": str(self.conf),
            "MOSAIC_URL": self.service.url,
            "MOSAIC_TOKEN_FILE": str(self.folder / "etc" / "read-token"),
            "DARSHAN_LOGDIR": str(self.logdir),
            "MOSAIC_STAGE": str(self.folder / "stage"),
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
        }

    # ----- setup -----

    def start(self) -> None:
        for name in ("etc", "bin", "darshan", "stage", "log", "run", "state", "slurmd", "munge", "spool"):
            (self.folder / name).mkdir(mode=0o700 if name in ("state", "munge", "spool") else 0o755)
        self.write_files()
        self.make_day_folders()
        self.service.start(wait=False)  # it takes longest: started first, awaited last
        self.launch("munged", ["munged", "--foreground", "--force", *self.munge_options()])
        wait_for((self.folder / "munge" / "socket").exists, START_SECONDS, "munged")
        self.launch("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
        self.launch("slurmd", ["slurmd", "-D", "-f", str(self.conf)])
        wait_for(self.node_idle, START_SECONDS, "slurmd registered and idle", step=0.2)
        wait_for(self.service.healthy, START_SECONDS, "mosaic serve")

    def munge_options(self) -> list[str]:
        munge = self.folder / "munge"
        return [
            f"--key-file={munge / 'key'}",
            f"--socket={munge / 'socket'}",
            f"--pid-file={munge / 'pid'}",
            f"--seed-file={munge / 'seed'}",
            f"--log-file={munge / 'log'}",
        ]

    def write_files(self) -> None:
        etc = self.folder / "etc"
        key = self.folder / "munge" / "key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        (self.folder / "munge").chmod(0o711)  # the socket is every user's way in
        for path, text, mode in [
            (self.service.folder / "read-token", TOKEN, 0o600),
            (self.service.folder / "write-token", WRITE_TOKEN, 0o600),
            (etc / "read-token", TOKEN, 0o644),  # users read it (cluster/README.md)
            (etc / "write-token", WRITE_TOKEN, 0o600),  # the epilog's, root's only
            (etc / "slurm.conf", self.slurm_conf(), 0o644),
            (etc / "mosaic-epilog.sh", self.epilog_wrapper(), 0o755),
            (etc / "mosaic-prolog.sh", self.prolog_wrapper(), 0o755),
            (self.application, APPLICATION, 0o755),
        ]:
            path.write_text(text + "\n")
            path.chmod(mode)
        shutil.copy(REPO / "cluster" / "cli_filter.lua", etc / "cli_filter.lua")

    def slurm_conf(self) -> str:
        f = self.folder
        host = socket.gethostname()
        ctld_port = free_port()
        slurmd_port = free_port()
        while slurmd_port == ctld_port:
            slurmd_port = free_port()
        return f"""ClusterName=mosaictest
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
AuthInfo=socket={f / "munge" / "socket"}
CredType=cred/munge
StateSaveLocation={f / "state"}
SlurmdSpoolDir={f / "slurmd"}
SlurmctldPidFile={f / "run" / "slurmctld.pid"}
SlurmdPidFile={f / "run" / "slurmd.pid"}
SlurmctldLogFile={f / "log" / "slurmctld.log"}
SlurmdLogFile={f / "log" / "slurmd.log"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
KillWait=2
OverTimeLimit=0
SlurmdTimeout={SLURMD_TIMEOUT}
EpilogSlurmctld={f / "etc" / "mosaic-epilog.sh"}
PrologSlurmctld={f / "etc" / "mosaic-prolog.sh"}
CliFilterPlugins=cli_filter/lua
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES:{SHARED_JOBS}"""

    def epilog_wrapper(self) -> str:
        """The site's wrapper of cluster/README.md: settings, then the shipped epilog."""
        return f"""#!/bin/sh
export DARSHAN_LOGDIR={self.logdir} MOSAIC_URL={self.service.url}
export MOSAIC_TOKEN_FILE={self.folder / "etc" / "write-token"} MOSAIC_SPOOL_DIR={self.spool}
export MOSAIC_EPILOG_LOG={self.epilog_log} MOSAIC_BIN={MOSAIC} SLURM_CONF={self.conf}{THIS_TREE}
exec {REPO / "cluster" / "slurm-epilog.sh"}"""

    @property
    def prolog_log(self) -> Path:
        return self.folder / "log" / "mosaic-prolog.log"

    def prolog_wrapper(self) -> str:
        """The site's wrapper of the shipped prolog (cluster/README.md)."""
        return f"""#!/bin/sh
export MOSAIC_URL={self.service.url} MOSAIC_TOKEN_FILE={self.folder / "etc" / "write-token"}
export MOSAIC_SPOOL_DIR={self.spool} MOSAIC_PROLOG_LOG={self.prolog_log} SLURM_CONF={self.conf}
exec {REPO / "cluster" / "slurm-prolog.sh"}"""

    def make_day_folders(self) -> None:
        """Today's and tomorrow's YEAR/MONTH/DAY, writable by all with the sticky bit
        (darshan-mk-log-dirs.pl's layout)."""
        for days in (0, 1):
            day = time.localtime(time.time() + 86400 * days)
            folder = self.logdir
            for part in (day.tm_year, day.tm_mon, day.tm_mday):
                folder = folder / str(part)
                folder.mkdir(exist_ok=True)
            folder.chmod(0o1777)

    def launch(self, name: str, args: list[str]) -> None:
        with open(self.folder / "log" / f"{name}.out", "ab") as out:
            self.daemons[name] = subprocess.Popen(
                args, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def node_idle(self) -> bool:
        for name, process in self.daemons.items():
            if process.poll() is not None:
                raise RuntimeError(
                    f"{name} exited: {(self.folder / 'log' / f'{name}.out').read_text()[-2000:]}"
                )
        shown = subprocess.run(["sinfo", "-h", "-o", "%t"], env=self.env, capture_output=True, text=True)
        return shown.stdout.strip() == "idle"

    def stop(self) -> None:
        """Cancel every job, end each daemon's process group, then any slurmstepd of this
        cluster left behind (a step outlives a killed slurmd)."""
        if "slurmctld" in self.daemons and self.daemons["slurmctld"].poll() is None:
            queued = self.queued()
            if queued:
                subprocess.run(["scancel", *queued], env=self.env, capture_output=True, timeout=30)
                with contextlib.suppress(TimeoutError):
                    wait_for(lambda: not self.queued(), 15, "cancelled jobs to end", step=0.2)
        for name in reversed(list(self.daemons)):
            end_group(self.daemons[name])
        for pid in self.stray_steps():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.service.stop()

    def queued(self) -> list[str]:
        return subprocess.run(
            ["squeue", "-h", "-o", "%i"], env=self.env, capture_output=True, text=True
        ).stdout.split()

    def stray_steps(self) -> list[int]:
        """The slurmstepd processes started by this cluster's slurmd (its SLURM_CONF in their
        environment)."""
        mark = f"SLURM_CONF={self.conf}".encode()
        found = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and (proc / "comm").read_text().strip() == "slurmstepd":
                    if mark in (proc / "environ").read_bytes().split(b"\0"):
                        found.append(int(proc.name))
            except OSError:
                continue
        return found

    # ----- jobs -----

    def submit(
        self,
        script: str,
        *args: str,
        uid: int = 0,
        chdir: str = "/tmp",
        output: str = "/dev/null",
        options: tuple[str, ...] = (),
    ) -> tuple[int, str]:
        """sbatch of a batch script's text (with ``args``) as ``uid``, in ``chdir``, its output
        to ``output``, with more sbatch ``options``: (job id, sbatch's stderr, where the filter
        logs)."""
        path = self.folder / "stage" / f"job-{time.monotonic_ns()}.sh"
        path.write_text(script)
        path.chmod(0o755)
        command = ["sbatch", "--parsable", f"--uid={uid}", f"--chdir={chdir}", "-o", output, *options]
        done = subprocess.run(
            [*command, str(path), *args], env=self.env, capture_output=True, text=True, timeout=60
        )
        if done.returncode != 0:
            raise RuntimeError(f"sbatch failed: {done.stderr}")
        return int(done.stdout.strip().split(";")[0]), done.stderr

    def stage(self, job_id: int, logs: dict[str, bytes]) -> None:
        """What job ``job_id``'s application writes: {Darshan name with PID: bytes}."""
        folder = self.folder / "stage" / str(job_id)
        folder.mkdir(mode=0o755)
        for name, data in logs.items():
            (folder / name).write_bytes(data)
            (folder / name).chmod(0o644)
        (folder / ".ready").touch()

    def show(self, job_id: int) -> str:
        """``scontrol show job --oneliner``: one line per record (every task of an array
        asked by the array's id)."""
        return subprocess.run(
            ["scontrol", "show", "job", "--oneliner", str(job_id)],
            env=self.env,
            capture_output=True,
            text=True,
        ).stdout

    def job(self, job_id: int) -> dict[str, str]:
        """The fields of the job's own record ({} once Slurm has forgotten the job)."""
        own = [line for line in self.show(job_id).splitlines() if line.startswith(f"JobId={job_id} ")]
        return dict(re.findall(r"(\w+)=(\S*)", own[0] if own else ""))

    def wait_ended(self, job_id: int, seconds: float = 60.0) -> dict[str, str]:
        """The job's fields once it has ended (COMPLETED, FAILED...)."""

        def ended() -> dict[str, str] | None:
            fields = self.job(job_id)
            return fields if fields.get("JobState") not in UNFINISHED else None

        return wait_for(ended, seconds, f"job {job_id} to end", step=0.05)

    def epilog_lines(self, job_id: int) -> list[str]:
        """What the epilog said of job ``job_id`` (its own lines, and the drain's before them)."""
        text = self.epilog_log.read_text() if self.epilog_log.exists() else ""
        return [line for line in text.splitlines() if f" job {job_id}: " in line]


def end_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group ``process`` leads, SIGKILL if it outlives 10 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


def start_cluster(prefix: str = "mosaic-slurm-") -> SlurmCluster:
    """A started cluster in a fresh folder under /tmp (mode 755: jobs' users go through it to
    the application and Darshan's folder); stopped (and raised) if any part fails."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    (folder / "service").mkdir(mode=0o700)
    cluster = SlurmCluster(folder, Service(folder / "service"))
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster
