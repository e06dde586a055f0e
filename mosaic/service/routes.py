"""The endpoints (SPEC 1, "schedulers"); store, pool and settings come from ``app.state``.

- ``POST /v1/categorize``: body = one Darshan log (raw, or ``Content-Encoding:
  gzip``); answers the SPEC 4 trace object; ``?store=true`` also records it;
  ``?explain=true`` adds ``reasons`` (:mod:`mosaic.analysis.reasons`);
  ``?job_id=J&uid=U`` refuses (409 ``job_mismatch``) a log that does not claim that job
  and uid (the epilog names the job it collects for: a file in its folder is no proof).
- ``GET /v1/applications?uid=U&app=EXE``: the stored categories of a (user,
  application) group and the profile of its stored runs
  (:mod:`mosaic.corpus.profiles`); 404 when unknown. Without ``app``: the
  groups listed, filtered, sorted and paged (:mod:`mosaic.corpus.listing`). ``POST
  /v1/applications/query`` with ``{"uid": U, "app": EXE}`` answers the same
  for an application too long for a request head (a crafted log may claim one).
- ``GET /v1/jobs/{job_id}``: the stored runs of a job; 404 when unknown. The store
  keeps no reasons: ``?explain=true`` gives each run ``"reasons": null`` and says why.
- ``GET /v1/forecast?uid=U&app=EXE``: if that application starts now, the load ahead on the
  shared file systems, its conflict risk and the running jobs it meets
  (:mod:`mosaic.forecast`); an unknown application is an answer saying so, never a 404.
- ``GET /healthz``: 503 when the store is not usable
  (:mod:`mosaic.service.storewatch`); ``GET /metrics`` (Prometheus text format).

Every error is a JSON object with ``status`` ("error" or "evicted") and a
machine-readable ``error`` (:class:`~mosaic.errors.ApiError`) / ``reason``
(:class:`~mosaic.errors.Reason`). No endpoint touches a path given by
the client: logs arrive as bytes and are named by their content hash.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path as FilePath
from typing import IO, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from mosaic import __version__
from mosaic.corpus import timeline
from mosaic.corpus.listing import DEFAULT_LIMIT, MAX_LIMIT, SORT_KEYS, ApplicationList, Filters
from mosaic.corpus.profiles import ApplicationAnswer
from mosaic.corpus.store import Store
from mosaic.errors import ApiError, Reason
from mosaic.service.errors import ERROR_SCHEMA, EVICTED_SCHEMA, INVALID, JSON, error_doc, excerpt
from mosaic.service.fairqueue import Ticket
from mosaic.service.handlers import error_response
from mosaic.service.metrics import Metrics
from mosaic.service.pool import WorkerPool
from mosaic.service.security import client_source
from mosaic.service.storewatch import StoreFile
from mosaic.service.visibility import shown_load
from mosaic.trace import bounded_name

GZIP_MAGIC = b"\x1f\x8b"
IDENTITY_ENCODINGS = ("", "identity")
GZIP_ENCODINGS = ("gzip", "x-gzip")
MAX_JOB_ID_CHARS = 256
# A log's uid is an int64 (2^64 - 1 reads as -1): every stored uid can be asked for.
MIN_UID, MAX_UID = -(1 << 63), (1 << 63) - 1
STORE_UNAVAILABLE = error_doc("The store is not usable (file deleted, replaced or damaged)")
EXPLAIN_DOC = "Add `reasons`: why each label, a sentence with its numbers and SPEC rule"
# Reasons quote intermediates (requests per second, mean shift's clusters) that the store never
# keeps (a run's categories only): a stored job's reasons would be a guess.
NO_STORED_REASONS = (
    "the store keeps a run's categories, not the analysis its reasons quote: "
    "POST the log to /v1/categorize?explain=true for them"
)
# A query body holds an application of at most max_job_bytes (no longer one can be stored),
# JSON spending at most 6 bytes on each of its bytes (\u00XX), and the rest of the object.
JSON_BYTES_PER_BYTE, QUERY_OVERHEAD_BYTES = 6, 64

router = APIRouter()


def get_store(request: Request) -> Store:
    """The store, once its file is known to be the one opened (503 otherwise)."""
    store_file: StoreFile = request.app.state.store_file
    store_file.check()
    store: Store = request.app.state.store
    return store


# Coroutines, though they await nothing: FastAPI runs a plain ``def`` dependency in its
# thread pool, a thread hand-off per request for a dictionary lookup.
async def get_pool(request: Request) -> WorkerPool:
    pool: WorkerPool = request.app.state.pool
    return pool


async def get_metrics(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


async def admission(request: Request) -> AsyncIterator[Ticket]:
    """A place in the worker pool's queue for this client (its address and token), taken
    before the body is read (:class:`~mosaic.service.fairqueue.Busy`: 429) and given
    back once answered."""
    pool: WorkerPool = request.app.state.pool
    prefix = request.app.state.config.service_ipv6_client_prefix
    source = client_source(request.client.host, prefix) if request.client else ""
    ticket = pool.queue.admit((source, request.state.may_write))
    try:
        yield ticket
    finally:
        pool.queue.leave(ticket)


async def receive_body(
    request: Request, limit: int, spool_bytes: int, folder: str
) -> bytes | FilePath | Response:
    """The body: in memory up to ``spool_bytes``, else streamed to a file in ``folder``
    (its path; the caller deletes it), so a burst of large uploads never sits in the
    server's memory; a 413 as soon as it grows past ``limit``. A connection closed before
    the body ends (the client left, or the server dropped it: too slow, or the longest
    waiting past the connection cap) is answered to nobody, without a logged traceback
    per dropped client."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return error_response(413, ApiError.TOO_LARGE, f"body of {declared} bytes exceeds {limit}")
    chunks: list[bytes] = []
    size, complete = 0, False
    spool: IO[bytes] | None = None
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                break
            if spool is None and size > spool_bytes:
                spool = tempfile.NamedTemporaryFile(dir=folder, prefix="body-", delete=False)
                spool.writelines(chunks)
            if spool is None:
                chunks.append(chunk)
            else:
                spool.write(chunk)
        complete = size <= limit
    except ClientDisconnect:
        return error_response(400, ApiError.BAD_REQUEST, "connection closed before the body ended")
    finally:
        if spool is not None:
            spool.close()
            if not complete:
                discard(FilePath(spool.name))
    if not complete:
        return error_response(413, ApiError.TOO_LARGE, f"body exceeds {limit} bytes")
    return b"".join(chunks) if spool is None else FilePath(spool.name)


