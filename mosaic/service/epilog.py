"""`mosaic epilog`: post a finished Slurm job's Darshan logs to `mosaic serve`, keeping in a
spool what could not be posted (cluster/slurm-epilog.sh runs ``mosaic epilog post`` as
``EpilogSlurmctld``; ``drain`` and ``status`` are for an operator or a timer).

Darshan's log folder is writable by every user, so a file there proves nothing: a log is
posted only when its name is the job's (Darshan's ``USER_EXE_idJOB[-PID]_M-D-S-HASH_N.darshan``,
the user as a name or a numeric uid), it is a regular file opened without following a link
(and without blocking on a FIFO), owned by the job's user (or a uid the site's Darshan
writes as), and the service is told the job id and uid it must claim (409 otherwise). See
docs/security.md.
"""

from __future__ import annotations

import errno
import os
import pwd
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mosaic.config import Config
from mosaic.errors import EngineError, LogError
from mosaic.options import config_option, load_config
from mosaic.secretfile import read_secret_file
from mosaic.service import running_spool as registry_spool
from mosaic.service.epilog_spool import Entry, keep, open_spool, pending
from mosaic.service.epilog_spool import draining as drain_lock
from mosaic.service.epilog_spool import entries as spooled

if TYPE_CHECKING:
    import httpx

DEFAULT_URL = "http://127.0.0.1:8420"
DEFAULT_SPOOL = "/var/spool/mosaic-epilog"
JOB_ID = re.compile(r"\A\d{1,20}\Z")
# darshan-runtime names a log with at most L_cuserid - 1 characters of the user name or
# numeric uid (glibc: 8): alexander's logs are alexande_..., uid 1870400123's 18704001_...
DARSHAN_USER_CHARS = 8
# A log refused for what it is gets no second post; one the service could not take now
# (down, slow, overloaded, a bad token of ours) waits in the spool.
RETRY_STATUSES = frozenset({401, 403, 408, 429, 502, 503, 504})
SCONTROL_TIMEOUT_SECONDS = 10.0

Say = Callable[[str], None]


@dataclass(frozen=True)
class Job:
    """A finished job, as Slurm describes it to its epilog."""

    job_id: str
    user: str
    uid: int
    start: datetime | None  # local time, as Darshan names its day folders
    end: datetime


def job_from(env: Mapping[str, str]) -> Job:
    """The job of the epilog's environment (SLURM_JOB_ID, SLURM_JOB_USER, SLURM_JOB_UID;
    start and end from SLURM_JOB_START_TIME / _END_TIME when Slurm sets them, else
    ``scontrol``). ValueError naming what is missing."""
    job_id, user, uid_text = (env.get(f"SLURM_JOB_{name}", "") for name in ("ID", "USER", "UID"))
    if not JOB_ID.match(job_id) or not (user or uid_text.isdigit()):
        raise ValueError("SLURM_JOB_ID (digits) and SLURM_JOB_UID or SLURM_JOB_USER must be set")
    uid = int(uid_text) if uid_text.isdigit() else pwd.getpwnam(user).pw_uid
    user = user or user_name(uid)
    start, end = env.get("SLURM_JOB_START_TIME", ""), env.get("SLURM_JOB_END_TIME", "")
    if not (start.isdigit() and end.isdigit()):
        start, end = scontrol_times(job_id)
    return Job(job_id, user, uid, local_time(start), local_time(end) or datetime.now())


def user_name(uid: int) -> str:
    """The name of ``uid`` (its digits when the controller does not know it)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def scontrol_times(job_id: str) -> tuple[str, str]:
    """StartTime and EndTime of the job's own record in ``scontrol show job`` ("" each when
    unknown): for an array's job id or a heterogeneous job's leader, scontrol shows every
    task's or component's record, one a line."""
    try:
        shown = subprocess.run(
            ["scontrol", "show", "job", "--oneliner", job_id],
            capture_output=True,
            text=True,
            timeout=SCONTROL_TIMEOUT_SECONDS,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "", ""
    own = [line for line in shown.splitlines() if re.match(rf"\s*JobId={job_id}\s", line)]
    times = dict(re.findall(r"\b(StartTime|EndTime)=(\S+)", own[0] if own else ""))
    return times.get("StartTime", ""), times.get("EndTime", "")


def local_time(text: str) -> datetime | None:
    """Seconds since the epoch or scontrol's ISO time, as a local time; None if neither."""
    if text.isdigit():
        return datetime.fromtimestamp(int(text))
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def day_folders(logdir: Path, job: Job, max_days: int) -> list[Path]:
    """Darshan's ``YEAR/MONTH/DAY`` folders (no zero padding) from the job's start day to
    its end day: each process writes under the day it started. Without a start time, the
    end day and the one before."""
    last = job.end.date()
    first = job.start.date() if job.start else last - timedelta(days=1)
    days = [first + timedelta(days=i) for i in range(min((last - first).days + 1, max_days))]
    return [logdir / f"{day.year}/{day.month}/{day.day}" for day in days or [last]]


