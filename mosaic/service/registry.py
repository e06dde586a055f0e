"""The jobs running now: the registry the Slurm prolog and epilog keep in the store, and its
routes (``POST /v1/running/start``, ``POST /v1/running/end``, ``GET /v1/running``).

cluster/slurm-prolog.sh (``PrologSlurmctld``) posts a job's start: its id, uid, the
application the cli_filter wrote in its comment (``mosaic_app=``; none when the job
bypassed the filter), start, time limit (``UNLIMITED`` included), nodes and task count.
``mosaic epilog post`` posts its end, for every job, with or without a log. The table
(``running_jobs``, :mod:`mosaic.corpus.running_jobs`) lives in the store: a restarted
service knows what runs. A job whose end never came stops counting at its start + time
limit + ``running_grace_seconds`` (an UNLIMITED one ``running_unlimited_max_seconds``
after its start).

Each post is checked in one transaction, so no sequence of posts corrupts the registry:

* a start of a job registered under another uid, or stored (its Darshan logs) under
  another uid: 409 ``job_mismatch`` / ``job_conflict``, as the epilog's log posts;
* a start identical to the one registered (a spooled post sent again): 200 ``duplicate``;
  a start later than the registered one's (Slurm requeued the job): 200 ``restarted``;
* a start of a job the registry saw end, not later than that end (a start spooled through
  an outage that came after its end), or earlier than the registered start: 409
  ``job_finished``;
* an end without a start: 200 ``ended_without_start``, kept so that a late start is refused;
  an end again: 200 ``already_ended``;
* a start past ``running_max_jobs`` running jobs: 503 ``registry_full``.

Visibility (docs/security.md): the operator's token (the service's write token, which
users never hold) sees every job's identity (job id, uid, application, nodes); the read
token sees counts and shares, each other user's job as "another job" with its share, and
the jobs of the uid it names.

Contract for the other modules: :func:`running` (the jobs running at ``now``, expired ones
left out).
"""

from __future__ import annotations

import math
import re
import sqlite3
import time
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from mosaic.config import DEFAULT, Config
from mosaic.corpus.running_jobs import COLUMNS, ENDED, RUNNING, expires, expires_sql
from mosaic.corpus.store import Store
from mosaic.errors import ApiError
from mosaic.service.errors import INVALID, error_doc, excerpt
from mosaic.service.handlers import error_response
from mosaic.service.routes import STORE_UNAVAILABLE, get_store, write_refused
from mosaic.trace import bounded_name

JOB_ID_PATTERN = r"^[0-9]{1,20}$"  # SLURM_JOB_ID: an array's task and a het job's part have their own
MAX_UID = (1 << 32) - 1  # uid_t
MAX_TASKS = 1 << 31
MAX_NODES_CHARS = 4096  # a node list as Slurm compresses it (node[001-512],gpu[01-04])
MAX_APPLICATION_CHARS = 4096  # PATH_MAX: with the node list, URL-encoded, within any request head
# Slurm's time formats (sbatch --time, scontrol's TimeLimit): M, M:S, H:M:S, D-H, D-H:M, D-H:M:S.
SLURM_TIME = re.compile(r"\A(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?\Z")
UNLIMITED = frozenset({"UNLIMITED", "INFINITE"})
ANOTHER_JOB = "another job"
REGISTRY_COLUMNS = ", ".join(COLUMNS)

router = APIRouter()


class Refusal(Exception):
    """A post the registry does not take: HTTP status, error code, why."""

    def __init__(self, status: int, error: ApiError, detail: str) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail = status, error, detail


def time_limit_seconds(text: str | None) -> float | None:
    """Seconds of a Slurm time limit (``UNLIMITED``/``INFINITE`` and absent: None);
    ValueError for anything else. A bare number is minutes, as Slurm reads it."""
    if text is None or text.strip().upper() in UNLIMITED:
        return None
    found = SLURM_TIME.match(text.strip())
    if not found:
        raise ValueError(f"time_limit {excerpt(text)}: not UNLIMITED nor Slurm's [D-]H:M:S, M:S or M")
    days, first, second, third = (int(part) if part else None for part in found.groups())
    if days is None:  # M, M:S, H:M:S
        if third is not None:
            hours, minutes, seconds = first or 0, second or 0, third
        else:
            hours, minutes, seconds = 0, first or 0, second or 0
    else:  # D-H, D-H:M, D-H:M:S
        hours, minutes, seconds = first or 0, second or 0, third or 0
    return float((((days or 0) * 24 + hours) * 60 + minutes) * 60 + seconds)