def discard(path: FilePath | None) -> None:
    if path:
        path.unlink(missing_ok=True)


def leading_bytes(body: bytes | FilePath, count: int) -> bytes:
    if isinstance(body, bytes):
        return body[:count]
    with open(body, "rb") as fh:
        return fh.read(count)


def record(request: Request, result: dict[str, Any], activity: bytes | None = None) -> Response | None:
    """Record a categorized posted log, unless its job id belongs to another uid (409) or
    the store file is not the one opened (503: never into a deleted file)."""
    results = get_store(request)
    job = result["job"]
    owners = results.job_uids(job["job_id"]) - {job["uid"]}
    if owners:
        return error_response(
            409,
            ApiError.JOB_CONFLICT,
            f"job {job['job_id']} is stored under another uid; a log cannot join another user's job",
        )
    results.record(result)
    kept = request.app.state.config.load_overlaps_kept
    timeline.record_posted(results, job, activity, kept)  # SPEC 3.10: its load and its neighbours'
    request.app.state.store_versions = results.versions(adding=__version__)
    return None


@router.post(
    "/v1/categorize",
    summary="Categorize one Darshan log (the request body); ?store=true also records it",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
    responses={
        200: {"description": "The SPEC 4 trace object"},
        400: error_doc("Body not in its Content-Encoding"),
        401: error_doc("Missing or wrong bearer token (store=true: the write token)"),
        403: error_doc("store=true on a server without a write token"),
        408: error_doc("Request head or body not received in time"),
        409: error_doc(
            "store=true: the job id is stored under another uid; or the log's job id or uid is not "
            "the job_id or uid asked for"
        ),
        413: error_doc("Body above the size limit"),
        415: error_doc("Unsupported Content-Encoding"),
        422: error_doc(
            "The log was evicted (reason says why), or an invalid query",
            {"anyOf": [EVICTED_SCHEMA, ERROR_SCHEMA]},
        ),
        429: error_doc("The queue, or this client's share of it, is full (Retry-After)"),
        500: error_doc("A defect of mosaic met on this log (reason internal_error)", EVICTED_SCHEMA),
        503: error_doc("The store is not usable, or no worker was free in time (Retry-After)"),
    },
)
async def categorize(
    request: Request,
    store: bool = Query(False, description="Also record the result in the store under its group"),
    explain: bool = Query(False, description=EXPLAIN_DOC),
    job_id: str | None = Query(
        None, max_length=MAX_JOB_ID_CHARS, description="Refuse (409) a log of another job id"
    ),
    uid: int | None = Query(None, ge=MIN_UID, le=MAX_UID, description="Refuse (409) a log of another uid"),
    pool: WorkerPool = Depends(get_pool),
    metrics: Metrics = Depends(get_metrics),
    ticket: Ticket = Depends(admission),
) -> Response:
    """Categorize one Darshan log posted as the request body."""
    if store and not request.state.may_write:
        return write_refused(request)
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding not in IDENTITY_ENCODINGS + GZIP_ENCODINGS:
        return error_response(
            415, ApiError.UNSUPPORTED_ENCODING, f"Content-Encoding {encoding!r}: use gzip or none"
        )
    state = request.app.state
    body = await receive_body(
        request, state.config.service_max_request_bytes, state.config.service_spool_bytes, state.spool
    )
    if isinstance(body, Response):
        return body
    try:
        if encoding in GZIP_ENCODINGS and leading_bytes(body, 2) != GZIP_MAGIC:
            return error_response(
                400, ApiError.BAD_ENCODING, "Content-Encoding is gzip but the body is not gzip data"
            )
        # The worker inflates gzip itself, within its own memory limit.
        answer = await pool.categorize(body if isinstance(body, bytes) else str(body), ticket, explain)
    finally:
        discard(body if isinstance(body, FilePath) else None)
    if answer.status != "ok":
        metrics.evictions.labels(answer.reason).inc()
        # A defect of ours is the server's fault, not the log's: 500, never a 422 that blames it.
        status = 500 if answer.reason == Reason.INTERNAL_ERROR else 422
        return Response(answer.body, status, media_type=JSON)
    if store or job_id is not None or uid is not None:
        result = json.loads(answer.body)
        mismatch = unexpected(result["job"], job_id, uid)
        if mismatch:
            return error_response(409, ApiError.JOB_MISMATCH, mismatch)
        if store:
            async with state.store_writes:
                refused = await run_in_threadpool(record, request, result, answer.activity)
            if refused is not None:
                return refused
    return Response(answer.body, media_type=JSON)