def name_pattern(job: Job) -> re.Pattern[str]:
    """A log name of ``job`` by Darshan 3.3.1+ (``-PID`` after the job id) or before, under the
    user's name or numeric uid (Darshan's fallback when LOGNAME is unset), whole or cut to
    the DARSHAN_USER_CHARS darshan-runtime keeps."""
    names = {name[:cut] for name in (job.user, str(job.uid)) for cut in (None, DARSHAN_USER_CHARS)}
    users = "|".join(re.escape(name) for name in sorted(names))
    return re.compile(rf"\A(?:{users})_[^/]+_id{job.job_id}(?:-\d+)?_\d+-\d+-\d+-\d+_\d+\.darshan\Z")


def find_logs(folders: list[Path], job: Job) -> list[Path]:
    """The job's logs, by name (a ``.darshan_partial`` is still being written: not yet)."""
    pattern = name_pattern(job)
    found = []
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        found += [folder / name for name in sorted(names) if pattern.match(name)]
    return found


class Refused(Exception):
    """A file that is not posted, and why."""


def read_log(path: Path, owners: frozenset[int], limit: int) -> bytes:
    """The bytes of ``path``, opened without following a link nor blocking (a FIFO), when
    it is a regular file of one of ``owners`` of at most ``limit`` bytes; Refused otherwise.
    Every check is made on the opened descriptor: nothing can be swapped in after it."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Refused("a symbolic link") from None
        if error.errno == errno.EACCES:
            raise Refused(
                f"the epilog's user (uid {os.geteuid()}) may not read it: make Darshan's logs readable "
                "by SlurmUser (cluster/README.md)"
            ) from None
        raise Refused(f"cannot be opened ({error.strerror})") from None
    with open(descriptor, "rb") as fh:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise Refused("not a regular file")
        if status.st_uid not in owners:
            raise Refused(f"owned by uid {status.st_uid}, not by the job's user")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise Refused(f"larger than the {limit} bytes the service accepts")
    return data


def check_claim(data: bytes, job: Job) -> None:
    """Refused when the log's header names another job or uid (the service refuses it too,
    409): files planted for the job never count against ``epilog_max_logs``. A file that is
    no readable log goes to the service, which says what it is."""
    from mosaic.darshan.reader import read_job  # numpy: loaded only when there is a log

    try:
        claimed = read_job(data)
    except LogError:
        return
    if (str(claimed.job_id), claimed.uid) != (job.job_id, job.uid):
        raise Refused(f"its header claims job {claimed.job_id} of uid {claimed.uid}")


class Outcome(Enum):
    RECORDED = "recorded"
    REFUSED = "refused"  # for what the log is: never posted again
    RETRY = "retry"  # the service could not take it now: spooled


@dataclass
class Poster:
    """Posts logs with ``?store=true`` and the job and uid they must claim. Once the service
    could not take one (down, silent, 503, our token refused), the run's other posts are not
    tried: each would wait as long, and the spool keeps them all the same."""

    client: httpx.Client
    url: str
    token: str | None
    unavailable: str | None = None  # why the service cannot take posts now

    def post(self, data: bytes, job_id: str, uid: int) -> tuple[Outcome, str]:
        if self.unavailable is None:
            outcome, detail = self.send(data, job_id, uid)
            if outcome is not Outcome.RETRY:
                return outcome, detail
            self.unavailable = detail
        return Outcome.RETRY, self.unavailable

    def send(self, data: bytes, job_id: str, uid: int) -> tuple[Outcome, str]:
        import httpx

        headers = {"Content-Type": "application/octet-stream"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        params = {"store": "true", "job_id": job_id, "uid": str(uid)}
        try:
            answer = self.client.post(
                f"{self.url}/v1/categorize", params=params, content=data, headers=headers
            )
        except httpx.HTTPError as error:
            return Outcome.RETRY, f"no answer from {self.url} ({type(error).__name__})"
        if answer.status_code == 200:
            return Outcome.RECORDED, ""
        detail = f"service answered {answer.status_code} {answer.text[:200]}"
        return (Outcome.RETRY if answer.status_code in RETRY_STATUSES else Outcome.REFUSED), detail


def make_poster(url: str, token_file: str | None, timeout: float) -> Poster:
    import httpx

    token, problem = None, None
    if token_file:
        try:
            token = read_secret_file(token_file)
        except (OSError, ValueError) as error:
            problem = f"token file: {error}"
    return Poster(httpx.Client(timeout=timeout), url.rstrip("/"), token, problem)


def drain(folder: Path, poster: Poster, say: Say, limit: int | None = None) -> None:
    """Post the spooled logs, oldest first, ``limit`` at most (an epilog's share: after an
    outage of a day the spool holds thousands, and one job's epilog must not post them all);
    stop at the first the service cannot take now."""
    with drain_lock(folder) as held:
        if not held:
            say("another epilog is draining the spool")
            return
        entries = spooled(folder)
        if limit is not None and len(entries) > limit:
            say(f"{len(entries) - limit} spooled logs left for the next epilogs or `mosaic epilog drain`")
            entries = entries[:limit]
        for entry in entries:
            outcome, detail = post_entry(entry, poster)
            if outcome is Outcome.RETRY:
                say(f"spooled logs wait: {detail}")
                return
            say(f"spooled log of job {entry.job_id} {outcome.value}{': ' + detail if detail else ''}")
            entry.path.unlink(missing_ok=True)


def post_entry(entry: Entry, poster: Poster) -> tuple[Outcome, str]:
    try:
        data = entry.path.read_bytes()
    except FileNotFoundError:
        return Outcome.RECORDED, "drained meanwhile"
    return poster.post(data, entry.job_id, entry.uid)


def post_job(
    job: Job, logdir: Path, poster: Poster, spool: Path | None, owners: frozenset[int], cfg: Config, say: Say
) -> None:
    """The epilog proper: the job's logs posted, each one the service cannot take now spooled."""
    folders = day_folders(logdir, job, cfg.epilog_max_days)
    logs = find_logs(folders, job)
    if not logs:
        say(f"no Darshan log under {', '.join(map(str, folders))}")
        return
    posted = deferred = 0
    for path in logs:
        try:
            data = read_log(path, owners | {job.uid}, cfg.service_max_request_bytes)
            check_claim(data, job)
        except Refused as why:
            say(f"{path.name!r} not posted: {why}")
            continue
        if posted == cfg.epilog_max_logs:
            if spool is None or deferred == cfg.epilog_max_deferred_logs:
                kept = posted + deferred
                say(f"{path.name} and the job's next logs lost: more than {kept} (epilog_max_logs)")
                return
            deferred += defer(spool, job, path, data, say)
            continue
        posted += 1
        outcome, detail = poster.post(data, job.job_id, job.uid)
        if outcome is Outcome.RETRY and spool is not None:
            try:
                keep(spool, job.job_id, job.uid, data)
                say(f"{path.name} kept in the spool: {detail}")
            except OSError as error:  # a full disk: said, and the other logs still tried
                say(f"{path.name} lost: {detail}; the spool failed: {error}")
        elif outcome is Outcome.RECORDED:
            say(f"recorded {path.name}")
        else:
            say(f"{path.name} {'lost' if outcome is Outcome.RETRY else 'refused'}: {detail}")


def defer(spool: Path, job: Job, path: Path, data: bytes, say: Say) -> int:
    """A log past the job's ``epilog_max_logs`` posts, kept for the next epilogs and `mosaic
    epilog drain` (a workflow job of hundreds of programs loses none, and no epilog posts
    for hours); 1 when kept."""
    try:
        keep(spool, job.job_id, job.uid, data)
    except OSError as error:
        say(f"{path.name} lost: past epilog_max_logs, and the spool failed: {error}")
        return 0
    say(f"{path.name} kept in the spool: past epilog_max_logs posts for one job")
    return 1


def job_ended(folder: Path | None, poster: Poster, job: Job, cfg: Config, say: Say) -> None:
    """The running registry's part (:mod:`mosaic.service.running_spool`): its spooled posts
    (starts the prolog could not post, ends) retried, then this job's end posted or spooled."""
    running: Path | None = None
    if folder is not None:
        try:
            running = registry_spool.running_folder(folder)
        except (EngineError, OSError) as error:
            say(f"no spool of start and end posts: {error}")
    if running is not None and poster.unavailable is None:
        poster.unavailable = registry_spool.drain(
            running, poster.client, poster.url, poster.token, say, cfg.running_drain_posts
        )
    end = job.end.timestamp()
    if poster.unavailable is None:
        poster.unavailable = registry_spool.post_end(
            running, poster.client, poster.url, poster.token, job.job_id, job.uid, end, say
        )
    elif running is not None:
        query = registry_spool.end_query(job.job_id, job.uid, end)
        try:
            registry_spool.keep(running, "end", job.job_id, end, query)
            say(f"end kept in the spool: {poster.unavailable}")
        except OSError as error:
            say(f"end lost: {poster.unavailable}; the spool failed: {error}")


def spool_option(command: Callable[..., None]) -> Callable[..., None]:
    return click.option(
        "--spool",
        envvar="MOSAIC_SPOOL_DIR",
        default=DEFAULT_SPOOL,
        show_default=True,
        help="Private folder (mode 700) of the logs not posted yet [MOSAIC_SPOOL_DIR].",
    )(command)


def service_options(command: Callable[..., None]) -> Callable[..., None]:
    for option in (
        click.option(
            "--url", envvar="MOSAIC_URL", default=DEFAULT_URL, show_default=True, help="Service [MOSAIC_URL]."
        ),
        click.option(
            "--token-file",
            envvar="MOSAIC_TOKEN_FILE",
            help="The service's write token, in a file of yours only you may read [MOSAIC_TOKEN_FILE].",
        ),
        click.option(
            "--timeout",
            envvar="MOSAIC_EPILOG_TIMEOUT",
            type=float,
            help="Seconds per post [MOSAIC_EPILOG_TIMEOUT; default epilog_post_timeout_seconds].",
        ),
        config_option,
        spool_option,
    ):
        command = option(command)
    return command


def say_to_stderr(prefix: str) -> Say:
    def say(message: str) -> None:
        sys.stderr.write(f"{prefix}{message}\n")

    return say


@click.group()
def epilog() -> None:
    """The Slurm epilog's work (cluster/slurm-epilog.sh) and its spool."""


@epilog.command()
@click.option(
    "--logdir", envvar="DARSHAN_LOGDIR", help="Root of Darshan's YEAR/MONTH/DAY tree [DARSHAN_LOGDIR]."
)
@click.option(
    "--owner-uid",
    envvar="MOSAIC_DARSHAN_UID",
    type=int,
    multiple=True,
    help="Also post logs owned by this uid, the site's Darshan's [MOSAIC_DARSHAN_UID, space-separated].",
)
@service_options
def post(
    logdir: str | None,
    owner_uid: tuple[int, ...],
    url: str,
    token_file: str | None,
    timeout: float | None,
    config_file: str | None,
    spool: str,
) -> None:
    """Post the finished job's logs (job from SLURM_JOB_ID, SLURM_JOB_USER, SLURM_JOB_UID),
    after retrying what the spool holds. Always exits 0: an epilog must never fail a job
    or drain a node; every problem is one line on stderr."""
    say = say_to_stderr(f"job {os.environ.get('SLURM_JOB_ID', '?')}: ")
    try:
        cfg = load_config(config_file, epilog_post_timeout_seconds=timeout)
        job = job_from(os.environ)
    except (ValueError, KeyError, click.UsageError) as error:
        say(str(error))
        return
    folder: Path | None = None
    try:
        folder = open_spool(spool)
    except (EngineError, OSError) as error:
        say(f"no spool, a post the service cannot take now is lost: {error}")
    poster = make_poster(url, token_file, cfg.epilog_post_timeout_seconds)
    with poster.client:
        job_ended(folder, poster, job, cfg, say)  # every job, with or without a log
        if not logdir or not os.path.isdir(logdir):
            say(f"DARSHAN_LOGDIR {logdir!r} is not a directory")
            return
        if folder is not None:
            drain(folder, poster, say, cfg.epilog_max_logs)
        post_job(job, Path(logdir), poster, folder, frozenset(owner_uid), cfg, say)


@epilog.command(name="drain")
@service_options
def drain_command(
    url: str, token_file: str | None, timeout: float | None, config_file: str | None, spool: str
) -> None:
    """Post what the spool holds (by hand, or from a timer), then print how many logs are
    still pending and how long the oldest has waited."""
    cfg = load_config(config_file, epilog_post_timeout_seconds=timeout)
    folder = spool_folder(spool)
    poster = make_poster(url, token_file, cfg.epilog_post_timeout_seconds)
    with poster.client:
        running = running_spool_folder(folder)
        registry_spool.drain(running, poster.client, poster.url, poster.token, say_to_stderr(""), None)
        drain(folder, poster, say_to_stderr(""))
    click.echo(str(pending(folder)))
    click.echo(running_pending(running))


@epilog.command()
@spool_option
def status(spool: str) -> None:
    """Print how many logs the spool holds and how long the oldest has waited, then how many
    start and end posts."""
    folder = spool_folder(spool)
    click.echo(str(pending(folder)))
    click.echo(running_pending(running_spool_folder(folder)))


def running_pending(folder: Path) -> str:
    return f"{len(registry_spool.entries(folder))} start and end posts pending"


def running_spool_folder(folder: Path) -> Path:
    try:
        return registry_spool.running_folder(folder)
    except (EngineError, OSError) as error:
        raise click.UsageError(str(error)) from None


def spool_folder(spool: str) -> Path:
    try:
        return open_spool(spool)
    except (EngineError, OSError) as error:
        raise click.UsageError(str(error)) from None
