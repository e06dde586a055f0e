"""JSON error responses, and FastAPI's own errors turned into the same shape."""

from __future__ import annotations

from http import HTTPStatus

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from mosaic.service.errors import error_body


def error_response(status: int, error: str, detail: str = "") -> JSONResponse:
    return JSONResponse(error_body(error, detail), status)


def install_handlers(app: FastAPI) -> None:
    """Give FastAPI's validation errors and HTTP exceptions the API's error shape."""

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(error_body("invalid_request", jsonable_encoder(exc.errors())), 422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        error = HTTPStatus(exc.status_code).phrase.lower().replace(" ", "_")
        response = error_response(exc.status_code, error, str(exc.detail))
        response.headers.update(exc.headers or {})  # e.g. Allow on a 405
        return response