def unexpected(job: dict[str, Any], job_id: str | None, uid: int | None) -> str:
    """Why the log's job is not the one the poster expects ("" when it is, or none is named)."""
    if job_id is not None and job["job_id"] != job_id:
        return f"the log is of job {excerpt(job['job_id'])}, not of job {excerpt(job_id)}"
    if uid is not None and job["uid"] != uid:
        return f"the log is of uid {job['uid']}, not of uid {uid}"
    return ""


def write_refused(request: Request) -> Response:
    """401 when a write token exists but was not given; 403 when the server has none."""
    if request.app.state.settings.tokens.write is None:
        return error_response(
            403,
            ApiError.STORE_READ_ONLY,
            "this server records nothing: start it with --write-token-file (or --token-file) to allow it",
        )
    response = error_response(
        401, ApiError.UNAUTHORIZED, "recording in the store (store=true) needs the write token"
    )
    response.headers["WWW-Authenticate"] = "Bearer"
    return response


UID_DOC = "User id, as the log claims it (int64)"
APP_DOC = "Executable (first token of the command line, empty when the log has none), as grouped by the store"
APPLICATION_ERRORS: dict[int | str, dict[str, Any]] = {
    404: error_doc("Unknown (uid, app)"),
    422: INVALID,
    503: STORE_UNAVAILABLE,
}


class ApplicationQuery(BaseModel):
    """The body of ``POST /v1/applications/query``: the GET's parameters, any length."""

    model_config = ConfigDict(extra="forbid")
    uid: int = Field(strict=True, ge=MIN_UID, le=MAX_UID, description=UID_DOC)
    app: str = Field(strict=True, description=APP_DOC)


