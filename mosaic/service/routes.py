"""The endpoints (SPEC 1, "schedulers"); store, pool and settings come from ``app.state``.

- ``POST /v1/categorize``: body = one Darshan log (raw, or ``Content-Encoding:
  gzip``); answers the SPEC 4 trace object; ``?store=true`` also records it.
- ``GET /v1/applications?uid=U&app=EXE``: the stored categories of a (user,
  application) group; 404 when unknown.
- ``GET /v1/jobs/{job_id}``: the stored runs of a job; 404 when unknown.
- ``GET /healthz``, ``GET /metrics`` (Prometheus text format).

Every error is a JSON object with ``status`` ("error" or "evicted") and a
machine-readable ``error`` / ``reason``. No endpoint touches a path given by
the client: logs arrive as bytes and are named by their content hash.
"""

from __future__ import annotations

import hashlib
import json

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.concurrency import run_in_threadpool

from mosaic.corpus.store import Store
from mosaic.service.errors import (EVICTED_SCHEMA, ERROR_SCHEMA, INVALID, JSON,
                                   UNKNOWN_APPLICATION, error_doc)
from mosaic.service.handlers import error_response
from mosaic.service.metrics import Metrics
from mosaic.service.pool import WorkerPool

GZIP_MAGIC = b"\x1f\x8b"
IDENTITY_ENCODINGS = ("", "identity")
GZIP_ENCODINGS = ("gzip", "x-gzip")
UPLOAD_PREFIX = "posted/sha256-"  # file name of a posted log: its content hash, never a path
UPLOAD_HASH_CHARS = 32
MAX_JOB_ID_CHARS = 256
MAX_APP_CHARS = 4096

router = APIRouter()


def get_store(request: Request) -> Store:
    return request.app.state.store


def get_pool(request: Request) -> WorkerPool:
    return request.app.state.pool


def get_metrics(request: Request) -> Metrics:
    return request.app.state.metrics


async def read_limited_body(request: Request, limit: int) -> bytes | Response:
    """The body, or a 413 as soon as it grows past ``limit`` (never buffered whole first)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return error_response(413, "too_large", f"body of {declared} bytes exceeds {limit}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return error_response(413, "too_large", f"body exceeds {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


@router.post("/v1/categorize", openapi_extra={"requestBody": {
    "required": True, "content": {"application/octet-stream": {
        "schema": {"type": "string", "format": "binary"}}}}},
    responses={200: {"description": "The SPEC 4 trace object"},
               400: error_doc("Body not in its Content-Encoding"),
               401: error_doc("Missing or wrong bearer token"),
               413: error_doc("Body above the size limit"),
               415: error_doc("Unsupported Content-Encoding"),
               422: error_doc("The log was evicted (reason says why), or an invalid query",
                              {"anyOf": [EVICTED_SCHEMA, ERROR_SCHEMA]})})
async def categorize(request: Request,
                     store: bool = Query(False, description="Also record the result in the "
                                                            "store under its group"),
                     pool: WorkerPool = Depends(get_pool),
                     results: Store = Depends(get_store),
                     metrics: Metrics = Depends(get_metrics)):
    """Categorize one Darshan log posted as the request body."""
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding not in IDENTITY_ENCODINGS + GZIP_ENCODINGS:
        return error_response(415, "unsupported_encoding",
                              f"Content-Encoding {encoding!r}: use gzip or none")
    body = await read_limited_body(request, request.app.state.config.service_max_request_bytes)
    if isinstance(body, Response):
        return body
    if encoding in GZIP_ENCODINGS and not body.startswith(GZIP_MAGIC):
        return error_response(400, "bad_encoding", "Content-Encoding is gzip but the "
                              "body is not gzip data")
    # The reader inflates gzip itself, with its own cap on the inflated size.
    name = UPLOAD_PREFIX + hashlib.sha256(body).hexdigest()[:UPLOAD_HASH_CHARS]
    answer = await pool.categorize(body, name)
    if answer.status != "ok":
        metrics.evictions.labels(answer.reason).inc()
        return Response(answer.body, 422, media_type=JSON)
    if store:
        await run_in_threadpool(results.record, json.loads(answer.body))
    return Response(answer.body, media_type=JSON)


@router.get("/v1/applications", responses={404: error_doc("Unknown (uid, app)"), 422: INVALID})
def application(uid: int = Query(ge=0, description="User id"),
                app: str = Query(min_length=1, max_length=MAX_APP_CHARS,
                                 description="Executable (first token of the command "
                                             "line), as grouped by the store"),
                results: Store = Depends(get_store)):
    """Categories of a (user, application) group: representative's, run count, last seen."""
    found = results.application(uid, app)
    if found is None:
        return error_response(404, UNKNOWN_APPLICATION, f"no application {app!r} for uid {uid}")
    return found


@router.get("/v1/jobs/{job_id}", responses={404: error_doc("Unknown job id"), 422: INVALID})
def job(job_id: str = Path(min_length=1, max_length=MAX_JOB_ID_CHARS),
        results: Store = Depends(get_store)):
    """Stored runs (logs) of one scheduler job id, with their groups' categories."""
    runs = results.job(job_id)
    if not runs:
        return error_response(404, "unknown_job", f"no job {job_id!r}")
    return {"job_id": job_id, "runs": runs}


@router.api_route("/healthz", methods=["GET", "HEAD"])
async def healthz(request: Request):
    """Liveness: answers without a token (GET or HEAD)."""
    return {"status": "ok", "workers": request.app.state.pool.workers}


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
async def prometheus(metrics: Metrics = Depends(get_metrics)):
    """Requests by endpoint and status, latency histogram, evictions by reason."""
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)
