"""The scheduler-facing HTTP API (FastAPI app) behind ``mosaic serve``.

Endpoints (SPEC 1, "schedulers"):

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
import hmac
import json
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from http import HTTPStatus

from fastapi import FastAPI, Path, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client import generate_latest
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from mosaic.config import Config
from mosaic.corpus.store import Store
from mosaic.service import UNKNOWN_APPLICATION
from mosaic.service_pool import WorkerPool

JSON = "application/json"
GZIP_MAGIC = b"\x1f\x8b"
IDENTITY_ENCODINGS = ("", "identity")
GZIP_ENCODINGS = ("gzip", "x-gzip")
# Label values are kept to known sets, so odd requests cannot grow /metrics without bound.
METRIC_METHODS = ("GET", "POST", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS")
OPEN_PATHS = ("/healthz",)  # answer without a token: load balancers probe it
UPLOAD_PREFIX = "posted/sha256-"  # file name of a posted log: its content hash, never a path
UPLOAD_HASH_CHARS = 32
MAX_JOB_ID_CHARS = 256
MAX_APP_CHARS = 4096

ERROR_SCHEMA = {"type": "object", "properties": {
    "status": {"type": "string"}, "error": {"type": "string"}, "detail": {}}}
EVICTED_SCHEMA = {"type": "object", "properties": {
    "file": {"type": "string"}, "status": {"const": "evicted"},
    "reason": {"type": "string"}, "detail": {"type": "string"}}}


def error_doc(description: str, schema: dict = ERROR_SCHEMA) -> dict:
    """An OpenAPI response entry for a JSON error."""
    return {"description": description, "content": {JSON: {"schema": schema}}}


INVALID = error_doc("Invalid query or path parameter")


@dataclass(frozen=True)
class ServiceSettings:
    store: str  # SQLite results store (mosaic.corpus.store)
    config: Config
    workers: int  # categorization processes
    token: str | None = None  # bearer token required on every endpoint but /healthz


def error_response(status: int, error: str, detail: str = "") -> JSONResponse:
    return JSONResponse({"status": "error", "error": error, "detail": detail}, status)


class Metrics:
    """Prometheus counters of one app (own registry: two apps never share numbers)."""

    def __init__(self, config: Config):
        self.registry = CollectorRegistry()
        self.requests = Counter("mosaic_requests", "HTTP requests by endpoint and status",
                                ["endpoint", "method", "status"], registry=self.registry)
        self.latency = Histogram("mosaic_request_duration_seconds", "HTTP request latency",
                                 ["endpoint"], buckets=config.service_latency_buckets,
                                 registry=self.registry)
        self.evictions = Counter("mosaic_evictions", "Posted logs evicted, by reason",
                                 ["reason"], registry=self.registry)


class GuardMiddleware:
    """Bearer-token check and request metrics, as plain ASGI (cheap per request)."""

    def __init__(self, app, settings: ServiceSettings, metrics: Metrics):
        self.app = app
        self.expected = f"Bearer {settings.token}".encode() if settings.token else None
        self.metrics = metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        began = time.perf_counter()
        status = [500]

        async def send_and_note(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            if self._authorized(scope):
                await self.app(scope, receive, send_and_note)
            else:
                response = error_response(401, "unauthorized", "missing or wrong bearer token")
                response.headers["WWW-Authenticate"] = "Bearer"
                await response(scope, receive, send_and_note)
        finally:
            route = scope.get("route")
            endpoint = route.path if route is not None else "unrouted"
            method = scope["method"] if scope["method"] in METRIC_METHODS else "other"
            self.metrics.requests.labels(endpoint, method, str(status[0])).inc()
            self.metrics.latency.labels(endpoint).observe(time.perf_counter() - began)

    def _authorized(self, scope) -> bool:
        if self.expected is None or scope["path"] in OPEN_PATHS:
            return True
        given = dict(scope["headers"]).get(b"authorization", b"")
        return hmac.compare_digest(given, self.expected)


async def read_limited_body(request: Request, limit: int) -> bytes | JSONResponse:
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


def create_app(settings: ServiceSettings) -> FastAPI:
    """The API over one store and one worker pool (both opened at startup)."""
    metrics = Metrics(settings.config)
    state: dict = {}

    @asynccontextmanager
    async def lifespan(_app):
        state["store"] = Store(settings.store)
        state["pool"] = WorkerPool(settings.workers, settings.config)
        await state["pool"].warm_up()
        try:
            yield
        finally:
            state["pool"].close()
            state["store"].close()

    app = FastAPI(title="MOSAIC scheduler service", version="1",
                  summary="I/O categories of HPC jobs from their Darshan logs",
                  lifespan=lifespan)
    app.add_middleware(GuardMiddleware, settings=settings, metrics=metrics)

    # One error shape for every 4xx, FastAPI's own ones included.
    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request, exc: RequestValidationError):
        return JSONResponse({"status": "error", "error": "invalid_request",
                             "detail": jsonable_encoder(exc.errors())}, 422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request, exc: StarletteHTTPException):
        error = HTTPStatus(exc.status_code).phrase.lower().replace(" ", "_")
        response = error_response(exc.status_code, error, str(exc.detail))
        response.headers.update(exc.headers or {})  # e.g. Allow on a 405
        return response

    @app.post("/v1/categorize", openapi_extra={"requestBody": {
        "required": True, "content": {"application/octet-stream": {
            "schema": {"type": "string", "format": "binary"}}}}},
        responses={200: {"description": "The SPEC 4 trace object"},
                   400: error_doc("Body not in its Content-Encoding"),
                   401: error_doc("Missing or wrong bearer token"),
                   413: error_doc("Body above the size limit"),
                   415: error_doc("Unsupported Content-Encoding"),
                   422: error_doc("The log was evicted (reason says why), or an invalid query",
                                  {"anyOf": [EVICTED_SCHEMA, ERROR_SCHEMA]})})
    async def categorize(request: Request, store: bool = Query(
            False, description="Also record the result in the store under its group")):
        """Categorize one Darshan log posted as the request body."""
        encoding = request.headers.get("content-encoding", "").strip().lower()
        if encoding not in IDENTITY_ENCODINGS + GZIP_ENCODINGS:
            return error_response(415, "unsupported_encoding",
                                  f"Content-Encoding {encoding!r}: use gzip or none")
        body = await read_limited_body(request, settings.config.service_max_request_bytes)
        if isinstance(body, Response):
            return body
        if encoding in GZIP_ENCODINGS and not body.startswith(GZIP_MAGIC):
            return error_response(400, "bad_encoding", "Content-Encoding is gzip but the "
                                  "body is not gzip data")
        # The reader inflates gzip itself, with its own cap on the inflated size.
        name = UPLOAD_PREFIX + hashlib.sha256(body).hexdigest()[:UPLOAD_HASH_CHARS]
        answer = await state["pool"].categorize(body, name)
        if answer.status != "ok":
            metrics.evictions.labels(answer.reason).inc()
            return Response(answer.body, 422, media_type=JSON)
        if store:
            await run_in_threadpool(state["store"].record, json.loads(answer.body))
        return Response(answer.body, media_type=JSON)

    @app.get("/v1/applications", responses={404: error_doc("Unknown (uid, app)"),
                                            422: INVALID})
    def application(uid: int = Query(ge=0, description="User id"),
                    app: str = Query(min_length=1, max_length=MAX_APP_CHARS,
                                     description="Executable (first token of the command "
                                                 "line), as grouped by the store")):
        """Categories of a (user, application) group: representative's, run count, last seen."""
        found = state["store"].application(uid, app)
        if found is None:
            return error_response(404, UNKNOWN_APPLICATION, f"no application {app!r} for uid {uid}")
        return found

    @app.get("/v1/jobs/{job_id}", responses={404: error_doc("Unknown job id"), 422: INVALID})
    def job(job_id: str = Path(min_length=1, max_length=MAX_JOB_ID_CHARS)):
        """Stored runs (logs) of one scheduler job id, with their groups' categories."""
        runs = state["store"].job(job_id)
        if not runs:
            return error_response(404, "unknown_job", f"no job {job_id!r}")
        return {"job_id": job_id, "runs": runs}

    @app.get("/healthz")
    async def healthz():
        """Liveness: answers without a token."""
        return {"status": "ok", "workers": settings.workers}

    @app.get("/metrics", response_class=Response,
             responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
    async def prometheus():
        """Requests by endpoint and status, latency histogram, evictions by reason."""
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return app