@router.get(
    "/v1/applications",
    summary="One application's profile (?uid=&app=), or a page of the stored applications",
    response_model=ApplicationAnswer | ApplicationList,
    responses=APPLICATION_ERRORS,
)
def application(
    request: Request,
    uid: int | None = Query(None, ge=MIN_UID, le=MAX_UID, description=UID_DOC + "; required with app"),
    app: str | None = Query(
        None, description=APP_DOC + "; as long as a request head allows. Without it: the list"
    ),
    match: str | None = Query(None, description="List: applications containing this text"),
    label: str | None = Query(None, description="List: groups with a run carrying this label"),
    periodic: bool | None = Query(None, description="List: groups with (true) or without a period class"),
    sensitive: bool | None = Query(None, description="List: groups labelled sensitive to load (true) or not"),
    aggressor: bool | None = Query(None, description="List: groups with (true) or without aggressor traits"),
    sort: str = Query("runs", description=f"List: {', '.join(SORT_KEYS)} or a label (its share)"),
    reverse: bool = Query(False, description="List: the order flipped"),
    offset: int = Query(0, ge=0),
    limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
    results: Store = Depends(get_store),
) -> ApplicationAnswer | ApplicationList | JSONResponse:
    """With uid and app, one (user, application) group: its heaviest run's categories, run
    count, last seen, and the profile of its stored runs (label shares, stability, bytes,
    periods, period class). Without app, the stored groups (optionally of uid), filtered,
    sorted (largest first) and paged, each with its runs, heaviest run's bytes, label
    shares and period class."""
    if app is not None:
        if uid is None:
            return error_response(422, ApiError.INVALID_REQUEST, "app needs uid")
        return look_up(request, results, uid, app)
    try:
        filters = Filters(uid, match, label, periodic, sort, reverse, offset, limit, sensitive, aggressor)
    except ValueError as error:
        return error_response(422, ApiError.INVALID_REQUEST, str(error))
    return results.applications(filters, request.app.state.config.profile_min_periodic_share)


@router.post(
    "/v1/applications/query",
    summary="One application's profile, for an application name too long for a URL",
    response_model=ApplicationAnswer,
    responses={
        **APPLICATION_ERRORS,
        413: error_doc("Body above the size limit, or an application longer than max_job_bytes"),
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {JSON: {"schema": ApplicationQuery.model_json_schema()}},
        }
    },
)
async def application_query(request: Request) -> ApplicationAnswer | Response:
    """``GET /v1/applications`` for an application of any length (a log may claim one past
    what a request head carries): the body is ``{"uid": U, "app": EXE}``."""
    config = request.app.state.config
    longest = config.max_job_bytes
    limit = min(config.service_max_request_bytes, JSON_BYTES_PER_BYTE * longest + QUERY_OVERHEAD_BYTES)
    body = await receive_body(request, limit, limit, request.app.state.spool)
    if isinstance(body, Response):
        return body
    assert isinstance(body, bytes)  # never spooled: the spool size is the limit
    query = await run_in_threadpool(parse_query, body)  # a megabyte of JSON: off the event loop
    if len(query.app) > longest:  # each character is a byte or more of the command line
        return error_response(
            413,
            ApiError.TOO_LARGE,
            f"application of {len(query.app)} characters: never stored (max_job_bytes = {longest})",
        )
    results = await run_in_threadpool(get_store, request)
    return await run_in_threadpool(look_up, request, results, query.uid, query.app)


def parse_query(body: bytes) -> ApplicationQuery:
    try:
        return ApplicationQuery.model_validate_json(body)
    except ValidationError as error:  # answered as FastAPI's own (handlers.invalid_request)
        raise RequestValidationError(error.errors(include_url=False, include_input=False)) from None


def look_up(request: Request, results: Store, uid: int, app: str) -> ApplicationAnswer | JSONResponse:
    """The group of ``app`` as stored: a long one by its bounded name."""
    config = request.app.state.config
    found = results.application(
        uid, bounded_name(app, config.max_name_chars), config.profile_min_periodic_share
    )
    if found is None:
        return error_response(
            404, ApiError.UNKNOWN_APPLICATION, f"no application {excerpt(app)} for uid {uid}"
        )
    return found


