"""JSON error responses, and FastAPI's own errors turned into the same shape."""

from __future__ import annotations

import sqlite3

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from mosaic.errors import ApiError, StoreUnavailable
from mosaic.service.errors import error_body
from mosaic.service.fairqueue import Busy

# FastAPI's own HTTP errors (routing); any other status it raises is a bad request.
HTTP_ERRORS = {404: ApiError.NOT_FOUND, 405: ApiError.METHOD_NOT_ALLOWED}


def error_response(status: int, error: ApiError, detail: str = "") -> JSONResponse:
    return JSONResponse(error_body(error, detail), status)


def install_handlers(app: FastAPI) -> None:
    """Give FastAPI's validation errors, HTTP exceptions and store failures the API's error shape."""

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(error_body(ApiError.INVALID_REQUEST, jsonable_encoder(exc.errors())), 422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        error = HTTP_ERRORS.get(exc.status_code, ApiError.BAD_REQUEST)
        response = error_response(exc.status_code, error, str(exc.detail))
        response.headers.update(exc.headers or {})  # e.g. Allow on a 405
        return response

    @app.exception_handler(StoreUnavailable)
    async def store_unavailable(_request: Request, exc: StoreUnavailable) -> JSONResponse:
        return error_response(503, ApiError.STORE_UNAVAILABLE, str(exc))

    @app.exception_handler(Busy)
    async def busy(_request: Request, exc: Busy) -> JSONResponse:
        """Queue full or no worker in time: the client comes back later, on a new
        connection (its body, maybe unread, is not drained)."""
        response = error_response(exc.status, exc.error, exc.detail)
        response.headers.update({"Retry-After": str(exc.retry_after), "Connection": "close"})
        return response

    @app.exception_handler(sqlite3.DatabaseError)
    async def store_failed(_request: Request, exc: sqlite3.DatabaseError) -> JSONResponse:
        """A store damaged under the server, or its disk full: no plain-text 500."""
        return error_response(503, ApiError.STORE_UNAVAILABLE, f"store: {exc}")