def _row(row: sqlite3.Row | None) -> dict[str, Any] | None:
    return None if row is None else {name: row[name] for name in COLUMNS}


def _registered(db: sqlite3.Connection, job_id: str) -> dict[str, Any] | None:
    return _row(
        db.execute(f"SELECT {REGISTRY_COLUMNS} FROM running_jobs WHERE job_id = ?", (job_id,)).fetchone()
    )


def _check_owner(db: sqlite3.Connection, known: dict[str, Any] | None, job_id: str, uid: int) -> None:
    """409 when the job is registered, or its logs stored, under another uid."""
    if known is not None and known["uid"] != uid:
        raise Refusal(
            409, ApiError.JOB_MISMATCH, f"job {job_id} is registered under another uid, not under uid {uid}"
        )
    stored = db.execute("SELECT DISTINCT group_key FROM jobs WHERE job_id = ?", (job_id,)).fetchall()
    if any(int(str(row[0]).split(":", 1)[0]) != uid for row in stored):
        raise Refusal(
            409, ApiError.JOB_CONFLICT, f"job {job_id} is stored under another uid, not under uid {uid}"
        )


def _check_time(what: str, epoch: float, now: float, config: Config) -> None:
    if not math.isfinite(epoch) or epoch <= 0:
        raise Refusal(
            422, ApiError.INVALID_REQUEST, f"{what} {epoch!r}: not a time (seconds since the epoch)"
        )
    if epoch > now + config.running_clock_skew_seconds:
        raise Refusal(
            422,
            ApiError.INVALID_REQUEST,
            f"{what} {epoch:.0f} is {epoch - now:.0f} s in the service's future "
            f"(past running_clock_skew_seconds = {config.running_clock_skew_seconds:g})",
        )


def record_start(
    store: Store,
    *,
    job_id: str,
    uid: int,
    application: str | None,
    start: float,
    time_limit: float | None,
    nodes: str | None,
    tasks: int | None,
    now: float,
    config: Config = DEFAULT,
) -> str:
    """Register a job's start, in one transaction: the outcome ("recorded", "duplicate",
    "restarted"); :class:`Refusal` when it is not taken."""
    _check_time("start", start, now, config)
    app = bounded_name(application, config.max_name_chars) if application else None
    group_key = f"{uid}:{app}" if app else None
    values = (job_id, uid, app, group_key, start, time_limit, nodes, tasks, RUNNING, None, now)
    with store._atomic() as db:
        known = _registered(db, job_id)
        _check_owner(db, known, job_id, uid)
        outcome = "recorded"
        if known is not None:
            last = known["ended_epoch"] if known["state"] == ENDED else known["start_epoch"]
            if known["state"] == RUNNING and abs(known["start_epoch"] - start) < 1.0:
                return "duplicate"
            if last is not None and start <= last:
                when = "ended" if known["state"] == ENDED else "started again"
                raise Refusal(
                    409,
                    ApiError.JOB_FINISHED,
                    f"job {job_id} {when} at {last:.0f}: this start ({start:.0f}) came after it "
                    "(a post spooled through an outage, or sent out of order): the later news stands",
                )
            outcome = "restarted"  # Slurm requeued it: a new start after its end
        else:
            # the index's count first (cheap); the expired left out only when it is at the bound
            held = db.execute(f"SELECT count(*) FROM running_jobs WHERE state = '{RUNNING}'").fetchone()[0]
            if held >= config.running_max_jobs:
                grace, unlimited = config.running_grace_seconds, config.running_unlimited_max_seconds
                held = db.execute(
                    f"SELECT count(*) FROM running_jobs WHERE state = '{RUNNING}' "
                    f"AND {expires_sql('?', '?')} > ?",
                    (grace, unlimited, now),
                ).fetchone()[0]
            if held >= config.running_max_jobs:
                raise Refusal(
                    503,
                    ApiError.REGISTRY_FULL,
                    f"{held} jobs registered as running (running_max_jobs = {config.running_max_jobs})",
                )
        db.execute(
            f"INSERT OR REPLACE INTO running_jobs ({REGISTRY_COLUMNS}) VALUES ({', '.join('?' * 11)})", values
        )
    return outcome