@router.get(
    "/v1/jobs/{job_id}",
    summary="The stored runs of one scheduler job, with their groups' categories",
    response_model=None,
    responses={404: error_doc("Unknown job id"), 422: INVALID, 503: STORE_UNAVAILABLE},
)
def job(
    request: Request,
    job_id: str = Path(min_length=1, max_length=MAX_JOB_ID_CHARS),
    explain: bool = Query(
        False, description="Say why stored runs carry no reasons (`explain` in the answer)"
    ),
    uid: int | None = Query(
        None,
        ge=MIN_UID,
        le=MAX_UID,
        description="Your uid: your own jobs among the concurrent ones are named",
    ),
    results: Store = Depends(get_store),
) -> dict[str, Any] | JSONResponse:
    """Stored runs (logs) of one scheduler job id, with their groups' categories and each
    run's concurrent load (other jobs named per docs/security.md, "Who may see whom")."""
    runs = results.job(job_id)
    if not runs:
        return error_response(404, ApiError.UNKNOWN_JOB, f"no job {job_id!r}")
    operator = bool(getattr(request.state, "may_write", False))  # the write token: the operator's
    loads = timeline.job_loads(results, job_id)
    runs = [
        {**run, "load": [shown_load(load, operator, uid) for load in loads.get(run["file"], [])]}
        for run in runs
    ]
    if explain:
        return {
            "job_id": job_id,
            "runs": [{**run, "reasons": None} for run in runs],
            "explain": NO_STORED_REASONS,
        }
    return {"job_id": job_id, "runs": runs}


@router.get(
    "/v1/forecast",
    summary="If (uid, app) starts now: the load ahead per shared file system, its risk and conflicts",
    response_model=None,
    responses={422: INVALID, 503: STORE_UNAVAILABLE},
)
def forecast(
    request: Request,
    uid: int = Query(ge=MIN_UID, le=MAX_UID, description=UID_DOC),
    app: str = Query(description=APP_DOC),
    time_limit: float | None = Query(
        None, gt=0, description="The job's time limit, seconds (caps its run time)"
    ),
    at: float | None = Query(None, description="Start time (epoch seconds) forecast from [default: now]"),
    results: Store = Depends(get_store),
) -> Response:
    """The forecast at submission (docs/method.md 3.13). The operator's (write) token sees the
    running jobs' identities; the read token sees "another job" and its share, and the jobs of
    the uid asked for."""
    from mosaic.forecast import Viewer
    from mosaic.forecast_store import store_forecast

    viewer = Viewer(operator=bool(request.state.may_write), uid=uid)
    now = time.time() if at is None else at
    answer = store_forecast(
        results, uid, app, now, time_limit=time_limit, viewer=viewer, config=request.app.state.config
    )
    # JSON-ready already (floats, lists, dicts): dumped once, not walked by FastAPI's encoder
    return Response(json.dumps(answer), media_type=JSON)


@router.api_route(
    "/healthz",
    methods=["GET", "HEAD"],
    summary="Liveness and readiness, without a token; 503 when the store cannot be read",
    response_model=None,
    responses={503: STORE_UNAVAILABLE},
)
async def healthz(request: Request) -> dict[str, Any] | JSONResponse:
    """Liveness and readiness: answers without a token (GET or HEAD); 503 when the store
    file is gone, replaced or has no SQLite header (:mod:`mosaic.service.storewatch`)."""
    store_file: StoreFile = request.app.state.store_file
    problem = store_file.problem()
    if problem is not None:
        return error_response(503, ApiError.STORE_UNAVAILABLE, problem)
    state = request.app.state
    return {
        "status": "ok",
        "workers": state.pool.workers,
        "version": __version__,  # the code answering, and the settings its labels follow
        "config_hash": state.config.hash(),
        "store_versions": state.store_versions,  # more than one: the store mixes versions' labels
    }


@router.get(
    "/metrics",
    summary="Prometheus metrics: requests by endpoint and status, latency, evictions by reason",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}},
)
async def prometheus(metrics: Metrics = Depends(get_metrics)) -> Response:
    """Requests by endpoint and status, latency histogram, evictions by reason."""
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)