def record_end(
    store: Store, *, job_id: str, uid: int, end: float, now: float, config: Config = DEFAULT
) -> str:
    """Register a job's end, in one transaction: "ended", "already_ended" or
    "ended_without_start" (kept: a start arriving later is refused); :class:`Refusal`."""
    _check_time("end", end, now, config)
    with store._atomic() as db:
        known = _registered(db, job_id)
        _check_owner(db, known, job_id, uid)
        if known is None:
            db.execute(
                f"INSERT INTO running_jobs ({REGISTRY_COLUMNS}) "
                "VALUES (?, ?, NULL, NULL, NULL, NULL, NULL, NULL, ?, ?, ?)",
                (job_id, uid, ENDED, end, now),
            )
            return "ended_without_start"
        if known["state"] == ENDED:
            return "already_ended"
        db.execute(
            "UPDATE running_jobs SET state = ?, ended_epoch = ?, updated = ? WHERE job_id = ?",
            (ENDED, max(end, known["start_epoch"] or end), now, job_id),
        )
    return "ended"


def _file_systems(db: sqlite3.Connection, group_keys: set[str]) -> dict[str, list[str]]:
    """The file systems each group's stored runs did I/O on (the ``run_load`` table of the
    file-system load; {} when the store has none yet)."""
    found: dict[str, list[str]] = {}
    has_load = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_load'").fetchone()
    if not has_load:
        return found
    for key in sorted(group_keys):
        rows = db.execute(
            "SELECT DISTINCT fs FROM run_load WHERE run IN "
            "(SELECT run FROM jobs WHERE group_key = ?) ORDER BY fs",
            (key,),
        ).fetchall()
        if rows:
            found[key] = [str(row[0]) for row in rows]
    return found


def running(store: Store, now: float, config: Config = DEFAULT) -> list[dict[str, Any]]:
    """The jobs running at ``now``: started at or before it, no end registered, not past
    their expiry; oldest start first. Each a dict of the ``running_jobs`` columns, with
    ``expires_epoch`` (when it leaves the registry if its end never comes) and
    ``file_systems`` (the mount points its application's stored runs did I/O on; None when
    unknown: no application, or no stored run with a file system)."""
    grace, unlimited = config.running_grace_seconds, config.running_unlimited_max_seconds
    with store._snapshot() as db:
        rows = db.execute(
            f"SELECT {REGISTRY_COLUMNS} FROM running_jobs WHERE state = ? AND start_epoch <= ? "
            f"AND {expires_sql('?', '?')} > ? ORDER BY start_epoch, job_id",
            (RUNNING, now, grace, unlimited, now),
        ).fetchall()
        jobs = [_row(row) or {} for row in rows]
        systems = _file_systems(db, {job["group_key"] for job in jobs if job["group_key"]})
    for job in jobs:
        job["expires_epoch"] = expires(job["start_epoch"], job["time_limit"], grace, unlimited)
        job["file_systems"] = systems.get(job["group_key"]) if job["group_key"] else None
    return jobs


def weight(job: dict[str, Any]) -> int:
    """What a job counts for in the shares: its tasks (1 when unknown)."""
    return int(job["tasks"] or 1)


def view(jobs: list[dict[str, Any]], now: float, operator: bool, uid: int | None) -> dict[str, Any]:
    """``GET /v1/running``'s answer under the visibility rule: the operator sees every job;
    the read token sees the jobs of ``uid`` (when named) and every other as "another job"
    with its share. Shares are of the running tasks (a job of unknown task count counts 1):
    of all of them, and of those on each file system."""
    total = sum(weight(job) for job in jobs)
    per_fs: dict[str, dict[str, Any]] = {}
    unknown = {"jobs": 0, "tasks": 0}
    for job in jobs:
        if job["file_systems"] is None:
            unknown["jobs"] += 1
            unknown["tasks"] += weight(job)
        for fs in job["file_systems"] or []:
            entry = per_fs.setdefault(fs, {"file_system": fs, "jobs": 0, "tasks": 0})
            entry["jobs"] += 1
            entry["tasks"] += weight(job)
    for entry in per_fs.values():
        entry["share"] = entry["tasks"] / total
    shown, others = [], []
    for job in jobs:
        share = weight(job) / total
        if operator or (uid is not None and job["uid"] == uid):
            shown.append({**job, "unlimited": job["time_limit"] is None, "share": share})
        else:
            others.append(
                {
                    "job": ANOTHER_JOB,
                    "tasks": weight(job),
                    "share": share,
                    "file_systems": job["file_systems"],
                }
            )
    return {
        "at": now,
        "visibility": "operator" if operator else ("own jobs" if uid is not None else "counts"),
        "jobs_running": len(jobs),
        "tasks_running": total,
        "without_application": sum(job["application"] is None for job in jobs),
        "file_systems": sorted(per_fs.values(), key=lambda entry: str(entry["file_system"])),
        "unknown_file_system": unknown,
        "jobs": shown,
        "others": others,
    }


# ----- routes -----


class Posted(BaseModel):
    """The answer to a start or end post."""

    status: str  # "ok"
    outcome: str  # recorded | duplicate | restarted | ended | already_ended | ended_without_start
    job_id: str


POST_ERRORS: dict[int | str, dict[str, Any]] = {
    401: error_doc("Missing or wrong bearer token (the write token is needed)"),
    403: error_doc("A server without a write token records nothing"),
    409: error_doc(
        "job_mismatch: registered under another uid; job_conflict: its logs are stored under another uid; "
        "job_finished: a start not later than the end (or start) already registered"
    ),
    422: INVALID,
    503: error_doc("registry_full (running_max_jobs), or the store is not usable"),
}
JOB_ID_DOC = "Slurm's job id (SLURM_JOB_ID: digits)"
UID_DOC = "The job's user id"


async def _post(request: Request, work: Any, **arguments: Any) -> Response | Posted:
    if not request.state.may_write:
        return write_refused(request)
    state = request.app.state
    try:
        async with state.store_writes:  # one thread hop: the store's check and the write
            outcome = await run_in_threadpool(
                lambda: work(get_store(request), now=time.time(), config=state.config, **arguments)
            )
    except Refusal as refusal:
        response = error_response(refusal.status, refusal.error, refusal.detail)
        if refusal.status == 503:
            response.headers["Retry-After"] = str(state.config.service_retry_after_seconds)
        return response
    return Posted(status="ok", outcome=outcome, job_id=arguments["job_id"])


@router.post(
    "/v1/running/start",
    summary="A job started (the Slurm prolog's post; write token)",
    response_model=Posted,
    responses=POST_ERRORS,
)
async def start_post(
    request: Request,
    job_id: str = Query(pattern=JOB_ID_PATTERN, description=JOB_ID_DOC),
    uid: int = Query(ge=0, le=MAX_UID, description=UID_DOC),
    start: float | None = Query(None, description="Start, seconds since the epoch [now]"),
    application: str | None = Query(
        None,
        max_length=MAX_APPLICATION_CHARS,
        description="The executable the cli_filter found (absent: none known)",
    ),
    time_limit: str | None = Query(
        None,
        max_length=32,
        description="UNLIMITED, or Slurm's [D-]H:M:S, M:S or M (minutes); absent: unknown",
    ),
    nodes: str | None = Query(None, max_length=MAX_NODES_CHARS, description="Slurm's node list"),
    tasks: int | None = Query(None, ge=1, le=MAX_TASKS, description="Task count"),
) -> Response | Posted:
    """Register a running job: the prolog (cluster/slurm-prolog.sh) posts it at its start."""
    try:
        limit = time_limit_seconds(time_limit)
    except ValueError as error:
        return error_response(422, ApiError.INVALID_REQUEST, str(error))
    return await _post(
        request,
        record_start,
        job_id=job_id,
        uid=uid,
        application=application or None,
        start=time.time() if start is None else start,
        time_limit=limit,
        nodes=nodes,
        tasks=tasks,
    )


@router.post(
    "/v1/running/end",
    summary="A job ended (the Slurm epilog's post, for every job; write token)",
    response_model=Posted,
    responses=POST_ERRORS,
)
async def end_post(
    request: Request,
    job_id: str = Query(pattern=JOB_ID_PATTERN, description=JOB_ID_DOC),
    uid: int = Query(ge=0, le=MAX_UID, description=UID_DOC),
    end: float | None = Query(None, description="End, seconds since the epoch [now]"),
) -> Response | Posted:
    """The job's end: it leaves the running jobs."""
    return await _post(request, record_end, job_id=job_id, uid=uid, end=time.time() if end is None else end)


@router.get(
    "/v1/running",
    summary="The jobs running now, per file system, under the visibility rule",
    response_model=None,
    responses={422: INVALID, 503: STORE_UNAVAILABLE},
)
def running_view(
    request: Request,
    uid: int | None = Query(None, ge=0, le=MAX_UID, description="Show this user's own jobs (read token)"),
    results: Store = Depends(get_store),
) -> dict[str, Any] | JSONResponse:
    """The running jobs: counts, shares of the running tasks (all, and per file system where
    the application's stored runs name one), the jobs the token may see whole (the
    operator's: all; the read token: those of ``uid``), the others as "another job"."""
    now = time.time()
    jobs = running(results, now, request.app.state.config)
    return view(jobs, now, bool(request.state.may_write), uid)
